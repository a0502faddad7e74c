//! Lifecycle hooks: post-start and pre-stop commands, run directly (no shell
//! needed in the image), each in a process group of its own, with its output
//! on vigil's stdout and stderr so it shows in `docker logs`.

use std::ffi::OsString;
use std::fmt;
use std::time::{Duration, Instant};

use crate::logging::{self, Level};
use crate::reap::Ending;
use crate::record::{Fields, Obj};
use crate::signals;
use crate::spawn::{Spawn, SpawnError};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookKind {
    PostStart,
    PreStop,
}

impl HookKind {
    pub fn as_str(self) -> &'static str {
        match self {
            HookKind::PostStart => "post-start",
            HookKind::PreStop => "pre-stop",
        }
    }
}

/// A hook to start, with what only that kind of hook has.
#[derive(Clone, Copy, Debug)]
pub enum Hook {
    /// Started beside the child; fails if it still runs after
    /// `--post-start-timeout` (the supervisor keeps that deadline).
    PostStart,
    /// Told the stop signal that started the stop (`VIGIL_SIGNAL`).
    PreStop { signal: i32 },
}

impl Hook {
    pub fn kind(self) -> HookKind {
        match self {
            Hook::PostStart => HookKind::PostStart,
            Hook::PreStop { .. } => HookKind::PreStop,
        }
    }
}

/// Splits a hook's text into words by shell quoting rules: no expansion, no
/// globbing. An empty or unparsable text is the user's mistake.
pub fn parse_command(text: &str) -> Result<Vec<OsString>, String> {
    let words = shell_words::split(text)
        .map_err(|e| format!("'{text}' cannot be split into words ({e}): check its quotes"))?;
    if words.is_empty() {
        return Err(format!("'{text}' is empty: give the command to run"));
    }
    Ok(words.into_iter().map(OsString::from).collect())
}

/// A hook that is running now.
#[derive(Debug)]
pub struct Running {
    pub kind: HookKind,
    pub pid: i32,
    pub started: Instant,
    /// Set when vigil killed the hook, and why, so the record says so
    /// rather than "killed by SIGKILL".
    pub killed_for: Option<KillReason>,
}

/// Why vigil ended a hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KillReason {
    /// `--post-start-timeout` passed: the hook has failed.
    TimedOut,
    /// vigil no longer needed it: it was cancelled, not failed.
    Cancelled(Cancel),
}

/// What overtook a hook that vigil ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cancel {
    /// The stop sequence began (a post-start hook still running).
    Stop,
    /// The grace deadline passed: everything got SIGKILL.
    GraceDeadline,
    /// The child exited: the drain ends what is left, hooks included.
    ChildExited,
}

impl Running {
    /// Notes why vigil is ending the hook (it sends the signal itself), so
    /// that the hook's record says so rather than "killed by SIGKILL". A
    /// reason already given stays.
    pub fn ending_for(&mut self, reason: KillReason) {
        self.killed_for.get_or_insert(reason);
    }

    /// The record of a hook that has been reaped. A hook vigil meant to end
    /// that succeeded all the same is recorded as a success.
    pub fn finish(self, ending: Ending, now: Instant) -> Record {
        let outcome = match self.killed_for {
            _ if ending.succeeded() => Outcome::Ended(ending),
            Some(KillReason::TimedOut) => Outcome::TimedOut,
            Some(KillReason::Cancelled(why)) => Outcome::Cancelled(why),
            None => Outcome::Ended(ending),
        };
        Record {
            kind: self.kind,
            outcome,
            took: now.saturating_duration_since(self.started),
        }
    }
}

/// How a hook went.
#[derive(Debug)]
pub enum Outcome {
    Ended(Ending),
    CouldNotRun(String),
    TimedOut,
    /// Ended by vigil because something overtook it.
    Cancelled(Cancel),
}

/// One finished hook, for the log and the exit report.
#[derive(Debug)]
pub struct Record {
    pub kind: HookKind,
    pub outcome: Outcome,
    pub took: Duration,
}

