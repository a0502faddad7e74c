//! Descriptors: the standard ones, how much a pipe or a terminal has yet
//! to pass on, whether vigil has a controlling terminal, and the
//! numbered entries of a directory (/proc's processes).
//!
//! vigil may be started with any of descriptors 0-2 closed (`2>&-`, a
//! minimal runtime). A closed one stays closed for the processes vigil
//! starts, as under tini, but vigil's own files must not take its number:
//! the kernel gives an open the lowest free one, and the signalfd, a pipe,
//! the termination log or a file of /proc on descriptor 2 would then be
//! written to as if it were stderr. So at start (`settle_standard`) vigil
//! looks at the three once, keeps which were open, and holds each closed
//! one with a placeholder of its own, close-on-exec: no later open can
//! land there, wherever it is made (std's, nix's, the C library's), and
//! no program vigil starts sees it.

use std::os::fd::{AsRawFd, BorrowedFd, IntoRawFd};
use std::sync::OnceLock;

use nix::errno::Errno;
use nix::fcntl::{OFlag, open};
use nix::sys::stat::{Mode, fstat};
use nix::unistd::{Whence, lseek};

/// Which of descriptors 0, 1 and 2 were open when vigil looked.
static OPEN_AT_START: OnceLock<[bool; 3]> = OnceLock::new();

/// Looks at descriptors 0-2, once, and holds each closed one with a
/// placeholder: `/` opened as a bare path (`O_PATH`), which needs no file
/// of the image's (there may be no /dev/null) and which can be neither
/// read nor written, as a closed descriptor cannot; close-on-exec, so the
/// child finds the number closed. Called first thing at start, before
/// vigil opens anything. If a placeholder cannot be opened (no descriptor
/// left at all), the number stays free: vigil then still never takes
/// what lands there for its own stdin, stdout or stderr.
pub fn settle_standard() {
    for (fd, was_open) in (0..).zip(open_at_start()) {
        if was_open {
            continue;
        }
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        match open(c"/", flags, Mode::empty()) {
            // Held for the life of vigil.
            Ok(placeholder) if placeholder.as_raw_fd() == fd => {
                let _ = placeholder.into_raw_fd();
            }
            // An open takes the lowest free number, which is this one (the
            // lower ones are open or held): only a failed open ends here.
            _ => return,
        }
    }
}

/// Which standard descriptors were open at start: looked at once. The
/// unit tests, which never call `settle_standard`, look at first use.
fn open_at_start() -> [bool; 3] {
    *OPEN_AT_START.get_or_init(|| {
        // SAFETY: F_GETFD takes a descriptor number and no memory; for a
        // number that is not open it fails with EBADF and changes nothing.
        let is_open =
            |fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1 || Errno::last() != Errno::EBADF;
        [is_open(0), is_open(1), is_open(2)]
    })
}

/// Descriptor 0 if vigil was started with it open, borrowed as std's own
/// `Stdin::as_fd` borrows it, but without `std::io::stdin()`, whose first
/// use sets up std's buffered handle.
pub fn stdin() -> Option<BorrowedFd<'static>> {
    standard(0)
}

/// Descriptor 1 if vigil was started with it open (see `stdin`).
pub fn stdout() -> Option<BorrowedFd<'static>> {
    standard(1)
}

/// Descriptor 2 if vigil was started with it open.
pub fn stderr() -> Option<BorrowedFd<'static>> {
    standard(2)
}

/// Descriptor `fd` (0-2), borrowed for as long as vigil runs, if vigil
/// was started with it open.
fn standard(fd: libc::c_int) -> Option<BorrowedFd<'static>> {
    let open = open_at_start().get(fd as usize).copied().unwrap_or(false);
    // SAFETY: only for a standard descriptor vigil was started with open,
    // which stays open as long as vigil runs: nothing in vigil closes,
    // replaces or owns descriptors 0-2 (the dup2 onto a new process's
    // stdin is made in that process).
    open.then(|| unsafe { BorrowedFd::borrow_raw(fd) })
}

