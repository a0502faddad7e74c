//! Where the lines go: stderr, one `write` per line, never blocking while
//! vigil supervises and waiting a bounded time for room once the last
//! lines are due; and at exit, the wait for vigil's output pipes and
//! terminal to be read.

use std::os::fd::BorrowedFd;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::format::LINE_MAX;
use crate::sys::fd::{self as sys, Queue};

/// Writes one line, at most `PIPE_BUF` bytes of it, to stderr if it has
/// room now or gets it by `deadline`. stderr is shared with the child,
/// so it cannot be made non-blocking itself; instead `poll` is asked
/// whether there is room, and a pipe that polls writable has a free page,
/// so a write of at most `PIPE_BUF` bytes neither blocks nor splits.
/// Closed, broken or full: the line is lost, vigil goes on. A call that
/// fails otherwise (interrupted, short of memory, or a pipe that filled up
/// between the two) is tried again, twice at most.
pub(super) fn write(line: &[u8], deadline: Option<Instant>) {
    let Some(stderr) = sys::stderr() else {
        return;
    };
    let len = line.len().min(LINE_MAX);
    for _ in 0..3 {
        let left = deadline.map_or(Duration::ZERO, |d| {
            d.saturating_duration_since(Instant::now())
        });
        // Rounded up: a last millisecond left is still worth a try.
        let timeout =
            PollTimeout::try_from(left.as_micros().div_ceil(1000)).unwrap_or(PollTimeout::MAX);
        let Ok(events) = poll_out(stderr, timeout) else {
            continue;
        };
        if !events.contains(PollFlags::POLLOUT) {
            return;
        }
        match nix::unistd::write(stderr, line.get(..len).unwrap_or(line)) {
            Err(Errno::EINTR | Errno::EAGAIN | Errno::ENOMEM) => continue,
            _ => return,
        }
    }
}

/// What `poll` finds of `fd` asked for room to write, waiting at most
/// `timeout`.
fn poll_out(fd: BorrowedFd<'_>, timeout: PollTimeout) -> nix::Result<PollFlags> {
    let mut fds = [PollFd::new(fd, PollFlags::POLLOUT)];
    poll(&mut fds, timeout)?;
    let [fd] = fds;
    Ok(fd.revents().unwrap_or(PollFlags::empty()))
}

/// How long vigil waits at most, at exit, for its stdout and stderr pipes
/// to be read. Container engines stop copying a container's output
/// shortly after it exits (Docker: 2 s) and drop what is still in the pipe;
/// under a flood of output the last lines, vigil's report among them, are
/// what gets dropped. Waiting until what is left fits in one read
/// (`PIPE_BUF`) leaves the engine only that read to make. Bounded, so that
/// a slow reader cannot hold up the container's end for long.
const CATCH_UP: Duration = Duration::from_secs(3);

/// A reader that takes nothing out of the pipe for this long is taken for
/// none at all (a pipe nobody reads), and vigil exits at once.
const STALLED: Duration = Duration::from_millis(500);

/// One of vigil's outputs that a reader empties.
#[derive(Clone, Copy, Debug)]
pub(super) struct Output {
    fd: BorrowedFd<'static>,
    /// A terminal (`TIOCOUTQ`: bytes it has yet to send), else a pipe
    /// (`FIONREAD`: bytes nobody has read yet).
    terminal: bool,
}

impl Output {
    /// What is left to wait for: a terminal's unsent bytes; a pipe's unread
    /// ones, unless they fit in one read or nobody reads the pipe any more
    /// (then nobody ever will).
    fn left(self) -> usize {
        let queue = if self.terminal {
            Queue::Unsent
        } else {
            Queue::Unread
        };
        let n = sys::queued(self.fd, queue).unwrap_or(0);
        if n == 0 || (!self.terminal && n <= LINE_MAX) {
            return 0;
        }
        let gone = PollFlags::POLLERR | PollFlags::POLLHUP;
        match poll_out(self.fd, PollTimeout::ZERO) {
            Ok(events) if !events.intersects(gone) => n,
            _ => 0,
        }
    }
}

/// Looks at stdout and stderr once, for `let_readers_catch_up`.
pub(super) fn find_outputs() -> Vec<Output> {
    let mut seen: Vec<(u64, u64)> = Vec::new();
    let mut outputs = Vec::new();
    for fd in [sys::stdout(), sys::stderr()].into_iter().flatten() {
        let Some((id, kind)) = sys::file_of(fd) else {
            continue;
        };
        let terminal = kind == libc::S_IFCHR && nix::unistd::isatty(fd).unwrap_or(false);
        if !(terminal || kind == libc::S_IFIFO) || seen.contains(&id) {
            continue;
        }
        seen.push(id);
        outputs.push(Output { fd, terminal });
    }
    outputs
}

/// At exit: waits while vigil's stdout or stderr is a pipe that still holds
/// more than one read's worth of unread data and someone is reading it
/// (see `CATCH_UP`, `STALLED`), or a terminal that has not sent it all
/// yet: as the init of a whole machine, on a serial console, the kernel
/// panics the moment vigil exits, and what the port had not sent by then
/// (the exit report) was lost.
pub(super) fn wait_for_readers(outputs: &[Output]) {
    let left = || outputs.iter().map(|o| o.left()).sum::<usize>();
    let start = Instant::now();
    let mut least = usize::MAX;
    let mut since = start;
    // A reader that keeps up (dockerd, most of the time) takes the last
    // lines as soon as it runs: the first look comes after giving it the
    // CPU, the next ones after pauses growing to 10 ms.
    let mut pause = Duration::ZERO;
    let mut unread = left();
    while unread > 0 {
        let now = Instant::now();
        if unread < least {
            least = unread;
            since = now;
        }
        if now - start >= CATCH_UP || now - since >= STALLED {
            return;
        }
        if pause.is_zero() {
            std::thread::yield_now();
            pause = Duration::from_micros(100);
        } else {
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(10));
        }
        unread = left();
    }
}
