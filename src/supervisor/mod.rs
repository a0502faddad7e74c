//! The supervisor: vigil's state machine and its event loop.
//!
//! ```text
//! starting ──spawned──▶ running ──SIGTERM/SIGINT, failed post-start, --timeout──▶ stopping
//!                          │                                                          │
//!                          └──────────────── child exits ───────────┬─────────────────┘
//!                                                                   ▼
//!                                       draining ──nothing left──▶ exit
//! ```
//!
//! Everything that happens is either a signal (SIGCHLD included) or a
//! deadline passing. The loop sleeps in one `rt_sigtimedwait` bounded by
//! the next deadline, with no bound when none is pending, so an idle vigil
//! never wakes up.
//!
//! Where to look:
//! - what happens on each signal, SIGTERM included: `on_signal` and
//!   `on_stop_signal`, here;
//! - the stop sequence and its order (`STOP_SEQUENCE`): `stop.rs`;
//! - the child's end, the drain and the grace deadline's SIGKILL: `ending.rs`;
//! - the deadlines: `deadlines.rs`, handled by `on_deadline`, here;
//! - what touches the kernel (the seam the unit tests replace): `system.rs`;
//! - start-up and the exit report: `setup.rs`;
//! - pause mode (`-P`, no command): `pause.rs`, a loop of its own.

mod deadlines;
mod ending;
mod pause;
mod probing;
mod setup;
mod stop;
mod system;
#[cfg(test)]
mod tests;

use std::time::Duration;

use nix::unistd::Pid;

use crate::cli::Config;
use crate::hooks;
use crate::log;
use crate::log::event::{AfterHook, Event, Level, StopAction};
use crate::log::facts::Command;
use crate::log::facts::signal::OUTSIDE;
use crate::log::facts::stop::{DrainKill, StopCause};
use crate::log::facts::{HookKind, KillReason, Named, Received, Sender, Signal, Target};
use crate::log::facts::{hook, signal};
use crate::log::format::Timestamp;
use crate::log::report::Ledger;
use deadlines::{Deadline, Deadlines, Due};
use stop::StopStep;
use system::{System, Woken};

pub use pause::run as pause;
pub use setup::run;

/// Where the container is in its life. Starting is `setup::start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// The child runs; signals are forwarded.
    Running,
    /// A stop began; the child still runs.
    Stopping { signal: Signal, phase: StopPhase },
    /// The child has exited; what it left behind is being ended.
    Draining(DrainPhase),
    /// Nothing is left: vigil exits, with the status the exit report
    /// gives.
    Exit,
}

/// Where the stop sequence is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StopPhase {
    /// Waiting for what this step started (the pre-stop hook, the pre-stop
    /// sleep) to be over.
    Waiting(StopStep),
    /// The sequence is done: the stop signal was forwarded, or the grace
    /// deadline overtook the sequence and SIGKILLed everything. Only the
    /// child's exit is awaited.
    AwaitingExit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DrainPhase {
    /// The others got SIGTERM; SIGKILL at the drain deadline.
    Terminating,
    /// The others got SIGKILL; waiting for the kernel to finish them.
    Killing,
}

/// Whether the loop's waiting works. A fault is logged once and starts the
/// stop sequence; from then on the loop paces itself, so that nothing spins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Health {
    Good,
    /// Waits for a deadline keep ending before it: every wait now lasts at
    /// least `FAULT_PACE`, unless a signal comes.
    Unsteady,
    /// Signals cannot be read: the loop sleeps `FAULT_PACE` at a time and
    /// reaps each time, since no SIGCHLD will say when.
    Deaf,
}

/// The shortest turn of the loop after a fault.
const FAULT_PACE: Duration = Duration::from_millis(100);

/// How many turns in a row may end with nothing done (no signal, no
/// deadline passed) before the loop calls it a fault. One such turn can
/// happen (a wait interrupted by being stopped and continued); a run of
/// them means the wait or the clock is broken.
const WASTED_TURNS: u32 = 10;

