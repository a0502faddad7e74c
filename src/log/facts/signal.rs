//! Signals as facts: their names, parsing a name the user gave, the
//! rewrites of `--rewrite`, and who sent one (`Sender`, with the name vigil
//! read from /proc: `Named`).

use std::borrow::Cow;
use std::fmt;

use nix::sys::signal::Signal as Classic;
use nix::unistd::Pid;

use crate::log::format::{Fields, Obj, Value};

/// The highest signal number the kernel knows.
pub const MAX_SIGNAL: i32 = 64;

/// SIGRTMIN as glibc programs (and `kill -l`) see it: the kernel's 32 and
/// 33 are taken by the C library's threads.
const RTMIN: i32 = 34;

/// A signal, 1 to 64 (realtime ones included, which nix's `Signal` lacks),
/// written by name: `SIGTERM`, `SIGRTMIN+2`, `SIGRTMAX`, or `signal 32`
/// for the numbers the C library keeps. The number is the kernel's, for
/// the system calls (`sys`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Signal(pub i32);

impl Signal {
    pub const HUP: Signal = Signal(libc::SIGHUP);
    pub const INT: Signal = Signal(libc::SIGINT);
    pub const QUIT: Signal = Signal(libc::SIGQUIT);
    pub const ABRT: Signal = Signal(libc::SIGABRT);
    pub const KILL: Signal = Signal(libc::SIGKILL);
    pub const USR1: Signal = Signal(libc::SIGUSR1);
    pub const PIPE: Signal = Signal(libc::SIGPIPE);
    pub const TERM: Signal = Signal(libc::SIGTERM);
    pub const CHLD: Signal = Signal(libc::SIGCHLD);
    pub const CONT: Signal = Signal(libc::SIGCONT);
    pub const STOP: Signal = Signal(libc::SIGSTOP);
    pub const TSTP: Signal = Signal(libc::SIGTSTP);
    pub const TTIN: Signal = Signal(libc::SIGTTIN);
    pub const TTOU: Signal = Signal(libc::SIGTTOU);
    pub const WINCH: Signal = Signal(libc::SIGWINCH);
    pub const IO: Signal = Signal(libc::SIGIO);
    pub const MAX: Signal = Signal(MAX_SIGNAL);
}

impl From<Signal> for Value<'_> {
    fn from(signal: Signal) -> Self {
        if signal == Signal::MAX {
            // One word, where messages say `SIGRTMAX (SIGRTMIN+30)`.
            return Value::Word(Cow::Borrowed("SIGRTMAX"));
        }
        Value::Word(name(signal))
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&name(*self))
    }
}

/// A signal's name for messages: `SIGTERM`, `SIGRTMIN+2`, `signal 32`.
/// The classic signals' names are nix's, with their `SIG`, as messages and
/// records show them: the usual signals need no formatting.
fn name(Signal(signal): Signal) -> Cow<'static, str> {
    if let Ok(classic) = Classic::try_from(signal) {
        return Cow::Borrowed(classic.as_str());
    }
    Cow::Owned(match signal {
        RTMIN..=MAX_SIGNAL => match signal - RTMIN {
            0 => "SIGRTMIN".to_string(),
            n if signal == MAX_SIGNAL => format!("SIGRTMAX (SIGRTMIN+{n})"),
            n => format!("SIGRTMIN+{n}"),
        },
        _ => format!("signal {signal}"),
    })
}

/// Parses a signal given by the user: `TERM`, `SIGTERM`, `term`, `15`,
/// `RTMIN+2`, `SIGRTMAX-1`. Accepts 1 to 64.
pub fn parse(text: &str) -> Result<Signal, String> {
    let bad = || {
        format!(
            "'{text}' is not a signal: use a name like TERM or SIGTERM, RTMIN+N, or a number from 1 to {MAX_SIGNAL}"
        )
    };
    let trimmed = text.trim();
    if let Ok(n) = trimmed.parse::<i32>() {
        return if (1..=MAX_SIGNAL).contains(&n) {
            Ok(Signal(n))
        } else {
            Err(bad())
        };
    }
    let upper = trimmed.to_ascii_uppercase();
    let bare = upper.strip_prefix("SIG").unwrap_or(&upper);
    if let Ok(classic) = format!("SIG{bare}").parse::<Classic>() {
        return Ok(Signal(classic as i32));
    }
    // Aliases that `kill -l` and other tools accept.
    match bare {
        "IOT" => return Ok(Signal::ABRT),
        "POLL" => return Ok(Signal::IO),
        "CLD" => return Ok(Signal::CHLD),
        "RTMIN" => return Ok(Signal(RTMIN)),
        "RTMAX" => return Ok(Signal::MAX),
        _ => {}
    }
    let offset = |rest: &str| rest.parse::<i32>().ok();
    let n = if let Some(rest) = bare.strip_prefix("RTMIN+") {
        offset(rest).and_then(|k| RTMIN.checked_add(k))
    } else if let Some(rest) = bare.strip_prefix("RTMAX-") {
        offset(rest).and_then(|k| MAX_SIGNAL.checked_sub(k))
    } else {
        None
    };
    match n {
        Some(n) if (RTMIN..=MAX_SIGNAL).contains(&n) => Ok(Signal(n)),
        _ => Err(bad()),
    }
}

