//! The exit report: what vigil says when it exits about what happened to
//! the container: how the child ended and why, who asked it to stop and
//! when, how the hooks went, what vigil had to kill.
//!
//! The supervisor keeps each fact where it happens (the stop, the grace
//! period, the drain, the hooks, the signals it forwarded); at the end it
//! hands them over as one `Exit`, which works out who or what ended the
//! child (`Cause`) and is rendered two ways from the same facts: the text
//! line (`text.rs`, one line for people) and the `exit` record
//! (`record.rs`, the same facts as fields, for `--log-format
//! json|logfmt`). What one says the other says.
//!
//! It goes to the log (see `Audience`: shown by default unless the
//! container simply succeeded, a warning when the ending was abnormal) and
//! to the termination log, where Kubernetes picks it up as the termination
//! message. The ending and the exit status come first, and every part that
//! can grow long is shortened, so that neither a 4096-byte log line nor the
//! 4096-byte termination message ever loses the cause.

mod provisional;
mod record;
mod text;

pub use provisional::{MemorySeen, Provisional};
pub use record::Clocks;
#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::fmt;
use std::time::{Duration, Instant};

use crate::facts::hook;
use crate::facts::signal::{self, MAX_SIGNAL};
use crate::facts::{Ending, Named, Proc, Received, Sender, Signal};
use crate::record::{Fields, Obj};

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
    /// The send failed (vigil warned of it).
    Failed,
}

impl NotSent {
    /// The word in the exit record.
    pub fn word(self) -> &'static str {
        match self {
            NotSent::Rewritten => "rewritten",
            NotSent::PreStopHook => "pre_stop_hook",
            NotSent::PreStopSleep => "pre_stop_sleep",
            NotSent::Failed => "send_failed",
        }
    }
}

/// The stop sequence: what started it and when, what the child was sent.
#[derive(Debug)]
pub struct Stop {
    pub cause: StopCause,
    pub at: Instant,
    /// The signal the child was sent to stop it, after `--rewrite`.
    pub sent: Option<i32>,
    /// Why none was, when none was.
    pub not_sent: Option<NotSent>,
    /// A later stop signal (SIGTERM after SIGINT, say), forwarded at once
    /// during the stop sequence: the last one.
    pub later: Option<LaterStop>,
}

/// A signal vigil forwarded to the child: what came, from whom, and what
/// was sent (after `--rewrite`). Plain data, so that the forwarding path
/// makes it without allocating. Not when: only a stop signal's time is
/// reported (`Stop`, `LaterStop`), so the clock is read for those alone,
/// not for every SIGHUP or SIGWINCH passed on.
#[derive(Clone, Copy, Debug)]
pub struct Forward {
    pub received: Received,
    pub sent: i32,
}

/// A forwarded signal as the report keeps it: with its sender's name, read
/// from /proc when it arrived (a process of vigil's namespace only).
#[derive(Clone, Debug)]
pub struct Forwarded {
    pub forward: Forward,
    pub sender: Named,
}

/// A second stop signal, forwarded at once during the stop sequence: when
/// it came, since the child may have ended on it rather than on the first.
#[derive(Clone, Debug)]
pub struct LaterStop {
    pub forward: Forward,
    pub sender: Named,
    pub at: Instant,
}

/// The last signal of each number vigil forwarded, by the number sent, so
/// that a child killed by one can be told whose it was. The signals are
/// plain data, in a table on the heap (moving the report, by value, into
/// the supervisor does not copy it); the names of their senders, which
/// only a sender in vigil's namespace has, are kept apart, so that keeping
/// a signal costs no allocation on the forwarding path.
#[derive(Debug)]
pub struct Forwards {
    last: Box<[Option<Forward>; MAX_SIGNAL as usize + 1]>,
    /// (signal sent, sender's pid, its name): one per number, for the
    /// numbers whose last sender was a process of vigil's namespace.
    names: Vec<(i32, u32, Option<String>)>,
}

impl Default for Forwards {
    fn default() -> Forwards {
        Forwards {
            last: Box::new([None; MAX_SIGNAL as usize + 1]),
            names: Vec::new(),
        }
    }
}

