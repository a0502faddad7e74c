//! `--log-format json|logfmt` (and `VIGIL_LOG_FORMAT`): every line vigil
//! writes is one record, read back here by real parsers (serde_json, and
//! the strict logfmt parser of common/check.rs) and held to the
//! documented schema (docs/logging-schema.json, through the same checker):
//! a record with a field the schema does not list, or without a required
//! one, fails. Every scenario of the exit report's tests (diagnosis.rs,
//! termination_log.rs, oom.rs, lifecycle.rs) is played in both formats:
//! the exit record says what the text report says, as fields. The
//! termination log holds the exit record, valid and at most 4096 bytes,
//! and so does every line, whatever the command's length or the number
//! of processes left. (In Docker, read with `jq`: tests/it/e2e/docker.rs.)

use crate::common::*;
use serde_json::Value;
use std::fs;
use std::time::Duration;

/// The two structured formats, each asked for one way: json by the
/// option, logfmt by the variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fmt {
    Json,
    Logfmt,
}

const BOTH: [Fmt; 2] = [Fmt::Json, Fmt::Logfmt];

impl Fmt {
    fn on(self, v: Vigil) -> Vigil {
        match self {
            Fmt::Json => v.args(["--log-format", "json"]),
            Fmt::Logfmt => v.env("VIGIL_LOG_FORMAT", "logfmt"),
        }
    }
    /// How a record of `event` says so, in this format.
    fn event(self, event: &str) -> String {
        match self {
            Fmt::Json => format!("\"event\":\"{event}\""),
            Fmt::Logfmt => format!(" event={event} "),
        }
    }
}

/// One line as a record (JSON, whatever the format), held to the schema.
fn record(fmt: Fmt, line: &str) -> Result<Value, String> {
    if line.len() + 1 > 4096 {
        return Err(format!("a {}-byte line", line.len() + 1));
    }
    match fmt {
        Fmt::Json => {
            let value: Value = serde_json::from_str(line).map_err(|e| format!("{e}: {line}"))?;
            schema().check_json(&value).map(|()| value)
        }
        Fmt::Logfmt => schema().check_logfmt(line),
    }
    .map_err(|e| format!("{e}\n{line}"))
}

/// Every stderr line of `out`, each a valid record of the schema (the
/// scenarios' children write nothing to stderr).
fn records(fmt: Fmt, out: &Output) -> Vec<Value> {
    no_panic(out);
    out.stderr
        .lines()
        .map(|line| record(fmt, line).unwrap_or_else(|e| panic!("{fmt:?}: {e}\n{out}")))
        .collect()
}

/// The one record of `event`.
fn the<'a>(records: &'a [Value], event: &str, out: &Output) -> &'a Value {
    let found: Vec<&Value> = records.iter().filter(|r| r["event"] == event).collect();
    match found.as_slice() {
        [one] => one,
        _ => panic!("{} {event} records\n{out}", found.len()),
    }
}

/// The exit record, and its `msg` is the text report's line.
fn exit_record<'a>(records: &'a [Value], out: &Output) -> &'a Value {
    let exit = the(records, "exit", out);
    let msg = exit["msg"].as_str().unwrap_or("");
    assert!(msg.starts_with("exit report: child "), "{exit}");
    exit
}

fn uid() -> u32 {
    // SAFETY: getuid has no arguments and cannot fail.
    unsafe { libc::getuid() }
}

// ---------------------------------------------------------------------------
// Each kind of ending
// ---------------------------------------------------------------------------

#[test]
fn a_clean_exit() {
    for fmt in BOTH {
        let dir = TempDir::new("lfclean");
        let out = run_sh(fmt.on(Vigil::pid1().arg("-v")), &dir, "exit 0");
        assert_eq!(out.code(), Some(0), "{out}");
        let all = records(fmt, &out);
        let exit = exit_record(&all, &out);
        assert_eq!(exit["level"], "info");
        assert_eq!(exit["status"], 0);
        assert_eq!(
            exit["ending"],
            serde_json::json!({"kind": "exited", "code": 0, "status": 0})
        );
        assert_eq!(exit["command"], "sh -c 'exit 0'");
        assert_eq!(exit["pid"], 2);
        assert_eq!(exit["oom_kills"], 0);
        assert_eq!(exit["timeout"], false);
        assert!(exit.get("stop").is_none(), "{exit}");
        let started = the(&all, "started", &out);
        assert_eq!(started["pid"], 2);
        // By default a clean exit says nothing, in any format.
        let out = run_sh(fmt.on(Vigil::pid1()), &dir, "exit 0");
        assert_eq!(out.stderr, "", "{out}");
    }
}

