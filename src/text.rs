//! How vigil writes facts into its one-line messages: durations, OS
//! errors, and text from outside (a command, a process name) with its
//! control characters escaped. Shared by the modules that describe things
//! (`hooks`, `procs`, `report`, `spawn`, `user`) and by `log`, which
//! depends on none of them.

use std::borrow::Cow;
use std::ffi::OsString;
use std::fmt;
use std::fmt::Write as _;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::time::Duration;

/// A measured duration for messages, to the millisecond: `1.500s`,
/// `0.019s` (integer arithmetic: floats would bring the float formatting
/// code into the binary).
pub fn secs(d: Duration) -> String {
    format!("{}.{:03}s", d.as_secs(), d.subsec_millis())
}

/// A duration someone chose (an option's value), exactly: `5s`, `1.5s`,
/// `250ms`, `1ms`, never rounded to a precision it was not given in (a
/// `--timeout 1ms` is not `0.00s`).
pub fn duration(d: Duration) -> String {
    let nanos = d.subsec_nanos();
    if nanos == 0 {
        return format!("{}s", d.as_secs());
    }
    if d.as_secs() == 0 && nanos.is_multiple_of(1_000_000) {
        return format!("{}ms", nanos / 1_000_000);
    }
    let fraction = format!("{nanos:09}");
    format!("{}.{}s", d.as_secs(), fraction.trim_end_matches('0'))
}

/// An OS error's text as the C library words it, without Rust's ` (os
/// error N)` suffix, so that every message words errors alike.
pub fn os_error(error: &io::Error) -> String {
    match error.raw_os_error() {
        Some(n) => nix::errno::Errno::from_raw(n).desc().to_string(),
        None => error.to_string(),
    }
}

/// Escapes control characters (a newline in a command's argument, say), so
/// that every message stays one line starting `vigil:`: piece by piece,
/// for a writer that copies the pieces where they go (a log line on the
/// stack) instead of making a new string.
pub fn one_line_pieces(text: &str, mut put: impl FnMut(&str)) {
    // A control character is below 0x20, 0x7f, or U+0080..U+009F (0xc2
    // then a second byte): a text without those bytes, the usual case, is
    // let through whole, without decoding it character by character.
    let suspect = |b: &u8| *b < 0x20 || *b == 0x7f || *b == 0xc2;
    if !text.as_bytes().iter().any(suspect) {
        return put(text);
    }
    let mut plain = 0;
    for (at, c) in text.char_indices() {
        if !c.is_control() {
            continue;
        }
        put(text.get(plain..at).unwrap_or_default());
        plain = at + c.len_utf8();
        match c {
            '\n' => put("\\n"),
            '\t' => put("\\t"),
            '\r' => put("\\r"),
            c => {
                for e in c.escape_unicode() {
                    put(e.encode_utf8(&mut [0; 4]));
                }
            }
        }
    }
    put(text.get(plain..).unwrap_or_default());
}

/// Text from outside that need not be UTF-8 (a process's name, which the
/// kernel cuts to 15 bytes, maybe inside a character), shown on one line:
/// control characters escaped as `one_line_pieces` does, and each byte
/// that is not UTF-8 as `\xNN`, so that no two names look alike by being
/// mangled and every log format stays valid.
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        one_line_pieces(chunk.valid(), |piece| out.push_str(piece));
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// Where bytes of UTF-8 text may be cut at `at` or before it: `at` moved
/// back to the first byte of the character it falls in (off any
/// continuation byte, 0b10xxxxxx), so that what is kept stays UTF-8.
pub fn char_start(bytes: &[u8], mut at: usize) -> usize {
    while at > 0 && bytes.get(at).is_some_and(|b| b & 0xc0 == 0x80) {
        at -= 1;
    }
    at
}

/// A command's words joined as a shell reads them, byte for byte: a word
/// is put in single quotes (a `'` in it as `'\''`) only when a POSIX shell
/// would read it otherwise, and an empty word is `''`. So `dd
/// if=/dev/zero of=/dev/null` stays as it is, and `sh -c 'exit 3'` is
/// quoted. Bytes that are not UTF-8 are kept: the caller decides how to
/// show them.
pub fn shell_join(words: &[OsString], out: &mut Vec<u8>) {
    // Room for the words as they are, a space between each, and some quotes.
    out.reserve(words.iter().map(|w| w.len() + 3).sum());
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        let word = word.as_bytes();
        if !needs_quotes(word, i == 0) {
            out.extend_from_slice(word);
            continue;
        }
        out.push(b'\'');
        for &b in word {
            if b == b'\'' {
                out.extend_from_slice(b"'\\''");
            } else {
                out.push(b);
            }
        }
        out.push(b'\'');
    }
}

