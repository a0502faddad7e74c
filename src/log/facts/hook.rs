//! Hooks as facts: which hook, and how it went.

use std::fmt;
use std::time::Duration;

use super::Ending;
use crate::log::format::{Fields, Obj};

/// Which hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookKind {
    /// Started beside the child; fails if it still runs after
    /// `--post-start-timeout` (the supervisor keeps that deadline).
    PostStart,
    /// The stop sequence's first step, told the stop signal that started
    /// the stop (`VIGIL_SIGNAL`).
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

/// How a hook went.
#[derive(Clone, Debug)]
pub enum Outcome {
    Ended(Ending),
    CouldNotRun(String),
    TimedOut,
    /// Ended by vigil because something overtook it.
    Cancelled(Cancel),
}

/// One finished hook, for the log and the exit report.
#[derive(Clone, Debug)]
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
        let took = crate::text::secs(self.took);
        write!(f, "{} hook ", self.kind.as_str())?;
        match &self.outcome {
            Outcome::Ended(Ending::Exited(0)) => write!(f, "succeeded in {took}"),
            Outcome::Ended(ending) => write!(f, "failed: {ending} after {took}"),
            Outcome::CouldNotRun(why) => write!(f, "failed: {why}"),
            Outcome::TimedOut => write!(f, "failed: timed out after {took}"),
            Outcome::Cancelled(Cancel::Stop) => write!(f, "cancelled by the stop after {took}"),
            Outcome::Cancelled(Cancel::GraceDeadline) => {
                write!(f, "cancelled at the grace deadline after {took}")
            }
            Outcome::Cancelled(Cancel::ChildExited) => {
                write!(f, "cancelled: the child exited, {took} after it started")
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
            Outcome::Ended(ending) if ending.succeeded() => {
                o.word("outcome", "succeeded");
            }
            Outcome::Ended(ending) => {
                o.word("outcome", "failed").object("ending", ending);
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
