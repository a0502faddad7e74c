//! The exit report as the ledger reads at the end: who or what ended the
//! child (`Cause`), who gets to see it (its `Level`), and its parts, walked
//! once in their order (`Exit::parts`). Each part says its fact both ways:
//! the words of the text line (`child was killed by SIGKILL (status 137)
//! by vigil, at the grace deadline; exit status 137; command: ...`) and the
//! fields of the `exit` record. Text from outside vigil (the command, a
//! sender's name, a hook's output) is written as it is: the log line
//! escapes its control characters.

use std::borrow::Cow;
use std::fmt::{self, Display, Formatter};
use std::time::{Duration, Instant};

use nix::unistd::Pid;

use super::{Ledger, Started, Stop};
use crate::log::facts::process::{self, PROCS_MAX};
use crate::log::facts::stop::{DrainKill, EndCause, ExitCodes, NotSent, StopCause};
use crate::log::facts::{Ending, Named, Proc, Sender, Signal};
use crate::log::format::{Fields, Level, Obj, Timestamp, Word, cut_points};
use crate::text::{Count, duration, secs};

/// The longest command the text line shows, in bytes; a longer one is cut
/// in the middle. Together with the other caps (processes listed, hook
/// texts) this keeps the report well inside one 4096-byte log line and the
/// 4096-byte termination message, so the cause and status are never cut.
pub(super) const COMMAND_MAX: usize = 200;

/// The longest hook record shown (a hook that cannot run quotes its
/// program, which may be long).
const HOOK_MAX: usize = 300;

/// vigil's exit status after `--live-when` found the child unhealthy:
/// sysexits' `EX_UNAVAILABLE` ("a service is unavailable"), which no other
/// ending of vigil's gives (1, 2, 124, 126, 127, 128+N), so that a
/// restart policy can tell a hung service from a stop or a crash.
pub const UNHEALTHY: i32 = 69;

/// The report of a child that has ended (`Ledger::exit`).
#[derive(Debug)]
pub struct Exit<'l> {
    pub(super) ledger: &'l Ledger,
    pub(super) started: &'l Started,
    pub(super) ending: Ending,
    pub(super) ended_at: Instant,
    /// vigil's exit status.
    pub(super) status: i32,
    /// The cause whose `--exit-code` status it is, when one is.
    pub(super) by: Option<EndCause>,
    /// OOM kills the container's cgroup counted while vigil ran.
    pub(super) oom_kills: u64,
}

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

/// Who or what ended the child, as far as vigil can tell (`ending.cause`
/// in the exit record): worked out once, and both the text and the record
/// say it.
#[derive(Clone, Debug)]
pub enum Cause<'l> {
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
    /// Another signal vigil forwarded: what came, from whom, what was sent.
    Forwarded {
        signal: Signal,
        sender: &'l Named,
        sent: Signal,
    },
}

impl Cause<'_> {
    /// The cause's word in the exit record, and who is behind the signal
    /// in the text line's words, after the ending: nothing for the stop
    /// signal, which the stop part of the report says; for a forwarded
    /// signal, what came and from whom follow (`Display for Exit`).
    fn said(&self) -> (&'static str, &'static str) {
        match self {
            Cause::GraceDeadline => ("grace_deadline", " by vigil, at the grace deadline"),
            Cause::OomKiller => ("oom_killer", " by the kernel OOM killer"),
            Cause::UnknownSigkill => (
                "unknown_sigkill",
                ", not by vigil or the OOM killer (a SIGKILL goes straight to the child, \
                 so vigil cannot tell who sent it)",
            ),
            Cause::Terminal => ("terminal", ", from the terminal (Ctrl-C)"),
            Cause::StopSignal => ("stop_signal", ""),
            Cause::Forwarded { .. } => ("forwarded", ", forwarded by vigil: "),
        }
    }
}

impl<'l> Exit<'l> {
    /// vigil's exit status.
    pub fn status(&self) -> i32 {
        self.status
    }

