//! The supervisor: vigil's state machine and its event loop.
//!
//! ```text
//! starting ──spawned──▶ running ──SIGTERM/SIGINT, failed post-start──▶ stopping
//!                          │                                               │
//!                          └──────────── child exits ──────────┬───────────┘
//!                                                              ▼
//!                                  draining ──nothing left──▶ exit
//! ```
//!
//! Everything that happens is either a signal read from the signalfd
//! (SIGCHLD included) or a deadline passing. With no deadline pending the
//! loop sleeps in a blocking read of the signalfd, so an idle vigil never
//! wakes up. "What happens on SIGTERM" is `on_stop_signal`; the order of the
//! stop sequence is `STOP_SEQUENCE` and `step_stop`; every deadline is in
//! `deadlines`.

use std::time::{Duration, Instant};

use crate::cgroup::OomCounter;
use crate::cli::Config;
use crate::duration::secs;
use crate::hooks::{self, Cancel, Hook, KillReason};
use crate::logging;
use crate::procs::{self, Role};
use crate::reap::{self, Ending, Event, Next};
use crate::report::{self, Audience, Forward, LaterStop, Report, Stop, StopCause};
use crate::signals::{self, Inherited, Received, Sender, SignalFd, Target};
use crate::spawn::{self, Spawn};

/// Where the container is in its life. Starting is `Supervisor::start`.
#[derive(Debug)]
enum State {
    /// The child runs; signals are forwarded.
    Running,
    /// A stop signal arrived (or post-start failed); the child still runs.
    Stopping { signal: i32, phase: StopPhase },
    /// The child has exited; what it left behind is being ended.
    Draining { ending: Ending, phase: DrainPhase },
    /// Nothing is left: vigil exits with this status.
    Exit(i32),
}

/// What the stop sequence is waiting for.
#[derive(Debug)]
enum StopPhase {
    /// The pre-stop hook runs; the stop signal waits for it.
    PreStop,
    /// `--pre-stop-sleep`: the stop signal waits until then.
    Sleeping(Instant),
    /// Nothing is left to do but wait for the child's exit: the stop signal
    /// was forwarded, or the grace deadline overtook the sequence and
    /// SIGKILLed everything.
    AwaitingExit,
}

/// The steps of the stop sequence, in the order `STOP_SEQUENCE` runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StopStep {
    PreStopHook,
    PreStopSleep,
    ForwardSignal,
}

/// The stop sequence: each step either starts something to wait for (a
/// `StopPhase`) or is skipped because it is not configured; when what it
/// started is over, the sequence goes on with the next step.
const STOP_SEQUENCE: [StopStep; 3] = [
    StopStep::PreStopHook,
    StopStep::PreStopSleep,
    StopStep::ForwardSignal,
];

impl StopPhase {
    /// Where the sequence goes on when this phase is over.
    fn next_step(&self) -> Option<StopStep> {
        match self {
            StopPhase::PreStop => Some(StopStep::PreStopSleep),
            StopPhase::Sleeping(_) => Some(StopStep::ForwardSignal),
            StopPhase::AwaitingExit => None,
        }
    }
}

#[derive(Debug)]
enum DrainPhase {
    /// The others got SIGTERM; SIGKILL at this deadline.
    Terminating(Instant),
    /// The others got SIGKILL; waiting for the kernel to finish them.
    Killing,
}

/// The grace period, which starts at the first stop signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Grace {
    NotStarted,
    Until(Instant),
    Expired,
}

/// Every kind of deadline vigil keeps. `Supervisor::deadlines` lists the
/// pending ones; the loop sleeps until the earliest and `on_deadline`
/// handles each that has passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Deadline {
    /// `--grace-period` after the first stop signal: SIGKILL to everything.
    Grace,
    /// `--post-start-timeout`: the hook has failed.
    PostStart,
    /// `--pre-stop-sleep` is over: the stop sequence goes on.
    PreStopSleep,
    /// `--drain-timeout` is over: SIGKILL to what is left.
    Drain,
    /// `--timeout` is over: the stop sequence starts as for SIGTERM.
    Timeout,
}

