//! Signals as the kernel has them: the signal mask and dispositions over
//! all 64 signals, the signalfd, and sending any signal number.
//!
//! Raw system calls, not nix's: nix's `SigSet` is the C library's
//! `sigset_t`, whose `all()` is `sigfillset`, which leaves out 32-34 (the
//! C library keeps them for its threads), and nix's `Signal` enum has no
//! realtime signals. The sets are the kernel's own (`arch`). None of these
//! allocates, so they may be made between fork and exec.

use std::mem::{offset_of, size_of};
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

/// The size of one signalfd record: a read returns whole ones.
pub const RECORD_SIZE: usize = size_of::<libc::signalfd_siginfo>();

/// What vigil reads of a signalfd record.
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

impl SignalInfo {
    /// Reads the record's fields where the kernel's `struct
    /// signalfd_siginfo` has them, in the machine's byte order.
    pub fn from_record(record: &[u8; RECORD_SIZE]) -> SignalInfo {
        let word = |offset: usize| {
            let mut bytes = [0; 4];
            if let Some(field) = record.get(offset..offset + 4) {
                bytes.copy_from_slice(field);
            }
            bytes
        };
        SignalInfo {
            signal: u32::from_ne_bytes(word(offset_of!(libc::signalfd_siginfo, ssi_signo))) as i32,
            code: i32::from_ne_bytes(word(offset_of!(libc::signalfd_siginfo, ssi_code))),
            pid: u32::from_ne_bytes(word(offset_of!(libc::signalfd_siginfo, ssi_pid))),
            uid: u32::from_ne_bytes(word(offset_of!(libc::signalfd_siginfo, ssi_uid))),
        }
    }
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

    /// A signal this thread raises at itself, read back from a signalfd:
    /// the kernel's record is read at the right offsets (on a big-endian
    /// machine too, under scripts/qemu-check.sh).
    #[test]
    fn signalfd_record_round_trip() {
        let usr1 = 1u64 << (libc::SIGUSR1 - 1);
        // Blocked in this thread only (rt_sigprocmask is per thread), so
        // that the signal waits for the read instead of ending the tests.
        let before = set_mask(usr1).unwrap();
        set_mask(before | usr1).unwrap();
        let fd = signalfd(usr1).unwrap();
        nix::sys::signal::raise(nix::sys::signal::Signal::SIGUSR1).unwrap();
        let mut record = [0u8; RECORD_SIZE];
        let n = nix::unistd::read(&fd, &mut record).unwrap();
        set_mask(before).unwrap();
        assert_eq!(n, RECORD_SIZE);
        let info = SignalInfo::from_record(&record);
        assert_eq!(info.signal, libc::SIGUSR1);
        assert!(info.code <= 0, "a process's signal: {info:?}");
        assert_eq!(info.pid, std::process::id());
        assert_eq!(info.uid, nix::unistd::getuid().as_raw());
    }
}