/// Why vigil never forwards `signal`, if it does not: what `--rewrite` and
/// `--stop-signals` refuse to name.
pub fn never_forwarded(signal: Signal) -> Option<&'static str> {
    match signal {
        Signal::KILL | Signal::STOP => Some("the kernel lets no one catch it"),
        Signal::CHLD => Some("vigil keeps it to reap"),
        Signal::TTIN | Signal::TTOU => Some("vigil ignores it, as tini does"),
        _ => None,
    }
}

/// The signals a terminal's driver sends to its foreground process group,
/// from the keyboard (Ctrl-C, Ctrl-\, Ctrl-Z) or for a new window size.
/// The kernel sends SIGINT on its own only to the init of the whole machine
/// for Ctrl-Alt-Del, which has no controlling terminal.
pub fn is_terminal_signal(signal: Signal) -> bool {
    matches!(
        signal,
        Signal::INT | Signal::QUIT | Signal::TSTP | Signal::WINCH
    )
}

/// One `--rewrite` rule: FROM is sent as TO, or dropped (TO 0: `None`).
pub type Rewrite = (Signal, Option<Signal>);

/// Signal rewriting (`--rewrite FROM:TO`): TO 0 drops the signal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rewrites(Vec<Rewrite>);

impl Rewrites {
    /// Parses one `FROM:TO`.
    pub fn parse_rule(text: &str) -> Result<Rewrite, String> {
        let (from, to) = text.split_once(':').ok_or_else(|| {
            format!("'{text}' is not FROM:TO (for example TERM:QUIT, or USR1:0 to drop USR1)")
        })?;
        if from.trim().is_empty() || to.trim().is_empty() {
            return Err(format!(
                "'{text}' is not FROM:TO: both sides need a signal (TO may be 0 to drop it)"
            ));
        }
        let in_rule = |why: String| format!("in '{text}': {why}");
        let from = parse(from).map_err(in_rule)?;
        if let Some(never) = never_forwarded(from) {
            return Err(format!(
                "in '{text}': vigil never forwards {} ({never}), so it cannot be rewritten",
                name(from)
            ));
        }
        let to = if to.trim() == "0" {
            None
        } else {
            Some(parse(to).map_err(in_rule)?)
        };
        Ok((from, to))
    }

    pub fn add(&mut self, rule: Rewrite) {
        self.0.retain(|(from, _)| *from != rule.0);
        self.0.push(rule);
    }

    /// The signal to send for `signal`; `None` when it is to be dropped.
    pub fn apply(&self, signal: Signal) -> Option<Signal> {
        self.0
            .iter()
            .find(|(from, _)| *from == signal)
            .map_or(Some(signal), |(_, to)| *to)
    }
}

/// Where a signal goes: one process, or (`-g`, a hook, the terminal's
/// signals) a whole process group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Process(Pid),
    Group(Pid),
}

/// `pid 7`, `process group 7`.
impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Process(pid) => write!(f, "pid {pid}"),
            Target::Group(pgid) => write!(f, "process group {pgid}"),
        }
    }
}

/// `{"pid": 7, "group": false}`
impl Fields for Target {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        let (pid, group) = match *self {
            Target::Process(pid) => (pid, false),
            Target::Group(pgid) => (pgid, true),
        };
        o.field("pid", pid).field("group", group);
    }
}

/// One signal as vigil took it, with what the kernel says of its sender.
#[derive(Clone, Copy, Debug)]
pub struct Received {
    pub signal: Signal,
    pub sender: Sender,
}

/// The pid a signal from outside vigil's PID namespace comes from.
pub const OUTSIDE: Pid = Pid::from_raw(0);

/// Who sent a signal, from its siginfo's `si_code`, `si_pid` and `si_uid`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sender {
    /// Raised by the kernel itself (a child's exit, a fault, a terminal).
    Kernel,
    /// Sent by a process (kill, sigqueue, tgkill). Pid 0 means a process
    /// outside vigil's PID namespace, such as the container runtime.
    Process { pid: Pid, uid: u32 },
    /// vigil's own doing (a SIGPIPE from its own write, a `-p` signal raised
    /// by itself).
    Vigil,
    /// The `-p` signal, sent because vigil's parent died. The kernel sends
    /// it in the name of the dying parent, so the siginfo cannot
    /// tell it apart; the supervisor, which knows the parent, says so.
    ParentDeath,
    /// A key typed at vigil's controlling terminal (Ctrl-C, Ctrl-\, Ctrl-Z)
    /// or the terminal's new size (SIGWINCH): the kernel's terminal driver
    /// sends these to the foreground process group, and vigil's own group
    /// can be that (after `fg`, before vigil hands the terminal back to the
    /// child). The siginfo says only `Kernel`; the supervisor,
    /// which can ask whether vigil has a terminal, says so
    /// (`is_terminal_signal`).
    Terminal,
}

