//! Signals: their names, the kernel's full signal set, the signalfd vigil
//! reads them from, who sent each one, and forwarding (with `--rewrite`).
//!
//! vigil blocks *every* signal the kernel has (1 to 64) and reads them from a
//! signalfd. libc's `sigfillset` leaves out 32-34, which it keeps for its own
//! threads; an init built on it dies when someone sends it signal 34. So the
//! mask is a raw 64-bit word, handed to the raw syscalls in the kernel's own
//! layout for the architecture (`sys::signal`).

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

mod sender;

pub use sender::{Named, Received, Sender, is_terminal_signal};

use crate::logging::{self, Level};
use crate::record::Value;
use crate::sys::signal::{self as sys, Disposition, RECORD_SIZE, SignalInfo, set_disposition};

/// The highest signal number the kernel knows.
pub const MAX_SIGNAL: i32 = 64;

/// A set of signals in the kernel's own layout: bit N-1 stands for signal N.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SigMask(pub u64);

impl SigMask {
    pub const FULL: SigMask = SigMask(!0);

    pub fn contains(self, signal: i32) -> bool {
        (1..=MAX_SIGNAL).contains(&signal) && self.0 & (1u64 << (signal - 1)) != 0
    }

    pub fn with(self, signal: i32) -> SigMask {
        if (1..=MAX_SIGNAL).contains(&signal) {
            SigMask(self.0 | 1u64 << (signal - 1))
        } else {
            self
        }
    }
}

/// Sets the calling thread's signal mask and returns the previous one
/// (all 64 signals; no allocation, so also between fork and exec).
fn set_mask(mask: SigMask) -> io::Result<SigMask> {
    sys::set_mask(mask.0).map(SigMask)
}

/// What vigil was started with, so that its child can be given the same.
/// Signals vigil does not touch keep their disposition across exec anyway;
/// only the ones vigil changes are remembered.
#[derive(Clone, Copy, Debug)]
pub struct Inherited {
    pub mask: SigMask,
    /// Which of the signals in `VIGIL_DISPOSITIONS` were ignored.
    pub ignored: SigMask,
}

impl Inherited {
    /// Puts back, in a freshly forked child, the mask and the dispositions
    /// vigil was started with. Raw syscalls only: runs between fork and exec.
    /// This also undoes std's reset of SIGPIPE to the default: vigil has its
    /// own `main`, so Rust's runtime never touched SIGPIPE and vigil knows
    /// what its parent gave it.
    pub fn restore_in_child(&self) -> io::Result<()> {
        for (signal, _) in VIGIL_DISPOSITIONS {
            let disposition = if self.ignored.contains(signal) {
                Disposition::Ignore
            } else {
                Disposition::Default
            };
            set_disposition(signal, disposition)?;
        }
        set_mask(self.mask).map(|_| ())
    }
}

/// The dispositions vigil sets for itself (see `block_all`).
const VIGIL_DISPOSITIONS: [(i32, Disposition); 4] = [
    (libc::SIGTTIN, Disposition::Ignore),
    (libc::SIGTTOU, Disposition::Ignore),
    (libc::SIGCHLD, Disposition::Default),
    (libc::SIGPIPE, Disposition::Default),
];

/// Blocks every signal and sets vigil's own dispositions. Returns what vigil
/// was started with. Called first thing in `main`, so nothing sent during
/// start-up is lost or fatal.
///
/// - SIGTTIN/SIGTTOU are ignored, as tini does: vigil must never be stopped
///   by the terminal.
/// - SIGCHLD goes back to the default: if a parent left it ignored, the kernel
///   would reap children by itself and vigil would never see its child's status.
/// - SIGPIPE goes back to the default (it stays blocked, so it cannot kill
///   vigil): a SIGPIPE someone sends is then forwarded like any other signal,
///   and one raised by vigil's own write to a closed pipe is recognised by its
///   sender and dropped.
pub fn block_all() -> io::Result<Inherited> {
    let mask = set_mask(SigMask::FULL)?;
    let mut ignored = SigMask::default();
    for (signal, disposition) in VIGIL_DISPOSITIONS {
        if set_disposition(signal, disposition)? == Disposition::Ignore {
            ignored = ignored.with(signal);
        }
    }
    Ok(Inherited { mask, ignored })
}

/// A signal, written by name in records: `SIGTERM`, `SIGRTMIN+2`,
/// `SIGRTMAX`, or `signal 32` for the numbers the C library keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signal(pub i32);

impl From<Signal> for Value<'_> {
    fn from(signal: Signal) -> Self {
        if signal.0 == MAX_SIGNAL {
            // One word, where messages say `SIGRTMAX (SIGRTMIN+30)`.
            return Value::Word(Cow::Borrowed("SIGRTMAX"));
        }
        Value::Word(name(signal.0))
    }
}

