//! vigil's log: every line it writes goes to stderr through this module,
//! as text (`vigil: warning: ...`) or, with `--log-format json|logfmt`, as
//! one record per line (`record`). A record is built only when its line is
//! shown, and only in the structured formats; the text line's words are its
//! `msg`. The termination log is this module's too: the lines that explain
//! how vigil ended go there in the same format (`emit_final`).
//!
//! The one `Logger` is set once at start (`init`); nothing else about the
//! output is global. Callers say what happened (an `Event`, from the one
//! table of everything vigil says) and never which format is in use.
//!
//! Every line is prefixed `vigil:` (or `vigil[PID]:` under another vigil,
//! which a record says with `vigil_pid`), and never blocks while vigil
//! supervises: a PID 1 stuck writing to a full pipe that nobody reads
//! would stop reaping and forwarding.
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
//! (longer messages are cut to fit, records shortened): a pipe takes such
//! a write in one piece, so a vigil line is never split, nor mixed with the
//! child's output.

use std::fmt::{self, Write as _};
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use crate::event::{Event, Level};
use crate::record::{Encoder, Format, LINE_MAX, Record, Timestamp};
use crate::sys::fd::{self as sys, Queue};
use crate::termlog;
use crate::text::{char_start, one_line_pieces};

/// What a pipe takes in one piece (POSIX `PIPE_BUF` on Linux): the longest
/// line vigil writes, newline included.
pub const PIPE_BUF: usize = 4096;

/// How long the final lines may wait, all together, for room in stderr.
const PATIENCE: Duration = Duration::from_secs(1);

/// Where and how vigil writes its lines.
#[derive(Debug)]
pub struct Logger {
    /// tini's scale: 0 errors, 1 warnings (the default), 2 info, 3 debug,
    /// 4 trace.
    verbosity: u8,
    /// `None` for text.
    encoder: Option<Encoder>,
    /// vigil's pid when it runs under another vigil: text lines then start
    /// `vigil[PID]:`.
    under_vigil: Option<u32>,
    termination_log: Option<PathBuf>,
    /// A write to the termination log failed and was told: the next
    /// failure, most likely the same, goes unsaid.
    termination_log_failed: AtomicBool,
    /// When the final lines stop waiting; unset while vigil supervises.
    patient_until: OnceLock<Instant>,
    /// vigil's stdout and stderr, those that are pipes or terminals, each
    /// once (with `2>&1` both are the same pipe), for the wait at exit.
    outputs: Vec<Output>,
}

impl Logger {
    /// A logger at `verbosity` in `format`; `under_vigil` is vigil's pid
    /// when it runs under another vigil (`procs::under_vigil`), and
    /// `termination_log` where the final lines also go.
    pub fn new(
        verbosity: u8,
        format: Format,
        under_vigil: Option<u32>,
        termination_log: Option<PathBuf>,
    ) -> Logger {
        Logger {
            verbosity,
            encoder: format.encoding().map(|encoding| Encoder {
                encoding,
                vigil_pid: under_vigil,
            }),
            under_vigil,
            termination_log,
            termination_log_failed: AtomicBool::new(false),
            patient_until: OnceLock::new(),
            outputs: find_outputs(),
        }
    }

    fn shows(&self, level: Level) -> bool {
        level.verbosity() <= self.verbosity
    }

    /// `event` as this logger writes it: a text line (after the event's
    /// heading), or its record.
    fn line(&self, event: &Event<'_>) -> Vec<u8> {
        let level = event.level();
        let msg = Headed(event.heading(), event);
        match &self.encoder {
            None => text_line(self.under_vigil, level, &msg),
            Some(encoder) => {
                let record = Record::stamped(
                    level.record_level(),
                    event.name(),
                    msg.to_string(),
                    wall_clock(),
                )
                .with(|o| event.fields(o));
                let mut line = Vec::new();
                encoder.line(&record, LINE_MAX, &mut line);
                line
            }
        }
    }

    /// Writes one whole line to stderr: without blocking while vigil
    /// supervises, patiently at the end.
    fn write(&self, line: &[u8]) {
        #[cfg(test)]
        if capture::line(line) {
            return;
        }
        let patience = self
            .patient_until
            .get()
            .map(|until| until.saturating_duration_since(Instant::now()));
        stderr_write(line, patience);
    }

    /// Writes the line of one event, if it is shown (see `emit`).
    fn emit(&self, event: &Event<'_>) {
        if self.shows(event.level()) {
            self.write(&self.line(event));
        }
    }