impl Record {
    /// Whether the hook failed. A hook vigil cancelled (a stop, the grace
    /// deadline, the child's exit overtook it) did not fail.
    pub fn failed(&self) -> bool {
        match &self.outcome {
            Outcome::Ended(ending) => !ending.succeeded(),
            Outcome::CouldNotRun(_) | Outcome::TimedOut => true,
            Outcome::Cancelled(_) => false,
        }
    }
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.kind.as_str();
        let took = crate::text::secs(self.took);
        match &self.outcome {
            Outcome::Ended(Ending::Exited(0)) => write!(f, "{kind} hook succeeded in {took}"),
            Outcome::Ended(ending) => write!(f, "{kind} hook failed: {ending} after {took}"),
            Outcome::CouldNotRun(why) => write!(f, "{kind} hook failed: {why}"),
            Outcome::TimedOut => write!(f, "{kind} hook failed: timed out after {took}"),
            Outcome::Cancelled(Cancel::Stop) => {
                write!(f, "{kind} hook cancelled by the stop after {took}")
            }
            Outcome::Cancelled(Cancel::GraceDeadline) => {
                write!(
                    f,
                    "{kind} hook cancelled at the grace deadline after {took}"
                )
            }
            Outcome::Cancelled(Cancel::ChildExited) => {
                write!(
                    f,
                    "{kind} hook cancelled: the child exited, {took} after it started"
                )
            }
        }
    }
}

/// `{"hook": "pre-stop", "outcome": "failed", "ending": {...}, "duration":
/// 0.5}`. `outcome` is `succeeded`, `failed` or `cancelled` (ended by vigil
/// because something overtook it: not a failure); `reason` says why for a
/// failure that is not an ending (`timed_out`, `could_not_run`, with
/// `error`) and for a cancellation (`stop`, `grace_deadline`,
/// `child_exited`).
impl Fields for Record {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        o.word("hook", self.kind.as_str());
        match &self.outcome {
            Outcome::Ended(ending) => {
                let outcome = if ending.succeeded() {
                    "succeeded"
                } else {
                    "failed"
                };
                o.word("outcome", outcome);
                if !ending.succeeded() {
                    o.object("ending", ending);
                }
            }
            Outcome::CouldNotRun(why) => {
                o.word("outcome", "failed")
                    .word("reason", "could_not_run")
                    .field("error", why);
            }
            Outcome::TimedOut => {
                o.word("outcome", "failed").word("reason", "timed_out");
            }
            Outcome::Cancelled(cancel) => {
                let reason = match cancel {
                    Cancel::Stop => "stop",
                    Cancel::GraceDeadline => "grace_deadline",
                    Cancel::ChildExited => "child_exited",
                };
                o.word("outcome", "cancelled").word("reason", reason);
            }
        }
        o.field("duration", self.took);
    }
}

/// Starts a hook with `spawn`, at `started`; an `Err` is the record of a
/// hook that could not run.
pub fn start(
    hook: Hook,
    argv: &[OsString],
    child_pid: i32,
    started: Instant,
    spawn: impl FnOnce(Spawn<'_>) -> Result<i32, SpawnError>,
) -> Result<Running, Record> {
    let kind = hook.kind();
    let mut env = vec![
        ("VIGIL_HOOK", kind.as_str().to_string()),
        ("VIGIL_CHILD_PID", child_pid.to_string()),
    ];
    if let Hook::PreStop { signal } = hook {
        env.push(("VIGIL_SIGNAL", signals::name(signal).into_owned()));
    }
    let spec = Spawn {
        argv,
        env,
        take_terminal: false,
        // An image without /dev/null (rare, but FROM scratch allows it)
        // still gets its hooks run, on vigil's stdin.
        null_stdin: std::path::Path::new("/dev/null").exists(),
        unset: &[],
    };
    match spawn(spec) {
        Ok(pid) => {
            logging::emit(
                Level::Info,
                "hook_started",
                format_args!("{} hook started: pid {pid}", kind.as_str()),
                |r| r.word("hook", kind.as_str()).field("pid", pid),
            );
            Ok(Running {
                kind,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_shell() {
        let words = parse_command(r#"sh -c "echo 'a b'" x"#).unwrap();
        assert_eq!(words, ["sh", "-c", "echo 'a b'", "x"]);
        assert!(parse_command("sh -c 'oops").is_err());
        assert!(parse_command("   ").is_err());
    }
}
