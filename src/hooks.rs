//! Lifecycle hooks: post-start and pre-stop commands, run directly (no shell
//! needed in the image), each in a process group of its own, with its output
//! on vigil's stdout and stderr so it shows in `docker logs`.

use std::ffi::OsString;
use std::time::{Duration, Instant};

use nix::unistd::Pid;

use crate::log;
use crate::log::event::Event;
use crate::log::facts::hook::Record;
use crate::log::facts::{Ending, HookKind, KillReason, Outcome, Signal};
use crate::spawn::{Spawn, SpawnError};

/// A hook that is running now. Which hook it is, is where it is kept (the
/// supervisor has a place for each kind).
#[derive(Debug)]
pub struct Running {
    pub pid: Pid,
    pub started: Instant,
    /// Set when vigil killed the hook, and why, so the record says so
    /// rather than "killed by SIGKILL".
    pub killed_for: Option<KillReason>,
}

impl Running {
    /// Notes why vigil is ending the hook (it sends the signal itself), so
    /// that the hook's record says so rather than "killed by SIGKILL". A
    /// reason already given stays.
    pub fn ending_for(&mut self, reason: KillReason) {
        self.killed_for.get_or_insert(reason);
    }

    /// The record of a hook of that `kind` that has been reaped. A hook
    /// vigil meant to end that succeeded all the same is recorded as a
    /// success.
    pub fn finish(self, kind: HookKind, ending: Ending, now: Instant) -> Record {
        let outcome = match self.killed_for {
            _ if ending.succeeded() => Outcome::Ended(ending),
            Some(KillReason::TimedOut) => Outcome::TimedOut,
            Some(KillReason::Cancelled(why)) => Outcome::Cancelled(why),
            None => Outcome::Ended(ending),
        };
        Record {
            kind,
            outcome,
            took: now.saturating_duration_since(self.started),
        }
    }
}

/// Starts a hook with `spawn`, at `started`; an `Err` is the record of a
/// hook that could not run. A pre-stop hook is told the stop signal that
/// started the stop (`VIGIL_SIGNAL`); a post-start hook has none.
pub fn start(
    kind: HookKind,
    signal: Option<Signal>,
    argv: &[OsString],
    child_pid: Pid,
    started: Instant,
    spawn: impl FnOnce(Spawn<'_>) -> Result<Pid, SpawnError>,
) -> Result<Running, Record> {
    let mut env = vec![
        ("VIGIL_HOOK", kind.as_str().to_string()),
        ("VIGIL_CHILD_PID", child_pid.to_string()),
    ];
    if let Some(signal) = signal {
        env.push(("VIGIL_SIGNAL", signal.to_string()));
    }
    let spec = Spawn {
        argv,
        env,
        take_terminal: false,
        // An image without /dev/null (rare, but FROM scratch allows it)
        // still gets its hooks run, on vigil's stdin.
        null_stdin: std::path::Path::new("/dev/null").exists(),
        unset: &[],
        own_pid: None,
    };
    match spawn(spec) {
        Ok(pid) => {
            log::emit(&Event::HookStarted { hook: kind, pid });
            Ok(Running {
                pid,
                started,
                killed_for: None,
            })
        }
        Err(e) => Err(Record {
            kind,
            outcome: Outcome::CouldNotRun(e.to_string()),
            took: Duration::ZERO,
        }),
    }
}
