//! The exit report as one line of text: `child was killed by SIGKILL
//! (status 137) by vigil, at the grace deadline; exit status 137; command:
//! ...`. Each part renders a fact the exit record also has as a field.

use std::fmt;

use super::{Cause, Exit, Stop, StopCause, COMMAND_MAX, HOOK_MAX, PROCS_MAX};
use crate::procs::{self, Proc};
use crate::signals;
use crate::text::{duration, secs};

impl Exit<'_> {
    /// Who is behind the signal that ended the child, when the stop part of
    /// the report does not already say it.
    fn write_cause(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
                write!(
                    f,
                    ", forwarded by vigil: {} {}",
                    signals::name(fwd.received.signal),
                    forwarded.sender
                )?;
                if fwd.received.signal != fwd.sent {
                    write!(f, ", sent as {}", signals::name(fwd.sent))?;
                }
                Ok(())
            }
        }
    }

    fn write_stop(&self, f: &mut fmt::Formatter<'_>, stop: &Stop) -> fmt::Result {
        let r = self.report;
        match &stop.cause {
            StopCause::Signal { signal, sender } => {
                write!(f, "; stop: {} {sender}", signals::name(*signal))?
            }
            StopCause::PostStartFailed => write!(f, "; stop: the post-start hook failed")?,
            StopCause::Timeout(after) => {
                write!(f, "; stop: --timeout ({}) passed", duration(*after))?;
                if let (true, Some(period)) = (r.grace_by_default, r.grace_period) {
                    write!(
                        f,
                        ", grace period {} (the default after --timeout)",
                        duration(period)
                    )?;
                }
            }
            StopCause::Fault(why) => write!(f, "; stop: vigil could not go on: {why}")?,
        }
        match r.stop_signal_sent {
            Some(sent) => write!(f, " (sent {})", signals::name(sent))?,
            None if r.grace_killed.is_some() => {
                write!(f, " (not sent: the grace deadline came first)")?
            }
            None => {}
        }
        if let Some(later) = &r.later_stop {
            write!(
                f,
                "; then {} {} (sent {} at once)",
                signals::name(later.forward.received.signal),
                later.sender,
                signals::name(later.forward.sent)
            )?;
        }
        let Some(after) = self.ended_after() else {
            return Ok(());
        };
        match self.ended_on_later_stop() {
            Some(later) => write!(
                f,
                ", child ended {} after the {}",
                secs(after),
                signals::name(later.forward.received.signal)
            ),
            None => write!(f, ", child ended {} later", secs(after)),
        }
    }
}

/// `text`, or when it is longer than `max` bytes its beginning and end
/// with the length in the middle: `sh -c 'exit 3' 1 2 3 [... 288,890 bytes
/// in all ...] 49999 50000`. Written where it goes, without a copy: the
/// command is shortened on vigil's way out, which should not wait for the
/// allocator.
pub fn shorten(text: &str, max: usize) -> Shortened<'_> {
    Shortened { text, max }
}

/// See `shorten`.
pub struct Shortened<'a> {
    text: &'a str,
    max: usize,
}

impl fmt::Display for Shortened<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
    let mut text = shorten(&procs::list(shown), PROCS_MAX * 40).to_string();
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

impl fmt::Display for Exit<'_> {
    /// How the child ended and vigil's exit status come first, so that a
    /// cut report (a log reader's narrow column, the termination message)
    /// still says them; then the command and the rest.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.report;
        write!(f, "child {}", self.ending)?;
        self.write_cause(f)?;
        write!(f, "; exit status {}", r.status)?;
        write!(
            f,
            "; command: {} (pid {})",
            shorten(&r.command, COMMAND_MAX),
            r.child_pid
        )?;
        if let Some(stop) = &r.stop {
            self.write_stop(f, stop)?;
        }
        if let Some(killed) = &r.grace_killed {
            let period = r.grace_period.map(duration).unwrap_or_default();
            write!(
                f,
                "; grace period {period} over, SIGKILL to: {}",
                list_procs(killed)
            )?;
        }
        for hook in &r.hooks {
            write!(f, "; {}", shorten(&hook.to_string(), HOOK_MAX))?;
        }
        if let Some(n) = r.drained {
            if n > 0 {
                write!(f, "; drain: SIGTERM to {}", processes(n as u64))?;
                if let Some((why, killed)) = &r.drain_killed {
                    write!(f, ", then SIGKILL ({why})")?;
                    if !killed.is_empty() {
                        write!(f, " to: {}", list_procs(killed))?;
                    }
                }
            }
        }
        if r.oom_kills > 0 {
            write!(
                f,
                "; the kernel OOM killer killed {} in this container",
                processes(r.oom_kills)
            )?;
            if !matches!(self.cause(), Some(Cause::OomKiller)) {
                write!(f, " (not the child: a process it started, or a hook)")?;
            }
        }
        write!(f, "; orphans reaped: {}", r.orphans_reaped)
    }
}
