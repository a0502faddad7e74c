//! Everything vigil says, one row per event: its name in the records, its
//! level, the words of its text line and the fields of its record, all
//! from the one variant that holds its facts. A call site says what
//! happened, `log::emit(&Event::ChildEnded { pid, ending })`, and the
//! logger alone knows the format.
//!
//! The text line is the variant's `Display`, which is also the record's
//! `msg`; the record's fields come from the same variant, so neither can
//! say what the other does not. docs/logging-schema.json lists the same
//! events and fields, and the tests hold this table to it.
//!
//! The facts are plain data (`facts`, `report`) or, for the few things only
//! a runtime module can describe (a failed spawn, a `--user` lookup), a
//! `&dyn Fact`: their words and their fields side by side where they are
//! defined. So this module stands below every module that logs.

use std::ffi::OsStr;
use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::unistd::Pid;

use crate::log::facts::hook::Record as HookRecord;
use crate::log::facts::process::{self, Running, Shell};
use crate::log::facts::stop::{DrainKill, Grace, NotSent, StopCause};
use crate::log::facts::{Command, Ending, HookKind, MemoryEvents, Named, Proc, Signal, Target};
use crate::log::format::{Argv, Fields, Obj, Timestamp};
use crate::text::{Count, duration, secs};

pub use crate::log::format::Level;

/// Something a runtime module describes, both ways: its words for the text
/// line and its fields for the record.
pub trait Fact: fmt::Display + Fields {}

impl<T: fmt::Display + Fields> Fact for T {}

/// Declares `Event` from its rows. Each row is
///
/// ```text
/// /// doc
/// "record_name" Variant { field: Type, ... }
///     => level, ("text line", args...),
///     |o| the record's fields, added to `o`;
/// ```
///
/// The level, the text and the fields see the variant's fields by
/// reference, under their own names.
macro_rules! events {
    ($(
        $(#[doc = $doc:literal])*
        $name:literal $variant:ident { $($field:ident : $ty:ty),* $(,)? }
            => $level:expr, ($($text:tt)+),
            |$o:ident| $fields:expr;
    )*) => {
        /// One thing vigil says; see the module's doc.
        pub enum Event<'a> {
            $($(#[doc = $doc])* $variant { $($field: $ty),* },)*
        }

        impl Event<'_> {
            /// Every event's name, in the table's order.
            #[cfg(test)]
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// The event's name in records (`"event": "child_ended"`).
            pub fn name(&self) -> &'static str {
                match self {
                    $(Event::$variant { .. } => $name,)*
                }
            }

            /// The event's level.
            #[allow(unused_variables)]
            pub fn level(&self) -> Level {
                match self {
                    $(Event::$variant { $($field),* } => $level,)*
                }
            }

        }

        /// The event's facts, in its record.
        impl Fields for Event<'_> {
            #[allow(unused_variables)]
            fn fields<'r>(&'r self, o: &mut Obj<'_, 'r>) {
                match self {
                    $(Event::$variant { $($field),* } => {
                        let $o = o;
                        let _ = $fields;
                    })*
                }
            }
        }

        /// The text line's words, after `vigil: ` and the level's tag; the
        /// record's `msg`.
        impl fmt::Display for Event<'_> {
            #[allow(unused_variables)]
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $(Event::$variant { $($field),* } => write!(f, $($text)+),)*
                }
            }
        }
    };
}

