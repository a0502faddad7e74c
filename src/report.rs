//! The exit report: one line, written when vigil exits, that says what
//! happened to the container: how the child ended and why, who asked it to
//! stop and when, how the hooks went, what vigil had to kill.
//!
//! It goes to the log (a warning when the ending was abnormal) and to the
//! termination log, where Kubernetes picks it up as the termination message.

use std::fmt;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::duration::secs;
use crate::hooks;
use crate::procs::{self, Proc};
use crate::reap::Ending;
use crate::signals::{self, Received};

/// Kubernetes reads at most this much of the termination log.
pub const TERMINATION_LOG_LIMIT: usize = 4096;

/// What started the stop sequence.
#[derive(Clone, Debug)]
pub enum StopCause {
    /// A stop signal, with its sender described when it arrived: by the
    /// time the report is written, the sender may be gone from /proc.
    Signal {
        signal: i32,
        sender: String,
    },
    PostStartFailed,
    /// `--timeout` passed.
    Timeout(Duration),
}

impl StopCause {
    pub fn signal(r: Received) -> StopCause {
        StopCause::Signal {
            signal: r.signal,
            sender: procs::describe_sender(r.sender),
        }
    }
}

#[derive(Debug)]
pub struct Stop {
    pub cause: StopCause,
    pub at: Instant,
}

/// Everything the report says, gathered while vigil runs.
#[derive(Debug, Default)]
pub struct Report {
    pub command: String,
    pub child_pid: i32,
    pub ending: Option<Ending>,
    pub ended_at: Option<Instant>,
    pub status: i32,
    /// Whether the user listed the child's status (code or 128+N) with `-e`.
    pub code_expected: bool,
    /// The signal the child was sent to stop it, after `--rewrite`.
    pub stop_signal_sent: Option<i32>,
    pub stop: Option<Stop>,
    pub grace_period: Option<Duration>,
    /// Set when the grace deadline passed: who was SIGKILLed then.
    pub grace_killed: Option<Vec<Proc>>,
    /// How many processes were left when the child exited.
    pub drained: Option<usize>,
    /// Set when the drain ended in SIGKILL: why (the drain timeout, a stop
    /// signal during the drain) and who was SIGKILLed then.
    pub drain_killed: Option<(String, Vec<Proc>)>,
    pub hooks: Vec<hooks::Record>,
    pub orphans_reaped: u64,
    /// Whether any process vigil reaped (the child, a hook, an orphan) died
    /// of SIGKILL: only then is the OOM counter worth a look.
    pub sigkill_seen: bool,
    /// OOM kills the container's cgroup counted while vigil ran.
    pub oom_kills: u64,
}

impl Report {
    /// Whether the ending deserves a warning: a SIGKILL, a failed hook, a
    /// deadline hit, or an exit the user did not expect.
    pub fn abnormal(&self) -> bool {
        let timed_out = matches!(
            self.stop,
            Some(Stop {
                cause: StopCause::Timeout(_),
                ..
            })
        );
        timed_out
            || self.grace_killed.is_some()
            || self.drain_killed.is_some()
            || self.hooks.iter().any(hooks::Record::failed)
            || self.oom_kills > 0
            || !self.ending_expected()
    }

    /// An ending is expected when it is success, a code listed with `-e`,
    /// or the answer to the stop signal vigil forwarded (death by it, or the
    /// conventional 128+N exit code).
    fn ending_expected(&self) -> bool {
        let answered_stop = |n: i32| self.stop.is_some() && self.stop_signal_sent == Some(n);
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

    fn sigkill_cause(&self) -> &'static str {
        if self.grace_killed.is_some() {
            "vigil, at the grace deadline"
        } else if self.oom_kills > 0 {
            "the kernel OOM killer"
        } else {
            "someone outside vigil, not the OOM killer"
        }
    }
}

