//! vigil's log: every line it writes goes to stderr through `emit`, as
//! text (`vigil: warning: ...`) or, with `--log-format json|logfmt`, as one
//! record per line (`record`). A record is built only when its line is
//! shown, and only in the structured formats; the text line's words are its
//! `msg`.
//!
//! A text line is put together on the stack and written with one `write`:
//! no allocation, no per-thread buffer. The exit report is written between
//! the child's death and vigil's exit, while the container's runtime waits.
//! Through `log` + `env_logger`, as it was until issue 21, the report's own
//! `String` and env_logger's per-thread formatter each took a fresh heap
//! page there (an `mmap`, a page fault, a thread-local destructor): about
//! 20 us of a fresh vigil's exit (docs/benchmark-history.md).
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

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::io;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::record::{self, Encoder, Format, Record, Timestamp, LINE_MAX};
use crate::text::{char_start, decimal, one_line_pieces, Out};

/// What a pipe takes in one piece (POSIX `PIPE_BUF` on Linux): the longest
/// line vigil writes, newline included.
pub const PIPE_BUF: usize = 4096;

/// How long the final lines may wait, all together, for room in stderr.
const PATIENCE: Duration = Duration::from_secs(1);

/// When the final lines stop waiting; unset while vigil supervises.
static PATIENT_UNTIL: OnceLock<Instant> = OnceLock::new();

/// How important a line is, which decides at what verbosity it is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// `vigil: error: ...`; shown at every verbosity.
    Error,
    /// `vigil: warning: ...`; shown by default.
    Warning,
    /// Shown by default, but not a warning: `vigil: ...` without a tag (the
    /// exit report of a container that stopped as asked); level `info` in
    /// a record.
    Notice,
    /// `-v`: the lifecycle, signals and their senders.
    Info,
    /// `-vv`: each reaped process, each forwarded signal.
    Debug,
    /// `-vvv`: everything.
    Trace,
}

impl Level {
    /// The least verbosity (tini's scale) at which the line is shown.
    #[inline(always)]
    const fn verbosity(self) -> u8 {
        match self {
            Level::Error => 0,
            Level::Warning | Level::Notice => 1,
            Level::Info => 2,
            Level::Debug => 3,
            Level::Trace => 4,
        }
    }

    /// The level a record says.
    pub fn record_level(self) -> record::Level {
        match self {
            Level::Error => record::Level::Error,
            Level::Warning => record::Level::Warning,
            Level::Notice | Level::Info => record::Level::Info,
            Level::Debug => record::Level::Debug,
            Level::Trace => record::Level::Trace,
        }
    }

    /// The text line's tag after the prefix.
    fn tag(self) -> &'static str {
        match self {
            Level::Error => "error: ",
            Level::Warning => "warning: ",
            _ => "",
        }
    }
}

/// How logging was set up.
#[derive(Clone, Copy, Debug)]
struct Setup {
    /// Read by the tests' capture; `VERBOSITY` holds it for everyone else.
    #[cfg_attr(not(test), allow(dead_code))]
    verbosity: u8,
    /// `None` for text.
    encoder: Option<Encoder>,
    /// vigil's pid when it runs under another vigil: text lines then start
    /// `vigil[PID]:`.
    under_vigil: Option<u32>,
}

static SETUP: OnceLock<Setup> = OnceLock::new();

/// The verbosity `init` set (`Setup::verbosity`), on its own for the check
/// every log call makes first: one load, inlined, where the line is not
/// shown (the forwarding and reaping paths at the default verbosity).
static VERBOSITY: AtomicU8 = AtomicU8::new(0);

