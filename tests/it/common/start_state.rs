//! The state every process a test starts begins from: no VIGIL_*/TINI_*
//! variable the test process happened to have, and exactly the blocked and
//! ignored signals the test asks for (whatever cargo left ignored).

use super::rawsig::{self, set_sigmask, sig_bit};
use std::process::Command;

/// Keeps the variables vigil reads (VIGIL_*, TINI_*, RUST_LOG) that the
/// test process happens to have from reaching `cmd`: a test sets its own.
pub(crate) fn remove_vigil_env(cmd: &mut Command) {
    for (k, _) in std::env::vars_os() {
        let ks = k.to_string_lossy();
        if ks.starts_with("VIGIL_") || ks.starts_with("TINI_") || ks == "RUST_LOG" {
            cmd.env_remove(&k);
        }
    }
}

/// In a forked child (async-signal-safe, raw syscalls): block exactly
/// `block`, ignore exactly `ignore`, put every other ignored signal back to
/// SIG_DFL. Bit N-1 stands for signal N.
pub(crate) fn set_signal_state(block: u64, ignore: u64) -> std::io::Result<()> {
    for sig in 1..=64 {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        let mut old = rawsig::KSigaction::default();
        let _ = rawsig::rt_sigaction(sig, None, Some(&mut old));
        let want = if ignore & sig_bit(sig) != 0 {
            libc::SIG_IGN
        } else {
            libc::SIG_DFL
        };
        if old.handler == want || (old.handler != libc::SIG_IGN && want == libc::SIG_DFL) {
            continue; // handlers are reset by exec anyway
        }
        rawsig::set_disposition(sig, want)?;
    }
    set_sigmask(block)
}
