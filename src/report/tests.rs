use super::text::list_procs;
use super::*;
use crate::facts::hook::Record;
use crate::facts::{Cancel, HookKind, Outcome, Sender};

fn base() -> Exit {
    Exit {
        command: Command {
            argv: vec!["sleep".into(), "1000".into()],
            text: "sleep 1000".into(),
            exact: true,
        },
        pid: 2,
        had_terminal: false,
        ending: Ending::Exited(0),
        ended_at: Instant::now(),
        status: 0,
        code_expected: false,
        stop: None,
        forwards: Forwards::default(),
        grace: None,
        drain: None,
        hooks: Vec::new(),
        orphans_reaped: 0,
        oom_kills: 0,
        oom_group: false,
    }
}

fn killed(signal: i32) -> Ending {
    Ending::Killed {
        signal,
        core_dumped: false,
    }
}

fn outside(signal: i32) -> Received {
    Received {
        signal,
        sender: Sender::Process { pid: 0, uid: 0 },
    }
}

fn stopped_by(r: &mut Exit, signal: i32, at: Instant) {
    r.stop = Some(Stop {
        cause: StopCause::Signal {
            signal,
            sender: Named::bare(outside(signal).sender),
        },
        at,
        sent: Some(signal),
        not_sent: None,
        later: None,
    });
}

#[test]
fn a_clean_exit_is_for_v_only_and_a_failure_is_shown() {
    let mut r = base();
    r.ending = Ending::Exited(0);
    assert_eq!(r.audience(), Audience::Verbose);
    assert_eq!(
        r.to_string(),
        "child exited with code 0; exit status 0; command: sleep 1000 (pid 2); orphans reaped: 0"
    );
    r.ending = Ending::Exited(3);
    r.status = 3;
    assert_eq!(r.audience(), Audience::Warning);
    r.code_expected = true;
    r.status = 0;
    assert_eq!(r.audience(), Audience::Verbose);
}

#[test]
fn the_answer_to_a_stop_is_shown_but_no_warning() {
    let mut r = base();
    stopped_by(&mut r, 15, Instant::now());
    r.ending = killed(15);
    r.status = 143;
    assert_eq!(r.audience(), Audience::Default);
    r.ending = Ending::Exited(0);
    r.status = 0;
    assert_eq!(r.audience(), Audience::Default);
    r.ending = Ending::Exited(143);
    r.status = 143;
    assert_eq!(r.audience(), Audience::Default);
    r.ending = Ending::Killed {
        signal: 11,
        core_dumped: true,
    };
    r.status = 139;
    assert_eq!(r.audience(), Audience::Warning);
}

#[test]
fn stop_and_grace() {
    let mut r = base();
    let at = Instant::now();
    r.ending = killed(9);
    r.status = 137;
    stopped_by(&mut r, 15, at);
    r.ended_at = at + Duration::from_millis(1000);
    r.grace = Some(Grace {
        period: Duration::from_secs(1),
        by_default: false,
        kill: Some(GraceKill {
            at: r.ended_at,
            killed: vec![Proc {
                pid: 2,
                name: "sleep".into(),
            }],
        }),
    });
    assert_eq!(r.audience(), Audience::Warning);
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
    let mut r = base();
    r.ending = killed(libc::SIGPIPE);
    r.status = 141;
    assert_eq!(r.audience(), Audience::Verbose);
    // SIGINT: Ctrl-C only when the child held the terminal and vigil
    // did not forward a SIGINT.
    r.ending = killed(libc::SIGINT);
    r.status = 130;
    assert_eq!(r.audience(), Audience::Warning);
    r.had_terminal = true;
    assert_eq!(r.audience(), Audience::Verbose);
    assert!(r.to_string().contains(", from the terminal (Ctrl-C)"));
    r.forwards.record(
        Forward {
            received: outside(libc::SIGINT),
            sent: libc::SIGINT,
        },
        |_| None,
    );
    assert_eq!(r.audience(), Audience::Warning);
    // Anything abnormal besides is still a warning.
    r.ending = killed(libc::SIGPIPE);
    r.oom_kills = 1;
    assert_eq!(r.audience(), Audience::Warning);
}

#[test]
fn a_shell_that_says_141_or_130_is_as_quiet_as_the_death_it_reports() {
    let mut r = base();
    r.ending = Ending::Exited(141);
    r.status = 141;
    assert_eq!(r.audience(), Audience::Verbose);
    r.ending = Ending::Exited(130);
    r.status = 130;
    assert_eq!(r.audience(), Audience::Warning, "no terminal: not Ctrl-C");
    r.had_terminal = true;
    assert_eq!(r.audience(), Audience::Verbose);
    r.ending = Ending::Exited(142);
    r.status = 142;
    assert_eq!(r.audience(), Audience::Warning);
}

#[test]
fn a_forwarded_signal_that_killed_the_child_names_its_sender() {
    let mut r = base();
    r.forwards.record(
        Forward {
            received: outside(libc::SIGUSR1),
            sent: libc::SIGUSR1,
        },
        |_| None,
    );
    r.ending = killed(libc::SIGUSR1);
    r.status = 138;
    let text = r.to_string();
    assert!(
        text.starts_with("child was killed by SIGUSR1 (status 138), forwarded by vigil: SIGUSR1 from pid 0 (outside this PID namespace); exit status 138"),
        "{text}"
    );
}

