//! The exit report as a record (`event: "exit"`), for `--log-format
//! json|logfmt` and their termination log: the facts the text line says,
//! as the fields docs/logging.md lists.

use std::ffi::OsString;
use std::time::Instant;

use super::{Cause, DrainKill, Exit, Forwarded, Stop, StopCause};
use crate::record::{Argv, Obj, Timestamp, Value};
use crate::signals::Signal;

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

impl<'r> Exit<'r> {
    /// The exit record's fields: `argv` is the command exactly as it was
    /// run (every byte of it, where the text line shows only what is valid
    /// UTF-8), `clocks` turn the instants vigil timed into times.
    pub fn fields(&self, o: &mut Obj<'_, 'r>, argv: &'r [OsString], clocks: Clocks) {
        let r = self.report;
        let timeout = matches!(
            r.stop,
            Some(Stop {
                cause: StopCause::Timeout(_),
                ..
            })
        );
        // The command's text, as the report has it, is its exact bytes when
        // they were valid UTF-8 without a control character: no need to
        // join the words again.
        let command = if r.command_exact {
            Value::from(r.command.as_str())
        } else {
            Value::from(Argv(argv))
        };
        o.field("status", r.status)
            .object_with("ending", |o| self.ending_fields(o))
            .field("command", command)
            .field("pid", r.child_pid);
        if let Some(stop) = &r.stop {
            o.object_with("stop", |o| self.stop_fields(o, stop, clocks));
        }
        if let Some(killed) = &r.grace_killed {
            o.list("grace_kills", killed);
        }
        if !r.hooks.is_empty() {
            o.list("hooks", &r.hooks);
        }
        self.drain_fields(o);
        o.field("oom_kills", r.oom_kills)
            .field("orphans_reaped", r.orphans_reaped)
            .field("timeout", timeout);
    }

    /// How the child ended, and what ended it.
    fn ending_fields(&self, o: &mut Obj<'_, 'r>) {
        o.flatten(self.ending);
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
    fn stop_fields(&self, o: &mut Obj<'_, 'r>, stop: &'r Stop, clocks: Clocks) {
        let r = self.report;
        let cause = match &stop.cause {
            StopCause::Signal { .. } => "signal",
            StopCause::PostStartFailed => "post_start_failed",
            StopCause::Timeout(_) => "timeout",
            StopCause::Fault(_) => "fault",
        };
        o.word("cause", cause);
        if let StopCause::Signal { signal, sender } = &stop.cause {
            o.field("signal", Signal(*signal)).object("sender", sender);
        }
        o.field("time", clocks.at(stop.at));
        match &stop.cause {
            StopCause::Timeout(after) => {
                o.field("timeout", *after);
            }
            StopCause::Fault(why) => {
                o.field("error", why.as_str());
            }
            StopCause::Signal { .. } | StopCause::PostStartFailed => {}
        }
        o.opt("grace_period", r.grace_period)
            .opt("sent", r.stop_signal_sent.map(Signal));
        if let Some(later) = &r.later_stop {
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
    fn drain_fields(&self, o: &mut Obj<'_, 'r>) {
        let r = self.report;
        let Some(left) = r.drained.filter(|n| *n > 0) else {
            return;
        };
        o.object_with("drain", |o| {
            o.field("left", left);
            match r.drain_killed.as_ref().map(|(why, _)| *why) {
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
        if let Some((_, killed)) = &r.drain_killed {
            o.list("drain_kills", killed);
        }
    }
}
