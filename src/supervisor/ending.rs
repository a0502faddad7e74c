//! How things end: reaping (the child, the hooks, orphans), the drain of
//! what the child left behind, the grace deadline's SIGKILL, and vigil's
//! exit status.

use nix::unistd::Pid;

use super::deadlines::Deadline;
use super::stop::StopStep;
use super::system::System;
use super::{DrainPhase, State, StopPhase, Supervisor, timeout_of};
use crate::log;
use crate::log::event::{AfterHook, Event};
use crate::log::facts::stop::DrainKill;
use crate::log::facts::{Cancel, Ending, HookKind, KillReason, Proc, Signal, Target};
use crate::reap::{Change, Next};

use std::time::Duration;

/// How often the drain looks for processes that are no children of
/// vigil's (as PID 1, those `docker exec` started): only they are left,
/// and their end sends vigil no SIGCHLD.
const DRAIN_CHECK: Duration = Duration::from_millis(50);

/// How long vigil waits for what it SIGKILLed to be gone before it gives up
/// on it: SIGKILL takes effect at once, but a process vigil may not signal
/// (a setuid one, for a vigil that is not root) never goes.
const KILL_WAIT: Duration = Duration::from_secs(5);

impl<S: System> Supervisor<S> {
    /// Reaps everything that has exited (SIGCHLDs coalesce: loop until the
    /// kernel has nothing more).
    pub(super) fn reap(&mut self) {
        loop {
            match self.sys.reap() {
                Next::Changed(Change::Ended(pid, ending)) => self.on_ended(pid, ending),
                Next::Changed(Change::Stopped(pid, signal)) => {
                    if pid == self.child {
                        self.child_stopped(signal);
                    }
                }
                Next::Nothing => {
                    if let State::Draining(DrainPhase::Killing) = self.state {
                        // Something may have forked after the last SIGKILL.
                        self.sys.signal_all(&[Signal::KILL], &self.known_groups());
                    }
                    return;
                }
                Next::NoChildren => {
                    if let State::Draining(phase) = self.state {
                        if self.sys.others_left() {
                            // Processes that are no children of vigil's
                            // (`docker exec`) say nothing when they end:
                            // look again shortly.
                            if phase == DrainPhase::Killing {
                                self.sys.signal_all(&[Signal::KILL], &self.known_groups());
                            }
                            let at = self.sys.now() + DRAIN_CHECK;
                            self.deadlines.set(Deadline::DrainCheck, at);
                        } else {
                            self.state = State::Exit;
                        }
                    }
                    return;
                }
            }
            if self.state == State::Exit {
                return;
            }
        }
    }

    fn on_ended(&mut self, pid: Pid, ending: Ending) {
        if let Ending::Killed {
            signal: Signal::KILL,
            ..
        } = ending
        {
            self.oom_victim(pid);
        }
        if pid == self.child {
            return self.child_ended(ending);
        }
        if self.post_start.as_ref().is_some_and(|h| h.pid == pid) {
            return self.hook_ended(HookKind::PostStart, ending);
        }
        if self.pre_stop.as_ref().is_some_and(|h| h.pid == pid) {
            return self.hook_ended(HookKind::PreStop, ending);
        }
        self.say(Event::Reaped {
            pid,
            ending,
            warn: self.config.warn_on_reap,
        });
    }

    /// `pid` was SIGKILLed: the OOM killer's doing if the memory cgroup
    /// counted a kill since vigil last looked. Said then, so that the
    /// report can tell an earlier OOM kill from how the container ended.
    fn oom_victim(&mut self, pid: Pid) {
        let events = self.sys.memory_events();
        if events.oom_kill <= self.ledger.memory_events().oom_kill {
            return;
        }
        let at = log::wall_clock();
        self.say(Event::MemoryEventsSeen { events, at });
        let child = pid == self.child;
        self.say(Event::OomKilled { pid, child, at });
    }

