//! One record as one JSON object on one line, and the string escaping that
//! logfmt's quoted values share.

use super::{Head, SCHEMA, Text, Value, cut_points, put, text_bytes, write_plain};

/// Writes a JSON object member by member. `first` says whether the object
/// or list being written has no member yet (no comma before the next).
pub(super) struct Writer<'o> {
    out: &'o mut Vec<u8>,
    pub(super) text: Text,
    first: bool,
}

impl<'o> Writer<'o> {
    pub(super) fn new(out: &'o mut Vec<u8>) -> Writer<'o> {
        Writer {
            out,
            text: Text::new(),
            first: true,
        }
    }

    fn key(&mut self, key: &str) {
        self.key_then(key, None);
    }

    /// `,"key":` (without the comma for an object's first member, and
    /// without the key for a list's item), then `then`: in one copy, since
    /// a line is mostly such small pieces.
    fn key_then(&mut self, key: &str, then: Option<u8>) {
        let first = std::mem::replace(&mut self.first, false);
        let mut piece = [0u8; 48];
        let mut len = 0;
        let mut add = |b: u8| {
            if let Some(slot) = piece.get_mut(len) {
                *slot = b;
                len += 1;
            }
        };
        if !first {
            add(b',');
        }
        if !key.is_empty() {
            add(b'"');
            key.bytes().for_each(&mut add);
            add(b'"');
            add(b':');
        }
        if let Some(then) = then {
            add(then);
        }
        if len < piece.len() {
            return put(self.out, piece.get(..len).unwrap_or_default());
        }
        // A key longer than any of the schema's: piece by piece.
        if !first {
            self.out.push(b',');
        }
        if !key.is_empty() {
            self.out.push(b'"');
            put_key(self.out, key);
            put(self.out, b"\":");
        }
        if let Some(then) = then {
            self.out.push(then);
        }
    }

    /// A string value after its opening quote; `valid`: known to be UTF-8.
    fn string_rest(&mut self, bytes: &[u8], valid: bool, max: usize) {
        write_text(self.out, &mut self.text.cut, bytes, valid, max);
        self.out.push(b'"');
    }

    pub(super) fn written(&self) -> usize {
        self.out.len()
    }

    pub(super) fn header(&mut self, record: &Head<'_>, msg_max: usize) {
        put(self.out, b"{\"time\":\"");
        record.time.write_rfc3339(self.out);
        put(self.out, b"\",\"level\":\"");
        put(self.out, record.level.as_str().as_bytes());
        put(self.out, b"\",\"logger\":\"vigil\",\"event\":\"");
        // An event's name is one of the schema's constants, like a key.
        put_key(self.out, record.event);
        put(self.out, b"\",\"msg\":\"");
        self.string_rest(record.msg.as_bytes(), true, msg_max);
        self.first = false;
    }

    pub(super) fn scalar(&mut self, key: &str, value: &Value<'_>, max: usize) {
        let quoted = matches!(
            value,
            Value::Time(_) | Value::Str(_) | Value::Word(_) | Value::Bytes(_) | Value::Argv(_)
        );
        if !quoted {
            self.key(key);
            write_plain(self.out, value);
            return;
        }
        self.key_then(key, Some(b'"'));
        if let Value::Time(t) = value {
            t.write_rfc3339(self.out);
            self.out.push(b'"');
            return;
        }
        let mut scratch = std::mem::take(&mut self.text.scratch);
        if let Some((bytes, valid, max)) = text_bytes(value, &mut scratch, max) {
            self.string_rest(bytes, valid, max);
        }
        self.text.scratch = scratch;
    }

    pub(super) fn open_object(&mut self, key: &str) {
        self.key_then(key, Some(b'{'));
        self.first = true;
    }

    pub(super) fn close_object(&mut self) {
        self.out.push(b'}');
        self.first = false;
    }

    pub(super) fn open_list(&mut self, key: &str, _shown: usize) {
        self.key_then(key, Some(b'['));
        self.first = true;
    }

    pub(super) fn open_item(&mut self, _index: usize) {
        self.open_object("");
    }

    pub(super) fn close_item(&mut self) {
        self.close_object();
    }

    pub(super) fn close_list(&mut self) {
        self.out.push(b']');
        self.first = false;
    }

    pub(super) fn more(&mut self, key: &str, n: usize) {
        if !self.first {
            self.out.push(b',');
        }
        self.out.push(b'"');
        put_key(self.out, key);
        put(self.out, b"_more\":");
        super::write_uint(self.out, n as u64);
        self.first = false;
    }

    pub(super) fn trailer(&mut self, shortened: bool, vigil_pid: Option<u32>) {
        if shortened {
            put(self.out, b",\"shortened\":true");
        }
        if let Some(pid) = vigil_pid {
            put(self.out, b",\"vigil_pid\":");
            super::write_uint(self.out, pid.into());
        }
        put(self.out, b",\"schema\":");
        super::write_uint(self.out, SCHEMA.into());
        put(self.out, b"}\n");
    }
}

/// A key: one of the schema's constants (`&'static str` in vigil's code),
/// plain ASCII that needs no escape.
pub(super) fn put_key(out: &mut Vec<u8>, key: &str) {
    debug_assert!(
        key.bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_' || b.is_ascii_digit())
    );
    put(out, key.as_bytes());
}

/// The inside of a quoted string: `bytes` escaped, or when longer than
/// `max` its head and tail with ` [... N bytes in all ...] ` between (and
/// `cut` set). `valid`: `bytes` are known to be UTF-8 (cut points stay on
/// character boundaries, so the pieces are too).
pub(super) fn write_text(out: &mut Vec<u8>, cut: &mut bool, bytes: &[u8], valid: bool, max: usize) {
    let escape = |out: &mut Vec<u8>, piece: &[u8]| {
        if valid {
            escape_valid(out, piece);
        } else {
            escape(out, piece);
        }
    };
    match cut_points(bytes, max) {
        None => escape(out, bytes),
        Some((head, tail)) => {
            *cut = true;
            escape(out, bytes.get(..head).unwrap_or_default());
            put(out, b" [... ");
            super::write_uint(out, bytes.len() as u64);
            put(out, b" bytes in all ...] ");
            escape(out, bytes.get(tail..).unwrap_or_default());
        }
    }
}

/// Escapes text for the inside of a JSON string: `"` and `\`, every
/// control character (C0, DEL and C1, with the short forms `\n`, `\r`,
/// `\t`, `\b`, `\f` where JSON has them), and U+2028 and U+2029, which some
/// readers take for line breaks. Other characters stay as they are: the
/// output is UTF-8. A byte that is not part of valid UTF-8 becomes the four
/// characters `\xHH` (written `\\xHH` in JSON): every JSON reader accepts
/// that, and the byte stays visible, where U+FFFD would hide which it was.
pub(super) fn escape(out: &mut Vec<u8>, bytes: &[u8]) {
    // Almost always valid UTF-8 (vigil's own words, names, commands): one
    // check of the whole, rather than the chunks of invalid input.
    if std::str::from_utf8(bytes).is_ok() {
        return escape_valid(out, bytes);
    }
    for chunk in bytes.utf8_chunks() {
        escape_valid(out, chunk.valid().as_bytes());
        for &b in chunk.invalid() {
            put(out, b"\\\\x");
            push_hex(out, b.into(), 2);
        }
    }
}

/// Whether a character must be escaped (besides `"` and `\`).
pub(super) fn is_special(c: char) -> bool {
    c < ' ' || ('\u{7f}'..='\u{9f}').contains(&c) || c == '\u{2028}' || c == '\u{2029}'
}

/// The bytes copied as they are, without a look: printable ASCII but `"`
/// and `\`, and the bytes of UTF-8 characters, except the leading bytes
/// of the C1 controls (`0xc2 0x80..0x9f`) and of U+2028 and U+2029 (`0xe2
/// 0x80 0xa8/0xa9`), which `special` looks at.
// Built at compile time, where an index out of bounds would not build.
#[allow(clippy::indexing_slicing)]
const PLAIN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0x20;
    while b < 256 {
        table[b] = !matches!(b, 0x22 | 0x5c | 0x7f | 0xc2 | 0xe2);
        b += 1;
    }
    table
};

