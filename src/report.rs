//! The exit report: one line, written when vigil exits, that says what
//! happened to the container: how the child ended and why, who asked it to
//! stop and when, how the hooks went, what vigil had to kill.
//!
//! It goes to the log (see `Audience`: shown by default unless the
//! container simply succeeded, a warning when the ending was abnormal) and
//! to the termination log, where Kubernetes picks it up as the termination
//! message. The ending and the exit status come first, and every part that
//! can grow long is shortened, so that neither a 4096-byte log line nor the
//! 4096-byte termination message ever loses the cause.

use std::borrow::Cow;
use std::fmt;
use std::time::{Duration, Instant};

use crate::hooks;
use crate::procs::{self, Proc};
use crate::reap::Ending;
use crate::signals::{self, Received};
use crate::text::{duration, secs};

/// What started the stop sequence.
#[derive(Clone, Debug)]
pub enum StopCause {
    /// A stop signal, with its sender described when it arrived: by the
    /// time the report is written, the sender may be gone from /proc.
    Signal {
        signal: i32,
        sender: Cow<'static, str>,
    },
    PostStartFailed,
    /// `--timeout` passed.
    Timeout(Duration),
    /// vigil could not go on supervising (its signals could not be read,
    /// its clock or its waits misbehaved): why.
    Fault(String),
}

#[derive(Debug)]
pub struct Stop {
    pub cause: StopCause,
    pub at: Instant,
}

/// A signal vigil forwarded to the child: what came, from whom, when, and
/// what was sent (after `--rewrite`). Plain data, so that recording one on
/// the forwarding path costs no allocation.
#[derive(Clone, Copy, Debug)]
pub struct Forward {
    pub received: Received,
    pub sent: i32,
    pub at: Instant,
}

/// A stop signal that came during the stop sequence, with its sender
/// described when it arrived (as for `StopCause::Signal`).
#[derive(Clone, Debug)]
pub struct LaterStop {
    pub forward: Forward,
    pub sender: Cow<'static, str>,
}

/// The last signal of each number vigil forwarded, by the number sent, so
/// that a child killed by one can be told whose it was. On the heap, so
/// that moving the report (by value, into the supervisor) does not copy 2.5
/// KiB of stack each time.
#[derive(Debug)]
pub struct Forwards(Box<[Option<Forward>; signals::MAX_SIGNAL as usize + 1]>);

impl Default for Forwards {
    fn default() -> Forwards {
        Forwards(Box::new([None; signals::MAX_SIGNAL as usize + 1]))
    }
}

impl Forwards {
    pub fn record(&mut self, forward: Forward) {
        if let Some(slot) = usize::try_from(forward.sent)
            .ok()
            .and_then(|i| self.0.get_mut(i))
        {
            *slot = Some(forward);
        }
    }

    pub fn last(&self, sent: i32) -> Option<Forward> {
        usize::try_from(sent)
            .ok()
            .and_then(|i| self.0.get(i).copied().flatten())
    }
}