#[test]
fn an_exit_code() {
    for fmt in BOTH {
        let dir = TempDir::new("lfcode");
        let out = run_sh(fmt.on(Vigil::pid1()), &dir, "exit 3");
        assert_eq!(out.code(), Some(3), "{out}");
        let all = records(fmt, &out);
        assert_eq!(all.len(), 1, "{out}");
        let exit = exit_record(&all, &out);
        assert_eq!(exit["level"], "warning");
        assert_eq!(exit["status"], 3);
        assert_eq!(exit["ending"]["code"], 3);
        assert!(exit["ending"].get("cause").is_none(), "{exit}");
    }
}

#[test]
fn a_stop_answered() {
    for fmt in BOTH {
        let (run, pid) = start_sleep(fmt.on(Vigil::pid1().arg("-v")));
        let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
        assert_eq!(out.code(), Some(143), "{out}");
        let all = records(fmt, &out);
        let received = the(&all, "signal_received", &out);
        assert_eq!(received["signal"], "SIGTERM");
        assert_eq!(
            received["sender"],
            serde_json::json!({"kind": "outside_namespace", "pid": 0, "uid": 0})
        );
        let exit = exit_record(&all, &out);
        assert_eq!(exit["level"], "info", "the answer to a stop is no warning");
        assert_eq!(exit["status"], 143);
        assert_eq!(exit["pid"], pid);
        assert_eq!(exit["ending"]["signal"], "SIGTERM");
        assert_eq!(exit["ending"]["cause"], "stop_signal");
        let stop = &exit["stop"];
        assert_eq!(stop["cause"], "signal");
        assert_eq!(stop["signal"], "SIGTERM");
        assert_eq!(stop["sender"]["kind"], "outside_namespace");
        assert_eq!(stop["sent"], "SIGTERM");
        assert!(stop["ended_after"].as_f64().unwrap() < 5.0, "{stop}");
        assert!(stop["time"].as_str().unwrap() <= exit["time"].as_str().unwrap());
    }
}

#[test]
fn a_sigkill_at_the_grace_deadline() {
    for fmt in BOTH {
        let dir = TempDir::new("lfgrace");
        let v = fmt.on(Vigil::pid1().args(["--grace-period", "1s"]));
        let run = start_sh(v, &dir, TERM_IGNORER);
        let pid: i64 = read_trimmed(&dir.join("pid")).parse().unwrap();
        let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
        assert_eq!(out.code(), Some(137), "{out}");
        let all = records(fmt, &out);
        let deadline = the(&all, "grace_deadline", &out);
        assert_eq!(deadline["grace_period"], 1);
        assert_eq!(deadline["listed"], true);
        assert_eq!(
            deadline["killed"],
            serde_json::json!([{"pid": pid, "name": "sleep 1000"}])
        );
        let exit = exit_record(&all, &out);
        assert_eq!(exit["level"], "warning");
        assert_eq!(exit["ending"]["signal"], "SIGKILL");
        assert_eq!(exit["ending"]["cause"], "grace_deadline");
        assert_eq!(exit["grace_kills"], deadline["killed"]);
        assert_eq!(exit["stop"]["grace_period"], 1);
        let after = exit["stop"]["ended_after"].as_f64().unwrap();
        assert!((1.0..3.0).contains(&after), "{exit}");
    }
}

