//! Processes as facts: one by pid and name, and how one ended.

use std::fmt;

use super::Signal;
use crate::record::{Fields, Obj};

/// A process by pid and name, for the log and the exit report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proc {
    pub pid: i32,
    pub name: String,
}

/// `{"pid": 7, "name": "sleep"}`
impl Fields for Proc {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        o.field("pid", self.pid).field("name", &self.name);
    }
}

impl fmt::Display for Proc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.pid, self.name)
    }
}

/// Formats a list of processes as `7 (sleep), 9 (sh)`.
pub fn list(procs: &[Proc]) -> String {
    let parts: Vec<String> = procs.iter().map(Proc::to_string).collect();
    parts.join(", ")
}

/// How a process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    Killed { signal: i32, core_dumped: bool },
}

impl Ending {
    /// The shell's convention: the exit code, or 128+N for death by signal N.
    pub fn status(self) -> i32 {
        match self {
            Ending::Exited(code) => code,
            Ending::Killed { signal, .. } => 128 + signal,
        }
    }

    pub fn succeeded(self) -> bool {
        self == Ending::Exited(0)
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

/// `exited with code 3`, `was killed by SIGKILL (status 137)`.
impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Ending::Exited(code) => write!(f, "exited with code {code}"),
            Ending::Killed {
                signal,
                core_dumped,
            } => {
                let name = Signal(signal);
                let status = 128 + signal;
                let core = if core_dumped { ", core dumped" } else { "" };
                write!(f, "was killed by {name} (status {status}{core})")
            }
        }
    }
}
