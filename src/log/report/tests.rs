use std::time::{Duration, Instant};

use nix::unistd::Pid;

use super::exit::list_procs;
use super::*;
use crate::log::event::{AfterHook, Event, Level};
use crate::log::facts::hook::Record;
use crate::log::facts::stop::ExitCodes;
use crate::log::facts::{Cancel, HookKind, Outcome, Target};

/// A ledger that saw `sleep 1000` start as pid 2 (with the terminal, if
/// `terminal`).
fn started(terminal: bool) -> Ledger {
    let mut l = Ledger::default();
    l.observe(&Event::Started {
        command: &Command::new(vec!["sleep".into(), "1000".into()]),
        pid: Pid::from_raw(2),
        limit: None,
        oom_group: false,
        terminal,
        at: Timestamp::from_unix(0, 0),
    });
    l
}

fn base() -> Ledger {
    started(false)
}

fn end(l: &mut Ledger, ending: Ending, at: Instant) {
    l.observe(&Event::ChildEnded {
        pid: Pid::from_raw(2),
        ending,
        at,
    });
}

fn killed(signal: Signal) -> Ending {
    Ending::Killed {
        signal,
        core_dumped: false,
    }
}

fn outside() -> Named {
    Named::bare(Sender::Process {
        pid: Pid::from_raw(0),
        uid: 0,
    })
}

/// A signal forwarded to the child, from `sender`; `later_stop` for a
/// stop signal during the stop.
fn forward(l: &mut Ledger, signal: Signal, sender: &Named, later_stop: Option<Instant>) {
    l.observe(&Event::SignalForwarded {
        signal,
        sent: signal,
        target: Target::Process(Pid::from_raw(2)),
        sender,
        later_stop,
    });
}

/// A stop by `signal` from outside at `at`, with the signal sent.
fn stopped_by(l: &mut Ledger, signal: Signal, at: Instant, grace: Option<Duration>) {
    l.observe(&Event::Stopping {
        cause: &StopCause::Signal {
            signal,
            sender: outside(),
        },
        signal,
        grace: grace.map(|period| Grace {
            period,
            by_default: false,
        }),
        at,
    });
    forward(l, signal, &Named::bare(Sender::Vigil), None);
}

fn grace_kill(l: &mut Ledger, killed: &[Proc], at: Instant) {
    l.observe(&Event::GraceDeadline {
        grace_period: Duration::from_secs(1),
        killed,
        listed: true,
        at,
    });
}

/// The report of `l`, whose exit status must be `status`: the child's own
/// (0 only for a child's non-zero status listed with `-e`).
fn report(l: &Ledger, status: i32, oom_kills: u64) -> Exit<'_> {
    let codes = ExitCodes::default();
    let exit = l.exit(&codes, &[], oom_kills).expect("the child ended");
    if status == 0 && exit.status() != 0 {
        let listed = [exit.status()];
        return l.exit(&codes, &listed, oom_kills).expect("the child ended");
    }
    assert_eq!(exit.status(), status);
    exit
}

#[test]
fn a_clean_exit_is_for_v_only_and_a_failure_is_shown() {
    let mut l = base();
    end(&mut l, Ending::Exited(0), Instant::now());
    let r = report(&l, 0, 0);
    assert_eq!(r.level(), Level::Info);
    assert_eq!(
        r.to_string(),
        "child exited with code 0; exit status 0; command: sleep 1000 (pid 2); orphans reaped: 0"
    );
    end(&mut l, Ending::Exited(3), Instant::now());
    assert_eq!(report(&l, 3, 0).level(), Level::Warning);
    // Listed with -e: vigil exits 0.
    assert_eq!(report(&l, 0, 0).level(), Level::Info);
}

#[test]
fn the_answer_to_a_stop_is_shown_but_no_warning() {
    let mut l = base();
    stopped_by(&mut l, Signal(15), Instant::now(), None);
    for (ending, status, audience) in [
        (killed(Signal(15)), 143, Level::Notice),
        (Ending::Exited(0), 0, Level::Notice),
        (Ending::Exited(143), 143, Level::Notice),
        (
            Ending::Killed {
                signal: Signal(11),
                core_dumped: true,
            },
            139,
            Level::Warning,
        ),
    ] {
        end(&mut l, ending, Instant::now());
        assert_eq!(report(&l, status, 0).level(), audience, "{ending:?}");
    }
}

