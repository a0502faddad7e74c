//! The encoders read back by real parsers (serde_json, and the strict
//! logfmt parser in `check`), every record held to docs/logging-schema.json,
//! and docs/logging.md held to both: its examples are the records built
//! here, byte for byte.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::time::Duration;

use serde_json::{json, Value as Json};

use super::check::{parse_logfmt, Schema};
use super::encode::{write_secs, STEPS};
use super::*;
use crate::hooks::{self, Cancel, HookKind, Outcome};
use crate::procs::Proc;
use crate::reap::Ending;
use crate::signals::{Named, Sender, Signal};

/// 2026-12-01T18:06:20.123Z: the instant every example is stamped with.
fn t() -> Timestamp {
    Timestamp::from_unix(1_796_148_380, 123)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

const JSON: Encoder = Encoder {
    encoding: Encoding::Json,
    vigil_pid: None,
};

const LOGFMT: Encoder = Encoder {
    encoding: Encoding::Logfmt,
    vigil_pid: None,
};

fn line(encoder: Encoder, record: &Record<'_>) -> String {
    let mut out = Vec::new();
    encoder.line(record, LINE_MAX, &mut out);
    let text = String::from_utf8(out).expect("a line is UTF-8");
    assert!(text.len() <= LINE_MAX, "{} bytes", text.len());
    assert!(
        text.ends_with('\n') && text.matches('\n').count() == 1,
        "{text}"
    );
    text
}

fn json_line(record: &Record<'_>) -> String {
    line(JSON, record)
}

fn logfmt_line(record: &Record<'_>) -> String {
    line(LOGFMT, record)
}

/// The record in both encodings, each read back and held to the schema;
/// the two must say the same. Returns what the JSON says.
fn checked(record: &Record<'_>) -> Json {
    let schema = Schema::load();
    let json_text = json_line(record);
    let from_json: Json = serde_json::from_str(&json_text).expect("valid JSON");
    schema
        .check_json(&from_json)
        .unwrap_or_else(|e| panic!("{e}\n{json_text}"));
    let logfmt_text = logfmt_line(record);
    let from_logfmt = schema
        .check_logfmt(&logfmt_text)
        .unwrap_or_else(|e| panic!("{e}\n{logfmt_text}"));
    assert_eq!(from_json, from_logfmt, "\n{json_text}{logfmt_text}");
    from_json
}

/// The start of an exit record as the tests here build it: status,
/// ending (with its cause), command, child pid.
fn exit_base<'a>(
    level: Level,
    msg: &'a str,
    status: i32,
    ending: &'a Ending,
    cause: Option<&'static str>,
    command: &'a str,
) -> Record<'a> {
    Record::new(level, "exit", msg)
        .at(t())
        .field("status", status)
        .object_with("ending", |o| {
            o.flatten(ending).opt("cause", cause.map(Word));
        })
        .field("command", command)
        .field("pid", 7)
}

fn proc(pid: i32, name: &str) -> Proc {
    Proc {
        pid,
        name: name.into(),
    }
}

fn string_of(value: &Value<'_>) -> String {
    let record = Record::new(Level::Info, "started", "m")
        .at(t())
        .field("command", value.clone())
        .field("pid", 1);
    let parsed: Json = serde_json::from_str(&json_line(&record)).unwrap();
    parsed["command"].as_str().unwrap().to_string()
}

// Encoding

#[test]
fn the_common_fields_come_first_and_the_schema_last() {
    let record = Record::new(Level::Info, "started", "started sleep 1 as pid 7")
        .at(t())
        .field("command", "sleep 1")
        .field("pid", 7);
    assert_eq!(
        json_line(&record),
        "{\"time\":\"2026-12-01T18:06:20.123Z\",\"level\":\"info\",\"event\":\"started\",\"msg\":\"started sleep 1 as pid 7\",\"command\":\"sleep 1\",\"pid\":7,\"schema\":1}\n"
    );
    assert_eq!(
        logfmt_line(&record),
        "time=2026-12-01T18:06:20.123Z level=info event=started msg=\"started sleep 1 as pid 7\" command=\"sleep 1\" pid=7 schema=1\n"
    );
    let nested = Encoder {
        vigil_pid: Some(12),
        ..JSON
    };
    assert!(line(nested, &record).ends_with(",\"pid\":7,\"vigil_pid\":12,\"schema\":1}\n"));
    checked(&record);
}

