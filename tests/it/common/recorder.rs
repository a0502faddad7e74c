//! The signal-recording test programs, `sigrec` (a line per signal, from a
//! handler) and `sigcount` (counts, from a signalfd), and `storm`, which
//! sends signals as fast as it can: starting a recorder under vigil,
//! waiting until it is ready, reading what it recorded.

use super::{Running, TIMEOUT, TempDir, Vigil, test_program, wait_for_file, wait_until};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
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

/// Starts vigil with `sigrec --out DIR/rec ARGS...` as the child, in `dir`,
/// and waits until its handlers (and those of a `--fork` grandchild
/// recording into DIR/rec2) are in place. Returns the run and the record
/// file.
pub fn start_rec(v: Vigil, dir: &TempDir, rec_args: &[&str]) -> (Running, PathBuf) {
    let out = dir.join("rec");
    let run = spawn_sigrec(v.cwd(dir.path()), &out, rec_args);
    if rec_args.contains(&"--fork") {
        wait_ready(&run, &dir.join("rec2"));
    }
    (run, out)
}

/// What `sigcount` wrote: per signal, (count, CLOCK_MONOTONIC ns of the last).
#[derive(Debug, Default)]
pub struct Counts {
    pub total: u64,
    pub by: HashMap<i32, (u64, u64)>,
}

impl Counts {
    pub fn read(path: &Path) -> Counts {
        let mut c = Counts::default();
        let text = std::fs::read_to_string(path).unwrap_or_default();
        for line in text.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            match w.as_slice() {
                ["total", n] => c.total = n.parse().unwrap_or(0),
                ["sig", s, n, t] => {
                    if let (Ok(s), Ok(n), Ok(t)) = (s.parse(), n.parse(), t.parse()) {
                        c.by.insert(s, (n, t));
                    }
                }
                _ => {}
            }
        }
        c
    }
    pub fn count(&self, sig: i32) -> u64 {
        self.by.get(&sig).map_or(0, |v| v.0)
    }
    pub fn last(&self, sig: i32) -> u64 {
        self.by.get(&sig).map_or(0, |v| v.1)
    }
}

/// What `storm` reported: per signal (sent, failed, ns of the last sent).
#[derive(Debug, Default, Clone)]
pub struct Storm {
    pub by: HashMap<i32, (u64, u64, u64)>,
    pub sent: u64,
    pub failed: u64,
    pub ns: u64,
}

/// Sends `count` signals, cycling through `sigs`, to `pid`, as fast as
/// `storm` can.
pub fn storm(pid: i32, count: u64, sigs: &[i32]) -> Storm {
    let list: Vec<String> = sigs.iter().map(|s| s.to_string()).collect();
    let out = Command::new(test_program("storm"))
        .arg("--pid")
        .arg(pid.to_string())
        .arg("--count")
        .arg(count.to_string())
        .arg("--signals")
        .arg(list.join(","))
        .stdin(Stdio::null())
        .output()
        .expect("run storm");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "storm failed: {:?}\n{text}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let mut s = Storm::default();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["sig", sig, "sent", n, "failed", f, "last", t] => {
                s.by.insert(
                    sig.parse().unwrap(),
                    (n.parse().unwrap(), f.parse().unwrap(), t.parse().unwrap()),
                );
            }
            ["total", "sent", n, "failed", f, "ns", ns] => {
                s.sent = n.parse().unwrap();
                s.failed = f.parse().unwrap();
                s.ns = ns.parse().unwrap();
            }
            _ => {}
        }
    }
    s
}

/// Starts `v` with the child almost every test here runs: `sigcount`,
/// counting signals into `out` and dying of SIGTERM (so vigil exits 143
/// when it is stopped); returns once the counter is ready.
pub fn start_counter(v: Vigil, out: &Path) -> Running {
    let run = v
        .arg("--")
        .arg(test_program("sigcount"))
        .arg("--out")
        .arg(out)
        .arg("--die-on")
        .arg("15")
        .spawn();
    wait_ready(&run, out);
    run
}

/// Sends `sig` to vigil and waits until the counting child has one more.
pub fn assert_forwards(run: &Running, out: &Path, sig: i32) {
    let before = Counts::read(out).count(sig);
    run.signal(sig);
    assert!(
        wait_until(TIMEOUT, || Counts::read(out).count(sig) > before),
        "signal {sig} sent to vigil did not reach the child (counts {:?})\n{}",
        Counts::read(out),
        run.describe()
    );
}
