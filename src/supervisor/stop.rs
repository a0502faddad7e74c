//! The stop sequence: what vigil does between the first stop signal (or a
//! failed post-start hook, or `--timeout`) and the child's exit.

use std::time::Duration;

use super::deadlines::Deadline;
use super::system::System;
use super::{State, StopPhase, Supervisor};
use crate::cli::{NO_GRACE_WAIT, TIMEOUT_GRACE};
use crate::log;
use crate::log::event::{AfterHook, Event};
use crate::log::facts::process::{Running, Shell};
use crate::log::facts::stop::{Grace, NotSent, StopCause};
use crate::log::facts::{Cancel, HookKind, KillReason, Named, Received, Sender, Signal, Target};
use crate::procs;

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
pub(super) const STOP_SEQUENCE: [StopStep; 3] = [
    StopStep::PreStopHook,
    StopStep::PreStopSleep,
    StopStep::ForwardSignal,
];

impl<S: System> Supervisor<S> {
    /// Starts the stop sequence: the grace deadline starts, a post-start
    /// hook still running is cancelled, and `STOP_SEQUENCE` runs from its
    /// first step. A running `--timeout` has nothing left to do.
    ///
    /// When nothing comes before the stop signal (no pre-stop hook, no
    /// pre-stop sleep), sending it is the stop's own work, and it goes out
    /// first, right after a post-start hook still running is ended: the
    /// sender's name, the deadlines and the log lines follow it.
    pub(super) fn begin_stop(&mut self, signal: Signal, mut cause: StopCause) {
        self.kill_hook(HookKind::PostStart, KillReason::Cancelled(Cancel::Stop));
        let at_once = self.config.pre_stop.is_none() && self.config.pre_stop_sleep.is_zero();
        let passed = at_once.then(|| self.pass_on(signal, Sender::Vigil));
        // Read after the signal is on its way: nothing before the `kill`
        // that can wait.
        let at = self.sys.now();
        if let StopCause::Signal { signal, sender } = &mut cause {
            *sender = self.named(sender.sender, *signal);
            if log::shown(crate::log::event::Level::Info) {
                self.received(*signal, sender);
            }
        }
        // `--timeout` promises a bounded job: without a grace period of the
        // user's, the stop it starts gets docker stop's.
        let grace = match (self.config.grace_period, &cause) {
            (Some(period), _) => Some(Grace {
                period,
                by_default: false,
            }),
            (
                None,
                StopCause::Timeout(_) | StopCause::NotReady { .. } | StopCause::Unhealthy { .. },
            ) => Some(Grace {
                period: TIMEOUT_GRACE,
                by_default: true,
            }),
            (None, _) => None,
        };
        self.deadlines.clear(Deadline::Timeout);
        if let Some(grace) = grace {
            self.deadlines.set(Deadline::Grace, at + grace.period);
        }
        self.say(Event::Stopping {
            cause: &cause,
            signal,
            grace,
            at,
        });
        self.probing_over(&cause);
        self.deadlines
            .set(Deadline::StillRunning, at + self.half_grace());
        match passed {
            Some(passed) => {
                self.stop_signal_passed(signal, passed);
                self.state = State::Stopping {
                    signal,
                    phase: StopPhase::AwaitingExit,
                };
            }
            None => self.run_stop_sequence(signal, 0),
        }
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
            && waiting == step
        {
            let next = STOP_SEQUENCE
                .iter()
                .position(|s| *s == step)
                .map_or(STOP_SEQUENCE.len(), |i| i + 1);
            self.run_stop_sequence(signal, next);
        }
    }

