//! `--user` at the kernel: the capabilities vigil holds, and the set*id
//! calls of the forked process.

use libc::{gid_t, uid_t};
use nix::errno::Errno;

use super::arch::{SYS_SETGID, SYS_SETGROUPS, SYS_SETUID};

/// vigil's effective capabilities, bit N for capability N.
pub fn effective_capabilities() -> Result<u64, Errno> {
    super::caps::get().map(|sets| sets.effective)
}

// The set*id calls below are raw system calls, not nix's or the C
// library's: musl's and glibc's `setuid` (which nix calls) broadcast the
// change to every thread of the process with signals, which has no
// business in a forked process and which a raw call, affecting the calling
// thread alone (the only one there is), does not need. They take no lock
// and allocate nothing, so they may be made between fork and exec. The
// ids go as full-width arguments; the kernel reads 32 bits.

/// `setgroups(groups)`.
pub fn set_groups(groups: &[gid_t]) -> Result<(), Errno> {
    // SAFETY: setgroups reads `groups.len()` gids from the slice, which is
    // live for the call.
    let r = unsafe { libc::syscall(SYS_SETGROUPS, groups.len(), groups.as_ptr()) };
    if r != 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// `setgid(gid)`: as root, the real, effective and saved gid.
pub fn set_gid(gid: gid_t) -> Result<(), Errno> {
    // SAFETY: setgid takes a plain integer.
    let r = unsafe { libc::syscall(SYS_SETGID, gid as libc::c_long) };
    if r != 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// `setuid(uid)`: as root, the real, effective and saved uid, and the
/// kernel drops the capabilities.
pub fn set_uid(uid: uid_t) -> Result<(), Errno> {
    // SAFETY: setuid takes a plain integer.
    let r = unsafe { libc::syscall(SYS_SETUID, uid as libc::c_long) };
    if r != 0 {
        return Err(Errno::last());
    }
    Ok(())
}
