//! The exit report: what vigil says when it exits about what happened to
//! the container: how the child ended and why, who asked it to stop and
//! when, how the hooks went, what vigil had to kill.
//!
//! Every fact in it was said first as an event. The supervisor hands each
//! event it emits to its `Ledger` (`observe`), which keeps what the report
//! and the provisional termination message need and nothing else; at the
//! end the ledger is read as one `Exit` (`exit.rs`), which works out who
//! or what ended the child (`Cause`) and is written two ways, a text line
//! and the `exit` record, from one walk over its parts. What one says the
//! other says.
//!
//! It goes to the log (see `Audience`: shown by default unless the
//! container simply succeeded, a warning when the ending was abnormal) and
//! to the termination log, where Kubernetes picks it up as the termination
//! message. The ending and the exit status come first, and every part that
//! can grow long is shortened, so that neither a 4096-byte log line nor the
//! 4096-byte termination message ever loses the cause.

mod exit;
mod provisional;

pub use exit::{Audience, Clocks, Exit};
pub use provisional::{MemorySeen, Provisional};
#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::fmt;
use std::time::{Duration, Instant};

use crate::event::Event;
use crate::facts::hook;
use crate::facts::signal::{self, MAX_SIGNAL};
use crate::facts::{Ending, Named, Proc, Sender, Signal};
use crate::record::{Fields, Obj, Timestamp};

/// What started the stop sequence.
#[derive(Clone, Debug)]
pub enum StopCause {
    /// A stop signal, with its sender as it was when the signal arrived:
    /// by the time the report is written, the sender may be gone.
    Signal {
        signal: i32,
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
            StopCause::Fault(_) => "fault",
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
    StopSignal(i32),
}

impl fmt::Display for DrainKill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DrainKill::Timeout(after) => {
                write!(f, "drain timeout ({}) over", crate::text::duration(*after))
            }
            DrainKill::StopSignal(signal) => {
                write!(f, "{} during the drain", signal::name(*signal))
            }
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
                o.word("cause", "stop_signal")
                    .field("signal", Signal(signal));
            }
        }
    }
}

/// The command as the report shows it.
#[derive(Clone, Debug, Default)]
pub struct Command {
    pub argv: Vec<OsString>,
    /// Quoted as a shell reads it, with control characters escaped.
    pub text: String,
    /// Whether `text` is exactly the command's bytes as a shell reads them
    /// (they were UTF-8, without control characters to escape), so that
    /// the exit record can show it as it is.
    pub exact: bool,
}

impl Command {
    pub fn new(argv: Vec<OsString>) -> Command {
        let (text, exact) = crate::text::display_command_exact(&argv);
        Command { argv, text, exact }
    }
}

/// What the report and the provisional message know, folded from the
/// events: each field is set by the event that says it, and by nothing
/// else.
#[derive(Debug, Default)]
pub struct Ledger {
    started: Option<Started>,
    memory: MemorySeen,
    stop: Option<Stop>,
    /// The SIGKILL at the grace deadline: when, and to whom.
    grace_kill: Option<(Instant, Vec<Proc>)>,
    ended: Option<(Ending, Instant)>,
    /// What the child left behind: how many got the drain's SIGTERM; why
    /// and to whom the drain's SIGKILL went, if it came.
    drain: Option<(usize, Option<Killed>)>,
    hooks: Vec<hook::Record>,
    /// The last signal forwarded as each number, with its sender, so that
    /// a child killed by one can be told whose it was.
    forwards: Vec<(i32, i32, Named)>,
    orphans_reaped: u64,
}

/// Why a deadline's SIGKILL came, and whom it went to.
type Killed = (DrainKill, Vec<Proc>);

/// The child as it started (`Event::Started`).
#[derive(Debug)]
struct Started {
    command: Command,
    pid: i32,
    at: Timestamp,
    limit: Option<u64>,
    oom_group: bool,
    terminal: bool,
}

/// The stop sequence, from `Event::Stopping` on.
#[derive(Debug)]
pub struct Stop {
    pub cause: StopCause,
    pub at: Instant,
    grace: Option<Grace>,
    /// The signal the child was sent to stop it, after `--rewrite`.
    pub sent: Option<i32>,
    pub not_sent: Option<NotSent>,
    /// A later stop signal, forwarded at once during the stop: what came,
    /// from whom, what was sent, when.
    pub later: Option<(i32, Named, i32, Instant)>,
}

