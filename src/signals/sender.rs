//! Who sent a signal: what the kernel says (`Sender`), with the name vigil
//! read from /proc (`Named`), for the log, the exit report and records.

use std::borrow::Cow;
use std::fmt;

use crate::record::{Fields, Obj};
use crate::sys::signal::SignalInfo;

/// One signal as read from the signalfd, with what the kernel says of its sender.
#[derive(Clone, Copy, Debug)]
pub struct Received {
    pub signal: i32,
    pub sender: Sender,
}

/// Who sent a signal, from signalfd's `ssi_code`, `ssi_pid` and `ssi_uid`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sender {
    /// Raised by the kernel itself (a child's exit, a fault, a terminal).
    Kernel,
    /// Sent by a process (kill, sigqueue, tgkill). Pid 0 means a process
    /// outside vigil's PID namespace, such as the container runtime.
    Process { pid: u32, uid: u32 },
    /// vigil's own doing (a SIGPIPE from its own write, a `-p` signal raised
    /// by itself).
    Vigil,
    /// The `-p` signal, sent because vigil's parent died. The kernel sends
    /// it in the name of the dying parent, so `from_siginfo` cannot tell it
    /// apart; the supervisor, which knows the parent, says so.
    ParentDeath,
    /// A key typed at vigil's controlling terminal (Ctrl-C, Ctrl-\, Ctrl-Z)
    /// or the terminal's new size (SIGWINCH): the kernel's terminal driver
    /// sends these to the foreground process group, and vigil's own group
    /// can be that (after `fg`, before vigil hands the terminal back to the
    /// child). `from_siginfo` sees only `Kernel`; the supervisor, which can
    /// ask whether vigil has a terminal, says so (`is_terminal_signal`).
    Terminal,
}

impl Sender {
    /// `own_pid` is vigil's pid, asked once: a `getpid` per signal would
    /// be a third system call on the forwarding path.
    pub(super) fn from_siginfo(info: &SignalInfo, own_pid: u32) -> Sender {
        // si_code <= 0 means a user-space sender: SI_USER (0), SI_QUEUE (-1),
        // SI_TKILL (-6) and the other negative codes; SI_KERNEL and the
        // positive, signal-specific codes mean the kernel.
        if info.code > 0 {
            return Sender::Kernel;
        }
        if info.pid != 0 && info.pid == own_pid {
            return Sender::Vigil;
        }
        Sender::Process {
            pid: info.pid,
            uid: info.uid,
        }
    }

    /// The description of a sender that has no pid to name: fixed text, so
    /// that describing `docker stop`'s SIGTERM (pid 0) neither formats nor
    /// allocates. `None` for a process of this namespace.
    pub fn fixed_description(self) -> Option<&'static str> {
        match self {
            Sender::Kernel => Some("from the kernel"),
            Sender::Terminal => Some("from the terminal"),
            Sender::Vigil => Some("from vigil itself"),
            Sender::ParentDeath => Some("from the kernel: vigil's parent died (-p)"),
            Sender::Process { pid: 0, .. } => Some("from pid 0 (outside this PID namespace)"),
            Sender::Process { .. } => None,
        }
    }
}

/// The signals a terminal's driver sends to its foreground process group,
/// from the keyboard (Ctrl-C, Ctrl-\, Ctrl-Z) or for a new window size.
/// The kernel sends SIGINT on its own only to the init of the whole machine
/// for Ctrl-Alt-Del, which has no controlling terminal.
pub fn is_terminal_signal(signal: i32) -> bool {
    matches!(
        signal,
        libc::SIGINT | libc::SIGQUIT | libc::SIGTSTP | libc::SIGWINCH
    )
}

/// A signal's sender with the name vigil read from /proc when the signal
/// arrived: only a process of vigil's namespace has one, and only for the
/// signals whose sender vigil names (stop signals, and forwarded ones that
/// the report may need). Read when the signal comes, since by the time
/// the report is written the sender may be gone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    pub sender: Sender,
    /// `None` when there is no name to read, or /proc no longer had it.
    pub name: Option<String>,
}

impl Named {
    /// A sender without a name (none was read).
    pub fn bare(sender: Sender) -> Named {
        Named { sender, name: None }
    }
}

/// `from pid 42 (kill, uid 0)`, `from pid 0 (outside this PID
/// namespace)`, `from the kernel`.
impl fmt::Display for Named {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.sender.fixed_description(), self.sender) {
            (Some(text), _) => f.write_str(text),
            (None, Sender::Process { pid, uid }) => {
                let name = self.name.as_deref().unwrap_or("name unknown");
                write!(f, "from pid {pid} ({name}, uid {uid})")
            }
            (None, _) => Ok(()),
        }
    }
}

/// `{"kind": "process", "pid": 42, "uid": 0, "name": "kill"}`,
/// `{"kind": "outside_namespace", "pid": 0, "uid": 0}`, `{"kind":
/// "kernel"}`, `{"kind": "terminal"}`, `{"kind": "parent_death"}` (the
/// `-p` signal), `{"kind": "vigil"}`.
impl Fields for Named {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        sender_fields(self.sender, self.name.as_deref().map(Cow::Borrowed), o);
    }
}

impl Named {
    /// The same fields, the name moved into the record.
    pub fn into_fields<'a>(self, o: &mut Obj<'_, 'a>) {
        sender_fields(self.sender, self.name.map(Cow::Owned), o);
    }
}

fn sender_fields<'a>(sender: Sender, name: Option<Cow<'a, str>>, o: &mut Obj<'_, 'a>) {
    match sender {
        Sender::Process { pid: 0, uid } => {
            o.word("kind", "outside_namespace")
                .field("pid", 0)
                .field("uid", uid);
        }
        Sender::Process { pid, uid } => {
            o.word("kind", "process")
                .field("pid", pid)
                .field("uid", uid)
                .opt("name", name);
        }
        Sender::Kernel => {
            o.word("kind", "kernel");
        }
        Sender::Terminal => {
            o.word("kind", "terminal");
        }
        Sender::ParentDeath => {
            o.word("kind", "parent_death");
        }
        Sender::Vigil => {
            o.word("kind", "vigil");
        }
    }
}

impl fmt::Display for Sender {
    /// The sender as the kernel gave it. `procs::describe_sender` adds the
    /// sender's name from /proc; this module stays free of /proc.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.fixed_description(), *self) {
            (Some(text), _) => f.write_str(text),
            (None, Sender::Process { pid, uid }) => write!(f, "from pid {pid} (uid {uid})"),
            (None, _) => Ok(()),
        }
    }
}