    /// Says what became of a message for the termination log at `path`,
    /// when there is something to say: a failure as a warning, once (the
    /// next one would most likely be the same); the report left out
    /// because stderr has it, at `-vv`.
    fn tell(&self, path: &Path, outcome: termlog::Outcome) {
        match outcome {
            termlog::Outcome::Failed(e) => {
                if self.termination_log_failed.swap(true, Ordering::Relaxed) {
                    return;
                }
                let error = crate::text::os_error(&e);
                self.emit(&Event::TerminationLogFailed {
                    path,
                    error: &error,
                    // ENXIO: a FIFO without a reader; EAGAIN: a full one.
                    unread: matches!(e.raw_os_error(), Some(libc::ENXIO | libc::EAGAIN)),
                });
            }
            termlog::Outcome::OnStderr => self.emit(&Event::TerminationLogSkipped { path }),
            termlog::Outcome::Written | termlog::Outcome::OwnStream | termlog::Outcome::Program => {
            }
        }
    }
}

static LOGGER: OnceLock<Logger> = OnceLock::new();

/// Sets the one logger up, once, at start.
pub fn init(logger: Logger) {
    let _ = LOGGER.set(logger);
}

/// Runs `f` with the logger, if there is one yet.
fn with<R>(f: impl FnOnce(&Logger) -> R) -> Option<R> {
    #[cfg(test)]
    if let Some(logger) = capture::logger() {
        return Some(f(&logger));
    }
    LOGGER.get().map(f)
}

/// Whether the lines that say how vigil ended also go to a termination log.
pub fn has_termination_log() -> bool {
    with(|l| l.termination_log.is_some()).unwrap_or(false)
}

/// Whether a line at `level` is shown.
pub fn shown(level: Level) -> bool {
    with(|l| l.shows(level)).unwrap_or(false)
}

/// The wall clock, for records.
pub fn wall_clock() -> Timestamp {
    #[cfg(test)]
    if let Some(time) = capture::time() {
        return time;
    }
    Timestamp::now()
}

/// Logs one event, if its level is shown: the text line, or its record
/// in the structured formats. Nothing is formatted unless the line is
/// shown.
pub fn emit(event: Event<'_>) {
    with(|l| l.emit(&event));
}

/// Logs the event that says how vigil ends (the exit report, or why
/// nothing could start), and leaves it in the termination log as well,
/// whatever the verbosity: the log line has the event's heading (`exit
/// report: `), the termination log's text the words alone, and a record is
/// the same bytes in both.
pub fn emit_final(event: Event<'_>) {
    with(|l| {
        let logged = l.shows(event.level());
        if !logged && l.termination_log.is_none() {
            return;
        }
        let line = l.line(&event);
        if logged {
            l.write(&line);
        }
        if let Some(path) = &l.termination_log {
            let outcome = match l.encoder {
                Some(_) => termlog::write(path, &line, logged),
                None => termlog::write(path, event.to_string().as_bytes(), logged),
            };
            l.tell(path, outcome);
        }
    });
}

/// Leaves `event` in the termination log, and nowhere else: what the
/// termination log should say if vigil is killed before it can write its
/// report (a group OOM kill, a SIGKILL from outside). Every exit vigil
/// makes itself writes over it (`emit_final`).
pub fn provisional(event: Event<'_>) {
    with(|l| {
        if l.termination_log.is_none() && !cfg!(test) {
            return;
        }
        let line = match l.encoder {
            Some(_) => l.line(&event),
            None => event.to_string().into_bytes(),
        };
        #[cfg(test)]
        capture::provisional(&line);
        if let Some(path) = &l.termination_log {
            l.tell(path, termlog::write_provisional(path, &line));
        }
    });
}

/// `heading` then `event`'s words, as one `Display`.
struct Headed<'e>(&'static str, &'e Event<'e>);

impl fmt::Display for Headed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.0, self.1)
    }
}

/// Writes one line straight to stderr before the logger is set up (a
/// usage error, a start-up failure), in `format`: the text line `vigil:
/// error: MSG`, or the event's record. The same goes to
/// `termination_log`, the one the command line or the environment most
/// likely meant (`cli::termination_log_after`), unless that is an
/// executable file: a command line that lost the value of its
/// `--termination-log` took the program for it.
pub fn early(format: Format, termination_log: Option<&Path>, event: Event<'_>) {
    let logger = Logger {
        verbosity: Level::Trace.verbosity(),
        encoder: format.encoding().map(|encoding| Encoder {
            encoding,
            vigil_pid: None,
        }),
        under_vigil: None,
        termination_log: None,
        termination_log_failed: AtomicBool::new(false),
        patient_until: OnceLock::new(),
        outputs: Vec::new(),
    };
    let line = logger.line(&event);
    logger.write(&line);
    // The error stays one line: a termination log that cannot be written
    // goes unsaid here.
    if let Some(path) = termination_log {
        let _ = termlog::write_usage_error(path, &line);
    }
}

