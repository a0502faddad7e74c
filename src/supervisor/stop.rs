//! The stop sequence: what vigil does between the first stop signal (or a
//! failed post-start hook, or `--timeout`) and the child's exit.

use std::time::Duration;

use super::deadlines::Deadline;
use super::system::System;
use super::{State, StopPhase, Supervisor};
use crate::hooks::{Cancel, Hook, KillReason};
use crate::logging::{self, Level};
use crate::record::Record;
use crate::report::{Forward, Forwarded, Grace, LaterStop, Stop, StopCause};
use crate::signals::{self, Received, Sender, Signal, Target};
use crate::text::duration;

/// The grace period of a stop that `--timeout` started when no
/// `--grace-period` is set: `docker stop`'s default wait, so that a job
/// that ignores SIGTERM still ends.
pub const TIMEOUT_GRACE: Duration = Duration::from_secs(10);

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
            later: None,
        });
        self.kill_hook(Hook::PostStart, KillReason::Cancelled(Cancel::Stop));
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
                        let at = self.sys.now() + super::PRE_STOP_SLOW;
                        self.deadlines.set(Deadline::PreStopSlow, at);
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
                        signals::name(signal)
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
                let sent = self.forward(r).map(|f| f.sent);
                if let Some(stop) = &mut self.stop {
                    stop.sent = sent;
                }
                self.continue_if_stopped();
                false
            }
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
    /// and keeps it for the report. Returns what was sent.
    pub(super) fn forward(&mut self, r: Received) -> Option<Forward> {
        let signal = r.signal;
        if !matches!(self.state, State::Running | State::Stopping { .. }) {
            logging::emit(
                Level::Debug,
                "signal_not_forwarded",
                format_args!(
                    "the child has exited; {} not forwarded",
                    signals::name(signal)
                ),
                |r| r.field("signal", Signal(signal)),
            );
            return None;
        }
        let Some(to) = self.config.rewrites.apply(signal) else {
            logging::emit(
                Level::Info,
                "signal_dropped",
                format_args!("dropped {} (--rewrite)", signals::name(signal)),
                |r| r.field("signal", Signal(signal)),
            );
            return None;
        };
        let target = self.target(r.sender);
        log_forwarding(signal, to, target);
        self.sys.send(target, to);
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
            format_args!("forwarding {} to {target}", signals::name(to)),
            fields,
        );
    } else {
        logging::emit(
            Level::Debug,
            "signal_forwarded",
            format_args!(
                "forwarding {} as {} to {target}",
                signals::name(signal),
                signals::name(to)
            ),
            fields,
        );
    }
}
