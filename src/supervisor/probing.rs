//! Probing while the child runs: `--ready-when` until the service first
//! answers, then `READY=1` to the service manager once; `--live-when` for
//! the rest of the child's life, and the stop sequence, as for the first
//! of `--stop-signals`, when it fails `--live-failures` times in a row.
//! `STOPPING=1` follows when the container begins to stop. Not ready by
//! `--ready-timeout`, the stop sequence runs too.
//!
//! One `Probing` (probe/schedule.rs) at a time says when the next probe
//! starts and what the outcomes mean; the attempt itself is the `System`'s:
//! its socket joins the loop's wait (`Woken::Probe`), and one deadline,
//! `Probe`, is when the one in flight runs out of time if the `System`
//! has one, else when the next attempt starts. Between two probes nothing
//! else is pending, and once no probing is left the loop is the plain wait
//! for a signal again: an idle vigil is never woken.

use std::fmt;
use std::time::Duration;

use super::deadlines::Deadline;
use super::system::{Notified, System};
use super::{State, Supervisor};
use crate::log;
use crate::log::event::{Event, Fact};
use crate::log::facts::stop::StopCause;
use crate::probe::{Healthy, Outcome, Probing, Purpose, Verdict};

impl<S: System> Supervisor<S> {
    /// Starts probing, with the child: readiness, with `--ready-timeout`,
    /// or liveness after `--live-start`.
    pub(super) fn start_probing(&mut self) {
        let now = self.sys.now();
        if let Some(url) = self.config.ready_when.clone() {
            let (probing, first) = Probing::ready(url, self.config.ready_interval, now);
            self.probe_in(probing, first);
            if let Some(timeout) = self.config.ready_timeout {
                self.deadlines.set(Deadline::ReadyTimeout, now + timeout);
            }
        } else {
            self.start_liveness(self.config.live_start);
        }
    }

    /// Liveness probing, its first probe `after` from now.
    fn start_liveness(&mut self, after: Duration) {
        let Some(url) = self.config.live_when.clone() else {
            return;
        };
        let (interval, failures) = (self.config.live_interval, self.config.live_failures);
        let probing = Probing::live(url, interval, failures, self.sys.now());
        self.probe_in(probing, after);
    }

    /// `probing` is on, its next attempt `wait` from now.
    fn probe_in(&mut self, probing: Probing, wait: Duration) {
        self.deadlines.set(Deadline::Probe, self.sys.now() + wait);
        self.probing = Some(probing);
    }

    /// `Probe`: the attempt in flight, if there is one, has run out of
    /// time; otherwise the next attempt is due.
    pub(super) fn probe_due(&mut self) {
        let timeout = self.config.probe_timeout;
        let Some(probing) = &mut self.probing else {
            return;
        };
        if let Some(why) = self.sys.probe_cancel(timeout) {
            return self.probe_done(Err(why));
        }
        probing.attempts += 1;
        match self.sys.probe_start(&probing.url) {
            Some(outcome) => self.probe_done(outcome),
            None => {
                let at = self.sys.now() + timeout;
                self.deadlines.set(Deadline::Probe, at);
            }
        }
    }

    /// The probe's socket is ready: its next step.
    pub(super) fn on_probe_ready(&mut self) {
        if let Some(outcome) = self.sys.probe_step() {
            self.probe_done(outcome);
        }
    }

    fn probe_done(&mut self, outcome: Outcome) {
        let healthy = outcome.as_ref().ok().cloned();
        let Some(probing) = &mut self.probing else {
            return;
        };
        let verdict = probing.ended(outcome);
        let (url, failed) = (&probing.url.text, probing.failed.len());
        match (verdict, healthy) {
            (Verdict::Ready, Some(healthy)) => self.became_ready(healthy),
            (Verdict::Unhealthy, _) => self.unhealthy(),
            (Verdict::Again(next), _) => {
                if let Some(why) = probing.last().filter(|_| failed > 0) {
                    log::emit(&match probing.purpose {
                        Purpose::Ready => Event::NotReady { url, why, next },
                        Purpose::Live { failures } => Event::LiveProbeFailed {
                            url,
                            why,
                            failed,
                            failures,
                            next,
                        },
                    });
                }
                self.deadlines.set(Deadline::Probe, self.sys.now() + next);
            }
            (Verdict::Ready, None) => {}
        }
    }

