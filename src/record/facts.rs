//! vigil's own facts as fields, written one way wherever they appear: a
//! process, how a process ended, a hook's outcome, a signal and its sender.
//! (The rest of `record` knows nothing of vigil's types.)

use std::borrow::Cow;

use super::{Fields, Obj, Value};
use crate::hooks::{self, Cancel, Outcome};
use crate::procs::Proc;
use crate::reap::Ending;
use crate::signals::{self, Sender};

/// A signal, written by name: `SIGTERM`, `SIGRTMIN+2`, `SIGRTMAX`, or
/// `signal 32` for the numbers the C library keeps for itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signal(pub i32);

impl From<Signal> for Value<'_> {
    fn from(signal: Signal) -> Self {
        if signal.0 == signals::MAX_SIGNAL {
            // One word, where messages say `SIGRTMAX (SIGRTMIN+30)`.
            return Value::Word(Cow::Borrowed("SIGRTMAX"));
        }
        Value::Word(Cow::Owned(signals::name(signal.0)))
    }
}

/// `{"pid": 7, "name": "sleep"}`
impl Fields for Proc {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        o.field("pid", self.pid).field("name", &self.name);
    }
}

/// `{"kind": "exited", "code": 3, "status": 3}` or `{"kind": "killed",
/// "signal": "SIGKILL", "core_dumped": false, "status": 137}`: `status` is
/// the shell's (the code, or 128+N).
impl Fields for Ending {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        match *self {
            Ending::Exited(code) => o.word("kind", "exited").field("code", code),
            Ending::Killed {
                signal,
                core_dumped,
            } => o
                .word("kind", "killed")
                .field("signal", Signal(signal))
                .field("core_dumped", core_dumped),
        };
        o.field("status", self.status());
    }
}

/// A signal's sender as the kernel gave it, with the name vigil read from
/// /proc when the signal arrived (only a sender in vigil's namespace has
/// one, and only for the signals whose sender vigil names).
#[derive(Clone, Copy, Debug)]
pub struct SignalSender<'a> {
    pub sender: Sender,
    pub name: Option<&'a str>,
}

/// `{"kind": "process", "pid": 42, "uid": 0, "name": "kill"}`,
/// `{"kind": "outside_namespace", "pid": 0, "uid": 0}`, `{"kind":
/// "kernel"}`, `{"kind": "parent_death"}` (the `-p` signal), `{"kind":
/// "vigil"}`.
impl Fields for SignalSender<'_> {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        match self.sender {
            Sender::Process { pid: 0, uid } => {
                o.word("kind", "outside_namespace")
                    .field("pid", 0)
                    .field("uid", uid);
            }
            Sender::Process { pid, uid } => {
                o.word("kind", "process")
                    .field("pid", pid)
                    .field("uid", uid)
                    .opt("name", self.name);
            }
            Sender::Kernel => {
                o.word("kind", "kernel");
            }
            Sender::ParentDeath => {
                o.word("kind", "parent_death");
            }
            Sender::Vigil => {
                o.word("kind", "vigil");
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
impl Fields for hooks::Record {
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
