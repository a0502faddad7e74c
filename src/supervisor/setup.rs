//! Starting and finishing: the kernel's side of the set-up (subreaper,
//! parent-death signal), starting the child, and at the end the exit
//! report and the terminal given back.

use super::system::{Os, System};
use super::{Start, Supervisor};
use nix::unistd::Pid;

use crate::caps;
use crate::cgroup::Memory;
use crate::cli::{self, Config};
use crate::log;
use crate::log::event::Event;
use crate::log::facts::{Command, HookKind, Signal};
use crate::log::report::{Clocks, Exit};
use crate::notify::{self, Notifier};
use crate::procs::Role;
use crate::signals::{Inherited, SignalFd};
use crate::spawn::{self, Spawn};
use crate::text::os_error;
use crate::user;

/// Runs the command under supervision and returns vigil's exit status.
pub fn run(config: Config, inherited: Inherited) -> i32 {
    let started = open_signals().and_then(|signals| start(config, inherited, signals));
    // Never dropped: vigil exits as soon as this returns, and the kernel
    // closes its descriptors and frees its memory at once, so closing and
    // unmapping them one by one would only delay the exit.
    let mut supervisor = match started {
        Ok(supervisor) => std::mem::ManuallyDrop::new(supervisor),
        Err(status) => return status,
    };
    supervisor.run();
    let status = supervisor.finish();
    if supervisor.gave_terminal {
        spawn::reclaim_terminal(supervisor.child);
    }
    log::let_readers_catch_up();
    status
}

/// The signalfd that every signal comes through; without it vigil could
/// see none, so it does not start (`Err`: the exit status, 1).
pub(super) fn open_signals() -> Result<SignalFd, i32> {
    SignalFd::open().map_err(|e| {
        let error = os_error(&e);
        log::emit(&Event::StartFailed {
            what: "read signals (signalfd)",
            error: &error,
            status: 1,
        });
        1
    })
}

/// The starting state, step by step: whom the child runs as, the kernel's
/// side, the child, the memory cgroup's watch, then the post-start hook.
/// An `Err` is the exit status when the child could not be started.
fn start(config: Config, inherited: Inherited, signals: SignalFd) -> Result<Supervisor<Os>, i32> {
    let role = Role::of_this_process();
    if role == Role::Pid1 {
        crate::procs::keep_root();
    }
    let caps = prepare_caps(&config)?;
    let user = prepare_user(&config, role)?;
    let parent = nix::unistd::getppid();
    kernel_side(&config, role);
    warn_of_hooks(&config);
    // The memory cgroup is found (and, when vigil is not PID 1, its counts
    // read) before the child exists, so that an OOM kill in its first
    // moments is counted too.
    let memory = Memory::find(role);
    // The child and the hooks do not inherit the variables vigil read: a
    // vigil started below (an image's, under `docker run --init`) would
    // apply them again. tini's pass, as under tini.
    let mut unset = cli::own_variable_names();
    // With --ready-when, vigil answers the service manager for the child:
    // the child must not tell it something else. Without, the socket is
    // the child's, as ever.
    let notifier = config.ready_when.as_ref().and_then(|_| {
        unset.push(notify::VARIABLE);
        // A warning when it names no socket vigil can send to.
        Notifier::from_env(std::env::var_os(notify::VARIABLE)).unwrap_or_else(|why| {
            log::emit(&Event::NotifySocketUnusable { error: &why });
            None
        })
    });
    // Socket activation: the child owns the sockets.
    let activated = spawn::socket_activated();
    let gave_terminal =
        spawn::owns_terminal() && !user.as_ref().is_some_and(user::Switch::new_session);
    let mut os = Os {
        role,
        memory,
        memory_watch: None,
        user,
        caps,
        unset,
        notifier,
        probe: None,
        signals,
        inherited,
    };
    let child = start_child(&config, &mut os, activated, gave_terminal)?;
    // A hook is not the sockets' owner: it gets none of the variables that
    // would say it is.
    if activated {
        os.unset.extend(spawn::LISTEN_VARIABLES);
    }
    let started = log::wall_clock();
    let command = Command::new(config.command.clone());
    let (limit, oom_group) = os
        .memory
        .as_ref()
        .map_or((None, false), |m| (m.limit, m.oom_group));
    // Kept up to date only where it says something: in the termination log.
    os.memory_watch = os
        .memory
        .as_ref()
        .filter(|_| log::has_termination_log())
        .and_then(Memory::watch);
    let start = Start {
        child,
        parent,
        gave_terminal,
        command,
        started,
        limit,
        oom_group,
    };
    let mut supervisor = Supervisor::new(config, os, start);
    supervisor.write_provisional();
    supervisor.start_post_start();
    follow_user(&mut supervisor.sys);
    Ok(supervisor)
}

