//! `vigil --help`, read back: its option lines, which the man page and
//! the option table of docs/options.md are held to.

use super::{Exit, Vigil};

/// One option line of the help: `  -p <SIGNAL>   Have the kernel ...`,
/// split into the option part and its description at the first run of two
/// or more spaces after the option; None for any other line.
pub fn split_option(line: &str) -> Option<(&str, &str)> {
    let trimmed = line.trim_start();
    if !trimmed.starts_with('-') {
        return None;
    }
    let gap = trimmed.find("  ")?;
    Some((trimmed[..gap].trim(), trimmed[gap..].trim()))
}

/// The text of `vigil --help`.
pub fn help_text() -> String {
    let out = Vigil::plain().arg("--help").run();
    assert_eq!(out.status, Exit::Code(0), "{out}");
    assert!(out.stdout.contains("Options:"), "{out}");
    out.stdout
}

/// The default an option's description gives (`[default: 2s]`), if any.
pub fn default_in(description: &str) -> Option<&str> {
    let from = description.find("[default: ")? + "[default: ".len();
    let len = description[from..].find(']')?;
    Some(&description[from..from + len])
}
