//! When the next probe starts, and what the outcomes so far mean, for the
//! probing the supervisor does while the child runs:
//!
//! - readiness (`--ready-when`): until the first success; the first probe
//!   50 ms after the start, each failure doubling the wait up to
//!   `--ready-interval`, so that a fast service is found ready at once and
//!   a slow one costs a probe per interval;
//! - liveness (`--live-when`): for the child's whole life, one probe per
//!   `--live-interval`, and a verdict after `--live-failures` failures in
//!   a row.
//!
//! The wait runs from the end of one probe to the start of the next: a
//! probe never overlaps the next one, and between two probes nothing is
//! pending but their one deadline. The attempt itself (its socket) is the
//! supervisor's `System`'s, and so is whether one is in flight; a
//! `Probing` only counts and says when.

use std::time::{Duration, Instant};

use super::{Outcome, Unhealthy, Url};

/// The wait before the first readiness probe, and after the first failure.
pub const FIRST_WAIT: Duration = Duration::from_millis(50);

/// What the probing is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    Ready,
    /// Liveness, with the failures in a row that make the child unhealthy.
    Live {
        failures: u32,
    },
}

/// One URL being probed, while the child runs.
#[derive(Debug)]
pub struct Probing {
    pub url: Url,
    pub purpose: Purpose,
    /// The wait after the next failure; liveness keeps it at the interval.
    wait: Duration,
    interval: Duration,
    /// Attempts started so far.
    pub attempts: u32,
    /// When the probing began.
    pub since: Instant,
    /// The failures since the last success, oldest first (for liveness,
    /// at most its `failures`).
    pub failed: Vec<Unhealthy>,
}

/// What an attempt's outcome means.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Probe again after this wait.
    Again(Duration),
    /// Readiness: the first success.
    Ready,
    /// Liveness: `failures` failures in a row (`failed`).
    Unhealthy,
}

impl Probing {
    /// Readiness probing of `url`, from `now`; the wait before its first
    /// probe.
    pub fn ready(url: Url, interval: Duration, now: Instant) -> (Probing, Duration) {
        let wait = FIRST_WAIT.min(interval);
        (Probing::new(url, Purpose::Ready, wait, interval, now), wait)
    }

    /// Liveness probing of `url`, from `now`: a probe every `interval`,
    /// unhealthy after `failures` in a row.
    pub fn live(url: Url, interval: Duration, failures: u32, now: Instant) -> Probing {
        Probing::new(url, Purpose::Live { failures }, interval, interval, now)
    }

    fn new(
        url: Url,
        purpose: Purpose,
        wait: Duration,
        interval: Duration,
        since: Instant,
    ) -> Probing {
        Probing {
            url,
            purpose,
            wait,
            interval,
            attempts: 0,
            since,
            failed: Vec::new(),
        }
    }

    /// The attempt in flight ended with `outcome`.
    pub fn ended(&mut self, outcome: Outcome) -> Verdict {
        let wait = self.wait;
        match (outcome, self.purpose) {
            (Ok(_), Purpose::Ready) => Verdict::Ready,
            (Ok(_), Purpose::Live { .. }) => {
                self.failed.clear();
                Verdict::Again(wait)
            }
            (Err(why), Purpose::Ready) => {
                self.wait = wait.saturating_mul(2).min(self.interval);
                self.failed = vec![why];
                Verdict::Again(wait)
            }
            (Err(why), Purpose::Live { failures }) => {
                self.failed.push(why);
                if self.failed.len() >= failures as usize {
                    Verdict::Unhealthy
                } else {
                    Verdict::Again(wait)
                }
            }
        }
    }

    /// Why the last attempt failed, if it did.
    pub fn last(&self) -> Option<&Unhealthy> {
        self.failed.last()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{Address, Healthy};

    fn url() -> Url {
        Url::parse("tcp://127.0.0.1:1").unwrap()
    }

    fn fail() -> Outcome {
        Err(Unhealthy::Refused(Address::Unknown))
    }

    fn ok() -> Outcome {
        Ok(Healthy {
            address: Address::Unknown,
            status: None,
            age: None,
        })
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn readiness_backs_off_until_the_first_success() {
        let (mut p, first) = Probing::ready(url(), ms(300), Instant::now());
        assert_eq!(first, ms(50));
        let mut waits = Vec::new();
        for _ in 0..4 {
            let Verdict::Again(wait) = p.ended(fail()) else {
                panic!("not ready yet");
            };
            waits.push(wait);
        }
        assert_eq!(waits, [ms(50), ms(100), ms(200), ms(300)]);
        assert_eq!(p.ended(ok()), Verdict::Ready);
    }

    #[test]
    fn liveness_is_unhealthy_after_failures_in_a_row_only() {
        let mut p = Probing::live(url(), ms(1000), 3, Instant::now());
        for outcome in [fail(), fail(), ok(), fail(), fail()] {
            assert_eq!(p.ended(outcome), Verdict::Again(ms(1000)));
        }
        assert_eq!(p.ended(fail()), Verdict::Unhealthy);
        assert_eq!(p.failed.len(), 3);
    }
}