#[test]
fn stop_and_grace() {
    let mut l = base();
    let at = Instant::now();
    let ended = at + Duration::from_millis(1000);
    stopped_by(&mut l, Signal(15), at, Some(Duration::from_secs(1)));
    grace_kill(
        &mut l,
        &[Proc {
            pid: Pid::from_raw(2),
            name: "sleep".into(),
        }],
        ended,
    );
    end(&mut l, killed(Signal(9)), ended);
    let r = report(&l, 137, 0);
    assert_eq!(r.level(), Level::Warning);
    let text = r.to_string();
    assert!(
        text.starts_with(
            "child was killed by SIGKILL (status 137) by vigil, at the grace deadline; exit status 137; command: sleep 1000 (pid 2)"
        ),
        "{text}"
    );
    for needle in [
        "; stop: SIGTERM from pid 0 (outside this PID namespace) (sent SIGTERM), child ended 1.000s later",
        "; grace period 1s over, SIGKILL to: 2 (sleep)",
    ] {
        assert!(text.contains(needle), "{needle} not in {text}");
    }
}

#[test]
fn sigpipe_and_ctrl_c_are_for_v_only() {
    let mut l = base();
    end(&mut l, killed(Signal::PIPE), Instant::now());
    assert_eq!(report(&l, 141, 0).level(), Level::Info);
    // SIGINT: Ctrl-C only when the child held the terminal and vigil
    // did not forward a SIGINT.
    end(&mut l, killed(Signal::INT), Instant::now());
    assert_eq!(report(&l, 130, 0).level(), Level::Warning);
    let mut l = started(true);
    end(&mut l, killed(Signal::INT), Instant::now());
    assert_eq!(report(&l, 130, 0).level(), Level::Info);
    assert!(
        report(&l, 130, 0)
            .to_string()
            .contains(", from the terminal (Ctrl-C)")
    );
    forward(&mut l, Signal::INT, &outside(), None);
    assert_eq!(report(&l, 130, 0).level(), Level::Warning);
    // Anything abnormal besides is still a warning.
    end(&mut l, killed(Signal::PIPE), Instant::now());
    assert_eq!(report(&l, 141, 1).level(), Level::Warning);
}

#[test]
fn a_shell_that_says_141_or_130_is_as_quiet_as_the_death_it_reports() {
    for (terminal, code, audience) in [
        (false, 141, Level::Info),
        (false, 130, Level::Warning),
        (true, 130, Level::Info),
        (true, 142, Level::Warning),
    ] {
        let mut l = started(terminal);
        end(&mut l, Ending::Exited(code), Instant::now());
        assert_eq!(report(&l, code, 0).level(), audience, "{code}");
    }
}

#[test]
fn a_forwarded_signal_that_killed_the_child_names_its_sender() {
    let mut l = base();
    forward(&mut l, Signal::USR1, &outside(), None);
    end(&mut l, killed(Signal::USR1), Instant::now());
    let text = report(&l, 138, 0).to_string();
    assert!(
        text.starts_with("child was killed by SIGUSR1 (status 138), forwarded by vigil: SIGUSR1 from pid 0 (outside this PID namespace); exit status 138"),
        "{text}"
    );
}

#[test]
fn the_later_stop_signal_is_the_one_the_child_ended_on() {
    let mut l = base();
    let at = Instant::now();
    stopped_by(&mut l, Signal::INT, at, None);
    let later = at + Duration::from_millis(500);
    forward(&mut l, Signal::TERM, &outside(), Some(later));
    end(&mut l, Ending::Exited(143), at + Duration::from_millis(700));
    let r = report(&l, 143, 0);
    assert_eq!(r.level(), Level::Notice);
    let text = r.to_string();
    assert!(
        text.contains("; stop: SIGINT from pid 0 (outside this PID namespace) (sent SIGINT); then SIGTERM from pid 0 (outside this PID namespace) (sent SIGTERM at once), child ended 0.200s after the SIGTERM"),
        "{text}"
    );
    // An ending that points to the first signal is the first one's.
    end(&mut l, Ending::Exited(130), at + Duration::from_millis(700));
    assert!(
        report(&l, 130, 0)
            .to_string()
            .contains(", child ended 0.700s later")
    );
}

#[test]
fn a_cancelled_hook_is_no_failure() {
    let mut l = base();
    let at = Instant::now();
    stopped_by(&mut l, Signal(15), at, Some(Duration::from_secs(1)));
    grace_kill(&mut l, &[], at);
    let record = Record {
        kind: HookKind::PreStop,
        outcome: Outcome::Cancelled(Cancel::GraceDeadline),
        took: Duration::from_secs(1),
    };
    assert!(!record.failed());
    l.observe(&Event::HookEnded {
        record: &record,
        then: AfterHook::Nothing,
    });
    end(&mut l, killed(Signal(9)), at);
    assert!(
        report(&l, 137, 0)
            .to_string()
            .contains("; pre-stop hook cancelled at the grace deadline after 1.000s")
    );
}

