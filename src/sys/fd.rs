//! Descriptors: the standard ones, and how much a pipe or a terminal has
//! yet to pass on.

use std::os::fd::{AsRawFd, BorrowedFd};

use nix::errno::Errno;
use nix::sys::stat::fstat;

/// Descriptor 0, borrowed as std's own `Stdin::as_fd` borrows it, but
/// without `std::io::stdin()`, whose first use sets up std's buffered
/// handle.
pub fn stdin() -> BorrowedFd<'static> {
    standard(libc::STDIN_FILENO)
}

/// Descriptor 1, borrowed, without `std::io::stdout()` (see `stdin`).
pub fn stdout() -> BorrowedFd<'static> {
    standard(libc::STDOUT_FILENO)
}

/// Descriptor 2, borrowed.
pub fn stderr() -> BorrowedFd<'static> {
    standard(libc::STDERR_FILENO)
}

fn standard(fd: libc::c_int) -> BorrowedFd<'static> {
    // SAFETY: the borrow only ever reaches system calls, which take the
    // number as it is, and nothing closes or owns it through this. With
    // nothing open there (vigil was started with it closed), they fail with
    // EBADF; when a file vigil opened took the free number (a hook's
    // /dev/null while vigil's stdin is closed), they act on that file, as
    // the bare number would. std's `Stdin::as_fd` borrows it the same way.
    unsafe { BorrowedFd::borrow_raw(fd) }
}

/// What `queued` asks about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// A pipe's bytes that nobody has read yet (`FIONREAD`, which on the
    /// write end counts the pipe's content too).
    Unread,
    /// A terminal's bytes that it has yet to send (`TIOCOUTQ`).
    Unsent,
}

/// How many bytes `fd` holds in `queue`.
///
/// Raw `ioctl`: nix has no safe wrapper for these requests (its `ioctl_*`
/// macros make `unsafe fn`s).
pub fn queued(fd: BorrowedFd<'_>, queue: Queue) -> Result<usize, Errno> {
    let request = match queue {
        Queue::Unread => libc::FIONREAD,
        Queue::Unsent => libc::TIOCOUTQ,
    };
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD and TIOCOUTQ write one int into `n`, which is live.
    if unsafe { libc::ioctl(fd.as_raw_fd(), request, &mut n) } != 0 {
        return Err(Errno::last());
    }
    Ok(usize::try_from(n).unwrap_or(0))
}

/// The file behind one of vigil's descriptors: its (device, inode), which
/// tell two descriptors or a path of the same file, and its type
/// (`S_IFMT` bits). `fd` is one of this module's standard descriptors, not
/// `io::stdout()`, whose first use sets up std's buffered handle: this runs
/// on the way out.
pub fn file_of(fd: BorrowedFd<'_>) -> Option<((u64, u64), libc::mode_t)> {
    let st = fstat(fd).ok()?;
    // dev_t and ino_t are narrower than u64 on some 32-bit C libraries.
    #[allow(clippy::unnecessary_cast)]
    let id = (st.st_dev as u64, st.st_ino as u64);
    Some((id, st.st_mode & libc::S_IFMT))
}