/// Whether `b` is copied as it is (`PLAIN`).
#[allow(clippy::indexing_slicing)] // a byte indexes a table of 256: always in bounds
pub(super) fn plain(b: u8) -> bool {
    PLAIN[usize::from(b)]
}

/// What the byte at the start of `rest` (one `PLAIN` says no to) stands
/// for: how many bytes, and their escape (empty: `\u` and the code point;
/// `None`: copied as they are, a `0xc2` or `0xe2` that starts an ordinary
/// character).
fn special(rest: &[u8]) -> (usize, Option<&'static [u8]>) {
    let at = |i: usize| rest.get(i).copied().unwrap_or(0);
    match at(0) {
        b'"' => (1, Some(b"\\\"")),
        b'\\' => (1, Some(b"\\\\")),
        b'\n' => (1, Some(b"\\n")),
        b'\r' => (1, Some(b"\\r")),
        b'\t' => (1, Some(b"\\t")),
        0x08 => (1, Some(b"\\b")),
        0x0c => (1, Some(b"\\f")),
        0xc2 if (0x80..=0x9f).contains(&at(1)) => (2, Some(b"")),
        0xe2 if at(1) == 0x80 && matches!(at(2), 0xa8 | 0xa9) => (3, Some(b"")),
        0xc2 | 0xe2 => (1, None),
        _ => (1, Some(b"")),
    }
}

/// Escapes valid UTF-8 (from a `str`, or checked): runs of `PLAIN` bytes
/// are copied whole, and only the bytes between them are looked at.
fn escape_valid(out: &mut Vec<u8>, text: &[u8]) {
    let mut rest = text;
    loop {
        let run = rest.iter().position(|&b| !plain(b)).unwrap_or(rest.len());
        put(out, rest.get(..run).unwrap_or_default());
        rest = rest.get(run..).unwrap_or_default();
        if rest.is_empty() {
            return;
        }
        let (len, escape) = special(rest);
        let (this, after) = rest.split_at(len.min(rest.len()));
        match escape {
            None => put(out, this),
            Some(short) if !short.is_empty() => put(out, short),
            Some(_) => {
                let c = std::str::from_utf8(this)
                    .ok()
                    .and_then(|c| c.chars().next())
                    .unwrap_or('\0');
                put(out, b"\\u");
                push_hex(out, c.into(), 4);
            }
        }
        rest = after;
    }
}

/// `n` in `digits` lowercase hexadecimal digits.
fn push_hex(out: &mut Vec<u8>, n: u32, digits: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for shift in (0..digits).rev() {
        let nibble = (n >> (shift * 4)) & 0xf;
        out.push(HEX.get(nibble as usize).copied().unwrap_or(b'0'));
    }
}
