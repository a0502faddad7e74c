//! One record as one logfmt line: `key=value` pairs separated by spaces.
//!
//! logfmt has no nesting, so a nested field's key is its path joined with
//! dots (`stop.sender.pid=0`), and a list's items are numbered
//! (`grace_kills.0.pid=7`). A list also writes its own key with the number
//! of items shown (`grace_kills=2`), so that an empty list is still there
//! (a grace deadline that found nothing left to kill) and a reader knows
//! how many items to look for. A value is quoted when it has to be: empty,
//! or holding a space, `=`, `"`, `\`, a control character or bytes that
//! are not UTF-8; inside the quotes it is escaped as a JSON string is,
//! which is what logfmt readers (Go's go-logfmt, and so Loki) unquote.

use super::json::{is_special, plain, write_text};
use super::{Head, SCHEMA, Text, Value, cut_points, put, text_bytes, write_plain, write_uint};

pub(super) struct Writer<'o> {
    out: &'o mut Vec<u8>,
    pub(super) text: Text,
    /// The key prefix of the object being written: `stop.sender.`.
    path: Vec<u8>,
    /// Where `path` goes back to when each open object or list ends.
    marks: Vec<usize>,
}

impl<'o> Writer<'o> {
    pub(super) fn new(out: &'o mut Vec<u8>) -> Writer<'o> {
        Writer {
            out,
            text: Text::new(),
            path: Vec::new(),
            marks: Vec::new(),
        }
    }

    /// ` path.key=`: every pair but the first (`time`) starts with a space.
    fn key(&mut self, key: &str) {
        self.out.push(b' ');
        put(self.out, &self.path);
        put(self.out, key.as_bytes());
        self.out.push(b'=');
    }

    /// A value; `valid`: known to be UTF-8.
    fn string(&mut self, bytes: &[u8], valid: bool, max: usize) {
        if cut_points(bytes, max).is_none() && is_bare(bytes) {
            put(self.out, bytes);
            return;
        }
        put(self.out, b"\"");
        write_text(self.out, &mut self.text.cut, bytes, valid, max);
        put(self.out, b"\"");
    }

    fn enter(&mut self, segment: &[u8]) {
        self.marks.push(self.path.len());
        put(&mut self.path, segment);
        self.path.push(b'.');
    }

    fn leave(&mut self) {
        let mark = self.marks.pop().unwrap_or(0);
        self.path.truncate(mark);
    }

    pub(super) fn written(&self) -> usize {
        self.out.len()
    }

    pub(super) fn header(&mut self, record: &Head<'_>, msg_max: usize) {
        put(self.out, b"time=");
        record.time.write_rfc3339(self.out);
        put(self.out, b" level=");
        put(self.out, record.level.as_str().as_bytes());
        put(self.out, b" logger=vigil");
        self.key("event");
        self.string(record.event.as_bytes(), true, usize::MAX);
        self.key("msg");
        self.string(record.msg.as_bytes(), true, msg_max);
    }

    pub(super) fn scalar(&mut self, key: &str, value: &Value<'_>, max: usize) {
        self.key(key);
        if write_plain(self.out, value) {
            return;
        }
        if let Value::Time(t) = value {
            t.write_rfc3339(self.out);
            return;
        }
        let mut scratch = std::mem::take(&mut self.text.scratch);
        if let Some((bytes, valid, max)) = text_bytes(value, &mut scratch, max) {
            self.string(bytes, valid, max);
        }
        self.text.scratch = scratch;
    }

    pub(super) fn open_object(&mut self, key: &str) {
        self.enter(key.as_bytes());
    }

    pub(super) fn close_object(&mut self) {
        self.leave();
    }

    pub(super) fn open_list(&mut self, key: &str, shown: usize) {
        self.key(key);
        write_uint(self.out, shown as u64);
        self.enter(key.as_bytes());
    }

    pub(super) fn open_item(&mut self, index: usize) {
        self.marks.push(self.path.len());
        write_uint(&mut self.path, index as u64);
        self.path.push(b'.');
    }

    pub(super) fn close_item(&mut self) {
        self.leave();
    }

    pub(super) fn close_list(&mut self) {
        self.leave();
    }

    pub(super) fn more(&mut self, key: &str, n: usize) {
        self.out.push(b' ');
        put(self.out, &self.path);
        put(self.out, key.as_bytes());
        put(self.out, b"_more=");
        write_uint(self.out, n as u64);
    }

    pub(super) fn trailer(&mut self, shortened: bool, vigil_pid: Option<u32>) {
        if shortened {
            put(self.out, b" shortened=true");
        }
        if let Some(pid) = vigil_pid {
            put(self.out, b" vigil_pid=");
            write_uint(self.out, pid.into());
        }
        put(self.out, b" schema=");
        write_uint(self.out, SCHEMA.into());
        self.out.push(b'\n');
    }
}

/// Whether a value can be written without quotes: not empty, valid UTF-8,
/// and nothing that ends a value or that would be escaped.
fn is_bare(bytes: &[u8]) -> bool {
    if bytes.is_ascii() {
        return !bytes.is_empty() && bytes.iter().all(|&b| plain(b) && b != b' ' && b != b'=');
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    !text.is_empty()
        && !text
            .chars()
            .any(|c| c <= ' ' || c == '"' || c == '=' || c == '\\' || is_special(c))
}
