//! The stop sequence: what vigil does between the first stop signal (or a
//! failed post-start hook, or `--timeout`) and the child's exit.

use std::time::Duration;

use super::deadlines::Deadline;
use super::system::System;
use super::{Grace, State, StopPhase, StopReason, Supervisor};
use crate::cli::Config;
use crate::hooks::{Cancel, Hook, KillReason};
use crate::logging::{self, Level};
use crate::record::Record;
use crate::report::{Forward, Forwarded, LaterStop, Stop, StopCause};
use crate::signals::{self, Received, Sender, Signal, Target};
use crate::text::duration;

/// The grace period of a stop that `--timeout` started when no
/// `--grace-period` is set: `docker stop`'s default wait, so that a job
/// that ignores SIGTERM still ends.
pub const TIMEOUT_GRACE: Duration = Duration::from_secs(10);

/// One step of the stop sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopStep {
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
const STOP_SEQUENCE: [StopStep; 3] = [
    StopStep::PreStopHook,
    StopStep::PreStopSleep,
    StopStep::ForwardSignal,
];

impl StopStep {
    /// Whether the configuration gives this step something to wait for;
    /// one that has none is skipped (`start_step`). Every step is named
    /// here, so a new one cannot be left out of `only_forwards`.
    fn waits(self, config: &Config) -> bool {
        match self {
            StopStep::PreStopHook => config.pre_stop.is_some(),
            StopStep::PreStopSleep => !config.pre_stop_sleep.is_zero(),
            StopStep::ForwardSignal => false,
        }
    }
}

/// Whether the configured stop sequence is nothing but the forward: every
/// step before it is skipped.
pub(super) fn only_forwards(config: &Config) -> bool {
    STOP_SEQUENCE.iter().all(|step| !step.waits(config))
}

impl<S: System> Supervisor<S> {
    /// Starts the stop sequence: the grace deadline starts, a post-start
    /// hook still running is cancelled, and `STOP_SEQUENCE` runs from its
    /// first step. A running `--timeout` has nothing left to do.
    ///
    /// The cause is worked out for the report only after that: with no hook
    /// and no pre-stop sleep the stop signal is forwarded at once, and the
    /// child should not wait while vigil names the sender (which reads /proc
    /// and allocates).
    pub(super) fn begin_stop(
        &mut self,
        signal: i32,
        reason: StopReason,
        cause: impl FnOnce(&Self) -> StopCause,
    ) {
        self.stop = Some(reason);
        self.deadlines.clear(Deadline::Timeout);
        // A grace deadline counts from the stop signal's arrival; without
        // one, only the report wants the time, and it can wait until the
        // signal is on its way.
        let mut at = None;
        // `--timeout` promises a bounded job: without a grace period of the
        // user's, the stop it starts gets docker stop's.
        let period = match (self.config.grace_period, reason) {
            (Some(period), _) => Some(period),
            (None, StopReason::Timeout) => {
                self.report.grace_period = Some(TIMEOUT_GRACE);
                self.report.grace_by_default = true;
                Some(TIMEOUT_GRACE)
            }
            (None, _) => None,
        };
        if let Some(period) = period {
            let now = self.sys.now();
            self.grace = Grace::Running(period);
            self.deadlines.set(Deadline::Grace, now + period);
            at = Some(now);
        }
        let why = match reason {
            StopReason::Signal => "signal",
            StopReason::PostStartFailed => "post_start_failed",
            StopReason::Timeout => "timeout",
            StopReason::Fault => "fault",
        };
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
        self.kill_hook(Hook::PostStart, KillReason::Cancelled(Cancel::Stop));
        self.run_stop_sequence(signal, 0);
        // Without a grace period, the stop's time is read once the signal
        // is on its way (sent ahead: when it was sent).
        let at = at
            .or(self.sent_ahead.map(|ahead| ahead.at))
            .unwrap_or_else(|| self.sys.now());
        let cause = cause(self);
        self.report.stop = Some(Stop { cause, at });
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

    /// Starts one step; whether the sequence must wait for it.
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
                        self.report.hooks.push(record);
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
                // Who sent the stop signal is in the report's stop cause.
                let r = Received {
                    signal,
                    sender: Sender::Vigil,
                };
                self.report.stop_signal_sent = self.forward(r).map(|f| f.sent);
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
            self.report.later_stop =
                self.report
                    .forwards
                    .last(forward.sent)
                    .map(|Forwarded { forward, sender }| LaterStop {
                        forward,
                        sender,
                        at,
                    });
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
        if logging::shown(Level::Debug) {
            log_forwarding(signal, to, target);
        }
        if !self.sent_already(signal, to) {
            self.sys.send(target, to);
        }
        let forward = Forward {
            received: r,
            sent: to,
        };
        // After the kill: the child does not wait while vigil reads the
        // sender's name.
        let sys = &self.sys;
        self.report.forwarded(forward, |pid| sys.name(pid));
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
