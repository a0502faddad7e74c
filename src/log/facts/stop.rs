//! The stop as facts: what started it, its grace period, why the stop
//! signal was not sent, why the drain ended in SIGKILL.

use std::fmt;
use std::time::Duration;

use super::signal::{Named, Signal};
use crate::log::format::{Fields, Obj};
use crate::text::{Count, duration};

/// What started the stop sequence.
#[derive(Clone, Debug)]
pub enum StopCause {
    /// A stop signal, with its sender as it was when the signal arrived:
    /// by the time the report is written, the sender may be gone.
    Signal {
        signal: Signal,
        sender: Named,
    },
    PostStartFailed,
    /// `--timeout` passed.
    Timeout(Duration),
    /// `--ready-timeout` passed before the service was ready: the timeout,
    /// and why the last probe failed.
    NotReady {
        timeout: Duration,
        last: Option<String>,
    },
    /// `--live-when`'s probes of `url` failed `--live-failures` times in a
    /// row: why, the oldest first.
    Unhealthy {
        url: String,
        failed: Vec<String>,
    },
    /// vigil could not go on supervising (its signals could not be read,
    /// its clock or its waits misbehaved): why.
    Fault(String),
}

impl StopCause {
    /// The word in records (`stop.cause`, the `stopping` event's `cause`).
    pub fn word(&self) -> &'static str {
        match self {
            StopCause::Signal { .. } => "signal",
            StopCause::PostStartFailed => "post_start_failed",
            StopCause::Timeout(_) => "timeout",
            StopCause::NotReady { .. } => "not_ready",
            StopCause::Unhealthy { .. } => "unhealthy",
            StopCause::Fault(_) => "fault",
        }
    }
}

/// What started the stop, in the words of the exit report's `stop:` part
/// and of `STOPPING=1`'s status: `SIGTERM from pid 0 (outside this PID
/// namespace)`, `--timeout (20m) passed`.
impl fmt::Display for StopCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopCause::Signal { signal, sender } => write!(f, "{signal} {sender}"),
            StopCause::PostStartFailed => f.write_str("the post-start hook failed"),
            StopCause::Timeout(after) => write!(f, "--timeout ({}) passed", duration(*after)),
            StopCause::NotReady { timeout, last } => {
                write!(f, "not ready after {} (--ready-timeout", duration(*timeout))?;
                if let Some(last) = last {
                    write!(f, "; the last probe: {last}")?;
                }
                f.write_str(")")
            }
            StopCause::Unhealthy { url, failed } => {
                let probes = Count(failed.len() as u64, "probe", "probes");
                write!(
                    f,
                    "unhealthy: {probes} of {url} failed in a row: {}",
                    failed.join("; ")
                )
            }
            StopCause::Fault(why) => write!(f, "vigil could not go on: {why}"),
        }
    }
}

/// Why the stop sequence sent the child no stop signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotSent {
    /// `--rewrite` drops it (`TERM:0`).
    Rewritten,
    /// The pre-stop hook still ran when the child ended or the grace
    /// deadline came.
    PreStopHook,
    /// The pre-stop sleep was not over then.
    PreStopSleep,
    /// The send failed (vigil warned of it), or the child was gone.
    Failed,
}

impl NotSent {
    /// The word in records.
    pub fn word(self) -> &'static str {
        match self {
            NotSent::Rewritten => "rewritten",
            NotSent::PreStopHook => "pre_stop_hook",
            NotSent::PreStopSleep => "pre_stop_sleep",
            NotSent::Failed => "send_failed",
        }
    }
}

impl fmt::Display for NotSent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NotSent::Rewritten => "--rewrite drops it",
            NotSent::PreStopHook => "the pre-stop hook was still running",
            NotSent::PreStopSleep => "the pre-stop sleep was not over",
            NotSent::Failed => "it could not be sent",
        })
    }
}

/// The grace period of a stop: how long, and whether it was the default
/// of a stop vigil started itself (`--timeout`) rather than the user's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grace {
    pub period: Duration,
    pub by_default: bool,
}