struct Supervisor<S: System> {
    config: Config,
    sys: S,
    child: Pid,
    state: State,
    /// Every fact the events said that the exit report needs: how the
    /// child ended, what started the stop and its grace period (whose
    /// deadline is `Deadline::Grace`), which the supervisor asks as well.
    ledger: Ledger,
    deadlines: Deadlines,
    health: Health,
    /// Turns in a row that did nothing (see `WASTED_TURNS`).
    wasted: u32,
    /// Hooks live here rather than in the state: one may outlive the state
    /// it started in (a pre-stop hook still running when the child exits),
    /// and must still be recognised and reported when it is reaped.
    post_start: Option<hooks::Running>,
    pre_stop: Option<hooks::Running>,
    /// vigil stopped itself because the child was stopped (Ctrl-Z).
    job_stopped: bool,
    /// The child was stopped and vigil has not continued it since.
    child_is_stopped: bool,
    /// vigil's parent at start, to recognise the `-p` signal when it dies.
    parent: Pid,
    /// vigil made the child's group the terminal's foreground group, and
    /// takes the terminal back when it exits.
    gave_terminal: bool,
    /// `--ready-when` until the service is first ready, then
    /// `--live-when`, until the container stops.
    probing: Option<crate::probe::Probing>,
}

/// The deadline of a hook of that kind, set only while it runs: its
/// timeout.
fn timeout_of(hook: HookKind) -> Deadline {
    match hook {
        HookKind::PostStart => Deadline::PostStart,
        HookKind::PreStop => Deadline::PreStopTimeout,
    }
}

/// What the start left for the supervisor to know: read by `setup::start`
/// before and while it started the child.
#[derive(Debug)]
struct Start {
    child: Pid,
    /// The command, as the report and the provisional message show it.
    command: Command,
    /// When the child was started.
    started: Timestamp,
    /// The memory cgroup's limit, and whether an OOM kill takes the group.
    limit: Option<u64>,
    oom_group: bool,
    /// vigil's parent before anything started (see `is_parent_death`).
    parent: Pid,
    /// Whether the child was given the terminal's foreground.
    gave_terminal: bool,
}

impl<S: System> Supervisor<S> {
    /// A supervisor for a child that has just been started; `setup::start`
    /// makes the real one, the unit tests theirs. Says that the child
    /// started.
    fn new(config: Config, sys: S, start: Start) -> Supervisor<S> {
        let mut deadlines = Deadlines::default();
        if let Some(after) = config.timeout {
            deadlines.set(Deadline::Timeout, sys.now() + after);
        }
        let mut supervisor = Supervisor {
            config,
            sys,
            child: start.child,
            state: State::Running,
            ledger: Ledger::default(),
            deadlines,
            health: Health::Good,
            wasted: 0,
            post_start: None,
            pre_stop: None,
            job_stopped: false,
            child_is_stopped: false,
            parent: start.parent,
            gave_terminal: start.gave_terminal,
            probing: None,
        };
        supervisor.say(Event::Started {
            command: &start.command,
            pid: start.child,
            limit: start.limit,
            oom_group: start.oom_group,
            terminal: start.gave_terminal,
            at: start.started,
        });
        if start.oom_group {
            supervisor.say(Event::OomGroup {
                memory_limit: start.limit,
            });
        }
        supervisor.start_probing();
        supervisor
    }

    /// Says what happened: the event goes to the ledger, which keeps what
    /// the exit report needs, and to the log.
    fn say(&mut self, event: Event<'_>) {
        self.ledger.observe(&event);
        log::emit(&event);
    }

    /// The event loop: one turn at a time until the state is `Exit`.
    fn run(&mut self) {
        while !matches!(self.state, State::Exit) {
            self.turn();
        }
    }

