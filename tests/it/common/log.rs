//! vigil's log, read by the tests (a usage error's one line, the exit
//! report, a panic), and the tests' own lines that must show in CI.

use super::{Exit, Output};
use std::fmt::Display;
use std::io::Write;
use std::time::Duration;

/// Checks that `out` is a usage error (`what` names the case): status 2
/// and exactly one stderr line, starting `vigil: error: ` (the level word
/// every error line carries); returns that line.
pub fn usage_error_line<'a>(out: &'a Output, what: &str) -> &'a str {
    assert_eq!(out.status, Exit::Code(2), "{what}: {out}");
    usage_error_in(&out.stderr).unwrap_or_else(|why| panic!("{what}: {why}\n{out}"))
}

/// The one line of a usage error in vigil's stderr, or what is wrong with
/// it: exactly one line, starting `vigil: error: `.
pub fn usage_error_in(stderr: &str) -> Result<&str, String> {
    let lines: Vec<&str> = stderr.lines().collect();
    match lines.as_slice() {
        [line] if line.starts_with("vigil: error: ") => Ok(line),
        [line] => Err(format!("bad usage-error line {line:?}")),
        _ => Err(format!(
            "a usage error must be exactly one stderr line, got {}",
            lines.len()
        )),
    }
}

/// vigil's exit report, as found in a log.
#[derive(Clone, Copy, Debug)]
pub struct ExitReport<'a> {
    /// The whole line it is on (the report may follow the child's last,
    /// unfinished line).
    pub line: &'a str,
    /// Logged as a warning (`vigil: warning: exit report: `), not plainly
    /// (`vigil: exit report: `).
    pub warning: bool,
    /// What follows `exit report: `.
    pub text: &'a str,
}

/// The first exit report in `log` (vigil's stderr, or `docker logs`),
/// looked for anywhere in a line, not only at its start.
pub fn exit_report(log: &str) -> Option<ExitReport<'_>> {
    log.lines().find_map(|line| {
        if let Some((_, text)) = line.split_once("vigil: warning: exit report: ") {
            Some(ExitReport {
                line,
                warning: true,
                text,
            })
        } else {
            line.split_once("vigil: exit report: ")
                .map(|(_, text)| ExitReport {
                    line,
                    warning: false,
                    text,
                })
        }
    })
}

/// The text of the exit report in `out`, which must be logged as a warning
/// (or not).
pub fn exit_report_text(out: &Output, warning: bool) -> String {
    let report =
        exit_report(&out.stderr).unwrap_or_else(|| panic!("no exit report in the log\n{out}"));
    let level = if warning { "a warning" } else { "no warning" };
    assert_eq!(
        report.warning, warning,
        "the exit report should be {level}\n{out}"
    );
    report.text.to_string()
}

/// The exit report line exactly as vigil printed it ("" when there is none).
pub fn exit_line(out: &Output) -> &str {
    out.stderr
        .lines()
        .find(|l| l.contains("exit report: "))
        .unwrap_or("")
}

/// Every one of `needles` is in `text`.
pub fn assert_has(text: &str, needles: &[&str]) {
    for n in needles {
        assert!(text.contains(n), "{n:?} not in:\n{text}");
    }
}

/// vigil did not panic (a PID 1 that panics takes its container with it).
pub fn no_panic(out: &Output) {
    assert!(
        !out.stderr.contains("panicked") && !out.stderr.contains("RUST_BACKTRACE"),
        "vigil panicked\n{out}"
    );
}

/// Lines of vigil's own that are warnings or errors.
pub fn complaints(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("vigil: warning") || l.starts_with("vigil: error"))
        .collect()
}

/// Writes a line to stderr past libtest's output capture (which takes only
/// what `print!` and `eprint!` write), so that it shows in CI logs of a
/// passing run too.
pub fn say_uncaptured(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// `e2e: TEST: MSG` past libtest's capture: what an end-to-end test
/// measured, or why it was skipped.
pub fn note(test: &str, msg: impl Display) {
    say_uncaptured(&format!("e2e: {test}: {msg}"));
}

/// A duration for a message: `1.25s`.
pub fn secs(d: Duration) -> String {
    format!("{:.2}s", d.as_secs_f64())
}

/// How vigil names a process run as `words`: its title, the words joined
/// by spaces, cut to 64 bytes (61 and `...`), the program's directory left
/// out.
pub fn title(words: &[&str]) -> String {
    let mut words: Vec<&str> = words.to_vec();
    if let Some(first) = words.first_mut()
        && let Some((dir, base)) = first.rsplit_once('/')
        && !dir.contains(' ')
    {
        *first = base;
    }
    let joined = words.join(" ");
    if joined.len() <= 64 {
        return joined;
    }
    let mut cut = 61;
    while !joined.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...", &joined[..cut])
}
