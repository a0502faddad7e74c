//! The encoders read back by real parsers (serde_json, and the strict
//! logfmt parser in `check`), every record held to docs/logging-schema.json,
//! and docs/logging.md held to both: its examples are the records built
//! here, byte for byte.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::time::Duration;

use nix::unistd::Pid;
use serde_json::{Value as Json, json};

use super::encode::{STEPS, write_secs};
use super::*;
use crate::log::check::{Schema, parse_logfmt};
use crate::log::facts::hook;
use crate::log::facts::{Cancel, Ending, HookKind, Named, Outcome, Proc, Sender, Signal};

/// No facts: a record built by hand starts without fields.
impl Fields for () {
    fn fields<'a>(&'a self, _: &mut Obj<'_, 'a>) {}
}

/// Building a record by hand, field by field, for the tests of the
/// encodings; vigil's own records come from `event::Event`.
impl<'a> Record<'a> {
    /// A record of `event`, stamped now. `msg` is the text line's words
    /// (after `vigil: ` and the level's tag).
    pub fn new(level: Level, event: &'static str, msg: impl Into<Cow<'a, str>>) -> Record<'a> {
        Record::stamped(level, event, msg, Timestamp::now(), &())
    }

    fn obj(&mut self) -> Obj<'_, 'a> {
        Obj {
            nodes: &mut self.nodes,
        }
    }

    /// Lets `build` add fields.
    pub fn with(mut self, build: impl FnOnce(&mut Obj<'_, 'a>)) -> Record<'a> {
        build(&mut self.obj());
        self
    }

    /// The same record stamped at `time` (the tests' fixed instants).
    pub fn at(mut self, time: Timestamp) -> Record<'a> {
        self.time = time;
        self
    }

    /// Adds a field.
    pub fn field(mut self, key: &'static str, value: impl Into<Value<'a>>) -> Record<'a> {
        self.obj().field(key, value);
        self
    }

    /// Adds an object describing `facts`.
    pub fn object(mut self, key: &'static str, facts: &'a impl Fields) -> Record<'a> {
        self.obj().object(key, facts);
        self
    }

    /// Adds an object whose fields `build` adds.
    pub fn object_with(
        mut self,
        key: &'static str,
        build: impl FnOnce(&mut Obj<'_, 'a>),
    ) -> Record<'a> {
        self.obj().object_with(key, build);
        self
    }

    /// Adds a list with one object per item.
    pub fn list<T: Fields + 'a, I>(mut self, key: &'static str, items: I) -> Record<'a>
    where
        I: IntoIterator<Item = &'a T>,
        I::IntoIter: ExactSizeIterator,
    {
        self.obj().list(key, items);
        self
    }

    /// Adds the fields of `facts` at the top level (a hook's event has the
    /// hook's own fields).
    pub fn flatten(mut self, facts: &'a impl Fields) -> Record<'a> {
        facts.fields(&mut self.obj());
        self
    }
}

/// 2026-12-01T18:06:20.123Z: the instant every example is stamped with.
fn t() -> Timestamp {
    Timestamp::from_unix(1_796_148_380, 123)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

const JSON: Encoder = Encoder {
    format: Format::Json,
    vigil_pid: None,
};

const LOGFMT: Encoder = Encoder {
    format: Format::Logfmt,
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
        pid: Pid::from_raw(pid),
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
        "{\"time\":\"2026-12-01T18:06:20.123Z\",\"level\":\"info\",\"logger\":\"vigil\",\"event\":\"started\",\"msg\":\"started sleep 1 as pid 7\",\"command\":\"sleep 1\",\"pid\":7,\"schema\":1}\n"
    );
    assert_eq!(
        logfmt_line(&record),
        "time=2026-12-01T18:06:20.123Z level=info logger=vigil event=started msg=\"started sleep 1 as pid 7\" command=\"sleep 1\" pid=7 schema=1\n"
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
    assert_eq!(pairs[4], ("msg".to_string(), all.clone()));
    assert_eq!(pairs[5], ("command".to_string(), all));
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
    assert_eq!(parse_logfmt(&text).unwrap()[5].1, "a\\xffb");
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
        let record = Record::new(Level::Info, "started", "m").field("n", value);
        let line = json_line(&record);
        let (_, n) = line.split_once(",\"n\":").unwrap();
        assert_eq!(n.split(',').next(), Some(expected));
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
    let hook = hook::Record {
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
        assert_eq!(parse_logfmt(&text).unwrap()[5].1, value);
    }
}

mod schema;
mod shortening;