    /// One turn of the loop: wait for a signal or the next deadline, and
    /// handle what came. The clock is read only when a deadline is pending
    /// (or after a fault): the forwarding of a signal to an idle vigil is
    /// one read and one kill.
    fn turn(&mut self) {
        let next = self.deadlines.next();
        let mut wait = next.map(|at| at.saturating_duration_since(self.sys.now()));
        if self.health > Health::Good {
            wait = Some(wait.map_or(FAULT_PACE, |w| w.max(FAULT_PACE)));
        }
        let mut progress = true;
        if self.health == Health::Deaf {
            self.sys.sleep(wait.unwrap_or(FAULT_PACE).min(FAULT_PACE));
            self.reap();
        } else {
            match self.sys.next_event(wait) {
                Ok(Some(Woken::Signal(received))) => self.on_signal(received),
                Ok(Some(Woken::Memory)) => self.on_memory_event(),
                Ok(Some(Woken::Probe)) => self.on_probe_ready(),
                // Nothing came: the wait ran out, or failed.
                Ok(None) => progress = false,
                Err(e) => {
                    progress = false;
                    self.fault(
                        format!("cannot read signals: {}", crate::text::os_error(&e)),
                        Health::Deaf,
                    );
                }
            }
        }
        if next.is_some() || self.health > Health::Good {
            let now = self.sys.now();
            progress |= self.on_time(now);
        }
        self.wasted = if progress { 0 } else { self.wasted + 1 };
        if self.wasted >= WASTED_TURNS {
            self.wasted = 0;
            self.fault(
                format!("{WASTED_TURNS} waits in a row for the next deadline ended before it"),
                Health::Unsteady,
            );
        }
    }

    /// Handles every deadline that has passed at `now`, each cleared by the
    /// table as it is handed over. Handling one may set or end others, so
    /// the table is asked afresh after each. Whether any was handled. Kept
    /// out of the loop's own code, which a signal runs through.
    #[inline(never)]
    fn on_time(&mut self, now: std::time::Instant) -> bool {
        let mut handled = false;
        self.deadlines.new_turn();
        while self.state != State::Exit {
            match self.deadlines.take_due(now) {
                Some(Due::Passed(deadline)) => {
                    handled = true;
                    self.on_deadline(deadline);
                }
                Some(Due::Stuck(deadline)) => self.fault(
                    format!("the {deadline} deadline was set again without moving"),
                    Health::Unsteady,
                ),
                None => break,
            }
        }
        handled
    }

    fn on_deadline(&mut self, deadline: Deadline) {
        match deadline {
            Deadline::Grace => self.grace_expired(),
            Deadline::PostStart => {
                if let Some(hook) = &self.post_start {
                    self.say(Event::PostStartTimedOut {
                        pid: hook.pid,
                        timeout: self.config.post_start_timeout.unwrap_or_default(),
                    });
                }
                self.kill_hook(HookKind::PostStart, KillReason::TimedOut);
            }
            Deadline::StillRunning => self.say_still_running(),
            Deadline::PreStopTimeout => self.pre_stop_timed_out(),
            Deadline::PreStopSleep => self.step_over(StopStep::PreStopSleep),
            Deadline::Drain => self.end_drain(DrainKill::Timeout(self.config.drain_timeout)),
            Deadline::DrainCheck => self.drain_check(),
            Deadline::KillWait => self.kill_wait_over(),
            Deadline::Timeout => {
                let after = self.config.timeout.unwrap_or_default();
                let signal = self.first_stop_signal();
                self.say(Event::TimeoutPassed {
                    timeout: after,
                    signal,
                });
                self.begin_stop(signal, StopCause::Timeout(after));
            }
            Deadline::Probe => self.probe_due(),
            Deadline::ReadyTimeout => self.ready_timed_out(),
        }
    }

    /// vigil cannot go on as it should: says so once per kind of trouble,
    /// and stops the container, as if the first of `--stop-signals` had
    /// arrived.
    fn fault(&mut self, why: String, health: Health) {
        if health > self.health {
            self.say(Event::Fault { error: &why });
            self.health = health;
        }
        if self.state == State::Running {
            self.begin_stop(self.first_stop_signal(), StopCause::Fault(why));
        }
    }

