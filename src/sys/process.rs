//! Processes: the reaping `waitpid`, and the parent death signal.

use nix::errno::Errno;

/// `waitpid(-1, WNOHANG | WUNTRACED)`: one child that ended (reaped) or
/// stopped, its pid and its status as `waitpid` gives it (read with
/// libc's `WIFSTOPPED` and the like); `None` when there are children but
/// none has changed.
///
/// Raw, not nix's `waitpid`: nix names the signal of a `WaitStatus` with
/// its `Signal` enum, which has no realtime signals, so a child killed by
/// one would be reaped and its status lost to an EINVAL.
///
/// Always inlined: it is on the path of every orphan reaped, where a call
/// (its result returned through memory) costs a quarter more per orphan,
/// and it has two callers (the supervisor's reaping and pause mode's). For
/// the same reason its error check is written out: the size-optimised
/// build calls nix's `Errno::result` rather than inlining it.
#[inline(always)]
pub fn wait_any() -> Result<Option<(i32, libc::c_int)>, Errno> {
    let mut status: libc::c_int = 0;
    // SAFETY: waitpid writes one c_int into `status`, which is live.
    let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG | libc::WUNTRACED) };
    if pid < 0 {
        return Err(Errno::last());
    }
    // 0: children, none of them changed.
    Ok((pid > 0).then_some((pid, status)))
}

/// `prctl(PR_SET_PDEATHSIG, signal)`: the kernel sends `signal` when the
/// parent dies. Raw, not nix's `set_pdeathsig`, which takes its `Signal`
/// enum and so no realtime signal.
pub fn set_parent_death_signal(signal: i32) -> Result<(), Errno> {
    // SAFETY: prctl with integer arguments only.
    let r = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong, 0, 0, 0) };
    Errno::result(r).map(drop)
}
