//! The state machine's transitions, driven through a fake `System`: every
//! state × event pair of the lifecycle, through the loop's turn, without
//! forking. The fake's
//! clock moves only when a wait times out; the signals, reaps and spawns it
//! returns are queued by each test; what vigil did is recorded.
//!
//! (The same behaviour, end to end with real processes, is in tests/.)
//!
//! `examples`: the records docs/logging.md shows, as vigil writes them.

mod examples;
mod probing;

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::time::{Duration, Instant};

use super::system::Woken;
use super::*;
use crate::cli::{self, Action};
use crate::log::facts::MemoryEvents;
use crate::log::facts::{Cancel, Ending, Outcome, Proc};
use crate::procs;
use crate::reap::{Change, Next};
use crate::spawn::{Spawn, SpawnError};

const CHILD: Pid = Pid::from_raw(100);

/// A hook's argv and the variables it was given.
type Started = (Vec<OsString>, Vec<(&'static str, String)>);

/// A world that does what the test queued and records what vigil asked of it.
#[derive(Default)]
struct Fake {
    now: Option<Instant>,
    /// When set, a wait that times out does not move the clock (a broken
    /// clock or poll).
    frozen: bool,
    signals: VecDeque<io::Result<Option<Received>>>,
    reaps: VecDeque<Next>,
    /// `any_children`.
    children: bool,
    /// What `signal_all` says /proc listed.
    left: Vec<Proc>,
    /// `can_reach_all`.
    unreachable: bool,
    /// `job_control_above`.
    job_control: bool,
    next_pid: i32,
    spawn_fails: bool,
    /// What `name` finds in /proc: (pid, name).
    names: Vec<(Pid, String)>,
    /// Signals `send` fails to deliver (EPERM, say).
    refused: Vec<Signal>,
    /// What `running` finds in /proc.
    running: Vec<procs::Running>,
    /// Processes /proc lists that are no children of vigil's (`others_left`).
    strangers: Vec<i32>,
    /// `has_terminal`.
    terminal: bool,
    /// `memory_events`.
    memory: MemoryEvents,
    /// Wake-ups for a change of `memory.events` still to come.
    memory_wakes: u32,
    /// What each probe that starts does: ends at once with this outcome,
    /// or (`None`) waits for its socket.
    probe_starts: VecDeque<Option<crate::probe::Outcome>>,
    /// What the socket of the probe in flight brings, one wake-up each.
    probe_steps: VecDeque<Option<crate::probe::Outcome>>,
    /// A probe is in flight.
    probing: bool,
    /// `$NOTIFY_SOCKET` is set; a send fails with this error.
    notify_socket: bool,
    notify_error: Option<String>,
    // What vigil did:
    sent: Vec<(Target, Signal)>,
    signalled_all: Vec<Vec<Signal>>,
    spawned: Vec<Started>,
    waits: Vec<Option<Duration>>,
    sleeps: Vec<Duration>,
    stopped_self: u32,
    terminal_given: Vec<Pid>,
    /// The probes started (their URLs), and cancelled.
    probes: Vec<String>,
    probes_cancelled: u32,
    /// What was sent to the service manager.
    notified: Vec<String>,
}

impl Fake {
    fn clock(&self) -> Instant {
        self.now.unwrap_or_else(Instant::now)
    }
}

impl System for Fake {
    fn now(&self) -> Instant {
        self.clock()
    }

    fn next_event(&mut self, timeout: Option<Duration>) -> io::Result<Option<Woken>> {
        self.waits.push(timeout);
        if let Some(next) = self.signals.pop_front() {
            return next.map(|r| r.map(Woken::Signal));
        }
        if self.memory_wakes > 0 {
            self.memory_wakes -= 1;
            return Ok(Some(Woken::Memory));
        }
        if self.probing && !self.probe_steps.is_empty() {
            return Ok(Some(Woken::Probe));
        }
        let timeout = timeout.expect("the loop would block forever: nothing is queued");
        if !self.frozen {
            self.now = Some(self.clock() + timeout);
        }
        Ok(None)
    }

    fn sleep(&mut self, duration: Duration) {
        self.sleeps.push(duration);
        if !self.frozen {
            self.now = Some(self.clock() + duration);
        }
    }

    fn send(&mut self, target: Target, signal: Signal) -> bool {
        if self.refused.contains(&signal) {
            return false;
        }
        self.sent.push((target, signal));
        true
    }

    fn signal_all(&mut self, signals: &[Signal], _known: &[Target]) -> Vec<Proc> {
        self.signalled_all.push(signals.to_vec());
        self.left.clone()
    }

    fn can_reach_all(&self) -> bool {
        !self.unreachable
    }

    fn procs_listed(&self) -> bool {
        !self.unreachable
    }

    fn reap(&mut self) -> Next {
        self.reaps.pop_front().unwrap_or(Next::Nothing)
    }

    fn others_left(&self) -> bool {
        !self.strangers.is_empty()
    }

    fn any_children(&mut self) -> bool {
        self.children
    }

    fn spawn(&mut self, spec: Spawn<'_>) -> Result<Pid, SpawnError> {
        if self.spawn_fails {
            return Err(SpawnError {
                program: spec.argv[0].to_string_lossy().into_owned(),
                error: io::Error::from_raw_os_error(libc::ENOENT),
                shell_error: None,
                switch_failed: None,
            });
        }
        self.spawned.push((spec.argv.to_vec(), spec.env));
        self.next_pid += 1;
        Ok(Pid::from_raw(200 + self.next_pid))
    }

    fn name(&self, pid: Pid) -> Option<String> {
        self.names
            .iter()
            .find(|(p, _)| *p == pid)
            .map(|(_, n)| n.clone())
    }

    fn running(&self) -> Vec<procs::Running> {
        self.running.clone()
    }

    fn has_terminal(&self) -> bool {
        self.terminal
    }

    fn parent(&self) -> Pid {
        Pid::from_raw(1)
    }

    fn job_control_above(&self) -> bool {
        self.job_control
    }

    fn stop_self(&mut self) {
        self.stopped_self += 1;
    }

    fn give_terminal(&mut self, pgid: Pid) {
        self.terminal_given.push(pgid);
    }

    fn memory_events(&self) -> MemoryEvents {
        self.memory
    }

    fn probe_start(&mut self, url: &crate::probe::Url) -> Option<crate::probe::Outcome> {
        self.probes.push(url.text.clone());
        let outcome = self.probe_starts.pop_front().flatten();
        self.probing = outcome.is_none();
        outcome
    }

    fn probe_step(&mut self) -> Option<crate::probe::Outcome> {
        let outcome = self.probe_steps.pop_front().flatten();
        self.probing = outcome.is_none();
        outcome
    }

    fn probe_cancel(&mut self, after: Duration) -> Option<crate::probe::Unhealthy> {
        if !std::mem::take(&mut self.probing) {
            return None;
        }
        self.probes_cancelled += 1;
        Some(crate::probe::Unhealthy::TimedOut {
            after,
            waited: crate::probe::Waited::Answer(crate::probe::Address::Unknown),
        })
    }

    fn notify(&mut self, message: &str) -> Option<super::system::Notified> {
        if !self.notify_socket {
            return None;
        }
        self.notified.push(message.to_string());
        Some(super::system::Notified {
            socket: "/run/notify/notify.sock".into(),
            error: self.notify_error.clone(),
        })
    }
}

/// A supervisor whose child (pid 100) has just started, with these options.
fn supervisor(args: &[&str]) -> Supervisor<Fake> {
    let argv: Vec<OsString> = std::iter::once("vigil")
        .chain(["--termination-log="])
        .chain(args.iter().copied())
        .chain(["child"])
        .map(OsString::from)
        .collect();
    let Ok(Action::Run(config)) = cli::parse(&argv, Vec::new()) else {
        panic!("bad test options {args:?}");
    };
    let fake = Fake {
        now: Some(Instant::now()),
        ..Fake::default()
    };
    let mut s = Supervisor::new(*config, fake, started(CHILD));
    s.start_post_start();
    s
}

/// The child `child` as a start without a terminal leaves it.
fn started(child: Pid) -> Start {
    Start {
        child,
        command: crate::log::facts::Command::new(vec!["child".into()]),
        started: crate::log::format::Timestamp::from_unix(1_796_148_380, 123),
        limit: None,
        oom_group: false,
        parent: Pid::from_raw(1),
        gave_terminal: false,
    }
}

fn from_outside(signal: Signal) -> Received {
    Received {
        signal,
        sender: Sender::Process {
            pid: Pid::from_raw(0),
            uid: 0,
        },
    }
}

fn pid(n: i32) -> Pid {
    Pid::from_raw(n)
}

fn exited(code: i32) -> Ending {
    Ending::Exited(code)
}

fn killed(signal: Signal) -> Ending {
    Ending::Killed {
        signal,
        core_dumped: false,
    }
}

impl Supervisor<Fake> {
    /// `r` is the next thing the loop reads, and one turn of the loop runs:
    /// the way every signal reaches the state machine.
    fn signal(&mut self, r: Received) {
        self.sys.signals.push_back(Ok(Some(r)));
        self.turn();
    }

    /// SIGCHLD comes, and the kernel has `events` to reap.
    fn chld(&mut self, events: impl IntoIterator<Item = Next>) {
        self.sys.reaps.extend(events);
        self.signal(Received {
            signal: Signal::CHLD,
            sender: Sender::Kernel,
        });
    }

    /// A process ended and SIGCHLD said so.
    fn ended(&mut self, pid: Pid, ending: Ending) {
        self.chld([Next::Changed(Change::Ended(pid, ending))]);
    }

    /// How the stop began, as the exit status reads it.
    fn stop_cause(&self) -> Option<&'static str> {
        self.ledger.stop().map(|stop| match stop.cause {
            StopCause::Signal { .. } => "signal",
            StopCause::PostStartFailed => "post_start_failed",
            StopCause::Timeout(_) => "timeout",
            StopCause::NotReady { .. } => "not_ready",
            StopCause::Unhealthy { .. } => "unhealthy",
            StopCause::Fault(_) => "fault",
        })
    }

    /// vigil's exit status, once it is to exit.
    fn exit_status(&self) -> Option<i32> {
        (self.state == State::Exit).then(|| self.exit().map_or(0, |exit| exit.status()))
    }

    fn grace_passed(&self) -> bool {
        self.ledger.grace_passed()
    }

    /// Moves the clock to just past the next deadline and runs one turn.
    fn next_deadline_passes(&mut self) {
        assert!(self.deadlines.next().is_some(), "no deadline pending");
        self.turn();
    }

    /// The clock moves on until `deadline` has passed, and every deadline
    /// before it with it.
    fn passes(&mut self, deadline: Deadline) {
        while self.deadlines.get(deadline).is_some() {
            self.next_deadline_passes();
        }
    }

    /// The signals sent to the child itself, in order.
    fn sent_to_child(&self) -> Vec<Signal> {
        self.sys
            .sent
            .iter()
            .filter(|(t, _)| matches!(t, Target::Process(CHILD) | Target::Group(CHILD)))
            .map(|(_, s)| *s)
            .collect()
    }

    fn stopping(&self) -> Option<StopPhase> {
        match self.state {
            State::Stopping { phase, .. } => Some(phase),
            _ => None,
        }
    }
}

// Running.

#[test]
fn running_forwards_a_signal_at_once() {
    let mut s = supervisor(&[]);
    s.signal(from_outside(Signal::USR1));
    assert_eq!(s.sys.sent, [(Target::Process(CHILD), Signal::USR1)]);
    assert_eq!(s.state, State::Running);
    let mut g = supervisor(&["-g", "--rewrite", "USR1:HUP", "--rewrite", "USR2:0"]);
    g.signal(from_outside(Signal::USR1));
    g.signal(from_outside(Signal(libc::SIGUSR2)));
    g.signal(from_outside(Signal::TTIN));
    assert_eq!(g.sys.sent, [(Target::Group(CHILD), Signal::HUP)]);
}

#[test]
fn running_stop_signal_without_a_sequence_is_forwarded_at_once() {
    let mut s = supervisor(&[]);
    s.signal(from_outside(Signal::TERM));
    assert_eq!(s.sent_to_child(), [Signal::TERM]);
    assert_eq!(s.stopping(), Some(StopPhase::AwaitingExit));
    assert_eq!(s.stop_cause(), Some("signal"));
    assert!(matches!(
        s.ledger.stop().map(|stop| &stop.cause),
        Some(StopCause::Signal {
            signal: Signal::TERM,
            ..
        })
    ));
    assert_eq!(s.deadlines.get(Deadline::Grace), None, "no grace period");
}

/// Every step of the stop sequence is in `STOP_SEQUENCE`, once: a step
/// left out would never run. A new step fails to compile here until the
/// `match` knows it, beside the list of every step.
#[test]
fn every_stop_step_is_in_the_sequence_once() {
    let all = [
        StopStep::PreStopHook,
        StopStep::PreStopSleep,
        StopStep::ForwardSignal,
    ];
    for step in all {
        match step {
            StopStep::PreStopHook | StopStep::PreStopSleep | StopStep::ForwardSignal => {}
        }
        let times = stop::STOP_SEQUENCE.iter().filter(|s| **s == step).count();
        assert_eq!(times, 1, "{step:?} is in STOP_SEQUENCE {times} times");
    }
    assert_eq!(stop::STOP_SEQUENCE.len(), all.len());
}

#[test]
fn the_stop_sequence_runs_hook_then_sleep_then_signal() {
    let mut s = supervisor(&[
        "--pre-stop",
        "drain-it now",
        "--pre-stop-sleep",
        "1s",
        "--grace-period",
        "30s",
    ]);
    s.signal(from_outside(Signal::INT));
    assert_eq!(
        s.stopping(),
        Some(StopPhase::Waiting(StopStep::PreStopHook))
    );
    let (argv, env) = &s.sys.spawned[0];
    assert_eq!(argv, &["drain-it", "now"]);
    assert!(env.contains(&("VIGIL_SIGNAL", "SIGINT".to_string())));
    assert!(
        s.sent_to_child().is_empty(),
        "the signal waits for the hook"
    );
    let hook = s.pre_stop.as_ref().unwrap().pid;
    s.ended(hook, exited(0));
    assert_eq!(
        s.stopping(),
        Some(StopPhase::Waiting(StopStep::PreStopSleep))
    );
    assert!(
        s.sent_to_child().is_empty(),
        "the signal waits for the sleep"
    );
    s.next_deadline_passes();
    assert_eq!(s.sent_to_child(), [Signal::INT]);
    assert_eq!(s.stopping(), Some(StopPhase::AwaitingExit));
    assert!(s.deadlines.get(Deadline::Grace).is_some());
}

/// A pre-stop hook never withholds the stop signal: at half the grace
/// period (the default `--pre-stop-timeout`) its group gets SIGKILL and the
/// child its stop signal, long before the grace deadline.
#[test]
fn a_hung_pre_stop_hook_is_killed_and_the_stop_signal_still_sent() {
    let mut s = supervisor(&["--pre-stop", "sleep 30", "--grace-period", "30s"]);
    let start = s.sys.clock();
    s.signal(from_outside(Signal::TERM));
    let hook = s.pre_stop.as_ref().unwrap().pid;
    assert_eq!(
        s.deadlines.get(Deadline::PreStopTimeout),
        Some(start + Duration::from_secs(15))
    );
    s.next_deadline_passes();
    assert!(s.sys.sent.contains(&(Target::Group(hook), Signal::KILL)));
    assert_eq!(s.sent_to_child(), [Signal::TERM]);
    assert_eq!(s.stopping(), Some(StopPhase::AwaitingExit));
    assert!(
        s.deadlines.get(Deadline::Grace).is_some(),
        "the grace runs on"
    );
    s.ended(hook, killed(Signal::KILL));
    assert!(matches!(s.ledger.hooks()[0].outcome, Outcome::TimedOut));
    assert!(s.ledger.hooks()[0].failed());
    // Set by hand, it is that long.
    let mut s = supervisor(&["--pre-stop", "sleep 30", "--pre-stop-timeout", "2s"]);
    let start = s.sys.clock();
    s.signal(from_outside(Signal::TERM));
    assert_eq!(
        s.deadlines.next(),
        Some(start + Duration::from_secs(2)),
        "before the still-running line at 5s"
    );
    // A hook that ends first leaves nothing to kill.
    let mut s = supervisor(&["--pre-stop", "quick-hook"]);
    s.signal(from_outside(Signal::TERM));
    let hook = s.pre_stop.as_ref().unwrap().pid;
    s.ended(hook, exited(0));
    assert_eq!(s.deadlines.get(Deadline::PreStopTimeout), None);
    assert_eq!(s.sent_to_child(), [Signal::TERM]);
}

fn running(pid: Pid, ppid: Pid, pgrp: Pid, comm: &str, title: &str) -> procs::Running {
    procs::Running {
        stat: procs::Stat {
            pid,
            ppid,
            pgrp,
            state: 'S',
            comm: comm.into(),
        },
        title: title.into(),
    }
}

/// Half the grace period (else 5 s) after the stop began, a child still
/// running is named, with what runs below it; a shell waiting for a
/// foreground job that never got the signal is said to be one, with the
/// fixes. Once, and not after the child has ended.
#[test]
fn a_child_still_running_is_named_once_with_the_shell_and_its_job() {
    use crate::log::capture;
    use crate::log::format::{Format, Timestamp};
    capture::start(Format::Text, 1, Timestamp::from_unix(0, 0));
    let mut s = supervisor(&[]);
    s.sys.running = vec![
        running(CHILD, pid(1), CHILD, "bash", "bash /app/run.sh"),
        running(pid(40), CHILD, CHILD, "sleep", "sleep 1000"),
    ];
    let start = s.sys.clock();
    s.signal(from_outside(Signal::TERM));
    assert_eq!(s.deadlines.next(), Some(start + Duration::from_secs(5)));
    s.next_deadline_passes();
    let lines = capture::take();
    assert_eq!(
        lines,
        [format!(
            "vigil: warning: still running 5s after SIGTERM: {CHILD} (bash /app/run.sh) sleeping, \
             40 (sleep 1000) sleeping; {CHILD} (bash /app/run.sh) is a shell waiting for its \
             foreground job, 40 (sleep 1000) sleeping, which did not get SIGTERM (vigil sent it \
             to the shell alone): end the script with `exec` of its last command, or run vigil \
             with -g\n"
        )]
    );
    assert_eq!(s.deadlines.next(), None, "said once");
    // With -g the job got the signal too: no shell to blame.
    let mut s = supervisor(&["-g", "--grace-period", "4s"]);
    s.sys.running = vec![
        running(CHILD, pid(1), CHILD, "bash", "bash /app/run.sh"),
        running(pid(40), CHILD, CHILD, "sleep", "sleep 1000"),
    ];
    s.signal(from_outside(Signal::TERM));
    s.next_deadline_passes();
    let lines = capture::take();
    assert!(lines[0].starts_with("vigil: warning: still running 2s after SIGTERM: "));
    assert!(!lines[0].contains("shell"), "{lines:?}");
    // A child that ended in time is not mentioned.
    let mut s = supervisor(&[]);
    s.signal(from_outside(Signal::TERM));
    s.ended(CHILD, killed(Signal::TERM));
    assert_eq!(s.deadlines.get(Deadline::StillRunning), None);
    assert!(capture::take().is_empty());
}

#[test]
fn a_pre_stop_hook_that_fails_or_cannot_start_does_not_stop_the_sequence() {
    let mut s = supervisor(&["--pre-stop", "false"]);
    s.signal(from_outside(Signal::TERM));
    let hook = s.pre_stop.as_ref().unwrap().pid;
    s.ended(hook, exited(1));
    assert_eq!(s.sent_to_child(), [Signal::TERM]);
    assert!(s.ledger.hooks()[0].failed());

    let mut s = supervisor(&["--pre-stop", "missing"]);
    s.sys.spawn_fails = true;
    s.signal(from_outside(Signal::TERM));
    assert_eq!(s.sent_to_child(), [Signal::TERM]);
    assert!(matches!(
        s.ledger.hooks()[0].outcome,
        Outcome::CouldNotRun(_)
    ));
}

// Stopping.

#[test]
fn stopping_a_later_stop_signal_is_forwarded_at_once_in_each_phase() {
    for args in [
        &["--pre-stop", "hook"][..],
        &["--pre-stop-sleep", "5s"],
        &[],
    ] {
        let mut s = supervisor(args);
        s.signal(from_outside(Signal::INT));
        let phase = s.stopping();
        let before = s.sent_to_child();
        s.signal(from_outside(Signal::TERM));
        let mut want = before.clone();
        want.push(Signal::TERM);
        assert_eq!(s.sent_to_child(), want, "{args:?}");
        assert_eq!(s.stopping(), phase, "{args:?}: the phase stays");
        assert!(s.ledger.stop().unwrap().later.is_some());
    }
}

#[test]
fn stopping_the_child_exit_in_each_phase_starts_the_drain() {
    for args in [
        &["--pre-stop", "hook"][..],
        &["--pre-stop-sleep", "5s"],
        &[],
    ] {
        let mut s = supervisor(args);
        s.sys.children = true;
        s.signal(from_outside(Signal::TERM));
        s.ended(CHILD, killed(Signal::TERM));
        assert!(
            matches!(s.state, State::Draining(DrainPhase::Terminating)),
            "{args:?}: {:?}",
            s.state
        );
        assert_eq!(s.sys.signalled_all, [vec![Signal::TERM, Signal::CONT]]);
        // Nothing of the stop sequence follows the child's exit.
        assert_eq!(s.deadlines.get(Deadline::PreStopSleep), None, "{args:?}");
        assert!(s.deadlines.get(Deadline::Drain).is_some());
        if let Some(hook) = &s.pre_stop {
            assert_eq!(
                hook.killed_for,
                Some(KillReason::Cancelled(Cancel::ChildExited))
            );
        }
        s.chld([Next::NoChildren]);
        assert_eq!(s.exit_status(), Some(143), "{args:?}");
    }
}

/// As PID 1, a process that is no child of vigil's (`docker exec`) is
/// drained too: it gets SIGTERM, and vigil waits until /proc no longer
/// lists it, though its end sends no SIGCHLD.
#[test]
fn a_process_that_is_no_child_is_drained_and_waited_for() {
    let mut s = supervisor(&[]);
    s.sys.strangers = vec![90];
    s.ended(CHILD, exited(0));
    assert_eq!(s.state, State::Draining(DrainPhase::Terminating));
    assert_eq!(s.sys.signalled_all, [vec![Signal::TERM, Signal::CONT]]);
    s.chld([Next::NoChildren]);
    assert!(s.deadlines.get(Deadline::DrainCheck).is_some());
    s.sys.reaps.push_back(Next::NoChildren);
    s.next_deadline_passes();
    assert_eq!(
        s.state,
        State::Draining(DrainPhase::Terminating),
        "still listed"
    );
    assert!(s.deadlines.get(Deadline::DrainCheck).is_some());
    s.sys.strangers.clear();
    s.sys.reaps.push_back(Next::NoChildren);
    s.next_deadline_passes();
    assert_eq!(s.exit_status(), Some(0));
}

#[test]
fn a_child_that_leaves_nothing_behind_exits_at_once() {
    let mut s = supervisor(&["-e", "3"]);
    s.ended(CHILD, exited(3));
    assert_eq!(s.exit_status(), Some(0), "-e 3");
    let mut s = supervisor(&[]);
    s.ended(CHILD, killed(Signal(libc::SIGSEGV)));
    assert_eq!(s.exit_status(), Some(139));
    assert!(s.sys.signalled_all.is_empty());
    // --drain-timeout 0 is tini's way: exit at once whatever is left.
    let mut s = supervisor(&["--drain-timeout", "0"]);
    s.sys.children = true;
    s.ended(CHILD, exited(0));
    assert_eq!(s.exit_status(), Some(0));
}

// Deadlines.

#[test]
fn the_grace_deadline_kills_everything_and_overtakes_the_sequence() {
    // A pre-stop timeout longer than the grace period: the hook still runs
    // at the grace deadline.
    let mut s = supervisor(&[
        "--pre-stop",
        "slow-hook",
        "--grace-period",
        "2s",
        "--pre-stop-timeout",
        "1m",
    ]);
    s.sys.left = vec![Proc {
        pid: CHILD,
        name: "app".into(),
    }];
    s.signal(from_outside(Signal::TERM));
    s.passes(Deadline::Grace);
    assert!(s.grace_passed());
    assert_eq!(
        s.ledger.stop().unwrap().not_sent,
        Some(crate::log::facts::stop::NotSent::PreStopHook)
    );
    assert_eq!(s.sys.signalled_all, [vec![Signal::KILL]]);
    assert_eq!(s.stopping(), Some(StopPhase::AwaitingExit));
    assert_eq!(
        s.pre_stop.as_ref().unwrap().killed_for,
        Some(KillReason::Cancelled(Cancel::GraceDeadline))
    );
    // The hook's end, after the grace deadline, forwards no stop signal.
    let hook = s.pre_stop.as_ref().unwrap().pid;
    s.ended(hook, killed(Signal::KILL));
    assert!(!s.sent_to_child().contains(&Signal::TERM));
    assert!(s.grace_passed());
    // The child's exit now goes straight to killing what is left.
    s.sys.children = true;
    s.ended(CHILD, killed(Signal::KILL));
    assert_eq!(s.state, State::Draining(DrainPhase::Killing));
}

#[test]
fn the_grace_deadline_during_the_drain_ends_it() {
    let mut s = supervisor(&["--grace-period", "1s", "--drain-timeout", "10s"]);
    s.sys.children = true;
    s.signal(from_outside(Signal::TERM));
    s.ended(CHILD, exited(0));
    // The drain deadline is the grace deadline, the earlier of the two.
    assert_eq!(
        s.deadlines.get(Deadline::Drain),
        s.deadlines.get(Deadline::Grace)
    );
    s.next_deadline_passes();
    assert!(s.grace_passed());
    assert!(matches!(s.state, State::Draining(DrainPhase::Killing)));
    assert_eq!(s.deadlines.get(Deadline::Drain), None);
    assert!(s.deadlines.get(Deadline::KillWait).is_some());
}

/// What got SIGKILL is SIGKILLed again every 50 ms (a SIGKILL that failed,
/// or a process forked since), and vigil waits 5 s at most for it to go:
/// one that vigil may not signal must not keep it for ever.
#[test]
fn what_outlives_sigkill_is_killed_again_and_then_given_up() {
    let mut s = supervisor(&["--drain-timeout", "1s"]);
    s.sys.children = true;
    s.sys.left = vec![Proc {
        pid: Pid::from_raw(300),
        name: "setuid-thing".into(),
    }];
    s.ended(CHILD, exited(0));
    s.passes(Deadline::Drain);
    assert_eq!(s.state, State::Draining(DrainPhase::Killing));
    let kills = s.sys.signalled_all.len();
    s.next_deadline_passes();
    assert_eq!(s.sys.signalled_all.len(), kills + 1, "SIGKILL again");
    s.passes(Deadline::KillWait);
    assert_eq!(s.exit_status(), Some(0));
}

#[test]
fn the_drain_deadline_kills_what_is_left_and_vigil_waits_for_it() {
    let mut s = supervisor(&["--drain-timeout", "2s"]);
    s.sys.children = true;
    s.sys.left = vec![Proc {
        pid: Pid::from_raw(300),
        name: "daemon".into(),
    }];
    s.ended(CHILD, exited(0));
    s.next_deadline_passes();
    assert_eq!(
        s.sys.signalled_all,
        [vec![Signal::TERM, Signal::CONT], vec![Signal::KILL]]
    );
    let (why, killed_list) = s.ledger.drain_kill().cloned().unwrap();
    assert_eq!(why.to_string(), "drain timeout (2s) over");
    assert_eq!(killed_list[0].pid, pid(300));
    // A reaping round with nothing to reap SIGKILLs again (a late fork).
    s.chld([]);
    assert_eq!(s.sys.signalled_all.len(), 3);
    s.chld([Next::NoChildren]);
    assert_eq!(s.exit_status(), Some(0));
}

#[test]
fn a_stop_signal_during_the_drain_kills_what_is_left_at_once() {
    let mut s = supervisor(&[]);
    s.sys.children = true;
    s.ended(CHILD, exited(0));
    s.signal(from_outside(Signal::INT));
    assert!(matches!(s.state, State::Draining(DrainPhase::Killing)));
    assert_eq!(
        s.ledger.drain_kill().unwrap().0,
        crate::log::facts::stop::DrainKill::StopSignal(Signal::INT)
    );
    assert_eq!(s.deadlines.get(Deadline::Drain), None);
    // Another one changes nothing.
    s.signal(from_outside(Signal::TERM));
    assert_eq!(s.sys.signalled_all.len(), 2);
}

#[test]
fn without_proc_vigil_exits_after_the_drain_kill() {
    let mut s = supervisor(&[]);
    s.sys.children = true;
    s.sys.unreachable = true;
    s.ended(CHILD, exited(5));
    s.next_deadline_passes();
    assert_eq!(s.exit_status(), Some(5));
}

#[test]
fn timeout_stops_as_for_sigterm_and_exits_124() {
    let mut s = supervisor(&["--timeout", "3s", "--grace-period", "1s"]);
    assert!(s.deadlines.get(Deadline::Timeout).is_some());
    s.next_deadline_passes();
    assert_eq!(s.stop_cause(), Some("timeout"));
    assert_eq!(s.sent_to_child(), [Signal::TERM]);
    assert!(s.deadlines.get(Deadline::Grace).is_some());
    s.ended(CHILD, exited(0));
    assert_eq!(s.exit_status(), Some(124));
}

/// vigil holds the terminal (the child runs as another user in a session
/// of its own): Ctrl-C and Ctrl-\\ go to the child's job, start no stop and
/// leave `--timeout` running. During the drain a Ctrl-C still hurries it.
#[test]
fn the_terminal_s_signals_go_to_the_child_s_group_and_stop_nothing() {
    let mut s = supervisor(&["--timeout", "30s"]);
    s.sys.terminal = true;
    let from_the_terminal = |signal| Received {
        signal,
        sender: Sender::Kernel,
    };
    s.signal(from_the_terminal(Signal::INT));
    s.signal(from_the_terminal(Signal::QUIT));
    assert_eq!(
        s.sys.sent,
        [
            (Target::Group(CHILD), Signal::INT),
            (Target::Group(CHILD), Signal::QUIT)
        ]
    );
    assert_eq!(s.state, State::Running);
    assert_eq!(s.stop_cause(), None);
    assert!(s.deadlines.get(Deadline::Timeout).is_some());
    s.sys.children = true;
    s.sys.left = vec![Proc {
        pid: Pid::from_raw(40),
        name: "left".into(),
    }];
    s.ended(CHILD, killed(Signal::INT));
    s.signal(from_the_terminal(Signal::INT));
    assert!(
        matches!(s.state, State::Draining(DrainPhase::Killing)),
        "{:?}",
        s.state
    );
}

#[test]
fn timeout_is_over_once_a_stop_began_or_the_child_exited() {
    let mut s = supervisor(&["--timeout", "3s"]);
    s.signal(from_outside(Signal::TERM));
    assert_eq!(s.deadlines.get(Deadline::Timeout), None);
    s.ended(CHILD, killed(Signal::TERM));
    assert_eq!(s.exit_status(), Some(143), "the signal's status, not 124");
    let mut s = supervisor(&["--timeout", "3s"]);
    s.sys.children = true;
    s.ended(CHILD, exited(0));
    assert_eq!(s.deadlines.get(Deadline::Timeout), None);
}

// Post-start.

#[test]
fn a_failed_post_start_stops_and_the_status_is_never_0() {
    let mut s = supervisor(&["--post-start", "check"]);
    let hook = s.post_start.as_ref().unwrap().pid;
    s.ended(hook, exited(2));
    assert_eq!(s.stop_cause(), Some("post_start_failed"));
    assert_eq!(s.sent_to_child(), [Signal::TERM]);
    s.ended(CHILD, exited(0));
    assert_eq!(s.exit_status(), Some(1));
    // The child's own failure stands, even one listed with -e.
    let mut s = supervisor(&["--post-start", "check", "-e", "7"]);
    let hook = s.post_start.as_ref().unwrap().pid;
    s.ended(hook, exited(2));
    s.ended(CHILD, exited(7));
    assert_eq!(s.exit_status(), Some(7));
}

#[test]
fn a_post_start_that_cannot_start_stops_at_once() {
    let argv = [
        "vigil",
        "--termination-log=",
        "--post-start",
        "nope",
        "child",
    ];
    let Ok(Action::Run(config)) = cli::parse(&argv.map(OsString::from), Vec::new()) else {
        panic!()
    };
    let fake = Fake {
        now: Some(Instant::now()),
        spawn_fails: true,
        ..Fake::default()
    };
    let mut s = Supervisor::new(*config, fake, started(CHILD));
    s.start_post_start();
    assert_eq!(s.stop_cause(), Some("post_start_failed"));
    assert_eq!(s.sent_to_child(), [Signal::TERM]);
}

#[test]
fn the_post_start_timeout_kills_the_hook_and_stops() {
    let mut s = supervisor(&["--post-start", "slow", "--post-start-timeout", "1s"]);
    let hook = s.post_start.as_ref().unwrap().pid;
    s.next_deadline_passes();
    assert_eq!(s.sys.sent, [(Target::Group(hook), Signal::KILL)]);
    assert_eq!(s.stop_cause(), None, "the stop waits for the hook's end");
    s.ended(hook, killed(Signal::KILL));
    assert!(matches!(s.ledger.hooks()[0].outcome, Outcome::TimedOut));
    assert_eq!(s.stop_cause(), Some("post_start_failed"));
}

#[test]
fn a_post_start_still_running_at_the_stop_is_cancelled() {
    let mut s = supervisor(&["--post-start", "slow", "--post-start-timeout", "9s"]);
    let hook = s.post_start.as_ref().unwrap().pid;
    s.signal(from_outside(Signal::TERM));
    assert_eq!(s.sys.sent[0], (Target::Group(hook), Signal::KILL));
    assert_eq!(s.deadlines.get(Deadline::PostStart), None);
    s.ended(hook, killed(Signal::KILL));
    assert!(!s.ledger.hooks()[0].failed());
    assert_eq!(s.stop_cause(), Some("signal"));
}

// Reaping and job control.

#[test]
fn orphans_are_counted() {
    let mut s = supervisor(&[]);
    s.sys.reaps.extend([
        Next::Changed(Change::Ended(Pid::from_raw(401), exited(0))),
        Next::Changed(Change::Ended(Pid::from_raw(402), killed(Signal(9)))),
    ]);
    s.signal(Received {
        signal: Signal::CHLD,
        sender: Sender::Kernel,
    });
    assert_eq!(s.ledger.orphans_reaped(), 2);
    assert_eq!(s.state, State::Running);
}

#[test]
fn ctrl_z_under_a_job_control_shell_stops_vigil_and_sigcont_resumes_it() {
    let mut s = supervisor(&[]);
    s.gave_terminal = true;
    s.sys.job_control = true;
    s.chld([Next::Changed(Change::Stopped(CHILD, Signal::TSTP))]);
    assert_eq!(s.sys.stopped_self, 1);
    s.signal(from_outside(Signal::CONT));
    assert_eq!(s.sys.terminal_given, [CHILD]);
    assert_eq!(s.sys.sent, [(Target::Group(CHILD), Signal::CONT)]);
}

#[test]
fn with_nobody_to_resume_it_vigil_never_stops_itself() {
    // A terminal stop (Ctrl-Z as PID 1, or in a pty without a job-control
    // shell) is undone at once.
    for (terminal, job_control) in [(true, false), (false, true), (false, false)] {
        let mut s = supervisor(&[]);
        s.gave_terminal = terminal;
        s.sys.job_control = job_control;
        s.chld([Next::Changed(Change::Stopped(CHILD, Signal::TSTP))]);
        assert_eq!(s.sys.stopped_self, 0);
        assert_eq!(s.sys.sent, [(Target::Group(CHILD), Signal::CONT)]);
    }
    // A SIGSTOP was meant: the child stays stopped, and the stop signal
    // comes with SIGCONT so that it can act on it.
    let mut s = supervisor(&[]);
    s.chld([Next::Changed(Change::Stopped(CHILD, Signal::STOP))]);
    assert!(s.sys.sent.is_empty());
    s.signal(from_outside(Signal::TERM));
    assert_eq!(
        s.sys.sent,
        [
            (Target::Process(CHILD), Signal::TERM),
            (Target::Group(CHILD), Signal::CONT)
        ]
    );
}

#[test]
fn timeout_ends_a_stopped_child_within_the_default_grace() {
    let mut s = supervisor(&["--timeout", "2s"]);
    s.sys.children = true;
    s.chld([Next::Changed(Change::Stopped(CHILD, Signal::STOP))]);
    s.next_deadline_passes();
    assert_eq!(s.sent_to_child(), [Signal::TERM, Signal::CONT]);
    let grace = s.ledger.grace().unwrap();
    assert_eq!((grace.period, grace.by_default), (cli::TIMEOUT_GRACE, true));
    assert!(!s.grace_passed());
    // A child that ignores SIGTERM is SIGKILLed at the default grace.
    s.passes(Deadline::Grace);
    assert!(s.grace_passed());
    assert_eq!(s.sys.signalled_all, [vec![Signal::KILL]]);
    s.ended(CHILD, killed(Signal::KILL));
    s.chld([Next::NoChildren]);
    assert_eq!(s.exit_status(), Some(124));
}

// Nothing spins.

/// Runs turns until vigil exits, at most `max`.
fn turns_until_exit(s: &mut Supervisor<Fake>, max: usize) -> usize {
    for turn in 1..=max {
        s.turn();
        if s.state == State::Exit {
            return turn;
        }
    }
    panic!("still {:?} after {max} turns", s.state);
}

#[test]
fn a_persistent_signal_wait_error_stops_the_container_without_spinning() {
    let mut s = supervisor(&[]);
    for _ in 0..3 {
        s.sys
            .signals
            .push_back(Err(io::Error::from_raw_os_error(libc::EBADF)));
    }
    // The child ends (SIGTERM forwarded) and is found by the reaping that
    // the paced loop now does by itself.
    s.sys.reaps.extend([
        Next::Nothing,
        Next::Changed(Change::Ended(CHILD, killed(Signal::TERM))),
    ]);
    turns_until_exit(&mut s, 10);
    assert_eq!(s.sys.waits.len(), 1, "signals are not waited for again");
    assert_eq!(s.health, Health::Deaf);
    assert_eq!(s.stop_cause(), Some("fault"));
    assert_eq!(s.sent_to_child(), [Signal::TERM]);
    assert!(!s.sys.sleeps.is_empty());
    assert!(
        s.sys.sleeps.iter().all(|d| *d >= FAULT_PACE),
        "{:?}",
        s.sys.sleeps
    );
    assert_eq!(s.exit_status(), Some(143));
}

#[test]
fn a_deadline_that_never_comes_stops_the_container_without_spinning() {
    let mut s = supervisor(&["--timeout", "60s"]);
    s.sys.frozen = true;
    for _ in 0..WASTED_TURNS {
        s.turn();
    }
    assert_eq!(s.health, Health::Unsteady);
    assert_eq!(s.stop_cause(), Some("fault"));
    assert_eq!(s.sent_to_child(), [Signal::TERM]);
    // From now on every wait is paced, even for a deadline due "now".
    let waits = s.sys.waits.len();
    for _ in 0..5 {
        s.turn();
    }
    assert!(
        s.sys.waits[waits..]
            .iter()
            .all(|w| w.is_some_and(|w| w >= FAULT_PACE))
    );
}

#[test]
fn after_a_fault_the_loop_still_ends_when_the_child_does() {
    let mut s = supervisor(&[]);
    s.fault("injected".into(), Health::Unsteady);
    s.sys.signals.push_back(Ok(Some(Received {
        signal: Signal::CHLD,
        sender: Sender::Kernel,
    })));
    s.sys
        .reaps
        .push_back(Next::Changed(Change::Ended(CHILD, exited(0))));
    let turns = turns_until_exit(&mut s, 3);
    assert_eq!(turns, 1);
    assert!(matches!(
        s.ledger.stop().map(|stop| &stop.cause),
        Some(StopCause::Fault(why)) if why == "injected"
    ));
}

/// One signal from outside the namespace, as the next thing the loop reads.
fn queue(s: &mut Supervisor<Fake>, signal: Signal) {
    s.sys.signals.push_back(Ok(Some(from_outside(signal))));
}

/// The first stop signal is forwarded and the stop accounted for in the
/// same turn, with the time it arrived.
#[test]
fn a_first_stop_signal_is_forwarded_and_accounted_at_once() {
    let mut s = supervisor(&[]);
    let arrived = s.sys.clock();
    s.signal(from_outside(Signal::TERM));
    assert_eq!(s.sent_to_child(), [Signal::TERM]);
    assert!(matches!(s.state, State::Stopping { .. }));
    let stop = s.ledger.stop().expect("the stop began");
    assert_eq!(stop.at, arrived);
    assert!(matches!(
        stop.cause,
        StopCause::Signal {
            signal: Signal::TERM,
            ..
        }
    ));
    assert_eq!(stop.sent, Some(Signal::TERM));
    s.sys.now = Some(arrived + Duration::from_secs(2));
    s.ended(CHILD, killed(Signal::TERM));
    assert_eq!(s.sent_to_child(), [Signal::TERM], "sent once");
    assert_eq!(s.exit_status(), Some(143));
}

#[test]
fn a_second_stop_signal_is_a_later_one() {
    let mut s = supervisor(&[]);
    queue(&mut s, Signal::INT);
    queue(&mut s, Signal::TERM);
    s.turn();
    s.turn();
    // The SIGINT's stop began first; the SIGTERM is a later stop signal,
    // forwarded at once.
    assert_eq!(s.sent_to_child(), [Signal::INT, Signal::TERM]);
    assert!(matches!(
        s.state,
        State::Stopping {
            signal: Signal::INT,
            ..
        }
    ));
    assert!(s.ledger.stop().unwrap().later.is_some());
}
