//! How long vigil took: from a moment the test chose to the moment vigil's
//! outermost process ended (before its output is collected), and the
//! checks on it. Lower bounds are exact (vigil must wait that long); upper
//! bounds leave seconds of slack, because these machines are small and busy.

use super::{Exit, Output, Running, TIMEOUT, no_panic, wait_until};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

// The tests share one process and run a few at a time. A test that
// measures time holds this lock shared for its whole run; one that loads
// the machine (thousands of processes, a signal storm, a fault matrix, a
// few hundred inits at once) holds it exclusively, so that it never skews
// a measurement, and two of them never run at once. Neither kind takes it
// twice.
static CPU: RwLock<()> = RwLock::new(());

/// For a test that measures time: `let _cpu = timing();` first.
pub fn timing() -> RwLockReadGuard<'static, ()> {
    CPU.read().unwrap_or_else(|e| e.into_inner())
}

/// For a test that loads the machine: `let _cpu = heavy();` first.
pub fn heavy() -> RwLockWriteGuard<'static, ()> {
    CPU.write().unwrap_or_else(|e| e.into_inner())
}

/// Now on `CLOCK_MONOTONIC`, in nanoseconds: the clock of `sigcount`'s
/// times (`Counts::last`), so that a moment of the test's and one the
/// child recorded compare.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Upper bound for something that should take about a second.
pub const ABOUT_1S_MAX: Duration = Duration::from_secs(5);

/// What "after 1 s" means in a test: a deadline of `1s` given to vigil.
pub const ONE_SECOND: Duration = Duration::from_secs(1);

/// Waits for vigil to end and returns its output and the time from `since`
/// to the moment it ended (measured before the output is collected).
pub fn wait_timed(mut run: Running, since: Instant) -> (Output, Duration) {
    wait_until(TIMEOUT, || run.try_exit().is_some());
    let took = since.elapsed();
    (run.wait(TIMEOUT), took)
}

/// Sends `sig` to vigil and waits for it to end: output and time taken.
pub fn signal_timed(run: Running, sig: i32) -> (Output, Duration) {
    let t0 = Instant::now();
    run.signal(sig);
    wait_timed(run, t0)
}

/// Stops vigil with SIGTERM: its output and how long it took to end.
pub fn timed_stop(run: Running) -> (Output, Duration) {
    signal_timed(run, libc::SIGTERM)
}

/// Stops vigil with SIGTERM where a 1 s deadline (`deadline`: "grace
/// period", "drain timeout") is what ends the stop: checks that vigil did
/// not panic, exited `code`, and waited for the deadline (0.9 s) but not
/// much longer (less than `max`).
pub fn stop_at_a_1s_deadline(run: Running, code: i32, deadline: &str, max: Duration) -> Output {
    let (out, took) = timed_stop(run);
    no_panic(&out);
    assert_eq!(out.status, Exit::Code(code), "{out}");
    assert!(
        took >= Duration::from_millis(900) && took < max,
        "stop took {took:?} with a 1s {deadline}\n{out}"
    );
    out
}

/// `took` is at least `min` and less than `max`.
pub fn assert_between(took: Duration, min: Duration, max: Duration, what: &str, out: &Output) {
    assert!(
        took >= min && took < max,
        "{what} took {took:?}, expected between {min:?} and {max:?}\n{out}"
    );
}
