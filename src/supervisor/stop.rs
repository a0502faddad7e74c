//! The stop sequence: what vigil does between the first stop signal (or a
//! failed post-start hook, or `--timeout`) and the child's exit.

use std::borrow::Cow;
use std::time::Duration;

use super::deadlines::Deadline;
use super::system::System;
use super::{State, StopPhase, Supervisor};
use crate::facts::signal;
use crate::facts::{Cancel, HookKind, KillReason, Received, Sender, Signal};
use crate::hooks::Hook;
use crate::logging::{self, Level};
use crate::procs;
use crate::record::{Fields, Obj, Record};
use crate::report::{Forward, Forwarded, Grace, LaterStop, NotSent, Stop, StopCause};
use crate::signals::Target;
use crate::text::duration;

/// The grace period of a stop that `--timeout` started when no
/// `--grace-period` is set: `docker stop`'s default wait, so that a job
/// that ignores SIGTERM still ends.
pub const TIMEOUT_GRACE: Duration = Duration::from_secs(10);

/// Without a grace period: how long a pre-stop hook may run by default,
/// and when the line saying what still runs comes; half of `docker stop`'s
/// default wait, so both come before its SIGKILL.
pub const NO_GRACE_WAIT: Duration = Duration::from_secs(5);

/// Declares `StopStep` and `StopStep::ALL`, every step, from one list:
/// the test that holds `STOP_SEQUENCE` to every step reads `ALL`, so a step
/// added here but left out of the sequence fails it.
macro_rules! stop_steps {
    ($($(#[doc = $doc:literal])* $step:ident,)*) => {
        /// One step of the stop sequence.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum StopStep {
            $($(#[doc = $doc])* $step,)*
        }

        impl StopStep {
            #[cfg(test)]
            pub const ALL: &'static [StopStep] = &[$(StopStep::$step,)*];
        }
    };
}

stop_steps! {
    /// `--pre-stop`: run the hook, and wait for it.
    PreStopHook,
    /// `--pre-stop-sleep`: wait.
    PreStopSleep,
    /// Forward the stop signal (after `--rewrite`); the sequence is done.
    ForwardSignal,
}

/// The order of the stop sequence, written here and only here: each step
/// either starts something to wait for or is skipped (not configured, or
/// the hook could not start), and when what it started is over the
/// sequence goes on with the step after it in this list.
pub(super) const STOP_SEQUENCE: [StopStep; 3] = [
    StopStep::PreStopHook,
    StopStep::PreStopSleep,
    StopStep::ForwardSignal,
];

impl<S: System> Supervisor<S> {
    /// Starts the stop sequence: the grace deadline starts, a post-start
    /// hook still running is cancelled, and `STOP_SEQUENCE` runs from its
    /// first step. A running `--timeout` has nothing left to do.
    pub(super) fn begin_stop(&mut self, signal: i32, cause: StopCause) {
        let at = self.sys.now();
        self.deadlines.clear(Deadline::Timeout);
        // `--timeout` promises a bounded job: without a grace period of the
        // user's, the stop it starts gets docker stop's.
        let grace = match (self.config.grace_period, &cause) {
            (Some(period), _) => Some((period, false)),
            (None, StopCause::Timeout(_)) => Some((TIMEOUT_GRACE, true)),
            (None, _) => None,
        };
        if let Some((period, by_default)) = grace {
            self.grace = Some(Grace {
                period,
                by_default,
                kill: None,
            });
            self.deadlines.set(Deadline::Grace, at + period);
        }
        let why = match cause {
            StopCause::Signal { .. } => "signal",
            StopCause::PostStartFailed => "post_start_failed",
            StopCause::Timeout(_) => "timeout",
            StopCause::Fault(_) => "fault",
        };
        let period = grace.map(|(period, _)| period);
        let fields = |r: Record<'static>| {
            r.word("cause", why)
                .field("signal", Signal(signal))
                .opt("grace_period", period)
        };
        match period {
            Some(period) => logging::emit(
                Level::Info,
                "stopping",
                format_args!("stopping: grace period {}", duration(period)),
                fields,
            ),
            None => logging::emit(Level::Info, "stopping", format_args!("stopping"), fields),
        }
        self.stop = Some(Stop {
            cause,
            at,
            sent: None,
            not_sent: None,
            later: None,
        });
        self.deadlines
            .set(Deadline::StillRunning, at + self.half_grace());
        self.kill_hook(HookKind::PostStart, KillReason::Cancelled(Cancel::Stop));
        self.run_stop_sequence(signal, 0);
    }

    /// What the sequence waited for in `step` is over (the pre-stop hook
    /// ended, the pre-stop sleep passed): go on with the next step. Nothing
    /// happens unless the sequence is waiting on that very step: the grace
    /// deadline may have overtaken it, or the child exited meanwhile.
    pub(super) fn step_over(&mut self, step: StopStep) {
        if let State::Stopping {
            signal,
            phase: StopPhase::Waiting(waiting),
        } = self.state
        {
            if waiting == step {
                let next = STOP_SEQUENCE
                    .iter()
                    .position(|s| *s == step)
                    .map_or(STOP_SEQUENCE.len(), |i| i + 1);
                self.run_stop_sequence(signal, next);
            }
        }
    }

    /// Runs `STOP_SEQUENCE` from the step at index `from` until a step
    /// starts something to wait for.
    fn run_stop_sequence(&mut self, signal: i32, from: usize) {
        for step in STOP_SEQUENCE.into_iter().skip(from) {
            if self.start_step(step, signal) {
                self.state = State::Stopping {
                    signal,
                    phase: StopPhase::Waiting(step),
                };
                return;
            }
        }
        self.state = State::Stopping {
            signal,
            phase: StopPhase::AwaitingExit,
        };
    }

    /// Starts one step; whether the sequence must wait for it. A step the
    /// configuration gives nothing to do is skipped.
    fn start_step(&mut self, step: StopStep, signal: i32) -> bool {
        match step {
            StopStep::PreStopHook => {
                let Some(argv) = self.config.pre_stop.clone() else {
                    return false;
                };
                match self.start_hook(Hook::PreStop { signal }, &argv) {
                    Ok(()) => {
                        let at = self.sys.now() + self.pre_stop_timeout();
                        self.deadlines.set(Deadline::PreStopTimeout, at);
                        true
                    }
                    Err(record) => {
                        logging::emit(
                            Level::Warning,
                            "hook_ended",
                            format_args!("{record}; going on with the stop"),
                            |r| r.flatten(&record),
                        );
                        self.hooks.push(record);
                        false
                    }
                }
            }
            StopStep::PreStopSleep => {
                let sleep = self.config.pre_stop_sleep;
                if sleep == Duration::ZERO {
                    return false;
                }
                logging::emit(
                    Level::Info,
                    "pre_stop_sleep",
                    format_args!(
                        "waiting {} before forwarding {}",
                        duration(sleep),
                        signal::name(signal)
                    ),
                    |r| r.field("sleep", sleep).field("signal", Signal(signal)),
                );
                let at = self.sys.now() + sleep;
                self.deadlines.set(Deadline::PreStopSleep, at);
                true
            }
            StopStep::ForwardSignal => {
                // Who sent the stop signal is in the stop's cause.
                let r = Received {
                    signal,
                    sender: Sender::Vigil,
                };
                let dropped = self.config.rewrites.apply(signal).is_none();
                let sent = self.forward(r).map(|f| f.sent);
                if let Some(stop) = &mut self.stop {
                    stop.sent = sent;
                    if sent.is_none() {
                        stop.not_sent = Some(if dropped {
                            NotSent::Rewritten
                        } else {
                            NotSent::Failed
                        });
                    }
                }
                self.continue_if_stopped();
                false
            }
        }
    }

    /// Half the grace period, else `NO_GRACE_WAIT`: when the line saying
    /// what still runs comes, and how long a pre-stop hook may run unless
    /// `--pre-stop-timeout` says otherwise.
    pub(super) fn half_grace(&self) -> Duration {
        self.grace.as_ref().map_or(NO_GRACE_WAIT, |g| g.period / 2)
    }

    fn pre_stop_timeout(&self) -> Duration {
        self.config
            .pre_stop_timeout
            .unwrap_or_else(|| self.half_grace())
    }

    /// The pre-stop hook has run as long as it may: its process group gets
    /// SIGKILL and the stop goes on at once, so that the child gets its
    /// stop signal before the grace deadline. A hook never withholds it.
    pub(super) fn pre_stop_timed_out(&mut self) {
        let limit = self.pre_stop_timeout();
        if let Some(hook) = &self.pre_stop {
            logging::emit(
                Level::Warning,
                "pre_stop_timed_out",
                format_args!(
                    "pre-stop hook pid {} still running after {} (--pre-stop-timeout): killing it, and going on with the stop",
                    hook.pid,
                    duration(limit)
                ),
                |r| r.field("pid", hook.pid).field("timeout", limit),
            );
        }
        self.kill_hook(HookKind::PreStop, KillReason::TimedOut);
        self.step_over(StopStep::PreStopHook);
    }

    /// What the stop sequence had not got to when the child ended or the
    /// grace deadline came: the report says why no stop signal was sent.
    pub(super) fn note_not_sent(&mut self) {
        let State::Stopping {
            phase: StopPhase::Waiting(step),
            ..
        } = self.state
        else {
            return;
        };
        let why = match step {
            StopStep::PreStopHook => NotSent::PreStopHook,
            StopStep::PreStopSleep => NotSent::PreStopSleep,
            StopStep::ForwardSignal => return,
        };
        if let Some(stop) = &mut self.stop {
            stop.not_sent = Some(why);
        }
    }

    /// A stop signal during the stop sequence: forwarded at once, and kept
    /// for the report with its sender.
    pub(super) fn forward_later_stop(&mut self, r: Received) {
        if let Some(forward) = self.forward(r) {
            let at = self.sys.now();
            self.continue_if_stopped();
            let later = self
                .forwards
                .last(forward.sent)
                .map(|Forwarded { forward, sender }| LaterStop {
                    forward,
                    sender,
                    at,
                });
            if let Some(stop) = &mut self.stop {
                stop.later = later;
            }
        }
    }

    /// A stopped child would hold its stop signal until the SIGKILL at the
    /// grace deadline: SIGCONT lets it act on it now.
    fn continue_if_stopped(&mut self) {
        if self.child_is_stopped {
            self.continue_child();
        }
    }

    /// Forwards a signal to the child (or its group), after `--rewrite`,
    /// and keeps it for the report. Returns what was sent, `None` when
    /// nothing was (dropped, the child gone, or the send failed).
    pub(super) fn forward(&mut self, r: Received) -> Option<Forward> {
        let signal = r.signal;
        if !matches!(self.state, State::Running | State::Stopping { .. }) {
            logging::emit(
                Level::Debug,
                "signal_not_forwarded",
                format_args!(
                    "the child has exited; {} not forwarded",
                    signal::name(signal)
                ),
                |r| r.field("signal", Signal(signal)),
            );
            return None;
        }
        let Some(to) = self.config.rewrites.apply(signal) else {
            logging::emit(
                Level::Info,
                "signal_dropped",
                format_args!("dropped {} (--rewrite)", signal::name(signal)),
                |r| r.field("signal", Signal(signal)),
            );
            return None;
        };
        let target = self.target(r.sender);
        log_forwarding(signal, to, target);
        if !self.sys.send(target, to) {
            // Not delivered (vigil warned): nothing to keep, nothing sent.
            return None;
        }
        let forward = Forward {
            received: r,
            sent: to,
        };
        let sys = &self.sys;
        self.forwards.record(forward, |pid| sys.name(pid));
        Some(forward)
    }
}

/// `forwarding SIGHUP to pid 7`, `forwarding SIGTERM as SIGQUIT to
/// process group 7`.
fn log_forwarding(signal: i32, to: i32, target: Target) {
    let (pid, group) = match target {
        Target::Process(pid) => (pid, false),
        Target::Group(pgid) => (pgid, true),
    };
    let fields = |r: Record<'static>| {
        r.field("signal", Signal(signal))
            .field("sent", Signal(to))
            .field("pid", pid)
            .field("group", group)
    };
    if to == signal {
        logging::emit(
            Level::Debug,
            "signal_forwarded",
            format_args!("forwarding {} to {target}", signal::name(to)),
            fields,
        );
    } else {
        logging::emit(
            Level::Debug,
            "signal_forwarded",
            format_args!(
                "forwarding {} as {} to {target}",
                signal::name(signal),
                signal::name(to)
            ),
            fields,
        );
    }
}

/// The shells whose script may wait for a foreground job that never got
/// the stop signal: the classic silent `docker stop`.
const SHELLS: [&[u8]; 8] = [
    b"sh", b"bash", b"dash", b"ash", b"zsh", b"ksh", b"mksh", b"busybox",
];

/// A process state in words: `/proc/PID/stat`'s letter.
fn state_word(state: char) -> Cow<'static, str> {
    match state {
        'R' => "running".into(),
        'S' => "sleeping".into(),
        'D' => "in uninterruptible sleep".into(),
        'T' => "stopped".into(),
        't' => "traced".into(),
        'I' => "idle".into(),
        other => format!("state {other}").into(),
    }
}

