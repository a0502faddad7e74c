//! Structured log records for `--log-format json|logfmt`: what happened
//! (`event`), the words of the text line (`msg`), and the facts as typed
//! fields, encoded as one JSON object or one logfmt line.
//!
//! The schema (field names, types, which are required) is documented in
//! docs/logging.md and held, machine-readable, in docs/logging-schema.json;
//! the tests check every record they build against it.
//!
//! Hand-written rather than serde: vigil is a static PID 1 whose size and
//! start-up matter, and these records need only a small, fixed part of JSON
//! (objects, lists of objects, strings, integers, booleans and decimal
//! seconds), which a small writer covers without serde's generic machinery.
//!
//! A record is built once, at the call site, and borrows what it shows (the
//! command, process names): its fields are a flat list in one `Vec`, so a
//! field costs no allocation of its own. Facts that appear in several
//! events (a process, an ending, a hook, a signal's sender) implement
//! `Fields` (in `facts`), so that each is written one way everywhere:
//!
//! ```ignore
//! Record::new(Level::Warning, "grace_deadline", msg)
//!     .field("grace_period", period)     // a Duration: seconds
//!     .list("killed", &left)             // &[Proc]: [{pid, name}]
//!     .field("listed", true)
//! ```
//!
//! The `text` format is not encoded here: `logging` writes the text line as
//! it always has, and the record carries those same words in `msg`.
//!
//! Every encoded line fits in `LINE_MAX` bytes, newline included, so that it
//! is one `write` a pipe takes whole (`PIPE_BUF`), like a text line; the
//! termination log has the same bound. A record that would be longer is
//! shortened in fixed steps (`STEPS`), never breaking the JSON or the
//! logfmt, and then says so with `"shortened": true`.

mod facts;
mod json;
mod logfmt;
mod time;

#[cfg(test)]
pub mod check;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

pub use facts::{Signal, SignalSender};
pub use time::Timestamp;

/// The version of the schema in docs/logging.md, written in every record
/// (`"schema": 1`). It changes only when a field is removed, renamed,
/// changes its type or becomes required; new events and new optional
/// fields keep it.
pub const SCHEMA: u32 = 1;

/// The longest line vigil writes, newline included: what a pipe takes in
/// one piece (POSIX `PIPE_BUF` on Linux), and what Kubernetes reads of the
/// termination log.
pub const LINE_MAX: usize = 4096;

/// The form of vigil's output, as `--log-format` and `VIGIL_LOG_FORMAT`
/// name it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// `vigil: warning: ...` lines, as ever: written by `logging`.
    #[default]
    Text,
    Json,
    Logfmt,
}

impl Format {
    /// Reads a `--log-format` value. The error names the bad value and what
    /// is accepted, as every usage error does.
    pub fn parse(text: &str) -> Result<Format, String> {
        match text.trim() {
            "text" => Ok(Format::Text),
            "json" => Ok(Format::Json),
            "logfmt" => Ok(Format::Logfmt),
            _ => Err(format!(
                "'{text}' is not a log format: use text, json or logfmt"
            )),
        }
    }

    /// The encoding of records, `None` for text (which `logging` writes).
    pub fn encoding(self) -> Option<Encoding> {
        match self {
            Format::Text => None,
            Format::Json => Some(Encoding::Json),
            Format::Logfmt => Some(Encoding::Logfmt),
        }
    }
}

/// How a record is written as one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// One JSON object.
    Json,
    /// `key=value` pairs, nested keys joined with dots.
    Logfmt,
}

/// A record's level, with the names log pipelines look for (Loki reads
/// `level`; `warning` and `warn` both count as warnings there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Error,
    Warning,
    Info,
    Debug,
    Trace,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Info => "info",
            Level::Debug => "debug",
            Level::Trace => "trace",
        }
    }
}