    fn on_signal(&mut self, mut r: Received) {
        if r.signal == Signal::PIPE && matches!(r.sender, Sender::Vigil) {
            // vigil's own write to a closed pipe (its stderr, most likely):
            // not news for the child, and not to be logged, since logging it
            // to that same pipe would raise the next one.
            return;
        }
        if self.is_parent_death(r) {
            r.sender = Sender::ParentDeath;
        } else if matches!(r.sender, Sender::Kernel)
            && signal::is_terminal_signal(r.signal)
            && self.sys.has_terminal()
        {
            r.sender = Sender::Terminal;
        }
        match r.signal {
            Signal::CHLD => {
                // One per exit: as the kernel gave it, without reading /proc.
                if log::shown(Level::Trace) {
                    self.received(r.signal, &Named::bare(r.sender));
                }
                self.reap();
            }
            // Ignored, as tini does. Being blocked, they still reach
            // vigil's wait: the kernel discards an ignored signal only when
            // it is not blocked.
            Signal::TTIN | Signal::TTOU => self.log_received(r),
            Signal::CONT if self.job_stopped => {
                self.log_received(r);
                self.resume_job();
            }
            // vigil holds the terminal (the child runs in a session of its
            // own, or vigil was brought to the foreground): what the
            // terminal sends is for the child's job, as if the child held
            // it. Ctrl-C there is no stop of the container.
            _ if matches!(r.sender, Sender::Terminal)
                && matches!(self.state, State::Running | State::Stopping { .. }) =>
            {
                self.forward(r, false);
            }
            signal if self.config.stop_signals.contains(&signal) => self.on_stop_signal(r),
            _ => self.forward(r, false),
        }
    }

    /// Logs a signal's arrival with its sender, at `-v`: after the signal's
    /// own work, so that nothing comes before the `kill`.
    fn log_received(&mut self, r: Received) {
        if log::shown(Level::Info) {
            let sender = self.named(r.sender, r.signal);
            self.received(r.signal, &sender);
        }
    }

    fn received(&mut self, signal: Signal, sender: &Named) {
        self.say(Event::SignalReceived { signal, sender });
    }

    /// A signal's sender, named from /proc when it is a process of vigil's
    /// namespace: read once, unless it also sent the last `signal`
    /// forwarded (a storm of signals from one process).
    fn named(&self, sender: Sender, signal: Signal) -> Named {
        self.ledger
            .known_sender(signal, sender)
            .unwrap_or_else(|| Named::looked_up(sender, |pid| self.sys.name(pid)))
    }

    /// Whether `r` is the `-p` signal sent because vigil's parent died. The
    /// kernel sends it in the dying parent's name, and vigil sends it to
    /// itself when the parent died before `-p` took effect; either way,
    /// vigil's parent has changed since start. (As PID 1 the parent is
    /// outside the namespace, pid 0 before and after: there it cannot be
    /// told from another signal sent from outside.)
    fn is_parent_death(&self, r: Received) -> bool {
        if self.config.parent_death_signal != Some(r.signal) {
            return false;
        }
        let from_parent = match r.sender {
            Sender::Vigil => true,
            Sender::Process { pid, .. } => pid != OUTSIDE && pid == self.parent,
            _ => false,
        };
        from_parent && self.sys.parent() != self.parent
    }

    /// A stop signal (`--stop-signals`, TERM and INT by default): the first
    /// one starts the stop sequence; later ones are forwarded at once.
    fn on_stop_signal(&mut self, r: Received) {
        match self.state {
            State::Running => {
                let cause = StopCause::Signal {
                    signal: r.signal,
                    sender: Named::bare(r.sender),
                };
                self.begin_stop(r.signal, cause);
            }
            State::Stopping { .. } => self.forward(r, true),
            // Whoever sends a stop signal now wants vigil gone: the drain is
            // cut short.
            State::Draining(DrainPhase::Terminating) => {
                self.log_received(r);
                self.end_drain(DrainKill::StopSignal(r.signal));
            }
            State::Draining(DrainPhase::Killing) | State::Exit => {
                self.log_received(r);
                self.say(Event::StopSignalIgnored { signal: r.signal });
            }
        }
    }

    /// Where a forwarded signal goes: the child, or (`-g`) its process
    /// group; a signal from the terminal goes to the group, as the terminal
    /// itself sends it to the foreground job.
    fn target(&self, sender: Sender) -> Target {
        if self.config.signal_group || matches!(sender, Sender::Terminal) {
            Target::Group(self.child)
        } else {
            Target::Process(self.child)
        }
    }

    /// The hook of that kind, if it runs.
    fn hook_mut(&mut self, hook: HookKind) -> &mut Option<hooks::Running> {
        match hook {
            HookKind::PostStart => &mut self.post_start,
            HookKind::PreStop => &mut self.pre_stop,
        }
    }