thread_local! {
    /// The line a record is encoded into, kept from one record to the next
    /// (vigil has one thread).
    static LINE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Sets logging up: tini's verbosity scale (0 errors, 1 warnings, the
/// default, 2 info, 3 debug, 4 trace), the format, and `under_vigil`,
/// vigil's pid when it runs under another vigil (`procs::under_vigil`):
/// its text lines then start `vigil[PID]:`, its records carry `vigil_pid`.
pub fn init(verbosity: u8, format: Format, under_vigil: Option<u32>) {
    let encoder = format.encoding().map(|encoding| Encoder {
        encoding,
        vigil_pid: under_vigil,
    });
    let _ = SETUP.set(Setup {
        verbosity,
        encoder,
        under_vigil,
    });
    VERBOSITY.store(verbosity, Ordering::Relaxed);
    let _ = OUTPUTS.set(find_outputs());
}

/// How logging was set up; `None` before `init`.
fn setup() -> Option<Setup> {
    #[cfg(test)]
    if let Some(setup) = capture::setup() {
        return Some(setup);
    }
    SETUP.get().copied()
}

/// Whether a line at `level` is shown: the verbosity is high enough (and,
/// for `emit` to write it, logging is set up).
#[inline(always)]
pub fn shown(level: Level) -> bool {
    #[cfg(test)]
    if let Some(setup) = capture::setup() {
        return level.verbosity() <= setup.verbosity;
    }
    level.verbosity() <= VERBOSITY.load(Ordering::Relaxed)
}

/// The encoder of records, `None` for text (or before `init`).
pub fn encoder() -> Option<Encoder> {
    setup().and_then(|setup| setup.encoder)
}

/// The wall clock, for records.
pub fn wall_clock() -> Timestamp {
    #[cfg(test)]
    if let Some(time) = capture::time() {
        return time;
    }
    Timestamp::now()
}

/// Logs one event: `msg` is the text line's words (after `vigil: ` and the
/// level's tag); `fields` adds the event's facts to its record. Nothing is
/// formatted or built unless the line is shown, and the record only in the
/// structured formats.
///
/// ```ignore
/// logging::emit(Level::Info, "started", format_args!("started {command} as pid {pid}"),
///     |r| r.field("command", Argv(argv)).field("pid", pid));
/// ```
#[inline(always)]
pub fn emit<'a>(
    level: Level,
    event: &'static str,
    msg: fmt::Arguments<'_>,
    fields: impl FnOnce(Record<'a>) -> Record<'a>,
) {
    if shown(level) {
        emit_shown(level, event, msg, fields);
    }
}

/// `emit`, once the level is known to be shown. Never inlined: the line it
/// puts together on the stack (`TextLine`, a page) would otherwise be in
/// the frame of every caller, the forwarding path's included, whose first
/// run would then fault in fresh stack pages for a line it does not write.
#[inline(never)]
fn emit_shown<'a>(
    level: Level,
    event: &'static str,
    msg: fmt::Arguments<'_>,
    fields: impl FnOnce(Record<'a>) -> Record<'a>,
) {
    let Some(setup) = setup() else {
        return;
    };
    match &setup.encoder {
        None => text_line(setup.under_vigil, level, msg, write_line),
        Some(encoder) => {
            let record = fields(record(level, event, fmt::format(msg)));
            write_record(encoder, &record);
        }
    }
}

/// A record of `event` at `level`, stamped now.
pub fn record<'a>(level: Level, event: &'static str, msg: String) -> Record<'a> {
    Record::stamped(level.record_level(), event, msg, wall_clock())
}

/// Encodes `record` into the reused line and writes it.
fn write_record(encoder: &Encoder, record: &Record<'_>) {
    LINE.with(|line| match line.try_borrow_mut() {
        Ok(mut line) => {
            encoder.line(record, LINE_MAX, &mut line);
            write_line(&line);
        }
        Err(_) => {
            let mut line = Vec::new();
            encoder.line(record, LINE_MAX, &mut line);
            write_line(&line);
        }
    });
}

/// A text line at `level` whose message `render` puts together piece by
/// piece (`text::Out`), without `core::fmt`: the exit report's way, for
/// the text format (under `--log-format`, the message is made into a
/// string for the record). Never inlined, as `emit_shown`.
#[inline(never)]
pub fn emit_text(level: Level, event: &'static str, render: impl FnOnce(&mut dyn Out)) {
    let Some(setup) = setup().filter(|_| shown(level)) else {
        return;
    };
    if setup.encoder.is_some() {
        let mut msg = String::new();
        render(&mut msg);
        return emit_shown(level, event, format_args!("{msg}"), |r| r);
    }
    let mut line = TextLine::new();
    line.vigil_prefix(setup.under_vigil, level);
    render(&mut line);
    write_line(line.finish());
}

/// Writes one whole line (a record, encoded) to stderr, as every line is
/// written: without blocking while vigil supervises, patiently at the end.
pub fn write_line(line: &[u8]) {
    #[cfg(test)]
    if capture::line(line) {
        return;
    }
    Stderr::write(line);
}

/// Writes one line straight to stderr before logging is set up (a usage
/// error, a start-up failure), in `format`: the text line `vigil: error:
/// MSG`, or the record `fields` builds. Returns the line, newline included,
/// for the termination log.
pub fn early<'a>(
    format: Format,
    level: Level,
    event: &'static str,
    msg: &str,
    fields: impl FnOnce(Record<'a>) -> Record<'a>,
) -> Vec<u8> {
    let line = match format.encoding() {
        None => text_line(None, level, format_args!("{msg}"), <[u8]>::to_vec),
        Some(encoding) => {
            let encoder = Encoder {
                encoding,
                vigil_pid: None,
            };
            let record = fields(record(level, event, msg.to_string()));
            let mut line = Vec::new();
            encoder.line(&record, LINE_MAX, &mut line);
            line
        }
    };
    write_line(&line);
    line
}

