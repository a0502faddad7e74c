//! Starting and finishing: the kernel's side of the set-up (subreaper,
//! parent-death signal), starting the child, and at the end the exit
//! report and the terminal given back.

use std::time::Instant;

use super::system::{Os, System};
use super::Supervisor;
use crate::cgroup::OomCounter;
use crate::cli::Config;
use crate::logging;
use crate::procs::Role;
use crate::report::{Audience, Report};
use crate::signals::{Inherited, SignalFd};
use crate::spawn::{self, Spawn};
use crate::termlog;
use crate::user;

/// Runs the command under supervision and returns vigil's exit status.
pub fn run(config: Config, inherited: Inherited) -> i32 {
    let signals = match SignalFd::open() {
        Ok(signals) => signals,
        Err(e) => {
            log::error!(
                "cannot read signals (signalfd): {}",
                crate::text::os_error(&e)
            );
            return 1;
        }
    };
    match start(config, inherited, signals) {
        Ok(supervisor) => supervisor.run(),
        Err(status) => status,
    }
}

/// The starting state: set up the kernel's side, start the child and the
/// post-start hook. An `Err` is the exit status when the child could not
/// be started.
fn start(config: Config, inherited: Inherited, signals: SignalFd) -> Result<Supervisor<Os>, i32> {
    let role = Role::of_this_process();
    // --user: every lookup before the first fork, so that an unknown user
    // is one line and nothing starts.
    let user = match config
        .user
        .as_ref()
        .map(|spec| user::prepare(spec, role == Role::Pid1))
    {
        Some(Err(e)) => {
            log::error!("{e}");
            if let Some(path) = &config.termination_log {
                termlog::write(path, &e.to_string(), true);
            }
            return Err(1);
        }
        Some(Ok(switch)) => {
            log::info!("the child and the hooks run as {switch}");
            Some(switch)
        }
        None => None,
    };
    // SAFETY: getppid takes no arguments and cannot fail.
    let parent = unsafe { libc::getppid() };
    if config.subreaper || role == Role::Subreaper {
        become_subreaper();
    }
    if let Some(signal) = config.parent_death_signal {
        set_parent_death_signal(signal);
    }
    warn_of_hooks(&config);
    let command = spawn::display_command(&config.command);
    let gave_terminal =
        spawn::owns_terminal() && !user.as_ref().is_some_and(user::Switch::new_session);
    let child = spawn::spawn(
        Spawn {
            argv: &config.command,
            env: Vec::new(),
            take_terminal: gave_terminal,
            null_stdin: false,
        },
        inherited,
        user.as_ref(),
    )
    .map_err(|e| {
        log::error!("{e}");
        if let Some(path) = &config.termination_log {
            termlog::write(path, &e.to_string(), true);
        }
        // tini's child exits 126/127 after a failed exec, and `-e` maps
        // that status like any other: so does vigil's. A process that could
        // not be made at all is vigil's own failure: 1, whatever `-e` says.
        if e.is_fork_failure() {
            e.status()
        } else {
            config.status_after_e(e.status())
        }
    })?;
    log::info!("started {command} as pid {child}");
    warm_up_clock();
    let os = Os {
        role,
        signals,
        inherited,
        oom: OomCounter::start(role),
        user,
    };
    let report = Report {
        command,
        child_pid: child,
        child_had_terminal: gave_terminal,
        grace_period: config.grace_period,
        ..Report::default()
    };
    let mut supervisor = Supervisor::new(config, os, child, report);
    supervisor.gave_terminal = gave_terminal;
    supervisor.parent = parent;
    supervisor.start_post_start();
    Ok(supervisor)
}

/// Mistakes in the hooks that need not stop vigil, said at start rather
/// than when the hook's time comes: a program that cannot run, a timeout
/// with no hook to time.
fn warn_of_hooks(config: &Config) {
    for (hook, argv) in [
        ("post-start", &config.post_start),
        ("pre-stop", &config.pre_stop),
    ] {
        let Some(program) = argv.as_ref().and_then(|argv| argv.first()) else {
            continue;
        };
        if let Some(why) = spawn::unrunnable(program) {
            log::warn!(
                "the {hook} hook cannot run {:?}: {why}; it will fail when its time comes",
                program.to_string_lossy()
            );
        }
    }
    if config.post_start.is_none() && config.post_start_timeout.is_some() {
        log::warn!("a post-start timeout is set, but no post-start hook: it has nothing to time");
    }
}

impl<S: System> Supervisor<S> {
    /// Writes the exit report and returns the exit status.
    ///
    /// The supervisor is not dropped: vigil is about to exit, and the kernel
    /// frees the memory and closes the signalfd then anyway. Doing it here
    /// would put a `munmap` (the allocator giving back a page) and a `close`
    /// between the child's death and vigil's exit, which is when the
    /// container's runtime is waiting for it.
    pub(super) fn finish(mut self, status: i32) -> i32 {
        if let Some(ending) = self.report.ending {
            self.report.code_expected = self.exit_status(ending) == 0 && ending.status() != 0;
        }
        self.report.oom_kills = self.sys.oom_kills();
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
                termlog::write(path, &text, logged);
            }
        }
        if self.gave_terminal {
            self.sys.reclaim_terminal(self.child);
        }
        self.sys.let_readers_catch_up();
        std::mem::forget(self);
        status
    }
}

/// Reads the clock once, right after the child is started: musl looks up
/// the vDSO's `clock_gettime` at the first call (a search of its symbols
/// and page faults). Done here, it overlaps the child's own start-up; left
/// to the first stop signal, it delayed the forwarding of `docker stop`'s
/// SIGTERM (docs/benchmarks.md: first signal).
fn warm_up_clock() {
    let _ = Instant::now();
}

fn become_subreaper() {
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        log::warn!(
            "cannot register as a child subreaper: {}; orphans will not be reaped by vigil",
            crate::text::os_error(&std::io::Error::last_os_error())
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
                crate::text::os_error(&std::io::Error::last_os_error())
            );
            return;
        }
        if libc::getppid() != parent {
            libc::kill(libc::getpid(), signal);
        }
    }
}