/// Whether a shell would read `word` as something else than itself: it is
/// empty; it holds a character that splits, redirects, substitutes, quotes
/// or globs (or a control character, quoted so that it cannot pass for a
/// separator); it starts a comment or a tilde expansion; bash would expand
/// it (`!`, `{a,b}`); or, as the command's first word, it would be a
/// variable assignment (`NAME=...`). `=` and `%` elsewhere are plain
/// characters.
fn needs_quotes(word: &[u8], first: bool) -> bool {
    let Some(&start) = word.first() else {
        return true;
    };
    let special = |b: &u8| b.is_ascii_control() || SPECIAL.contains(b);
    if start == b'#' || start == b'~' || word.iter().any(special) {
        return true;
    }
    let braces = word.contains(&b'{')
        && word.contains(&b'}')
        && (word.contains(&b',') || word.windows(2).any(|w| w == b".."));
    braces || (first && is_assignment(word))
}

/// The bytes that make a shell read a word otherwise wherever they are,
/// besides the control characters: its operators (`|&;<>()`), `$`, the
/// back quote, the backslash, both quotes, a space, the globs (`*?[`) and
/// bash's `!`.
const SPECIAL: &[u8] = b"|&;<>()$`\\\"' *?[!";

/// `NAME=...`, with NAME a shell variable name: what a shell takes for an
/// assignment in a command's first word.
fn is_assignment(word: &[u8]) -> bool {
    let Some(eq) = word.iter().position(|&b| b == b'=') else {
        return false;
    };
    let name = word.get(..eq).unwrap_or_default();
    name.first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && name.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// Splits a hook's text into words by shell quoting rules: no expansion, no
/// globbing. An empty or unparsable text is the user's mistake.
pub fn parse_command(text: &str) -> Result<Vec<OsString>, String> {
    let words = shell_words::split(text)
        .map_err(|e| format!("'{text}' cannot be split into words ({e}): check its quotes"))?;
    if words.is_empty() {
        return Err(format!("'{text}' is empty: give the command to run"));
    }
    Ok(words.into_iter().map(OsString::from).collect())
}

/// Joins argv for messages, quoted only where a shell would need it, on
/// one line (the exit report and the termination log hold it too), and
/// whether it is exactly the words' bytes as a shell reads them (nothing
/// replaced or escaped).
pub fn display_command_exact(argv: &[OsString]) -> (String, bool) {
    let mut joined = Vec::new();
    shell_join(argv, &mut joined);
    let text = String::from_utf8_lossy(&joined);
    let mut shown = String::with_capacity(text.len());
    one_line_pieces(&text, |piece| shown.push_str(piece));
    // Borrowed: the bytes were UTF-8, nothing replaced.
    let exact = matches!(text, Cow::Borrowed(_)) && shown.len() == text.len();
    (shown, exact)
}

/// `1 time`, `3 processes`: a count and the word for one or for many.
pub struct Count(pub u64, pub &'static str, pub &'static str);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Count(n, one, many) = *self;
        write!(f, "{n} {}", if n == 1 { one } else { many })
    }
}

/// The longest duration vigil takes: longer ones mean nothing for a
/// container, and deadlines far beyond it would overflow the clock.
const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// The units of a duration, the largest first, with their length in
/// nanoseconds.
const UNITS: [(&str, u128); 4] = [
    ("h", 3_600_000_000_000),
    ("m", 60_000_000_000),
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
];

