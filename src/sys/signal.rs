//! Signals as the kernel has them: the signal mask and dispositions over
//! all 64 signals, the signalfd, taking a blocked signal, and sending any
//! signal number.
//!
//! Raw system calls, not nix's: nix's `SigSet` is the C library's
//! `sigset_t`, whose `all()` is `sigfillset`, which leaves out 32-34 (the
//! C library keeps them for its threads), and nix's `Signal` enum has no
//! realtime signals. The sets are the kernel's own (`arch`). None of these
//! allocates, so they may be made between fork and exec.

use std::mem::MaybeUninit;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;

use super::arch::{KernelSigaction, KernelSigset, SIGSET_SIZE};

/// Sets the calling thread's signal mask to `bits` (bit N-1 for signal N)
/// and returns the one it had.
pub fn set_mask(bits: u64) -> Result<u64, Errno> {
    let new = KernelSigset::from_bits(bits);
    let mut old = KernelSigset::default();
    // SAFETY: rt_sigprocmask reads SIGSET_SIZE bytes from `new` and writes
    // as many into `old`; both are live kernel sigsets of exactly that size.
    let r = unsafe {
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &new as *const KernelSigset,
            &mut old as *mut KernelSigset,
            SIGSET_SIZE,
        )
    };
    Errno::result(r).map(|_| old.bits())
}

/// A signal disposition vigil sets: the default action or ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disposition {
    Default,
    Ignore,
}

/// Sets `signal` to SIG_DFL or SIG_IGN, 32-34 included (the C library's
/// `sigaction` refuses those), and tells whether it was ignored before.
pub fn set_disposition(signal: i32, disposition: Disposition) -> Result<Disposition, Errno> {
    let action = KernelSigaction {
        handler: match disposition {
            Disposition::Default => libc::SIG_DFL,
            Disposition::Ignore => libc::SIG_IGN,
        },
        ..KernelSigaction::default()
    };
    let mut old = KernelSigaction::default();
    // SAFETY: `action` is a fully initialised kernel sigaction and `old` has
    // room for one; both live for the call. SIG_DFL and SIG_IGN need no
    // restorer.
    let r = unsafe {
        libc::syscall(
            libc::SYS_rt_sigaction,
            signal,
            &action as *const KernelSigaction,
            &mut old as *mut KernelSigaction,
            SIGSET_SIZE,
        )
    };
    Errno::result(r)?;
    Ok(if old.handler == libc::SIG_IGN {
        Disposition::Ignore
    } else {
        Disposition::Default
    })
}

/// A new (blocking, close-on-exec) signalfd for the signals in `bits`.
pub fn signalfd(bits: u64) -> Result<OwnedFd, Errno> {
    let mask = KernelSigset::from_bits(bits);
    // SAFETY: signalfd4 reads SIGSET_SIZE bytes from `mask`, a live kernel
    // sigset; -1 asks for a new descriptor.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_signalfd4,
            -1,
            &mask as *const KernelSigset,
            SIGSET_SIZE,
            libc::SFD_CLOEXEC,
        )
    };
    let fd = Errno::result(fd)?;
    // SAFETY: `fd` is a fresh descriptor the kernel just made, owned by
    // nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Who sent a signal and why, as vigil reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignalInfo {
    pub signal: i32,
    /// `si_code`: 0 or less for a process's kill, sigqueue or tgkill,
    /// above 0 for the kernel's own signals.
    pub code: i32,
    /// The sender's pid, 0 for a process outside vigil's PID namespace.
    pub pid: u32,
    pub uid: u32,
}

