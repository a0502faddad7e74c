//! Waiting for something with a bound: every wait in the tests polls with
//! a timeout, so a vigil that misbehaves fails a test instead of hanging it.

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

/// Poll `cond` every 10 ms until it is true (returns true) or `timeout`
/// passes (returns false; `cond` is evaluated one last time).
pub fn wait_until(timeout: Duration, cond: impl FnMut() -> bool) -> bool {
    wait_until_every(timeout, Duration::from_millis(10), cond)
}

/// Like `wait_until`, polling every `every` (for expensive conditions).
pub fn wait_until_every(
    timeout: Duration,
    every: Duration,
    mut cond: impl FnMut() -> bool,
) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return cond();
        }
        // The one poll interval of the tests' waits.
        thread::sleep(every);
    }
}

pub fn wait_for_file(path: &Path, timeout: Duration) -> bool {
    wait_until(timeout, || path.exists())
}

/// Wait until the file contains `needle`.
pub fn wait_for_text(path: &Path, needle: &str, timeout: Duration) -> bool {
    wait_until(timeout, || {
        std::fs::read_to_string(path)
            .map(|s| s.contains(needle))
            .unwrap_or(false)
    })
}