/// vigil takes the child's identity itself when it could not signal it
/// otherwise (`user::Switch::follows`): once the child and the post-start
/// hook have started, nothing that needs root is left. The pre-stop hook
/// then starts as what vigil is, with the capabilities it holds.
fn follow_user(os: &mut Os) {
    let Some(user) = os.user.as_mut().filter(|u| u.follows()) else {
        return;
    };
    match user.follow(os.caps.as_ref().map(caps::Narrowing::plan)) {
        Ok(uid) => {
            os.caps = None;
            log::emit(&Event::FollowingUser { uid });
        }
        Err((uid, error)) => {
            let error = error.desc();
            log::emit(&Event::CannotSignalUser { uid, error });
        }
    }
}

/// `--caps`: every check before the first fork, so that a capability vigil
/// cannot give is one line and nothing starts; before `--user`'s, whose
/// warning that CAP_KILL is missing would be beside the point then. An
/// `Err` is the exit status.
fn prepare_caps(config: &Config) -> Result<Option<caps::Narrowing>, i32> {
    let Some(set) = config.caps else {
        return Ok(None);
    };
    let narrowing = caps::prepare(set, config.user.is_some()).map_err(|error| {
        log::emit_final(&Event::CapsFailed {
            error: &error,
            status: 1,
        });
        1
    })?;
    log::emit(&Event::Capabilities { caps: &narrowing });
    Ok(Some(narrowing))
}

/// `--user`: every lookup before the first fork, so that an unknown user
/// is one line and nothing starts. An `Err` is the exit status.
fn prepare_user(config: &Config, role: Role) -> Result<Option<user::Switch>, i32> {
    let Some(spec) = &config.user else {
        return Ok(None);
    };
    let switch = user::prepare(spec, role == Role::Pid1).map_err(|error| {
        log::emit_final(&Event::UserFailed {
            error: &error,
            status: 1,
        });
        1
    })?;
    log::emit(&Event::RunningAs { user: &switch });
    Ok(Some(switch))
}

/// Starts the child, as the hooks are started later (`Os::spawn`); an
/// `Err` is the exit status when it could not start. `activated`: socket
/// activation, where the child gets its own pid as `LISTEN_PID`.
/// tini's child exits 126/127 after a failed exec, and `-e` maps that
/// status like any other: so does vigil's. A process that could not be
/// made at all is vigil's own failure: 1, whatever `-e` says.
fn start_child(
    config: &Config,
    os: &mut Os,
    activated: bool,
    take_terminal: bool,
) -> Result<Pid, i32> {
    let spec = Spawn {
        argv: &config.command,
        env: Vec::new(),
        take_terminal,
        null_stdin: false,
        unset: &[],
        own_pid: activated.then_some(spawn::LISTEN_VARIABLES[0]),
    };
    os.spawn(spec).map_err(|e| {
        let status = if e.is_fork_failure() {
            e.status()
        } else {
            config.status_after_e(e.status())
        };
        log::emit_final(&e.event(status));
        status
    })
}

