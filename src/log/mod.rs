//! vigil's log: everything vigil says, from what happened to where it is
//! written. The room's files are its stages:
//!
//! - what happened: `event.rs`, one row per event, made of the plain
//!   facts of `facts/` (signals and senders, processes and endings, hooks,
//!   the stop, memory counts, probes), each with its words and fields;
//! - how it is written: a text line here (`vigil: warning: ...`), or a
//!   record (`format/`: the fields, JSON, logfmt, RFC 3339 times);
//! - where it goes: stderr (`stderr.rs`), and for the lines that say how
//!   vigil ended, the termination log (`termlog.rs`);
//! - the exit report (`report/`): folded from the events the supervisor
//!   emits (its `Ledger`), written as one more event at the end.
//!
//! The one `Logger` is set once at start (`init`); nothing else about the
//! output is global. Callers say what happened (an `Event`) and never
//! which format is in use. A record is built only when its line is shown,
//! and only in the structured formats; the text line's words are its
//! `msg`. The termination log gets the lines that explain how vigil ended
//! in the same format (`emit_final`).
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

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub mod event;
pub mod facts;
pub mod format;
pub mod report;
mod stderr;
mod termlog;

/// The checker of records against docs/logging-schema.json, shared with
/// the integration tests.
#[cfg(test)]
#[path = "../../tests/it/common/check.rs"]
pub mod check;

use crate::text::{char_start, one_line_pieces};
use event::{Event, Level};
use format::{Encoder, Format, LINE_MAX, Record, Timestamp};

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
    /// once (with `2>&1` both are the same pipe), for the wait at exit:
    /// found by `init`.
    outputs: Vec<stderr::Output>,
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
            encoder: (format != Format::Text).then_some(Encoder {
                format,
                vigil_pid: under_vigil,
            }),
            under_vigil,
            termination_log,
            termination_log_failed: AtomicBool::new(false),
            patient_until: OnceLock::new(),
            outputs: Vec::new(),
        }
    }

    fn shows(&self, level: Level) -> bool {
        level.verbosity() <= self.verbosity
    }

    /// `event` as this logger writes it: a text line (after the event's
    /// heading), or its record.
    fn line(&self, event: &Event<'_>) -> Vec<u8> {
        let level = event.level();
        // Room for a usual line (an exit report's is a few hundred bytes)
        // from the start, rather than grown a few bytes at a time.
        let mut msg = String::with_capacity(512);
        // The exit report's heading, which the termination log, holding
        // the words alone, does without.
        if let Event::Exit { .. } = event {
            msg.push_str("exit report: ");
        }
        let _ = write!(msg, "{event}");
        let Some(encoder) = &self.encoder else {
            return text_line(self.under_vigil, level, &msg);
        };
        let record = Record::stamped(level, event.name(), msg, wall_clock(), event);
        let mut line = Vec::new();
        encoder.line(&record, LINE_MAX, &mut line);
        line
    }

    /// Writes one whole line to stderr: without blocking while vigil
    /// supervises, patiently at the end.
    fn write(&self, line: &[u8]) {
        #[cfg(test)]
        if capture::line(line) {
            return;
        }
        stderr::write(line, self.patient_until.get().copied());
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

/// Sets the one logger up, once, at start, and looks at stdout and stderr
/// for the wait at exit.
pub fn init(mut logger: Logger) {
    logger.outputs = stderr::find_outputs();
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
pub fn emit(event: &Event<'_>) {
    with(|l| l.emit(event));
}

/// Logs the event that says how vigil ends (the exit report, or why
/// nothing could start), and leaves it in the termination log as well,
/// whatever the verbosity: the log line has the event's heading (`exit
/// report: `), the termination log's text the words alone, and a record is
/// the same bytes in both.
pub fn emit_final(event: &Event<'_>) {
    with(|l| {
        let logged = l.shows(event.level());
        if !logged && l.termination_log.is_none() {
            return;
        }
        let line = l.line(event);
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
pub fn provisional(event: &Event<'_>) {
    with(|l| {
        if l.termination_log.is_none() && !cfg!(test) {
            return;
        }
        let line = match l.encoder {
            Some(_) => l.line(event),
            None => event.to_string().into_bytes(),
        };
        #[cfg(test)]
        capture::provisional(&line);
        if let Some(path) = &l.termination_log {
            l.tell(path, termlog::write_provisional(path, &line));
        }
    });
}

/// Writes one line straight to stderr before the logger is set up (a
/// usage error, a start-up failure), in `format`: the text line `vigil:
/// error: MSG`, or the event's record. The same goes to
/// `termination_log`, the one the command line or the environment most
/// likely meant (`cli::termination_log_after`), unless that is an
/// executable file: a command line that lost the value of its
/// `--termination-log` took the program for it.
pub fn early(format: Format, termination_log: Option<&Path>, event: Event<'_>) {
    let logger = Logger::new(Level::Trace.verbosity(), format, None, None);
    let line = logger.line(&event);
    logger.write(&line);
    // The error stays one line: a termination log that cannot be written
    // goes unsaid here.
    if let Some(path) = termination_log {
        let _ = termlog::write_usage_error(path, &line);
    }
}

/// At exit: lets whoever reads vigil's stdout and stderr catch up
/// (`stderr::wait_for_readers`).
pub fn let_readers_catch_up() {
    with(|l| stderr::wait_for_readers(&l.outputs));
}

/// From now on, log lines wait for room in a full stderr, `PATIENCE` in all
/// counted from the first call: the deadline warnings and the exit report,
/// once everything vigil supervised is ended or being killed.
pub fn final_lines() {
    with(|l| {
        l.patient_until.get_or_init(|| Instant::now() + PATIENCE);
    });
}

/// vigil's prefix, the level's tag and `message` as one line, with the
/// message's control characters escaped (`text::one_line_pieces`), in at
/// most `LINE_MAX` bytes, newline included: a longer message is cut, on a
/// character's boundary, and ends ` [...]`.
fn text_line(under_vigil: Option<u32>, level: Level, message: &str) -> Vec<u8> {
    let mut line = String::with_capacity(message.len() + 32);
    let _ = match under_vigil {
        Some(pid) => write!(line, "vigil[{pid}]: "),
        None => write!(line, "vigil: "),
    };
    line.push_str(match level {
        Level::Error => "error: ",
        Level::Warning => "warning: ",
        _ => "",
    });
    one_line_pieces(message, |piece| line.push_str(piece));
    const CUT: &str = " [...]";
    if line.len() > LINE_MAX - 1 {
        let keep = char_start(line.as_bytes(), LINE_MAX - 1 - CUT.len());
        line.truncate(keep);
        line.push_str(CUT);
    }
    line.push('\n');
    line.into_bytes()
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
        let logger = Logger::new(verbosity, format, None, None);
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
            String::from_utf8(text_line(None, level, message)).expect("a line is UTF-8")
        };
        let line = whole_line(Level::Warning, &"x".repeat(10_000));
        assert_eq!(line.len(), LINE_MAX);
        assert!(line.ends_with(" [...]\n"), "{}", &line[line.len() - 20..]);
        let short = whole_line(Level::Notice, "hello\nworld");
        assert_eq!(short, "vigil: hello\\nworld\n");
        let wide = whole_line(Level::Notice, &"é".repeat(3000));
        assert!(wide.len() <= LINE_MAX && wide.ends_with(" [...]\n"));
    }
}