    /// A hook is done, well or not. A failed post-start hook stops the
    /// container; after the pre-stop hook the stop sequence goes on, unless
    /// the child exited or the grace deadline passed meanwhile.
    fn hook_ended(&mut self, hook: HookKind, ending: Ending) {
        self.deadlines.clear(timeout_of(hook));
        let Some(running) = self.hook_mut(hook).take() else {
            return;
        };
        let record = running.finish(hook, ending, self.sys.now());
        if hook == HookKind::PostStart {
            return self.post_start_ended(record);
        }
        let then = if record.failed() {
            AfterHook::GoOnWithStop
        } else {
            AfterHook::Nothing
        };
        self.say(Event::HookEnded {
            record: &record,
            then,
        });
        self.step_over(StopStep::PreStopHook);
    }

    /// The child is gone: drain what it left behind.
    fn child_ended(&mut self, ending: Ending) {
        let pid = self.child;
        let at = self.sys.now();
        self.say(Event::ChildEnded { pid, ending, at });
        self.note_not_sent();
        self.probing_over(&"the child exited");
        // Nothing of the stop sequence or the timeout is left to do.
        for done in [
            Deadline::PreStopSleep,
            Deadline::PreStopTimeout,
            Deadline::StillRunning,
            Deadline::Timeout,
        ] {
            self.deadlines.clear(done);
        }
        // A post-start hook has nothing left to do: vigil ends it. A
        // pre-stop hook still running is ended by the drain (or the grace
        // deadline, or the kernel when PID 1 exits). Either way vigil ended
        // it: cancelled, not failed.
        let cancelled = KillReason::Cancelled(Cancel::ChildExited);
        self.kill_hook(HookKind::PostStart, cancelled);
        if let Some(hook) = &mut self.pre_stop {
            hook.ending_for(cancelled);
        }
        if self.config.drain_timeout.is_zero()
            || !(self.sys.any_children() || self.sys.others_left())
        {
            // Nothing left, or told to behave like tini: exit at once (as
            // PID 1, the kernel then kills whatever is left).
            self.state = State::Exit;
            return;
        }
        if !self.sys.procs_listed() {
            self.say(Event::ProcUnlisted {});
        }
        let known = self.known_groups();
        if self.ledger.grace_passed() {
            self.sys.signal_all(&[Signal::KILL], &known);
            self.killing();
        } else {
            // SIGCONT too: a stopped process would not act on its SIGTERM
            // until the SIGKILL at the deadline.
            let left = self.sys.signal_all(&[Signal::TERM, Signal::CONT], &known);
            if !left.is_empty() {
                self.say(Event::Draining { terminated: &left });
            }
            let mut deadline = self.sys.now() + self.config.drain_timeout;
            if let Some(grace) = self.deadlines.get(Deadline::Grace) {
                deadline = deadline.min(grace);
            }
            self.deadlines.set(Deadline::Drain, deadline);
            self.state = State::Draining(DrainPhase::Terminating);
        }
    }

    /// Everything left got SIGKILL: wait for the kernel to finish it. The
    /// SIGKILL is sent again every `DRAIN_CHECK` (one that failed, or a
    /// process forked since, must not keep vigil waiting), and after
    /// `KILL_WAIT` vigil stops waiting for what outlives it.
    fn killing(&mut self) {
        let now = self.sys.now();
        self.deadlines.set(Deadline::DrainCheck, now + DRAIN_CHECK);
        self.deadlines.set(Deadline::KillWait, now + KILL_WAIT);
        self.state = State::Draining(DrainPhase::Killing);
    }

    /// What outlived SIGKILL by `KILL_WAIT` is given up: said, and vigil
    /// exits (as PID 1 the kernel then kills it; otherwise it runs on, most
    /// likely a process vigil may not signal).
    pub(super) fn kill_wait_over(&mut self) {
        if self.state != State::Draining(DrainPhase::Killing) {
            return;
        }
        let left = self.sys.signal_all(&[Signal::KILL], &self.known_groups());
        self.say(Event::SurvivedSigkill {
            left: &left,
            after: KILL_WAIT,
        });
        self.state = State::Exit;
    }