impl Forwards {
    /// Keeps `forward` as the last of its number. A sender in vigil's
    /// namespace is named with `name_of` (which reads /proc), unless it is
    /// the same pid as the last sender of that number: a storm of signals
    /// from one process reads its name once.
    pub fn record(&mut self, forward: Forward, name_of: impl FnOnce(u32) -> Option<String>) {
        let sent = forward.sent;
        let Some(slot) = usize::try_from(sent)
            .ok()
            .and_then(|i| self.last.get_mut(i))
        else {
            return;
        };
        *slot = Some(forward);
        let Sender::Process { pid, .. } = forward.received.sender else {
            return;
        };
        if pid == 0 {
            return;
        }
        match self.names.iter_mut().find(|(s, _, _)| *s == sent) {
            Some((_, known, _)) if *known == pid => {}
            Some(entry) => *entry = (sent, pid, name_of(pid)),
            None => self.names.push((sent, pid, name_of(pid))),
        }
    }

    /// The last signal forwarded as `sent`, with its sender named.
    pub fn last(&self, sent: i32) -> Option<Forwarded> {
        let forward = self.get(sent)?;
        let sender = forward.received.sender;
        let name = match sender {
            Sender::Process { pid, .. } if pid != 0 => self
                .names
                .iter()
                .find(|(s, known, _)| *s == sent && *known == pid)
                .and_then(|(_, _, name)| name.clone()),
            _ => None,
        };
        Some(Forwarded {
            forward,
            sender: Named { sender, name },
        })
    }

    /// Who sent the last signal forwarded as `sent`.
    pub fn last_sender(&self, sent: i32) -> Option<Sender> {
        self.get(sent).map(|f| f.received.sender)
    }

    fn get(&self, sent: i32) -> Option<Forward> {
        usize::try_from(sent)
            .ok()
            .and_then(|i| self.last.get(i))
            .copied()
            .flatten()
    }
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

/// The grace period of a stop: how long, and whether it was `--timeout`'s
/// default rather than the user's; once it passed, whom it SIGKILLed.
#[derive(Debug)]
pub struct Grace {
    pub period: Duration,
    pub by_default: bool,
    pub kill: Option<GraceKill>,
}

/// The SIGKILL at the grace deadline.
#[derive(Debug)]
pub struct GraceKill {
    /// When it was sent: a child it killed ended then, even if vigil
    /// reaped it later (its final lines may wait for room in stderr).
    pub at: Instant,
    pub killed: Vec<Proc>,
}

/// What the child left behind when it exited.
#[derive(Debug)]
pub struct Drain {
    /// How many processes got the drain's SIGTERM.
    pub left: usize,
    /// Set when the drain ended in SIGKILL: why, and who was SIGKILLed.
    pub kill: Option<(DrainKill, Vec<Proc>)>,
}

/// The command as the report shows it.
#[derive(Debug, Default)]
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

/// The report of a child that has ended: the facts the supervisor kept,
/// handed over at the end.
#[derive(Debug)]
pub struct Exit {
    pub command: Command,
    pub pid: i32,
    /// Whether vigil gave the child the terminal's foreground: a SIGINT
    /// death then most likely was Ctrl-C.
    pub had_terminal: bool,
    pub ending: Ending,
    pub ended_at: Instant,
    /// vigil's exit status.
    pub status: i32,
    /// Whether the user listed the child's status (code or 128+N) with `-e`.
    pub code_expected: bool,
    pub stop: Option<Stop>,
    /// Every signal forwarded, the last of each number.
    pub forwards: Forwards,
    /// The grace period, once a stop started one.
    pub grace: Option<Grace>,
    pub drain: Option<Drain>,
    pub hooks: Vec<hook::Record>,
    pub orphans_reaped: u64,
    /// OOM kills the container's cgroup counted while vigil ran.
    pub oom_kills: u64,
    /// Whether an OOM kill takes the whole cgroup (`memory.oom.group`):
    /// vigil then reports none, since it dies with the rest.
    pub oom_group: bool,
}

/// Who gets to see the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Audience {
    /// Only at `-v`: a clean success, or an ending a shell does not report
    /// either (Ctrl-C, SIGPIPE).
    Verbose,
    /// At the default verbosity, not as a warning: the container stopped
    /// as asked, or failed in a way the user can read from the status.
    Default,
    /// A warning: a SIGKILL, a failed hook, a deadline hit, an OOM kill, an
    /// exit code nobody asked for.
    Warning,
}

