//! Logging to stderr through `log` + `env_logger`, every line prefixed
//! `vigil:` (or what `init` is given: `vigil[PID]:` under another vigil),
//! never
//! blocking while vigil supervises: a PID 1 stuck writing to a full pipe
//! that nobody reads would stop reaping and forwarding.
//!
//! The last lines are another matter: once the deadline warnings and the
//! exit report are due there is little or nothing left to supervise, and
//! they are the lines that say why the container died. From `final_lines`
//! on, a write waits for room in a full pipe, about a second in all
//! (`PATIENCE`), before it gives a line up: long enough for a reader that
//! is catching up with a flood (dockerd, on a busy machine), short enough
//! not to hold up the container's exit.
//!
//! Every line is written whole, in one `write` of at most `PIPE_BUF` bytes
//! (longer messages are cut to fit): a pipe takes such a write in one piece,
//! so a vigil line is never split, nor mixed with the child's output.

use std::io::{self, Write};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::text::one_line;

/// The log target of lines shown at the default verbosity without being
/// warnings (the exit report of a container that stopped or failed without
/// anything abnormal). Logged at `Warn` level, so that `-q`-like verbosity 0
/// hides them, and printed without the `warning:` tag.
pub const NOTICE: &str = "vigil::notice";

/// What a pipe takes in one piece (POSIX `PIPE_BUF` on Linux): the longest
/// line vigil writes, newline included.
pub const PIPE_BUF: usize = 4096;

/// How long the final lines may wait, all together, for room in stderr.
const PATIENCE: Duration = Duration::from_secs(1);

/// When the final lines stop waiting; unset while vigil supervises.
static PATIENT_UNTIL: OnceLock<Instant> = OnceLock::new();

/// tini's verbosity scale: 0 errors, 1 warnings (default), 2 info, 3
/// debug, 4 trace. `prefix` starts every line (`vigil`, or `vigil[PID]`
/// for a vigil under another one: `procs::log_prefix`).
pub fn init(verbosity: u8, prefix: String) {
    let level = match verbosity {
        0 => log::LevelFilter::Error,
        1 => log::LevelFilter::Warn,
        2 => log::LevelFilter::Info,
        3 => log::LevelFilter::Debug,
        _ => log::LevelFilter::Trace,
    };
    let _ = env_logger::Builder::new()
        .filter_level(level)
        .format(move |buf, record| {
            let tag = match record.level() {
                log::Level::Error => "error: ",
                log::Level::Warn if record.target() == NOTICE => "",
                log::Level::Warn => "warning: ",
                _ => "",
            };
            // Sized for the exit report, so that formatting it does not
            // grow the string a few bytes at a time.
            let mut message = String::with_capacity(512);
            let _ = std::fmt::Write::write_fmt(&mut message, *record.args());
            let line = whole_line(&format!("{prefix}: {tag}"), &message);
            buf.write_all(line.as_bytes())
        })
        .target(env_logger::Target::Pipe(Box::new(Stderr)))
        .try_init();
}

/// From now on, log lines wait for room in a full stderr, `PATIENCE` in all
/// counted from the first call: the deadline warnings and the exit report,
/// once everything vigil supervised is ended or being killed.
pub fn final_lines() {
    PATIENT_UNTIL.get_or_init(|| Instant::now() + PATIENCE);
}

/// How long vigil waits at most, at exit, for its stdout and stderr pipes
/// to be read empty. Container engines stop copying a container's output
/// shortly after it exits (Docker: 2 s) and drop what is still in the pipe;
/// under a flood of output the last lines, vigil's report among them, are
/// what gets dropped. Waiting until the pipes are empty leaves the engine
/// only the last buffer to copy. Bounded, so that a slow reader cannot hold
/// up the container's end for long.
const CATCH_UP: Duration = Duration::from_secs(3);

/// A reader that takes nothing out of the pipe for this long is taken for
/// none at all (a pipe nobody reads), and vigil exits at once.
const STALLED: Duration = Duration::from_millis(500);