struct Supervisor {
    config: Config,
    inherited: Inherited,
    role: Role,
    signals: SignalFd,
    child: i32,
    state: State,
    grace: Grace,
    /// Hooks live here rather than in the state: one may outlive the state
    /// it started in (a pre-stop hook still running when the child exits),
    /// and must still be recognised and reported when it is reaped.
    post_start: Option<hooks::Running>,
    pre_stop: Option<hooks::Running>,
    /// vigil stopped itself because the child was stopped (Ctrl-Z).
    job_stopped: bool,
    /// vigil's parent at start, to recognise the `-p` signal when it dies.
    parent: i32,
    /// vigil made the child's group the terminal's foreground group, and
    /// takes the terminal back when it exits.
    gave_terminal: bool,
    /// When vigil started the child, for `--timeout`.
    started: Instant,
    /// Read at start only when vigil is not PID 1 (see `cgroup`).
    oom: OomCounter,
    report: Report,
}

/// Runs the command under supervision and returns vigil's exit status.
pub fn run(config: Config, inherited: Inherited) -> i32 {
    let signals = match SignalFd::open() {
        Ok(signals) => signals,
        Err(e) => {
            log::error!("cannot read signals (signalfd): {e}");
            return 1;
        }
    };
    match Supervisor::start(config, inherited, signals) {
        Ok(supervisor) => supervisor.run(),
        Err(status) => status,
    }
}

impl Supervisor {
    /// The starting state: set up the kernel's side, start the child and the
    /// post-start hook. An `Err` is the exit status when the child could not
    /// be started.
    fn start(config: Config, inherited: Inherited, signals: SignalFd) -> Result<Supervisor, i32> {
        let role = Role::of_this_process();
        // SAFETY: getppid takes no arguments and cannot fail.
        let parent = unsafe { libc::getppid() };
        if config.subreaper || role == Role::Subreaper {
            become_subreaper();
        }
        if let Some(signal) = config.parent_death_signal {
            set_parent_death_signal(signal);
        }
        if config.post_start.is_none() && config.post_start_timeout.is_some() {
            log::warn!(
                "a post-start timeout is set, but no post-start hook: it has nothing to time"
            );
        }
        let command = spawn::display_command(&config.command);
        let started = Instant::now();
        let gave_terminal = spawn::owns_terminal();
        let child = spawn::spawn(
            Spawn {
                argv: &config.command,
                env: Vec::new(),
                take_terminal: gave_terminal,
                null_stdin: false,
            },
            inherited,
        )
        .map_err(|e| {
            log::error!("{e}");
            if let Some(path) = &config.termination_log {
                report::write_termination_log(path, &e.to_string());
            }
            // tini's child exits 126/127 after a failed exec, and `-e` maps
            // that status like any other: so does vigil's.
            config.status_after_e(e.status())
        })?;
        log::info!("started {command} as pid {child}");
        warm_up_clock();
        let oom = OomCounter::start(role);
        let report = Report {
            command,
            child_pid: child,
            child_had_terminal: gave_terminal,
            grace_period: config.grace_period,
            ..Report::default()
        };
        let mut supervisor = Supervisor {
            config,
            inherited,
            role,
            signals,
            child,
            state: State::Running,
            grace: Grace::NotStarted,
            post_start: None,
            pre_stop: None,
            job_stopped: false,
            parent,
            gave_terminal,
            started,
            oom,
            report,
        };
        supervisor.start_post_start();
        Ok(supervisor)
    }

    fn start_post_start(&mut self) {
        let Some(argv) = &self.config.post_start else {
            return;
        };
        let hook = Hook::PostStart {
            timeout: self.config.post_start_timeout,
        };
        match hooks::start(hook, argv, self.child, self.inherited) {
            Ok(hook) => self.post_start = Some(hook),
            Err(record) => self.post_start_failed(record),
        }
    }

    fn post_start_failed(&mut self, record: hooks::Record) {
        log::warn!("{record}; stopping as if SIGTERM had arrived");
        self.report.hooks.push(record);
        if let State::Running = self.state {
            self.begin_stop(libc::SIGTERM, || StopCause::PostStartFailed);
        }
    }

    /// The event loop: wait for a signal or the next deadline, handle it,
    /// until the state is `Exit`.
    fn run(mut self) -> i32 {
        loop {
            if let State::Exit(status) = self.state {
                return self.finish(status);
            }
            // The deadlines are looked at once a turn, and the clock is read
            // only when one is pending. One that handling this signal sets
            // is waited for from the next turn on (at once if already due).
            let deadline = self.next_deadline();
            let timeout = deadline.map(|at| at.saturating_duration_since(Instant::now()));
            match self.signals.wait(timeout) {
                Ok(Some(received)) => self.on_signal(received),
                Ok(None) => {}
                Err(e) => log::error!("reading signals failed: {e}"),
            }
            if deadline.is_some() {
                self.on_time(Instant::now());
            }
        }
    }