/// One fact. Strings are borrowed where the call site has them, so that
/// building a record copies nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    Int(i64),
    UInt(u64),
    Bool(bool),
    Str(Cow<'a, str>),
    /// A name from a fixed set (one of the values a schema field lists, a
    /// signal's name): short by construction, and so never cut, even when
    /// a line is shortened. Plain strings may be.
    Word(Cow<'static, str>),
    /// Text from outside that need not be UTF-8 (a path): written as UTF-8,
    /// each byte that is not part of valid UTF-8 as the four characters
    /// `\xHH`.
    Bytes(&'a [u8]),
    /// A command's words, joined and quoted as a shell reads them (as
    /// `shell_words::join` does), byte for byte: bytes that are not UTF-8
    /// are kept, as `\xHH`.
    Argv(&'a [OsString]),
    /// A duration, in seconds with millisecond precision: `1.5`, `0.002`.
    Secs(Duration),
    /// An instant, RFC 3339 in UTC with milliseconds: `2026-12-01T18:06:20.123Z`.
    Time(Timestamp),
}

impl From<i32> for Value<'_> {
    fn from(n: i32) -> Self {
        Value::Int(n.into())
    }
}

impl From<i64> for Value<'_> {
    fn from(n: i64) -> Self {
        Value::Int(n)
    }
}

impl From<u32> for Value<'_> {
    fn from(n: u32) -> Self {
        Value::UInt(n.into())
    }
}

impl From<u64> for Value<'_> {
    fn from(n: u64) -> Self {
        Value::UInt(n)
    }
}

impl From<usize> for Value<'_> {
    fn from(n: usize) -> Self {
        Value::UInt(n as u64)
    }
}

impl From<bool> for Value<'_> {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(s: &'a str) -> Self {
        Value::Str(Cow::Borrowed(s))
    }
}

impl<'a> From<&'a String> for Value<'a> {
    fn from(s: &'a String) -> Self {
        Value::Str(Cow::Borrowed(s))
    }
}

impl From<String> for Value<'_> {
    fn from(s: String) -> Self {
        Value::Str(Cow::Owned(s))
    }
}

impl<'a> From<Cow<'a, str>> for Value<'a> {
    fn from(s: Cow<'a, str>) -> Self {
        Value::Str(s)
    }
}

impl<'a> From<&'a OsStr> for Value<'a> {
    fn from(s: &'a OsStr) -> Self {
        Value::Bytes(s.as_bytes())
    }
}

impl<'a> From<&'a Path> for Value<'a> {
    fn from(p: &'a Path) -> Self {
        Value::Bytes(p.as_os_str().as_bytes())
    }
}

impl From<Duration> for Value<'_> {
    fn from(d: Duration) -> Self {
        Value::Secs(d)
    }
}

impl From<Timestamp> for Value<'_> {
    fn from(t: Timestamp) -> Self {
        Value::Time(t)
    }
}

/// A name from a fixed set, for `Value::Word`: `Word("exited")`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Word(pub &'static str);

impl From<Word> for Value<'_> {
    fn from(word: Word) -> Self {
        Value::Word(Cow::Borrowed(word.0))
    }
}

/// A command's words, for `Value::Argv`.
#[derive(Clone, Copy, Debug)]
pub struct Argv<'a>(pub &'a [OsString]);

impl<'a> From<Argv<'a>> for Value<'a> {
    fn from(argv: Argv<'a>) -> Self {
        Value::Argv(argv.0)
    }
}

/// A type that describes itself as fields: a process, an ending, a hook's
/// record. `Record::object` and `Record::list` take these, so that each
/// fact is written one way wherever it appears.
pub trait Fields {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>);
}

/// One entry of a record's flat list of fields. An object or a list is an
/// `Open` followed by its members; `end` is the index just past them, so
/// the encoders can skip a member whole when shortening.
#[derive(Clone, Debug)]
enum Node<'a> {
    Scalar {
        key: &'static str,
        value: Value<'a>,
    },
    /// An object (`list: false`) or a list of objects (`list: true`, whose
    /// members are item objects with an empty key). `len` counts a list's
    /// items.
    Open {
        key: &'static str,
        list: bool,
        end: usize,
        len: usize,
    },
}

/// A structured log record: `time`, `level`, `event`, `msg`, then its
/// fields in the order they were added.
///
/// ```ignore
/// Record::new(Level::Warning, "grace_deadline", &msg)
///     .field("grace_period", period)
///     .list("killed", &left)
///     .field("listed", true)
/// ```
#[derive(Clone, Debug)]
pub struct Record<'a> {
    time: Timestamp,
    level: Level,
    event: &'static str,
    msg: Cow<'a, str>,
    nodes: Vec<Node<'a>>,
}