impl Ledger {
    /// Keeps what `event` says that the report needs.
    pub fn observe(&mut self, event: &Event<'_>) {
        match *event {
            Event::Started {
                command,
                pid,
                limit,
                oom_group,
                terminal,
                at,
                ..
            } => {
                self.started = Some(Started {
                    command: command.clone(),
                    pid,
                    at,
                    limit,
                    oom_group,
                    terminal,
                });
            }
            Event::Stopping {
                cause, grace, at, ..
            } => {
                self.stop = Some(Stop {
                    cause: cause.clone(),
                    at,
                    grace,
                    sent: None,
                    not_sent: None,
                    later: None,
                });
            }
            Event::SignalForwarded {
                signal,
                sent,
                sender,
                later_stop,
                ..
            } => self.forwarded(signal, sent, sender, later_stop),
            Event::StopSignalNotSent { why, .. } => {
                if let Some(stop) = &mut self.stop {
                    stop.not_sent = Some(why);
                }
            }
            Event::HookEnded { record, .. } => self.hooks.push(record.clone()),
            Event::Reaped { .. } => self.orphans_reaped += 1,
            Event::ChildEnded { ending, at, .. } => self.ended = Some((ending, at)),
            Event::GraceDeadline { killed, at, .. } => {
                self.grace_kill = Some((at, killed.to_vec()));
            }
            Event::Draining { terminated } => self.drain = Some((terminated.len(), None)),
            Event::DrainKilled { why, killed, .. } => {
                let left = self.drain.as_ref().map_or(0, |(left, _)| *left);
                self.drain = Some((left, Some((why, killed.to_vec()))));
            }
            Event::MemoryEventsSeen { events, at } => self.memory.update(events, at),
            _ => {}
        }
    }

    /// A forwarded signal: the last of its number; the stop's own (sent in
    /// vigil's name) or a later stop signal, for the stop.
    fn forwarded(&mut self, signal: i32, sent: i32, sender: &Named, later: Option<Instant>) {
        if sender.sender == Sender::Vigil
            && let Some(stop) = &mut self.stop
            && stop.sent.is_none()
        {
            stop.sent = Some(sent);
        }
        if let (Some(at), Some(stop)) = (later, &mut self.stop) {
            stop.later = Some((signal, sender.clone(), sent, at));
        }
        if !(1..=MAX_SIGNAL).contains(&sent) {
            return;
        }
        match self.forwards.iter_mut().find(|(s, _, _)| *s == sent) {
            Some(entry) => *entry = (sent, signal, sender.clone()),
            None => self.forwards.push((sent, signal, sender.clone())),
        }
    }

    /// The name already known for `sender` as the last sender of `sent`:
    /// a storm of signals from one process reads its name once.
    pub fn known_sender(&self, sent: i32, sender: Sender) -> Option<Named> {
        self.forwards
            .iter()
            .find(|(s, _, named)| *s == sent && named.sender == sender)
            .map(|(_, _, named)| named.clone())
    }

    /// What the memory cgroup counted, as vigil last saw it.
    pub fn memory_events(&self) -> crate::facts::MemoryEvents {
        self.memory.events
    }

    /// How the child ended, once it has.
    pub fn ending(&self) -> Option<Ending> {
        self.ended.map(|(ending, _)| ending)
    }

    /// What started the stop sequence, once one began.
    pub fn stop_cause(&self) -> Option<&StopCause> {
        self.stop.as_ref().map(|stop| &stop.cause)
    }

    /// The grace period, once a stop started one.
    pub fn grace(&self) -> Option<Grace> {
        self.stop.as_ref().and_then(|stop| stop.grace)
    }

    /// Whether the grace period passed and everything got SIGKILL.
    pub fn grace_passed(&self) -> bool {
        self.grace_kill.is_some()
    }

    /// Whether the stop sequence sent the child its stop signal.
    pub fn stop_signal_sent(&self) -> bool {
        self.stop.as_ref().is_some_and(|stop| stop.sent.is_some())
    }

    /// The exit report, once the child has ended: vigil exits with
    /// `status`, and the cgroup counted `oom_kills` OOM kills.
    pub fn exit(&self, status: i32, oom_kills: u64) -> Option<Exit<'_>> {
        let (ending, ended_at) = self.ended?;
        let started = self.started.as_ref()?;
        Some(Exit {
            ledger: self,
            started,
            ending,
            ended_at,
            status,
            code_expected: status == 0 && ending.status() != 0,
            oom_kills,
        })
    }

    /// The provisional termination message, once the child has started.
    pub fn provisional(&self) -> Option<Provisional<'_>> {
        let started = self.started.as_ref()?;
        Some(Provisional {
            command: &started.command,
            pid: started.pid,
            started: started.at,
            limit: started.limit,
            oom_group: started.oom_group,
            memory: self.memory,
        })
    }
}

/// What the supervisor's tests look at.
#[cfg(test)]
impl Ledger {
    pub fn stop(&self) -> Option<&Stop> {
        self.stop.as_ref()
    }

    pub fn hooks(&self) -> &[hook::Record] {
        &self.hooks
    }

    pub fn drain_kill(&self) -> Option<&Killed> {
        self.drain.as_ref().and_then(|(_, kill)| kill.as_ref())
    }

    pub fn orphans_reaped(&self) -> u64 {
        self.orphans_reaped
    }
}