/// Everything the report says, gathered while vigil runs.
#[derive(Debug, Default)]
pub struct Report {
    pub command: String,
    pub child_pid: i32,
    /// Whether vigil gave the child the terminal's foreground: a SIGINT
    /// death then most likely was Ctrl-C.
    pub child_had_terminal: bool,
    pub ending: Option<Ending>,
    pub ended_at: Option<Instant>,
    pub status: i32,
    /// Whether the user listed the child's status (code or 128+N) with `-e`.
    pub code_expected: bool,
    /// The signal the child was sent to stop it, after `--rewrite`.
    pub stop_signal_sent: Option<i32>,
    pub stop: Option<Stop>,
    /// A later stop signal (SIGTERM after SIGINT, say), forwarded at once
    /// during the stop sequence: the last one.
    pub later_stop: Option<LaterStop>,
    /// Every signal forwarded, the last of each number.
    pub forwards: Forwards,
    pub grace_period: Option<Duration>,
    /// The grace period was not the user's but `--timeout`'s default.
    pub grace_by_default: bool,
    /// Set when the grace deadline passed: who was SIGKILLed then.
    pub grace_killed: Option<Vec<Proc>>,
    /// When that SIGKILL was sent: a child it killed ended then, even if
    /// vigil reaped it later (its final lines may wait for room in stderr).
    pub grace_killed_at: Option<Instant>,
    /// How many processes were left when the child exited.
    pub drained: Option<usize>,
    /// Set when the drain ended in SIGKILL: why (the drain timeout, a stop
    /// signal during the drain) and who was SIGKILLed then.
    pub drain_killed: Option<(String, Vec<Proc>)>,
    pub hooks: Vec<hooks::Record>,
    pub orphans_reaped: u64,
    /// OOM kills the container's cgroup counted while vigil ran.
    pub oom_kills: u64,
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

/// The longest command the report shows, in bytes; a longer one is cut in
/// the middle. Together with the other caps (processes listed, hook texts)
/// this keeps the report well inside one 4096-byte log line and the
/// 4096-byte termination message, so the cause and status are never cut.
const COMMAND_MAX: usize = 200;

/// The most processes a report lists for one deadline.
const PROCS_MAX: usize = 20;

/// The longest hook record shown (a hook that cannot run quotes its
/// program, which may be long).
const HOOK_MAX: usize = 300;

impl Report {
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
                cause: StopCause::Timeout(_) | StopCause::Fault(_),
                ..
            })
        );
        forced
            || self.grace_killed.is_some()
            || self.drain_killed.is_some()
            || self.hooks.iter().any(hooks::Record::failed)
            || self.oom_kills > 0
            || !(self.ending_expected() || self.quiet_ending())
    }

    /// Endings a shell reports to nobody: a child killed by SIGPIPE (its
    /// reader went away, as in `vigil -- yes | head -1`), or by a SIGINT
    /// that came from the terminal it held (Ctrl-C), not through vigil. A
    /// shell that was the child ends with the status of such a death, 141
    /// or 130, as its own exit code: the same ending, said by the shell.
    fn quiet_ending(&self) -> bool {
        let signal = match self.ending {
            Some(Ending::Killed { signal, .. }) => signal,
            Some(Ending::Exited(code))
                if code == 128 + libc::SIGPIPE || code == 128 + libc::SIGINT =>
            {
                code - 128
            }
            _ => return false,
        };
        match signal {
            libc::SIGPIPE => true,
            libc::SIGINT => self.child_had_terminal && self.forwards.last(libc::SIGINT).is_none(),
            _ => false,
        }
    }

    /// The stop signals vigil sent: the one that ended the stop sequence,
    /// and a later one forwarded at once.
    fn stop_signals_sent(&self) -> impl Iterator<Item = i32> + '_ {
        let later = self.later_stop.as_ref().map(|l| l.forward.sent);
        self.stop
            .as_ref()
            .and(self.stop_signal_sent)
            .into_iter()
            .chain(later)
    }

    /// An ending is expected when it is success, a status listed with `-e`,
    /// or the answer to a stop signal vigil forwarded (death by it, or the
    /// conventional 128+N exit code).
    fn ending_expected(&self) -> bool {
        let answered_stop = |n: i32| self.stop_signals_sent().any(|sent| sent == n);
        match self.ending {
            None => false,
            Some(Ending::Exited(0)) => true,
            Some(Ending::Exited(code)) => {
                self.code_expected || (code > 128 && answered_stop(code - 128))
            }
            Some(Ending::Killed { signal, .. }) => {
                self.code_expected || (signal != libc::SIGKILL && answered_stop(signal))
            }
        }
    }

    /// The signal the child's ending points to: the one that killed it, or
    /// N for the conventional exit code 128+N.
    fn ending_signal(&self) -> Option<i32> {
        match self.ending? {
            Ending::Killed { signal, .. } => Some(signal),
            Ending::Exited(code) if code > 128 && code - 128 <= signals::MAX_SIGNAL => {
                Some(code - 128)
            }
            Ending::Exited(_) => None,
        }
    }

    /// Which stop signal the child ended on, when more than one came: the
    /// later one when the ending points to it (or to neither), else the
    /// first. `None` means the first.
    fn ended_on_later_stop(&self) -> Option<Forward> {
        let later = self.later_stop.as_ref()?.forward;
        let signal = self.ending_signal();
        let points_to_first = signal.is_some() && signal == self.stop_signal_sent;
        let points_to_later = signal == Some(later.sent);
        (points_to_later || !points_to_first).then_some(later)
    }

    fn sigkill_cause(&self) -> &'static str {
        if self.grace_killed.is_some() {
            "vigil, at the grace deadline"
        } else if self.oom_kills > 0 {
            "the kernel OOM killer"
        } else {
            "someone outside vigil, not the OOM killer"
        }
    }

    /// Who is behind the signal that ended the child, when the stop part of
    /// the report does not already say it.
    fn write_cause(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(Ending::Killed { signal, .. }) = self.ending else {
            return Ok(());
        };
        if signal == libc::SIGKILL {
            return write!(f, " by {}", self.sigkill_cause());
        }
        if self.stop_signals_sent().any(|sent| sent == signal) {
            return Ok(());
        }
        match self.forwards.last(signal) {
            Some(fwd) => {
                write!(
                    f,
                    ", forwarded by vigil: {} {}",
                    signals::name(fwd.received.signal),
                    fwd.received.sender
                )?;
                if fwd.received.signal != fwd.sent {
                    write!(f, ", sent as {}", signals::name(fwd.sent))?;
                }
                Ok(())
            }
            None if self.quiet_ending() && signal == libc::SIGINT => {
                write!(f, ", from the terminal (Ctrl-C)")
            }
            None => Ok(()),
        }
    }

    fn write_stop(&self, f: &mut fmt::Formatter<'_>, stop: &Stop) -> fmt::Result {
        match &stop.cause {
            StopCause::Signal { signal, sender } => {
                write!(f, "; stop: {} {sender}", signals::name(*signal))?
            }
            StopCause::PostStartFailed => write!(f, "; stop: the post-start hook failed")?,
            StopCause::Timeout(after) => {
                write!(f, "; stop: --timeout ({}) passed", duration(*after))?;
                if let (true, Some(period)) = (self.grace_by_default, self.grace_period) {
                    write!(
                        f,
                        ", grace period {} (the default after --timeout)",
                        duration(period)
                    )?;
                }
            }
            StopCause::Fault(why) => write!(f, "; stop: vigil could not go on: {why}")?,
        }
        match self.stop_signal_sent {
            Some(sent) => write!(f, " (sent {})", signals::name(sent))?,
            None if self.grace_killed.is_some() => {
                write!(f, " (not sent: the grace deadline came first)")?
            }
            None => {}
        }
        if let Some(later) = &self.later_stop {
            write!(
                f,
                "; then {} {} (sent {} at once)",
                signals::name(later.forward.received.signal),
                later.sender,
                signals::name(later.forward.sent)
            )?;
        }
        let Some(mut ended) = self.ended_at else {
            return Ok(());
        };
        if let (Some(at), Some(Ending::Killed { signal, .. })) = (self.grace_killed_at, self.ending)
        {
            if signal == libc::SIGKILL {
                ended = ended.min(at);
            }
        }
        match self.ended_on_later_stop() {
            Some(later) => write!(
                f,
                ", child ended {} after the {}",
                secs(ended.saturating_duration_since(later.at)),
                signals::name(later.received.signal)
            ),
            None => write!(
                f,
                ", child ended {} later",
                secs(ended.saturating_duration_since(stop.at))
            ),
        }
    }
}

