//! Probes: is a service answering? `--probe URL` checks once and exits 0
//! (healthy) or 1 (not, with one line saying why), for a `HEALTHCHECK` in
//! an image that holds nothing but vigil and the application;
//! `--ready-when URL` runs the same probe inside the supervisor's loop
//! until it first succeeds (supervisor/ready.rs).
//!
//! A probe is one non-blocking state machine (`Attempt`: connect, send,
//! read the status line) so that the loop never waits on it; here
//! `check` drives it alone, polling its one descriptor until it is done or
//! the time is up.

mod attempt;
pub(crate) mod hosts;
pub(crate) mod http;
mod outcome;
mod schedule;
mod url;

use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollTimeout, poll};

pub use attempt::Attempt;
pub use url::Url;

use crate::log;
use crate::log::event::Event;
pub use outcome::{Address, Healthy, Outcome, Unhealthy, Waited};
pub use schedule::{Probing, Purpose, Verdict};

/// Probes `url` once, waiting at most `timeout`.
pub fn check(url: &Url, timeout: Duration) -> Outcome {
    let deadline = Instant::now() + timeout;
    let mut attempt = Attempt::new(url);
    let mut ready = true;
    loop {
        if ready && let Some(outcome) = attempt.step() {
            return outcome;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let Some((fd, events)) = attempt.waits_for().filter(|_| !left.is_zero()) else {
            return Err(attempt.timed_out(timeout));
        };
        let wait =
            PollTimeout::try_from(left.as_micros().div_ceil(1000)).unwrap_or(PollTimeout::MAX);
        ready = match poll(&mut [PollFd::new(fd, events)], wait) {
            Ok(n) => n > 0,
            Err(Errno::EINTR) => false,
            // Nothing to wait with: the step finds out what it can.
            Err(_) => true,
        };
    }
}

/// `--probe URL`, with `--probe-timeout`: checks once; 0 when healthy, 1
/// when not, with one warning saying why, at every verbosity (the line of
/// a healthy probe only at `-v`).
pub fn run(probe: &Url, timeout: Duration) -> i32 {
    let started = Instant::now();
    let url = probe.text.as_str();
    match check(probe, timeout) {
        Ok(healthy) => {
            log::emit(&Event::ProbeHealthy {
                url,
                healthy: &healthy,
                took: started.elapsed(),
            });
            0
        }
        Err(why) => {
            log::emit(&Event::ProbeUnhealthy { url, why: &why });
            1
        }
    }
}