    /// The drain's look for what is left: a reaping round (which, while
    /// killing, SIGKILLs again what is left), and vigil exits when nothing
    /// is.
    pub(super) fn drain_check(&mut self) {
        if let State::Draining(_) = self.state {
            self.reap();
            if self.state == State::Draining(DrainPhase::Killing) {
                let at = self.sys.now() + DRAIN_CHECK;
                self.deadlines.set(Deadline::DrainCheck, at);
            }
        }
    }

    /// Process groups vigil knows of without /proc: the child's and the
    /// hooks'.
    fn known_groups(&self) -> Vec<Target> {
        let hooks = [&self.post_start, &self.pre_stop].into_iter().flatten();
        let pids = std::iter::once(self.child).chain(hooks.map(|hook| hook.pid));
        pids.map(Target::Group).collect()
    }

    /// The grace period is over: everything still alive gets SIGKILL, and
    /// the log says who that was.
    pub(super) fn grace_expired(&mut self) {
        let period = self.ledger.grace().map_or(Duration::ZERO, |g| g.period);
        let mut groups = self.known_groups();
        groups.push(Target::Process(self.child));
        let cancelled = KillReason::Cancelled(Cancel::GraceDeadline);
        for hook in [&mut self.post_start, &mut self.pre_stop]
            .into_iter()
            .flatten()
        {
            hook.ending_for(cancelled);
        }
        for overtaken in [
            Deadline::PostStart,
            Deadline::PreStopSleep,
            Deadline::PreStopTimeout,
            Deadline::StillRunning,
        ] {
            self.deadlines.clear(overtaken);
        }
        self.note_not_sent();
        let at = self.sys.now();
        let (killed, listed) = self.kill_everything_left(&groups);
        self.say(Event::GraceDeadline {
            grace_period: period,
            killed: &killed,
            listed,
            at,
        });
        match self.state {
            // The stop sequence is overtaken: no stop signal after SIGKILL.
            State::Stopping { signal, .. } => {
                self.state = State::Stopping {
                    signal,
                    phase: StopPhase::AwaitingExit,
                }
            }
            State::Draining(_) => self.killed_in_drain(),
            State::Running | State::Exit => {}
        }
    }

    /// The drain is cut short (its timeout, a stop signal): SIGKILL to what
    /// is left.
    pub(super) fn end_drain(&mut self, why: DrainKill) {
        if let State::Draining(_) = self.state {
            let (killed, listed) = self.kill_everything_left(&self.known_groups());
            self.say(Event::DrainKilled {
                why,
                killed: &killed,
                listed,
            });
            self.killed_in_drain();
        }
    }

    /// Everything vigil can reach got SIGKILL during the drain: wait for the
    /// kernel to finish them, unless vigil cannot tell when that is.
    fn killed_in_drain(&mut self) {
        self.deadlines.clear(Deadline::Drain);
        if self.sys.can_reach_all() {
            self.killing();
            return;
        }
        // Without /proc a left-over in a session of its own is out of sight
        // and out of reach: waiting for it would be forever.
        self.say(Event::CannotReachAll {});
        self.state = State::Exit;
    }

    /// A deadline passed: SIGKILL to everything left in `groups`. What
    /// /proc listed of it, and whether that is everything, for the warning
    /// that lists it (pid and name) and says which deadline it was.
    fn kill_everything_left(&mut self, groups: &[Target]) -> (Vec<Proc>, bool) {
        let left = self.sys.signal_all(&[Signal::KILL], groups);
        // Everything is being killed: from here on the log may wait for
        // room in stderr, so that this warning and the report get through.
        log::final_lines();
        (left, self.sys.can_reach_all())
    }
}