/// At exit: waits while vigil's stdout or stderr is a pipe that still holds
/// unread data and someone is reading it (see `CATCH_UP`, `STALLED`), or a
/// terminal that has not sent it all yet: as the init of a whole machine,
/// on a serial console, the kernel panics the moment vigil exits, and what
/// the port had not sent by then (the exit report) was lost.
pub fn let_readers_catch_up() {
    let pipes = own_outputs();
    if pipes.is_empty() {
        return;
    }
    let start = Instant::now();
    let mut least = usize::MAX;
    let mut since = start;
    loop {
        let unread: usize = pipes.iter().map(|&fd| unread(fd)).sum();
        let now = Instant::now();
        if unread == 0 || now - start >= CATCH_UP {
            return;
        }
        if unread < least {
            least = unread;
            since = now;
        } else if now - since >= STALLED {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// vigil's stdout and stderr, those that are pipes or terminals, each once
/// (with `2>&1` both are the same pipe).
fn own_outputs() -> Vec<libc::c_int> {
    let mut seen: Vec<(u64, u64)> = Vec::new();
    let mut pipes = Vec::new();
    for fd in [libc::STDOUT_FILENO, libc::STDERR_FILENO] {
        // SAFETY: fstat writes one stat into `st`, which is live; an
        // all-zero stat is a valid value to start from.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above; fd is a plain integer.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            continue;
        }
        let kind = st.st_mode & libc::S_IFMT;
        // SAFETY: isatty takes a plain integer.
        if kind != libc::S_IFIFO && !(kind == libc::S_IFCHR && unsafe { libc::isatty(fd) } == 1) {
            continue;
        }
        // dev_t and ino_t are narrower than u64 on some 32-bit C libraries.
        #[allow(clippy::unnecessary_cast)]
        let id = (st.st_dev as u64, st.st_ino as u64);
        if !seen.contains(&id) {
            seen.push(id);
            pipes.push(fd);
        }
    }
    pipes
}

/// Bytes in a pipe that nobody has read yet (FIONREAD works on either end),
/// or that a terminal has yet to send (TIOCOUTQ; always 0 on a
/// pseudo-terminal); 0 when the pipe has no reader left, since then nobody
/// ever will.
fn unread(fd: libc::c_int) -> usize {
    let mut fds = [libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    }];
    // SAFETY: poll reads and writes the one pollfd in `fds`, which is live.
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), 1, 0) };
    if ready < 0 || fds[0].revents & libc::POLLERR != 0 {
        return 0;
    }
    // SAFETY: isatty takes a plain integer.
    let request = if unsafe { libc::isatty(fd) } == 1 {
        libc::TIOCOUTQ
    } else {
        libc::FIONREAD
    };
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD and TIOCOUTQ write one int into `n`, which is live.
    let r = unsafe { libc::ioctl(fd, request, &mut n) };
    if r == 0 {
        usize::try_from(n).unwrap_or(0)
    } else {
        0
    }
}

/// Writes a usage or start-up message straight to stderr, before logging is
/// set up. Errors are ignored: there is nobody else to tell.
pub fn say(message: &str) {
    let _ = Stderr.write_all(format!("vigil: {}\n", one_line(message)).as_bytes());
}

/// `prefix` and `message` as one line that fits in `PIPE_BUF` bytes,
/// newline included: control characters escaped, and a message too long
/// for that cut, with `[...]` at the cut. (The exit report shortens its own
/// parts first, so that its cause and status are never what is cut.)
fn whole_line(prefix: &str, message: &str) -> String {
    const CUT: &str = " [...]";
    let message = one_line(message);
    let room = PIPE_BUF - 1 - prefix.len();
    if message.len() <= room {
        return format!("{prefix}{message}\n");
    }
    let mut end = room.saturating_sub(CUT.len());
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{prefix}{}{CUT}\n", message.get(..end).unwrap_or(""))
}

/// stderr that never blocks vigil while it supervises. It is shared with
/// the child, so it cannot be made non-blocking itself; instead each write
/// first asks `poll` whether there is room, and writes at most `PIPE_BUF`
/// bytes: a pipe that polls writable has a free page, so such a write
/// neither blocks nor splits. Without room, the line is dropped, or, once
/// `final_lines` was called, waited for until the patience runs out.
struct Stderr;

impl Stderr {
    /// How long a write may wait for room now.
    fn patience() -> libc::c_int {
        let Some(until) = PATIENT_UNTIL.get() else {
            return 0;
        };
        let left = until.saturating_duration_since(Instant::now());
        // Rounded up: a last millisecond left is still worth a try.
        libc::c_int::try_from(left.as_micros().div_ceil(1000)).unwrap_or(libc::c_int::MAX)
    }

    /// Whether stderr has room for a write now, or gets it within the
    /// patience left.
    fn has_room() -> bool {
        loop {
            let mut fds = [libc::pollfd {
                fd: libc::STDERR_FILENO,
                events: libc::POLLOUT,
                revents: 0,
            }];
            // SAFETY: poll reads and writes the one pollfd in `fds`, which is live.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), 1, Self::patience()) };
            if ready < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return ready == 1 && fds[0].revents & libc::POLLOUT != 0;
        }
    }
}

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !Self::has_room() {
            return Ok(buf.len());
        }
        let len = buf.len().min(PIPE_BUF);
        // SAFETY: write reads `len` bytes from `buf`, which is at least that long.
        let n = unsafe { libc::write(libc::STDERR_FILENO, buf.as_ptr().cast(), len) };
        // Closed, broken or full: the rest is lost, vigil goes on.
        Ok(if n <= 0 { buf.len() } else { n as usize })
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_message_is_cut_to_one_pipe_write() {
        let line = whole_line("vigil: warning: ", &"x".repeat(10_000));
        assert_eq!(line.len(), PIPE_BUF);
        assert!(line.ends_with(" [...]\n"), "{}", &line[line.len() - 20..]);
        let short = whole_line("vigil: ", "hello\nworld");
        assert_eq!(short, "vigil: hello\\nworld\n");
        let wide = whole_line("vigil: ", &"é".repeat(3000));
        assert!(wide.len() <= PIPE_BUF && wide.ends_with(" [...]\n"));
    }
}