impl<'a> Record<'a> {
    /// A record of `event`, stamped now. `msg` is the text line's words
    /// (after `vigil: ` and the level's tag).
    pub fn new(level: Level, event: &'static str, msg: impl Into<Cow<'a, str>>) -> Record<'a> {
        Record {
            time: Timestamp::now(),
            level,
            event,
            msg: msg.into(),
            // Enough for most events without growing; the exit report grows
            // it once or twice.
            nodes: Vec::with_capacity(8),
        }
    }

    /// The same record stamped at `time` (the tests' fixed instants).
    pub fn at(mut self, time: Timestamp) -> Record<'a> {
        self.time = time;
        self
    }

    pub fn time(&self) -> Timestamp {
        self.time
    }

    pub fn level(&self) -> Level {
        self.level
    }

    pub fn event(&self) -> &'static str {
        self.event
    }

    pub fn msg(&self) -> &str {
        &self.msg
    }

    fn obj(&mut self) -> Obj<'_, 'a> {
        Obj {
            nodes: &mut self.nodes,
        }
    }

    /// Adds a field.
    pub fn field(mut self, key: &'static str, value: impl Into<Value<'a>>) -> Record<'a> {
        self.obj().field(key, value);
        self
    }

    /// Adds a field holding one of the values the schema lists for it (a
    /// `Word`, which shortening never cuts).
    pub fn word(mut self, key: &'static str, word: &'static str) -> Record<'a> {
        self.obj().word(key, word);
        self
    }

    /// Adds a field when there is a value: an unknown fact is left out,
    /// never written as `null`.
    pub fn opt<V: Into<Value<'a>>>(mut self, key: &'static str, value: Option<V>) -> Record<'a> {
        self.obj().opt(key, value);
        self
    }

    /// Adds an object describing `facts`.
    pub fn object(mut self, key: &'static str, facts: &'a impl Fields) -> Record<'a> {
        self.obj().object(key, facts);
        self
    }

    /// Adds an object whose fields `build` adds.
    pub fn object_with(
        mut self,
        key: &'static str,
        build: impl FnOnce(&mut Obj<'_, 'a>),
    ) -> Record<'a> {
        self.obj().object_with(key, build);
        self
    }

    /// Adds a list with one object per item.
    pub fn list<T: Fields + 'a>(
        mut self,
        key: &'static str,
        items: impl IntoIterator<Item = &'a T>,
    ) -> Record<'a> {
        self.obj().list(key, items);
        self
    }

    /// Adds a list with one object per item, whose fields `build` adds.
    pub fn list_with<T>(
        mut self,
        key: &'static str,
        items: impl IntoIterator<Item = T>,
        build: impl FnMut(&mut Obj<'_, 'a>, T),
    ) -> Record<'a> {
        self.obj().list_with(key, items, build);
        self
    }

    /// Adds the fields of `facts` at the top level (a hook's event has the
    /// hook's own fields).
    pub fn flatten(mut self, facts: &'a impl Fields) -> Record<'a> {
        facts.fields(&mut self.obj());
        self
    }

    /// Lets `build` add fields: for fields that depend on conditions, where
    /// a chain of calls would not read well.
    pub fn with(mut self, build: impl FnOnce(&mut Obj<'_, 'a>)) -> Record<'a> {
        build(&mut self.obj());
        self
    }
}

/// The fields of one object being built: the record's top level, or a
/// nested object or list item.
pub struct Obj<'r, 'a> {
    nodes: &'r mut Vec<Node<'a>>,
}

