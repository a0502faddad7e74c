//! The schema, the facts vigil writes as fields, and docs/logging.md held
//! to both.

use super::*;

// The schema, and the facts vigil writes

#[test]
fn the_checker_refuses_what_the_schema_does_not_say() {
    let schema = Schema::load();
    let good = json!({"time": "2026-12-01T18:06:20.123Z", "level": "info", "logger": "vigil", "event": "started", "msg": "m", "command": "x", "pid": 7, "schema": 1});
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
    let ending = |e: Json| json!({"time": "2026-12-01T18:06:20.123Z", "level": "info", "logger": "vigil", "event": "child_ended", "msg": "m", "pid": 7, "ending": e, "schema": 1});
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
            signal: Signal(11),
            core_dumped: true
        }),
        json!({"kind": "killed", "signal": "SIGSEGV", "core_dumped": true, "status": 139})
    );
    assert_eq!(
        ended(Ending::Killed {
            signal: Signal(64),
            core_dumped: false
        })["signal"],
        "SIGRTMAX"
    );
    assert_eq!(
        ended(Ending::Killed {
            signal: Signal(36),
            core_dumped: false
        })["signal"],
        "SIGRTMIN+2"
    );
    assert_eq!(
        ended(Ending::Killed {
            signal: Signal(32),
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
        received(
            Sender::Process {
                pid: Pid::from_raw(42),
                uid: 0
            },
            Some("kill")
        ),
        json!({"kind": "process", "pid": 42, "uid": 0, "name": "kill"})
    );
    assert_eq!(
        received(
            Sender::Process {
                pid: Pid::from_raw(42),
                uid: 1000
            },
            None
        ),
        json!({"kind": "process", "pid": 42, "uid": 1000})
    );
    assert_eq!(
        received(
            Sender::Process {
                pid: Pid::from_raw(0),
                uid: 0
            },
            None
        ),
        json!({"kind": "outside_namespace", "pid": 0, "uid": 0})
    );
    assert_eq!(received(Sender::Kernel, None), json!({"kind": "kernel"}));
    assert_eq!(
        received(Sender::ParentDeath, None),
        json!({"kind": "parent_death"})
    );
    assert_eq!(received(Sender::Vigil, None), json!({"kind": "vigil"}));

    let hook = |kind, outcome| {
        let record = hook::Record {
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
        for common in ["time", "level", "logger", "event", "msg", "schema"] {
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
