//! Shortening: every record fits in one line of PIPE_BUF bytes, and what
//! is cut is cut in the order the module documents.

use super::*;

// Shortening

fn many(n: i32) -> Vec<Proc> {
    (1..=n).map(|pid| proc(pid, "worker")).collect()
}

#[test]
fn ten_thousand_processes_fit_in_one_line() {
    let procs = many(10_000);
    let ending = Ending::Killed {
        signal: Signal(9),
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
    let hook = hook::Record {
        kind: HookKind::PostStart,
        outcome: Outcome::CouldNotRun(nasty.clone()),
        took: Duration::ZERO,
    };
    let hook_list = vec![&hook; 3_000];
    let ending = Ending::Killed {
        signal: Signal(10),
        core_dumped: true,
    };
    let sender = Named {
        sender: Sender::Process {
            pid: Pid::from_raw(42),
            uid: 1000,
        },
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
        let parsed: Json = if encoder.format == Format::Json {
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
            let parsed: Json = if encoder.format == Format::Json {
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
