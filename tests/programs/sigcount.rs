//! Test program: a signal counter for storms.
//!
//! Blocks every signal (raw `rt_sigprocmask`, so 32-34 too) and reads them
//! from a signalfd, so it never misses a queued realtime signal and never
//! dies of one. For each signal number it keeps how many arrived and the
//! `CLOCK_MONOTONIC` time (ns) of the last arrival, and rewrites `--out FILE`
//! (atomically, via FILE.tmp and rename) at most every 20 ms while signals
//! come in:
//!
//! ```text
//! total 12345
//! sig 10 4000 123456789012
//! sig 34 4000 123456789999
//! ```
//!
//! Once the signalfd is set up it creates `FILE.ready` (containing its pid).
//!
//! Options:
//!   --out FILE      where to write the counts (required)
//!   --die-on SIG    on SIG, write the counts, then die of SIG (default
//!                   action, so vigil sees "killed by SIG"); repeatable
//!   --max-secs N    exit 0 after N seconds whatever happens (default 300)

#[path = "support/common.rs"]
mod common;
#[path = "support/rawsig.rs"]
mod rawsig;

use common::{Args, die, now_ns, parse_signal, unknown};
use rawsig::{SIGSET_SIZE, set_disposition, set_sigmask, sig_bit};
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

const PROG: &str = "sigcount";

/// Blocks exactly `mask`, or dies.
fn set_mask(mask: u64) {
    set_sigmask(mask).unwrap_or_else(|e| die(&format!("rt_sigprocmask: {e}")));
}

struct Counts {
    count: [u64; 65],
    last: [u64; 65],
    total: u64,
}

impl Counts {
    fn write(&self, out: &str) {
        let mut s = format!("total {}\n", self.total);
        for sig in 1..=64 {
            if self.count[sig] > 0 {
                s.push_str(&format!(
                    "sig {sig} {} {}\n",
                    self.count[sig], self.last[sig]
                ));
            }
        }
        let tmp = format!("{out}.tmp");
        if std::fs::write(&tmp, s).is_ok() {
            let _ = std::fs::rename(&tmp, out);
        }
    }
}

fn main() {
    let mut out = None;
    let mut die_on = 0u64;
    let mut max_secs = 300u64;
    let mut args = Args::from_env();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => out = Some(args.value(&a)),
            "--die-on" => {
                let v = args.value(&a);
                let sig = parse_signal(&v).unwrap_or_else(|| die(&format!("bad signal {v}")));
                die_on |= sig_bit(sig);
            }
            "--max-secs" => max_secs = args.parse(&a),
            _ => unknown(&a),
        }
    }
    let out = out.unwrap_or_else(|| die("--out FILE is required"));

    set_mask(!0);
    let mask: u64 = !0;
    let fd = unsafe {
        libc::syscall(
            libc::SYS_signalfd4,
            -1 as libc::c_long,
            &mask as *const u64,
            SIGSET_SIZE,
            (libc::SFD_CLOEXEC | libc::SFD_NONBLOCK) as libc::c_long,
        )
    } as RawFd;
    if fd < 0 {
        die(&format!("signalfd: {}", std::io::Error::last_os_error()));
    }
    let mut c = Counts {
        count: [0; 65],
        last: [0; 65],
        total: 0,
    };
    c.write(&out);
    let _ = std::fs::write(format!("{out}.ready"), format!("{}\n", std::process::id()));

    let end = Instant::now() + Duration::from_secs(max_secs);
    let mut dirty = false;
    let mut last_write = Instant::now();
    const BATCH: usize = 64;
    let mut infos: [libc::signalfd_siginfo; BATCH] = unsafe { std::mem::zeroed() };
    while Instant::now() < end {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        unsafe { libc::poll(&mut pfd, 1, 20) };
        loop {
            let n = unsafe {
                libc::read(
                    fd,
                    infos.as_mut_ptr() as *mut libc::c_void,
                    std::mem::size_of_val(&infos),
                )
            };
            if n <= 0 {
                break;
            }
            let t = now_ns();
            let k = n as usize / std::mem::size_of::<libc::signalfd_siginfo>();
            for info in &infos[..k] {
                let sig = info.ssi_signo as usize;
                if (1..=64).contains(&sig) {
                    c.count[sig] += 1;
                    c.last[sig] = t;
                    c.total += 1;
                    dirty = true;
                    let sig = sig as i32;
                    if die_on & sig_bit(sig) != 0 {
                        c.write(&out);
                        let _ = set_disposition(sig, libc::SIG_DFL);
                        unsafe { libc::kill(libc::getpid(), sig) };
                        set_mask(!sig_bit(sig));
                        // Not reached when SIG's default action kills.
                        std::process::exit(128 + sig);
                    }
                }
            }
        }
        if dirty && last_write.elapsed() >= Duration::from_millis(20) {
            c.write(&out);
            dirty = false;
            last_write = Instant::now();
        }
    }
    c.write(&out);
}
