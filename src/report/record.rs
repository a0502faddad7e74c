//! The exit report as a record (`event: "exit"`), for `--log-format
//! json|logfmt` and their termination log: the facts the text line says,
//! as the fields docs/logging.md lists.

use std::time::Instant;

use super::{Cause, DrainKill, Exit, Forwarded, Stop, StopCause};
use crate::facts::Signal;
use crate::record::{Argv, Obj, Timestamp, Value, Word};

/// The wall clock and the monotonic clock read at the same moment, to turn
/// the instants vigil timed (a stop signal's arrival) into times.
#[derive(Clone, Copy, Debug)]
pub struct Clocks {
    pub wall: Timestamp,
    pub now: Instant,
}

impl Clocks {
    fn at(self, then: Instant) -> Timestamp {
        self.wall.minus(self.now.saturating_duration_since(then))
    }
}

impl Exit {
    /// The exit record's fields: the command exactly as it was run (every
    /// byte of it, where the text line shows only what is valid UTF-8);
    /// `clocks` turn the instants vigil timed into times.
    pub fn fields<'r>(&'r self, o: &mut Obj<'_, 'r>, clocks: Clocks) {
        let timeout = matches!(
            self.stop,
            Some(Stop {
                cause: StopCause::Timeout(_),
                ..
            })
        );
        // The command's text, as the report has it, is its exact bytes when
        // they were valid UTF-8 without a control character: no need to
        // join the words again.
        let command = if self.command.exact {
            Value::from(self.command.text.as_str())
        } else {
            Value::from(Argv(&self.command.argv))
        };
        o.field("status", self.status)
            .object_with("ending", |o| self.ending_fields(o))
            .field("command", command)
            .field("pid", self.pid);
        if let Some(stop) = &self.stop {
            o.object_with("stop", |o| self.stop_fields(o, stop, clocks));
        }
        if let Some(kill) = self.grace_kill() {
            o.list("grace_kills", &kill.killed);
        }
        if !self.hooks.is_empty() {
            o.list("hooks", &self.hooks);
        }
        self.drain_fields(o);
        if self.oom_kills > 0 {
            o.field("oom_group", self.oom_group);
        }
        o.field("oom_kills", self.oom_kills)
            .field("orphans_reaped", self.orphans_reaped)
            .field("timeout", timeout);
    }

    /// How the child ended, and what ended it.
    fn ending_fields<'r>(&'r self, o: &mut Obj<'_, 'r>) {
        o.flatten(&self.ending);
        let Some(cause) = self.cause() else {
            return;
        };
        o.word("cause", cause.word());
        if let Cause::Forwarded(forwarded) = cause {
            let Forwarded { forward, sender } = forwarded;
            o.object_with("forwarded", |o| {
                o.field("signal", Signal(forward.received.signal))
                    .object_with("sender", |o| sender.into_fields(o))
                    .field("sent", Signal(forward.sent));
            });
        }
    }

    /// The stop sequence: what started it, what was sent, how long the
    /// child took.
    fn stop_fields<'r>(&'r self, o: &mut Obj<'_, 'r>, stop: &'r Stop, clocks: Clocks) {
        o.word("cause", stop.cause.word());
        if let StopCause::Signal { signal, sender } = &stop.cause {
            o.field("signal", Signal(*signal)).object("sender", sender);
        }
        o.field("time", clocks.at(stop.at));
        match &stop.cause {
            StopCause::Timeout(after) => {
                o.field("timeout", *after);
            }
            StopCause::NotReady { timeout, last } => {
                o.field("timeout", *timeout).opt("error", last.as_deref());
            }
            StopCause::Fault(why) => {
                o.field("error", why.as_str());
            }
            StopCause::Signal { .. } | StopCause::PostStartFailed => {}
        }
        o.opt("grace_period", self.grace.as_ref().map(|g| g.period))
            .opt("sent", stop.sent.map(Signal))
            .opt("not_sent", stop.not_sent.map(|n| Word(n.word())));
        if let Some(later) = &stop.later {
            o.object_with("later", |o| {
                o.field("signal", Signal(later.forward.received.signal))
                    .object("sender", &later.sender)
                    .field("sent", Signal(later.forward.sent))
                    .field("time", clocks.at(later.at));
            });
            let on = if self.ended_on_later_stop().is_some() {
                "later"
            } else {
                "first"
            };
            o.word("ended_on", on);
        }
        o.opt("ended_after", self.ended_after());
    }

    /// What the child left behind: how many got SIGTERM, and why and to
    /// whom the SIGKILL went.
    fn drain_fields<'r>(&'r self, o: &mut Obj<'_, 'r>) {
        let Some(drain) = self.drain.as_ref().filter(|d| d.left > 0) else {
            return;
        };
        o.object_with("drain", |o| {
            o.field("left", drain.left);
            match drain.kill.as_ref().map(|(why, _)| *why) {
                Some(DrainKill::Timeout(after)) => {
                    o.word("kill_cause", "drain_timeout")
                        .field("timeout", after);
                }
                Some(DrainKill::StopSignal(signal)) => {
                    o.word("kill_cause", "stop_signal")
                        .field("signal", Signal(signal));
                }
                None => {}
            }
        });
        if let Some((_, killed)) = &drain.kill {
            o.list("drain_kills", killed);
        }
    }
}
