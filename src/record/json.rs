//! One record as one JSON object on one line, and the string escaping that
//! logfmt's quoted values share.

use super::{cut_points, put, text_bytes, write_plain, Record, Step, Text, Value, SCHEMA};

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
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        if !key.is_empty() {
            self.out.push(b'"');
            // Keys are the schema's constants, plain ASCII: escaped all the
            // same, so that no key can ever break the line.
            escape(self.out, key.as_bytes());
            put(self.out, b"\":");
        }
    }

    fn string(&mut self, bytes: &[u8], max: usize) {
        self.out.push(b'"');
        write_text(self.out, &mut self.text.cut, bytes, max);
        self.out.push(b'"');
    }

    pub(super) fn written(&self) -> usize {
        self.out.len()
    }

    pub(super) fn header(&mut self, record: &Record<'_>, step: &Step) {
        put(self.out, b"{\"time\":\"");
        record.time.write_rfc3339(self.out);
        put(self.out, b"\",\"level\":\"");
        put(self.out, record.level.as_str().as_bytes());
        put(self.out, b"\",\"event\":");
        self.string(record.event.as_bytes(), usize::MAX);
        put(self.out, b",\"msg\":");
        self.string(record.msg.as_bytes(), step.msg_max);
        self.first = false;
    }

    pub(super) fn scalar(&mut self, key: &str, value: &Value<'_>, max: usize) {
        self.key(key);
        if write_plain(self.out, value) {
            return;
        }
        if let Value::Time(t) = value {
            self.out.push(b'"');
            t.write_rfc3339(self.out);
            self.out.push(b'"');
            return;
        }
        let max = if let Value::Word(_) = value {
            usize::MAX
        } else {
            max
        };
        let mut scratch = std::mem::take(&mut self.text.scratch);
        if let Some(bytes) = text_bytes(value, &mut scratch) {
            self.string(bytes, max);
        }
        self.text.scratch = scratch;
    }

    pub(super) fn open_object(&mut self, key: &str) {
        self.key(key);
        self.out.push(b'{');
        self.first = true;
    }

    pub(super) fn close_object(&mut self) {
        self.out.push(b'}');
        self.first = false;
    }

    pub(super) fn open_list(&mut self, key: &str, _shown: usize) {
        self.key(key);
        self.out.push(b'[');
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
        escape(self.out, key.as_bytes());
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

/// The inside of a quoted string: `bytes` escaped, or when longer than
/// `max` its head and tail with ` [... N bytes in all ...] ` between (and
/// `cut` set).
pub(super) fn write_text(out: &mut Vec<u8>, cut: &mut bool, bytes: &[u8], max: usize) {
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
    for chunk in bytes.utf8_chunks() {
        escape_str(out, chunk.valid());
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

/// Escapes valid UTF-8, byte by byte: printable ASCII and most of the rest
/// is copied in runs, and only the few sequences that need it are looked
/// at (C1 controls are `0xc2 0x80..0x9f`, U+2028 and U+2029 `0xe2 0x80
/// 0xa8/0xa9`).
fn escape_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let at = |i: usize| bytes.get(i).copied().unwrap_or(0);
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = at(i);
        let (len, escape): (usize, &[u8]) = match b {
            b'"' => (1, b"\\\""),
            b'\\' => (1, b"\\\\"),
            b'\n' => (1, b"\\n"),
            b'\r' => (1, b"\\r"),
            b'\t' => (1, b"\\t"),
            0x08 => (1, b"\\b"),
            0x0c => (1, b"\\f"),
            0..=0x1f | 0x7f => (1, b""),
            0xc2 if (0x80..=0x9f).contains(&at(i + 1)) => (2, b""),
            0xe2 if at(i + 1) == 0x80 && matches!(at(i + 2), 0xa8 | 0xa9) => (3, b""),
            _ => {
                i += 1;
                continue;
            }
        };
        put(out, bytes.get(start..i).unwrap_or_default());
        if escape.is_empty() {
            let c = s
                .get(i..i + len)
                .and_then(|c| c.chars().next())
                .unwrap_or('\0');
            put(out, b"\\u");
            push_hex(out, c.into(), 4);
        } else {
            put(out, escape);
        }
        i += len;
        start = i;
    }
    put(out, bytes.get(start..).unwrap_or_default());
}

/// `n` in `digits` lowercase hexadecimal digits.
fn push_hex(out: &mut Vec<u8>, n: u32, digits: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for shift in (0..digits).rev() {
        let nibble = (n >> (shift * 4)) & 0xf;
        out.push(HEX.get(nibble as usize).copied().unwrap_or(b'0'));
    }
}