    /// Every pending deadline, in the order they are handled when several
    /// have passed at once. The one list both the wait (`next_deadline`)
    /// and the handling (`on_time`) read.
    fn deadlines(&self) -> [Option<(Instant, Deadline)>; 5] {
        let grace = match self.grace {
            Grace::Until(at) => Some((at, Deadline::Grace)),
            _ => None,
        };
        let post_start = self
            .post_start
            .as_ref()
            .and_then(|hook| hook.deadline)
            .map(|at| (at, Deadline::PostStart));
        let timeout = match (self.config.timeout, &self.state) {
            (Some(after), State::Running) => Some((self.started + after, Deadline::Timeout)),
            _ => None,
        };
        let (sleep, drain) = match self.state {
            State::Stopping {
                phase: StopPhase::Sleeping(at),
                ..
            } => (Some((at, Deadline::PreStopSleep)), None),
            State::Draining {
                phase: DrainPhase::Terminating(at),
                ..
            } => (None, Some((at, Deadline::Drain))),
            _ => (None, None),
        };
        [grace, post_start, sleep, drain, timeout]
    }

    /// The earliest pending deadline; `None` means sleep until a signal.
    fn next_deadline(&self) -> Option<Instant> {
        self.deadlines()
            .into_iter()
            .flatten()
            .map(|(at, _)| at)
            .min()
    }

    /// Handles every deadline that has passed. Each handler ends its own
    /// deadline (or the state that holds it), so the list is asked afresh
    /// after each one: handling one may change the others.
    fn on_time(&mut self, now: Instant) {
        while !matches!(self.state, State::Exit(_)) {
            let due = self
                .deadlines()
                .into_iter()
                .flatten()
                .find(|(at, _)| now >= *at);
            match due {
                Some((_, deadline)) => self.on_deadline(deadline),
                None => return,
            }
        }
    }

    fn on_deadline(&mut self, deadline: Deadline) {
        match deadline {
            Deadline::Grace => self.grace_expired(),
            Deadline::PostStart => {
                if let Some(hook) = &mut self.post_start {
                    log::warn!("post-start hook pid {} timed out: killing it", hook.pid);
                    hook.kill(KillReason::TimedOut);
                }
            }
            Deadline::PreStopSleep => self.stop_phase_over(),
            Deadline::Drain => {
                let why = format!("drain timeout ({}) over", secs(self.config.drain_timeout));
                self.end_drain(why);
            }
            Deadline::Timeout => {
                let after = self.config.timeout.unwrap_or_default();
                log::warn!(
                    "--timeout ({}) passed: stopping as if SIGTERM had arrived",
                    secs(after)
                );
                self.begin_stop(libc::SIGTERM, || StopCause::Timeout(after));
            }
        }
    }

