//! The first stop signal goes straight on. When a SIGTERM or SIGINT starts
//! a stop sequence that is nothing but its forward, vigil sends it the
//! moment it is read and goes back to waiting; the stop's bookkeeping (the
//! state, the report's record, the sender's name) is done at vigil's next
//! wake-up, before anything else. A child that shares vigil's CPU (a pinned
//! container, a one-CPU pod) then runs on the signal at once instead of
//! waiting for that bookkeeping, which is all cold code and data on this
//! first stop: measured, about 3 µs of a 35-45 µs first SIGTERM
//! (docs/benchmark-history.md, issue 21, third look).
//!
//! Only when putting the bookkeeping off changes nothing the user can see:
//! - the sequence begins with the forward and arms nothing (no pre-stop
//!   hook or sleep, no grace period, whose deadline must be armed before
//!   vigil waits again, no `--timeout`, no post-start hook to cancel, no
//!   stopped child to continue);
//! - the lines the stop logs are not shown (at the default verbosity they
//!   are not), and the sender need not be named from /proc, where it may
//!   be gone by the next wake-up (a sender outside the namespace has no
//!   name to read);
//! - nothing but a signal can wake vigil meanwhile (no deadline), and
//!   whatever wakes it, the catch-up comes first.
//!
//! The decision is made from what `plan` worked out at start and a few
//! fields of the supervisor, so that the path from the `read` to the `kill`
//! stays as short as a C init's.

use std::time::Instant;

use super::system::System;
use super::{Health, State, Supervisor};
use crate::cli::Config;
use crate::logging::{self, Level};
use crate::signals::{Received, Sender};

/// What the first SIGTERM and the first SIGINT are sent as, when the
/// configuration lets them go straight on (`plan`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Plan {
    sigterm: Option<i32>,
    sigint: Option<i32>,
}

/// Worked out once, from the configuration.
pub(super) fn plan(config: &Config) -> Plan {
    let straight = super::stop::only_forwards(config)
        && config.grace_period.is_none()
        && config.timeout.is_none()
        && !logging::shown(Level::Info);
    let sent_as = |signal: i32| {
        (straight && config.parent_death_signal != Some(signal))
            .then(|| config.rewrites.apply(signal))
            .flatten()
    };
    Plan {
        sigterm: sent_as(libc::SIGTERM),
        sigint: sent_as(libc::SIGINT),
    }
}

/// A stop signal sent to the child the moment it was read, whose handling
/// waits for vigil's next wake-up.
#[derive(Clone, Copy, Debug)]
pub(super) struct SentAhead {
    pub received: Received,
    /// What was sent (after `--rewrite`).
    pub sent: i32,
    /// When: the stop's time.
    pub at: Instant,
}

impl<S: System> Supervisor<S> {
    /// Sends `r` on at once if it is a first stop signal whose handling may
    /// wait (see the module's text); whether it did.
    pub(super) fn send_ahead(&mut self, r: Received) -> bool {
        let planned = match r.signal {
            libc::SIGTERM => self.plan.sigterm,
            libc::SIGINT => self.plan.sigint,
            _ => None,
        };
        let Some(sent) = planned else {
            return false;
        };
        if !matches!(self.state, State::Running)
            || !matches!(r.sender, Sender::Process { pid: 0, .. })
            || self.post_start.is_some()
            || self.child_is_stopped
            || self.health != Health::Good
        {
            return false;
        }
        let target = self.target(r.sender);
        self.sys.send(target, sent);
        let at = self.sys.now();
        self.sent_ahead = Some(SentAhead {
            received: r,
            sent,
            at,
        });
        true
    }

    /// Handles the stop signal sent ahead at the last wake-up, if any, as
    /// if it had just come: `forward` finds it sent already, and the stop
    /// takes its time from the send. It is cleared only afterwards, so
    /// that both can look it up meanwhile.
    ///
    /// Straight to `on_stop_signal`: what `on_signal` does before it
    /// (vigil's own SIGPIPE, the `-p` signal, a terminal's keys, the log
    /// line) cannot apply to a stop signal from outside that `plan` let
    /// through. (And `on_signal` keeps its one caller, the loop, which has
    /// it inline.)
    #[inline(never)]
    pub(super) fn catch_up(&mut self) {
        let Some(ahead) = self.sent_ahead else {
            return;
        };
        self.on_stop_signal(ahead.received);
        self.sent_ahead = None;
    }

    /// Whether forwarding `signal` as `sent` now is the send that
    /// `send_ahead` made already. (Outside `catch_up` nothing forwards
    /// while a signal sent ahead waits: the loop catches up first thing.)
    pub(super) fn sent_already(&self, signal: i32, sent: i32) -> bool {
        self.sent_ahead
            .is_some_and(|a| a.received.signal == signal && a.sent == sent)
    }
}
