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
//! A record is built once, from an `event::Event`, and borrows what it
//! shows (the command, process names): its fields are a flat list in one
//! `Vec`, so a field costs no allocation of its own. Facts that appear in
//! several events (a process, an ending, a hook, a signal's sender)
//! implement `Fields` beside their own definitions (`facts`), so that each
//! is written one way everywhere, and this module depends on nothing else
//! of vigil's but `text`:
//!
//! ```ignore
//! o.field("grace_period", period)     // a Duration: seconds
//!     .list("killed", left.iter())    // [Proc]: [{pid, name}]
//!     .field("listed", true);
//! ```
//!
//! The `text` format is not encoded here: `logging` writes the text line as
//! it always has, and the record carries those same words in `msg`.
//!
//! `encode` turns a record into one line, JSON or logfmt (one walk over
//! its fields, the shortening steps); `json` escapes strings for both;
//! `time` writes instants.
//!
//! Every encoded line fits in `LINE_MAX` bytes, newline included, so that it
//! is one `write` a pipe takes whole (`PIPE_BUF`), like a text line; the
//! termination log has the same bound. A record that would be longer is
//! shortened in fixed steps (`STEPS`), never breaking the JSON or the
//! logfmt, and then says so with `"shortened": true`.

mod encode;
mod json;
mod time;

#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

pub use encode::{Encoder, cut_points};
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
    /// Records, each one JSON object.
    Json,
    /// Records, each `key=value` pairs, nested keys joined with dots.
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
}

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
    pub const fn verbosity(self) -> u8 {
        match self {
            Level::Error => 0,
            Level::Warning | Level::Notice => 1,
            Level::Info => 2,
            Level::Debug => 3,
            Level::Trace => 4,
        }
    }

    /// The level a record says, with the names log pipelines look for
    /// (Loki reads `level`; `warning` and `warn` both count as warnings
    /// there).
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Notice | Level::Info => "info",
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

/// `From` conversions into a `Value`, one per line: the type, then how
/// its value `$v` becomes a `Value`.
macro_rules! values {
    ($($ty:ty, |$v:ident| $value:expr;)*) => {$(
        impl<'a> From<$ty> for Value<'a> {
            fn from($v: $ty) -> Self {
                $value
            }
        }
    )*};
}

values! {
    i32, |n| Value::Int(n.into());
    i64, |n| Value::Int(n);
    u32, |n| Value::UInt(n.into());
    u64, |n| Value::UInt(n);
    usize, |n| Value::UInt(n as u64);
    bool, |b| Value::Bool(b);
    &'a str, |s| Value::Str(Cow::Borrowed(s));
    &'a String, |s| Value::Str(Cow::Borrowed(s));
    String, |s| Value::Str(Cow::Owned(s));
    &'a OsStr, |s| Value::Bytes(s.as_bytes());
    &'a Path, |p| Value::Bytes(p.as_os_str().as_bytes());
    Duration, |d| Value::Secs(d);
    Timestamp, |t| Value::Time(t);
    Word, |word| Value::Word(Cow::Borrowed(word.0));
    Argv<'a>, |argv| Value::Argv(argv.0);
    nix::unistd::Pid, |pid| Value::Int(pid.as_raw().into());
}

/// A name from a fixed set, for `Value::Word`: `Word("exited")`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Word(pub &'static str);

/// A command's words, for `Value::Argv`.
#[derive(Clone, Copy, Debug)]
pub struct Argv<'a>(pub &'a [OsString]);

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
#[derive(Clone, Debug)]
pub struct Record<'a> {
    time: Timestamp,
    level: Level,
    event: &'static str,
    msg: Cow<'a, str>,
    nodes: Vec<Node<'a>>,
}

impl<'a> Record<'a> {
    /// A record of `event`, stamped `time` (when the caller has read the
    /// clock already), with the fields of `facts`.
    pub fn stamped(
        level: Level,
        event: &'static str,
        msg: impl Into<Cow<'a, str>>,
        time: Timestamp,
        facts: &'a (impl Fields + ?Sized),
    ) -> Record<'a> {
        let mut nodes = Vec::new();
        facts.fields(&mut Obj { nodes: &mut nodes });
        Record {
            time,
            level,
            event,
            msg: msg.into(),
            nodes,
        }
    }
}

/// The fields of one object being built: the record's top level, or a
/// nested object or list item, kept in the record's list of fields.
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

    pub fn object(&mut self, key: &'static str, facts: &'a (impl Fields + ?Sized)) -> &mut Self {
        self.object_with(key, |o| facts.fields(o))
    }

    /// Adds an object when there are facts: an unknown fact is left out,
    /// never written as `null`.
    pub fn opt_object(&mut self, key: &'static str, facts: Option<&'a impl Fields>) -> &mut Self {
        if let Some(facts) = facts {
            self.object(key, facts);
        }
        self
    }

    pub fn object_with(
        &mut self,
        key: &'static str,
        build: impl FnOnce(&mut Obj<'_, 'a>),
    ) -> &mut Self {
        self.open(key, false, |o| {
            build(o);
            0
        })
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
        self.open(key, true, |list| {
            let mut len = 0;
            for item in items {
                list.object_with("", |o| build(o, item));
                len += 1;
            }
            len
        })
    }

    pub fn flatten(&mut self, facts: &'a (impl Fields + ?Sized)) -> &mut Self {
        facts.fields(self);
        self
    }

    /// Adds an object or a list under `key`, whose members `build` adds
    /// and whose items it counts.
    fn open(
        &mut self,
        key: &'static str,
        list: bool,
        build: impl FnOnce(&mut Obj<'_, 'a>) -> usize,
    ) -> &mut Self {
        let at = self.nodes.len();
        self.nodes.push(Node::Open {
            key,
            list,
            end: 0,
            len: 0,
        });
        let items = build(&mut Obj { nodes: self.nodes });
        let here = self.nodes.len();
        if let Some(Node::Open { end, len, .. }) = self.nodes.get_mut(at) {
            *end = here;
            *len = items;
        }
        self
    }
}