/// `NAMES` with their `SIG`, for messages and records: the usual signals
/// need no formatting.
const FULL_NAMES: [&str; 31] = [
    "SIGHUP",
    "SIGINT",
    "SIGQUIT",
    "SIGILL",
    "SIGTRAP",
    "SIGABRT",
    "SIGBUS",
    "SIGFPE",
    "SIGKILL",
    "SIGUSR1",
    "SIGSEGV",
    "SIGUSR2",
    "SIGPIPE",
    "SIGALRM",
    "SIGTERM",
    "SIGSTKFLT",
    "SIGCHLD",
    "SIGCONT",
    "SIGSTOP",
    "SIGTSTP",
    "SIGTTIN",
    "SIGTTOU",
    "SIGURG",
    "SIGXCPU",
    "SIGXFSZ",
    "SIGVTALRM",
    "SIGPROF",
    "SIGWINCH",
    "SIGIO",
    "SIGPWR",
    "SIGSYS",
];

/// The signalfd vigil reads every signal from, with the record it reads
/// into: allocated once, so the forwarding hot path neither clears nor
/// copies one per signal.
///
/// One signal is read at a time, like the C inits: each is forwarded the
/// moment it is read, before the next is even looked at, so the last of a
/// burst does not wait for the whole burst to be read. A storm of queued
/// realtime signals is handled one read at a time, so vigil's memory never
/// grows with the backlog.
pub struct SignalFd {
    fd: OwnedFd,
    buffer: Box<[u8; RECORD_SIZE]>,
    own_pid: u32,
}

impl std::os::fd::AsFd for SignalFd {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl SignalFd {
    /// Opens a (blocking) signalfd for the full set. The signals must
    /// already be blocked (see `block_all`).
    pub fn open() -> io::Result<SignalFd> {
        Ok(SignalFd {
            fd: sys::signalfd(SigMask::FULL.0)?,
            buffer: Box::new([0; RECORD_SIZE]),
            own_pid: std::process::id(),
        })
    }