    /// Who gets to see the report: a warning after a SIGKILL, a failed
    /// hook, a deadline hit, an OOM kill, an exit code nobody asked for;
    /// only at `-v` (`Info`) a clean success, or an ending a shell does not
    /// report either (Ctrl-C, SIGPIPE); else at the default verbosity, not
    /// as a warning (`Notice`): the container stopped as asked, or failed
    /// in a way the user can read from the status.
    pub fn level(&self) -> Level {
        if self.abnormal() {
            Level::Warning
        } else if self.quiet_ending() || (self.status == 0 && self.stop().is_none()) {
            Level::Info
        } else {
            Level::Notice
        }
    }

    fn stop(&self) -> Option<&'l Stop> {
        self.ledger.stop.as_ref()
    }

    /// Whether the ending deserves a warning: a SIGKILL, a failed hook, a
    /// deadline hit, an OOM kill, or an exit the user did not expect.
    pub fn abnormal(&self) -> bool {
        let forced = self.stop().is_some_and(|stop| {
            matches!(
                stop.cause,
                StopCause::Timeout(_)
                    | StopCause::NotReady { .. }
                    | StopCause::Unhealthy { .. }
                    | StopCause::Fault(_)
            )
        });
        forced
            || self.ledger.grace_kill.is_some()
            || self.ledger.drain.as_ref().is_some_and(|(_, k)| k.is_some())
            || self
                .ledger
                .hooks
                .iter()
                .any(crate::log::facts::hook::Record::failed)
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
        match self.ending.signal() {
            Some(Signal::PIPE) => true,
            Some(Signal::INT) => self.ctrl_c(),
            _ => false,
        }
    }

    /// The last signal forwarded as `sent`: what came, from whom.
    fn forwarded(&self, sent: Signal) -> Option<(Signal, &'l Named)> {
        let ledger = self.ledger;
        ledger
            .forwards
            .iter()
            .find(|(s, _, _)| *s == sent)
            .map(|(_, signal, sender)| (*signal, sender))
    }

    /// Whether the SIGINT that ended the child was the terminal's: the
    /// child held the terminal and vigil forwarded no SIGINT, or the last
    /// SIGINT vigil forwarded came from the terminal (as the stop signal:
    /// the stop sequence forwards it in vigil's name, and the stop's cause
    /// says whose it was).
    fn ctrl_c(&self) -> bool {
        match self.forwarded(Signal::INT).map(|(_, s)| s.sender) {
            None => self.started.terminal,
            Some(Sender::Terminal) => true,
            Some(Sender::Vigil) => self.stop().is_some_and(|stop| {
                matches!(&stop.cause, StopCause::Signal { sender, .. }
                    if sender.sender == Sender::Terminal)
            }),
            Some(_) => false,
        }
    }

    /// The stop signals vigil sent: the one that ended the stop sequence,
    /// and a later one forwarded at once.
    fn stop_signals_sent(&self) -> impl Iterator<Item = Signal> + 'l {
        let stop = self.stop();
        let later = stop.and_then(|s| s.later.as_ref()).map(|l| l.2);
        stop.and_then(|s| s.sent).into_iter().chain(later)
    }

    /// An ending is expected when it is success, a status vigil exits 0
    /// for all the same (listed with `-e`, or made 0 by `--exit-code`: a
    /// failed ending's status is never 0 of itself), or the answer to a
    /// stop signal vigil forwarded (death by it, or the conventional 128+N
    /// exit code).
    fn ending_expected(&self) -> bool {
        self.ending == Ending::Exited(0) || self.status == 0 || self.answered_stop()
    }

    /// Whether the child ended on the later of two stop signals: when the
    /// ending points to it (death by it, or 128+N), or to neither.
    fn ended_on_later_stop(&self) -> bool {
        let Some(stop) = self.stop() else {
            return false;
        };
        let Some(later) = &stop.later else {
            return false;
        };
        let signal = self.ending.signal();
        let points_to_first = signal.is_some() && signal == stop.sent;
        signal == Some(later.2) || !points_to_first
    }

    /// How long the child took to end after the stop (or after the later
    /// stop signal it ended on): until it was reaped, or for a child killed
    /// at the grace deadline, until that SIGKILL.
    fn ended_after(&self) -> Option<Duration> {
        let stop = self.stop()?;
        let mut ended = self.ended_at;
        if let (Some((at, _)), Ending::Killed { signal, .. }) =
            (&self.ledger.grace_kill, self.ending)
            && signal == Signal::KILL
        {
            ended = ended.min(*at);
        }
        let from = match (&stop.later, self.ended_on_later_stop()) {
            (Some(later), true) => later.3,
            _ => stop.at,
        };
        Some(ended.saturating_duration_since(from))
    }

    /// vigil's exit status, and the cause whose `--exit-code` set it. The
    /// child's own exit code stands, but after `--timeout`, which exits
    /// 124 whatever the job did, as coreutils' `timeout` does. A stop
    /// vigil started (`--ready-timeout`, `--live-when`, a failed post-start
    /// hook) has its cause's status, else the child's (0 made 1: never 0);
    /// one from outside, `-e`'s mapping of the child's status, or the
    /// status `--exit-code` gives how it ended (`grace`, `oom`, `stopped`).
    pub(super) fn decide_status(
        &self,
        codes: &ExitCodes,
        expected: &[i32],
    ) -> (i32, Option<EndCause>) {
        let own = self.ending.status();
        let by = |cause: EndCause, default: i32| match codes.get(cause) {
            Some(status) => (status, Some(cause)),
            None => (default, None),
        };
        let mapped = if expected.contains(&own) { 0 } else { own };
        let own_code =
            matches!(self.ending, Ending::Exited(code) if code != 0) && !self.answered_stop();
        let started_by_vigil = match self.stop().map(|s| &s.cause) {
            Some(StopCause::Timeout(_)) => return by(EndCause::Timeout, 124),
            Some(StopCause::NotReady { .. }) => Some((EndCause::NotReady, own.max(1))),
            Some(StopCause::PostStartFailed) => Some((EndCause::PostStart, own.max(1))),
            Some(StopCause::Unhealthy { .. }) => Some((EndCause::Unhealthy, UNHEALTHY)),
            Some(StopCause::Signal { .. } | StopCause::Fault(_)) | None => None,
        };
        match (started_by_vigil, self.cause()) {
            (Some(_), _) if own_code => (own, None),
            (Some((cause, default)), _) => by(cause, default),
            (None, Some(Cause::GraceDeadline)) => by(EndCause::Grace, mapped),
            (None, Some(Cause::OomKiller)) => by(EndCause::Oom, mapped),
            (None, _) if self.stop().is_some() && self.answered_stop() => {
                by(EndCause::Stopped, mapped)
            }
            (None, _) => (mapped, None),
        }
    }

    /// Whether the child ended of a stop signal vigil sent it: killed by
    /// it, or the conventional 128+N exit code of a program that caught it.
    fn answered_stop(&self) -> bool {
        let answered = |n: Signal| self.stop_signals_sent().any(|sent| sent == n);
        (self.ending.signal()).is_some_and(|signal| signal != Signal::KILL && answered(signal))
    }

    /// The processes other than the child that vigil saw the OOM killer
    /// take, and when.
    fn others_oom_killed(&self) -> impl Iterator<Item = &'l (Pid, Timestamp)> {
        let child = self.started.pid;
        let victims = self.ledger.oom_victims.iter();
        victims.filter(move |(pid, _)| *pid != child)
    }

    /// Who or what ended the child, when vigil can tell (a child that was
    /// killed; an exit code is the child's own doing).
    pub fn cause(&self) -> Option<Cause<'l>> {
        let Ending::Killed { signal, .. } = self.ending else {
            return None;
        };
        if signal == Signal::KILL {
            return Some(if self.ledger.grace_kill.is_some() {
                Cause::GraceDeadline
            } else if self.oom_kills > self.others_oom_killed().count() as u64 {
                Cause::OomKiller
            } else {
                Cause::UnknownSigkill
            });
        }
        if signal == Signal::INT && self.ctrl_c() {
            return Some(Cause::Terminal);
        }
        if self.stop_signals_sent().any(|sent| sent == signal) {
            return Some(Cause::StopSignal);
        }
        let (received, sender) = self.forwarded(signal)?;
        Some(Cause::Forwarded {
            signal: received,
            sender,
            sent: signal,
        })
    }

    /// The report as written now: `clocks` turn the instants vigil timed
    /// into times.
    pub fn at(&self, clocks: Clocks) -> Written<'_, 'l> {
        Written { exit: self, clocks }
    }

    /// The parts that follow the ending, the status and the command, in
    /// their order: the one walk that both the text line and the record
    /// follow, so that they cannot disagree on which parts there are.
    fn parts(&self) -> Vec<Part<'l>> {
        let ledger = self.ledger;
        let mut parts: Vec<Part<'l>> = self.stop().map(Part::Stop).into_iter().collect();
        if let (Some(grace), Some((_, killed))) = (ledger.grace(), &ledger.grace_kill) {
            parts.push(Part::GraceKill(grace.period, killed));
        }
        if !ledger.hooks.is_empty() {
            parts.push(Part::Hooks);
        }
        if let Some((left, kill)) = ledger.drain.as_ref().filter(|(left, _)| *left > 0) {
            parts.push(Part::Drain(*left, kill.as_ref()));
        }
        parts.extend([Part::Oom, Part::Orphans]);
        parts
    }

    /// The OOM kills in the container, and whose they were.
    fn write_oom(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let child = matches!(self.cause(), Some(Cause::OomKiller));
        let earlier = if child { "" } else { "earlier, " };
        write!(
            f,
            "; {earlier}the kernel OOM killer killed {} in this container",
            Count(self.oom_kills, "process", "processes")
        )?;
        if !child {
            f.write_str(" (not the child: a process it started, or a hook)")?;
        }
        if !self.started.oom_group {
            f.write_str(", one process at a time (memory.oom.group is off)")?;
        }
        for (i, (pid, at)) in self.others_oom_killed().enumerate() {
            write!(f, "{}pid {pid} at {at}", if i == 0 { ": " } else { ", " })?;
        }
        Ok(())
    }

    /// The stop part: what started it (with the grace period a stop that
    /// vigil started itself got without `--grace-period`), what was sent,
    /// how long the child took.
    fn write_stop(&self, f: &mut Formatter<'_>, stop: &Stop) -> fmt::Result {
        write!(f, "; stop: {}", stop.cause)?;
        let after = match &stop.cause {
            StopCause::Timeout(_) => Some("--timeout"),
            StopCause::NotReady { .. } => Some("--ready-timeout"),
            StopCause::Unhealthy { .. } => Some("--live-when"),
            _ => None,
        };
        if let (Some(after), Some(grace)) = (after, self.ledger.grace().filter(|g| g.by_default)) {
            let period = duration(grace.period);
            write!(f, ", grace period {period} (the default after {after})")?;
        }
        let signal = match &stop.cause {
            StopCause::Signal { signal, .. } => signal.to_string(),
            _ => "the stop signal".to_string(),
        };
        let at_grace = self.ledger.grace_kill.is_some();
        match (stop.sent, stop.not_sent) {
            (Some(sent), _) => write!(f, " (sent {sent})")?,
            (None, Some(why)) => {
                f.write_str(" (not sent: ")?;
                match why {
                    NotSent::Rewritten => write!(f, "--rewrite drops {signal}")?,
                    NotSent::Failed => write!(f, "vigil could not send {signal}")?,
                    NotSent::PreStopHook | NotSent::PreStopSleep if at_grace => {
                        write!(f, "{why} at the grace deadline")?
                    }
                    NotSent::PreStopHook => {
                        f.write_str("the child ended during the pre-stop hook")?
                    }
                    NotSent::PreStopSleep => {
                        f.write_str("the child ended during the pre-stop sleep")?
                    }
                }
                f.write_str(")")?
            }
            (None, None) => {}
        }
        if let Some((received, sender, sent, _)) = &stop.later {
            write!(f, "; then {received} {sender} (sent {sent} at once)")?;
        }
        let Some(after) = self.ended_after() else {
            return Ok(());
        };
        write!(f, ", child ended {}", secs(after))?;
        match &stop.later {
            Some((received, ..)) if self.ended_on_later_stop() => {
                write!(f, " after the {received}")
            }
            _ => f.write_str(" later"),
        }
    }

    /// The stop sequence: what started it, what was sent, how long the
    /// child took.
    fn stop_fields<'r>(&'r self, o: &mut Obj<'_, 'r>, stop: &'r Stop, clocks: Clocks) {
        o.word("cause", stop.cause.word());
        if let StopCause::Signal { signal, sender } = &stop.cause {
            o.field("signal", *signal).object("sender", sender);
        }
        o.field("time", clocks.at(stop.at));
        match &stop.cause {
            StopCause::Timeout(after) => {
                o.field("timeout", *after);
            }
            StopCause::NotReady { timeout, last } => {
                o.field("timeout", *timeout).opt("error", last.as_deref());
            }
            StopCause::Unhealthy { url, failed } => {
                o.field("url", url.as_str())
                    .field("failures", failed.len())
                    .opt("error", failed.last());
            }
            StopCause::Fault(why) => {
                o.field("error", why.as_str());
            }
            StopCause::Signal { .. } | StopCause::PostStartFailed => {}
        }
        o.opt("grace_period", stop.grace.map(|g| g.period))
            .opt("sent", stop.sent)
            .opt("not_sent", stop.not_sent.map(|n| Word(n.word())));
        if let Some((received, sender, sent, at)) = &stop.later {
            o.object_with("later", |o| {
                o.field("signal", *received)
                    .object("sender", sender)
                    .field("sent", *sent)
                    .field("time", clocks.at(*at));
            });
            let on = if self.ended_on_later_stop() {
                "later"
            } else {
                "first"
            };
            o.word("ended_on", on);
        }
        o.opt("ended_after", self.ended_after());
    }
}

