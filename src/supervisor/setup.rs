//! Starting and finishing: the kernel's side of the set-up (subreaper,
//! parent-death signal), starting the child, and at the end the exit
//! report and the terminal given back.

use super::system::{Os, System};
use super::{Start, Supervisor};
use crate::cgroup::Memory;
use crate::cli::{self, Config};
use crate::facts::{HookKind, Signal};
use crate::logging::{self, Level};
use crate::procs::Role;
use crate::record::{Argv, Record};
use crate::report::{Audience, Clocks, Command, Exit, Provisional};
use crate::signals::{Inherited, SignalFd};
use crate::spawn::{self, Spawn};
use crate::text::os_error;
use crate::user;

/// Runs the command under supervision and returns vigil's exit status.
pub fn run(config: Config, inherited: Inherited) -> i32 {
    let signals = match SignalFd::open() {
        Ok(signals) => signals,
        Err(e) => {
            let error = os_error(&e);
            logging::emit(
                Level::Error,
                "start_failed",
                format_args!("cannot read signals (signalfd): {error}"),
                |r| r.field("error", error.as_str()).field("status", 1),
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
            failed_to_start("user_failed", &e.to_string(), |r| {
                e.fields(r).field("status", 1)
            });
            return Err(1);
        }
        Some(Ok(switch)) => {
            logging::emit(
                Level::Info,
                "running_as",
                format_args!("the child and the hooks run as {switch}"),
                |r| switch.fields(r),
            );
            Some(switch)
        }
        None => None,
    };
    let parent = nix::unistd::getppid().as_raw();
    if config.subreaper || role == Role::Subreaper {
        become_subreaper();
    }
    if let Some(signal) = config.parent_death_signal {
        set_parent_death_signal(signal);
    }
    warn_of_hooks(&config);
    // The memory cgroup is found (and, when vigil is not PID 1, its counts
    // read) before the child exists, so that an OOM kill in its first
    // moments is counted too.
    let memory = Memory::find(role);
    // The child and the hooks do not inherit the variables vigil read: a
    // vigil started below (an image's, under `docker run --init`) would
    // apply them again. tini's pass, as under tini.
    let unset = cli::own_variable_names();
    let gave_terminal =
        spawn::owns_terminal() && !user.as_ref().is_some_and(user::Switch::new_session);
    let spawned = spawn::spawn(
        Spawn {
            argv: &config.command,
            env: Vec::new(),
            take_terminal: gave_terminal,
            null_stdin: false,
            unset: &unset,
        },
        inherited,
        user.as_ref(),
    );
    let child = match spawned {
        Ok(child) => child,
        Err(e) => {
            // tini's child exits 126/127 after a failed exec, and `-e` maps
            // that status like any other: so does vigil's. A process that
            // could not be made at all is vigil's own failure: 1, whatever
            // `-e` says.
            let status = if e.is_fork_failure() {
                e.status()
            } else {
                config.status_after_e(e.status())
            };
            failed_to_start(e.event(), &e.to_string(), |r| {
                e.fields(r).field("status", status)
            });
            return Err(status);
        }
    };
    let started = logging::wall_clock();
    let command = Command::new(config.command.clone());
    logging::emit(
        Level::Info,
        "started",
        format_args!("started {} as pid {child}", command.text),
        |r| {
            r.field("command", Argv(&config.command))
                .field("pid", child)
        },
    );
    let (limit, oom_group) = memory
        .as_ref()
        .map_or((None, false), |m| (m.limit, m.oom_group));
    if oom_group {
        logging::emit(
            Level::Info,
            "oom_group",
            format_args!(
                "memory.oom.group is 1: an OOM kill in this container kills every process of it, vigil included"
            ),
            |r| r.opt("memory_limit", limit),
        );
    }
    // Kept up to date only where it says something: in the termination log.
    let memory_watch = memory
        .as_ref()
        .filter(|_| logging::has_termination_log())
        .and_then(Memory::watch);
    let os = Os {
        role,
        signals,
        inherited,
        memory,
        memory_watch,
        user,
        unset,
    };
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
    Ok(supervisor)
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
            logging::emit(
                Level::Warning,
                "hook_unrunnable",
                format_args!(
                    "the {} hook cannot run {:?}: {why}; it will fail when its time comes",
                    hook.as_str(),
                    program.to_string_lossy()
                ),
                |r| {
                    r.word("hook", hook.as_str())
                        .field("program", program.as_os_str())
                        .field("error", why.as_str())
                },
            );
        }
    }
    if config.post_start.is_none() && config.post_start_timeout.is_some() {
        logging::emit(
            Level::Warning,
            "post_start_timeout_unused",
            format_args!(
                "a post-start timeout is set, but no post-start hook: it has nothing to time"
            ),
            |r| r,
        );
    }
}

