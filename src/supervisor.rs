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
//! (SIGCHLD included) or a deadline passing. The loop sleeps in `poll` on
//! the signalfd with no timeout unless a deadline is pending, so an idle
//! vigil never wakes up. "What happens on SIGTERM" is `on_stop_signal`.

use std::time::{Duration, Instant};

use crate::cgroup::OomCounter;
use crate::cli::Config;
use crate::hooks::{self, HookKind, KillReason};
use crate::procs;
use crate::reap::{self, Ending, Event, Next};
use crate::report::{self, secs, Report, Stop, StopCause};
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

/// The steps of the stop sequence, in order.
#[derive(Debug)]
enum StopPhase {
    /// The pre-stop hook runs; the stop signal waits for it.
    PreStop,
    /// `--pre-stop-sleep`: the stop signal waits until then.
    Sleeping(Instant),
    /// The stop signal was forwarded (or the grace deadline overtook the
    /// sequence); the child is expected to exit.
    Forwarded,
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

struct Supervisor {
    config: Config,
    inherited: Inherited,
    is_pid1: bool,
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
    /// Read at start only when vigil is not PID 1 (see `cgroup`).
    oom: Option<OomCounter>,
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
    match Supervisor::start(config, inherited) {
        Ok(supervisor) => supervisor.run(signals),
        Err(status) => status,
    }
}

impl Supervisor {
    /// The starting state: set up the kernel's side, start the child and the
    /// post-start hook. An `Err` is the exit status when the child could not
    /// be started.
    fn start(config: Config, inherited: Inherited) -> Result<Supervisor, i32> {
        let is_pid1 = std::process::id() == 1;
        if config.subreaper || !is_pid1 {
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
        let child = spawn::spawn(
            Spawn {
                argv: &config.command,
                env: Vec::new(),
                take_terminal: spawn::owns_terminal(),
                null_stdin: false,
            },
            inherited,
        )
        .map_err(|e| {
            log::error!("{e}");
            if let Some(path) = &config.termination_log {
                report::write_termination_log(path, &e.to_string());
            }
            e.status()
        })?;
        log::info!("started {command} as pid {child}");
        let oom = if is_pid1 { None } else { OomCounter::open() };
        let report = Report {
            command,
            child_pid: child,
            grace_period: config.grace_period,
            drain_timeout: config.drain_timeout,
            ..Report::default()
        };
        let mut supervisor = Supervisor {
            config,
            inherited,
            is_pid1,
            child,
            state: State::Running,
            grace: Grace::NotStarted,
            post_start: None,
            pre_stop: None,
            job_stopped: false,
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
        let timeout = self.config.post_start_timeout;
        match hooks::start(
            HookKind::PostStart,
            argv,
            self.child,
            None,
            timeout,
            self.inherited,
        ) {
            Ok(hook) => self.post_start = Some(hook),
            Err(record) => self.post_start_failed(record),
        }
    }

    fn post_start_failed(&mut self, record: hooks::Record) {
        log::warn!("{record}; stopping as if SIGTERM had arrived");
        self.report.hooks.push(record);
        if let State::Running = self.state {
            self.begin_stop(StopCause::PostStartFailed, libc::SIGTERM);
        }
    }

    /// The event loop: wait for a signal or the next deadline, handle it,
    /// until the state is `Exit`. The signalfd is the loop's, not the supervisor's: the signals read
    /// into its buffer are handled while it is still borrowed.
    fn run(mut self, mut signals: SignalFd) -> i32 {
        loop {
            if let State::Exit(status) = self.state {
                return self.finish(status);
            }
            let timeout = self
                .next_deadline()
                .map(|at| at.saturating_duration_since(Instant::now()));
            match signals.wait(timeout) {
                Ok(batch) => batch.for_each(|r| self.on_signal(r)),
                Err(e) => log::error!("reading signals failed: {e}"),
            }
            self.on_time(Instant::now());
        }
    }

    /// The earliest pending deadline; `None` means sleep until a signal.
    fn next_deadline(&self) -> Option<Instant> {
        let grace = match self.grace {
            Grace::Until(at) => Some(at),
            _ => None,
        };
        let phase = match &self.state {
            State::Stopping {
                phase: StopPhase::Sleeping(at),
                ..
            } => Some(*at),
            State::Draining {
                phase: DrainPhase::Terminating(at),
                ..
            } => Some(*at),
            _ => None,
        };
        let post_start = self.post_start.as_ref().and_then(|h| h.deadline);
        [grace, phase, post_start].into_iter().flatten().min()
    }

    fn on_signal(&mut self, r: Received) {
        if r.signal == libc::SIGPIPE && r.sender == Sender::Vigil {
            // vigil's own write to a closed pipe (its stderr, most likely):
            // not news for the child, and not to be logged, since logging it
            // to that same pipe would raise the next one.
            return;
        }
        if r.signal == libc::SIGCHLD {
            log::trace!("received SIGCHLD {}", r.sender);
        } else {
            log::info!("received {} {}", signals::name(r.signal), r.sender);
        }
        match r.signal {
            libc::SIGCHLD => self.reap(),
            // Ignored, as tini does. Being blocked, they still reach the
            // signalfd: the kernel discards an ignored signal only when it
            // is not blocked.
            libc::SIGTTIN | libc::SIGTTOU => {}
            libc::SIGCONT if self.job_stopped => self.resume_job(),
            libc::SIGTERM | libc::SIGINT => self.on_stop_signal(r),
            signal => {
                self.forward(signal);
            }
        }
    }

    /// SIGTERM or SIGINT: the first one starts the stop sequence; later
    /// ones are forwarded at once.
    fn on_stop_signal(&mut self, r: Received) {
        match self.state {
            State::Running => self.begin_stop(StopCause::signal(r), r.signal),
            State::Stopping { .. } => {
                self.forward(r.signal);
            }
            State::Draining { .. } | State::Exit(_) => {
                log::debug!(
                    "already draining; {} changes nothing",
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

    /// Forwards a signal to the child (or its group), after `--rewrite`.
    /// Returns what was sent.
    fn forward(&self, signal: i32) -> Option<i32> {
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
                Some(to)
            }
            None => {
                log::info!("dropped {} (--rewrite)", signals::name(signal));
                None
            }
        }
    }

    /// Starts the stop sequence: grace deadline, cancel post-start, pre-stop
    /// hook, pre-stop sleep, then the stop signal.
    fn begin_stop(&mut self, cause: StopCause, signal: i32) {
        let now = Instant::now();
        self.report.stop = Some(Stop { cause, at: now });
        if let Some(period) = self.config.grace_period {
            self.grace = Grace::Until(now + period);
            log::info!("stopping: grace period {}", secs(period));
        } else {
            log::info!("stopping");
        }
        if let Some(hook) = &mut self.post_start {
            hook.kill(KillReason::Cancelled);
        }
        let phase = match &self.config.pre_stop {
            Some(argv) => {
                match hooks::start(
                    HookKind::PreStop,
                    argv,
                    self.child,
                    Some(signal),
                    None,
                    self.inherited,
                ) {
                    Ok(hook) => {
                        self.pre_stop = Some(hook);
                        StopPhase::PreStop
                    }
                    Err(record) => {
                        log::warn!("{record}; going on with the stop");
                        self.report.hooks.push(record);
                        self.sleep_or_send(signal)
                    }
                }
            }
            None => self.sleep_or_send(signal),
        };
        self.state = State::Stopping { signal, phase };
    }

    /// After pre-stop: wait `--pre-stop-sleep`, or send the stop signal now.
    fn sleep_or_send(&mut self, signal: i32) -> StopPhase {
        let sleep = self.config.pre_stop_sleep;
        if sleep > Duration::ZERO {
            log::info!(
                "waiting {} before forwarding {}",
                secs(sleep),
                signals::name(signal)
            );
            StopPhase::Sleeping(Instant::now() + sleep)
        } else {
            self.send_stop_signal(signal)
        }
    }

    fn send_stop_signal(&mut self, signal: i32) -> StopPhase {
        // The state is Running or Stopping here, so forward() sends.
        self.report.stop_signal_sent = self.forward(signal);
        StopPhase::Forwarded
    }

    /// Reaps everything that has exited (SIGCHLDs coalesce: loop until the
    /// kernel has nothing more).
    fn reap(&mut self) {
        loop {
            match reap::next(!self.is_pid1) {
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
                        procs::signal_all(libc::SIGKILL, &self.known_groups());
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
        if let Ending::Killed {
            signal: libc::SIGKILL,
            ..
        } = ending
        {
            self.report.sigkill_seen = true;
        }
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
            signal,
            phase: StopPhase::PreStop,
        } = self.state
        {
            let phase = self.sleep_or_send(signal);
            self.state = State::Stopping { signal, phase };
        }
    }

    /// The child is gone: drain what it left behind.
    fn child_ended(&mut self, ending: Ending) {
        log::info!("child pid {} {ending}", self.child);
        self.report.ending = Some(ending);
        self.report.ended_at = Some(Instant::now());
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
            procs::signal_all(libc::SIGKILL, &self.known_groups());
            DrainPhase::Killing
        } else {
            let left = procs::signal_all(libc::SIGTERM, &self.known_groups());
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

    fn exit_status(&mut self, ending: Ending) -> i32 {
        match ending {
            Ending::Exited(code) if self.config.expected_codes.contains(&code) => {
                self.report.code_expected = true;
                0
            }
            ending => ending.status(),
        }
    }

    /// Deadlines: grace period, post-start timeout, pre-stop sleep, drain.
    fn on_time(&mut self, now: Instant) {
        if let State::Exit(_) = self.state {
            return;
        }
        if matches!(self.grace, Grace::Until(at) if now >= at) {
            self.grace_expired();
        }
        if let Some(hook) = &mut self.post_start {
            if hook.deadline.is_some_and(|at| now >= at) {
                log::warn!("post-start hook pid {} timed out: killing it", hook.pid);
                hook.kill(KillReason::TimedOut);
            }
        }
        match self.state {
            State::Stopping {
                signal,
                phase: StopPhase::Sleeping(at),
            } if now >= at => {
                let phase = self.send_stop_signal(signal);
                self.state = State::Stopping { signal, phase };
            }
            State::Draining {
                ending,
                phase: DrainPhase::Terminating(at),
            } if now >= at => {
                let why = format!("drain timeout ({}) over", secs(self.config.drain_timeout));
                let left = self.kill_everything_left(&why, &self.known_groups());
                self.report.drain_killed = Some(left);
                self.state = State::Draining {
                    ending,
                    phase: DrainPhase::Killing,
                };
            }
            _ => {}
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
            hook.kill(KillReason::TimedOut);
        }
        let period = self.config.grace_period.unwrap_or_default();
        let why = format!("grace period ({}) over", secs(period));
        let victims = self.kill_everything_left(&why, &groups);
        self.report.grace_killed = Some(victims);
        match self.state {
            // The stop sequence is overtaken: no stop signal after SIGKILL.
            State::Stopping { signal, .. } => {
                self.state = State::Stopping {
                    signal,
                    phase: StopPhase::Forwarded,
                }
            }
            State::Draining { ending, .. } => {
                self.state = State::Draining {
                    ending,
                    phase: DrainPhase::Killing,
                }
            }
            State::Running | State::Exit(_) => {}
        }
    }

    /// A deadline passed: SIGKILL to everything left, and a warning that
    /// lists it (pid and name) and says which deadline it was.
    fn kill_everything_left(&self, why: &str, groups: &[Target]) -> Vec<procs::Proc> {
        let left = procs::signal_all(libc::SIGKILL, groups);
        if left.is_empty() {
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
    fn finish(mut self, status: i32) -> i32 {
        if self.report.sigkill_seen {
            let oom = match self.oom.take() {
                Some(counter) => Some(counter),
                None if self.is_pid1 => OomCounter::open_from_zero(),
                None => None,
            };
            self.report.oom_kills = oom.map_or(0, |counter| counter.kills_since_start());
        }
        self.report.status = status;
        if self.report.abnormal() {
            log::warn!("exit report: {}", self.report);
        } else {
            log::info!("exit report: {}", self.report);
        }
        if let Some(path) = &self.config.termination_log {
            report::write_termination_log(path, &self.report.to_string());
        }
        status
    }
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