/// Parses a duration: `500ms`, `5s`, `1.5s`, `2m`, `1h`; a bare number is
/// seconds. Docker's and Go's compound form, which Dockerfiles hold
/// (`HEALTHCHECK --interval=1m30s`), is read too: parts of a number and
/// its unit, each unit once, the largest first (`1h30m`, `2m30s`,
/// `1s500ms`), so that no two spellings of a part can disagree. Integer
/// arithmetic only: floats would bring the float formatting and parsing
/// code into the binary.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || {
        format!(
            "'{text}' is not a duration: use a number with a unit ms, s, m or h (500ms, 5s, 2m, 1m30s); a bare number means seconds"
        )
    };
    let t = text.trim();
    if t.starts_with('-') {
        return Err(format!(
            "'{text}' is negative: a duration is 0 or more (500ms, 5s, 2m)"
        ));
    }
    // A part is a number, its digits and point, then its unit, up to the
    // next number.
    let in_number = |c: char| c.is_ascii_digit() || c == '.';
    let mut rest = t;
    let mut nanos: u128 = 0;
    // The place in `UNITS` of the last part's unit.
    let mut last: Option<usize> = None;
    loop {
        let (number, after) = rest.split_at(rest.find(|c| !in_number(c)).unwrap_or(rest.len()));
        let (unit, next) = after.split_at(after.find(in_number).unwrap_or(after.len()));
        let at = match unit {
            // A bare number, seconds, only as the whole duration.
            "" if last.is_none() && next.is_empty() => 2,
            _ => UNITS.iter().position(|(u, _)| *u == unit).ok_or_else(bad)?,
        };
        if last.is_some_and(|last| at <= last) {
            return Err(format!(
                "'{text}' is not a duration: in a compound duration each unit comes once, the largest first (1h30m, 2m30s)"
            ));
        }
        let per_unit = UNITS.get(at).map_or(0, |(_, n)| *n);
        let part = part_nanos(number, per_unit).ok_or_else(bad)?;
        nanos = nanos.checked_add(part).ok_or_else(bad)?;
        last = Some(at);
        rest = next;
        if rest.is_empty() {
            break;
        }
    }
    if nanos > MAX_DURATION.as_nanos() {
        return Err(format!("'{text}' is too long: at most 8760h (a year)"));
    }
    let secs = u64::try_from(nanos / 1_000_000_000).map_err(|_| bad())?;
    Ok(Duration::new(secs, (nanos % 1_000_000_000) as u32))
}

/// One part of a duration, `1.5` of `per_unit` nanoseconds each: a whole
/// number, and a fraction of at most 9 digits after a point, if any; none
/// when it is not such a number or too large.
fn part_nanos(number: &str, per_unit: u128) -> Option<u128> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() || (number.contains('.') && fraction.is_empty()) || fraction.len() > 9 {
        return None;
    }
    let scale = 10u128.pow(fraction.len() as u32);
    let fraction_nanos = match fraction {
        "" => 0,
        digits => digits.parse::<u128>().ok()? * per_unit / scale,
    };
    whole
        .parse::<u128>()
        .ok()?
        .checked_mul(per_unit)?
        .checked_add(fraction_nanos)
}