/// How the child ended, and what ended it.
fn ending_fields<'r>(o: &mut Obj<'_, 'r>, ending: &'r Ending, cause: Option<Cause<'r>>) {
    o.flatten(ending);
    let Some(cause) = cause else {
        return;
    };
    o.word("cause", cause.said().0);
    if let Cause::Forwarded {
        signal,
        sender,
        sent,
    } = cause
    {
        o.object_with("forwarded", |o| {
            o.field("signal", signal)
                .object("sender", sender)
                .field("sent", sent);
        });
    }
}

/// The exit report as it is written, `clocks` read at that moment.
pub struct Written<'e, 'l> {
    exit: &'e Exit<'l>,
    clocks: Clocks,
}

impl Display for Written<'_, '_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.exit.fmt(f)
    }
}

/// The exit record's fields, the text line's parts in its order: the
/// command exactly as it was run (every byte of it, where the text line
/// shows only what is valid UTF-8), and the OOM kills' count always.
impl Fields for Written<'_, '_> {
    fn fields<'r>(&'r self, o: &mut Obj<'_, 'r>) {
        let exit = self.exit;
        let ledger = exit.ledger;
        o.field("status", exit.status)
            .opt("status_cause", exit.by.map(|c| Word(c.word())))
            .object_with("ending", |o| ending_fields(o, &exit.ending, exit.cause()))
            .field("command", &exit.started.command)
            .field("pid", exit.started.pid);
        for part in exit.parts() {
            match part {
                Part::Stop(stop) => {
                    o.object_with("stop", |o| exit.stop_fields(o, stop, self.clocks));
                }
                Part::GraceKill(_, killed) => {
                    o.list("grace_kills", killed);
                }
                Part::Hooks => {
                    o.list("hooks", &ledger.hooks);
                }
                Part::Drain(left, kill) => {
                    o.object_with("drain", |o| {
                        o.field("left", left);
                        match kill.map(|(why, _)| *why) {
                            Some(DrainKill::Timeout(after)) => {
                                o.word("kill_cause", "drain_timeout")
                                    .field("timeout", after);
                            }
                            Some(DrainKill::StopSignal(signal)) => {
                                o.word("kill_cause", "stop_signal").field("signal", signal);
                            }
                            None => {}
                        }
                    });
                    if let Some((_, killed)) = kill {
                        o.list("drain_kills", killed);
                    }
                }
                Part::Oom => {
                    if exit.oom_kills > 0 {
                        o.field("oom_group", exit.started.oom_group);
                    }
                    o.field("oom_kills", exit.oom_kills);
                    let victims = &ledger.oom_victims;
                    if !victims.is_empty() {
                        o.list_with("oom_victims", victims.iter(), |o, (pid, at)| {
                            o.field("pid", *pid).field("time", *at);
                        });
                    }
                }
                Part::Orphans => {
                    o.field("orphans_reaped", ledger.orphans_reaped);
                }
            }
        }
        let timeout = exit
            .stop()
            .is_some_and(|s| matches!(s.cause, StopCause::Timeout(_)));
        o.field("timeout", timeout);
    }
}