events! {
    // How vigil ends, and the termination log.

    /// The exit report: how the child ended and why (`report::Exit`, as
    /// written at the end).
    "exit" Exit { report: &'a dyn Fact, level: Level }
        => *level, ("{report}"),
        |o| o.flatten(*report);
    /// The command line or a `VIGIL_*` variable is wrong.
    "usage_error" UsageError { message: &'a str, status: i32 }
        => Level::Error, ("{message}"),
        |o| o.field("status", *status);
    /// vigil could not set itself up (block or read signals).
    "start_failed" StartFailed { what: &'static str, error: &'a str, status: i32 }
        => Level::Error, ("cannot {what}: {error}"),
        |o| o.field("error", *error).field("status", *status);
    /// vigil is installed setuid or setgid, and refuses to run.
    "setid_refused" SetidRefused { refusal: &'a dyn Fact, status: i32 }
        => Level::Error, ("{refusal}"),
        |o| o.flatten(*refusal).field("status", *status);
    /// The child's exec failed (126, 127).
    "exec_failed" ExecFailed { failure: &'a dyn Fact, status: i32 }
        => Level::Error, ("{failure}"),
        |o| o.flatten(*failure).field("status", *status);
    /// No process could be made for the child, or a call of vigil's own
    /// failed before it ran.
    "fork_failed" ForkFailed { failure: &'a dyn Fact, status: i32 }
        => Level::Error, ("{failure}"),
        |o| o.flatten(*failure).field("status", *status);
    /// The `--user` switch failed in the forked child.
    "user_switch_failed" UserSwitchFailed { failure: &'a dyn Fact, status: i32 }
        => Level::Error, ("{failure}"),
        |o| o.flatten(*failure).field("status", *status);
    /// A `--caps` step failed in the forked child.
    "caps_switch_failed" CapsSwitchFailed { failure: &'a dyn Fact, status: i32 }
        => Level::Error, ("{failure}"),
        |o| o.flatten(*failure).field("status", *status);
    /// `--caps` names capabilities vigil cannot give the child.
    "caps_failed" CapsFailed { error: &'a dyn Fact, status: i32 }
        => Level::Error, ("{error}"),
        |o| o.flatten(*error).field("status", *status);
    /// A process started, but whether its exec worked could not be read.
    "exec_unconfirmed" ExecUnconfirmed { program: &'a OsStr, pid: Pid, error: &'a str }
        => Level::Warning,
        ("cannot tell whether {:?} (pid {pid}) started: reading its exec's outcome failed: {error}; if its exec failed, it exits with 127 (not found) or 126",
            program.to_string_lossy()),
        |o| o.field("program", *program).field("pid", *pid).field("error", *error);
    /// `--user` names a user vigil cannot become.
    "user_failed" UserFailed { error: &'a dyn Fact, status: i32 }
        => Level::Error, ("{error}"),
        |o| o.flatten(*error).field("status", *status);
    /// The termination log could not be written.
    "termination_log_failed" TerminationLogFailed { path: &'a Path, error: &'a str, unread: bool }
        => Level::Warning,
        ("could not write the termination log {}: {}", path.display(),
            if *unread { "nobody reads it (a FIFO without a reader, or a full one)" } else { error }),
        |o| o.field("path", *path).field("error", *error).field("unread", *unread);
    /// The termination log is vigil's stderr, which has the report already.
    "termination_log_skipped" TerminationLogSkipped { path: &'a Path }
        => Level::Debug,
        ("the termination log {} is vigil's stderr, which has the report already", path.display()),
        |o| o.field("path", *path);
    /// What the termination log says if vigil is killed before it can
    /// report (`report::Provisional`).
    "provisional" Provisional { message: &'a dyn Fact }
        => Level::Error, ("{message}"),
        |o| o.flatten(*message);

    // Start-up.

    /// A `VIGIL_*` variable that is no option of vigil's.
    "unknown_variable" UnknownVariable { variable: &'a str, meant: Option<&'static str> }
        => Level::Warning,
        ("{variable} is not a vigil variable and is ignored{}", fmt::from_fn(|f| match meant {
            Some(known) => write!(f, ": did you mean {known}?"),
            None => f.write_str(" (vigil --help lists them)"),
        })),
        |o| o.field("variable", *variable).opt("meant", *meant);
    /// `PR_SET_CHILD_SUBREAPER` failed.
    "subreaper_failed" SubreaperFailed { error: &'a str }
        => Level::Warning,
        ("cannot register as a child subreaper: {error}; orphans will not be reaped by vigil"),
        |o| o.field("error", *error);
    /// `-p` could not be set.
    "parent_death_signal_failed" ParentDeathSignalFailed { signal: Signal, error: &'a str }
        => Level::Warning, ("cannot set the parent death signal: {error}"),
        |o| o.field("signal", *signal).field("error", *error);
    /// A hook's program cannot run; the hook will fail when its time comes.
    "hook_unrunnable" HookUnrunnable { hook: HookKind, program: &'a OsStr, error: &'a str }
        => Level::Warning,
        ("the {} hook cannot run {:?}: {error}; it will fail when its time comes",
            hook.as_str(), program.to_string_lossy()),
        |o| o.word("hook", hook.as_str()).field("program", *program).field("error", *error);
    /// vigil lacks CAP_KILL for the user the child runs as, and took that
    /// uid itself so that it can signal the child.
    "following_user" FollowingUser { uid: u32 }
        => Level::Info,
        ("vigil lacks CAP_KILL: it takes the child's uid {uid} too, so that it can signal it"),
        |o| o.field("uid", *uid);
    /// vigil lacks CAP_KILL for the user the child runs as, and could not
    /// take that uid either.
    "cannot_signal_user" CannotSignalUser { uid: u32, error: &'a str }
        => Level::Warning,
        ("vigil lacks CAP_KILL, so it cannot signal uid {uid}, and cannot take that uid itself ({error}): signals will not be forwarded to the child, and neither a grace period nor the drain can end it (keep CAP_KILL, or run without --user)"),
        |o| o.field("uid", *uid).field("error", *error);
    /// `--post-start-timeout` without a post-start hook.
    "post_start_timeout_unused" PostStartTimeoutUnused {}
        => Level::Warning,
        ("a post-start timeout is set, but no post-start hook: it has nothing to time"),
        |o| o;
    /// Whom the child and the hooks run as (`--user`).
    "running_as" RunningAs { user: &'a dyn Fact }
        => Level::Info, ("the child and the hooks run as {user}"),
        |o| o.flatten(*user);
    /// What the child and the hooks hold (`--caps`).
    "capabilities" Capabilities { caps: &'a dyn Fact }
        => Level::Info, ("the child and the hooks hold {caps}"),
        |o| o.flatten(*caps);
    /// The child started, `at`; what the report and the provisional
    /// message say of the container from then on: its memory limit,
    /// whether an OOM kill takes the whole group, whether the child was
    /// given the terminal.
    "started" Started {
        command: &'a Command,
        pid: Pid,
        limit: Option<u64>,
        oom_group: bool,
        terminal: bool,
        at: Timestamp,
    }
        => Level::Info, ("started {} as pid {pid}", command.text),
        |o| o.field("command", Argv(&command.argv)).field("pid", *pid);
    /// `memory.oom.group` is 1: an OOM kill takes vigil too.
    "oom_group" OomGroup { memory_limit: Option<u64> }
        => Level::Info,
        ("memory.oom.group is 1: an OOM kill in this container kills every process of it, vigil included"),
        |o| o.opt("memory_limit", *memory_limit);
    /// The memory cgroup's OOM-kill counter, read at start when vigil is
    /// not PID 1.
    "oom_counter" OomCounter { path: &'a Path, oom_kills: u64 }
        => Level::Debug, ("OOM kills so far in {}: {oom_kills}", path.display()),
        |o| o.field("path", *path).field("oom_kills", *oom_kills);

    // Hooks.

    /// A hook started.
    "hook_started" HookStarted { hook: HookKind, pid: Pid }
        => Level::Info, ("{} hook started: pid {pid}", hook.as_str()),
        |o| o.word("hook", hook.as_str()).field("pid", *pid);
    /// A hook ended, well or not, and what vigil does about it.
    "hook_ended" HookEnded { record: &'a HookRecord, then: AfterHook }
        => if record.failed() { Level::Warning } else { Level::Info },
        ("{record}{then}"),
        |o| o.flatten(*record);
    /// The post-start hook outlived `--post-start-timeout`.
    "post_start_timed_out" PostStartTimedOut { pid: Pid, timeout: Duration }
        => Level::Warning, ("post-start hook pid {pid} timed out: killing it"),
        |o| o.field("pid", *pid).field("timeout", *timeout);
    /// The pre-stop hook outlived `--pre-stop-timeout`.
    "pre_stop_timed_out" PreStopTimedOut { pid: Pid, timeout: Duration }
        => Level::Warning,
        ("pre-stop hook pid {pid} still running after {} (--pre-stop-timeout): killing it, and going on with the stop",
            duration(*timeout)),
        |o| o.field("pid", *pid).field("timeout", *timeout);

    // Signals.

    /// A signal arrived, with its sender. SIGCHLD (one per exit) only at
    /// `-vvv`, its sender as the kernel gave it.
    "signal_received" SignalReceived { signal: Signal, sender: &'a Named }
        => if *signal == Signal::CHLD { Level::Trace } else { Level::Info },
        ("received {} {}", *signal, fmt::from_fn(|f| if *signal == Signal::CHLD {
            write!(f, "{}", sender.sender)
        } else {
            write!(f, "{sender}")
        })),
        |o| o.field("signal", *signal).object("sender", *sender);
    /// A signal was forwarded (after `--rewrite`), from `sender`; vigil
    /// is its sender when it is the stop sequence's own. `later_stop`: a
    /// stop signal during the stop sequence, and when it came.
    "signal_forwarded" SignalForwarded {
        signal: Signal,
        sent: Signal,
        target: Target,
        sender: &'a Named,
        later_stop: Option<Instant>,
    }
        => Level::Debug,
        ("forwarding {}{} to {target}", *signal,
            fmt::from_fn(|f| if sent == signal { Ok(()) } else { write!(f, " as {}", *sent) })),
        |o| o.field("signal", *signal).field("sent", *sent).flatten(target);
    /// `--rewrite` drops the signal.
    "signal_dropped" SignalDropped { signal: Signal }
        => Level::Info, ("dropped {} (--rewrite)", signal),
        |o| o.field("signal", *signal);
    /// The child has exited: nothing to forward to.
    "signal_not_forwarded" SignalNotForwarded { signal: Signal }
        => Level::Debug, ("the child has exited; {} not forwarded", signal),
        |o| o.field("signal", *signal);
    /// A stop signal while everything left is being killed.
    "stop_signal_ignored" StopSignalIgnored { signal: Signal }
        => Level::Debug, ("already killing what is left; {} changes nothing", signal),
        |o| o.field("signal", *signal);
    /// A signal could not be sent (EPERM, after one more try).
    "send_failed" SendFailed { signal: Signal, target: Target, error: &'a str }
        => Level::Warning,
        ("could not send {} to {target}: {error}", signal),
        |o| o.field("signal", *signal).flatten(target).field("error", *error);

    // The stop.

    /// The stop sequence began `at`, for `cause`, to end with `signal`.
    "stopping" Stopping { cause: &'a StopCause, signal: Signal, grace: Option<Grace>, at: Instant }
        => Level::Info,
        ("stopping{}", fmt::from_fn(|f| match grace {
            Some(grace) => write!(f, ": grace period {}", duration(grace.period)),
            None => Ok(()),
        })),
        |o| o.word("cause", cause.word()).field("signal", *signal)
            .opt("grace_period", grace.map(|g| g.period));
    /// The stop sequence ended without sending the child its stop signal.
    "stop_signal_not_sent" StopSignalNotSent { signal: Signal, why: NotSent }
        => Level::Info, ("{} not sent to the child: {why}", signal),
        |o| o.field("signal", *signal).word("why", why.word());
    /// `--timeout` passed: the stop sequence begins with `signal`.
    "timeout_passed" TimeoutPassed { timeout: Duration, signal: Signal }
        => Level::Warning,
        ("--timeout ({}) passed: stopping as if {} had arrived", duration(*timeout), signal),
        |o| o.field("timeout", *timeout);
    /// vigil cannot go on supervising as it should, and stops.
    "fault" Fault { error: &'a str }
        => Level::Error, ("{error}: stopping"),
        |o| o.field("error", *error);
    /// `--pre-stop-sleep` began.
    "pre_stop_sleep" PreStopSleep { sleep: Duration, signal: Signal }
        => Level::Info,
        ("waiting {} before forwarding {}", duration(*sleep), signal),
        |o| o.field("sleep", *sleep).field("signal", *signal);
    /// The child still runs half the grace period (else 5 s) after the
    /// stop began: what still runs, and why when vigil can tell.
    "still_running" StillRunning {
        signal: Signal,
        after: Duration,
        child: Pid,
        running: &'a [Running],
        pre_stop_hook: Option<Pid>,
        waits_for_hook: bool,
        shell: Option<&'a Shell>,
    }
        => Level::Warning,
        ("still running {} after {}: {}", duration(*after), *signal, fmt::from_fn(|f| {
            if running.is_empty() {
                write!(f, "the child, pid {child}")?;
            } else {
                write!(f, "{}", process::capped(running, process::list))?;
            }
            if let Some(hook) = pre_stop_hook {
                write!(f, "; the pre-stop hook (pid {hook}) too")?;
            }
            if *waits_for_hook {
                write!(f, ", and {signal} waits for it")?;
            }
            if let Some(shell) = shell {
                write!(f, "; {} ({}) is a shell waiting for its foreground job, {}, which did not get {} (vigil sent it to the shell alone): end the script with `exec` of its last command, or run vigil with -g",
                    shell.pid, shell.name, process::capped(&shell.jobs, process::list), signal)?;
            }
            Ok(())
        })),
        |o| o.field("signal", *signal).field("after", *after)
            .list("running", running.iter()).opt("pre_stop_hook", *pre_stop_hook)
            .opt_object("shell", *shell);

    // Reaping and the child's end.

    /// `waitpid` failed with an error it should never give.
    "waitpid_failed" WaitpidFailed { error: &'a str }
        => Level::Error, ("waitpid failed: {error}"),
        |o| o.field("error", *error);
    /// An orphan was reaped; with `-w`, a warning.
    "reaped" Reaped { pid: Pid, ending: Ending, warn: bool }
        => if *warn { Level::Warning } else { Level::Debug },
        ("reaped {}pid {pid}, which {ending}", if *warn { "orphaned zombie " } else { "" }),
        |o| o.field("pid", *pid).object("ending", ending);
    /// The child ended; vigil reaped it `at`.
    "child_ended" ChildEnded { pid: Pid, ending: Ending, at: Instant }
        => Level::Info, ("child pid {pid} {ending}"),
        |o| o.field("pid", *pid).object("ending", ending);
    /// The child was stopped, and what vigil did about it.
    "child_stopped" ChildStopped { pid: Pid, signal: Signal, action: StopAction }
        => Level::Info,
        ("child pid {pid} {}", fmt::from_fn(|f| match action {
            StopAction::StopVigil => f.write_str("stopped: stopping vigil too"),
            StopAction::Continue => write!(f, "stopped by {}, and nothing above vigil can resume it: continuing it", signal),
            StopAction::Leave => write!(f, "stopped by {}: left stopped (a stop sends SIGCONT with its signal)", signal),
        })),
        |o| o.field("pid", *pid).field("signal", *signal).word("action", action.word());

    // The drain and the deadlines.

    /// The drain began: SIGTERM to what the child left.
    "draining" Draining { terminated: &'a [Proc] }
        => Level::Info, ("draining: SIGTERM to {}", process::list(terminated)),
        |o| o.list("terminated", terminated.iter());
    /// /proc is not this namespace's: left-overs cannot be listed.
    "proc_unlisted" ProcUnlisted {}
        => Level::Warning,
        ("/proc is not mounted for this PID namespace: left-over processes can be signalled but not listed"),
        |o| o;
    /// Without /proc, vigil cannot wait for what it cannot see.
    "cannot_reach_all" CannotReachAll {}
        => Level::Warning,
        ("without /proc vigil cannot list or reach processes outside the child's and the hooks' process groups: exiting, any such process is left running"),
        |o| o;
    /// The grace period passed: SIGKILL to everything left, `at`.
    "grace_deadline" GraceDeadline { grace_period: Duration, killed: &'a [Proc], listed: bool, at: Instant }
        => Level::Warning,
        ("grace period ({}) over: SIGKILL to {}", duration(*grace_period), Whom(killed, *listed)),
        |o| o.field("grace_period", *grace_period).list("killed", killed.iter())
            .field("listed", *listed);
    /// The drain was cut short: SIGKILL to everything left.
    "drain_killed" DrainKilled { why: DrainKill, killed: &'a [Proc], listed: bool }
        => Level::Warning, ("{why}: SIGKILL to {}", Whom(killed, *listed)),
        |o| o.flatten(why).list("killed", killed.iter()).field("listed", *listed);
    /// What outlived SIGKILL by `after`: vigil exits without it.
    "survived_sigkill" SurvivedSigkill { left: &'a [Proc], after: Duration }
        => Level::Warning,
        ("{} still running {} after SIGKILL: exiting without waiting for {}",
            fmt::from_fn(|f| if left.is_empty() {
                f.write_str("processes vigil cannot list are")
            } else {
                f.write_str(&process::list(left))
            }),
            duration(*after), if left.len() == 1 { "it" } else { "them" }),
        |o| o.list("left", left.iter());

    // `--install DIR`.

    /// vigil copied itself into a directory.
    "installed" Installed { path: &'a Path, bytes: u64, sha256: &'a str, source: &'a Path }
        => Level::Notice,
        ("installed {}: {bytes} bytes, sha256 {sha256}", path.display()),
        |o| o.field("path", *path).field("bytes", *bytes).field("sha256", *sha256)
            .field("source", *source);
    /// vigil could not copy itself into a directory: which step failed,
    /// on what, and why (`install::Failure`).
    "install_failed" InstallFailed { failure: &'a dyn Fact, status: i32 }
        => Level::Error, ("{failure}"),
        |o| o.flatten(*failure).field("status", *status);

    // Pause mode (`-P`).

    /// Pause mode began: no command, only reaping until a stop signal.
    "pausing" Pausing { stop_signals: &'a [Signal] }
        => Level::Info,
        ("pausing: no command; reaping orphans until {}", fmt::from_fn(|f| {
            for (i, signal) in stop_signals.iter().enumerate() {
                let sep = match i {
                    0 => "",
                    _ if i + 1 == stop_signals.len() => " or ",
                    _ => ", ",
                };
                write!(f, "{sep}{signal}")?;
            }
            Ok(())
        })),
        |o| o;
    /// A stop signal ended pause mode.
    "pause_ended" PauseEnded { signal: Signal, sender: &'a Named, orphans_reaped: u64, status: i32 }
        => Level::Info,
        ("pause over: {} {sender}; {} reaped; exiting {status}", *signal,
            Count(*orphans_reaped, "orphan", "orphans")),
        |o| o.field("signal", *signal).object("sender", *sender)
            .field("orphans_reaped", *orphans_reaped).field("status", *status);

    // Memory.

    /// The memory cgroup's counts changed; vigil saw it `at`.
    "memory_events" MemoryEventsSeen { events: MemoryEvents, at: Timestamp }
        => Level::Info,
        ("memory events since start: memory.max reached {}, the OOM killer invoked {}, {} killed, {}",
            Count(events.max, "time", "times"), Count(events.oom, "time", "times"),
            Count(events.oom_kill, "process", "processes"),
            Count(events.oom_group_kill, "group kill", "group kills")),
        |o| o.field("max", events.max).field("oom", events.oom)
            .field("oom_kill", events.oom_kill).field("oom_group_kill", events.oom_group_kill);

    /// A process vigil reaped was SIGKILLed while the memory cgroup
    /// counted an OOM kill: the OOM killer's victim, seen `at`.
    "oom_killed" OomKilled { pid: Pid, child: bool, at: Timestamp }
        => Level::Warning,
        ("the kernel OOM killer killed pid {pid}{}", if *child { ", the child" } else { "" }),
        |o| o.field("pid", *pid).field("child", *child);

    // Probes and readiness.

    /// `--probe`: the service answered (at `-v`).
    "probe_healthy" ProbeHealthy { url: &'a str, healthy: &'a dyn Fact, took: Duration }
        => Level::Info, ("{url} is healthy: {healthy} in {}", secs(*took)),
        |o| o.field("url", *url).flatten(*healthy).field("took", *took);
    /// `--probe`: the service did not answer as it should (said at every
    /// verbosity: `cli` keeps a probe's at the default or above).
    "probe_unhealthy" ProbeUnhealthy { url: &'a str, why: &'a dyn Fact }
        => Level::Warning, ("{url} is unhealthy: {why}"),
        |o| o.field("url", *url).flatten(*why);
    /// `--ready-when`: a probe failed; the next one comes after `next`.
    "not_ready" NotReady { url: &'a str, why: &'a dyn Fact, next: Duration }
        => Level::Debug, ("{url} is not ready yet: {why}; next probe in {}", duration(*next)),
        |o| o.field("url", *url).flatten(*why).field("next", *next);
    /// `--ready-when`: the first probe that succeeded, `after` the start;
    /// `READY=1` went to `notified`.
    "ready" Ready { url: &'a str, after: Duration, healthy: &'a dyn Fact, probes: u32, notified: Option<&'a str> }
        => Level::Info,
        ("ready after {}: {url}: {healthy}, at probe {probes}", secs(*after)),
        |o| o.field("url", *url).field("after", *after).flatten(*healthy)
            .field("probes", *probes).opt("notified", *notified);
    /// `--ready-timeout` passed before the first success: the stop
    /// sequence begins with `signal`.
    "ready_timeout_passed" ReadyTimeoutPassed { timeout: Duration, url: &'a str, probes: u32, last: Option<&'a dyn Fact>, signal: Signal }
        => Level::Warning,
        ("not ready after {} (--ready-timeout): {url}: {}; stopping as if {} had arrived",
            duration(*timeout),
            fmt::from_fn(|f| match last {
                Some(why) => write!(f, "{why}"),
                None => f.write_str("no probe has ended yet"),
            }),
            signal),
        |o| {
            o.field("timeout", *timeout).field("url", *url).field("probes", *probes);
            if let Some(why) = last {
                o.flatten(*why);
            }
        };
    /// `--live-when`: a probe failed, `failed` of `failures` in a row; the
    /// next one comes after `next`.
    "live_probe_failed" LiveProbeFailed { url: &'a str, why: &'a dyn Fact, failed: usize, failures: u32, next: Duration }
        => Level::Info,
        ("{url} failed a liveness probe ({failed} of {failures} in a row): {why}; next probe in {}",
            duration(*next)),
        |o| o.field("url", *url).flatten(*why).field("failed", *failed)
            .field("failures", *failures).field("next", *next);
    /// `--live-when`: `--live-failures` probes failed in a row; the stop
    /// sequence begins with `signal`.
    "unhealthy" Unhealthy { url: &'a str, failed: &'a [&'a dyn Fact], signal: Signal }
        => Level::Warning,
        ("{url} is unhealthy: {} failed in a row: {}; stopping as if {} had arrived",
            Count(failed.len() as u64, "probe", "probes"),
            fmt::from_fn(|f| {
                for (i, why) in failed.iter().enumerate() {
                    write!(f, "{}{why}", if i == 0 { "" } else { "; " })?;
                }
                Ok(())
            }),
            signal),
        |o| o.field("url", *url).field("failures", failed.len())
            .list_with("failed", failed.iter(), |o, why| { o.flatten(*why); });
    /// `READY=1` or `STOPPING=1` could not be sent.
    "notify_failed" NotifyFailed { socket: &'a str, message: &'static str, error: &'a str }
        => Level::Warning, ("cannot send {message} to {socket}: {error}"),
        |o| o.field("socket", *socket).word("message", message).field("error", *error);
    /// `$NOTIFY_SOCKET` names no Unix socket vigil can send to.
    "notify_socket_unusable" NotifySocketUnusable { error: &'a str }
        => Level::Warning, ("{error}: READY=1 and STOPPING=1 will not be sent"),
        |o| o.field("error", *error);
    /// `--ready-timeout` without `--ready-when`.
    "ready_timeout_unused" ReadyTimeoutUnused {}
        => Level::Warning,
        ("a ready timeout is set, but no --ready-when: it has nothing to time"),
        |o| o;
    /// `--probe-timeout` on the command line, and nothing that probes.
    "probe_timeout_unused" ProbeTimeoutUnused {}
        => Level::Warning,
        ("a probe timeout is set, but no --ready-when or --live-when: it has nothing to time"),
        |o| o;
}

/// What vigil does once a hook has ended, said after its record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterHook {
    Nothing,
    /// A pre-stop hook failed: the stop sequence goes on.
    GoOnWithStop,
    /// The post-start hook failed: the stop sequence begins with this
    /// signal, as if it had arrived.
    Stop(Signal),
}

impl fmt::Display for AfterHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AfterHook::Nothing => Ok(()),
            AfterHook::GoOnWithStop => f.write_str("; going on with the stop"),
            AfterHook::Stop(signal) => {
                write!(f, "; stopping as if {} had arrived", signal)
            }
        }
    }
}

/// What vigil did about its child being stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopAction {
    /// A job-control shell above vigil can resume both: vigil stops too.
    StopVigil,
    /// Stopped by the terminal, and nothing can resume it: continued.
    Continue,
    /// Stopped by SIGSTOP: left stopped.
    Leave,
}

impl StopAction {
    fn word(self) -> &'static str {
        match self {
            StopAction::StopVigil => "stop_vigil",
            StopAction::Continue => "continue",
            StopAction::Leave => "leave",
        }
    }
}

/// Whom a deadline's SIGKILL went to: the processes listed, everything
/// left when none was, or (`listed` false, no /proc) the groups vigil
/// knows.
struct Whom<'p>(&'p [Proc], bool);

impl fmt::Display for Whom<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Whom(_, false) => f.write_str("the child's and the hooks' process groups"),
            Whom([], true) => f.write_str("everything left"),
            Whom(killed, true) => f.write_str(&process::list(killed)),
        }
    }
}

#[cfg(test)]
mod tests;