/// `7 (bash run.sh) sleeping, 9 (sleep 1000) sleeping`, at most
/// `PROCS_MAX` of them.
fn running_list(running: &[&procs::Running]) -> String {
    const PROCS_MAX: usize = 20;
    let mut text = running
        .iter()
        .take(PROCS_MAX)
        .map(|p| format!("{} ({}) {}", p.stat.pid, p.title, state_word(p.stat.state)))
        .collect::<Vec<_>>()
        .join(", ");
    if running.len() > PROCS_MAX {
        text.push_str(&format!(" and {} more", running.len() - PROCS_MAX));
    }
    text
}

/// A process and its state, for the `still_running` record.
struct StillRunning<'a>(&'a procs::Running);

impl Fields for StillRunning<'_> {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        let p = self.0;
        o.field("pid", p.stat.pid)
            .field("name", p.title.as_str())
            .field("state", state_word(p.stat.state));
    }
}

impl<S: System> Supervisor<S> {
    /// The child still runs half the grace period (else 5 s) after the stop
    /// began: say once what still runs, and why when vigil can tell. The
    /// classic case is a shell script whose foreground job never got the
    /// stop signal: the shell waits for the job, and the job knows nothing
    /// of the stop, until the engine's SIGKILL. Said before that SIGKILL,
    /// which leaves vigil no time to say anything.
    pub(super) fn say_still_running(&mut self) {
        let State::Stopping { signal, phase } = self.state else {
            return;
        };
        let after = self.half_grace();
        let all = self.sys.running();
        let child = self.child;
        let hook = self.pre_stop.as_ref().map(|h| h.pid);
        let own = all.iter().find(|p| p.stat.pid == child);
        // The child first, then the others; not the hook, said apart.
        let mut running: Vec<&procs::Running> = own.into_iter().collect();
        running.extend(
            all.iter()
                .filter(|p| p.stat.pid != child && Some(p.stat.pgrp) != hook),
        );
        let name = signal::name(signal);
        let mut msg = format!("still running {} after {name}: ", duration(after));
        if running.is_empty() {
            msg.push_str(&format!("the child, pid {child}"));
        } else {
            msg.push_str(&running_list(&running));
        }
        if let Some(hook) = hook {
            msg.push_str(&format!("; the pre-stop hook (pid {hook}) too"));
        }
        if phase == StopPhase::Waiting(StopStep::PreStopHook) {
            msg.push_str(&format!(", and {name} waits for it"));
        }
        let waiting = own.and_then(|shell| self.shell_waiting(shell, &all));
        if let Some((shell, jobs)) = &waiting {
            msg.push_str(&format!(
                "; {} ({}) is a shell waiting for its foreground job, {}, which did not get {name} (vigil sent it to the shell alone): end the script with `exec` of its last command, or run vigil with -g",
                shell.stat.pid,
                shell.title,
                running_list(jobs)
            ));
        }
        let listed: Vec<StillRunning> = running.iter().map(|p| StillRunning(p)).collect();
        logging::emit(
            Level::Warning,
            "still_running",
            format_args!("{msg}"),
            |r| {
                let r = r
                    .field("signal", Signal(signal))
                    .field("after", after)
                    .list("running", &listed)
                    .opt("pre_stop_hook", hook);
                r.with(|o| {
                    if let Some((shell, jobs)) = &waiting {
                        o.object_with("shell", |o| {
                            o.field("pid", shell.stat.pid)
                                .field("name", shell.title.as_str())
                                .list_with("jobs", jobs.iter(), |o, job| {
                                    o.field("pid", job.stat.pid)
                                        .field("name", job.title.as_str());
                                });
                        });
                    }
                })
            },
        );
    }

    /// When the child is a shell whose foreground job (its children in its
    /// process group) never got the stop signal, which went to the shell
    /// alone: the shell and the job.
    fn shell_waiting<'p>(
        &self,
        shell: &'p procs::Running,
        all: &'p [procs::Running],
    ) -> Option<(&'p procs::Running, Vec<&'p procs::Running>)> {
        let sent_alone =
            !self.config.signal_group && self.stop.as_ref().is_some_and(|s| s.sent.is_some());
        if !sent_alone || !SHELLS.contains(&shell.stat.comm.as_slice()) {
            return None;
        }
        let jobs: Vec<&procs::Running> = all
            .iter()
            .filter(|p| p.stat.ppid == shell.stat.pid && p.stat.pgrp == shell.stat.pgrp)
            .collect();
        (!jobs.is_empty()).then_some((shell, jobs))
    }
}
