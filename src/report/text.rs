//! The exit report as one line of text: `child was killed by SIGKILL
//! (status 137) by vigil, at the grace deadline; exit status 137; command:
//! ...`. Each part renders a fact the exit record also has as a field.

use std::fmt;

use super::{Cause, Exit, Stop, StopCause, COMMAND_MAX, HOOK_MAX, PROCS_MAX};
use crate::procs::{self, Proc};
use crate::signals;
use crate::text::{self, duration, secs, Out};

impl Exit<'_> {
    /// The whole line, into `out` (see `text::Out`: the report is written
    /// on vigil's way out, without `core::fmt`). How the child ended and
    /// vigil's exit status come first, so that a cut report (a log reader's
    /// narrow column, the termination message) still says them; then the
    /// command and the rest.
    pub fn render(&self, out: &mut dyn Out) {
        let r = self.report;
        out.words("child ");
        self.ending.render(out);
        self.render_cause(out);
        out.words("; exit status ");
        out.num(r.status);
        out.words("; command: ");
        shorten(&r.command, COMMAND_MAX).render(out);
        out.words(" (pid ");
        out.num(r.child_pid);
        out.words(")");
        if let Some(stop) = &r.stop {
            self.render_stop(out, stop);
        }
        if let Some(killed) = &r.grace_killed {
            out.words("; grace period ");
            out.words(&r.grace_period.map(duration).unwrap_or_default());
            out.words(" over, SIGKILL to: ");
            out.text(&list_procs(killed));
        }
        for hook in &r.hooks {
            out.words("; ");
            shorten(&hook.to_string(), HOOK_MAX).render(out);
        }
        if let Some(n) = r.drained {
            if n > 0 {
                out.words("; drain: SIGTERM to ");
                out.words(&processes(n as u64));
                if let Some((why, killed)) = &r.drain_killed {
                    out.words(", then SIGKILL (");
                    out.show(why);
                    out.words(")");
                    if !killed.is_empty() {
                        out.words(" to: ");
                        out.text(&list_procs(killed));
                    }
                }
            }
        }
        if r.oom_kills > 0 {
            out.words("; the kernel OOM killer killed ");
            out.words(&processes(r.oom_kills));
            out.words(" in this container");
            if !matches!(self.cause(), Some(Cause::OomKiller)) {
                out.words(" (not the child: a process it started, or a hook)");
            }
        }
        out.words("; orphans reaped: ");
        out.count(r.orphans_reaped);
    }

    /// Who is behind the signal that ended the child, when the stop part of
    /// the report does not already say it.
    fn render_cause(&self, out: &mut dyn Out) {
        match self.cause() {
            None | Some(Cause::StopSignal) => {}
            Some(Cause::GraceDeadline) => out.words(" by vigil, at the grace deadline"),
            Some(Cause::OomKiller) => out.words(" by the kernel OOM killer"),
            Some(Cause::UnknownSigkill) => out.words(
                ", not by vigil or the OOM killer (a SIGKILL goes straight to the child, \
                 so vigil cannot tell who sent it)",
            ),
            Some(Cause::Terminal) => out.words(", from the terminal (Ctrl-C)"),
            Some(Cause::Forwarded(forwarded)) => {
                let fwd = forwarded.forward;
                out.words(", forwarded by vigil: ");
                out.words(&signals::name(fwd.received.signal));
                out.words(" ");
                forwarded.sender.render(out);
                if fwd.received.signal != fwd.sent {
                    out.words(", sent as ");
                    out.words(&signals::name(fwd.sent));
                }
            }
        }
    }

    fn render_stop(&self, out: &mut dyn Out, stop: &Stop) {
        let r = self.report;
        out.words("; stop: ");
        match &stop.cause {
            StopCause::Signal { signal, sender } => {
                out.words(&signals::name(*signal));
                out.words(" ");
                sender.render(out);
            }
            StopCause::PostStartFailed => out.words("the post-start hook failed"),
            StopCause::Timeout(after) => {
                out.words("--timeout (");
                out.words(&duration(*after));
                out.words(") passed");
                if let (true, Some(period)) = (r.grace_by_default, r.grace_period) {
                    out.words(", grace period ");
                    out.words(&duration(period));
                    out.words(" (the default after --timeout)");
                }
            }
            StopCause::Fault(why) => {
                out.words("vigil could not go on: ");
                out.text(why);
            }
        }
        match r.stop_signal_sent {
            Some(sent) => {
                out.words(" (sent ");
                out.words(&signals::name(sent));
                out.words(")");
            }
            None if r.grace_killed.is_some() => {
                out.words(" (not sent: the grace deadline came first)")
            }
            None => {}
        }
        if let Some(later) = &r.later_stop {
            out.words("; then ");
            out.words(&signals::name(later.forward.received.signal));
            out.words(" ");
            later.sender.render(out);
            out.words(" (sent ");
            out.words(&signals::name(later.forward.sent));
            out.words(" at once)");
        }
        let Some(after) = self.ended_after() else {
            return;
        };
        out.words(", child ended ");
        secs(after).render(out);
        match self.ended_on_later_stop() {
            Some(later) => {
                out.words(" after the ");
                out.words(&signals::name(later.forward.received.signal));
            }
            None => out.words(" later"),
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

impl Shortened<'_> {
    pub fn render(&self, out: &mut dyn Out) {
        let Shortened { text, max } = *self;
        if text.len() <= max {
            return out.text(text);
        }
        let mut head = max * 2 / 3;
        while !text.is_char_boundary(head) {
            head -= 1;
        }
        let mut tail = text.len() - max / 3;
        while !text.is_char_boundary(tail) {
            tail += 1;
        }
        out.text(text.get(..head).unwrap_or("").trim_end());
        out.words(" [... ");
        out.count(text.len() as u64);
        out.words(" bytes in all ...] ");
        out.text(text.get(tail..).unwrap_or("").trim_start());
    }
}

impl fmt::Display for Shortened<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        text::display(f, |out| self.render(out))
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
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        text::display(f, |out| self.render(out))
    }
}