#[test]
fn a_kill_in_the_drain() {
    for fmt in BOTH {
        let dir = TempDir::new("lfdrain");
        let v = fmt.on(Vigil::pid1().args(["--drain-timeout", "1s"]));
        let out = run_sh(
            v,
            &dir,
            "(trap '' TERM; : > trapped; exec sleep 1000) & echo $! > bg; \
             while [ ! -e trapped ]; do sleep 0.01; done; exit 0",
        );
        assert_eq!(out.code(), Some(0), "{out}");
        let bg: i64 = read_trimmed(&dir.join("bg")).parse().unwrap();
        let all = records(fmt, &out);
        let killed = the(&all, "drain_killed", &out);
        assert_eq!(killed["cause"], "drain_timeout");
        assert_eq!(killed["drain_timeout"], 1);
        assert_eq!(
            killed["killed"],
            serde_json::json!([{"pid": bg, "name": "sleep 1000"}])
        );
        let exit = exit_record(&all, &out);
        assert_eq!(exit["level"], "warning");
        assert_eq!(
            exit["drain"],
            serde_json::json!({"left": 1, "kill_cause": "drain_timeout", "timeout": 1})
        );
        assert_eq!(exit["drain_kills"], killed["killed"]);
    }
}

#[test]
fn an_oom_kill_of_the_child_and_of_a_grandchild() {
    for fmt in BOTH {
        let cg = match MemCgroup::create(Some(32 << 20)) {
            Ok(cg) => cg,
            Err(why) => {
                skip("an_oom_kill_of_the_child_and_of_a_grandchild", &why);
                return;
            }
        };
        let hog = test_program("memhog");
        let out = fmt
            .on(cg.pid1())
            .arg("--")
            .arg(&hog)
            .args(["--max-mb", "512"])
            .run();
        assert_eq!(out.code(), Some(137), "{out}");
        let all = records(fmt, &out);
        let exit = exit_record(&all, &out);
        assert_eq!(exit["ending"]["cause"], "oom_killer", "{exit}");
        assert_eq!(exit["oom_kills"], 1);
        drop(cg);

        let cg = MemCgroup::create(Some(32 << 20)).expect("a second cgroup");
        // The shell says "Killed" on its stderr, which is vigil's.
        let script = format!(
            "exec 2>/dev/null; '{}' --max-mb 512; echo hog=$?",
            hog.display()
        );
        let out = fmt.on(cg.pid1()).args(["--", "sh", "-c", &script]).run();
        assert_eq!(out.code(), Some(0), "{out}");
        assert!(out.stdout.contains("hog=137"), "{out}");
        let all = records(fmt, &out);
        let exit = exit_record(&all, &out);
        assert_eq!(exit["level"], "warning");
        assert_eq!(exit["ending"]["kind"], "exited");
        assert!(exit["ending"].get("cause").is_none(), "{exit}");
        assert_eq!(exit["oom_kills"], 1);
    }
}

#[test]
fn a_timeout() {
    for fmt in BOTH {
        let dir = TempDir::new("lftimeout");
        let v = fmt.on(Vigil::pid1().args(["--timeout", "1s", "--drain-timeout", "1s"]));
        let out = run_sh(v, &dir, "(trap '' TERM; exec sleep 1000) & exec sleep 999");
        assert_eq!(out.code(), Some(124), "{out}");
        let all = records(fmt, &out);
        assert_eq!(the(&all, "timeout_passed", &out)["timeout"], 1);
        let exit = exit_record(&all, &out);
        assert_eq!(exit["timeout"], true);
        assert_eq!(exit["status"], 124);
        let stop = &exit["stop"];
        assert_eq!(stop["cause"], "timeout");
        assert_eq!(stop["timeout"], 1);
        assert_eq!(stop["grace_period"], 10, "the default after --timeout");
        assert_eq!(stop["sent"], "SIGTERM");
        assert_eq!(exit["drain"]["kill_cause"], "drain_timeout");
    }
}

#[test]
fn a_failed_post_start_hook() {
    for fmt in BOTH {
        let dir = TempDir::new("lfpost");
        let v = fmt.on(Vigil::pid1().args(["--post-start", "sh -c 'exit 5'"]));
        let out = v.cwd(dir.path()).args(["--", "sleep", "1000"]).run();
        assert_eq!(out.code(), Some(143), "{out}");
        let all = records(fmt, &out);
        let ended = the(&all, "hook_ended", &out);
        assert_eq!(ended["level"], "warning");
        assert_eq!(ended["hook"], "post-start");
        assert_eq!(ended["outcome"], "failed");
        assert_eq!(ended["ending"]["code"], 5);
        let exit = exit_record(&all, &out);
        assert_eq!(exit["stop"]["cause"], "post_start_failed");
        let hooks = exit["hooks"].as_array().unwrap();
        assert_eq!(hooks.len(), 1, "{exit}");
        assert_eq!(hooks[0]["outcome"], "failed");
        assert_eq!(hooks[0]["ending"]["code"], 5);
        assert!(hooks[0]["duration"].is_number());
    }
}