/// Mistakes in the hooks that need not stop vigil, said at start rather
/// than when the hook's time comes: a program that cannot run, a timeout
/// with no hook to time.
fn warn_of_hooks(config: &Config) {
    for (hook, argv) in [
        (HookKind::PostStart, &config.post_start),
        (HookKind::PreStop, &config.pre_stop),
    ] {
        let Some(program) = argv.as_ref().and_then(|argv| argv.first()) else {
            continue;
        };
        if let Some(why) = spawn::unrunnable(program) {
            log::emit(&Event::HookUnrunnable {
                hook,
                program,
                error: &why,
            });
        }
    }
    if config.ready_when.is_none() && config.ready_timeout.is_some() {
        log::emit(&Event::ReadyTimeoutUnused {});
    }
    if config.post_start.is_none() && config.post_start_timeout.is_some() {
        log::emit(&Event::PostStartTimeoutUnused {});
    }
    if config.probe_timeout_unused {
        log::emit(&Event::ProbeTimeoutUnused {});
    }
}

impl<S: System> Supervisor<S> {
    /// Writes the exit report and returns the exit status, which the
    /// report works out (`report::Exit::status`).
    pub(super) fn finish(&mut self) -> i32 {
        log::final_lines();
        // Every way to `State::Exit` goes through the child's end: the
        // ending is known.
        let Some(exit) = self.exit() else {
            return 0;
        };
        let clocks = Clocks {
            wall: log::wall_clock(),
            now: self.sys.now(),
        };
        // The exit report, to the log when it is due and to the termination
        // log.
        log::emit_final(&Event::Exit {
            report: &exit.at(clocks),
            level: exit.level(),
        });
        exit.status()
    }

    /// How the child ended and what vigil makes of it, once it has ended.
    pub(super) fn exit(&self) -> Option<Exit<'_>> {
        let oom_kills = self.sys.memory_events().oom_kill;
        let config = &self.config;
        self.ledger
            .exit(&config.exit_codes, &config.expected_codes, oom_kills)
    }

    /// Writes the provisional termination message: what the termination
    /// log says if vigil is killed before it can report.
    pub(super) fn write_provisional(&self) {
        if let Some(message) = self.ledger.provisional() {
            log::provisional(&Event::Provisional { message: &message });
        }
    }

    /// The kernel changed `memory.events`: what it counted goes into the
    /// provisional message, and into the log at `-v`.
    pub(super) fn on_memory_event(&mut self) {
        let events = self.sys.memory_events();
        if self.ledger.memory_events() == events {
            return;
        }
        let at = log::wall_clock();
        self.say(Event::MemoryEventsSeen { events, at });
        self.write_provisional();
    }
}

/// The kernel's side: a subreaper when asked or when not PID 1 (so that
/// orphans still come to vigil), and `-p`'s parent-death signal.
pub(super) fn kernel_side(config: &Config, role: Role) {
    if (config.subreaper || role == Role::Subreaper)
        && let Err(e) = nix::sys::prctl::set_child_subreaper(true)
    {
        log::emit(&Event::SubreaperFailed { error: e.desc() });
    }
    if let Some(signal) = config.parent_death_signal {
        set_parent_death_signal(signal);
    }
}

/// `-p`: the kernel sends `signal` when vigil's parent dies. If the parent
/// died before the prctl took effect, nothing would ever come, so vigil
/// compares its parent before and after, and sends the signal itself.
fn set_parent_death_signal(signal: Signal) {
    let parent = nix::unistd::getppid();
    if let Err(e) = crate::sys::process::set_parent_death_signal(signal.0) {
        log::emit(&Event::ParentDeathSignalFailed {
            signal,
            error: e.desc(),
        });
        return;
    }
    if nix::unistd::getppid() != parent {
        let _ = crate::sys::signal::kill(nix::unistd::getpid().as_raw(), signal.0);
    }
}