/// From now on, log lines wait for room in a full stderr, `PATIENCE` in all
/// counted from the first call: the deadline warnings and the exit report,
/// once everything vigil supervised is ended or being killed.
pub fn final_lines() {
    PATIENT_UNTIL.get_or_init(|| Instant::now() + PATIENCE);
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

/// vigil's stdout and stderr, those that are pipes or terminals, each once
/// (with `2>&1` both are the same pipe): looked at when logging is set up,
/// so that the exit's look at them is one `ioctl` each.
static OUTPUTS: OnceLock<Vec<Output>> = OnceLock::new();

/// One of vigil's outputs that a reader empties.
#[derive(Clone, Copy, Debug)]
struct Output {
    fd: libc::c_int,
    /// A terminal (`TIOCOUTQ`: bytes it has yet to send), else a pipe
    /// (`FIONREAD`: bytes nobody has read yet).
    terminal: bool,
}

impl Output {
    /// What is left to wait for: a terminal's unsent bytes; a pipe's unread
    /// ones, unless they fit in one read or nobody reads the pipe any more
    /// (then nobody ever will).
    fn left(self) -> usize {
        let request = if self.terminal {
            libc::TIOCOUTQ
        } else {
            libc::FIONREAD
        };
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD and TIOCOUTQ write one int into `n`, which is live.
        if unsafe { libc::ioctl(self.fd, request, &mut n) } != 0 {
            return 0;
        }
        let n = usize::try_from(n).unwrap_or(0);
        if n == 0 || (!self.terminal && n <= PIPE_BUF) {
            return 0;
        }
        let mut fds = [libc::pollfd {
            fd: self.fd,
            events: libc::POLLOUT,
            revents: 0,
        }];
        // SAFETY: poll reads and writes the one pollfd in `fds`, which is live.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 1, 0) };
        if ready < 0 || fds[0].revents & (libc::POLLERR | libc::POLLHUP) != 0 {
            return 0;
        }
        n
    }
}

/// Looks at stdout and stderr once, for `let_readers_catch_up`.
fn find_outputs() -> Vec<Output> {
    let mut seen: Vec<(u64, u64)> = Vec::new();
    let mut outputs = Vec::new();
    for fd in [libc::STDOUT_FILENO, libc::STDERR_FILENO] {
        let Some((id, kind)) = file_of(fd) else {
            continue;
        };
        // SAFETY: isatty takes a plain integer.
        let terminal = kind == libc::S_IFCHR && unsafe { libc::isatty(fd) } == 1;
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
    let outputs = OUTPUTS.get_or_init(find_outputs);
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

/// The file behind one of vigil's descriptors: its (device, inode), which
/// tell two descriptors or a path of the same file, and its type
/// (`S_IFMT` bits). Read with the raw call, not through `io::stdout()` or
/// `io::stderr()`, whose first use sets up std's buffered handle: this runs
/// on the way out.
pub fn file_of(fd: libc::c_int) -> Option<((u64, u64), libc::mode_t)> {
    // SAFETY: an all-zero stat is a valid value to be written into.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes one stat into `st`, which is live; fd is a
    // plain integer (a closed one is EBADF).
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return None;
    }
    // dev_t and ino_t are narrower than u64 on some 32-bit C libraries.
    #[allow(clippy::unnecessary_cast)]
    let id = (st.st_dev as u64, st.st_ino as u64);
    Some((id, st.st_mode & libc::S_IFMT))
}

/// vigil's prefix (`TextLine::vigil_prefix`) and `message` as one line
/// that fits in `PIPE_BUF` bytes, newline included (see `TextLine`),
/// handed to `with`: every text line vigil writes is made here, but the
/// exit report's (`emit_text`).
fn text_line<R>(
    under_vigil: Option<u32>,
    level: Level,
    message: fmt::Arguments<'_>,
    with: impl FnOnce(&[u8]) -> R,
) -> R {
    let mut line = TextLine::new();
    line.vigil_prefix(under_vigil, level);
    let _ = line.write_fmt(message);
    with(line.finish())
}

/// One text line, put together on the stack: a prefix, then the message
/// with its control characters escaped as it comes (`text::one_line`), so
/// that it stays one line; a message too long for one pipe write is cut,
/// and ends ` [...]`.
struct TextLine {
    /// Room for one pipe write, of which only the first `len` bytes are
    /// ever written or read. The rest is left as it is: zeroing the page
    /// for each line was a quarter of the exit report's instructions, and
    /// wrote 64 cache lines where a line fills four.
    bytes: [MaybeUninit<u8>; PIPE_BUF],
    len: usize,
    /// Something did not fit.
    cut: bool,
}

impl TextLine {
    const CUT: &'static [u8] = b" [...]";

    fn new() -> TextLine {
        TextLine {
            bytes: [MaybeUninit::uninit(); PIPE_BUF],
            len: 0,
            cut: false,
        }
    }

    /// How every line of vigil's log begins: `vigil: warning: `, or
    /// `vigil[42]: ` under another vigil (its pid in this one's namespace).
    fn vigil_prefix(&mut self, under_vigil: Option<u32>, level: Level) {
        match under_vigil {
            Some(pid) => {
                self.push(b"vigil[");
                self.push(decimal(pid.into(), &mut [0; 20]).as_bytes());
                self.push(b"]: ");
            }
            None => self.push(b"vigil: "),
        }
        self.push(level.tag().as_bytes());
    }

    /// Copies `bytes` as far as they fit, the newline's byte kept free.
    fn push(&mut self, bytes: &[u8]) {
        let room = PIPE_BUF - 1 - self.len;
        let n = bytes.len().min(room);
        if let Some(to) = self.bytes.get_mut(self.len..self.len + n) {
            // SAFETY: `to` is `n` bytes long and `bytes` at least that
            // (n <= bytes.len()); a buffer owned by this line cannot
            // overlap a slice borrowed from elsewhere.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), to.as_mut_ptr().cast(), n) };
            self.len += n;
        }
        self.cut |= n < bytes.len();
    }

    /// The bytes written so far.
    fn written(&self) -> &[u8] {
        let len = self.len.min(PIPE_BUF);
        // SAFETY: `len` only ever moves past bytes that `push` or `finish`
        // has just written, so the first `len` (at most the buffer's size)
        // are initialised; MaybeUninit<u8> is laid out as u8.
        unsafe { std::slice::from_raw_parts(self.bytes.as_ptr().cast(), len) }
    }

    /// The whole line, newline included: a cut one ends ` [...]`, cut
    /// itself on a character's boundary.
    fn finish(&mut self) -> &[u8] {
        if self.cut {
            self.len = char_start(self.written(), PIPE_BUF - 1 - Self::CUT.len());
            self.push(Self::CUT);
        }
        if let Some(last) = self.bytes.get_mut(self.len) {
            last.write(b'\n');
            self.len += 1;
        }
        self.written()
    }
}

/// A message's words: escaped as they are copied.
impl fmt::Write for TextLine {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        one_line_pieces(text, |piece| self.push(piece.as_bytes()));
        Ok(())
    }
}

/// A message put together piece by piece (the exit report): vigil's words
/// copied, the rest escaped.
impl Out for TextLine {
    fn words(&mut self, words: &str) {
        self.push(words.as_bytes());
    }

    fn text(&mut self, text: &str) {
        one_line_pieces(text, |piece| self.push(piece.as_bytes()));
    }
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

    /// Writes one line, at most `PIPE_BUF` bytes of it, if there is room.
    /// Closed, broken or full: the line is lost, vigil goes on.
    fn write(line: &[u8]) {
        if !Self::has_room() {
            return;
        }
        let len = line.len().min(PIPE_BUF);
        // SAFETY: write reads `len` bytes from `line`, which is at least that long.
        unsafe { libc::write(libc::STDERR_FILENO, line.as_ptr().cast(), len) };
    }
}

/// The unit tests' view of the log: on their own thread, lines are kept
/// (not written), in the format and at the verbosity a test chose, stamped
/// with a fixed time, so that a test sees exactly what vigil would write.
#[cfg(test)]
pub mod capture {
    use std::cell::{Cell, RefCell};

    use super::{Encoder, Format, Setup, Timestamp};

    thread_local! {
        static SETUP: Cell<Option<Setup>> = const { Cell::new(None) };
        static TIME: Cell<Option<Timestamp>> = const { Cell::new(None) };
        static LINES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    }

    /// From now on, this thread's lines are kept: in `format`, at
    /// `verbosity`, every record stamped `time`.
    pub fn start(format: Format, verbosity: u8, time: Timestamp) {
        let encoder = format.encoding().map(|encoding| Encoder {
            encoding,
            vigil_pid: None,
        });
        SETUP.with(|s| {
            s.set(Some(Setup {
                verbosity,
                encoder,
                under_vigil: None,
            }))
        });
        TIME.with(|t| t.set(Some(time)));
        LINES.with(|l| l.borrow_mut().clear());
    }

    /// The lines kept so far, taken.
    pub fn take() -> Vec<String> {
        LINES.with(|l| std::mem::take(&mut *l.borrow_mut()))
    }

    pub(super) fn setup() -> Option<Setup> {
        SETUP.with(Cell::get)
    }

    pub(super) fn time() -> Option<Timestamp> {
        TIME.with(Cell::get)
    }

    /// Keeps `line` when this thread captures; whether it did.
    pub(super) fn line(line: &[u8]) -> bool {
        if setup().is_none() {
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
            text_line(None, level, format_args!("{message}"), |l| {
                String::from_utf8(l.to_vec()).expect("a line is UTF-8")
            })
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
