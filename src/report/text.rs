//! The exit report as one line of text: `child was killed by SIGKILL
//! (status 137) by vigil, at the grace deadline; exit status 137; command:
//! ...`. Each part says a fact the exit record also has as a field. Text
//! from outside vigil (the command, a sender's name, a hook's output) is
//! written as it is: the log line escapes its control characters.

use std::fmt::{self, Display, Formatter};

use super::{COMMAND_MAX, Cause, Exit, HOOK_MAX, NotSent, PROCS_MAX, Stop, StopCause};
use crate::facts::signal;
use crate::facts::{Proc, process};
use crate::text::{duration, secs};

/// How the child ended and vigil's exit status come first, so that a cut
/// report (a log reader's narrow column, the termination message) still
/// says them; then the command and the rest.
impl Display for Exit {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "child {}", self.ending)?;
        self.write_cause(f)?;
        write!(
            f,
            "; exit status {}; command: {} (pid {})",
            self.status,
            shorten(&self.command.text, COMMAND_MAX),
            self.pid
        )?;
        if let Some(stop) = &self.stop {
            self.write_stop(f, stop)?;
        }
        if let (Some(grace), Some(kill)) = (&self.grace, self.grace_kill()) {
            write!(
                f,
                "; grace period {} over, SIGKILL to: {}",
                duration(grace.period),
                list_procs(&kill.killed)
            )?;
        }
        for hook in &self.hooks {
            write!(f, "; {}", shorten(&hook.to_string(), HOOK_MAX))?;
        }
        if let Some(drain) = self.drain.as_ref().filter(|d| d.left > 0) {
            write!(f, "; drain: SIGTERM to {}", processes(drain.left as u64))?;
            if let Some((why, killed)) = &drain.kill {
                write!(f, ", then SIGKILL ({why})")?;
                if !killed.is_empty() {
                    write!(f, " to: {}", list_procs(killed))?;
                }
            }
        }
        if self.oom_kills > 0 {
            write!(
                f,
                "; the kernel OOM killer killed {} in this container",
                processes(self.oom_kills)
            )?;
            if !matches!(self.cause(), Some(Cause::OomKiller)) {
                f.write_str(" (not the child: a process it started, or a hook)")?;
            }
            if !self.oom_group {
                f.write_str(", one process at a time (memory.oom.group is off)")?;
            }
        }
        write!(f, "; orphans reaped: {}", self.orphans_reaped)
    }
}

impl Exit {
    /// Who is behind the signal that ended the child, when the stop part of
    /// the report does not already say it.
    fn write_cause(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.cause() {
            None | Some(Cause::StopSignal) => Ok(()),
            Some(Cause::GraceDeadline) => f.write_str(" by vigil, at the grace deadline"),
            Some(Cause::OomKiller) => f.write_str(" by the kernel OOM killer"),
            Some(Cause::UnknownSigkill) => f.write_str(
                ", not by vigil or the OOM killer (a SIGKILL goes straight to the child, \
                 so vigil cannot tell who sent it)",
            ),
            Some(Cause::Terminal) => f.write_str(", from the terminal (Ctrl-C)"),
            Some(Cause::Forwarded(forwarded)) => {
                let fwd = forwarded.forward;
                let name = signal::name(fwd.received.signal);
                write!(f, ", forwarded by vigil: {name} {}", forwarded.sender)?;
                if fwd.received.signal != fwd.sent {
                    write!(f, ", sent as {}", signal::name(fwd.sent))?;
                }
                Ok(())
            }
        }
    }

    /// The grace period a stop that vigil started itself got without
    /// `--grace-period`.
    fn write_default_grace(&self, f: &mut Formatter<'_>, after: &str) -> fmt::Result {
        match self.grace.as_ref().filter(|g| g.by_default) {
            Some(grace) => write!(
                f,
                ", grace period {} (the default after {after})",
                duration(grace.period)
            ),
            None => Ok(()),
        }
    }

