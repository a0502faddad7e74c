//! Every deadline vigil keeps, in one table. Handlers set them; the loop
//! alone clears them, as it hands each one that has passed to its handler
//! (`Supervisor::on_time`), so a handler cannot forget to and leave the loop
//! waking up for it over and over.

use std::fmt;
use std::time::Instant;

/// Every kind of deadline, in the order they are handled when several
/// have passed at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deadline {
    /// `--grace-period` after the first stop signal: SIGKILL to everything.
    Grace,
    /// `--post-start-timeout`: the hook has failed.
    PostStart,
    /// The child still runs half the grace period (else 5 s) after the stop
    /// began: say what still runs, before an engine's SIGKILL leaves no
    /// time to.
    StillRunning,
    /// `--pre-stop-timeout`: the hook is killed and the stop goes on.
    PreStopTimeout,
    /// `--pre-stop-sleep` is over: the stop sequence goes on.
    PreStopSleep,
    /// `--drain-timeout` is over: SIGKILL to what is left.
    Drain,
    /// The drain looks again for processes that are no children of vigil's,
    /// and SIGKILLs again what it is killing.
    DrainCheck,
    /// What got SIGKILL has not gone for this long: vigil stops waiting.
    KillWait,
    /// `--timeout` is over: the stop sequence starts as for SIGTERM.
    Timeout,
    /// `--ready-when`, `--live-when`: the next probe is due, or the one in
    /// flight has run out of time.
    Probe,
    /// `--ready-timeout` is over, and the service is not ready: the stop
    /// sequence starts as for SIGTERM.
    ReadyTimeout,
}

const ALL: [Deadline; 11] = [
    Deadline::Grace,
    Deadline::PostStart,
    Deadline::StillRunning,
    Deadline::PreStopTimeout,
    Deadline::PreStopSleep,
    Deadline::Drain,
    Deadline::DrainCheck,
    Deadline::KillWait,
    Deadline::Timeout,
    Deadline::Probe,
    Deadline::ReadyTimeout,
];

impl fmt::Display for Deadline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Deadline::Grace => "grace period",
            Deadline::PostStart => "post-start timeout",
            Deadline::StillRunning => "still-running notice",
            Deadline::PreStopTimeout => "pre-stop timeout",
            Deadline::PreStopSleep => "pre-stop sleep",
            Deadline::Drain => "drain timeout",
            Deadline::DrainCheck => "drain check",
            Deadline::KillWait => "wait after SIGKILL",
            Deadline::Timeout => "--timeout",
            Deadline::Probe => "probe",
            Deadline::ReadyTimeout => "--ready-timeout",
        })
    }
}

/// The pending deadlines: at most one of each kind.
#[derive(Debug, Default)]
pub struct Deadlines {
    /// Each deadline's place is its number, which is its place in `ALL` (a
    /// test says so).
    at: [Option<Instant>; ALL.len()],
    /// Set by `take_due`, in the handling order: the kinds handled in this
    /// turn of the loop, so that one that comes due again at once is caught
    /// rather than handled in a loop (see `take_due`).
    handled: [bool; ALL.len()],
}

/// What `take_due` found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due {
    /// This deadline has passed; it is cleared now.
    Passed(Deadline),
    /// This one was handled in this turn already and is due again: its
    /// handler set it again without moving it into the future. Cleared.
    Stuck(Deadline),
}

impl Deadlines {
    pub fn set(&mut self, deadline: Deadline, at: Instant) {
        if let Some(slot) = self.at.get_mut(deadline as usize) {
            *slot = Some(at);
        }
    }

    pub fn clear(&mut self, deadline: Deadline) {
        if let Some(slot) = self.at.get_mut(deadline as usize) {
            *slot = None;
        }
    }

    pub fn get(&self, deadline: Deadline) -> Option<Instant> {
        self.at.get(deadline as usize).copied().flatten()
    }

    /// The earliest pending deadline; `None` means none is pending.
    pub fn next(&self) -> Option<Instant> {
        let at = self.at.iter().flatten();
        at.fold(None, |next: Option<&Instant>, at| {
            Some(next.map_or(at, |next| next.min(at)))
        })
        .copied()
    }

    /// Starts a turn of the loop: nothing has been handled in it yet.
    pub fn new_turn(&mut self) {
        self.handled = [false; ALL.len()];
    }

    /// The first deadline, in handling order, that has passed at `now`,
    /// cleared from the table.
    pub fn take_due(&mut self, now: Instant) -> Option<Due> {
        let i = self
            .at
            .iter()
            .position(|at| at.is_some_and(|at| at <= now))?;
        let deadline = *ALL.get(i)?;
        self.at.get_mut(i)?.take();
        let handled = self.handled.get_mut(i)?;
        if *handled {
            return Some(Due::Stuck(deadline));
        }
        *handled = true;
        Some(Due::Passed(deadline))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn each_deadline_has_its_own_slot_in_handling_order() {
        for (i, deadline) in ALL.iter().enumerate() {
            assert_eq!(*deadline as usize, i, "{deadline}");
        }
    }

    #[test]
    fn passed_deadlines_come_in_handling_order_and_are_cleared() {
        let now = Instant::now();
        let mut d = Deadlines::default();
        d.set(Deadline::Drain, now);
        d.set(Deadline::Grace, now - Duration::from_millis(5));
        d.set(Deadline::Timeout, now + Duration::from_secs(1));
        assert_eq!(d.next(), Some(now - Duration::from_millis(5)));
        d.new_turn();
        assert_eq!(d.take_due(now), Some(Due::Passed(Deadline::Grace)));
        assert_eq!(d.take_due(now), Some(Due::Passed(Deadline::Drain)));
        assert_eq!(d.take_due(now), None);
        assert_eq!(d.next(), Some(now + Duration::from_secs(1)));
    }

    #[test]
    fn a_deadline_set_again_in_the_past_is_stuck() {
        let now = Instant::now();
        let mut d = Deadlines::default();
        d.new_turn();
        d.set(Deadline::Drain, now);
        assert_eq!(d.take_due(now), Some(Due::Passed(Deadline::Drain)));
        d.set(Deadline::Drain, now);
        assert_eq!(d.take_due(now), Some(Due::Stuck(Deadline::Drain)));
        assert_eq!(d.get(Deadline::Drain), None);
        // In the next turn, the same deadline is news again.
        d.new_turn();
        d.set(Deadline::Drain, now);
        assert_eq!(d.take_due(now), Some(Due::Passed(Deadline::Drain)));
    }
}
