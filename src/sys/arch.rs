//! What differs between the architectures vigil ships on, in one place:
//! the kernel's own signal structures, as the raw `rt_sigaction`,
//! `rt_sigprocmask`, `rt_sigtimedwait` and `signalfd4` system calls read and write them, and
//! which set*id system calls take 32-bit ids (at the end).
//!
//! libc's `sigaction` and `sigset_t` are the C library's, not the kernel's:
//! glibc's and musl's sets are 128 bytes, and both reorder or pad the fields
//! of `struct sigaction` on some machines. vigil talks to the kernel
//! directly (to reach signals 32-34), so it must use the kernel's layout,
//! which differs between the seven targets:
//!
//! | target           | word | `sa_restorer` | size | `sa_mask` at |
//! |------------------|------|---------------|------|--------------|
//! | x86_64, aarch64  | 64   | yes           | 32   | 24           |
//! | s390x            | 64   | yes (big-endian) | 32 | 24          |
//! | powerpc64le      | 64   | yes           | 32   | 24           |
//! | riscv64          | 64   | no            | 24   | 16           |
//! | i686, armv7      | 32   | yes           | 20   | 12           |
//!
//! Sources: the kernel's generic `struct sigaction` (handler, flags, the
//! restorer where the architecture defines `SA_RESTORER`, then the mask as
//! an array of `unsigned long`); `SA_RESTORER` is defined by the uapi
//! `asm/signal.h` of x86, arm, arm64, s390 and powerpc but not riscv
//! (checked in Debian's linux-libc-dev cross headers; powerpc's header also
//! spells out its `struct sigaction` in this order); qemu-user's `target_sigaction`
//! has the same shape. On i686 and armv7 the uapi header's own `struct
//! sigaction` is the *old* `sigaction` call's (a 32-bit mask before the
//! flags) and does not apply to `rt_sigaction`.
//!
//! The mask is an array of `unsigned long`, not a `u64`: on armv7 a `u64`
//! is 8-aligned and would put padding before it, and on a big-endian 32-bit
//! machine its halves would be swapped.
//!
//! The assertions after the structures fail the build on an architecture
//! whose layout nobody has checked.

use std::mem::{offset_of, size_of};

use libc::c_ulong;

/// The kernel's signal set is 64 bits (`_NSIG`), in `unsigned long` words.
const SIGSET_WORDS: usize = 64 / c_ulong::BITS as usize;

/// The kernel's `sigset_t`: bit N-1 (counting through the words, least
/// significant first) stands for signal N.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelSigset([c_ulong; SIGSET_WORDS]);

/// The size of the kernel's sigset in bytes, which every system call that
/// takes one wants to be told (anything else is EINVAL).
pub const SIGSET_SIZE: usize = size_of::<KernelSigset>();

impl KernelSigset {
    /// The set whose signal N is bit N-1 of `bits`.
    pub fn from_bits(bits: u64) -> KernelSigset {
        let mut words = [0; SIGSET_WORDS];
        for (i, word) in words.iter_mut().enumerate() {
            // Truncation to the word is the point: word i holds bits
            // i*W .. (i+1)*W.
            *word = (bits >> (i as u32 * c_ulong::BITS)) as c_ulong;
        }
        KernelSigset(words)
    }

    /// The inverse of `from_bits`.
    // A word is a u64 on 64-bit targets and a u32 on 32-bit ones.
    #[allow(clippy::useless_conversion)]
    pub fn bits(&self) -> u64 {
        self.0.iter().enumerate().fold(0, |acc, (i, w)| {
            acc | u64::from(*w) << (i as u32 * c_ulong::BITS)
        })
    }
}

/// The kernel's `struct sigaction`, as `rt_sigaction` takes it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelSigaction {
    pub handler: libc::sighandler_t,
    pub flags: c_ulong,
    /// Only where the architecture has `SA_RESTORER` (not riscv). vigil
    /// only sets SIG_DFL and SIG_IGN, which need none: always 0.
    #[cfg(not(target_arch = "riscv64"))]
    pub restorer: usize,
    pub mask: KernelSigset,
    /// Room the kernel never touches, for qemu-user before 10.0, which
    /// gives riscv64 the `sa_restorer` field it does not have and so
    /// reads and writes 8 bytes past the kernel's structure (Debian 12's
    /// qemu-user-static 7.2, on which the release checks run). musl pads
    /// its own copy the same way.
    #[cfg(target_arch = "riscv64")]
    pub qemu_slack: usize,
}

