//! How vigil writes facts into its one-line messages: durations, OS
//! errors, and text from outside (a command, a process name) with its
//! control characters escaped. Shared by the modules that describe things
//! (`hooks`, `procs`, `report`, `spawn`, `user`) and by `logging`, which
//! depends on none of them.

use std::io;
use std::time::Duration;

/// A duration for messages: `1.50s` (integer arithmetic: floats would bring
/// the float formatting code into the binary).
pub fn secs(d: Duration) -> String {
    format!("{}.{:02}s", d.as_secs(), d.subsec_millis() / 10)
}

/// A duration someone chose (an option's value), exactly: `5s`, `1.5s`,
/// `250ms`, `1ms`, never rounded to a precision it was not given in (a
/// `--timeout 1ms` is not `0.00s`).
pub fn duration(d: Duration) -> String {
    let nanos = d.subsec_nanos();
    if nanos == 0 {
        return format!("{}s", d.as_secs());
    }
    if d.as_secs() == 0 && nanos % 1_000_000 == 0 {
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
/// that every message stays one line starting `vigil:`.
pub fn one_line(text: &str) -> String {
    // A control character is below 0x20, 0x7f, or U+0080..U+009F (0xc2
    // then a second byte): a text without those bytes, the usual case, is
    // let through without decoding it character by character.
    let suspect = |b: &u8| *b < 0x20 || *b == 0x7f || *b == 0xc2;
    if !text.as_bytes().iter().any(suspect) || !text.chars().any(char::is_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| match c {
            '\n' => "\\n".to_string(),
            '\t' => "\\t".to_string(),
            '\r' => "\\r".to_string(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_without_floats() {
        assert_eq!(secs(Duration::from_millis(1509)), "1.50s");
        assert_eq!(secs(Duration::from_millis(20)), "0.02s");
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

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(one_line("a\nb\tc"), "a\\nb\\tc");
        assert_eq!(one_line("plain é"), "plain é");
        assert_eq!(one_line("\u{85}"), "\\u{85}");
    }
}
