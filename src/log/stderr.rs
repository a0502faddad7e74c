//! Where the lines go: stderr, one `write` per line, never blocking while
//! vigil supervises and waiting a bounded time for room once the last
//! lines are due; and at exit, the wait for vigil's output pipes and
//! terminal to be read.

use std::os::fd::BorrowedFd;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::PIPE_BUF;
use crate::sys::fd::{self as sys, Queue};

/// Writes one line, at most `PIPE_BUF` bytes of it, to stderr if it has
/// room now or gets it within `patience`. stderr is shared with the child,
/// so it cannot be made non-blocking itself; instead `poll` is asked
/// whether there is room, and a pipe that polls writable has a free page,
/// so a write of at most `PIPE_BUF` bytes neither blocks nor splits.
/// Closed, broken or full: the line is lost, vigil goes on. A call that
/// fails otherwise (interrupted, short of memory, or a pipe that filled up
/// between the two) is tried again, twice at most.
pub(super) fn write(line: &[u8], patience: Option<Duration>) {
    let Some(stderr) = sys::stderr() else {
        return;
    };
    let deadline = patience.map(|p| Instant::now() + p);
    let len = line.len().min(PIPE_BUF);
    let mut tries = 0;
    while tries < 3 {
        tries += 1;
        let left = deadline.map_or(Duration::ZERO, |d| {
            d.saturating_duration_since(Instant::now())
        });
        // Rounded up: a last millisecond left is still worth a try.
        let timeout =
            PollTimeout::try_from(left.as_micros().div_ceil(1000)).unwrap_or(PollTimeout::MAX);
        let mut fds = [PollFd::new(stderr, PollFlags::POLLOUT)];
        let Ok(ready) = poll(&mut fds, timeout) else {
            continue;
        };
        let [fd] = &fds;
        if ready != 1 || !fd.revents().is_some_and(|r| r.contains(PollFlags::POLLOUT)) {
            return;
        }
        let again = match nix::unistd::write(stderr, line.get(..len).unwrap_or(line)) {
            Ok(_) => return,
            Err(e) => matches!(e, Errno::EINTR | Errno::EAGAIN | Errno::ENOMEM),
        };
        if !again {
            return;
        }
    }
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
        if n == 0 || (!self.terminal && n <= PIPE_BUF) {
            return 0;
        }
        let mut fds = [PollFd::new(self.fd, PollFlags::POLLOUT)];
        let gone = PollFlags::POLLERR | PollFlags::POLLHUP;
        let ready = poll(&mut fds, PollTimeout::ZERO);
        let [fd] = &fds;
        if ready.is_err() || fd.revents().is_some_and(|r| r.intersects(gone)) {
            return 0;
        }
        n
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
    let mut unread = left();
    if unread == 0 {
        return;
    }
    let start = Instant::now();
    let mut least = usize::MAX;
    let mut since = start;
    // A reader that keeps up (dockerd, most of the time) takes the last
    // lines as soon as it runs: the first look comes after giving it the
    // CPU, the next ones after pauses growing to 10 ms.
    let mut pause = Duration::ZERO;
    loop {
        let now = Instant::now();
        if now - start >= CATCH_UP {
            return;
        }
        if unread < least {
            least = unread;
            since = now;
        } else if now - since >= STALLED {
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
        if unread == 0 {
            return;
        }
    }
}
