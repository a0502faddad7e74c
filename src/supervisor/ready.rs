//! `--ready-when`: the child's service is probed, inside the loop, until
//! it first answers; then `READY=1` goes to the service manager once, and
//! the probing is over: its socket is closed and its deadlines cleared, so
//! that an idle vigil is never woken again. `STOPPING=1` follows when the
//! container begins to stop. Not ready by `--ready-timeout`, the stop
//! sequence runs as for SIGTERM.
//!
//! A probe is one `Attempt` (probe/) held by the `System`: its socket joins
//! the loop's wait (`Woken::Probe`), and one deadline, `ReadyProbe`, is
//! either when the next attempt starts or when the one in flight runs out
//! of time.

use std::fmt;
use std::time::{Duration, Instant};

use super::deadlines::Deadline;
use super::system::{Notified, System};
use super::{State, Supervisor};
use crate::log;
use crate::log::event::{Event, Fact};
use crate::log::facts::stop::StopCause;
use crate::probe::{Address, Healthy, Outcome, Unhealthy, Url, Waited};

/// The wait before the first probe, and after the first failure: each
/// failure doubles it, up to `--ready-interval`. A service that starts in
/// a tenth of a second is found ready within about that, and one that
/// takes a minute costs a probe per interval.
pub const FIRST_WAIT: Duration = Duration::from_millis(50);

/// The probing, while the service is not ready yet.
#[derive(Debug)]
pub(super) struct Readiness {
    url: Url,
    /// When the child started.
    since: Instant,
    /// An attempt is in flight (in the `System`); `ReadyProbe` is its
    /// timeout. Otherwise `ReadyProbe` is when the next one starts.
    in_flight: bool,
    /// The wait after the next failure.
    wait: Duration,
    /// Why the last attempt failed.
    pub(super) last: Option<Unhealthy>,
    attempts: u32,
}

impl<S: System> Supervisor<S> {
    /// Starts probing, with the child: the first attempt shortly, and
    /// `--ready-timeout`.
    pub(super) fn start_readiness(&mut self) {
        let Some(url) = self.config.ready_when.clone() else {
            return;
        };
        let now = self.sys.now();
        let wait = FIRST_WAIT.min(self.config.ready_interval);
        self.deadlines.set(Deadline::ReadyProbe, now + wait);
        if let Some(timeout) = self.config.ready_timeout {
            self.deadlines.set(Deadline::ReadyTimeout, now + timeout);
        }
        self.ready = Some(Readiness {
            url,
            since: now,
            in_flight: false,
            wait,
            last: None,
            attempts: 0,
        });
    }

    /// `ReadyProbe`: the next attempt is due, or the one in flight has run
    /// out of time.
    pub(super) fn ready_probe_due(&mut self) {
        let timeout = self.config.probe_timeout;
        let Some(ready) = &mut self.ready else {
            return;
        };
        if ready.in_flight {
            let why = self
                .sys
                .probe_cancel(timeout)
                .unwrap_or(Unhealthy::TimedOut {
                    after: timeout,
                    waited: Waited::Answer(Address::Unknown),
                });
            self.probe_done(Err(why));
            return;
        }
        ready.attempts += 1;
        match self.sys.probe_start(&ready.url) {
            Some(outcome) => self.probe_done(outcome),
            None => {
                ready.in_flight = true;
                let at = self.sys.now() + timeout;
                self.deadlines.set(Deadline::ReadyProbe, at);
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
        let interval = self.config.ready_interval;
        let now = self.sys.now();
        let Some(ready) = &mut self.ready else {
            return;
        };
        ready.in_flight = false;
        let why = match outcome {
            Ok(healthy) => return self.became_ready(healthy),
            Err(why) => why,
        };
        let wait = ready.wait;
        log::emit(Event::NotReady {
            url: &ready.url.text,
            why: &why,
            next: wait,
        });
        self.deadlines.set(Deadline::ReadyProbe, now + wait);
        ready.wait = wait.saturating_mul(2).min(interval);
        ready.last = Some(why);
    }

    /// The first success: `READY=1`, once, and no more probing.
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
        log::emit(ready_event(socket.map(|n| n.socket.as_str())));
        notify_failed(notified.as_ref(), "READY=1");
    }

    /// Ends the probing: the attempt in flight is closed, its deadlines
    /// cleared. What the probing was, if it was still on.
    fn stop_probing(&mut self) -> Option<Readiness> {
        let ready = self.ready.take()?;
        if ready.in_flight {
            self.sys.probe_cancel(Duration::ZERO);
        }
        self.deadlines.clear(Deadline::ReadyProbe);
        self.deadlines.clear(Deadline::ReadyTimeout);
        Some(ready)
    }

    /// The container begins to stop (the stop sequence, or the child's
    /// end): the probing is over, and with `--ready-when` the service
    /// manager is told `STOPPING=1`, once, with `why` as its status.
    pub(super) fn readiness_over(&mut self, why: &dyn fmt::Display) {
        self.stop_probing();
        if self.config.ready_when.is_none() || self.stopping_said {
            return;
        }
        self.stopping_said = true;
        let notified = self
            .sys
            .notify(&format!("STOPPING=1\nSTATUS=stopping: {why}"));
        notify_failed(notified.as_ref(), "STOPPING=1");
    }

    /// `--ready-timeout` passed before the first success: the stop
    /// sequence runs as for SIGTERM.
    pub(super) fn ready_timed_out(&mut self) {
        if self.state != State::Running {
            return;
        }
        let Some(ready) = self.stop_probing() else {
            return;
        };
        let timeout = self.config.ready_timeout.unwrap_or_default();
        let signal = self.first_stop_signal();
        log::emit(Event::ReadyTimeoutPassed {
            timeout,
            url: &ready.url.text,
            probes: ready.attempts,
            last: ready.last.as_ref().map(|why| why as &dyn Fact),
            signal,
        });
        let last = ready.last.as_ref().map(ToString::to_string);
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
    log::emit(Event::NotifyFailed {
        socket,
        message: what,
        error,
    });
}