#[test]
fn the_later_stop_signal_is_the_one_the_child_ended_on() {
    let mut r = base();
    let at = Instant::now();
    stopped_by(&mut r, libc::SIGINT, at);
    let later = Forward {
        received: outside(libc::SIGTERM),
        sent: libc::SIGTERM,
    };
    r.stop.as_mut().unwrap().later = Some(LaterStop {
        forward: later,
        sender: Named::bare(later.received.sender),
        at: at + Duration::from_millis(500),
    });
    r.ending = Ending::Exited(143);
    r.status = 143;
    r.ended_at = at + Duration::from_millis(700);
    assert_eq!(r.audience(), Audience::Default);
    let text = r.to_string();
    assert!(
        text.contains("; stop: SIGINT from pid 0 (outside this PID namespace) (sent SIGINT); then SIGTERM from pid 0 (outside this PID namespace) (sent SIGTERM at once), child ended 0.200s after the SIGTERM"),
        "{text}"
    );
    // An ending that points to the first signal is the first one's.
    r.ending = Ending::Exited(130);
    assert!(r.to_string().contains(", child ended 0.700s later"));
}

#[test]
fn a_cancelled_hook_is_no_failure() {
    let mut r = base();
    r.ending = killed(9);
    r.status = 137;
    let at = Instant::now();
    stopped_by(&mut r, 15, at);
    r.grace = Some(Grace {
        period: Duration::from_secs(1),
        by_default: false,
        kill: Some(GraceKill {
            at,
            killed: Vec::new(),
        }),
    });
    r.hooks.push(Record {
        kind: HookKind::PreStop,
        outcome: Outcome::Cancelled(Cancel::GraceDeadline),
        took: Duration::from_secs(1),
    });
    assert!(
        r.to_string()
            .contains("; pre-stop hook cancelled at the grace deadline after 1.000s")
    );
    assert!(!r.hooks.iter().any(Record::failed));
}

#[test]
fn oom_kill_of_another_process() {
    let mut r = base();
    r.ending = Ending::Exited(0);
    r.oom_kills = 1;
    assert_eq!(r.audience(), Audience::Warning);
    assert!(r.to_string().contains(
        "; the kernel OOM killer killed 1 process in this container (not the child: a process it started, or a hook)"
    ));
    r.ending = killed(9);
    r.oom_kills = 2;
    let text = r.to_string();
    assert!(text.starts_with("child was killed by SIGKILL (status 137) by the kernel OOM killer"));
    assert!(text.contains(
        "; the kernel OOM killer killed 2 processes in this container, one process at a time (memory.oom.group is off); "
    ));
    // With memory.oom.group, a kill vigil lived through cannot be one of
    // the whole group: no word of it.
    r.oom_group = true;
    assert!(
        r.to_string()
            .contains("; the kernel OOM killer killed 2 processes in this container; ")
    );
}

#[test]
fn a_long_command_is_shortened_and_the_cause_comes_first() {
    let mut r = base();
    let words: Vec<String> = (1..=50_000).map(|n| n.to_string()).collect();
    r.command.text = format!("sh -c 'exit 3' {}", words.join(" "));
    r.ending = Ending::Exited(3);
    r.status = 3;
    let text = r.to_string();
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
            pid,
            name: "worker".into(),
        })
        .collect();
    let text = list_procs(&many);
    assert!(text.starts_with("1 (worker), 2 (worker)"), "{text}");
    assert!(text.ends_with(" and 980 more"), "{text}");
}

/// The log's line says what `Display` says, and escapes what came from
/// outside vigil (the command, the sender's name) while vigil's own words
/// pass as they are.
#[test]
fn the_log_line_says_what_display_says_with_outside_text_escaped() {
    use crate::event::{Event, Level};
    use crate::logging::{self, capture};
    use crate::record::{Format, Timestamp};

    let mut r = base();
    r.command.text = "sh -c 'echo a\nb'".into();
    r.ending = killed(libc::SIGUSR1);
    r.status = 128 + libc::SIGUSR1;
    let received = Received {
        signal: libc::SIGUSR1,
        sender: Sender::Process { pid: 7, uid: 1000 },
    };
    r.forwards.record(
        Forward {
            received,
            sent: libc::SIGUSR1,
        },
        |_| Some("bad\x1bname".into()),
    );
    r.orphans_reaped = 12_345_678_901;
    let exit = r;

    capture::start(Format::Text, 1, Timestamp::from_unix(0, 0));
    let clocks = Clocks {
        wall: Timestamp::from_unix(0, 0),
        now: exit.ended_at,
    };
    logging::emit(Event::Exit {
        exit: &exit,
        clocks,
        level: Level::Warning,
    });
    let lines = capture::take();

    let shown = exit.to_string();
    assert_eq!(
        shown,
        "child was killed by SIGUSR1 (status 138), forwarded by vigil: SIGUSR1 \
         from pid 7 (bad\x1bname, uid 1000); exit status 138; \
         command: sh -c 'echo a\nb' (pid 2); orphans reaped: 12345678901"
    );
    let escaped = crate::text::one_line(&shown);
    assert_eq!(lines, [format!("vigil: warning: exit report: {escaped}\n")]);
    assert!(lines[0].contains("echo a\\nb") && lines[0].contains("bad\\u{1b}name"));
}