    /// The first success: `READY=1`, once; liveness probing from now on, if
    /// asked for.
    fn became_ready(&mut self, healthy: Healthy) {
        let Some(ready) = self.stop_probing() else {
            return;
        };
        let after = self.sys.now().saturating_duration_since(ready.since);
        let ready_event = |notified| Event::Ready {
            url: &ready.url.text,
            after,
            healthy: &healthy,
            probes: ready.attempts,
            notified,
        };
        // The service manager's status is the event's own words.
        let status = ready_event(None).to_string();
        let notified = self.sys.notify(&format!("READY=1\nSTATUS={status}"));
        let socket = notified.as_ref().filter(|n| n.error.is_none());
        log::emit(&ready_event(socket.map(|n| n.socket.as_str())));
        notify_failed(notified.as_ref(), "READY=1");
        self.start_liveness(self.config.live_interval);
    }

    /// `--live-failures` probes failed in a row: the stop sequence runs as
    /// for the first of `--stop-signals`.
    fn unhealthy(&mut self) {
        let Some(live) = self.stop_probing() else {
            return;
        };
        let signal = self.first_stop_signal();
        let failed: Vec<&dyn Fact> = live.failed.iter().map(|why| why as &dyn Fact).collect();
        log::emit(&Event::Unhealthy {
            url: &live.url.text,
            failed: &failed,
            signal,
        });
        let cause = StopCause::Unhealthy {
            url: live.url.text,
            failed: live.failed.iter().map(ToString::to_string).collect(),
        };
        self.begin_stop(signal, cause);
    }

    /// Ends the probing: the attempt in flight is closed, its deadlines
    /// cleared. What the probing was, if it was still on.
    fn stop_probing(&mut self) -> Option<Probing> {
        let probing = self.probing.take()?;
        self.sys.probe_cancel(Duration::ZERO);
        self.deadlines.clear(Deadline::Probe);
        self.deadlines.clear(Deadline::ReadyTimeout);
        Some(probing)
    }

    /// The container begins to stop (the stop sequence, or the child's
    /// end): the probing is over, and with `--ready-when` the service
    /// manager is told `STOPPING=1`, once, with `why` as its status. Once:
    /// the state is still `Running` when the container begins to stop, and
    /// leaves it right after (the stop is begun only from `Running`).
    pub(super) fn probing_over(&mut self, why: &dyn fmt::Display) {
        self.stop_probing();
        if self.config.ready_when.is_none() || self.state != State::Running {
            return;
        }
        let notified = self
            .sys
            .notify(&format!("STOPPING=1\nSTATUS=stopping: {why}"));
        notify_failed(notified.as_ref(), "STOPPING=1");
    }

    /// `--ready-timeout` passed before the first success: the stop
    /// sequence runs as for the first of `--stop-signals`. Probing is on
    /// only while the state is `Running` (`probing_over` ends it when the
    /// container begins to stop).
    pub(super) fn ready_timed_out(&mut self) {
        let Some(ready) = self.stop_probing() else {
            return;
        };
        let timeout = self.config.ready_timeout.unwrap_or_default();
        let signal = self.first_stop_signal();
        log::emit(&Event::ReadyTimeoutPassed {
            timeout,
            url: &ready.url.text,
            probes: ready.attempts,
            last: ready.last().map(|why| why as &dyn Fact),
            signal,
        });
        let last = ready.last().map(ToString::to_string);
        self.begin_stop(signal, StopCause::NotReady { timeout, last });
    }
}

/// A notification that could not be sent: one warning (the service
/// manager waits for it).
fn notify_failed(notified: Option<&Notified>, what: &'static str) {
    let Some(Notified {
        socket,
        error: Some(error),
    }) = notified
    else {
        return;
    };
    log::emit(&Event::NotifyFailed {
        socket,
        message: what,
        error,
    });
}