    fn write_stop(&self, f: &mut Formatter<'_>, stop: &Stop) -> fmt::Result {
        f.write_str("; stop: ")?;
        match &stop.cause {
            StopCause::Signal { signal, sender } => {
                write!(f, "{} {sender}", signal::name(*signal))?;
            }
            StopCause::PostStartFailed => f.write_str("the post-start hook failed")?,
            StopCause::Timeout(after) => {
                write!(f, "--timeout ({}) passed", duration(*after))?;
                self.write_default_grace(f, "--timeout")?;
            }
            StopCause::NotReady { timeout, last } => {
                write!(f, "not ready after {} (--ready-timeout", duration(*timeout))?;
                if let Some(last) = last {
                    write!(f, "; the last probe: {last}")?;
                }
                f.write_str(")")?;
                self.write_default_grace(f, "--ready-timeout")?;
            }
            StopCause::Fault(why) => write!(f, "vigil could not go on: {why}")?,
        }
        let signal = match &stop.cause {
            StopCause::Signal { signal, .. } => signal::name(*signal),
            _ => "the stop signal".into(),
        };
        let at_grace = self.grace_kill().is_some();
        match (stop.sent, stop.not_sent) {
            (Some(sent), _) => write!(f, " (sent {})", signal::name(sent))?,
            (None, Some(NotSent::Rewritten)) => write!(f, " (not sent: --rewrite drops {signal})")?,
            (None, Some(NotSent::PreStopHook)) if at_grace => f.write_str(
                " (not sent: the pre-stop hook was still running at the grace deadline)",
            )?,
            (None, Some(NotSent::PreStopHook)) => {
                f.write_str(" (not sent: the child ended during the pre-stop hook)")?
            }
            (None, Some(NotSent::PreStopSleep)) if at_grace => {
                f.write_str(" (not sent: the pre-stop sleep was not over at the grace deadline)")?
            }
            (None, Some(NotSent::PreStopSleep)) => {
                f.write_str(" (not sent: the child ended during the pre-stop sleep)")?
            }
            (None, Some(NotSent::Failed)) => {
                write!(f, " (not sent: vigil could not send {signal})")?
            }
            (None, None) => {}
        }
        if let Some(later) = &stop.later {
            write!(
                f,
                "; then {} {} (sent {} at once)",
                signal::name(later.forward.received.signal),
                later.sender,
                signal::name(later.forward.sent)
            )?;
        }
        let Some(after) = self.ended_after() else {
            return Ok(());
        };
        write!(f, ", child ended {}", secs(after))?;
        match self.ended_on_later_stop() {
            Some(later) => write!(
                f,
                " after the {}",
                signal::name(later.forward.received.signal)
            ),
            None => f.write_str(" later"),
        }
    }
}

/// `text`, or when it is longer than `max` bytes its beginning and end
/// with the length in the middle: `sh -c 'exit 3' 1 2 3 [... 288,890 bytes
/// in all ...] 49999 50000`.
pub fn shorten(text: &str, max: usize) -> Shortened<'_> {
    Shortened { text, max }
}

/// See `shorten`.
pub struct Shortened<'a> {
    text: &'a str,
    max: usize,
}

impl Display for Shortened<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let Shortened { text, max } = *self;
        if text.len() <= max {
            return f.write_str(text);
        }
        let mut head = max * 2 / 3;
        while !text.is_char_boundary(head) {
            head -= 1;
        }
        let mut tail = text.len() - max / 3;
        while !text.is_char_boundary(tail) {
            tail += 1;
        }
        write!(
            f,
            "{} [... {} bytes in all ...] {}",
            text.get(..head).unwrap_or("").trim_end(),
            text.len(),
            text.get(tail..).unwrap_or("").trim_start()
        )
    }
}

/// At most `PROCS_MAX` processes, then how many more there were.
pub(super) fn list_procs(procs: &[Proc]) -> String {
    let shown = procs.get(..PROCS_MAX).unwrap_or(procs);
    let mut text = shorten(&process::list(shown), PROCS_MAX * 40).to_string();
    if procs.len() > shown.len() {
        text.push_str(&format!(" and {} more", procs.len() - shown.len()));
    }
    text
}

/// `1 process`, `3 processes`.
fn processes(n: u64) -> String {
    if n == 1 {
        "1 process".to_string()
    } else {
        format!("{n} processes")
    }
}