#[test]
fn an_exec_failure_and_its_termination_log() {
    for fmt in BOTH {
        let dir = TempDir::new("lfexec");
        let log = dir.join("termination-log");
        let v = fmt.on(Vigil::pid1().arg("--termination-log").arg(&log));
        let out = v.args(["--", "/no/such/program"]).run();
        assert_eq!(out.code(), Some(127), "{out}");
        let all = records(fmt, &out);
        assert_eq!(all.len(), 1, "{out}");
        let failed = the(&all, "exec_failed", &out);
        assert_eq!(failed["program"], "/no/such/program");
        assert_eq!(failed["error"], "No such file or directory");
        assert_eq!(failed["status"], 127);
        assert_eq!(
            fs::read_to_string(&log).unwrap(),
            format!("{}\n", out.stderr.trim_end()),
            "the termination log holds the same record"
        );
    }
}

#[test]
fn a_usage_error_and_its_termination_log() {
    for fmt in BOTH {
        let dir = TempDir::new("lfusage");
        let log = dir.join("termination-log");
        let v = fmt.on(Vigil::plain().arg("--termination-log").arg(&log));
        let out = v.args(["--grace-period", "soon", "--", "true"]).run();
        assert_eq!(out.code(), Some(2), "{out}");
        let all = records(fmt, &out);
        let error = the(&all, "usage_error", &out);
        assert_eq!(error["level"], "error");
        assert_eq!(error["status"], 2);
        assert!(
            error["msg"]
                .as_str()
                .unwrap()
                .starts_with("--grace-period: 'soon' is not a duration"),
            "{error}"
        );
        assert_eq!(fs::read_to_string(&log).unwrap(), out.stderr);
    }
    // A bad format is itself a usage error, said in text.
    let out = Vigil::plain()
        .args(["--log-format", "yaml", "--", "true"])
        .run();
    let line = usage_error_line(&out, "--log-format yaml");
    assert!(
        line.contains("'yaml' is not a log format: use text, json or logfmt"),
        "{line}"
    );
    let out = Vigil::plain()
        .env("VIGIL_LOG_FORMAT", "JSON!")
        .args(["--", "true"])
        .run();
    let line = usage_error_line(&out, "VIGIL_LOG_FORMAT=JSON!");
    assert!(line.contains("VIGIL_LOG_FORMAT: "), "{line}");
}

#[test]
fn a_forwarded_signal_that_killed_the_child() {
    for fmt in BOTH {
        let dir = TempDir::new("lffwd");
        // The sender stays a while: vigil reads its name after the kill,
        // from /proc, and a sender already gone has none; it stays a shell
        // (its last command is not a `sleep` the shell would exec).
        let script = "sh -c 'echo $$ > sender; kill -USR1 1; sleep 5; :' & wait; sleep 1000 & wait";
        let out = run_sh(fmt.on(Vigil::pid1()), &dir, script);
        assert_eq!(out.code(), Some(138), "{out}");
        let sender: i64 = read_trimmed(&dir.join("sender")).parse().unwrap();
        let all = records(fmt, &out);
        let exit = exit_record(&all, &out);
        let ending = &exit["ending"];
        assert_eq!(ending["cause"], "forwarded");
        assert_eq!(
            ending["forwarded"],
            serde_json::json!({
                "signal": "SIGUSR1",
                "sender": {
                    "kind": "process",
                    "pid": sender,
                    "uid": uid(),
                    "name": title(&["sh", "-c", "echo $$ > sender; kill -USR1 1; sleep 5; :"])
                },
                "sent": "SIGUSR1"
            })
        );
    }
}