    /// Waits for one signal. Without a timeout this is one blocking `read`,
    /// the cheapest way to sleep until a signal comes (the forwarding hot
    /// path: one read, one kill). With a timeout, `poll` waits first, and
    /// `None` means the time is up.
    pub fn wait(&mut self, timeout: Option<Duration>) -> io::Result<Option<Received>> {
        if timeout.is_some_and(|t| !self.readable_within(t)) {
            return Ok(None);
        }
        loop {
            match nix::unistd::read(&self.fd, self.buffer.as_mut_slice()) {
                Ok(n) if n < RECORD_SIZE => return Ok(None),
                Ok(_) => {
                    let info = SignalInfo::from_record(&self.buffer);
                    return Ok(Some(Received {
                        signal: info.signal,
                        sender: Sender::from_siginfo(&info, self.own_pid),
                    }));
                }
                Err(Errno::EINTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Whether a signal is pending now or arrives within `timeout`.
    fn readable_within(&self, timeout: Duration) -> bool {
        // Rounded up, so that a deadline is never polled for a little early
        // over and over.
        let millis =
            PollTimeout::try_from(timeout.as_micros().div_ceil(1000)).unwrap_or(PollTimeout::MAX);
        let mut fds = [PollFd::new(self.fd.as_fd(), PollFlags::POLLIN)];
        // An error (EINTR) counts as "not readable": the caller's loop
        // looks again.
        let ready = poll(&mut fds, millis).unwrap_or(0);
        let [fd] = &fds;
        ready > 0 && fd.revents().is_some_and(|r| r.contains(PollFlags::POLLIN))
    }
}

/// The classic names, indexed by number - 1. 32 and 33 have none.
const NAMES: [&str; 31] = [
    "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2",
    "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG",
    "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS",
];

/// SIGRTMIN as glibc programs (and `kill -l`) see it: the kernel's 32 and
/// 33 are taken by the C library's threads.
const RTMIN: i32 = 34;

/// A signal's name for messages: `SIGTERM`, `SIGRTMIN+2`, `signal 32`.
pub fn name(signal: i32) -> Cow<'static, str> {
    if let Some(classic) = usize::try_from(signal - 1)
        .ok()
        .and_then(|i| FULL_NAMES.get(i))
    {
        return Cow::Borrowed(classic);
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
pub fn parse(text: &str) -> Result<i32, String> {
    let bad = || {
        format!(
            "'{text}' is not a signal: use a name like TERM or SIGTERM, RTMIN+N, or a number from 1 to {MAX_SIGNAL}"
        )
    };
    let trimmed = text.trim();
    if let Ok(n) = trimmed.parse::<i32>() {
        return if (1..=MAX_SIGNAL).contains(&n) {
            Ok(n)
        } else {
            Err(bad())
        };
    }
    let upper = trimmed.to_ascii_uppercase();
    let bare = upper.strip_prefix("SIG").unwrap_or(&upper);
    if let Some(i) = NAMES.iter().position(|n| *n == bare) {
        return Ok(i as i32 + 1);
    }
    // Aliases that `kill -l` and other tools accept.
    match bare {
        "IOT" => return Ok(libc::SIGABRT),
        "POLL" => return Ok(libc::SIGIO),
        "CLD" => return Ok(libc::SIGCHLD),
        "RTMIN" => return Ok(RTMIN),
        "RTMAX" => return Ok(MAX_SIGNAL),
        _ => {}
    }
    let offset = |rest: &str| rest.parse::<i32>().ok();
    let n = if let Some(rest) = bare.strip_prefix("RTMIN+") {
        offset(rest).map(|k| RTMIN + k)
    } else if let Some(rest) = bare.strip_prefix("RTMAX-") {
        offset(rest).map(|k| MAX_SIGNAL - k)
    } else {
        None
    };
    match n {
        Some(n) if (RTMIN..=MAX_SIGNAL).contains(&n) => Ok(n),
        _ => Err(bad()),
    }
}

/// Why vigil never forwards `signal`, if it does not: what `--rewrite` and
/// `--stop-signals` refuse to name.
pub fn never_forwarded(signal: i32) -> Option<&'static str> {
    match signal {
        libc::SIGKILL | libc::SIGSTOP => Some("the kernel lets no one catch it"),
        libc::SIGCHLD => Some("vigil keeps it to reap"),
        libc::SIGTTIN | libc::SIGTTOU => Some("vigil ignores it, as tini does"),
        _ => None,
    }
}

/// Signal rewriting (`--rewrite FROM:TO`): TO 0 drops the signal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rewrites(Vec<(i32, i32)>);

impl Rewrites {
    /// Parses one `FROM:TO`.
    pub fn parse_rule(text: &str) -> Result<(i32, i32), String> {
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
            0
        } else {
            parse(to).map_err(in_rule)?
        };
        Ok((from, to))
    }

    pub fn add(&mut self, rule: (i32, i32)) {
        self.0.retain(|(from, _)| *from != rule.0);
        self.0.push(rule);
    }

    /// The signal to send for `signal`; `None` when it is to be dropped.
    pub fn apply(&self, signal: i32) -> Option<i32> {
        let to = self
            .0
            .iter()
            .find(|(from, _)| *from == signal)
            .map_or(signal, |(_, to)| *to);
        (to != 0).then_some(to)
    }
}

/// Where forwarded signals go: the child, or (`-g`) its whole process group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Process(i32),
    Group(i32),
}

/// Sends a signal; whether it reached the target or the target is gone
/// already. A target that just exited (ESRCH) is fine and silent; a target
/// vigil may not signal (EPERM, e.g. after it changed user) is a warning,
/// after one more try. Neither is ever a reason to stop.
pub fn send(target: Target, signal: i32) -> bool {
    let pid = match target {
        Target::Process(pid) => pid,
        Target::Group(pgid) => -pgid,
    };
    if pid == 0 || pid == -1 {
        // Never broadcast by accident: 0 and -1 mean "my group" and "everyone".
        return false;
    }
    let mut tries = 0;
    let err = loop {
        let Err(err) = sys::kill(pid, signal) else {
            return true;
        };
        tries += 1;
        if err == Errno::ESRCH {
            return true;
        }
        if tries == 2 {
            break io::Error::from(err);
        }
    };
    let error = crate::text::os_error(&err);
    logging::emit(
        Level::Warning,
        "send_failed",
        format_args!("could not send {} to {target}: {error}", name(signal)),
        |r| {
            r.field("signal", Signal(signal))
                .field("pid", pid.abs())
                .field("group", matches!(target, Target::Group(_)))
                .field("error", error.as_str())
        },
    );
    false
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Process(pid) => write!(f, "pid {pid}"),
            Target::Group(pgid) => write!(f, "process group {pgid}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_round_trip() {
        for n in 1..=31 {
            assert_eq!(parse(&name(n)).unwrap(), n);
        }
        assert_eq!(parse("term").unwrap(), 15);
        assert_eq!(parse("SIGUSR1").unwrap(), 10);
        assert_eq!(parse("34").unwrap(), 34);
        assert_eq!(parse("RTMIN+2").unwrap(), 36);
        assert_eq!(parse("SIGRTMAX-1").unwrap(), 63);
        assert_eq!(name(32), "signal 32");
        assert_eq!(name(36), "SIGRTMIN+2");
        for bad in ["", "0", "65", "FOO", "RTMIN+40", "-1", "SIG"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rewrites() {
        let mut r = Rewrites::default();
        r.add(Rewrites::parse_rule("TERM:QUIT").unwrap());
        r.add(Rewrites::parse_rule("10:0").unwrap());
        assert_eq!(r.apply(15), Some(3));
        assert_eq!(r.apply(10), None);
        assert_eq!(r.apply(2), Some(2));
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

    /// The two tables agree: parsing reads `NAMES`, messages and records
    /// show `FULL_NAMES`.
    #[test]
    fn full_names_are_the_names() {
        for (bare, full) in NAMES.iter().zip(FULL_NAMES) {
            assert_eq!(format!("SIG{bare}"), full);
        }
        assert_eq!(name(15), "SIGTERM");
        assert_eq!(name(34), "SIGRTMIN");
        assert_eq!(name(36), "SIGRTMIN+2");
        assert_eq!(name(32), "signal 32");
    }

    #[test]
    fn mask_bits() {
        let m = SigMask::default().with(1).with(64);
        assert!(m.contains(1) && m.contains(64) && !m.contains(2));
        assert!(!m.contains(0) && !m.contains(65));
    }
}