/// Writes one message (the exit report, or why the child could not start)
/// to the termination log, cut to what Kubernetes reads. A failure is a
/// warning: it never changes the exit status.
pub fn write_termination_log(path: &Path, message: &str) {
    let mut text = message.to_string();
    if text.len() > TERMINATION_LOG_LIMIT - 1 {
        let mut cut = TERMINATION_LOG_LIMIT - 4;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("...");
    }
    text.push('\n');
    let written = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = written {
        log::warn!(
            "could not write the termination log {}: {e}",
            path.display()
        );
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (pid {}) ", self.command, self.child_pid)?;
        match self.ending {
            Some(ending) => write!(f, "{ending}")?,
            None => write!(f, "did not end")?,
        }
        if let Some(Ending::Killed {
            signal: libc::SIGKILL,
            ..
        }) = self.ending
        {
            write!(f, " by {}", self.sigkill_cause())?;
        }
        write!(f, "; exit status {}", self.status)?;
        if let Some(stop) = &self.stop {
            let cause = match &stop.cause {
                StopCause::Signal { signal, sender } => {
                    format!("{} {sender}", signals::name(*signal))
                }
                StopCause::PostStartFailed => "the post-start hook failed".to_string(),
                StopCause::Timeout(after) => format!("--timeout ({}) passed", secs(*after)),
            };
            write!(f, "; stop: {cause}")?;
            if let Some(ended) = self.ended_at {
                write!(
                    f,
                    ", child ended {} later",
                    secs(ended.saturating_duration_since(stop.at))
                )?;
            }
            if let Some(sent) = self.stop_signal_sent {
                write!(f, " (sent {})", signals::name(sent))?;
            }
        }
        if let Some(killed) = &self.grace_killed {
            let period = self.grace_period.map(secs).unwrap_or_default();
            write!(
                f,
                "; grace period {period} over, SIGKILL to: {}",
                procs::list(killed)
            )?;
        }
        for hook in &self.hooks {
            write!(f, "; {hook}")?;
        }
        if let Some(n) = self.drained {
            if n > 0 {
                write!(f, "; drain: SIGTERM to {n} left-over process(es)")?;
                if let Some((why, killed)) = &self.drain_killed {
                    write!(f, ", then SIGKILL ({why})")?;
                    if !killed.is_empty() {
                        write!(f, " to: {}", procs::list(killed))?;
                    }
                }
            }
        }
        if self.oom_kills > 0 {
            write!(
                f,
                "; the kernel OOM killer killed {} process(es) in this container",
                self.oom_kills
            )?;
        }
        write!(f, "; orphans reaped: {}", self.orphans_reaped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signals::Sender;

    fn base() -> Report {
        Report {
            command: "sleep 1000".into(),
            child_pid: 2,
            ..Report::default()
        }
    }

    #[test]
    fn a_clean_exit_is_normal() {
        let mut r = base();
        r.ending = Some(Ending::Exited(0));
        assert!(!r.abnormal());
        let text = r.to_string();
        assert!(
            text.contains("sleep 1000 (pid 2) exited with code 0"),
            "{text}"
        );
        r.ending = Some(Ending::Exited(3));
        r.status = 3;
        assert!(r.abnormal());
        r.code_expected = true;
        assert!(!r.abnormal());
    }

    #[test]
    fn stop_and_grace() {
        let mut r = base();
        let at = Instant::now();
        r.ending = Some(Ending::Killed {
            signal: 9,
            core_dumped: false,
        });
        r.status = 137;
        r.stop = Some(Stop {
            cause: StopCause::signal(Received {
                signal: 15,
                sender: Sender::Process { pid: 0, uid: 0 },
            }),
            at,
        });
        r.ended_at = Some(at + Duration::from_millis(1000));
        r.stop_signal_sent = Some(15);
        r.grace_period = Some(Duration::from_secs(1));
        r.grace_killed = Some(vec![Proc {
            pid: 2,
            name: "sleep".into(),
        }]);
        assert!(r.abnormal());
        let text = r.to_string();
        for needle in [
            "was killed by SIGKILL (status 137) by vigil, at the grace deadline",
            "stop: SIGTERM from pid 0 (outside this PID namespace), child ended 1.00s later",
            "grace period 1.00s over, SIGKILL to: 2 (sleep)",
        ] {
            assert!(text.contains(needle), "{needle} not in {text}");
        }
    }

    #[test]
    fn the_answer_to_a_stop_is_normal() {
        let mut r = base();
        r.stop = Some(Stop {
            cause: StopCause::PostStartFailed,
            at: Instant::now(),
        });
        r.stop_signal_sent = Some(15);
        r.ending = Some(Ending::Killed {
            signal: 15,
            core_dumped: false,
        });
        assert!(!r.abnormal());
        r.ending = Some(Ending::Exited(143));
        assert!(!r.abnormal());
        r.ending = Some(Ending::Killed {
            signal: 11,
            core_dumped: true,
        });
        assert!(r.abnormal());
    }

    #[test]
    fn termination_log_is_capped() {
        let mut r = base();
        r.command = "é".repeat(5000);
        let path = std::env::temp_dir().join(format!("vigil-tlog-{}", std::process::id()));
        write_termination_log(&path, &r.to_string());
        let written = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(written.len() <= TERMINATION_LOG_LIMIT, "{}", written.len());
        assert!(written.ends_with("...\n"));
    }
}