#[test]
fn sigint_then_sigterm() {
    for fmt in BOTH {
        let dir = TempDir::new("lfintterm");
        let script = "trap 'echo got INT' INT; trap 'exit 143' TERM; : > ready; \
                      while :; do sleep 1000 & wait; done";
        let run = start_sh(fmt.on(Vigil::pid1()), &dir, script);
        run.signal(libc::SIGINT);
        assert!(run.wait_stdout("got INT", TIMEOUT), "{}", run.describe());
        let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
        assert_eq!(out.code(), Some(143), "{out}");
        let all = records(fmt, &out);
        let exit = exit_record(&all, &out);
        let stop = &exit["stop"];
        assert_eq!(stop["signal"], "SIGINT");
        assert_eq!(stop["later"]["signal"], "SIGTERM");
        assert_eq!(stop["later"]["sender"]["kind"], "outside_namespace");
        assert_eq!(stop["later"]["sent"], "SIGTERM");
        assert_eq!(stop["ended_on"], "later");
        assert!(stop["later"]["time"].as_str().unwrap() >= stop["time"].as_str().unwrap());
    }
}

#[test]
fn the_parent_death_signal() {
    for fmt in BOTH {
        let dir = TempDir::new("lfpdeath");
        // The parent dies once the child runs (vigil has asked for the
        // signal by then) and the test knows vigil's pid: when the test
        // says `go`.
        let parent = "\"$@\" & while [ ! -e go ]; do sleep 0.01; done";
        let v = Vigil::wrapped(&["sh", "-c", parent, "sh"]).args(["-p", "TERM"]);
        let run = start_sh(fmt.on(v), &dir, ": > ready; sleep 1000 & wait");
        let vigil = run.vigil_pid();
        fs::write(dir.join("go"), "").unwrap();
        let out = run.wait(TIMEOUT);
        assert!(wait_until(TIMEOUT, || gone(vigil)), "vigil did not stop");
        let all = records(fmt, &out);
        let exit = exit_record(&all, &out);
        assert_eq!(
            exit["stop"]["sender"],
            serde_json::json!({"kind": "parent_death"})
        );
    }
}

// ---------------------------------------------------------------------------
// Every line, every event vigil can say at -vvv
// ---------------------------------------------------------------------------

/// At `-vvv` every line of a run that goes through hooks, a rewrite, a
/// drain and the grace deadline is a record of the schema: no line of
/// vigil's escapes the format.
#[test]
fn every_line_of_a_busy_run_is_a_record() {
    for fmt in BOTH {
        let dir = TempDir::new("lfbusy");
        let v = fmt.on(Vigil::pid1().args([
            "-vvv",
            "-w",
            "--rewrite",
            "USR2:0",
            "--post-start",
            "true",
            "--pre-stop",
            "sh -c 'exit 6'",
            "--pre-stop-sleep",
            "100ms",
            "--grace-period",
            "2s",
            "--drain-timeout",
            "500ms",
            "--termination-log",
            "",
        ]));
        let script = "trap '' TERM; trap : HUP; (trap '' TERM; exec sleep 1000) & (sleep 0.1 &) ; \
                      echo $$ > pid; : > ready; while :; do sleep 1000 & wait; done";
        let run = start_sh(v, &dir, script);
        run.signal(libc::SIGUSR2);
        run.signal(libc::SIGHUP);
        // Both handled before the stop begins.
        for event in ["signal_dropped", "signal_forwarded"] {
            assert!(
                run.wait_stderr(&fmt.event(event), TIMEOUT),
                "no {event}\n{}",
                run.describe()
            );
        }
        let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
        assert_eq!(out.code(), Some(137), "{out}");
        let all = records(fmt, &out);
        let events: Vec<&str> = all.iter().filter_map(|r| r["event"].as_str()).collect();
        for wanted in [
            "started",
            "hook_started",
            "hook_ended",
            "signal_received",
            "signal_dropped",
            "signal_forwarded",
            "stopping",
            "pre_stop_sleep",
            "grace_deadline",
            "child_ended",
            "reaped",
            "exit",
        ] {
            assert!(events.contains(&wanted), "no {wanted} in {events:?}\n{out}");
        }
    }
}

/// No call site logs around `log::emit`: a `log` crate macro would write a
/// text line in the middle of a structured log.
#[test]
fn every_log_line_goes_through_emit() {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut stray = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(src)];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = fs::read_to_string(&path).unwrap();
                for (n, line) in text.lines().enumerate() {
                    let calls = ["error!", "warn!", "info!", "debug!", "trace!", "log!"];
                    if calls.iter().any(|m| line.contains(&format!("log::{m}"))) {
                        stray.push(format!("{}:{}: {line}", path.display(), n + 1));
                    }
                }
            }
        }
    }
    assert!(stray.is_empty(), "log crate macros:\n{}", stray.join("\n"));
}