#[test]
fn every_control_character_is_escaped() {
    let mut all = String::new();
    for c in (0u32..0x20).chain(0x7f..0xa0).chain([0x2028, 0x2029]) {
        all.push(char::from_u32(c).unwrap());
    }
    all.push_str("\"\\/ plain é ✓ 𝄞");
    let json_text = json_line(
        &Record::new(Level::Info, "started", all.as_str())
            .at(t())
            .field("command", all.as_str())
            .field("pid", 1),
    );
    // Nothing a terminal or a line reader could act on is left raw.
    for (i, b) in json_text.bytes().enumerate() {
        assert!(b >= 0x20 && b != 0x7f || (b == b'\n' && i == json_text.len() - 1));
    }
    for c in json_text.chars() {
        assert!(!super::json::is_special(c) || c == '\n', "raw {c:?}");
    }
    assert!(json_text.contains(r#"\u0000\u0001"#));
    assert!(json_text.contains(r#"\b\t\n\u000b\f\r"#));
    assert!(json_text.contains(r#"\u001f\u007f\u0080"#));
    assert!(json_text.contains(r#"\u009f\u2028\u2029\"\\/ plain é ✓ 𝄞"#));
    let parsed: Json = serde_json::from_str(&json_text).unwrap();
    assert_eq!(parsed["msg"], all.as_str());
    assert_eq!(parsed["command"], all.as_str());
    // logfmt escapes alike, inside quotes.
    let logfmt_text = logfmt_line(
        &Record::new(Level::Info, "started", all.as_str())
            .at(t())
            .field("command", all.as_str())
            .field("pid", 1),
    );
    let pairs = parse_logfmt(&logfmt_text).unwrap();
    assert_eq!(pairs[3], ("msg".to_string(), all.clone()));
    assert_eq!(pairs[4], ("command".to_string(), all));
}

#[test]
fn bytes_that_are_not_utf8_stay_visible() {
    // Every single byte, alone: ASCII as itself (escaped where JSON needs
    // it), 0x80 to 0xff (not UTF-8 alone) as the characters \xHH.
    for b in 0u8..=255 {
        let bytes = [b'<', b, b'>'];
        let expected = if b < 0x80 {
            format!("<{}>", b as char)
        } else {
            format!("<\\x{b:02x}>")
        };
        assert_eq!(string_of(&Value::Bytes(&bytes)), expected, "byte {b:#x}");
    }
    // A valid character beside invalid bytes, and a cut sequence.
    let mixed = b"caf\xc3\xa9 \xe2\x9c \xff\xfe";
    assert_eq!(
        string_of(&Value::Bytes(mixed)),
        "café \\xe2\\x9c \\xff\\xfe"
    );
    // In logfmt too, quoted.
    let record = Record::new(Level::Info, "started", "m")
        .at(t())
        .field("command", Value::Bytes(b"a\xffb"))
        .field("pid", 1);
    let text = logfmt_line(&record);
    assert!(text.contains(r#" command="a\\xffb" "#), "{text}");
    assert_eq!(parse_logfmt(&text).unwrap()[4].1, "a\\xffb");
}

#[test]
fn a_command_is_quoted_as_a_shell_reads_it() {
    let cases: [(&[&str], &str); 7] = [
        (&["sleep", "1000"], "sleep 1000"),
        (&["sh", "-c", "exit 3"], "sh -c 'exit 3'"),
        (
            &["echo", "it's", "", "a\nb", "$HOME", "x=1"],
            "echo 'it'\\''s' '' 'a\nb' '$HOME' x=1",
        ),
        (&["nginx", "-g", "daemon off;"], "nginx -g 'daemon off;'"),
        (&["printf", "%s\\n", "é ✓"], "printf '%s\\n' 'é ✓'"),
        (
            &["a'b", "\"q\"", "~", "#", "plain-word_1.2/x:y@z"],
            "'a'\\''b' '\"q\"' '~' '#' plain-word_1.2/x:y@z",
        ),
        (
            &["dd", "if=/dev/zero", "of=/dev/null"],
            "dd if=/dev/zero of=/dev/null",
        ),
    ];
    for (words, joined) in cases {
        let argv: Vec<OsString> = words.iter().map(OsString::from).collect();
        let text = string_of(&Value::Argv(&argv));
        assert_eq!(text, joined, "{words:?}");
        // A shell reads the same words back.
        assert_eq!(shell_words::split(&text).unwrap(), words, "{text}");
    }
    // A word that is not UTF-8 keeps its bytes, quoted like any other.
    let argv = vec![
        OsString::from("cat"),
        OsString::from_vec(b"na\xefve file".to_vec()),
    ];
    assert_eq!(string_of(&Value::Argv(&argv)), "cat 'na\\xefve file'");
}

#[test]
fn durations_are_seconds_with_milliseconds() {
    let cases = [
        (0, "0"),
        (1, "0.001"),
        (2, "0.002"),
        (20, "0.02"),
        (1500, "1.5"),
        (1050, "1.05"),
        (10_000, "10"),
        (59_999, "59.999"),
        (31_536_000_000, "31536000"),
    ];
    for (millis, expected) in cases {
        let mut out = Vec::new();
        write_secs(&mut out, ms(millis));
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }
    // Below a millisecond: truncated.
    let mut out = Vec::new();
    write_secs(&mut out, Duration::from_micros(1_999_999));
    assert_eq!(out, b"1.999");
}

#[test]
fn integers_at_their_limits() {
    for (value, expected) in [
        (Value::Int(i64::MIN), "-9223372036854775808"),
        (Value::Int(-1), "-1"),
        (Value::Int(0), "0"),
        (Value::UInt(u64::MAX), "18446744073709551615"),
    ] {
        let mut out = Vec::new();
        assert!(write_plain(&mut out, &value));
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }
}

#[test]
fn nesting_objects_and_lists() {
    let procs = [proc(7, "sleep"), proc(9, "sh -c")];
    let record = Record::new(
        Level::Warning,
        "grace_deadline",
        "grace period (1.00s) over: SIGKILL to 7 (sleep), 9 (sh -c)",
    )
    .at(t())
    .field("grace_period", Duration::from_secs(1))
    .list("killed", &procs)
    .field("listed", true);
    let parsed = checked(&record);
    assert_eq!(
        parsed["killed"],
        json!([{"pid": 7, "name": "sleep"}, {"pid": 9, "name": "sh -c"}])
    );
    let text = logfmt_line(&record);
    assert!(
        text.contains(" killed=2 killed.0.pid=7 killed.0.name=sleep killed.1.pid=9 killed.1.name=\"sh -c\" listed=true "),
        "{text}"
    );
    // An empty list is still there, with its count.
    let none: [Proc; 0] = [];
    let empty = Record::new(Level::Warning, "grace_deadline", "m")
        .at(t())
        .field("grace_period", Duration::from_secs(1))
        .list("killed", &none)
        .field("listed", true);
    assert_eq!(checked(&empty)["killed"], json!([]));
    assert!(logfmt_line(&empty).contains(" killed=0 listed=true "));
    // Objects in lists in objects: keys are paths.
    let ending = Ending::Exited(1);
    let hook = hooks::Record {
        kind: HookKind::PreStop,
        outcome: Outcome::Ended(ending),
        took: ms(250),
    };
    let deep = exit_base(Level::Warning, "m", 1, &ending, None, "x")
        .list("hooks", [&hook])
        .field("oom_kills", 0)
        .field("orphans_reaped", 0)
        .field("timeout", false);
    let parsed = checked(&deep);
    assert_eq!(parsed["hooks"][0]["ending"]["code"], 1);
    assert!(logfmt_line(&deep).contains(" hooks=1 hooks.0.hook=pre-stop hooks.0.outcome=failed hooks.0.ending.kind=exited hooks.0.ending.code=1 hooks.0.ending.status=1 hooks.0.duration=0.25 "));
}

#[test]
fn logfmt_quotes_only_what_needs_it() {
    let cases = [
        ("sleep", "sleep"),
        ("é✓", "é✓"),
        ("/usr/bin/x:1", "/usr/bin/x:1"),
        ("", "\"\""),
        ("a b", "\"a b\""),
        ("a=b", "\"a=b\""),
        ("say \"hi\"", r#""say \"hi\"""#),
        ("back\\slash", r#""back\\slash""#),
        ("tab\there", r#""tab\there""#),
        ("bell\u{7}", r#""bell\u0007""#),
    ];
    for (value, written) in cases {
        let record = Record::new(Level::Info, "started", "m")
            .at(t())
            .field("command", value)
            .field("pid", 1);
        let text = logfmt_line(&record);
        assert!(
            text.contains(&format!(" command={written} pid=1 ")),
            "{value:?}: {text}"
        );
        assert_eq!(parse_logfmt(&text).unwrap()[4].1, value);
    }
}

// Shortening

fn many(n: i32) -> Vec<Proc> {
    (1..=n).map(|pid| proc(pid, "worker")).collect()
}

#[test]
fn ten_thousand_processes_fit_in_one_line() {
    let procs = many(10_000);
    let ending = Ending::Killed {
        signal: 9,
        core_dumped: false,
    };
    let record = exit_base(
        Level::Warning,
        "exit report: ...",
        137,
        &ending,
        Some("grace_deadline"),
        "sh",
    )
    .list("grace_kills", &procs)
    .object_with("drain", |o| {
        o.field("left", 10_000)
            .word("kill_cause", "drain_timeout")
            .field("timeout", Duration::from_secs(2));
    })
    .list("drain_kills", &procs)
    .field("oom_kills", 0)
    .field("orphans_reaped", 12_345)
    .field("timeout", false);
    let parsed = checked(&record);
    assert_eq!(parsed["shortened"], true);
    assert_eq!(parsed["grace_kills"].as_array().unwrap().len(), 20);
    assert_eq!(parsed["grace_kills_more"], 9_980);
    assert_eq!(parsed["drain_kills_more"], 9_980);
    assert_eq!(parsed["status"], 137);
    assert_eq!(parsed["ending"]["cause"], "grace_deadline");
    assert_eq!(parsed["orphans_reaped"], 12_345);
    let text = logfmt_line(&record);
    assert!(
        text.contains(" grace_kills=20 grace_kills.0.pid=1 "),
        "{text}"
    );
    assert!(
        text.contains(" grace_kills.19.name=worker grace_kills_more=9980 "),
        "{text}"
    );
}

#[test]
fn a_100_kb_command_is_cut_in_the_middle() {
    let words: Vec<OsString> = (0..20_000)
        .map(|n| OsString::from(format!("w{n:04}")))
        .collect();
    let whole_len = shell_words::join(words.iter().map(|w| w.to_str().unwrap())).len();
    assert!(whole_len > 100_000);
    let ending = Ending::Exited(3);
    let record = Record::new(
        Level::Warning,
        "exit",
        "exit report: child exited with code 3; exit status 3",
    )
    .at(t())
    .field("status", 3)
    .object("ending", &ending)
    .field("command", Argv(&words))
    .field("pid", 7)
    .field("oom_kills", 0)
    .field("orphans_reaped", 0)
    .field("timeout", false);
    let parsed = checked(&record);
    let command = parsed["command"].as_str().unwrap();
    assert!(command.starts_with("w0000 w0001 "), "{command}");
    assert!(command.ends_with(" w19998 w19999"), "{command}");
    assert!(
        command.contains(&format!(" [... {whole_len} bytes in all ...] ")),
        "{command}"
    );
    assert!(command.len() < 300, "{command}");
    assert_eq!(parsed["shortened"], true);
    assert_eq!(
        parsed["ending"],
        json!({"kind": "exited", "code": 3, "status": 3})
    );
    // Nothing to shorten: no mark.
    let short = Record::new(Level::Info, "started", "m")
        .at(t())
        .field("command", "x")
        .field("pid", 1);
    assert!(checked(&short).get("shortened").is_none());
}

/// The worst a record can be: every string huge and made of characters
/// that escape to six bytes each, lists of thousands. The last step still
/// fits, and keeps the status and the ending.
#[test]
fn the_worst_record_still_fits_and_keeps_its_cause() {
    let nasty = "\u{1}".repeat(100_000);
    let named: Vec<Proc> = (0..5_000).map(|pid| proc(pid, &nasty[..5_000])).collect();
    let hook = hooks::Record {
        kind: HookKind::PostStart,
        outcome: Outcome::CouldNotRun(nasty.clone()),
        took: Duration::ZERO,
    };
    let hook_list = vec![&hook; 3_000];
    let ending = Ending::Killed {
        signal: 10,
        core_dumped: true,
    };
    let sender = Named {
        sender: Sender::Process { pid: 42, uid: 1000 },
        name: Some(nasty.clone()),
    };
    for encoder in [
        JSON,
        LOGFMT,
        Encoder {
            vigil_pid: Some(u32::MAX),
            ..JSON
        },
    ] {
        let record = Record::new(Level::Warning, "exit", nasty.as_str())
            .at(t())
            .field("status", 138)
            .object_with("ending", |o| {
                o.flatten(&ending)
                    .word("cause", "forwarded")
                    .object_with("forwarded", |f| {
                        f.field("signal", Signal(10))
                            .object("sender", &sender)
                            .field("sent", Signal(10));
                    });
            })
            .field("command", nasty.as_str())
            .field("pid", 7)
            .object_with("stop", |o| {
                o.word("cause", "fault")
                    .field("time", t())
                    .field("error", nasty.as_str());
            })
            .list("grace_kills", &named)
            .list("hooks", hook_list.iter().copied())
            .list("drain_kills", &named)
            .field("oom_kills", u64::MAX)
            .field("orphans_reaped", u64::MAX)
            .field("timeout", false);
        let text = line(encoder, &record);
        let parsed: Json = if encoder.encoding == Encoding::Json {
            serde_json::from_str(&text).unwrap()
        } else {
            Schema::load().check_logfmt(&text).unwrap()
        };
        Schema::load()
            .check_json(&parsed)
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(parsed["status"], 138);
        assert_eq!(parsed["ending"]["signal"], "SIGUSR1");
        assert_eq!(parsed["ending"]["forwarded"]["sender"]["pid"], 42);
        assert_eq!(parsed["oom_kills"], u64::MAX);
        assert_eq!(parsed["shortened"], true);
        assert_eq!(parsed["event"], "exit");
        assert_eq!(parsed["level"], "warning");
        assert!(parsed.get("command").is_some() && parsed.get("stop").is_some());
        // The last step, written out: well inside the line.
        let mut out = Vec::new();
        encoder.encode(&record, &STEPS[STEPS.len() - 1], usize::MAX, &mut out);
        assert!(out.len() < LINE_MAX / 2, "{}", out.len());
    }
}

/// Fills `o` with every field of `fields` (optional ones too) at its
/// longest: strings of 100,000 characters that escape to six bytes each,
/// the longest choice of each list of strings, the largest numbers, lists
/// of 1,000 items.
fn fill(o: &mut Obj<'_, 'static>, schema: &Schema, fields: Vec<(String, bool, Json)>) {
    let nasty: &'static str = Box::leak("\u{1}".repeat(100_000).into_boxed_str());
    for (name, _, ty) in fields {
        let key: &'static str = Box::leak(name.into_boxed_str());
        if let Some(choices) = ty.as_array() {
            let longest = choices
                .iter()
                .filter_map(Json::as_str)
                .max_by_key(|c| c.len())
                .unwrap();
            o.word(key, Box::leak(longest.to_string().into_boxed_str()));
            continue;
        }
        let ty = ty.as_str().unwrap();
        if let Some(item) = ty.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            o.list_with(key, 0..1_000, |item_obj, _| {
                fill(item_obj, schema, schema.fields_of("objects", item))
            });
            continue;
        }
        match ty {
            "int" => o.field(key, i64::MIN),
            "str" => o.field(key, nasty),
            "bool" => o.field(key, false),
            // Ten years: vigil takes durations up to one.
            "secs" => o.field(key, Duration::from_millis(315_360_000_999)),
            "time" => o.field(key, Timestamp::from_unix(u64::MAX, 999)),
            "signal" => o.field(key, Signal(64)),
            object => o.object_with(key, |inner| {
                fill(inner, schema, schema.fields_of("objects", object))
            }),
        };
    }
}

/// Every event the schema names, with every field at its longest, fits in
/// one line in both encodings and still holds to the schema (the kind of
/// an ending aside: both code and signal are there, which no real ending
/// has).
#[test]
fn every_event_at_its_worst_fits_in_one_line() {
    let schema = Schema::load();
    let msg: &'static str = Box::leak("\u{85}".repeat(100_000).into_boxed_str());
    for event in schema.events() {
        let name: &'static str = Box::leak(event.clone().into_boxed_str());
        let levels = schema.level_names(&event);
        let level = match levels.first().map(String::as_str) {
            Some("error") => Level::Error,
            Some("warning") => Level::Warning,
            Some("info") => Level::Info,
            Some("debug") => Level::Debug,
            _ => Level::Trace,
        };
        let record = Record::new(level, name, msg)
            .at(t())
            .with(|o| fill(o, &schema, schema.fields_of("events", &event)));
        for encoder in [
            JSON,
            LOGFMT,
            Encoder {
                vigil_pid: Some(u32::MAX),
                ..LOGFMT
            },
        ] {
            let text = line(encoder, &record);
            let parsed: Json = if encoder.encoding == Encoding::Json {
                serde_json::from_str(&text).unwrap()
            } else {
                schema
                    .check_logfmt(&text)
                    .unwrap_or_else(|e| panic!("{e}\n{text}"))
            };
            schema
                .check_json(&parsed)
                .unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!(parsed["shortened"], true, "{event}");
            // The last step leaves room to spare: for the fields the
            // events will gain.
            let mut out = Vec::new();
            encoder.encode(&record, &STEPS[STEPS.len() - 1], usize::MAX, &mut out);
            assert!(
                out.len() <= LINE_MAX * 3 / 4,
                "{event}: {} bytes",
                out.len()
            );
        }
    }
}

#[test]
fn each_step_is_tried_in_order() {
    // Just over the line at the first step: the second (caps of 200 bytes
    // and 20 items) is enough, and the rest is whole.
    let long = "x".repeat(LINE_MAX);
    let record = Record::new(Level::Error, "fault", "m")
        .at(t())
        .field("error", long.as_str());
    let parsed = checked(&record);
    let error = parsed["error"].as_str().unwrap();
    assert!(
        error.starts_with(&"x".repeat(133)) && error.contains(" [... 4096 bytes in all ...] "),
        "{error}"
    );
    assert_eq!(parsed["msg"], "m");
    // A long msg is kept whole as long as it fits...
    let msg = "m".repeat(3_000);
    let record = Record::new(Level::Error, "fault", msg.as_str())
        .at(t())
        .field("error", "e");
    assert_eq!(checked(&record)["msg"], msg.as_str());
    // ...and then cut to 1024 bytes, head and tail kept.
    let msg = format!("start {} end", "m".repeat(5_000));
    let record = Record::new(Level::Error, "fault", msg.as_str())
        .at(t())
        .field("error", "e");
    let cut = checked(&record)["msg"].as_str().unwrap().to_string();
    assert!(
        cut.starts_with("start mmm") && cut.ends_with("mmm end") && cut.len() < 1100,
        "{cut}"
    );
}

#[test]
fn a_smaller_limit_is_honoured_when_it_can_be() {
    let procs = many(100);
    let record = Record::new(Level::Info, "draining", "draining: SIGTERM to many")
        .at(t())
        .list("terminated", &procs);
    let mut out = Vec::new();
    JSON.line(&record, 600, &mut out);
    assert!(out.len() <= 600, "{}", out.len());
    let parsed: Json = serde_json::from_slice(&out).unwrap();
    Schema::load().check_json(&parsed).unwrap();
    assert_eq!(
        parsed["terminated_more"].as_u64().unwrap()
            + parsed["terminated"].as_array().unwrap().len() as u64,
        100
    );
}

// The schema, and the facts vigil writes

#[test]
fn the_checker_refuses_what_the_schema_does_not_say() {
    let schema = Schema::load();
    let good = json!({"time": "2026-12-01T18:06:20.123Z", "level": "info", "event": "started", "msg": "m", "command": "x", "pid": 7, "schema": 1});
    schema.check_json(&good).unwrap();
    let mut bad = Vec::new();
    let with = |key: &str, value: Json| {
        let mut record = good.clone();
        record[key] = value;
        record
    };
    let without = |key: &str| {
        let mut record = good.clone();
        record.as_object_mut().unwrap().remove(key);
        record
    };
    bad.push(with("undocumented", json!(1)));
    bad.push(with("pid", json!("7")));
    bad.push(with("pid", json!(7.5)));
    bad.push(with("level", json!("warning")));
    bad.push(with("level", json!("notice")));
    bad.push(with("time", json!("2026-12-01T18:06:20Z")));
    bad.push(with("event", json!("no_such_event")));
    bad.push(with("schema", json!(2)));
    bad.push(with("pid_more", json!(1)));
    bad.push(without("pid"));
    bad.push(without("time"));
    bad.push(without("schema"));
    for record in bad {
        assert!(schema.check_json(&record).is_err(), "accepted {record}");
    }
    // Nested objects are checked field by field too.
    let ending = |e: Json| json!({"time": "2026-12-01T18:06:20.123Z", "level": "info", "event": "child_ended", "msg": "m", "pid": 7, "ending": e, "schema": 1});
    schema
        .check_json(&ending(json!({"kind": "exited", "code": 0, "status": 0})))
        .unwrap();
    for e in [
        json!({"kind": "exited", "status": 0}),
        json!({"kind": "killed", "signal": "SIGTERM", "status": 143}),
        json!({"kind": "killed", "signal": "TERM", "core_dumped": false, "status": 143}),
        json!({"kind": "exited", "code": 0, "status": 0, "extra": 1}),
        json!({"kind": "vanished", "status": 0}),
    ] {
        assert!(
            schema.check_json(&ending(e.clone())).is_err(),
            "accepted {e}"
        );
    }
    // logfmt: an unused key, a bad number, a bad line.
    for text in [
        "time=2026-12-01T18:06:20.123Z level=info event=started msg=m command=x pid=7 extra=1 schema=1",
        "time=2026-12-01T18:06:20.123Z level=info event=started msg=m command=x pid=seven schema=1",
        "time=2026-12-01T18:06:20.123Z level=info event=started msg=m command=x  pid=7 schema=1",
        "time=2026-12-01T18:06:20.123Z level=info event=started msg=\"m command=x pid=7 schema=1",
        "time=2026-12-01T18:06:20.123Z level=info event=started msg=a\"b command=x pid=7 schema=1",
    ] {
        assert!(schema.check_logfmt(text).is_err(), "accepted {text}");
    }
}

#[test]
fn endings_senders_and_hooks_as_fields() {
    let ended = |ending: Ending| {
        let record = Record::new(Level::Info, "child_ended", "m")
            .at(t())
            .field("pid", 7)
            .object("ending", &ending);
        checked(&record)["ending"].clone()
    };
    assert_eq!(
        ended(Ending::Exited(0)),
        json!({"kind": "exited", "code": 0, "status": 0})
    );
    assert_eq!(
        ended(Ending::Killed {
            signal: 11,
            core_dumped: true
        }),
        json!({"kind": "killed", "signal": "SIGSEGV", "core_dumped": true, "status": 139})
    );
    assert_eq!(
        ended(Ending::Killed {
            signal: 64,
            core_dumped: false
        })["signal"],
        "SIGRTMAX"
    );
    assert_eq!(
        ended(Ending::Killed {
            signal: 36,
            core_dumped: false
        })["signal"],
        "SIGRTMIN+2"
    );
    assert_eq!(
        ended(Ending::Killed {
            signal: 32,
            core_dumped: false
        })["signal"],
        "signal 32"
    );

    let received = |sender: Sender, name: Option<&str>| {
        let who = Named {
            sender,
            name: name.map(String::from),
        };
        let record = Record::new(Level::Info, "signal_received", "m")
            .at(t())
            .field("signal", Signal(15))
            .object("sender", &who);
        checked(&record)["sender"].clone()
    };
    assert_eq!(
        received(Sender::Process { pid: 42, uid: 0 }, Some("kill")),
        json!({"kind": "process", "pid": 42, "uid": 0, "name": "kill"})
    );
    assert_eq!(
        received(Sender::Process { pid: 42, uid: 1000 }, None),
        json!({"kind": "process", "pid": 42, "uid": 1000})
    );
    assert_eq!(
        received(Sender::Process { pid: 0, uid: 0 }, None),
        json!({"kind": "outside_namespace", "pid": 0, "uid": 0})
    );
    assert_eq!(received(Sender::Kernel, None), json!({"kind": "kernel"}));
    assert_eq!(
        received(Sender::ParentDeath, None),
        json!({"kind": "parent_death"})
    );
    assert_eq!(received(Sender::Vigil, None), json!({"kind": "vigil"}));

    let hook = |kind, outcome| {
        let record = hooks::Record {
            kind,
            outcome,
            took: ms(1500),
        };
        let level = if record.failed() {
            Level::Warning
        } else {
            Level::Info
        };
        let msg = record.to_string();
        let parsed = checked(
            &Record::new(level, "hook_ended", msg.as_str())
                .at(t())
                .flatten(&record),
        );
        let mut fields = parsed.as_object().unwrap().clone();
        for common in ["time", "level", "event", "msg", "schema"] {
            fields.remove(common);
        }
        Json::Object(fields)
    };
    assert_eq!(
        hook(HookKind::PostStart, Outcome::Ended(Ending::Exited(0))),
        json!({"hook": "post-start", "outcome": "succeeded", "duration": 1.5})
    );
    assert_eq!(
        hook(HookKind::PreStop, Outcome::Ended(Ending::Exited(2))),
        json!({"hook": "pre-stop", "outcome": "failed", "ending": {"kind": "exited", "code": 2, "status": 2}, "duration": 1.5})
    );
    assert_eq!(
        hook(
            HookKind::PreStop,
            Outcome::CouldNotRun("cannot run \"curl\": No such file or directory".into())
        ),
        json!({"hook": "pre-stop", "outcome": "failed", "reason": "could_not_run", "error": "cannot run \"curl\": No such file or directory", "duration": 1.5})
    );
    assert_eq!(
        hook(HookKind::PostStart, Outcome::TimedOut),
        json!({"hook": "post-start", "outcome": "failed", "reason": "timed_out", "duration": 1.5})
    );
    for (cancel, reason) in [
        (Cancel::Stop, "stop"),
        (Cancel::GraceDeadline, "grace_deadline"),
        (Cancel::ChildExited, "child_exited"),
    ] {
        assert_eq!(
            hook(HookKind::PostStart, Outcome::Cancelled(cancel)),
            json!({"hook": "post-start", "outcome": "cancelled", "reason": reason, "duration": 1.5})
        );
    }
}

#[test]
fn log_formats_by_name() {
    assert_eq!(Format::parse("json"), Ok(Format::Json));
    assert_eq!(Format::parse("logfmt"), Ok(Format::Logfmt));
    assert_eq!(Format::parse("text"), Ok(Format::Text));
    assert_eq!(Format::default(), Format::Text);
    assert_eq!(Format::Text.encoding(), None);
    assert_eq!(
        Format::parse("yaml"),
        Err("'yaml' is not a log format: use text, json or logfmt".to_string())
    );
}

// docs/logging.md (its examples are vigil's own lines: supervisor/examples.rs)

fn logging_md() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/logging.md");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every record line in the doc (a line starting `{"time"` or `time=`),
/// examples or not, holds to the schema.
#[test]
fn every_record_in_the_doc_holds_to_the_schema() {
    let schema = Schema::load();
    let mut seen = 0;
    for text in logging_md().lines() {
        let text = text.trim();
        if text.starts_with("{\"time\"") {
            let parsed: Json = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
            schema
                .check_json(&parsed)
                .unwrap_or_else(|e| panic!("{e}: {text}"));
            seen += 1;
        } else if text.starts_with("time=") {
            schema
                .check_logfmt(text)
                .unwrap_or_else(|e| panic!("{e}: {text}"));
            seen += 1;
        }
    }
    assert!(seen >= 10, "{seen} records in the doc");
}

/// The doc and the schema name the same events, objects and fields: each
/// event has a `### \`name\`` heading and each object a `#### \`name\``
/// one, and every field appears in its section as `` `name` ``.
#[test]
fn the_doc_and_the_schema_agree() {
    let doc = logging_md();
    let schema = Schema::load();
    assert!(doc.contains(&format!("Schema version: **{}**", schema.version())));
    let section = |heading: &str| -> String {
        let start = doc
            .find(heading)
            .unwrap_or_else(|| panic!("no {heading} in docs/logging.md"));
        let rest = &doc[start + heading.len()..];
        let end = rest.find("\n###").unwrap_or(rest.len());
        rest[..end].to_string()
    };
    let mut headings: Vec<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("### `").or_else(|| l.strip_prefix("#### `")))
        .filter_map(|l| l.split('`').next())
        .map(String::from)
        .collect();
    for (kind, names) in [("events", schema.events()), ("objects", schema.objects())] {
        let hashes = if kind == "events" { "### `" } else { "#### `" };
        for name in names {
            let text = section(&format!("{hashes}{name}`"));
            for (field, _, _) in schema.fields_of(kind, &name) {
                assert!(
                    text.contains(&format!("`{field}`")),
                    "{kind} {name}: field {field} is not in its section of docs/logging.md"
                );
            }
            headings.retain(|h| *h != name);
        }
    }
    assert!(
        headings.is_empty(),
        "docs/logging.md documents what the schema lacks: {headings:?}"
    );
    for (field, _, _) in schema.fields_of("common", "") {
        assert!(
            section("## Every record").contains(&format!("`{field}`")),
            "common field {field}"
        );
    }
}

#[test]
fn a_cut_never_runs_off_the_start() {
    // Continuation bytes everywhere (not UTF-8): the cut points stay inside.
    let bytes = [0x80u8; 10];
    for max in 0..10 {
        let (head, tail) = cut_points(&bytes, max).unwrap();
        assert!(head <= tail && tail <= bytes.len(), "{max}: {head} {tail}");
    }
    assert_eq!(string_of(&Value::Bytes(&[0x80; 300])).len(), 4 * 300);
}