/// Waits up to `timeout` (without one, for as long as it takes) for one
/// of the blocked signals in `bits`, and takes it off the pending set:
/// what the signalfd's `read` would have returned, in one system call
/// that also bounds the wait. `None`: the time ran out, or the wait was
/// interrupted.
pub fn wait(bits: u64, timeout: Option<std::time::Duration>) -> Result<Option<SignalInfo>, Errno> {
    let set = KernelSigset::from_bits(bits);
    // A wait longer than a long's seconds is cut to it, and comes round
    // again.
    let limit = timeout.map(|t| KernelTimespec {
        sec: libc::c_long::try_from(t.as_secs()).unwrap_or(libc::c_long::MAX),
        nsec: t.subsec_nanos() as libc::c_long,
    });
    let mut info = MaybeUninit::<libc::siginfo_t>::uninit();
    // SAFETY: the set is a live kernel sigset of SIGSET_SIZE bytes; `info`
    // has room for the kernel's 128-byte siginfo; the timeout, when there
    // is one, is a live timespec of the kernel's layout for this call, else
    // null to wait without a limit.
    let r = unsafe {
        libc::syscall(
            libc::SYS_rt_sigtimedwait,
            &set as *const KernelSigset,
            info.as_mut_ptr(),
            limit
                .as_ref()
                .map_or(std::ptr::null(), |l| l as *const KernelTimespec),
            SIGSET_SIZE,
        )
    };
    match Errno::result(r) {
        Ok(_) => {}
        Err(Errno::EAGAIN | Errno::EINTR) => return Ok(None),
        Err(e) => return Err(e),
    }
    // SAFETY: a successful call filled the whole siginfo. The sender's pid
    // and uid are read from the `kill` layout of its union, which is where
    // a process's kill, sigqueue or tgkill puts them; for the kernel's own
    // signals (code above 0) they are read as plain numbers and not used.
    Ok(Some(unsafe {
        let info = info.assume_init();
        SignalInfo {
            signal: info.si_signo,
            code: info.si_code,
            pid: info.si_pid() as u32,
            uid: info.si_uid(),
        }
    }))
}

/// The timespec `rt_sigtimedwait` takes under the number the C library
/// calls `SYS_rt_sigtimedwait`: two longs on every target, whatever the C
/// library's own `time_t` (`__kernel_timespec` on the 64-bit ones, the
/// 32-bit `old_timespec32` on the others, which is plenty for a wait).
#[repr(C)]
struct KernelTimespec {
    sec: libc::c_long,
    nsec: libc::c_long,
}

/// `kill(pid, signal)` with any signal number, the realtime ones
/// included. The pid is passed as it is: -1 and negative group ids mean
/// what they mean to the kernel.
///
/// Every forwarded signal is one of these: the error check is written out,
/// as the size-optimised build calls nix's `Errno::result` rather than
/// inlining it.
pub fn kill(pid: i32, signal: i32) -> Result<(), Errno> {
    // SAFETY: kill has no memory arguments; any pid and signal number is
    // safe to pass (a bad one is EINVAL or ESRCH).
    if unsafe { libc::kill(pid, signal) } == 0 {
        Ok(())
    } else {
        Err(Errno::last())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A signal this thread raises at itself, taken by `wait`: the
    /// kernel's siginfo is read at the right places (on a big-endian
    /// machine too, under scripts/qemu-check.sh), and a wait with nothing
    /// pending ends when its time is up.
    #[test]
    fn wait_takes_a_raised_signal_and_times_out() {
        let usr1 = 1u64 << (libc::SIGUSR1 - 1);
        // Blocked in this thread only (rt_sigprocmask is per thread), so
        // that the signal waits to be taken instead of ending the tests.
        let before = set_mask(usr1).unwrap();
        set_mask(before | usr1).unwrap();
        nix::sys::signal::raise(nix::sys::signal::Signal::SIGUSR1).unwrap();
        let taken = wait(usr1, None);
        let started = std::time::Instant::now();
        let nothing = wait(usr1, Some(std::time::Duration::from_millis(20)));
        let waited = started.elapsed();
        set_mask(before).unwrap();
        let info = taken.unwrap().expect("the raised signal");
        assert_eq!(info.signal, libc::SIGUSR1);
        assert!(info.code <= 0, "a process's signal: {info:?}");
        assert_eq!(info.pid, std::process::id());
        assert_eq!(info.uid, nix::unistd::getuid().as_raw());
        assert_eq!(nothing, Ok(None));
        assert!(waited >= std::time::Duration::from_millis(20), "{waited:?}");
    }
}