    fn on_signal(&mut self, mut r: Received) {
        if r.signal == libc::SIGPIPE && r.sender == Sender::Vigil {
            // vigil's own write to a closed pipe (its stderr, most likely):
            // not news for the child, and not to be logged, since logging it
            // to that same pipe would raise the next one.
            return;
        }
        if self.is_parent_death(r) {
            r.sender = Sender::ParentDeath;
        }
        if r.signal == libc::SIGCHLD {
            log::trace!("received SIGCHLD {}", r.sender);
        } else {
            log::info!(
                "received {} {}",
                signals::name(r.signal),
                procs::describe_sender(r.sender)
            );
        }
        match r.signal {
            libc::SIGCHLD => self.reap(),
            // Ignored, as tini does. Being blocked, they still reach the
            // signalfd: the kernel discards an ignored signal only when it
            // is not blocked.
            libc::SIGTTIN | libc::SIGTTOU => {}
            libc::SIGCONT if self.job_stopped => self.resume_job(),
            libc::SIGTERM | libc::SIGINT => self.on_stop_signal(r),
            _ => {
                self.forward(r);
            }
        }
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
            Sender::Process { pid, .. } => self.parent > 0 && pid == self.parent as u32,
            _ => false,
        };
        // SAFETY: getppid takes no arguments and cannot fail.
        from_parent && unsafe { libc::getppid() } != self.parent
    }

    /// SIGTERM or SIGINT: the first one starts the stop sequence; later
    /// ones are forwarded at once.
    fn on_stop_signal(&mut self, r: Received) {
        match self.state {
            State::Running => self.begin_stop(r.signal, || StopCause::signal(r)),
            State::Stopping { .. } => {
                if let Some(forward) = self.forward(r) {
                    self.report.later_stop = Some(LaterStop {
                        forward,
                        sender: procs::describe_sender(r.sender),
                    });
                }
            }
            // Whoever sends a stop signal now wants vigil gone: the drain is
            // cut short.
            State::Draining {
                phase: DrainPhase::Terminating(_),
                ..
            } => {
                let why = format!("{} during the drain", signals::name(r.signal));
                self.end_drain(why);
            }
            State::Draining {
                phase: DrainPhase::Killing,
                ..
            }
            | State::Exit(_) => {
                log::debug!(
                    "already killing what is left; {} changes nothing",
                    signals::name(r.signal)
                )
            }
        }
    }

    fn target(&self) -> Target {
        if self.config.signal_group {
            Target::Group(self.child)
        } else {
            Target::Process(self.child)
        }
    }

    /// Forwards a signal to the child (or its group), after `--rewrite`,
    /// and keeps it for the report. Returns what was sent.
    fn forward(&mut self, r: Received) -> Option<Forward> {
        let signal = r.signal;
        if !matches!(self.state, State::Running | State::Stopping { .. }) {
            log::debug!(
                "the child has exited; {} not forwarded",
                signals::name(signal)
            );
            return None;
        }
        match self.config.rewrites.apply(signal) {
            Some(to) => {
                let target = self.target();
                if to == signal {
                    log::debug!("forwarding {} to {target}", signals::name(to));
                } else {
                    log::debug!(
                        "forwarding {} as {} to {target}",
                        signals::name(signal),
                        signals::name(to)
                    );
                }
                signals::send(target, to);
                let forward = Forward {
                    received: r,
                    sent: to,
                    at: Instant::now(),
                };
                self.report.forwards.record(forward);
                Some(forward)
            }
            None => {
                log::info!("dropped {} (--rewrite)", signals::name(signal));
                None
            }
        }
    }

    /// Starts the stop sequence: the grace deadline starts, a post-start
    /// hook still running is cancelled, and `STOP_SEQUENCE` runs from its
    /// first step.
    ///
    /// The cause is worked out for the report only after that: with no hook
    /// and no pre-stop sleep the stop signal is forwarded at once, and the
    /// child should not wait while vigil names the sender (which reads /proc
    /// and allocates).
    fn begin_stop(&mut self, signal: i32, cause: impl FnOnce() -> StopCause) {
        // A grace deadline counts from the stop signal's arrival; without
        // one, only the report wants the time, and it can wait until the
        // signal is on its way.
        let mut at = None;
        if let Some(period) = self.config.grace_period {
            let now = Instant::now();
            self.grace = Grace::Until(now + period);
            at = Some(now);
            log::info!("stopping: grace period {}", secs(period));
        } else {
            log::info!("stopping");
        }
        if let Some(hook) = &mut self.post_start {
            hook.kill(KillReason::Cancelled(Cancel::Stop));
        }
        self.run_stop_sequence(signal, StopStep::PreStopHook);
        self.report.stop = Some(Stop {
            cause: cause(),
            at: at.unwrap_or_else(Instant::now),
        });
    }

    /// What the stop sequence was waiting for is over (the pre-stop hook
    /// ended, the pre-stop sleep passed): go on with the next step. Does
    /// nothing once the sequence is past that point, e.g. when the grace
    /// deadline overtook it or the child has exited.
    fn stop_phase_over(&mut self) {
        if let State::Stopping { signal, phase } = &self.state {
            if let Some(step) = phase.next_step() {
                let signal = *signal;
                self.run_stop_sequence(signal, step);
            }
        }
    }

    /// Runs `STOP_SEQUENCE` from `from` until a step starts something to
    /// wait for.
    fn run_stop_sequence(&mut self, signal: i32, from: StopStep) {
        for step in STOP_SEQUENCE.into_iter().skip_while(|s| *s != from) {
            if let Some(phase) = self.step_stop(step, signal) {
                self.state = State::Stopping { signal, phase };
                return;
            }
        }
    }

    /// One step of the stop sequence: `None` when it has nothing to wait
    /// for (not configured, or the hook could not even start).
    fn step_stop(&mut self, step: StopStep, signal: i32) -> Option<StopPhase> {
        match step {
            StopStep::PreStopHook => {
                let argv = self.config.pre_stop.as_ref()?;
                match hooks::start(Hook::PreStop { signal }, argv, self.child, self.inherited) {
                    Ok(hook) => {
                        self.pre_stop = Some(hook);
                        Some(StopPhase::PreStop)
                    }
                    Err(record) => {
                        log::warn!("{record}; going on with the stop");
                        self.report.hooks.push(record);
                        None
                    }
                }
            }
            StopStep::PreStopSleep => {
                let sleep = self.config.pre_stop_sleep;
                (sleep > Duration::ZERO).then(|| {
                    log::info!(
                        "waiting {} before forwarding {}",
                        secs(sleep),
                        signals::name(signal)
                    );
                    StopPhase::Sleeping(Instant::now() + sleep)
                })
            }
            StopStep::ForwardSignal => {
                // The state is Running or Stopping here, so forward() sends.
                // Who sent the stop signal is in the report's stop cause.
                let r = Received {
                    signal,
                    sender: Sender::Vigil,
                };
                self.report.stop_signal_sent = self.forward(r).map(|f| f.sent);
                Some(StopPhase::AwaitingExit)
            }
        }
    }

    /// Reaps everything that has exited (SIGCHLDs coalesce: loop until the
    /// kernel has nothing more).
    fn reap(&mut self) {
        loop {
            match reap::next(self.role) {
                Next::Event(Event::Ended(pid, ending)) => self.on_ended(pid, ending),
                Next::Event(Event::Stopped(pid)) => {
                    if pid == self.child {
                        self.stop_job();
                    }
                }
                Next::Nothing => {
                    if let State::Draining {
                        phase: DrainPhase::Killing,
                        ..
                    } = self.state
                    {
                        // Something may have forked after the last SIGKILL.
                        procs::signal_all(self.role, &[libc::SIGKILL], &self.known_groups());
                    }
                    return;
                }
                Next::NoChildren => {
                    if let State::Draining { ending, .. } = self.state {
                        self.state = State::Exit(self.exit_status(ending));
                    }
                    return;
                }
            }
            if let State::Exit(_) = self.state {
                return;
            }
        }
    }

    fn on_ended(&mut self, pid: i32, ending: Ending) {
        if pid == self.child {
            return self.child_ended(ending);
        }
        if self.post_start.as_ref().is_some_and(|h| h.pid == pid) {
            if let Some(hook) = self.post_start.take() {
                let record = hook.finish(ending);
                if record.failed() {
                    self.post_start_failed(record);
                } else {
                    log::info!("{record}");
                    self.report.hooks.push(record);
                }
            }
            return;
        }
        if self.pre_stop.as_ref().is_some_and(|h| h.pid == pid) {
            return self.pre_stop_ended(ending);
        }
        self.report.orphans_reaped += 1;
        if self.config.warn_on_reap {
            log::warn!("reaped orphaned zombie pid {pid}, which {ending}");
        } else {
            log::debug!("reaped pid {pid}, which {ending}");
        }
    }

    /// The pre-stop hook is done, well or not: the stop sequence goes on,
    /// unless the child exited or the grace deadline passed meanwhile.
    fn pre_stop_ended(&mut self, ending: Ending) {
        let Some(hook) = self.pre_stop.take() else {
            return;
        };
        let record = hook.finish(ending);
        if record.failed() {
            log::warn!("{record}; going on with the stop");
        } else {
            log::info!("{record}");
        }
        self.report.hooks.push(record);
        if let State::Stopping {
            phase: StopPhase::PreStop,
            ..
        } = self.state
        {
            self.stop_phase_over();
        }
    }

    /// The child is gone: drain what it left behind.
    fn child_ended(&mut self, ending: Ending) {
        log::info!("child pid {} {ending}", self.child);
        self.report.ending = Some(ending);
        self.report.ended_at = Some(Instant::now());
        // A post-start hook has nothing left to do: vigil ends it. A
        // pre-stop hook still running is ended by the drain (or the grace
        // deadline, or the kernel when PID 1 exits). Either way vigil ended
        // it: cancelled, not failed.
        let cancelled = KillReason::Cancelled(Cancel::ChildExited);
        if let Some(hook) = &mut self.post_start {
            hook.kill(cancelled);
        }
        if let Some(hook) = &mut self.pre_stop {
            hook.ending_for(cancelled);
        }
        if self.config.drain_timeout.is_zero() || !reap::any_children() {
            // Nothing left, or told to behave like tini: exit at once (as
            // PID 1, the kernel then kills whatever is left).
            self.state = State::Exit(self.exit_status(ending));
            return;
        }
        if !procs::available() {
            log::warn!("/proc is not mounted for this PID namespace: left-over processes can be signalled but not listed");
        }
        let phase = if self.grace == Grace::Expired {
            procs::signal_all(self.role, &[libc::SIGKILL], &self.known_groups());
            DrainPhase::Killing
        } else {
            // SIGCONT too: a stopped process would not act on its SIGTERM
            // until the SIGKILL at the deadline.
            let left = procs::signal_all(
                self.role,
                &[libc::SIGTERM, libc::SIGCONT],
                &self.known_groups(),
            );
            if !left.is_empty() {
                log::info!("draining: SIGTERM to {}", procs::list(&left));
            }
            self.report.drained = Some(left.len());
            let mut deadline = Instant::now() + self.config.drain_timeout;
            if let Grace::Until(at) = self.grace {
                deadline = deadline.min(at);
            }
            DrainPhase::Terminating(deadline)
        };
        self.state = State::Draining { ending, phase };
    }

    /// Process groups vigil knows of without /proc: the child's and the
    /// hooks'.
    fn known_groups(&self) -> Vec<Target> {
        let mut groups = vec![Target::Group(self.child)];
        for hook in [&self.post_start, &self.pre_stop].into_iter().flatten() {
            groups.push(Target::Group(hook.pid));
        }
        groups
    }

    /// vigil's exit status for the child's ending: its status (the code, or
    /// 128+N for death by signal N), or 0 when that status is listed with
    /// `-e` (128+N included, as in tini). After `--timeout`, 124 as with
    /// coreutils `timeout`. After a failed post-start hook never 0: the
    /// child's own failure stands, a success becomes 1.
    fn exit_status(&self, ending: Ending) -> i32 {
        let status = ending.status();
        match self.report.stop.as_ref().map(|stop| &stop.cause) {
            Some(StopCause::Timeout(_)) => 124,
            Some(StopCause::PostStartFailed) => status.max(1),
            _ => self.config.status_after_e(status),
        }
    }

    /// The grace period is over: everything still alive gets SIGKILL, and
    /// the log says who that was.
    fn grace_expired(&mut self) {
        self.grace = Grace::Expired;
        let mut groups = self.known_groups();
        groups.push(Target::Process(self.child));
        for hook in [&mut self.post_start, &mut self.pre_stop]
            .into_iter()
            .flatten()
        {
            hook.kill(KillReason::Cancelled(Cancel::GraceDeadline));
        }
        let period = self.config.grace_period.unwrap_or_default();
        let why = format!("grace period ({}) over", secs(period));
        // Before the kill: its warning may wait for room in stderr.
        self.report.grace_killed_at = Some(Instant::now());
        let victims = self.kill_everything_left(&why, &groups);
        self.report.grace_killed = Some(victims);
        match self.state {
            // The stop sequence is overtaken: no stop signal after SIGKILL.
            State::Stopping { signal, .. } => {
                self.state = State::Stopping {
                    signal,
                    phase: StopPhase::AwaitingExit,
                }
            }
            State::Draining { ending, .. } => self.killed_in_drain(ending),
            State::Running | State::Exit(_) => {}
        }
    }

    /// The drain is cut short (its timeout, a stop signal): SIGKILL to what
    /// is left.
    fn end_drain(&mut self, why: String) {
        if let State::Draining { ending, .. } = self.state {
            let left = self.kill_everything_left(&why, &self.known_groups());
            self.report.drain_killed = Some((why, left));
            self.killed_in_drain(ending);
        }
    }

    /// Everything vigil can reach got SIGKILL during the drain: wait for the
    /// kernel to finish them, unless vigil cannot tell when that is.
    fn killed_in_drain(&mut self, ending: Ending) {
        self.state = if procs::can_reach_all(self.role) {
            State::Draining {
                ending,
                phase: DrainPhase::Killing,
            }
        } else {
            // Without /proc a left-over in a session of its own is out of
            // sight and out of reach: waiting for it would be forever.
            log::warn!("without /proc vigil cannot list or reach processes outside the child's and the hooks' process groups: exiting, any such process is left running");
            State::Exit(self.exit_status(ending))
        };
    }

    /// A deadline passed: SIGKILL to everything left, and a warning that
    /// lists it (pid and name) and says which deadline it was.
    fn kill_everything_left(&self, why: &str, groups: &[Target]) -> Vec<procs::Proc> {
        let left = procs::signal_all(self.role, &[libc::SIGKILL], groups);
        // Everything is being killed: from here on the log may wait for
        // room in stderr, so that this warning and the report get through.
        logging::final_lines();
        if !procs::can_reach_all(self.role) {
            log::warn!("{why}: SIGKILL to the child's and the hooks' process groups");
        } else if left.is_empty() {
            log::warn!("{why}: SIGKILL to everything left");
        } else {
            log::warn!("{why}: SIGKILL to {}", procs::list(&left));
        }
        left
    }

    /// Job control (not as PID 1): the child was stopped, by Ctrl-Z say; vigil
    /// stops too, so that the shell that started vigil gets its prompt back.
    fn stop_job(&mut self) {
        log::info!("child pid {} stopped: stopping vigil too", self.child);
        self.job_stopped = true;
        // SAFETY: kill and getpid take no memory arguments. SIGSTOP cannot be
        // blocked: vigil stops here and goes on when continued.
        unsafe { libc::kill(libc::getpid(), libc::SIGSTOP) };
    }

    /// vigil was continued (`fg`, `bg`): continue the child's group, and
    /// give it the terminal back if vigil is in the foreground.
    fn resume_job(&mut self) {
        self.job_stopped = false;
        spawn::give_terminal(self.child);
        signals::send(Target::Group(self.child), libc::SIGCONT);
    }

    /// Writes the exit report and returns the exit status.
    ///
    /// The supervisor is not dropped: vigil is about to exit, and the kernel
    /// frees the memory and closes the signalfd then anyway. Doing it here
    /// put a `munmap` (musl's allocator giving back a page) and a `close`
    /// between the child's death and vigil's exit, which is when the
    /// container's runtime is waiting for it.
    fn finish(mut self, status: i32) -> i32 {
        if let Some(ending) = self.report.ending {
            self.report.code_expected = self.exit_status(ending) == 0 && ending.status() != 0;
        }
        self.report.oom_kills = self.oom.kills_since_start();
        self.report.status = status;
        logging::final_lines();
        let (target, level) = match self.report.audience() {
            Audience::Warning => (module_path!(), log::Level::Warn),
            Audience::Default => (logging::NOTICE, log::Level::Warn),
            Audience::Verbose => (module_path!(), log::Level::Info),
        };
        // Formatted once, for the log and the termination log alike, and
        // only when one of them will show it: it is most of the work
        // between the child's death and vigil's exit.
        let logged = log::log_enabled!(target: target, level);
        if logged || self.config.termination_log.is_some() {
            let text = self.report.to_string();
            if logged {
                log::log!(target: target, level, "exit report: {text}");
            }
            if let Some(path) = &self.config.termination_log {
                report::write_termination_log(path, &text);
            }
        }
        if self.gave_terminal {
            spawn::reclaim_terminal(self.child);
        }
        std::mem::forget(self);
        status
    }
}

/// Reads the clock once, right after the child is started. musl looks up
/// the vDSO's `clock_gettime` at the first call: a search of the vDSO's
/// symbols and two page faults, about 10 µs. Done here, it overlaps the
/// child's own start-up; left to the first stop signal, it delayed the
/// forwarding of `docker stop`'s SIGTERM (bench/: first signal).
fn warm_up_clock() {
    let _ = Instant::now();
}

fn become_subreaper() {
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        log::warn!(
            "cannot register as a child subreaper: {}; orphans will not be reaped by vigil",
            std::io::Error::last_os_error()
        );
    }
}

/// `-p`: the kernel sends `signal` when vigil's parent dies. If the parent
/// died before the prctl took effect, nothing would ever come, so vigil
/// compares its parent before and after, and sends the signal itself.
fn set_parent_death_signal(signal: i32) {
    // SAFETY: getppid, prctl and kill take integer arguments only.
    unsafe {
        let parent = libc::getppid();
        if libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong, 0, 0, 0) != 0 {
            log::warn!(
                "cannot set the parent death signal: {}",
                std::io::Error::last_os_error()
            );
            return;
        }
        if libc::getppid() != parent {
            libc::kill(libc::getpid(), signal);
        }
    }
}
