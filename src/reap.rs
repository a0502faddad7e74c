//! Reaping: collect every child that has changed state.
//!
//! SIGCHLDs coalesce: one signal may stand for a thousand exits, or for none
//! that is still pending. So on every SIGCHLD vigil calls `waitpid(-1,
//! WNOHANG)` until the kernel says there is nothing more, and recognises its
//! own child among whatever comes out (catatonit once hung forever by waiting
//! for the child's SIGCHLD specifically).
//!
//! The raw `waitpid` is used rather than nix's (`sys::process::wait_any`):
//! nix turns a status it cannot name (death by a realtime signal) into an
//! error.

use nix::errno::Errno;
use nix::sys::wait::{Id, WaitPidFlag, waitid};
use nix::unistd::Pid;

use crate::log;
use crate::log::event::Event;
use crate::log::facts::{Ending, Signal};
use crate::sys::process::wait_any;

/// One state change reported by `waitpid`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The process is gone and reaped.
    Ended(Pid, Ending),
    /// The process was stopped, by this signal: SIGSTOP, or SIGTSTP,
    /// SIGTTIN, SIGTTOU from the terminal.
    Stopped(Pid, Signal),
}

/// The result of one `waitpid` round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    Changed(Change),
    /// Children remain, but none has anything to report.
    Nothing,
    /// vigil has no children left at all.
    NoChildren,
}

/// Asks the kernel for one more state change, without blocking. EINTR is
/// retried; any error other than ECHILD is logged and treated as "nothing
/// now" so that the next SIGCHLD tries again: vigil never gives up reaping.
///
/// Stopped children are reported too: Ctrl-Z either stops vigil along with
/// its child (a job-control shell above vigil can resume both) or is undone
/// (nobody could resume the child).
///
/// Inlined into each caller, pause mode's `all_ended` too: the
/// supervisor's loop reaps every orphan through it, and a call per orphan
/// is a cost that path need not pay.
#[inline(always)]
pub fn next() -> Next {
    loop {
        let (pid, status) = match wait_any() {
            Ok(Some(changed)) => changed,
            Ok(None) => return Next::Nothing,
            Err(Errno::EINTR) => continue,
            Err(Errno::ECHILD) => return Next::NoChildren,
            Err(e) => {
                log::emit(&Event::WaitpidFailed { error: e.desc() });
                return Next::Nothing;
            }
        };
        let pid = Pid::from_raw(pid);
        return Next::Changed(if libc::WIFSTOPPED(status) {
            Change::Stopped(pid, Signal(libc::WSTOPSIG(status)))
        } else if libc::WIFSIGNALED(status) {
            let ending = Ending::Killed {
                signal: Signal(libc::WTERMSIG(status)),
                core_dumped: libc::WCOREDUMP(status),
            };
            Change::Ended(pid, ending)
        } else {
            Change::Ended(pid, Ending::Exited(libc::WEXITSTATUS(status)))
        });
    }
}

/// Reaps every child that has ended, without blocking, and hands each to
/// `ended`: pause mode's reaping, which has no child of its own to tell
/// apart and leaves a stopped process as it is. Errors as in `next`.
pub fn all_ended(mut ended: impl FnMut(Pid, Ending)) {
    loop {
        match next() {
            Next::Changed(Change::Ended(pid, ending)) => ended(pid, ending),
            Next::Changed(Change::Stopped(..)) => {}
            Next::Nothing | Next::NoChildren => return,
        }
    }
}

/// Whether vigil has any child left, without reaping anything: lets vigil
/// exit at once, without listing /proc, when the child left nothing behind.
pub fn any_children() -> bool {
    // WNOWAIT leaves any state change in place for the reaping loop.
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    loop {
        match waitid(Id::All, flags) {
            Err(Errno::EINTR) => continue,
            Err(Errno::ECHILD) => return false,
            // A child, changed or not. An error other than those (nix's
            // EINVAL for a child a realtime signal killed, which its
            // `WaitStatus` cannot name) is unsure: assume there are, and
            // let the reaping loop find out.
            Ok(_) | Err(_) => return true,
        }
    }
}
