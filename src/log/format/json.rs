//! Strings as JSON writes them, which logfmt's quoted values share.

use std::io::Write as _;

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
        for b in chunk.invalid() {
            let _ = write!(out, "\\\\x{b:02x}");
        }
    }
}

/// Whether a character must be escaped (besides `"` and `\`).
pub(super) fn is_special(c: char) -> bool {
    c < ' ' || ('\u{7f}'..='\u{9f}').contains(&c) || c == '\u{2028}' || c == '\u{2029}'
}

/// `escape` for valid UTF-8: runs of characters that need no escape are
/// copied whole.
fn escape_str(out: &mut Vec<u8>, text: &str) {
    let mut plain = 0;
    for (at, c) in text.char_indices() {
        if !(c == '"' || c == '\\' || is_special(c)) {
            continue;
        }
        out.extend_from_slice(text.get(plain..at).unwrap_or_default().as_bytes());
        plain = at + c.len_utf8();
        let short: &[u8] = match c {
            '"' => b"\\\"",
            '\\' => b"\\\\",
            '\n' => b"\\n",
            '\r' => b"\\r",
            '\t' => b"\\t",
            '\u{8}' => b"\\b",
            '\u{c}' => b"\\f",
            c => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
                continue;
            }
        };
        out.extend_from_slice(short);
    }
    out.extend_from_slice(text.get(plain..).unwrap_or_default().as_bytes());
}
