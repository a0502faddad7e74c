//! The signal-recording test programs, `sigrec` (a line per signal, from a
//! handler) and `sigcount` (counts, from a signalfd): starting one under
//! vigil, waiting until it is ready, reading what it recorded.

use super::{test_program, wait_for_file, wait_until, Running, Vigil, TIMEOUT};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file `sigrec --out FILE` creates once its handlers are installed
/// (`sigcount --out FILE` too, once its signalfd is set up).
pub fn ready_file(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".ready");
    PathBuf::from(s)
}

/// Waits (up to TIMEOUT) until the helper recording into `out` (`sigrec` or
/// `sigcount`) has created its ready file, so that a signal sent from now on
/// is caught, not fatal; panics with `run.describe()` when it never does.
pub fn wait_ready(run: &Running, out: &Path) {
    let ready = ready_file(out);
    assert!(
        wait_for_file(&ready, TIMEOUT),
        "{} never appeared: the helper never got ready\n{}",
        ready.display(),
        run.describe()
    );
}

/// Signal numbers recorded by `sigrec` in `path` (in the order written).
pub fn read_signals(path: &Path) -> Vec<i32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Wait until `sigrec`'s record `path` contains `sig`.
pub fn wait_for_signal(path: &Path, sig: i32, timeout: Duration) -> bool {
    wait_until(timeout, || read_signals(path).contains(&sig))
}

/// Starts `v` (options already on it) with `sigrec --out OUT ARGS...` as
/// its command; returns once sigrec's handlers are in place.
pub fn spawn_sigrec(v: Vigil, out: &Path, rec_args: &[&str]) -> Running {
    let run = v
        .arg("--")
        .arg(test_program("sigrec"))
        .arg("--out")
        .arg(out)
        .args(rec_args)
        .spawn();
    wait_ready(&run, out);
    run
}