// ---------------------------------------------------------------------------
// The termination log, and lines that would be too long
// ---------------------------------------------------------------------------

/// The termination log holds the exit record, the same bytes as the log
/// line, even when the report is not shown (a clean exit).
#[test]
fn the_termination_log_holds_the_exit_record() {
    for fmt in BOTH {
        for (script, shown) in [("exit 3", true), ("exit 0", false)] {
            let dir = TempDir::new("lftlog");
            let log = dir.join("termination-log");
            let v = fmt.on(Vigil::pid1().arg("--termination-log").arg(&log));
            let out = run_sh(v, &dir, script);
            let written = fs::read_to_string(&log).expect("the termination log");
            assert!(
                written.len() <= 4096 && written.ends_with('\n'),
                "{written}"
            );
            let exit = record(fmt, written.trim_end()).unwrap();
            assert_eq!(exit["event"], "exit");
            if shown {
                assert_eq!(written, out.stderr, "the same bytes as the log line");
            } else {
                assert_eq!(out.stderr, "", "{out}");
                assert_eq!(exit["level"], "info");
            }
        }
    }
}

/// A 100 KB command line: the exit record is shortened, never broken, and
/// says so; the status and the ending stay whole.
#[test]
fn a_100_kb_command_stays_one_valid_line() {
    for fmt in BOTH {
        let dir = TempDir::new("lflong");
        let log = dir.join("termination-log");
        let words: Vec<String> = (1..=20_000).map(|n| format!("{n:04}")).collect();
        let v = fmt.on(Vigil::pid1().arg("-v").arg("--termination-log").arg(&log));
        let out = v
            .cwd(dir.path())
            .args(["--", "sh", "-c", "exit 3"])
            .args(&words)
            .run();
        assert_eq!(out.code(), Some(3), "{out}");
        let all = records(fmt, &out);
        let exit = exit_record(&all, &out);
        assert_eq!(exit["shortened"], true);
        assert_eq!(exit["status"], 3);
        assert_eq!(exit["ending"]["code"], 3);
        let command = exit["command"].as_str().unwrap();
        assert!(command.starts_with("sh -c 'exit 3' 0001 0002"), "{command}");
        assert!(command.contains(" bytes in all ...] "), "{command}");
        let started = the(&all, "started", &out);
        assert_eq!(started["shortened"], true);
        let written = fs::read_to_string(&log).unwrap();
        assert!(written.len() <= 4096);
        assert_eq!(record(fmt, written.trim_end()).unwrap(), *exit);
    }
}

/// 10,000 processes left at the grace deadline: the lists are cut (with
/// `_more` saying how many were left out), every line stays valid and
/// within 4096 bytes.
#[test]
fn ten_thousand_leftovers_stay_one_valid_line() {
    let _cpu = heavy();
    for fmt in BOTH {
        let dir = TempDir::new("lfmany");
        let v = fmt.on(Vigil::pid1().args(["--grace-period", "3s"]));
        // 10,000 sleeps that ignore SIGTERM, then the child waits too.
        let script = "trap '' TERM; i=0; while [ $i -lt 10000 ]; do sleep 1000 & i=$((i+1)); done; \
                      : > ready; while :; do sleep 1000 & wait; done";
        let run = spawn_sh(v, &dir, script);
        // 10,000 forks take a while on a busy machine.
        assert!(
            wait_for_file(&dir.join("ready"), 10 * TIMEOUT),
            "the child never created 'ready'\n{}",
            run.describe()
        );
        let out = run.stop_and_wait(libc::SIGTERM, Duration::from_secs(120));
        assert_eq!(out.code(), Some(137), "{out}");
        let all = records(fmt, &out);
        let deadline = the(&all, "grace_deadline", &out);
        assert_eq!(deadline["shortened"], true);
        let shown = deadline["killed"].as_array().unwrap().len() as u64;
        let more = deadline["killed_more"].as_u64().unwrap();
        assert!(shown + more > 10_000, "{shown} + {more}");
        let exit = exit_record(&all, &out);
        assert_eq!(exit["ending"]["cause"], "grace_deadline");
        assert!(exit["grace_kills_more"].as_u64().unwrap() > 9_000, "{exit}");
    }
}
