//! The records docs/logging.md shows, made by vigil's own code: each kind
//! of ending is played through the supervisor with the fake `System`, and
//! what vigil logs is kept (`log::capture`) at a fixed time. The doc
//! must hold every one of these lines, byte for byte: its examples are
//! what vigil writes.

use std::ffi::OsString;
use std::io;
use std::time::Duration;

use super::*;
use crate::log::event::Event;
use crate::log::facts::Proc;
use crate::log::format::{Format, Timestamp};
use crate::log::{self, capture};
use crate::spawn::SpawnError;

/// The child's pid in the examples.
const PID: Pid = Pid::from_raw(7);

/// 2026-12-01T18:06:20.123Z: the instant every example is stamped with.
fn t() -> Timestamp {
    Timestamp::from_unix(1_796_148_380, 123)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A process still running, in its own process group unless it is the
/// child's.
fn running(pid: Pid, ppid: Pid, comm: &str, title: &str) -> crate::procs::Running {
    crate::procs::Running {
        stat: crate::procs::Stat {
            pid,
            ppid,
            pgrp: if ppid == PID { PID } else { pid },
            state: 'S',
            comm: comm.into(),
        },
        title: title.into(),
    }
}

fn proc(pid: Pid, name: &str) -> Proc {
    Proc {
        pid,
        name: name.into(),
    }
}

/// A supervisor whose child, `command`, has just started as pid 7, with
/// these options, as `setup::start` makes it.
fn example(args: &[&str], command: &[&str]) -> Supervisor<Fake> {
    example_in(args, command, None)
}

/// `example`, in a memory cgroup with this limit and `memory.oom.group`.
fn example_in(args: &[&str], command: &[&str], oom_group: Option<u64>) -> Supervisor<Fake> {
    let argv: Vec<OsString> = std::iter::once("vigil")
        .chain(["--termination-log="])
        .chain(args.iter().copied())
        .chain(["--"])
        .chain(command.iter().copied())
        .map(OsString::from)
        .collect();
    let Ok(Action::Run(config)) = cli::parse(&argv, Vec::new()) else {
        panic!("bad example options {args:?}");
    };
    let fake = Fake {
        now: Some(Instant::now()),
        next_pid: 11,
        ..Fake::default()
    };
    let start = Start {
        command: crate::log::facts::Command::new(config.command.clone()),
        limit: oom_group,
        oom_group: oom_group.is_some(),
        ..started(PID)
    };
    let mut s = Supervisor::new(*config, fake, start);
    s.start_post_start();
    s
}

impl Supervisor<Fake> {
    /// The clock moves on by `d`.
    fn wait(&mut self, d: Duration) {
        self.sys.now = Some(self.sys.clock() + d);
    }

    /// Turns of the loop until vigil exits, then the exit report.
    fn run_to_exit(mut self) {
        for _ in 0..20 {
            if self.state == State::Exit {
                self.finish();
                return;
            }
            self.turn();
        }
        panic!("the example did not end: {:?}", self.state);
    }
}

/// The lines `play` makes vigil write, at `-v` in `format`.
fn lines(format: Format, play: impl FnOnce()) -> Vec<String> {
    capture::start(format, 2, t());
    play();
    capture::take()
}

/// The record of `event` among `lines`.
fn record_of(lines: &[String], event: &str) -> String {
    let json = format!("\"event\":\"{event}\"");
    let logfmt = format!(" event={event} ");
    lines
        .iter()
        .find(|l| l.contains(&json) || l.contains(&logfmt))
        .unwrap_or_else(|| panic!("no {event} in {lines:#?}"))
        .clone()
}

/// A scenario: what happens to vigil.
type Play = Box<dyn Fn()>;

/// Each kind of ending, played: (name, what vigil does).
fn endings() -> Vec<(&'static str, Play)> {
    vec![
        (
            "clean exit",
            Box::new(|| {
                let mut s = example(&[], &["sleep", "1"]);
                s.wait(ms(1_003));
                s.ended(PID, exited(0));
                s.run_to_exit();
            }),
        ),
        (
            "exit code",
            Box::new(|| {
                let mut s = example(&[], &["sh", "-c", "exit 3"]);
                s.ended(PID, exited(3));
                s.run_to_exit();
            }),
        ),
        (
            "stop signal answered",
            Box::new(|| {
                let mut s = example(&[], &["nginx", "-g", "daemon off;"]);
                s.signal(from_outside(Signal::TERM));
                s.wait(ms(12));
                s.ended(PID, killed(Signal::TERM));
                s.run_to_exit();
            }),
        ),
        (
            "grace deadline",
            Box::new(|| {
                let mut s = example(&["--grace-period", "10s"], &["java", "-jar", "app.jar"]);
                s.signal(from_outside(Signal::TERM));
                s.sys.left = vec![
                    proc(PID, "java -jar app.jar"),
                    proc(pid(31), "sh -c ./backup.sh"),
                ];
                s.passes(Deadline::Grace);
                s.wait(ms(3));
                s.ended(PID, killed(Signal::KILL));
                s.run_to_exit();
            }),
        ),
        (
            "OOM kill of the child",
            Box::new(|| {
                let mut s = example(&[], &["python3", "train.py"]);
                s.sys.memory.oom_kill = 1;
                s.ended(PID, killed(Signal::KILL));
                s.run_to_exit();
            }),
        ),
        (
            "OOM kill of a grandchild",
            Box::new(|| {
                let mut s = example(&[], &["sh", "-c", "make -j8 all"]);
                s.sys.memory.oom_kill = 1;
                for n in 20..23 {
                    s.ended(pid(n), killed(Signal::KILL));
                }
                s.ended(PID, exited(0));
                s.run_to_exit();
            }),
        ),
        (
            "timeout",
            Box::new(|| {
                let mut s = example(&["--timeout", "20m"], &["make", "integration-test"]);
                s.passes(Deadline::Timeout);
                s.wait(ms(1_520));
                s.sys.children = true;
                s.sys.left = vec![proc(pid(41), "postgres"), proc(pid(42), "sh")];
                s.ended(PID, exited(2));
                s.ended(Pid::from_raw(42), exited(0));
                s.sys.left = vec![proc(pid(41), "postgres")];
                s.passes(Deadline::Drain);
                s.sys.reaps.push_back(Next::Changed(Change::Ended(
                    Pid::from_raw(41),
                    killed(Signal(9)),
                )));
                s.sys.reaps.push_back(Next::NoChildren);
                s.signal(Received {
                    signal: Signal::CHLD,
                    sender: Sender::Kernel,
                });
                s.run_to_exit();
            }),
        ),
        (
            "failed post-start hook",
            Box::new(|| {
                let mut s = example(&["--post-start", "./ready-check"], &["./server"]);
                let hook = s.post_start.as_ref().unwrap().pid;
                s.wait(ms(204));
                s.ended(hook, exited(1));
                s.wait(ms(310));
                s.ended(PID, exited(0));
                s.run_to_exit();
            }),
        ),
        (
            "not ready",
            Box::new(|| {
                let mut s = example(
                    &[
                        "--ready-when",
                        "http://127.0.0.1:8080/healthz",
                        "--ready-timeout",
                        "30s",
                    ],
                    &["./server"],
                );
                s.sys.probe_starts = std::iter::repeat_with(refused).take(100).collect();
                s.passes(Deadline::ReadyTimeout);
                s.wait(ms(120));
                s.ended(PID, killed(Signal::TERM));
                s.run_to_exit();
            }),
        ),
        (
            "a forwarded signal",
            Box::new(|| {
                let mut s = example(&[], &["sleep", "1000"]);
                s.signal(from_outside(Signal::USR1));
                s.ended(PID, killed(Signal::USR1));
                s.run_to_exit();
            }),
        ),
        (
            "a kill -9 from a process",
            Box::new(|| {
                let mut s = example(&[], &["sleep", "1000"]);
                s.ended(PID, killed(Signal::KILL));
                s.run_to_exit();
            }),
        ),
    ]
}

/// The exit record of each kind of ending, in `format`.
fn exit_records(format: Format) -> Vec<(&'static str, String)> {
    endings()
        .into_iter()
        .map(|(name, play)| (name, record_of(&lines(format, play), "exit")))
        .collect()
}

/// The records that end vigil before the child runs: the command cannot
/// be executed, the command line is wrong.
fn start_records(format: Format) -> Vec<(&'static str, String)> {
    let exec = lines(format, || {
        let e = SpawnError {
            program: "/app/server".into(),
            error: io::Error::from_raw_os_error(libc::ENOENT),
            shell_error: None,
            switch_failed: None,
        };
        log::emit_final(&e.event(e.status()));
    });
    let usage = lines(format, || {
        let args: Vec<OsString> = ["vigil", "--grace-period", "10x", "--", "app"]
            .iter()
            .map(OsString::from)
            .collect();
        let Err(cli::UsageError(message)) = cli::parse(&args, Vec::new()) else {
            panic!();
        };
        let usage = Event::UsageError {
            message: &message,
            status: 2,
        };
        log::early(format, None, usage);
    });
    vec![
        ("exec failure", record_of(&exec, "exec_failed")),
        ("usage error", record_of(&usage, "usage_error")),
    ]
}

/// Other events the doc shows, each from a scenario that writes it.
fn event_records(format: Format) -> Vec<(&'static str, String)> {
    let mut all = Vec::new();
    let grace = lines(format, || {
        let mut s = example(&["--grace-period", "10s"], &["java", "-jar", "app.jar"]);
        s.signal(from_outside(Signal::TERM));
        s.sys.running = vec![
            running(PID, pid(1), "java", "java -jar app.jar"),
            running(pid(31), PID, "sh", "sh -c ./backup.sh"),
        ];
        s.sys.left = vec![
            proc(PID, "java -jar app.jar"),
            proc(pid(31), "sh -c ./backup.sh"),
        ];
        s.passes(Deadline::Grace);
        s.ended(PID, killed(Signal::KILL));
        s.run_to_exit();
    });
    all.push(("signal_received", record_of(&grace, "signal_received")));
    all.push(("still_running", record_of(&grace, "still_running")));
    all.push(("grace_deadline", record_of(&grace, "grace_deadline")));
    let shell = lines(format, || {
        let mut s = example(&[], &["bash", "/app/run.sh"]);
        s.signal(from_outside(Signal::TERM));
        s.sys.running = vec![
            running(PID, pid(1), "bash", "bash /app/run.sh"),
            running(pid(12), PID, "node", "node server.js"),
        ];
        s.passes(Deadline::StillRunning);
    });
    all.push(("still_running", record_of(&shell, "still_running")));
    let hung = lines(format, || {
        let mut s = example(
            &["--pre-stop", "/hooks/drain", "--grace-period", "30s"],
            &["postgres"],
        );
        s.signal(from_outside(Signal::TERM));
        s.passes(Deadline::PreStopTimeout);
    });
    all.push(("pre_stop_timed_out", record_of(&hung, "pre_stop_timed_out")));
    let named = lines(format, || {
        let mut s = example(&[], &["sleep", "1000"]);
        s.sys.names = vec![(pid(42), "kill -HUP 1".into())];
        s.signal(Received {
            signal: Signal::HUP,
            sender: Sender::Process {
                pid: Pid::from_raw(42),
                uid: 0,
            },
        });
    });
    all.push(("signal_received", record_of(&named, "signal_received")));
    let hook = lines(format, || {
        let mut s = example(&["--pre-stop", "./drain"], &["./server"]);
        s.signal(from_outside(Signal::TERM));
        let hook = s.pre_stop.as_ref().unwrap().pid;
        s.wait(ms(1_250));
        s.ended(hook, exited(7));
    });
    all.push(("hook_ended", record_of(&hook, "hook_ended")));
    let drain = lines(format, || {
        let mut s = example(&[], &["./server"]);
        s.sys.children = true;
        s.sys.left = vec![proc(pid(41), "postgres")];
        s.ended(PID, exited(0));
        s.passes(Deadline::Drain);
    });
    all.push(("drain_killed", record_of(&drain, "drain_killed")));
    // The provisional termination message, as vigil writes it at start in
    // a pod whose cgroup has memory.oom.group, and as it stands after the
    // kernel counted memory events.
    capture::start(format, 2, t());
    let mut s = example_in(&[], &["python3", "train.py"], Some(268_435_456));
    s.write_provisional();
    s.sys.memory = crate::log::facts::MemoryEvents {
        max: 3,
        oom: 1,
        oom_kill: 1,
        oom_group_kill: 1,
    };
    s.sys.memory_wakes = 1;
    s.turn();
    all.push((
        "memory_events",
        record_of(&capture::take(), "memory_events"),
    ));
    for line in capture::take_provisional() {
        all.push(("provisional", line));
    }
    capture::start(format, 2, t());
    let s = example(&[], &["./server"]);
    s.write_provisional();
    for line in capture::take_provisional() {
        all.push(("provisional", line));
    }
    let reaped = lines(format, || {
        let mut s = example(&["-w"], &["./server"]);
        s.ended(Pid::from_raw(55), killed(Signal::KILL));
    });
    all.push(("reaped", record_of(&reaped, "reaped")));
    // Readiness: two probes refused (at -vv), the third answers.
    capture::start(format, 3, t());
    let mut s = example(
        &["--ready-when", "http://127.0.0.1:8080/healthz"],
        &["./server"],
    );
    s.sys.notify_socket = true;
    s.sys.probe_starts = [refused(), refused(), Some(Ok(ok()))].into();
    for _ in 0..3 {
        s.next_deadline_passes();
    }
    let ready = capture::take();
    all.push(("not_ready", record_of(&ready, "not_ready")));
    all.push(("ready", record_of(&ready, "ready")));
    all
}

/// A probe refused by the application's port.
fn refused() -> Option<crate::probe::Outcome> {
    Some(Err(crate::probe::Unhealthy::Refused(address())))
}

fn ok() -> crate::probe::Healthy {
    crate::probe::Healthy {
        address: address(),
        status: Some((200, "OK".into())),
        age: None,
    }
}

fn address() -> crate::probe::Address {
    crate::probe::Address::Inet(std::net::SocketAddr::from(([127, 0, 0, 1], 8080)))
}

/// The examples whose logfmt form the doc shows too.
const LOGFMT_EXAMPLES: [&str; 5] = [
    "ready",
    "grace deadline",
    "OOM kill of a grandchild",
    "timeout",
    "grace_deadline",
];

fn logging_md() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/logging.md");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_examples_in_the_doc_are_what_vigil_writes() {
    let doc = logging_md();
    let mut wanted = Vec::new();
    for format in [Format::Json, Format::Logfmt] {
        let all = exit_records(format)
            .into_iter()
            .chain(start_records(format))
            .chain(event_records(format));
        for (name, line) in all {
            if format == Format::Json || LOGFMT_EXAMPLES.contains(&name) {
                wanted.push((name, line));
            }
        }
    }
    // `VIGIL_PRINT_EXAMPLES=1 cargo test --bin vigil examples -- --nocapture`
    // prints them all, for the doc.
    if std::env::var_os("VIGIL_PRINT_EXAMPLES").is_some() {
        for (name, line) in &wanted {
            println!("{name}:\n{line}");
        }
    }
    let missing: Vec<String> = wanted
        .iter()
        .filter(|(_, line)| !doc.contains(line.trim_end()))
        .map(|(name, line)| format!("{name}:\n{line}"))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/logging.md lacks these lines, as vigil writes them:\n{}",
        missing.join("")
    );
}

/// The text line says what the record says: the same words are its `msg`.
#[test]
fn the_text_line_is_the_records_msg() {
    for (i, (name, play)) in endings().into_iter().enumerate() {
        let text = record_of_text(&lines(Format::Text, &play));
        let json = &exit_records(Format::Json)[i].1;
        let record: serde_json::Value = serde_json::from_str(json).unwrap();
        let msg = record["msg"].as_str().unwrap();
        assert!(text.ends_with(&format!("{msg}\n")), "{name}:\n{text}{json}");
    }
}

/// The exit report's text line among `lines`.
fn record_of_text(lines: &[String]) -> String {
    lines
        .iter()
        .find(|l| l.contains("exit report: "))
        .unwrap_or_else(|| panic!("no exit report in {lines:#?}"))
        .clone()
}