/// Who or what ended the child, as far as vigil can tell (`ending.cause`
/// in the exit record): worked out once, and both the text and the record
/// say it.
#[derive(Clone, Debug)]
pub enum Cause {
    /// vigil's SIGKILL at the grace deadline.
    GraceDeadline,
    /// A SIGKILL while the cgroup counted an OOM kill.
    OomKiller,
    /// Any other SIGKILL. It cannot be caught, so it never passes through
    /// vigil, and nothing tells vigil who sent it: only that it was neither
    /// vigil nor (by the cgroup's count) the OOM killer.
    UnknownSigkill,
    /// The SIGINT of the terminal the child held (Ctrl-C), whether it went
    /// to the child's group directly or through vigil.
    Terminal,
    /// The stop signal vigil forwarded.
    StopSignal,
    /// Another signal vigil forwarded: whose it was.
    Forwarded(Forwarded),
}

impl Cause {
    /// The cause's word in the exit record.
    pub fn word(&self) -> &'static str {
        match self {
            Cause::GraceDeadline => "grace_deadline",
            Cause::OomKiller => "oom_killer",
            Cause::UnknownSigkill => "unknown_sigkill",
            Cause::Terminal => "terminal",
            Cause::StopSignal => "stop_signal",
            Cause::Forwarded(..) => "forwarded",
        }
    }
}

/// The longest command the text line shows, in bytes; a longer one is cut
/// in the middle. Together with the other caps (processes listed, hook
/// texts) this keeps the report well inside one 4096-byte log line and the
/// 4096-byte termination message, so the cause and status are never cut.
const COMMAND_MAX: usize = 200;

/// The most processes a report lists for one deadline.
const PROCS_MAX: usize = 20;

/// The longest hook record shown (a hook that cannot run quotes its
/// program, which may be long).
const HOOK_MAX: usize = 300;

impl Exit {
    /// Who gets to see the report (see `Audience`).
    pub fn audience(&self) -> Audience {
        if self.abnormal() {
            Audience::Warning
        } else if self.quiet_ending() || (self.status == 0 && self.stop.is_none()) {
            Audience::Verbose
        } else {
            Audience::Default
        }
    }

    /// Whether the ending deserves a warning: a SIGKILL, a failed hook, a
    /// deadline hit, an OOM kill, or an exit the user did not expect.
    pub fn abnormal(&self) -> bool {
        let forced = matches!(
            self.stop,
            Some(Stop {
                cause: StopCause::Timeout(_) | StopCause::NotReady { .. } | StopCause::Fault(_),
                ..
            })
        );
        forced
            || self.grace_kill().is_some()
            || self.drain.as_ref().is_some_and(|d| d.kill.is_some())
            || self.hooks.iter().any(hook::Record::failed)
            || self.oom_kills > 0
            || !(self.ending_expected() || self.quiet_ending())
    }

    /// Endings a shell reports to nobody: a child killed by SIGPIPE (its
    /// reader went away, as in `vigil -- yes | head -1`), or by the
    /// terminal's SIGINT (Ctrl-C): sent to the child's group while it held
    /// the terminal, or to vigil's, which forwarded it. A shell that was
    /// the child ends with the status of such a death, 141 or 130, as its
    /// own exit code: the same ending, said by the shell.
    fn quiet_ending(&self) -> bool {
        match self.ending_or_code_signal() {
            Some(libc::SIGPIPE) => true,
            Some(libc::SIGINT) => self.ctrl_c(),
            _ => false,
        }
    }

    /// The signal of a death, or of a shell's 141 or 130 exit code.
    fn ending_or_code_signal(&self) -> Option<i32> {
        match self.ending {
            Ending::Killed { signal, .. } => Some(signal),
            Ending::Exited(code) if code == 128 + libc::SIGPIPE || code == 128 + libc::SIGINT => {
                Some(code - 128)
            }
            Ending::Exited(_) => None,
        }
    }