impl<'a> Obj<'_, 'a> {
    pub fn field(&mut self, key: &'static str, value: impl Into<Value<'a>>) -> &mut Self {
        self.nodes.push(Node::Scalar {
            key,
            value: value.into(),
        });
        self
    }

    pub fn word(&mut self, key: &'static str, word: &'static str) -> &mut Self {
        self.field(key, Word(word))
    }

    pub fn opt<V: Into<Value<'a>>>(&mut self, key: &'static str, value: Option<V>) -> &mut Self {
        if let Some(value) = value {
            self.field(key, value);
        }
        self
    }

    pub fn object(&mut self, key: &'static str, facts: &'a impl Fields) -> &mut Self {
        self.object_with(key, |o| facts.fields(o))
    }

    pub fn object_with(
        &mut self,
        key: &'static str,
        build: impl FnOnce(&mut Obj<'_, 'a>),
    ) -> &mut Self {
        let at = self.open(key, false);
        build(&mut Obj {
            nodes: &mut *self.nodes,
        });
        self.close(at, 0);
        self
    }

    pub fn list<T: Fields + 'a>(
        &mut self,
        key: &'static str,
        items: impl IntoIterator<Item = &'a T>,
    ) -> &mut Self {
        self.list_with(key, items, |o, item| item.fields(o))
    }

    pub fn list_with<T>(
        &mut self,
        key: &'static str,
        items: impl IntoIterator<Item = T>,
        mut build: impl FnMut(&mut Obj<'_, 'a>, T),
    ) -> &mut Self {
        let at = self.open(key, true);
        let mut len = 0;
        for item in items {
            let item_at = self.open("", false);
            build(
                &mut Obj {
                    nodes: &mut *self.nodes,
                },
                item,
            );
            self.close(item_at, 0);
            len += 1;
        }
        self.close(at, len);
        self
    }

    pub fn flatten(&mut self, facts: &'a impl Fields) -> &mut Self {
        facts.fields(self);
        self
    }

    fn open(&mut self, key: &'static str, list: bool) -> usize {
        self.nodes.push(Node::Open {
            key,
            list,
            end: 0,
            len: 0,
        });
        self.nodes.len() - 1
    }

    /// Ends the object or list opened at `at`: its members are what was
    /// added since.
    fn close(&mut self, at: usize, items: usize) {
        let here = self.nodes.len();
        if let Some(Node::Open { end, len, .. }) = self.nodes.get_mut(at) {
            *end = here;
            *len = items;
        }
    }
}

/// Writes records as lines in one encoding. `vigil_pid` is set exactly when
/// the text lines would start `vigil[PID]:` (a vigil under another vigil),
/// so that the two are told apart in one log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoder {
    pub encoding: Encoding,
    pub vigil_pid: Option<u32>,
}

/// How much one shortening step keeps. Strings longer than their cap are
/// cut in the middle (head and tail kept, with ` [... N bytes in all ...] `
/// between, as the text report does); lists keep their first items, and a
/// `KEY_more` field after the list counts the rest. No field is ever left
/// out: a required field stays, and `status`, `ending`, `level` and `event`
/// keep their values (only strings inside them can be cut).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Step {
    /// The longest string value kept whole, in bytes before escaping.
    string_max: usize,
    /// The same for `msg`, which holds the whole text line.
    msg_max: usize,
    /// The most items kept in a list.
    list_max: usize,
}

/// The shortening steps, tried in order until the line fits. The first
/// keeps everything; the caps of the second are those of the text report
/// (a command of 200 bytes, 20 processes per list). The last leaves only
/// what is bounded by the number of fields, which vigil's code fixes: it
/// fits every record the schema describes, each field at its longest (the
/// tests check that, event by event).
const STEPS: [Step; 4] = [
    Step {
        string_max: usize::MAX,
        msg_max: usize::MAX,
        list_max: usize::MAX,
    },
    Step {
        string_max: 200,
        msg_max: 1024,
        list_max: 20,
    },
    Step {
        string_max: 64,
        msg_max: 256,
        list_max: 5,
    },
    Step {
        string_max: 16,
        msg_max: 64,
        list_max: 0,
    },
];

impl Encoder {
    /// Writes `record` into `out` (cleared first) as one line ending in a
    /// newline, at most `limit` bytes long, shortened if need be.
    ///
    /// Shortening re-encodes with the next `STEPS` entry until the line
    /// fits: only a record too long to begin with pays for it. With `limit`
    /// at `LINE_MAX` the last step always fits; with a smaller limit it may
    /// not, and is written all the same: the shortest line there is.
    pub fn line(&self, record: &Record<'_>, limit: usize, out: &mut Vec<u8>) {
        for (i, step) in STEPS.iter().enumerate() {
            let last = i + 1 == STEPS.len();
            // The last step is written whole, whatever its length.
            self.encode(record, step, if last { usize::MAX } else { limit }, out);
            if out.len() <= limit {
                return;
            }
        }
    }

    /// Writes `record` into `out` (cleared first) as `step` allows. Gives
    /// up as soon as the line is longer than `limit`: that step has failed,
    /// the next will shorten more, and writing the rest would only cost
    /// time.
    fn encode(&self, record: &Record<'_>, step: &Step, limit: usize, out: &mut Vec<u8>) {
        out.clear();
        // A string longer than the whole line cannot be kept whole: cutting
        // it there changes nothing but the work of finding that out.
        let step = &Step {
            string_max: step.string_max.min(limit),
            msg_max: step.msg_max.min(limit),
            ..*step
        };
        let mut sink = Sink::new(self.encoding, out, limit);
        sink.header(record, step);
        let shortened = walk(&record.nodes, 0, record.nodes.len(), step, &mut sink);
        let cut = sink.cut_any();
        sink.trailer(shortened || cut, self.vigil_pid);
    }
}

