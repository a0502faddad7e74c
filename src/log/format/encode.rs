//! Encoding a record as one line, JSON or logfmt, within a length limit:
//! one walk over a record's fields that writes either encoding, and the
//! shortening steps.
//!
//! JSON is one object. logfmt is `key=value` pairs separated by spaces; it
//! has no nesting, so a nested field's key is its path joined with dots
//! (`stop.sender.pid=0`), and a list's items are numbered
//! (`grace_kills.0.pid=7`). A list also writes its own key with the number
//! of items shown (`grace_kills=2`), so that an empty list is still there
//! (a grace deadline that found nothing left to kill) and a reader knows
//! how many items to look for. A logfmt value is quoted when it has to be:
//! empty, or holding a space, `=`, `"`, `\`, a control character or bytes
//! that are not UTF-8; inside the quotes it is escaped as a JSON string is,
//! which is what logfmt readers (Go's go-logfmt, and so Loki) unquote.

use std::borrow::Cow;
use std::time::Duration;

use super::json::{escape, is_special};
use super::{Format, Node, Record, SCHEMA, Value, Word};

/// Writes records as lines in one encoding. `vigil_pid` is set exactly when
/// the text lines would start `vigil[PID]:` (a vigil under another vigil),
/// so that the two are told apart in one log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoder {
    /// JSON or logfmt: a text line is the logger's own.
    pub format: Format,
    pub vigil_pid: Option<u32>,
}

/// How much one shortening step keeps. Strings longer than their cap are
/// cut in the middle (head and tail kept, with ` [... N bytes in all ...] `
/// between, as the text report does); lists keep their first items, and a
/// `KEY_more` field after the list counts the rest. No field is ever left
/// out: a required field stays, and `status`, `ending`, `level` and `event`
/// keep their values (only strings inside them can be cut).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Step {
    /// The longest string value kept whole, in bytes before escaping.
    pub(super) string_max: usize,
    /// The same for `msg`, which holds the whole text line.
    pub(super) msg_max: usize,
    /// The most items kept in a list.
    pub(super) list_max: usize,
}

/// The shortening steps, tried in order until the line fits. The first
/// keeps everything; the caps of the second are those of the text report
/// (a command of 200 bytes, 20 processes per list). The last leaves only
/// what is bounded by the number of fields, which vigil's code fixes: it
/// fits every record the schema describes, each field at its longest (the
/// tests check that, event by event).
pub(super) const STEPS: [Step; 4] = [
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
    pub(super) fn encode(&self, record: &Record<'_>, step: &Step, limit: usize, out: &mut Vec<u8>) {
        out.clear();
        // A string longer than the whole line cannot be kept whole: cutting
        // it there changes nothing but the work of finding that out.
        let step = Step {
            string_max: step.string_max.min(limit),
            msg_max: step.msg_max.min(limit),
            ..*step
        };
        let mut line = Line {
            json: self.format == Format::Json,
            out,
            limit,
            step,
            first: true,
            path: Vec::new(),
            shortened: false,
        };
        if line.json {
            line.out.push(b'{');
        }
        let head = [
            ("time", Value::Time(record.time)),
            ("level", Word(record.level.as_str()).into()),
            ("logger", Word("vigil").into()),
            ("event", Word(record.event).into()),
        ];
        for (key, value) in &head {
            line.scalar(key, value, usize::MAX);
        }
        line.scalar("msg", &Value::from(&*record.msg), step.msg_max);
        line.walk(&record.nodes, 0, record.nodes.len());
        if line.shortened {
            line.scalar("shortened", &Value::Bool(true), 0);
        }
        if let Some(pid) = self.vigil_pid {
            line.scalar("vigil_pid", &pid.into(), 0);
        }
        line.scalar("schema", &SCHEMA.into(), 0);
        if line.json {
            line.out.push(b'}');
        }
        line.out.push(b'\n');
    }
}

/// One line being written, in either encoding.
struct Line<'o> {
    json: bool,
    out: &'o mut Vec<u8>,
    limit: usize,
    step: Step,
    /// No member written yet: in JSON, of the object or list being
    /// written (no comma before the next); in logfmt, of the line (no
    /// space).
    first: bool,
    /// logfmt: the key prefix of the object being written, `stop.sender.`.
    path: Vec<u8>,
    /// A string or a list was cut.
    shortened: bool,
}

