//! Logging to stderr through `log` + `env_logger`, every line prefixed
//! `vigil:`, and never blocking: a PID 1 stuck writing to a full pipe that
//! nobody reads would stop reaping and forwarding.

use std::io::{self, Write};

/// tini's verbosity scale: 0 errors, 1 warnings (default), 2 info, 3
/// debug, 4 trace.
pub fn init(verbosity: u8) {
    let level = match verbosity {
        0 => log::LevelFilter::Error,
        1 => log::LevelFilter::Warn,
        2 => log::LevelFilter::Info,
        3 => log::LevelFilter::Debug,
        _ => log::LevelFilter::Trace,
    };
    let _ = env_logger::Builder::new()
        .filter_level(level)
        .format(|buf, record| {
            let tag = match record.level() {
                log::Level::Error => "error: ",
                log::Level::Warn => "warning: ",
                _ => "",
            };
            let message = one_line(&record.args().to_string());
            writeln!(buf, "vigil: {tag}{message}")
        })
        .target(env_logger::Target::Pipe(Box::new(Stderr)))
        .try_init();
}

/// Writes a usage or start-up message straight to stderr, before logging is
/// set up. Errors are ignored: there is nobody else to tell.
pub fn say(message: &str) {
    let _ = Stderr.write_all(format!("vigil: {}\n", one_line(message)).as_bytes());
}

/// Escapes control characters (a newline in a command's argument, say), so
/// that every message stays one line starting `vigil:`.
pub fn one_line(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| match c {
            '\n' => "\\n".to_string(),
            '\t' => "\\t".to_string(),
            '\r' => "\\r".to_string(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// stderr that drops what it cannot write at once. It is shared with the
/// child, so it cannot be made non-blocking itself; instead each write first
/// asks `poll` whether there is room, and writes at most `PIPE_BUF` bytes: a
/// writable pipe has room for that much, so the write cannot block. A longer
/// line goes out in several writes, each one polled first.
struct Stderr;

/// What a pipe that polls writable takes without blocking.
const PIPE_BUF: usize = 4096;

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut fds = [libc::pollfd {
            fd: libc::STDERR_FILENO,
            events: libc::POLLOUT,
            revents: 0,
        }];
        // SAFETY: poll reads and writes the one pollfd in `fds`, which is live.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 1, 0) };
        if ready != 1 || fds[0].revents & libc::POLLOUT == 0 {
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
