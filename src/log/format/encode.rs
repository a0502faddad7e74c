//! Encoding a record as one line, JSON or logfmt, within a length limit:
//! the walk over a record's fields, the shortening steps, and the pieces
//! both encodings write alike (numbers, durations, cut strings).

use std::time::Duration;

use super::{Encoding, Head, Node, Record, Value, json, logfmt};

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
        let step = &Step {
            string_max: step.string_max.min(limit),
            msg_max: step.msg_max.min(limit),
            ..*step
        };
        let mut sink = Sink::new(self.encoding, out, limit);
        sink.header(&record.head(), step.msg_max);
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
pub(super) struct Sink<'o> {
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
    fn header(&mut self, head: &Head<'_>, msg_max: usize);
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
    pub(super) scratch: Vec<u8>,
}

impl Text {
    pub(super) fn new() -> Text {
        Text {
            cut: false,
            scratch: Vec::new(),
        }
    }
}

/// The raw bytes of a text value, whether they are known to be UTF-8 (a
/// `str`: no need to check), and the cap they are cut to: `max`, or none
/// for a `Word`, which shortening never cuts. `Argv` is rendered into
/// `scratch`.
pub(super) fn text_bytes<'v>(
    value: &'v Value<'_>,
    scratch: &'v mut Vec<u8>,
    max: usize,
) -> Option<(&'v [u8], bool, usize)> {
    match value {
        Value::Word(s) => Some((s.as_bytes(), true, usize::MAX)),
        Value::Str(s) => Some((s.as_bytes(), true, max)),
        Value::Bytes(b) => Some((b, false, max)),
        Value::Argv(words) => {
            scratch.clear();
            crate::text::shell_join(words, scratch);
            Some((scratch.as_slice(), false, max))
        }
        _ => None,
    }
}

/// Where a string longer than `max` bytes is cut: its first two thirds and
/// last third of `max`, moved off the middle of a UTF-8 character.
/// `None` when it is short enough to keep whole.
pub(super) fn cut_points(bytes: &[u8], max: usize) -> Option<(usize, usize)> {
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
pub(super) fn write_secs(out: &mut Vec<u8>, d: Duration) {
    write_uint(out, d.as_secs());
    let mut ms = d.subsec_millis();
    if ms == 0 {
        return;
    }
    out.push(b'.');
    let mut digits = 3;
    while ms.is_multiple_of(10) {
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

/// Appends `bytes`.
pub(super) fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(bytes);
}

/// An unsigned integer in decimal.
pub(super) fn write_uint(out: &mut Vec<u8>, n: u64) {
    put(out, n.to_string().as_bytes());
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
pub(super) fn write_plain(out: &mut Vec<u8>, value: &Value<'_>) -> bool {
    match value {
        Value::Int(n) => write_int(out, *n),
        Value::UInt(n) => write_uint(out, *n),
        Value::Bool(b) => put(out, if *b { b"true" } else { b"false" }),
        Value::Secs(d) => write_secs(out, *d),
        Value::Time(_) | Value::Str(_) | Value::Word(_) | Value::Bytes(_) | Value::Argv(_) => {
            return false;
        }
    }
    true
}
