//! The exit report: what vigil says when it exits about what happened to
//! the container: how the child ended and why, who asked it to stop and
//! when, how the hooks went, what vigil had to kill.
//!
//! Every fact in it was said first as an event. The supervisor hands each
//! event it emits to its `Ledger` (`observe`), which keeps what the report
//! and the provisional termination message need and nothing else; at the
//! end the ledger is read as one `Exit` (`exit.rs`), which works out who
//! or what ended the child (`Cause`) and is written two ways, a text line
//! and the `exit` record, each saying the same parts in the same order.
//! What one says the other says.
//!
//! It goes to the log (see `Exit::level`: shown by default unless the
//! container simply succeeded, a warning when the ending was abnormal) and
//! to the termination log, where Kubernetes picks it up as the termination
//! message. The ending and the exit status come first, and every part that
//! can grow long is shortened, so that neither a 4096-byte log line nor the
//! 4096-byte termination message ever loses the cause.

mod exit;
mod provisional;

pub use exit::{Clocks, Exit};
pub use provisional::{MemorySeen, Provisional};
#[cfg(test)]
mod tests;

use std::fmt::{self, Display, Formatter};
use std::time::Instant;

use nix::unistd::Pid;

use crate::log::event::Event;
use crate::log::facts::hook;
use crate::log::facts::stop::{DrainKill, ExitCodes, Grace, NotSent, StopCause};
use crate::log::facts::{Command, Ending, Named, Proc, Sender, Signal};
use crate::log::format::Timestamp;

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
    forwards: Vec<(Signal, Signal, Named)>,
    orphans_reaped: u64,
    /// The processes vigil reaped that the OOM killer killed, and when.
    oom_victims: Vec<(Pid, Timestamp)>,
}

/// How many forwarded signal numbers the ledger has room for from the
/// start.
const FORWARDS_ROOM: usize = 4;

/// Why a deadline's SIGKILL came, and whom it went to.
type Killed = (DrainKill, Vec<Proc>);

/// The child as it started (`Event::Started`).
#[derive(Debug)]
struct Started {
    command: Command,
    pid: Pid,
    at: Timestamp,
    limit: Option<u64>,
    oom_group: bool,
    terminal: bool,
}

/// `command: sh -c 'exit 3' (pid 7)`, the command cut to `COMMAND_MAX`:
/// the exit report's and the provisional message's words.
impl Display for Started {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let command = exit::shorten(&self.command.text, exit::COMMAND_MAX);
        write!(f, "command: {command} (pid {})", self.pid)
    }
}

/// The stop sequence, from `Event::Stopping` on.
#[derive(Debug)]
pub struct Stop {
    pub cause: StopCause,
    pub at: Instant,
    grace: Option<Grace>,
    /// The signal the child was sent to stop it, after `--rewrite`.
    pub sent: Option<Signal>,
    pub not_sent: Option<NotSent>,
    /// A later stop signal, forwarded at once during the stop: what came,
    /// from whom, what was sent, when.
    pub later: Option<(Signal, Named, Signal, Instant)>,
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
                // Room for the forwards a stop usually makes, taken now:
                // the first stop signal's forward then allocates nothing
                // between its `kill` and vigil's next wait.
                self.forwards.reserve(FORWARDS_ROOM);
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
            Event::OomKilled { pid, at, .. } => self.oom_victims.push((pid, at)),
            _ => {}
        }
    }

    /// A forwarded signal: the last of its number; the stop's own (sent in
    /// vigil's name) or a later stop signal, for the stop.
    fn forwarded(&mut self, signal: Signal, sent: Signal, sender: &Named, later: Option<Instant>) {
        if matches!(sender.sender, Sender::Vigil)
            && let Some(stop) = &mut self.stop
            && stop.sent.is_none()
        {
            stop.sent = Some(sent);
        }
        if let (Some(at), Some(stop)) = (later, &mut self.stop) {
            stop.later = Some((signal, sender.clone(), sent, at));
        }
        match self.forwards.iter_mut().find(|(s, _, _)| *s == sent) {
            // A storm from one sender: nothing to copy again.
            Some((_, last, named)) if named == sender => *last = signal,
            Some(entry) => *entry = (sent, signal, sender.clone()),
            None => self.forwards.push((sent, signal, sender.clone())),
        }
    }

    /// The name already known for `sender` as the last sender of `sent`:
    /// a storm of signals from one process reads its name once.
    pub fn known_sender(&self, sent: Signal, sender: Sender) -> Option<Named> {
        self.forwards
            .iter()
            .find(|(s, _, named)| *s == sent && named.sender == sender)
            .map(|(_, _, named)| named.clone())
    }

    /// What the memory cgroup counted, as vigil last saw it.
    pub fn memory_events(&self) -> crate::log::facts::MemoryEvents {
        self.memory.events
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

    /// The exit report, once the child has ended, with vigil's exit status:
    /// `codes` are `--exit-code`'s, `expected` `-e`'s, and the cgroup
    /// counted `oom_kills` OOM kills.
    pub fn exit(&self, codes: &ExitCodes, expected: &[i32], oom_kills: u64) -> Option<Exit<'_>> {
        let (ending, ended_at) = self.ended?;
        let started = self.started.as_ref()?;
        let mut exit = Exit {
            ledger: self,
            started,
            ending,
            ended_at,
            status: 0,
            by: None,
            oom_kills,
        };
        (exit.status, exit.by) = exit.decide_status(codes, expected);
        Some(exit)
    }

    /// The provisional termination message, once the child has started.
    pub fn provisional(&self) -> Option<Provisional<'_>> {
        Some(Provisional {
            started: self.started.as_ref()?,
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