    /// The signal `--timeout`, a failed post-start hook and a fault stop
    /// the child with: the first of `--stop-signals` (SIGTERM unless the
    /// image said otherwise), as if it had arrived.
    fn first_stop_signal(&self) -> Signal {
        self.config
            .stop_signals
            .first()
            .copied()
            .unwrap_or(Signal::TERM)
    }

    /// Starts a hook through the seam, with its deadline `timeout` from
    /// when it started, if it has one; the record of one that could not run.
    fn start_hook(
        &mut self,
        kind: HookKind,
        signal: Option<Signal>,
        argv: &[std::ffi::OsString],
        timeout: Option<Duration>,
    ) -> Result<(), hook::Record> {
        let started = self.sys.now();
        let sys = &mut self.sys;
        let running = hooks::start(kind, signal, argv, self.child, started, |spec| {
            sys.spawn(spec)
        })?;
        *self.hook_mut(kind) = Some(running);
        if let Some(timeout) = timeout {
            let at = self.sys.now() + timeout;
            self.deadlines.set(timeout_of(kind), at);
        }
        Ok(())
    }

    /// Kills a running hook's whole process group, saying why for its record.
    fn kill_hook(&mut self, hook: HookKind, reason: KillReason) {
        let Some(running) = self.hook_mut(hook) else {
            return;
        };
        running.ending_for(reason);
        let group = Target::Group(running.pid);
        self.deadlines.clear(timeout_of(hook));
        self.sys.send(group, Signal::KILL);
    }

    /// The post-start hook, started beside the child.
    fn start_post_start(&mut self) {
        let Some(argv) = self.config.post_start.clone() else {
            return;
        };
        let timeout = self.config.post_start_timeout;
        if let Err(record) = self.start_hook(HookKind::PostStart, None, &argv, timeout) {
            self.post_start_ended(record);
        }
    }

    /// The post-start hook is done, or could not start: a failure stops
    /// the container, unless it is stopping already.
    fn post_start_ended(&mut self, record: hook::Record) {
        let signal = self.first_stop_signal();
        let stops = record.failed() && self.state == State::Running;
        let then = if stops {
            AfterHook::Stop(signal)
        } else {
            AfterHook::Nothing
        };
        self.say(Event::HookEnded {
            record: &record,
            then,
        });
        if stops {
            self.begin_stop(signal, StopCause::PostStartFailed);
        }
    }

    /// The child was stopped. With a job-control shell above vigil that can
    /// resume it (Ctrl-Z in an interactive shell), vigil stops too, so that
    /// the shell gets its prompt back; `fg` or `bg` continue vigil, which
    /// continues the child. Otherwise nobody could resume vigil, and its
    /// deadlines and stop signals must keep working: vigil stays up. A
    /// child stopped by the terminal (Ctrl-Z: SIGTSTP, or SIGTTIN/SIGTTOU)
    /// is then continued, since nobody could resume it either; one stopped
    /// by SIGSTOP was stopped on purpose and stays stopped until the stop
    /// sequence sends SIGCONT with its signal.
    fn child_stopped(&mut self, signal: Signal) {
        self.child_is_stopped = true;
        let action = if self.gave_terminal && self.sys.job_control_above() {
            StopAction::StopVigil
        } else if matches!(signal, Signal::TSTP | Signal::TTIN | Signal::TTOU) {
            StopAction::Continue
        } else {
            StopAction::Leave
        };
        let pid = self.child;
        self.say(Event::ChildStopped {
            pid,
            signal,
            action,
        });
        match action {
            StopAction::StopVigil => {
                self.job_stopped = true;
                self.sys.stop_self();
            }
            StopAction::Continue => self.continue_child(),
            StopAction::Leave => {}
        }
    }

    /// Sends SIGCONT to the child's group.
    fn continue_child(&mut self) {
        self.child_is_stopped = false;
        self.sys.send(Target::Group(self.child), Signal::CONT);
    }

    /// vigil was continued (`fg`, `bg`): continue the child's group, and
    /// give it the terminal back if vigil is in the foreground.
    fn resume_job(&mut self) {
        self.job_stopped = false;
        self.sys.give_terminal(self.child);
        self.continue_child();
    }
}