/// Writes the members of `nodes[from..to]` to `sink`, as `step` allows.
/// Whether a list was cut; cut strings the sink notes itself.
fn walk(nodes: &[Node<'_>], from: usize, to: usize, step: &Step, sink: &mut Sink<'_>) -> bool {
    let mut shortened = false;
    let mut i = from;
    while i < to {
        if sink.over() {
            break;
        }
        let Some(node) = nodes.get(i) else {
            break;
        };
        match node {
            Node::Scalar { key, value } => {
                sink.scalar(key, value, step.string_max);
                i += 1;
            }
            Node::Open {
                key,
                list: false,
                end,
                ..
            } => {
                sink.open_object(key);
                shortened |= walk(nodes, i + 1, *end, step, sink);
                sink.close_object();
                i = (*end).max(i + 1);
            }
            Node::Open {
                key,
                list: true,
                end,
                len,
            } => {
                let shown = (*len).min(step.list_max);
                sink.open_list(key, shown);
                let mut item = i + 1;
                for n in 0..shown {
                    let Some(Node::Open { end: item_end, .. }) = nodes.get(item) else {
                        break;
                    };
                    sink.open_item(n);
                    shortened |= walk(nodes, item + 1, *item_end, step, sink);
                    sink.close_item();
                    item = (*item_end).max(item + 1);
                }
                sink.close_list();
                if shown < *len {
                    sink.more(key, *len - shown);
                    shortened = true;
                }
                i = (*end).max(i + 1);
            }
        }
    }
    shortened
}

/// The encoder of one line: JSON or logfmt, and the line's limit.
struct Sink<'o> {
    writer: Writer<'o>,
    limit: usize,
}

enum Writer<'o> {
    Json(json::Writer<'o>),
    Logfmt(logfmt::Writer<'o>),
}

impl<'o> Sink<'o> {
    fn new(encoding: Encoding, out: &'o mut Vec<u8>, limit: usize) -> Sink<'o> {
        let writer = match encoding {
            Encoding::Json => Writer::Json(json::Writer::new(out)),
            Encoding::Logfmt => Writer::Logfmt(logfmt::Writer::new(out)),
        };
        Sink { writer, limit }
    }

    /// Whether the line is longer than its limit already.
    fn over(&self) -> bool {
        let written = match &self.writer {
            Writer::Json(w) => w.written(),
            Writer::Logfmt(w) => w.written(),
        };
        written > self.limit
    }

    /// Whether the writer cut a string.
    fn cut_any(&self) -> bool {
        match &self.writer {
            Writer::Json(w) => w.text.cut,
            Writer::Logfmt(w) => w.text.cut,
        }
    }
}

macro_rules! delegate {
    ($(fn $name:ident(&mut self $(, $arg:ident: $ty:ty)*);)*) => {
        impl Sink<'_> {
            $(fn $name(&mut self $(, $arg: $ty)*) {
                match &mut self.writer {
                    Writer::Json(w) => w.$name($($arg),*),
                    Writer::Logfmt(w) => w.$name($($arg),*),
                }
            })*
        }
    };
}

delegate! {
    fn header(&mut self, record: &Record<'_>, step: &Step);
    fn scalar(&mut self, key: &str, value: &Value<'_>, max: usize);
    fn open_object(&mut self, key: &str);
    fn close_object(&mut self);
    fn open_list(&mut self, key: &str, shown: usize);
    fn open_item(&mut self, index: usize);
    fn close_item(&mut self);
    fn close_list(&mut self);
    fn more(&mut self, key: &str, n: usize);
    fn trailer(&mut self, shortened: bool, vigil_pid: Option<u32>);
}

/// Text values as the writers put them out: cut to a cap, with invalid
/// UTF-8 and control characters escaped. Shared by both encodings, whose
/// quoted strings escape alike (logfmt readers, Go's and Loki's among them,
/// unquote JSON's escapes).
pub(crate) struct Text {
    /// Set once a string was cut.
    pub cut: bool,
    /// A command rendered before it is escaped (`Value::Argv`), kept to
    /// reuse its allocation within a line.
    scratch: Vec<u8>,
}

impl Text {
    fn new() -> Text {
        Text {
            cut: false,
            scratch: Vec::new(),
        }
    }
}

/// The raw bytes of a text value; `Argv` is rendered into `scratch`.
fn text_bytes<'v>(value: &'v Value<'_>, scratch: &'v mut Vec<u8>) -> Option<&'v [u8]> {
    match value {
        Value::Str(s) | Value::Word(s) => Some(s.as_bytes()),
        Value::Bytes(b) => Some(b),
        Value::Argv(words) => {
            scratch.clear();
            join_words(words, scratch);
            Some(scratch.as_slice())
        }
        _ => None,
    }
}

/// `shell_words::join`, byte for byte: a word with a character the shell
/// treats specially is put in single quotes (a `'` in it as `'\''`), an
/// empty word is `''`. The special characters are all ASCII, so a word
/// that is not UTF-8 is quoted as it would be if it were.
fn join_words(words: &[OsString], out: &mut Vec<u8>) {
    const SPECIAL: &[u8] = b"|&;<>()$`\\\" \t\n*?[#~=%'";
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        let word = word.as_bytes();
        if word.is_empty() {
            put(out, b"''");
        } else if word.iter().any(|b| SPECIAL.contains(b)) {
            out.push(b'\'');
            for &b in word {
                if b == b'\'' {
                    put(out, b"'\\''");
                } else {
                    out.push(b);
                }
            }
            out.push(b'\'');
        } else {
            put(out, word);
        }
    }
}