#[cfg(test)]
mod tests {
    #[test]
    fn splits_like_a_shell() {
        let words = parse_command(r#"sh -c "echo 'a b'" x"#).unwrap();
        assert_eq!(words, ["sh", "-c", "echo 'a b'", "x"]);
        assert!(parse_command("sh -c 'oops").is_err());
        assert!(parse_command("   ").is_err());
    }

    use super::*;

    #[test]
    fn durations_print_without_floats() {
        assert_eq!(secs(Duration::from_millis(1509)), "1.509s");
        assert_eq!(secs(Duration::from_millis(19)), "0.019s");
    }

    #[test]
    fn chosen_durations_print_exactly() {
        assert_eq!(duration(Duration::from_secs(5)), "5s");
        assert_eq!(duration(Duration::from_millis(1)), "1ms");
        assert_eq!(duration(Duration::from_millis(250)), "250ms");
        assert_eq!(duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(duration(Duration::from_micros(1_000_250)), "1.00025s");
        assert_eq!(duration(Duration::ZERO), "0s");
    }

    #[test]
    fn os_errors_without_the_number() {
        let e = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(os_error(&e), "No such file or directory");
        let other = io::Error::other("plain");
        assert_eq!(os_error(&other), "plain");
    }

    fn joined(words: &[&str]) -> String {
        let words: Vec<OsString> = words.iter().map(OsString::from).collect();
        let mut out = Vec::new();
        shell_join(&words, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_command_is_quoted_only_where_a_shell_needs_it() {
        assert_eq!(
            joined(&["dd", "if=/dev/zero", "of=/dev/null"]),
            "dd if=/dev/zero of=/dev/null"
        );
        assert_eq!(joined(&["sh", "-c", "exit 3"]), "sh -c 'exit 3'");
        assert_eq!(joined(&["echo", "it's", ""]), "echo 'it'\\''s' ''");
        assert_eq!(
            joined(&["printf", "%s", "50%", "a:b,c", "é"]),
            "printf %s 50% a:b,c é"
        );
        assert_eq!(joined(&["A=1", "x", "B=2"]), "'A=1' x B=2");
        assert_eq!(joined(&["./a=b"]), "./a=b");
        assert_eq!(joined(&["ls", "~", "a~", "#x", "a#"]), "ls '~' a~ '#x' a#");
        assert_eq!(
            joined(&["echo", "{a,b}", "{}", "hi!", "*.c"]),
            "echo '{a,b}' {} 'hi!' '*.c'"
        );
        assert_eq!(joined(&["a\tb", "x\ny"]), "'a\tb' 'x\ny'");
    }

    #[test]
    fn a_cut_moves_back_to_the_start_of_a_character() {
        let text = "aé€".as_bytes(); // a: 0, é: 1-2, €: 3-5
        assert_eq!(char_start(text, 0), 0);
        assert_eq!(char_start(text, 1), 1);
        assert_eq!(char_start(text, 2), 1);
        assert_eq!(char_start(text, 5), 3);
        assert_eq!(char_start(text, 6), 6);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_escaped() {
        // The kernel's 15-byte comm of `datenbank-größe-monitor`.
        assert_eq!(
            escape_bytes(b"datenbank-gr\xc3\xb6\xc3"),
            "datenbank-grö\\xc3"
        );
        assert_eq!(escape_bytes(b"caf\xe9 (x)"), "caf\\xe9 (x)");
        assert_eq!(escape_bytes(b"a\nb"), "a\\nb");
        assert_eq!(escape_bytes(b""), "");
    }

    fn one_line(text: &str) -> String {
        let mut out = String::new();
        one_line_pieces(text, |piece| out.push_str(piece));
        out
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(one_line("a\nb\tc"), "a\\nb\\tc");
        assert_eq!(one_line("plain é"), "plain é");
        assert_eq!(one_line("\u{85}"), "\\u{85}");
        assert_eq!(
            one_line("\u{1b}[31mred\u{7f}\r\n"),
            "\\u{1b}[31mred\\u{7f}\\r\\n"
        );
        assert_eq!(one_line("é\u{9f}x\u{a0}"), "é\\u{9f}x\u{a0}");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("5").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_duration("0.25m").unwrap(), Duration::from_secs(15));
        for bad in [
            "",
            "5x",
            "s",
            "-1s",
            "1.s",
            ".5",
            "1e3",
            "1.2.3s",
            "99999999999999999999999h",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    /// Docker's and Go's compound durations, as written in a Dockerfile's
    /// `HEALTHCHECK --interval=1m30s`: parts of a number and a unit, each
    /// unit once, the largest first.
    #[test]
    fn compound_durations() {
        let secs = Duration::from_secs;
        for (text, d) in [
            ("1m30s", secs(90)),
            ("1h30m", secs(5400)),
            ("2m30s", secs(150)),
            ("1h2m3s", secs(3723)),
            ("1h0m", secs(3600)),
            ("1s500ms", Duration::from_millis(1500)),
            ("1m0.5s", Duration::from_millis(60_500)),
            ("1.5h30m", secs(7200)),
            (" 1m30s ", secs(90)),
            ("8759h60m", secs(8760 * 3600)),
        ] {
            assert_eq!(parse_duration(text), Ok(d), "{text}");
        }
        for bad in [
            "30s1m", "1m1m", "1m30", "1m 30s", "1ms1s", "1h-30m", "1m30x", "m30s", "1m.5s",
            "1m30s.",
        ] {
            let e = parse_duration(bad).expect_err(bad);
            assert!(e.starts_with(&format!("'{bad}' ")), "{e}");
        }
        let e = parse_duration("30s1m").unwrap_err();
        assert!(e.contains("largest first"), "{e}");
        let e = parse_duration("8760h1s").unwrap_err();
        assert!(e.contains("too long"), "{e}");
    }

    /// A negative duration is said to be one, not "not a duration".
    #[test]
    fn negative_durations_are_named() {
        for text in ["-1s", "-5", "-0.5m", " -1s"] {
            let e = parse_duration(text).expect_err(text);
            assert!(e.contains("is negative"), "{text}: {e}");
        }
    }
}