/// The text line: its parts, joined with `; `, the ending and the status
/// first, so that a cut report (a log reader's narrow column, the
/// termination message) still says them. The OOM part is said only when
/// there was an OOM kill; the record always has its count.
impl Display for Exit<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let ledger = self.ledger;
        write!(f, "child {}", self.ending)?;
        if let Some(cause) = self.cause() {
            f.write_str(cause.said().1)?;
            if let Cause::Forwarded {
                signal,
                sender,
                sent,
            } = cause
            {
                write!(f, "{signal} {sender}")?;
                if signal != sent {
                    write!(f, ", sent as {sent}")?;
                }
            }
        }
        write!(f, "; exit status {}", self.status)?;
        if let Some(cause) = self.by {
            write!(f, " (--exit-code {}={})", cause.word(), self.status)?;
        }
        write!(f, "; {}", self.started)?;
        for part in self.parts() {
            match part {
                Part::Stop(stop) => self.write_stop(f, stop)?,
                Part::GraceKill(period, killed) => write!(
                    f,
                    "; grace period {} over, SIGKILL to: {}",
                    duration(period),
                    list_procs(killed)
                )?,
                Part::Hooks => {
                    for hook in &ledger.hooks {
                        write!(f, "; {}", shorten(&hook.to_string(), HOOK_MAX))?;
                    }
                }
                Part::Drain(left, kill) => {
                    let left = Count(left as u64, "process", "processes");
                    write!(f, "; drain: SIGTERM to {left}")?;
                    if let Some((why, killed)) = kill {
                        write!(f, ", then SIGKILL ({why})")?;
                        if !killed.is_empty() {
                            write!(f, " to: {}", list_procs(killed))?;
                        }
                    }
                }
                Part::Oom if self.oom_kills > 0 => self.write_oom(f)?,
                Part::Oom => {}
                Part::Orphans => write!(f, "; orphans reaped: {}", ledger.orphans_reaped)?,
            }
        }
        Ok(())
    }
}