/// Where a string longer than `max` bytes is cut: its first two thirds and
/// last third of `max`, moved off the middle of a UTF-8 character.
/// `None` when it is short enough to keep whole.
fn cut_points(bytes: &[u8], max: usize) -> Option<(usize, usize)> {
    if bytes.len() <= max {
        return None;
    }
    let continuation = |i: usize| bytes.get(i).is_some_and(|b| b & 0xc0 == 0x80);
    let mut head = max * 2 / 3;
    let mut tail = bytes.len() - max / 3;
    // At most three steps each: a UTF-8 character is at most four bytes.
    for _ in 0..3 {
        if head > 0 && continuation(head) {
            head -= 1;
        }
        if continuation(tail) {
            tail += 1;
        }
    }
    Some((head, tail))
}

/// A duration in seconds, with milliseconds (truncated) and no trailing
/// zeros: `0`, `1.5`, `0.002`, `10`. Integer arithmetic: floats would bring
/// their formatting code into the binary.
fn write_secs(out: &mut Vec<u8>, d: Duration) {
    write_uint(out, d.as_secs());
    let mut ms = d.subsec_millis();
    if ms == 0 {
        return;
    }
    out.push(b'.');
    let mut digits = 3;
    while ms % 10 == 0 {
        ms /= 10;
        digits -= 1;
    }
    let text = [
        b'0' + (ms / 100 % 10) as u8,
        b'0' + (ms / 10 % 10) as u8,
        b'0' + (ms % 10) as u8,
    ];
    put(out, text.get(3 - digits..).unwrap_or_default());
}

/// Appends `bytes`. Most pieces of a line are a few bytes long (a quote, a
/// key, a number); for those a loop beats the call to the C library's
/// `memcpy` that `extend_from_slice` makes whatever the length.
fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    if bytes.len() <= 16 {
        for &b in bytes {
            out.push(b);
        }
    } else {
        out.extend_from_slice(bytes);
    }
}

/// An unsigned integer in decimal, without `fmt`'s machinery.
fn write_uint(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        if let Some(d) = digits.get_mut(i) {
            *d = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 {
            break;
        }
    }
    put(out, digits.get(i..).unwrap_or_default());
}

fn write_int(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    write_uint(out, n.unsigned_abs());
}

/// A number, boolean or duration as both encodings write it (bare).
/// `false` for a text value or a time, which each encoding writes its own
/// way.
fn write_plain(out: &mut Vec<u8>, value: &Value<'_>) -> bool {
    match value {
        Value::Int(n) => write_int(out, *n),
        Value::UInt(n) => write_uint(out, *n),
        Value::Bool(b) => put(out, if *b { b"true" } else { b"false" }),
        Value::Secs(d) => write_secs(out, *d),
        Value::Time(_) | Value::Str(_) | Value::Word(_) | Value::Bytes(_) | Value::Argv(_) => {
            return false
        }
    }
    true
}