/// Nothing could start: one error line, which the termination log gets too
/// (the same line: a record in the structured formats).
pub(super) fn failed_to_start<'a>(
    event: &'static str,
    message: &str,
    fields: impl FnOnce(Record<'a>) -> Record<'a>,
) {
    logging::emit_final(Level::Error, event, "", &message, fields);
}

impl<S: System> Supervisor<S> {
    /// Writes the exit report and returns the exit status.
    pub(super) fn finish(mut self, status: i32) -> i32 {
        let oom_kills = self.sys.memory_events().oom_kill;
        logging::final_lines();
        // Every way to `State::Exit` goes through the child's end: the
        // ending is known.
        if let Some((ending, ended_at)) = self.ended {
            let code_expected = status == 0 && ending.status() != 0;
            let exit = Exit {
                command: std::mem::take(&mut self.command),
                pid: self.child,
                had_terminal: self.gave_terminal,
                ending,
                ended_at,
                status,
                code_expected,
                stop: self.stop.take(),
                forwards: std::mem::take(&mut self.forwards),
                grace: self.grace.take(),
                drain: self.drain.take(),
                hooks: std::mem::take(&mut self.hooks),
                orphans_reaped: self.orphans_reaped,
                oom_kills,
                oom_group: self.oom_group,
            };
            let clocks = Clocks {
                wall: logging::wall_clock(),
                now: self.sys.now(),
            };
            report_exit(&exit, clocks);
        }
        if self.gave_terminal {
            self.sys.reclaim_terminal(self.child);
        }
        self.sys.let_readers_catch_up();
        status
    }
}

impl<S: System> Supervisor<S> {
    /// Writes the provisional termination message: what the termination
    /// log says if vigil is killed before it can report.
    pub(super) fn write_provisional(&self) {
        let message = Provisional {
            command: &self.command,
            pid: self.child,
            started: self.started,
            limit: self.limit,
            oom_group: self.oom_group,
            memory: self.memory_seen,
        };
        logging::provisional("provisional", &message, |r| r.with(|o| message.fields(o)));
    }

    /// The kernel changed `memory.events`: what it counted goes into the
    /// provisional message, and into the log at `-v`.
    pub(super) fn on_memory_event(&mut self) {
        let events = self.sys.memory_events();
        if events == self.memory_seen.events {
            return;
        }
        self.memory_seen.update(events, logging::wall_clock());
        let n = |count: u64, one: &str, many: &str| {
            format!("{count} {}", if count == 1 { one } else { many })
        };
        logging::emit(
            Level::Info,
            "memory_events",
            format_args!(
                "memory events since start: memory.max reached {}, the OOM killer invoked {}, {} killed, {}",
                n(events.max, "time", "times"),
                n(events.oom, "time", "times"),
                n(events.oom_kill, "process", "processes"),
                n(events.oom_group_kill, "group kill", "group kills"),
            ),
            |r| {
                r.field("max", events.max)
                    .field("oom", events.oom)
                    .field("oom_kill", events.oom_kill)
                    .field("oom_group_kill", events.oom_group_kill)
            },
        );
        self.write_provisional();
    }
}

/// The exit report, to the log when it is due and to the termination log.
fn report_exit(exit: &Exit, clocks: Clocks) {
    let level = match exit.audience() {
        Audience::Warning => Level::Warning,
        Audience::Default => Level::Notice,
        Audience::Verbose => Level::Info,
    };
    logging::emit_final(level, "exit", "exit report: ", exit, |r| {
        r.with(|o| exit.fields(o, clocks))
    });
}

fn become_subreaper() {
    if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
        let error = os_error(&e.into());
        logging::emit(
            Level::Warning,
            "subreaper_failed",
            format_args!(
                "cannot register as a child subreaper: {error}; orphans will not be reaped by vigil"
            ),
            |r| r.field("error", error.as_str()),
        );
    }
}

/// `-p`: the kernel sends `signal` when vigil's parent dies. If the parent
/// died before the prctl took effect, nothing would ever come, so vigil
/// compares its parent before and after, and sends the signal itself.
fn set_parent_death_signal(signal: i32) {
    let parent = nix::unistd::getppid();
    if let Err(e) = crate::sys::process::set_parent_death_signal(signal) {
        let error = os_error(&e.into());
        logging::emit(
            Level::Warning,
            "parent_death_signal_failed",
            format_args!("cannot set the parent death signal: {error}"),
            |r| {
                r.field("signal", Signal(signal))
                    .field("error", error.as_str())
            },
        );
        return;
    }
    if nix::unistd::getppid() != parent {
        let _ = crate::sys::signal::kill(nix::unistd::getpid().as_raw(), signal);
    }
}