/// Why the drain ended in SIGKILL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrainKill {
    /// `--drain-timeout` passed (this long).
    Timeout(Duration),
    /// A stop signal came during the drain: whoever sent it wants vigil gone.
    StopSignal(Signal),
}

impl fmt::Display for DrainKill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DrainKill::Timeout(after) => write!(f, "drain timeout ({}) over", duration(*after)),
            DrainKill::StopSignal(signal) => write!(f, "{signal} during the drain"),
        }
    }
}

/// `{"cause": "drain_timeout", "drain_timeout": 2}`, `{"cause":
/// "stop_signal", "signal": "SIGTERM"}`.
impl Fields for DrainKill {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        match *self {
            DrainKill::Timeout(after) => {
                o.word("cause", "drain_timeout")
                    .field("drain_timeout", after);
            }
            DrainKill::StopSignal(signal) => {
                o.word("cause", "stop_signal").field("signal", signal);
            }
        }
    }
}

/// A cause of vigil's ending whose exit status `--exit-code CAUSE=STATUS`
/// sets: how the user can tell the endings apart by status alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndCause {
    /// A stop from outside, and the child ended of the stop signal.
    Stopped,
    /// vigil's SIGKILL at the grace deadline.
    Grace,
    Timeout,
    Unhealthy,
    NotReady,
    PostStart,
    /// The child itself was OOM-killed.
    Oom,
}

impl EndCause {
    pub const ALL: [EndCause; 7] = [
        EndCause::Stopped,
        EndCause::Grace,
        EndCause::Timeout,
        EndCause::Unhealthy,
        EndCause::NotReady,
        EndCause::PostStart,
        EndCause::Oom,
    ];

    /// The cause's name, as `--exit-code` takes it and records say it.
    pub fn word(self) -> &'static str {
        match self {
            EndCause::Stopped => "stopped",
            EndCause::Grace => "grace",
            EndCause::Timeout => "timeout",
            EndCause::Unhealthy => "unhealthy",
            EndCause::NotReady => "not-ready",
            EndCause::PostStart => "post-start",
            EndCause::Oom => "oom",
        }
    }

    /// Reads one `CAUSE=STATUS` of `--exit-code`; `parse_status` reads the
    /// status as `-e` reads its code.
    pub fn parse_rule(
        text: &str,
        parse_status: impl Fn(&str) -> Result<i32, String>,
    ) -> Result<(EndCause, i32), String> {
        let causes = EndCause::ALL.map(EndCause::word).join(", ");
        let (cause, status) = text.split_once('=').ok_or_else(|| {
            format!("'{text}' is not CAUSE=STATUS (for example stopped=0); the causes: {causes}")
        })?;
        let cause = EndCause::ALL
            .into_iter()
            .find(|c| c.word() == cause.trim())
            .ok_or_else(|| format!("in '{text}': '{cause}' is not a cause: use one of {causes}"))?;
        let status = parse_status(status).map_err(|why| format!("in '{text}': {why}"))?;
        Ok((cause, status))
    }
}

/// The exit statuses `--exit-code` sets, by cause; a cause it does not
/// name keeps vigil's default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExitCodes(Vec<(EndCause, i32)>);

impl ExitCodes {
    pub fn add(&mut self, rule: (EndCause, i32)) {
        self.0.push(rule);
    }

    pub fn get(&self, cause: EndCause) -> Option<i32> {
        self.0.iter().find(|(c, _)| *c == cause).map(|(_, s)| *s)
    }

    /// A cause given more than once, which would leave one of its statuses
    /// silently unused: the cause, its first status and the second.
    pub fn given_twice(&self) -> Option<(EndCause, i32, i32)> {
        self.0
            .iter()
            .enumerate()
            .find_map(|(at, &(cause, second))| {
                let (_, first) = self.0.iter().take(at).find(|(c, _)| *c == cause)?;
                Some((cause, *first, second))
            })
    }
}
