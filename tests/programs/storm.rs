//! Test program: a signal storm.
//!
//! Sends `--count N` signals to `--pid P` with kill(2), as fast as it can,
//! cycling through `--signals LIST` (comma separated numbers). Prints, on
//! stdout (or `--out FILE`), one line per signal and a summary:
//!
//! ```text
//! sig 10 sent 1000 failed 0 last 123456789012
//! total sent 6000 failed 0 ns 81234567
//! ```
//!
//! `last` is `CLOCK_MONOTONIC` (ns) read just before the last successful
//! kill() of that signal: a receiver that records its arrival times on the
//! same clock (see `sigcount`) can tell whether that last one arrived.
//! `failed` counts kill() errors (e.g. EAGAIN); the first error is printed
//! on stderr.
//!
//! Options:
//!   --pid P          target (required)
//!   --count N        signals to send in all (default 1000)
//!   --signals LIST   default 1,10,12,28,34,40 (HUP USR1 USR2 WINCH RTMIN RTMIN+6)
//!   --out FILE       write the lines there instead of stdout

#[path = "support/common.rs"]
mod common;

use common::{Args, die, now_ns, parse_signal, unknown};

const PROG: &str = "storm";

fn main() {
    let mut pid = 0i32;
    let mut count = 1000u64;
    let mut signals: Vec<i32> = vec![1, 10, 12, 28, 34, 40];
    let mut out = None;
    let mut args = Args::from_env();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--pid" => pid = args.parse(&a),
            "--count" => count = args.parse(&a),
            "--signals" => {
                signals = args
                    .value(&a)
                    .split(',')
                    .map(|s| {
                        parse_signal(s.trim()).unwrap_or_else(|| die(&format!("bad signal {s}")))
                    })
                    .collect()
            }
            "--out" => out = Some(args.value(&a)),
            _ => unknown(&a),
        }
    }
    if pid <= 0 {
        die("--pid P is required (and must be > 0)");
    }
    if signals.is_empty() {
        die("--signals is empty");
    }
    let mut sent = [0u64; 65];
    let mut failed = [0u64; 65];
    let mut last = [0u64; 65];
    let mut first_error: Option<String> = None;
    let start = now_ns();
    for i in 0..count {
        let sig = signals[(i % signals.len() as u64) as usize];
        let t = now_ns();
        if unsafe { libc::kill(pid, sig) } == 0 {
            sent[sig as usize] += 1;
            last[sig as usize] = t;
        } else {
            failed[sig as usize] += 1;
            if first_error.is_none() {
                let e = std::io::Error::last_os_error();
                first_error = Some(format!("kill({pid}, {sig}): {e}"));
                if e.raw_os_error() == Some(libc::ESRCH) {
                    break;
                }
            }
        }
    }
    let elapsed = now_ns() - start;
    let mut s = String::new();
    let mut seen = Vec::new();
    for &sig in &signals {
        if seen.contains(&sig) {
            continue;
        }
        seen.push(sig);
        let k = sig as usize;
        s.push_str(&format!(
            "sig {sig} sent {} failed {} last {}\n",
            sent[k], failed[k], last[k]
        ));
    }
    s.push_str(&format!(
        "total sent {} failed {} ns {elapsed}\n",
        sent.iter().sum::<u64>(),
        failed.iter().sum::<u64>()
    ));
    if let Some(e) = first_error {
        eprintln!("storm: first error: {e}");
    }
    match out {
        Some(f) => std::fs::write(&f, s).unwrap_or_else(|e| die(&format!("{f}: {e}"))),
        None => print!("{s}"),
    }
}
