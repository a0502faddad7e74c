//! `--user` at the kernel: the set*id calls of the forked process.
//!
//! Raw system calls, not nix's or the C library's: musl's and glibc's
//! `setuid` (which nix calls) broadcast the change to every thread of the
//! process with signals, which has no business in a forked process and
//! which a raw call, affecting the calling thread alone (the only one
//! there is), does not need. They take no lock and allocate nothing, so
//! they may be made between fork and exec. The ids go as full-width
//! arguments; the kernel reads 32 bits.

use libc::{gid_t, uid_t};
use nix::errno::Errno;

use super::arch::{SYS_SETGID, SYS_SETGROUPS, SYS_SETUID};

/// `setgroups(groups)`.
pub fn set_groups(groups: &[gid_t]) -> Result<(), Errno> {
    // SAFETY: setgroups reads `groups.len()` gids from the slice, which is
    // live for the call.
    let r = unsafe { libc::syscall(SYS_SETGROUPS, groups.len(), groups.as_ptr()) };
    Errno::result(r).map(drop)
}

/// `setgid(gid)`: as root, the real, effective and saved gid.
pub fn set_gid(gid: gid_t) -> Result<(), Errno> {
    set_id(SYS_SETGID, gid)
}

/// `setuid(uid)`: as root, the real, effective and saved uid, and the
/// kernel drops the capabilities.
pub fn set_uid(uid: uid_t) -> Result<(), Errno> {
    set_id(SYS_SETUID, uid)
}

/// `setgid` or `setuid`, by its call number.
fn set_id(call: libc::c_long, id: u32) -> Result<(), Errno> {
    // SAFETY: setgid and setuid take a plain integer.
    let r = unsafe { libc::syscall(call, id as libc::c_long) };
    Errno::result(r).map(drop)
}
