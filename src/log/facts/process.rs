//! Processes as facts: one by pid and name, and how one ended.

use std::ffi::OsString;
use std::fmt;

use nix::unistd::Pid;

use super::Signal;
use crate::log::format::{Fields, Obj, Value};

/// A process by pid and name, for the log and the exit report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proc {
    pub pid: Pid,
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
pub fn list<T: fmt::Display>(procs: &[T]) -> String {
    let parts: Vec<String> = procs.iter().map(T::to_string).collect();
    parts.join(", ")
}

/// The most processes a line lists.
pub const PROCS_MAX: usize = 20;

/// At most `PROCS_MAX` of `procs`, as `words` writes them, then how many
/// more there were: `7 (sleep), 9 (sh) and 30 more`.
pub fn capped<T>(procs: &[T], words: impl FnOnce(&[T]) -> String) -> String {
    let shown = procs.get(..PROCS_MAX).unwrap_or(procs);
    let mut text = words(shown);
    if procs.len() > shown.len() {
        text.push_str(&format!(" and {} more", procs.len() - shown.len()));
    }
    text
}

/// How a process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    Killed { signal: Signal, core_dumped: bool },
}

impl Ending {
    /// The shell's convention: the exit code, or 128+N for death by signal N.
    pub fn status(self) -> i32 {
        match self {
            Ending::Exited(code) => code,
            Ending::Killed { signal, .. } => 128 + signal.0,
        }
    }

    pub fn succeeded(self) -> bool {
        self == Ending::Exited(0)
    }

    /// The signal the ending names: death by it, or 128+N, the exit code
    /// of a program (a shell) that caught signal N and said so.
    pub fn signal(self) -> Option<Signal> {
        match self {
            Ending::Killed { signal, .. } => Some(signal),
            Ending::Exited(code) => (129..=128 + super::signal::MAX_SIGNAL)
                .contains(&code)
                .then(|| Signal(code - 128)),
        }
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
                .field("signal", signal)
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
                let core = if core_dumped { ", core dumped" } else { "" };
                write!(f, "was killed by {signal} (status {}{core})", self.status())
            }
        }
    }
}

/// A process that still runs, and its state: `7 (bash run.sh) sleeping`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Running {
    pub pid: Pid,
    pub name: String,
    /// `/proc/PID/stat`'s letter: `R`, `S`, `D`, `T`...
    pub state: char,
}

impl fmt::Display for Running {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}) {}", self.pid, self.name, StateWord(self.state))
    }
}

/// `{"pid": 7, "name": "bash run.sh", "state": "sleeping"}`
impl Fields for Running {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        o.field("pid", self.pid)
            .field("name", self.name.as_str())
            .field("state", StateWord(self.state).to_string());
    }
}

/// A process state in words: `/proc/PID/stat`'s letter.
struct StateWord(char);

impl fmt::Display for StateWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            'R' => f.write_str("running"),
            'S' => f.write_str("sleeping"),
            'D' => f.write_str("in uninterruptible sleep"),
            'T' => f.write_str("stopped"),
            't' => f.write_str("traced"),
            'I' => f.write_str("idle"),
            other => write!(f, "state {other}"),
        }
    }
}

/// The child, a shell waiting for its foreground job (`jobs`: its children
/// in its process group), which never got the stop signal: it went to the
/// shell alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shell {
    pub pid: Pid,
    pub name: String,
    pub jobs: Vec<Running>,
}

/// `{"pid": 7, "name": "bash run.sh", "jobs": [{"pid": 9, "name": "sleep 1000"}]}`
impl Fields for Shell {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        o.field("pid", self.pid)
            .field("name", self.name.as_str())
            .list_with("jobs", self.jobs.iter(), |o, job| {
                o.field("pid", job.pid).field("name", job.name.as_str());
            });
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

/// The command in a record: its text, when that is exactly its bytes as a
/// shell reads them, else its words joined again byte for byte.
impl<'a> From<&'a Command> for Value<'a> {
    fn from(command: &'a Command) -> Self {
        if command.exact {
            Value::from(command.text.as_str())
        } else {
            Value::Argv(&command.argv)
        }
    }
}
