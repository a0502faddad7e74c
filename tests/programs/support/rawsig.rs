//! Raw signal syscalls, shared by the test programs and by the test harness
//! (tests/it/common/ includes this file too).
//!
//! The kernel's own `rt_sigaction` and `rt_sigprocmask`: they reach signals
//! 32-34, which the C library's wrappers refuse, and they are
//! async-signal-safe (fit for a signal handler, or between fork and exec).
#![allow(dead_code)]

/// The kernel's `struct sigaction` on x86-64 / aarch64 (no SA_RESTORER there,
/// but the layout with the restorer field is the generic one).
#[repr(C)]
#[derive(Default, Clone, Copy)]
pub struct KSigaction {
    pub handler: usize,
    pub flags: u64,
    pub restorer: usize,
    pub mask: u64,
}

/// The size of the kernel's signal set (64 signals), which every syscall
/// taking one wants to be told.
pub const SIGSET_SIZE: libc::c_long = 8;

/// The bit of signal `sig` in a signal set (bit N-1 stands for signal N).
pub fn sig_bit(sig: i32) -> u64 {
    1u64 << (sig - 1)
}

/// `rt_sigaction(sig, new, old)`: installs `new` unless it is None, and
/// reads the action it replaces into `old` unless that is None.
pub fn rt_sigaction(
    sig: i32,
    new: Option<&KSigaction>,
    old: Option<&mut KSigaction>,
) -> std::io::Result<()> {
    let newp = new.map_or(std::ptr::null(), |n| n as *const KSigaction);
    let oldp = old.map_or(std::ptr::null_mut(), |o| o as *mut KSigaction);
    let r = unsafe {
        libc::syscall(
            libc::SYS_rt_sigaction,
            sig as libc::c_long,
            newp,
            oldp,
            SIGSET_SIZE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Sets the action of `sig` to `handler` (SIG_DFL or SIG_IGN), with no
/// flags and an empty mask.
pub fn set_disposition(sig: i32, handler: libc::sighandler_t) -> std::io::Result<()> {
    let act = KSigaction {
        handler,
        ..KSigaction::default()
    };
    rt_sigaction(sig, Some(&act), None)
}

/// Blocks exactly the signals in `mask` (see `sig_bit`).
pub fn set_sigmask(mask: u64) -> std::io::Result<()> {
    let r = unsafe {
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK as libc::c_long,
            &mask as *const u64,
            std::ptr::null_mut::<u64>(),
            SIGSET_SIZE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