#[test]
fn oom_kill_of_another_process() {
    let mut l = base();
    end(&mut l, Ending::Exited(0), Instant::now());
    let r = report(&l, 0, 1);
    assert_eq!(r.level(), Level::Warning);
    assert!(r.to_string().contains(
        "; earlier, the kernel OOM killer killed 1 process in this container (not the child: a process it started, or a hook)"
    ));
    end(&mut l, killed(Signal(9)), Instant::now());
    let text = report(&l, 137, 2).to_string();
    assert!(text.starts_with("child was killed by SIGKILL (status 137) by the kernel OOM killer"));
    assert!(text.contains(
        "; the kernel OOM killer killed 2 processes in this container, one process at a time (memory.oom.group is off); "
    ));
    // With memory.oom.group, a kill vigil lived through cannot be one of
    // the whole group: no word of it.
    let mut l = Ledger::default();
    l.observe(&Event::Started {
        command: &Command::new(vec!["sleep".into(), "1000".into()]),
        pid: Pid::from_raw(2),
        limit: None,
        oom_group: true,
        terminal: false,
        at: Timestamp::from_unix(0, 0),
    });
    end(&mut l, killed(Signal(9)), Instant::now());
    assert!(
        report(&l, 137, 2)
            .to_string()
            .contains("; the kernel OOM killer killed 2 processes in this container; ")
    );
}

#[test]
fn a_long_command_is_shortened_and_the_cause_comes_first() {
    let words: Vec<String> = (1..=50_000).map(|n| n.to_string()).collect();
    let argv = ["sh", "-c", "exit 3"]
        .into_iter()
        .map(String::from)
        .chain(words)
        .map(Into::into)
        .collect();
    let mut l = Ledger::default();
    l.observe(&Event::Started {
        command: &Command::new(argv),
        pid: Pid::from_raw(2),
        limit: None,
        oom_group: false,
        terminal: false,
        at: Timestamp::from_unix(0, 0),
    });
    end(&mut l, Ending::Exited(3), Instant::now());
    let text = report(&l, 3, 0).to_string();
    assert!(text.len() < 400, "{} bytes: {text}", text.len());
    assert!(
        text.starts_with("child exited with code 3; exit status 3; command: sh -c 'exit 3' 1 2 3 ")
    );
    assert!(text.contains(" bytes in all ...] "), "{text}");
    assert!(
        text.ends_with(" 49999 50000 (pid 2); orphans reaped: 0"),
        "{text}"
    );
}

#[test]
fn long_lists_are_capped() {
    let many: Vec<Proc> = (1..=1000)
        .map(|pid| Proc {
            pid: Pid::from_raw(pid),
            name: "worker".into(),
        })
        .collect();
    let text = list_procs(&many);
    assert!(text.starts_with("1 (worker), 2 (worker)"), "{text}");
    assert!(text.ends_with(" and 980 more"), "{text}");
}

/// The log's line says what `Display` says, and escapes what came from
/// outside vigil (the sender's name; the command is escaped already)
/// while vigil's own words pass as they are.
#[test]
fn the_log_line_says_what_display_says_with_outside_text_escaped() {
    use crate::log::format::Format;
    use crate::log::{self, capture};

    let mut l = Ledger::default();
    l.observe(&Event::Started {
        command: &Command::new(vec!["sh".into(), "-c".into(), "echo a\nb".into()]),
        pid: Pid::from_raw(2),
        limit: None,
        oom_group: false,
        terminal: false,
        at: Timestamp::from_unix(0, 0),
    });
    let sender = Named {
        sender: Sender::Process {
            pid: Pid::from_raw(7),
            uid: 1000,
        },
        name: Some("bad\x1bname".into()),
    };
    forward(&mut l, Signal::USR1, &sender, None);
    for _ in 0..3 {
        l.observe(&Event::Reaped {
            pid: Pid::from_raw(9),
            ending: Ending::Exited(0),
            warn: false,
        });
    }
    let ended = Instant::now();
    end(&mut l, killed(Signal::USR1), ended);
    let exit = report(&l, 128 + libc::SIGUSR1, 0);

    capture::start(Format::Text, 1, Timestamp::from_unix(0, 0));
    let clocks = Clocks {
        wall: Timestamp::from_unix(0, 0),
        now: ended,
    };
    log::emit(&Event::Exit {
        report: &exit.at(clocks),
        level: Level::Warning,
    });
    let lines = capture::take();

    let shown = exit.to_string();
    assert_eq!(
        shown,
        "child was killed by SIGUSR1 (status 138), forwarded by vigil: SIGUSR1 \
         from pid 7 (bad\x1bname, uid 1000); exit status 138; \
         command: sh -c 'echo a\\nb' (pid 2); orphans reaped: 3"
    );
    let mut escaped = String::new();
    crate::text::one_line_pieces(&shown, |piece| escaped.push_str(piece));
    assert_eq!(lines, [format!("vigil: warning: exit report: {escaped}\n")]);
    assert!(lines[0].contains("echo a\\nb") && lines[0].contains("bad\\u{1b}name"));
}
