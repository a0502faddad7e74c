//! Reading what vigil wrote: a usage error's one line.

use super::{Exit, Output};

/// Checks that `out` is a usage error (`what` names the case): status 2
/// and exactly one stderr line, starting `vigil: error: ` (the level word
/// every error line carries); returns that line.
pub fn usage_error_line<'a>(out: &'a Output, what: &str) -> &'a str {
    assert_eq!(out.status, Exit::Code(2), "{what}: {out}");
    let lines = out.stderr_lines();
    assert_eq!(
        lines.len(),
        1,
        "{what}: want exactly one stderr line\n{out}"
    );
    assert!(
        lines[0].starts_with("vigil: error: "),
        "{what}: {:?}",
        lines[0]
    );
    lines[0]
}