/// (size of the kernel's `struct sigaction`, offset of its mask) on each
/// architecture checked against the kernel's headers; see the table above.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "s390x",
    target_arch = "powerpc64"
))]
const SIGACTION_LAYOUT: (usize, usize) = (32, 24);
#[cfg(target_arch = "riscv64")]
const SIGACTION_LAYOUT: (usize, usize) = (24, 16);
#[cfg(any(target_arch = "x86", target_arch = "arm"))]
const SIGACTION_LAYOUT: (usize, usize) = (20, 12);
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "s390x",
    target_arch = "powerpc64",
    target_arch = "riscv64",
    target_arch = "x86",
    target_arch = "arm"
)))]
compile_error!(
    "the kernel's struct sigaction has not been checked on this architecture: \
     compare src/sys/arch.rs with the kernel's asm/signal.h and add it there"
);

const _: () = assert!(SIGSET_SIZE == 8, "the kernel's sigset is 64 bits");
const _: () = assert!(offset_of!(KernelSigaction, mask) == SIGACTION_LAYOUT.1);
const _: () = assert!(SIGACTION_LAYOUT.1 + SIGSET_SIZE == SIGACTION_LAYOUT.0);
#[cfg(not(target_arch = "riscv64"))]
const _: () = assert!(size_of::<KernelSigaction>() == SIGACTION_LAYOUT.0);
#[cfg(target_arch = "riscv64")]
const _: () = assert!(size_of::<KernelSigaction>() == SIGACTION_LAYOUT.0 + 8);
const _: () = assert!(offset_of!(KernelSigaction, flags) == size_of::<c_ulong>());

// The set*id system calls that take 32-bit ids. x86 and arm also have the
// 16-bit calls of their first ABI under the plain names. The architectures
// are the seven of the sigaction table above, whose check fails the build
// on any other first (and `sys::user`'s import of these after it).
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "s390x",
    target_arch = "powerpc64"
))]
pub use libc::{
    SYS_setgid as SYS_SETGID, SYS_setgroups as SYS_SETGROUPS, SYS_setuid as SYS_SETUID,
};
#[cfg(any(target_arch = "x86", target_arch = "arm"))]
pub use libc::{
    SYS_setgid32 as SYS_SETGID, SYS_setgroups32 as SYS_SETGROUPS, SYS_setuid32 as SYS_SETUID,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigset_bits_round_trip() {
        for bits in [0, 1, 1 << 31, 1 << 32, 1 << 63, !0, 0x8000_0001_0000_0002] {
            assert_eq!(KernelSigset::from_bits(bits).bits(), bits);
        }
    }

    /// The kernel accepts the structure and reads it as intended: what is
    /// set through `KernelSigaction` is what the C library's own
    /// `sigaction` reads back, and the other way round. The release checks
    /// run this under qemu-user on every architecture (scripts/qemu-check.sh).
    /// On riscv64 a qemu-user before 10.0 passes it whatever the layout
    /// (see `qemu_slack`): there the compile-time check is what counts.
    #[test]
    fn sigaction_agrees_with_the_c_library() {
        let raw = |sig: i32, new: Option<&KernelSigaction>| {
            let mut old = KernelSigaction::default();
            // SAFETY: both pointers are to live KernelSigactions (or null),
            // the size is the kernel's; SIG_DFL and SIG_IGN need no handler code.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_rt_sigaction,
                    sig,
                    new.map_or(std::ptr::null(), |n| n as *const KernelSigaction),
                    &mut old as *mut KernelSigaction,
                    SIGSET_SIZE,
                )
            };
            assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
            old
        };
        let libc_handler = |sig: i32| {
            // SAFETY: a zeroed sigaction is valid to be written into.
            let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
            // SAFETY: only reads the current action into `old`.
            assert_eq!(
                unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) },
                0
            );
            old.sa_sigaction
        };
        let sig = libc::SIGUSR2;
        let mask = KernelSigset::from_bits(1 << (libc::SIGHUP - 1) | 1 << 63);
        let ignore = KernelSigaction {
            handler: libc::SIG_IGN,
            mask,
            ..KernelSigaction::default()
        };
        let before = raw(sig, Some(&ignore));
        assert_eq!(libc_handler(sig), libc::SIG_IGN);
        let read = raw(sig, None);
        assert_eq!(read.handler, libc::SIG_IGN);
        assert_eq!(read.mask, mask);
        // SAFETY: sets SIGUSR2 back to what it was (SIG_DFL in a test run).
        unsafe { libc::signal(sig, before.handler) };
        assert_eq!(raw(sig, None).handler, before.handler);
    }
}