/// From now on, log lines wait for room in a full stderr, `PATIENCE` in all
/// counted from the first call: the deadline warnings and the exit report,
/// once everything vigil supervised is ended or being killed.
pub fn final_lines() {
    with(|l| {
        l.patient_until.get_or_init(|| Instant::now() + PATIENCE);
    });
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
struct Output {
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
fn find_outputs() -> Vec<Output> {
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
pub fn let_readers_catch_up() {
    with(|l| wait_for_readers(&l.outputs));
}

fn wait_for_readers(outputs: &[Output]) {
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

/// vigil's prefix and `message` as one line, with the message's control
/// characters escaped (`text::one_line`), in at most `PIPE_BUF` bytes,
/// newline included: a longer message is cut, on a character's boundary,
/// and ends ` [...]`.
fn text_line(under_vigil: Option<u32>, level: Level, message: &dyn fmt::Display) -> Vec<u8> {
    let mut line = String::with_capacity(256);
    match under_vigil {
        Some(pid) => {
            let _ = write!(line, "vigil[{pid}]: ");
        }
        None => line.push_str("vigil: "),
    }
    line.push_str(tag(level));
    let _ = write!(Escaping(&mut line), "{message}");
    const CUT: &str = " [...]";
    if line.len() > PIPE_BUF - 1 {
        let keep = char_start(line.as_bytes(), PIPE_BUF - 1 - CUT.len());
        line.truncate(keep);
        line.push_str(CUT);
    }
    line.push('\n');
    line.into_bytes()
}

/// The text line's tag after the prefix.
fn tag(level: Level) -> &'static str {
    match level {
        Level::Error => "error: ",
        Level::Warning => "warning: ",
        _ => "",
    }
}

/// Escapes control characters as they are written into the string.
struct Escaping<'s>(&'s mut String);

impl fmt::Write for Escaping<'_> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        one_line_pieces(text, |piece| self.0.push_str(piece));
        Ok(())
    }
}

/// Writes one line, at most `PIPE_BUF` bytes of it, to stderr if it has
/// room now or gets it within `patience`. stderr is shared with the child,
/// so it cannot be made non-blocking itself; instead `poll` is asked
/// whether there is room, and a pipe that polls writable has a free page,
/// so a write of at most `PIPE_BUF` bytes neither blocks nor splits.
/// Closed, broken or full: the line is lost, vigil goes on. A call that
/// fails otherwise (interrupted, short of memory, or a pipe that filled up
/// between the two) is tried again, twice at most.
fn stderr_write(line: &[u8], patience: Option<Duration>) {
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

/// The unit tests' view of the log: on their own thread, lines are kept
/// (not written), in the format and at the verbosity a test chose, stamped
/// with a fixed time, so that a test sees exactly what vigil would write.
#[cfg(test)]
pub mod capture {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;

    use super::{Format, Logger, Timestamp};

    thread_local! {
        static LOGGER: RefCell<Option<Rc<Logger>>> = const { RefCell::new(None) };
        static TIME: Cell<Option<Timestamp>> = const { Cell::new(None) };
        static LINES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
        static PROVISIONAL: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    }

    /// From now on, this thread's lines are kept: in `format`, at
    /// `verbosity`, every record stamped `time`.
    pub fn start(format: Format, verbosity: u8, time: Timestamp) {
        let logger = Logger {
            outputs: Vec::new(),
            ..Logger::new(verbosity, format, None, None)
        };
        LOGGER.with(|l| *l.borrow_mut() = Some(Rc::new(logger)));
        TIME.with(|t| t.set(Some(time)));
        LINES.with(|l| l.borrow_mut().clear());
    }

    /// The lines kept so far, taken.
    pub fn take() -> Vec<String> {
        LINES.with(|l| std::mem::take(&mut *l.borrow_mut()))
    }

    pub(super) fn logger() -> Option<Rc<Logger>> {
        LOGGER.with(|l| l.borrow().clone())
    }

    pub(super) fn time() -> Option<Timestamp> {
        TIME.with(Cell::get)
    }

    /// The provisional messages written so far, taken.
    pub fn take_provisional() -> Vec<String> {
        PROVISIONAL.with(|l| std::mem::take(&mut *l.borrow_mut()))
    }

    pub(super) fn provisional(line: &[u8]) {
        let text = String::from_utf8(line.to_vec()).expect("a line is UTF-8");
        PROVISIONAL.with(|l| l.borrow_mut().push(text));
    }

    /// Keeps `line` when this thread captures; whether it did.
    pub(super) fn line(line: &[u8]) -> bool {
        if logger().is_none() {
            return false;
        }
        let text = String::from_utf8(line.to_vec()).expect("a line is UTF-8");
        LINES.with(|l| l.borrow_mut().push(text));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_message_is_cut_to_one_pipe_write() {
        let whole_line = |level: Level, message: &str| {
            String::from_utf8(text_line(None, level, &message)).expect("a line is UTF-8")
        };
        let line = whole_line(Level::Warning, &"x".repeat(10_000));
        assert_eq!(line.len(), PIPE_BUF);
        assert!(line.ends_with(" [...]\n"), "{}", &line[line.len() - 20..]);
        let short = whole_line(Level::Notice, "hello\nworld");
        assert_eq!(short, "vigil: hello\\nworld\n");
        let wide = whole_line(Level::Notice, &"é".repeat(3000));
        assert!(wide.len() <= PIPE_BUF && wide.ends_with(" [...]\n"));
    }
}