/// The sender as the kernel gave it, without a name from /proc: fixed
/// text but for a process of this namespace, so that describing `docker
/// stop`'s SIGTERM (pid 0) neither formats nor allocates.
impl fmt::Display for Sender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Sender::Kernel => f.write_str("from the kernel"),
            Sender::Terminal => f.write_str("from the terminal"),
            Sender::Vigil => f.write_str("from vigil itself"),
            Sender::ParentDeath => f.write_str("from the kernel: vigil's parent died (-p)"),
            Sender::Process { pid, .. } if pid == OUTSIDE => {
                f.write_str("from pid 0 (outside this PID namespace)")
            }
            Sender::Process { pid, uid } => write!(f, "from pid {pid} (uid {uid})"),
        }
    }
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

    /// `sender`, named by `name_of` when it is a process of vigil's
    /// namespace (pid 0 sent from outside it, where /proc cannot see).
    pub fn looked_up(sender: Sender, name_of: impl FnOnce(Pid) -> Option<String>) -> Named {
        let name = match sender {
            Sender::Process { pid, .. } if pid != OUTSIDE => name_of(pid),
            _ => None,
        };
        Named { sender, name }
    }
}

/// `from pid 42 (kill, uid 0)`, `from pid 0 (outside this PID
/// namespace)`, `from the kernel`.
impl fmt::Display for Named {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.sender {
            Sender::Process { pid, uid } if pid != OUTSIDE => {
                let name = self.name.as_deref().unwrap_or("name unknown");
                write!(f, "from pid {pid} ({name}, uid {uid})")
            }
            sender => sender.fmt(f),
        }
    }
}

/// `{"kind": "process", "pid": 42, "uid": 0, "name": "kill"}`,
/// `{"kind": "outside_namespace", "pid": 0, "uid": 0}`, `{"kind":
/// "kernel"}`, `{"kind": "terminal"}`, `{"kind": "parent_death"}` (the
/// `-p` signal), `{"kind": "vigil"}`.
impl Fields for Named {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        let kind = match self.sender {
            Sender::Process { pid, .. } if pid == OUTSIDE => "outside_namespace",
            Sender::Process { .. } => "process",
            Sender::Kernel => "kernel",
            Sender::Terminal => "terminal",
            Sender::ParentDeath => "parent_death",
            Sender::Vigil => "vigil",
        };
        o.word("kind", kind);
        if let Sender::Process { pid, uid } = self.sender {
            o.field("pid", pid)
                .field("uid", uid)
                .opt("name", self.name.as_deref());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_round_trip() {
        for n in 1..=31 {
            assert_eq!(parse(&name(Signal(n))).unwrap(), Signal(n));
        }
        assert_eq!(parse("term").unwrap(), Signal(15));
        assert_eq!(parse("SIGUSR1").unwrap(), Signal(10));
        assert_eq!(parse("34").unwrap(), Signal(34));
        assert_eq!(parse("RTMIN+2").unwrap(), Signal(36));
        assert_eq!(parse("SIGRTMAX-1").unwrap(), Signal(63));
        assert_eq!(name(Signal(32)), "signal 32");
        assert_eq!(name(Signal(36)), "SIGRTMIN+2");
        for bad in ["", "0", "65", "FOO", "RTMIN+40", "-1", "SIG"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        // An offset past the end of the numbers is no signal either.
        for bad in ["RTMIN+2147483647", "RTMAX--2147483648", "RTMAX-2147483647"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rewrites() {
        let mut r = Rewrites::default();
        r.add(Rewrites::parse_rule("TERM:QUIT").unwrap());
        r.add(Rewrites::parse_rule("10:0").unwrap());
        assert_eq!(r.apply(Signal(15)), Some(Signal(3)));
        assert_eq!(r.apply(Signal(10)), None);
        assert_eq!(r.apply(Signal(2)), Some(Signal(2)));
        for bad in [
            "TERM",
            "TERM:",
            ":QUIT",
            "99:1",
            "TERM:FOO",
            "KILL:TERM",
            "STOP:0",
            "CHLD:HUP",
            "TTIN:0",
            "TTOU:INT",
        ] {
            assert!(Rewrites::parse_rule(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_read_and_written() {
        assert_eq!(name(Signal(15)), "SIGTERM");
        assert_eq!(name(Signal(34)), "SIGRTMIN");
        assert_eq!(name(Signal(36)), "SIGRTMIN+2");
        assert_eq!(name(Signal(32)), "signal 32");
        assert_eq!(parse("sigterm"), Ok(Signal(15)));
        assert_eq!(parse("SYS"), Ok(Signal(31)));
    }
}