/// Whether vigil has a controlling terminal, as an open of `/dev/tty`
/// (which names the caller's own) answers: Ok when it has one, ENXIO when
/// it has none, another error when that cannot be told (no /dev/tty in
/// the image). O_NOCTTY: opening it changes nothing; the descriptor is
/// closed at once.
pub fn controlling_terminal() -> Result<(), Errno> {
    let flags = OFlag::O_RDONLY | OFlag::O_NOCTTY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    open(c"/dev/tty", flags, Mode::empty()).map(drop)
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
    Errno::result(unsafe { libc::ioctl(fd.as_raw_fd(), request, &mut n) })?;
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

/// The entries of the directory `dir` named by a number (/proc's
/// processes), from the directory position `from` on (0: all of them),
/// read with `getdents64` into a buffer on the stack. /proc's root is
/// listed at the child's exit, on the way to vigil's own: the C library's
/// directory stream (std's `read_dir`, nix's `Dir`) would allocate the
/// stream, and std each name, for names looked at once.
///
/// Raw `getdents64`: neither nix nor std has the call.
pub fn numbered(dir: BorrowedFd<'_>, from: libc::off_t) -> Result<Vec<i32>, Errno> {
    lseek(dir, from, Whence::SeekSet)?;
    let mut buf = [0u8; 4096];
    let mut found = Vec::new();
    loop {
        let (at, len) = (buf.as_mut_ptr(), buf.len());
        // SAFETY: getdents64 writes at most `len` bytes at `at`, into `buf`,
        // which is live and ours for the call.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, dir.as_raw_fd(), at, len) };
        let filled = usize::try_from(Errno::result(n)?).unwrap_or(0);
        if filled == 0 {
            return Ok(found);
        }
        found.extend(dirent_numbers(buf.get(..filled).unwrap_or_default()));
    }
}

/// The numbers among the names of `records`, as `getdents64` fills its
/// buffer: per record an inode (8 bytes), an offset (8), the record's own
/// length (2), a type (1), then the name, NUL-terminated and padded. Only
/// names made of digits that fit an `i32`, as every pid: most of /proc's
/// root is words, dropped at their first letter. A record that claims
/// less than its header still moves on by a header, and one that runs past
/// the end ends the list, so that no buffer, however garbled, is read out
/// of bounds or forever.
pub fn dirent_numbers(records: &[u8]) -> impl Iterator<Item = i32> + '_ {
    let mut rest = records;
    std::iter::from_fn(move || {
        while let Some(&[lo, hi]) = rest.get(16..18) {
            let len = usize::from(u16::from_ne_bytes([lo, hi]));
            let name = rest.get(19..len).unwrap_or_default();
            let name = name.split(|&b| b == 0).next().unwrap_or(name);
            rest = rest.get(len.max(19)..).unwrap_or_default();
            let number = name.iter().try_fold(0i32, |n, &b| {
                let digit = b.checked_sub(b'0').filter(|d| *d < 10)?;
                n.checked_mul(10)?.checked_add(i32::from(digit))
            });
            if let Some(number) = number.filter(|_| !name.is_empty()) {
                return Some(number);
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::dirent_numbers;

    /// A record as the kernel writes it, with `len` as its length field
    /// (the true length when `None`).
    fn record(name: &[u8], len: Option<u16>) -> Vec<u8> {
        let whole = (19 + name.len() + 1).next_multiple_of(8);
        let mut r = vec![7u8; 16];
        r.extend(len.unwrap_or(whole as u16).to_ne_bytes());
        r.push(4);
        r.extend(name);
        r.resize(whole, 0);
        r
    }

    #[test]
    fn garbled_records_end_without_reading_past_them() {
        let good = |name: &[u8]| record(name, None);
        // A length shorter than the header moves on by a header, into
        // what is then read as the next record's header.
        let mut short = record(b"5", Some(3));
        short.truncate(19);
        let listing = [
            good(b"."),
            good(b"12"),
            good(b"2147483648"),
            good(b"12a"),
            short,
            good(b"2147483647"),
            record(b"99", Some(4000)),
            good(b"3"),
        ]
        .concat();
        let numbers: Vec<i32> = dirent_numbers(&listing).collect();
        assert_eq!(numbers, [12, 2147483647]);
        assert_eq!(dirent_numbers(&listing[..17]).count(), 0);
        assert_eq!(dirent_numbers(&[0xff; 100]).count(), 0);
    }
}