    /// Runs `STOP_SEQUENCE` from the step at index `from` until a step
    /// starts something to wait for.
    fn run_stop_sequence(&mut self, signal: Signal, from: usize) {
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
    fn start_step(&mut self, step: StopStep, signal: Signal) -> bool {
        match step {
            StopStep::PreStopHook => {
                let Some(argv) = self.config.pre_stop.clone() else {
                    return false;
                };
                let timeout = Some(self.pre_stop_timeout());
                match self.start_hook(HookKind::PreStop, Some(signal), &argv, timeout) {
                    Ok(()) => true,
                    Err(record) => {
                        self.say(Event::HookEnded {
                            record: &record,
                            then: AfterHook::GoOnWithStop,
                        });
                        false
                    }
                }
            }
            StopStep::PreStopSleep => {
                let sleep = self.config.pre_stop_sleep;
                if sleep == Duration::ZERO {
                    return false;
                }
                self.say(Event::PreStopSleep { sleep, signal });
                let at = self.sys.now() + sleep;
                self.deadlines.set(Deadline::PreStopSleep, at);
                true
            }
            StopStep::ForwardSignal => {
                let passed = self.pass_on(signal, Sender::Vigil);
                self.stop_signal_passed(signal, passed);
                false
            }
        }
    }

    /// The stop signal was passed on (or not): said; a stopped child is
    /// continued, so that it can act on it.
    fn stop_signal_passed(&mut self, signal: Signal, passed: Passed) {
        let why = match passed {
            Passed::Sent(target, sent) => {
                self.say(Event::SignalForwarded {
                    signal,
                    sent,
                    target,
                    sender: &Named::bare(Sender::Vigil),
                    later_stop: None,
                });
                None
            }
            Passed::Dropped => Some(NotSent::Rewritten),
            Passed::Failed | Passed::ChildGone => Some(NotSent::Failed),
        };
        if let Some(why) = why {
            self.say(Event::StopSignalNotSent { signal, why });
        }
        self.continue_if_stopped();
    }

    /// Half the grace period, else `NO_GRACE_WAIT`: when the line saying
    /// what still runs comes, and how long a pre-stop hook may run unless
    /// `--pre-stop-timeout` says otherwise.
    pub(super) fn half_grace(&self) -> Duration {
        self.ledger
            .grace()
            .map_or(NO_GRACE_WAIT, |grace| grace.period / 2)
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
        if let Some(pid) = self.pre_stop.as_ref().map(|hook| hook.pid) {
            let timeout = self.pre_stop_timeout();
            self.say(Event::PreStopTimedOut { pid, timeout });
        }
        self.kill_hook(HookKind::PreStop, KillReason::TimedOut);
        self.step_over(StopStep::PreStopHook);
    }

    /// What the stop sequence had not got to when the child ended or the
    /// grace deadline came: the report says why no stop signal was sent.
    pub(super) fn note_not_sent(&mut self) {
        let State::Stopping {
            signal,
            phase: StopPhase::Waiting(step),
        } = self.state
        else {
            return;
        };
        let why = match step {
            StopStep::PreStopHook => NotSent::PreStopHook,
            StopStep::PreStopSleep => NotSent::PreStopSleep,
            StopStep::ForwardSignal => return,
        };
        self.say(Event::StopSignalNotSent { signal, why });
    }

    /// A stopped child would hold its stop signal until the SIGKILL at the
    /// grace deadline: SIGCONT lets it act on it now.
    fn continue_if_stopped(&mut self) {
        if self.child_is_stopped {
            self.continue_child();
        }
    }

    /// The signal's own work, and nothing else before it: `--rewrite` and
    /// the send. Saying so comes after (`forward`). The stop sequence
    /// passes its stop signal on as sent by vigil: who sent it is in the
    /// stop's cause.
    fn pass_on(&mut self, signal: Signal, sender: Sender) -> Passed {
        if !matches!(self.state, State::Running | State::Stopping { .. }) {
            return Passed::ChildGone;
        }
        let Some(to) = self.config.rewrites.apply(signal) else {
            return Passed::Dropped;
        };
        let target = self.target(sender);
        if self.sys.send(target, to) {
            Passed::Sent(target, to)
        } else {
            Passed::Failed
        }
    }

    /// Forwards a signal to the child (or its group), after `--rewrite`;
    /// then says its arrival and what became of it, with its sender named
    /// once. A stop signal during the stop sequence (`later_stop`) is said
    /// with when it came, since the child may end on it rather than on the
    /// first.
    pub(super) fn forward(&mut self, r: Received, later_stop: bool) {
        let passed = self.pass_on(r.signal, r.sender);
        let later_stop = later_stop.then(|| self.sys.now());
        let (target, to) = match passed {
            Passed::Sent(target, to) => (target, to),
            Passed::ChildGone => {
                self.log_received(r);
                self.say(Event::SignalNotForwarded { signal: r.signal });
                return;
            }
            Passed::Dropped => {
                self.log_received(r);
                self.say(Event::SignalDropped { signal: r.signal });
                return;
            }
            // Not delivered (vigil warned): nothing sent.
            Passed::Failed => {
                self.log_received(r);
                return;
            }
        };
        let sender = self.named(r.sender, to);
        if log::shown(crate::log::event::Level::Info) {
            self.received(r.signal, &sender);
        }
        self.say(Event::SignalForwarded {
            signal: r.signal,
            sent: to,
            target,
            sender: &sender,
            later_stop,
        });
        if later_stop.is_some() {
            self.continue_if_stopped();
        }
    }
}

/// What became of a signal vigil was to pass on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Passed {
    /// Sent, after `--rewrite`, to this target.
    Sent(Target, Signal),
    /// `--rewrite` drops it.
    Dropped,
    /// The child has exited: there is no one to pass it to.
    ChildGone,
    /// The send failed (vigil warned).
    Failed,
}

/// The shells whose script may wait for a foreground job that never got
/// the stop signal: the classic silent `docker stop`.
const SHELLS: [&[u8]; 8] = [
    b"sh", b"bash", b"dash", b"ash", b"zsh", b"ksh", b"mksh", b"busybox",
];

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
        let others = all
            .iter()
            .filter(|p| p.stat.pid != child && Some(p.stat.pgrp) != hook);
        let running: Vec<Running> = own.into_iter().chain(others).map(fact).collect();
        let shell = own.and_then(|shell| self.shell_waiting(shell, &all));
        self.say(Event::StillRunning {
            signal,
            after,
            child,
            running: &running,
            pre_stop_hook: hook,
            waits_for_hook: phase == StopPhase::Waiting(StopStep::PreStopHook),
            shell: shell.as_ref(),
        });
    }

    /// When the child is a shell whose foreground job (its children in its
    /// process group) never got the stop signal, which went to the shell
    /// alone: the shell and the job.
    fn shell_waiting(&self, shell: &procs::Running, all: &[procs::Running]) -> Option<Shell> {
        let sent_alone = !self.config.signal_group && self.ledger.stop_signal_sent();
        if !sent_alone || !SHELLS.contains(&shell.stat.comm.as_slice()) {
            return None;
        }
        let jobs: Vec<Running> = all
            .iter()
            .filter(|p| p.stat.ppid == shell.stat.pid && p.stat.pgrp == shell.stat.pgrp)
            .map(fact)
            .collect();
        (!jobs.is_empty()).then(|| Shell {
            pid: shell.stat.pid,
            name: shell.title.clone(),
            jobs,
        })
    }
}

/// A process that still runs, as the log tells it.
fn fact(p: &procs::Running) -> Running {
    Running {
        pid: p.stat.pid,
        name: p.title.clone(),
        state: p.stat.state,
    }
}