    /// Whether the SIGINT that ended the child was the terminal's: the
    /// child held the terminal and vigil forwarded no SIGINT, or the last
    /// SIGINT vigil forwarded came from the terminal (as the stop signal:
    /// the stop sequence forwards it in vigil's name, and the stop's cause
    /// says whose it was).
    fn ctrl_c(&self) -> bool {
        match self.forwards.last_sender(libc::SIGINT) {
            None => self.had_terminal,
            Some(Sender::Terminal) => true,
            Some(Sender::Vigil) => matches!(
                &self.stop,
                Some(Stop {
                    cause: StopCause::Signal { sender, .. },
                    ..
                }) if sender.sender == Sender::Terminal
            ),
            Some(_) => false,
        }
    }

    /// The stop signals vigil sent: the one that ended the stop sequence,
    /// and a later one forwarded at once.
    fn stop_signals_sent(&self) -> impl Iterator<Item = i32> + '_ {
        let stop = self.stop.as_ref();
        let later = stop.and_then(|s| s.later.as_ref()).map(|l| l.forward.sent);
        stop.and_then(|s| s.sent).into_iter().chain(later)
    }

    /// An ending is expected when it is success, a status listed with `-e`,
    /// or the answer to a stop signal vigil forwarded (death by it, or the
    /// conventional 128+N exit code).
    fn ending_expected(&self) -> bool {
        let answered_stop = |n: i32| self.stop_signals_sent().any(|sent| sent == n);
        let code_expected = self.code_expected;
        match self.ending {
            Ending::Exited(0) => true,
            Ending::Exited(code) => code_expected || (code > 128 && answered_stop(code - 128)),
            Ending::Killed { signal, .. } => {
                code_expected || (signal != libc::SIGKILL && answered_stop(signal))
            }
        }
    }

    /// The signal the child's ending points to: the one that killed it, or
    /// N for the conventional exit code 128+N.
    fn ending_signal(&self) -> Option<i32> {
        match self.ending {
            Ending::Killed { signal, .. } => Some(signal),
            Ending::Exited(code) if code > 128 && code - 128 <= MAX_SIGNAL => Some(code - 128),
            Ending::Exited(_) => None,
        }
    }

    /// Which stop signal the child ended on, when more than one came: the
    /// later one when the ending points to it (or to neither), else the
    /// first. `None` means the first.
    fn ended_on_later_stop(&self) -> Option<&LaterStop> {
        let stop = self.stop.as_ref()?;
        let later = stop.later.as_ref()?;
        let signal = self.ending_signal();
        let points_to_first = signal.is_some() && signal == stop.sent;
        let points_to_later = signal == Some(later.forward.sent);
        (points_to_later || !points_to_first).then_some(later)
    }

    /// How long the child took to end after the stop (or after the later
    /// stop signal it ended on): until it was reaped, or for a child killed
    /// at the grace deadline, until that SIGKILL.
    fn ended_after(&self) -> Option<Duration> {
        let stop = self.stop.as_ref()?;
        let mut ended = self.ended_at;
        let kill_at = self.grace_kill().map(|kill| kill.at);
        if let (Some(at), Ending::Killed { signal, .. }) = (kill_at, self.ending)
            && signal == libc::SIGKILL
        {
            ended = ended.min(at);
        }
        let from = self.ended_on_later_stop().map_or(stop.at, |later| later.at);
        Some(ended.saturating_duration_since(from))
    }

    /// The SIGKILL at the grace deadline, if it came.
    pub fn grace_kill(&self) -> Option<&GraceKill> {
        self.grace.as_ref().and_then(|g| g.kill.as_ref())
    }

    /// Who or what ended the child, when vigil can tell (a child that was
    /// killed; an exit code is the child's own doing).
    pub fn cause(&self) -> Option<Cause> {
        let Ending::Killed { signal, .. } = self.ending else {
            return None;
        };
        if signal == libc::SIGKILL {
            return Some(if self.grace_kill().is_some() {
                Cause::GraceDeadline
            } else if self.oom_kills > 0 {
                Cause::OomKiller
            } else {
                Cause::UnknownSigkill
            });
        }
        if signal == libc::SIGINT && self.ctrl_c() {
            return Some(Cause::Terminal);
        }
        if self.stop_signals_sent().any(|sent| sent == signal) {
            return Some(Cause::StopSignal);
        }
        self.forwards.last(signal).map(Cause::Forwarded)
    }
}