impl Line<'_> {
    /// Writes the members of `nodes[from..to]`, as the step allows, until
    /// the line is over its limit.
    fn walk(&mut self, nodes: &[Node<'_>], from: usize, to: usize) {
        let mut i = from;
        while i < to && self.out.len() <= self.limit {
            let Some(node) = nodes.get(i) else {
                break;
            };
            match node {
                Node::Scalar { key, value } => self.scalar(key, value, self.step.string_max),
                Node::Open {
                    key,
                    list: false,
                    end,
                    ..
                } => {
                    let mark = self.open(key, key.as_bytes(), b'{');
                    self.walk(nodes, i + 1, *end);
                    self.close(mark, b'}');
                }
                Node::Open {
                    key,
                    list: true,
                    len,
                    ..
                } => self.list(nodes, i, key, *len),
            }
            i = match node {
                Node::Scalar { .. } => i + 1,
                Node::Open { end, .. } => (*end).max(i + 1),
            };
        }
    }

    /// Writes the list opened at `nodes[at]`: its first items, as many as
    /// the step keeps, and how many more there were.
    fn list(&mut self, nodes: &[Node<'_>], at: usize, key: &str, len: usize) {
        let shown = len.min(self.step.list_max);
        if !self.json {
            self.scalar(key, &shown.into(), 0);
        }
        let mark = self.open(key, key.as_bytes(), b'[');
        let mut item = at + 1;
        for n in 0..shown {
            let Some(Node::Open { end: item_end, .. }) = nodes.get(item) else {
                break;
            };
            let item_mark = self.open("", n.to_string().as_bytes(), b'{');
            self.walk(nodes, item + 1, *item_end);
            self.close(item_mark, b'}');
            item = (*item_end).max(item + 1);
        }
        self.close(mark, b']');
        if shown < len {
            self.shortened = true;
            self.scalar(&format!("{key}_more"), &(len - shown).into(), 0);
        }
    }

    /// `,"key":` in JSON (without the comma for an object's first member,
    /// and without the key for a list's item); ` path.key=` in logfmt.
    fn key(&mut self, key: &str) {
        let first = std::mem::replace(&mut self.first, false);
        if self.json {
            if !first {
                self.out.push(b',');
            }
            if !key.is_empty() {
                self.out.push(b'"');
                self.out.extend_from_slice(key.as_bytes());
                self.out.extend_from_slice(b"\":");
            }
        } else {
            if !first {
                self.out.push(b' ');
            }
            self.out.extend_from_slice(&self.path);
            self.out.extend_from_slice(key.as_bytes());
            self.out.push(b'=');
        }
    }

    /// Opens an object or a list under `key`, whose members' logfmt keys
    /// start `segment.`; where the path goes back to, for `close`.
    fn open(&mut self, key: &str, segment: &[u8], bracket: u8) -> usize {
        let mark = self.path.len();
        if self.json {
            self.key(key);
            self.out.push(bracket);
            self.first = true;
        } else {
            self.path.extend_from_slice(segment);
            self.path.push(b'.');
        }
        mark
    }

    fn close(&mut self, mark: usize, bracket: u8) {
        if self.json {
            self.out.push(bracket);
            self.first = false;
        } else {
            self.path.truncate(mark);
        }
    }

    /// One member: a number, boolean or duration bare; text quoted (in
    /// logfmt only when it has to be) and cut to `max` bytes, or not at all
    /// when a `Word`, which shortening never cuts.
    fn scalar(&mut self, key: &str, value: &Value<'_>, max: usize) {
        self.key(key);
        let (text, max): (Cow<'_, [u8]>, usize) = match value {
            Value::Word(s) => (s.as_bytes().into(), usize::MAX),
            Value::Time(t) => (t.to_string().into_bytes().into(), usize::MAX),
            Value::Str(s) => (s.as_bytes().into(), max),
            Value::Bytes(b) => ((*b).into(), max),
            Value::Argv(words) => {
                let mut joined = Vec::new();
                crate::text::shell_join(words, &mut joined);
                (joined.into(), max)
            }
            // Numbers, booleans and durations: bare in both encodings.
            Value::Int(n) => return self.out.extend_from_slice(n.to_string().as_bytes()),
            Value::UInt(n) => return self.out.extend_from_slice(n.to_string().as_bytes()),
            Value::Bool(b) => return self.out.extend_from_slice(b.to_string().as_bytes()),
            Value::Secs(d) => return write_secs(self.out, *d),
        };
        let cut = cut_points(&text, max);
        if !self.json && cut.is_none() && is_bare(&text) {
            self.out.extend_from_slice(&text);
            return;
        }
        self.out.push(b'"');
        match cut {
            None => escape(self.out, &text),
            Some((head, tail)) => {
                self.shortened = true;
                escape(self.out, text.get(..head).unwrap_or_default());
                let whole = format!(" [... {} bytes in all ...] ", text.len());
                self.out.extend_from_slice(whole.as_bytes());
                escape(self.out, text.get(tail..).unwrap_or_default());
            }
        }
        self.out.push(b'"');
    }
}

/// Whether a logfmt value can be written without quotes: not empty, valid
/// UTF-8, and nothing that ends a value or that would be escaped.
fn is_bare(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).is_ok_and(|text| {
        !text.is_empty()
            && !text
                .chars()
                .any(|c| c <= ' ' || matches!(c, '"' | '=' | '\\') || is_special(c))
    })
}

/// Where a string longer than `max` bytes is cut: its first two thirds and
/// last third of `max`, moved off the middle of a UTF-8 character.
/// `None` when it is short enough to keep whole.
pub fn cut_points(bytes: &[u8], max: usize) -> Option<(usize, usize)> {
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
/// zeros: `0`, `1.5`, `0.002`, `10`.
pub(super) fn write_secs(out: &mut Vec<u8>, d: Duration) {
    let text = format!("{}.{:03}", d.as_secs(), d.subsec_millis());
    let text = text.trim_end_matches('0').trim_end_matches('.');
    out.extend_from_slice(text.as_bytes());
}