/// `text`, or when it is longer than `max` bytes its beginning and end
/// with the length in the middle: `sh -c 'exit 3' 1 2 3 [... 288,890 bytes
/// in all ...] 49999 50000`.
pub fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut head = max * 2 / 3;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - max / 3;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{} [... {} bytes in all ...] {}",
        text.get(..head).unwrap_or("").trim_end(),
        text.len(),
        text.get(tail..).unwrap_or("").trim_start()
    )
}

/// At most `PROCS_MAX` processes, then how many more there were.
fn list_procs(procs: &[Proc]) -> String {
    let shown = procs.get(..PROCS_MAX).unwrap_or(procs);
    let mut text = shorten(&procs::list(shown), PROCS_MAX * 40);
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

impl fmt::Display for Report {
    /// How the child ended and vigil's exit status come first, so that a
    /// cut report (a log reader's narrow column, the termination message)
    /// still says them; then the command and the rest.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.ending {
            Some(ending) => write!(f, "child {ending}")?,
            None => write!(f, "child did not end")?,
        }
        self.write_cause(f)?;
        write!(f, "; exit status {}", self.status)?;
        write!(
            f,
            "; command: {} (pid {})",
            shorten(&self.command, COMMAND_MAX),
            self.child_pid
        )?;
        if let Some(stop) = &self.stop {
            self.write_stop(f, stop)?;
        }
        if let Some(killed) = &self.grace_killed {
            let period = self.grace_period.map(duration).unwrap_or_default();
            write!(
                f,
                "; grace period {period} over, SIGKILL to: {}",
                list_procs(killed)
            )?;
        }
        for hook in &self.hooks {
            write!(f, "; {}", shorten(&hook.to_string(), HOOK_MAX))?;
        }
        if let Some(n) = self.drained {
            if n > 0 {
                write!(f, "; drain: SIGTERM to {}", processes(n as u64))?;
                if let Some((why, killed)) = &self.drain_killed {
                    write!(f, ", then SIGKILL ({why})")?;
                    if !killed.is_empty() {
                        write!(f, " to: {}", list_procs(killed))?;
                    }
                }
            }
        }
        if self.oom_kills > 0 {
            write!(
                f,
                "; the kernel OOM killer killed {} in this container",
                processes(self.oom_kills)
            )?;
            if !matches!(
                self.ending,
                Some(Ending::Killed {
                    signal: libc::SIGKILL,
                    ..
                })
            ) {
                write!(f, " (not the child: a process it started, or a hook)")?;
            }
        }
        write!(f, "; orphans reaped: {}", self.orphans_reaped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::{Cancel, HookKind, Outcome, Record};
    use crate::signals::Sender;

    fn base() -> Report {
        Report {
            command: "sleep 1000".into(),
            child_pid: 2,
            ..Report::default()
        }
    }

    fn killed(signal: i32) -> Option<Ending> {
        Some(Ending::Killed {
            signal,
            core_dumped: false,
        })
    }

    fn outside(signal: i32) -> Received {
        Received {
            signal,
            sender: Sender::Process { pid: 0, uid: 0 },
        }
    }

    fn stopped_by(r: &mut Report, signal: i32, at: Instant) {
        r.stop = Some(Stop {
            cause: StopCause::Signal {
                signal,
                sender: outside(signal).sender.to_string().into(),
            },
            at,
        });
        r.stop_signal_sent = Some(signal);
    }

    #[test]
    fn a_clean_exit_is_for_v_only_and_a_failure_is_shown() {
        let mut r = base();
        r.ending = Some(Ending::Exited(0));
        assert_eq!(r.audience(), Audience::Verbose);
        assert_eq!(
            r.to_string(),
            "child exited with code 0; exit status 0; command: sleep 1000 (pid 2); orphans reaped: 0"
        );
        r.ending = Some(Ending::Exited(3));
        r.status = 3;
        assert_eq!(r.audience(), Audience::Warning);
        r.code_expected = true;
        r.status = 0;
        assert_eq!(r.audience(), Audience::Verbose);
    }

    #[test]
    fn the_answer_to_a_stop_is_shown_but_no_warning() {
        let mut r = base();
        stopped_by(&mut r, 15, Instant::now());
        r.ending = killed(15);
        r.status = 143;
        assert_eq!(r.audience(), Audience::Default);
        r.ending = Some(Ending::Exited(0));
        r.status = 0;
        assert_eq!(r.audience(), Audience::Default);
        r.ending = Some(Ending::Exited(143));
        r.status = 143;
        assert_eq!(r.audience(), Audience::Default);
        r.ending = Some(Ending::Killed {
            signal: 11,
            core_dumped: true,
        });
        r.status = 139;
        assert_eq!(r.audience(), Audience::Warning);
    }

    #[test]
    fn stop_and_grace() {
        let mut r = base();
        let at = Instant::now();
        r.ending = killed(9);
        r.status = 137;
        stopped_by(&mut r, 15, at);
        r.ended_at = Some(at + Duration::from_millis(1000));
        r.grace_period = Some(Duration::from_secs(1));
        r.grace_killed = Some(vec![Proc {
            pid: 2,
            name: "sleep".into(),
        }]);
        assert_eq!(r.audience(), Audience::Warning);
        let text = r.to_string();
        assert!(
            text.starts_with(
                "child was killed by SIGKILL (status 137) by vigil, at the grace deadline; exit status 137; command: sleep 1000 (pid 2)"
            ),
            "{text}"
        );
        for needle in [
            "; stop: SIGTERM from pid 0 (outside this PID namespace) (sent SIGTERM), child ended 1.00s later",
            "; grace period 1s over, SIGKILL to: 2 (sleep)",
        ] {
            assert!(text.contains(needle), "{needle} not in {text}");
        }
    }

    #[test]
    fn sigpipe_and_ctrl_c_are_for_v_only() {
        let mut r = base();
        r.ending = killed(libc::SIGPIPE);
        r.status = 141;
        assert_eq!(r.audience(), Audience::Verbose);
        // SIGINT: Ctrl-C only when the child held the terminal and vigil
        // did not forward a SIGINT.
        r.ending = killed(libc::SIGINT);
        r.status = 130;
        assert_eq!(r.audience(), Audience::Warning);
        r.child_had_terminal = true;
        assert_eq!(r.audience(), Audience::Verbose);
        assert!(r.to_string().contains(", from the terminal (Ctrl-C)"));
        r.forwards.record(Forward {
            received: outside(libc::SIGINT),
            sent: libc::SIGINT,
            at: Instant::now(),
        });
        assert_eq!(r.audience(), Audience::Warning);
        // Anything abnormal besides is still a warning.
        r.ending = killed(libc::SIGPIPE);
        r.oom_kills = 1;
        assert_eq!(r.audience(), Audience::Warning);
    }

    #[test]
    fn a_shell_that_says_141_or_130_is_as_quiet_as_the_death_it_reports() {
        let mut r = base();
        r.ending = Some(Ending::Exited(141));
        r.status = 141;
        assert_eq!(r.audience(), Audience::Verbose);
        r.ending = Some(Ending::Exited(130));
        r.status = 130;
        assert_eq!(r.audience(), Audience::Warning, "no terminal: not Ctrl-C");
        r.child_had_terminal = true;
        assert_eq!(r.audience(), Audience::Verbose);
        r.ending = Some(Ending::Exited(142));
        r.status = 142;
        assert_eq!(r.audience(), Audience::Warning);
    }

    #[test]
    fn a_forwarded_signal_that_killed_the_child_names_its_sender() {
        let mut r = base();
        r.forwards.record(Forward {
            received: outside(libc::SIGUSR1),
            sent: libc::SIGUSR1,
            at: Instant::now(),
        });
        r.ending = killed(libc::SIGUSR1);
        r.status = 138;
        let text = r.to_string();
        assert!(
            text.starts_with("child was killed by SIGUSR1 (status 138), forwarded by vigil: SIGUSR1 from pid 0 (outside this PID namespace); exit status 138"),
            "{text}"
        );
    }

    #[test]
    fn the_later_stop_signal_is_the_one_the_child_ended_on() {
        let mut r = base();
        let at = Instant::now();
        stopped_by(&mut r, libc::SIGINT, at);
        let later = Forward {
            received: outside(libc::SIGTERM),
            sent: libc::SIGTERM,
            at: at + Duration::from_millis(500),
        };
        r.later_stop = Some(LaterStop {
            forward: later,
            sender: later.received.sender.to_string().into(),
        });
        r.ending = Some(Ending::Exited(143));
        r.status = 143;
        r.ended_at = Some(at + Duration::from_millis(700));
        assert_eq!(r.audience(), Audience::Default);
        let text = r.to_string();
        assert!(
            text.contains("; stop: SIGINT from pid 0 (outside this PID namespace) (sent SIGINT); then SIGTERM from pid 0 (outside this PID namespace) (sent SIGTERM at once), child ended 0.20s after the SIGTERM"),
            "{text}"
        );
        // An ending that points to the first signal is the first one's.
        r.ending = Some(Ending::Exited(130));
        assert!(r.to_string().contains(", child ended 0.70s later"));
    }

    #[test]
    fn a_cancelled_hook_is_no_failure() {
        let mut r = base();
        r.ending = killed(9);
        r.status = 137;
        stopped_by(&mut r, 15, Instant::now());
        r.grace_killed = Some(Vec::new());
        r.hooks.push(Record {
            kind: HookKind::PreStop,
            outcome: Outcome::Cancelled(Cancel::GraceDeadline),
            took: Duration::from_secs(1),
        });
        assert!(r
            .to_string()
            .contains("; pre-stop hook cancelled at the grace deadline after 1.00s"));
        assert!(!r.hooks.iter().any(Record::failed));
    }

    #[test]
    fn oom_kill_of_another_process() {
        let mut r = base();
        r.ending = Some(Ending::Exited(0));
        r.oom_kills = 1;
        assert_eq!(r.audience(), Audience::Warning);
        assert!(r.to_string().contains(
            "; the kernel OOM killer killed 1 process in this container (not the child: a process it started, or a hook)"
        ));
        r.ending = killed(9);
        r.oom_kills = 2;
        let text = r.to_string();
        assert!(
            text.starts_with("child was killed by SIGKILL (status 137) by the kernel OOM killer")
        );
        assert!(text.contains("; the kernel OOM killer killed 2 processes in this container; "));
    }

    #[test]
    fn a_long_command_is_shortened_and_the_cause_comes_first() {
        let mut r = base();
        let words: Vec<String> = (1..=50_000).map(|n| n.to_string()).collect();
        r.command = format!("sh -c 'exit 3' {}", words.join(" "));
        r.ending = Some(Ending::Exited(3));
        r.status = 3;
        let text = r.to_string();
        assert!(text.len() < 400, "{} bytes: {text}", text.len());
        assert!(text.starts_with(
            "child exited with code 3; exit status 3; command: sh -c 'exit 3' 1 2 3 "
        ));
        assert!(text.contains(" bytes in all ...] "), "{text}");
        assert!(
            text.ends_with(" 49999 50000 (pid 2); orphans reaped: 0"),
            "{text}"
        );
    }

    #[test]
    fn long_lists_are_capped() {
        let many: Vec<Proc> = (1..=1000)
            .map(|pid| Proc {
                pid,
                name: "worker".into(),
            })
            .collect();
        let text = list_procs(&many);
        assert!(text.starts_with("1 (worker), 2 (worker)"), "{text}");
        assert!(text.ends_with(" and 980 more"), "{text}");
    }
}