/// A part of the report after the command (`Exit::parts`), said in words
/// by the text line and as fields by the record.
enum Part<'l> {
    Stop(&'l Stop),
    /// The grace period, and what its deadline's SIGKILL went to.
    GraceKill(Duration, &'l [Proc]),
    Hooks,
    /// How many got the drain's SIGTERM; why and to whom its SIGKILL went.
    Drain(usize, Option<&'l (DrainKill, Vec<Proc>)>),
    /// In words only after an OOM kill; the record always has the count.
    Oom,
    Orphans,
}

/// `text`, or when it is longer than `max` bytes its beginning and end
/// with the length in the middle: `sh -c 'exit 3' 1 2 3 [... 288,890 bytes
/// in all ...] 49999 50000`.
pub fn shorten(text: &str, max: usize) -> Cow<'_, str> {
    let Some((head, tail)) = cut_points(text.as_bytes(), max) else {
        return Cow::Borrowed(text);
    };
    Cow::Owned(format!(
        "{} [... {} bytes in all ...] {}",
        text.get(..head).unwrap_or("").trim_end(),
        text.len(),
        text.get(tail..).unwrap_or("").trim_start()
    ))
}

/// At most `PROCS_MAX` processes, their list cut to 40 bytes a process,
/// then how many more there were.
pub(super) fn list_procs(procs: &[Proc]) -> String {
    process::capped(procs, |shown| {
        shorten(&process::list(shown), PROCS_MAX * 40).into_owned()
    })
}
