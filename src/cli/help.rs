//! `--help`, rendered from the option table, so that it (and the man page,
//! which tests/it/man.rs renders from it) lists every option with its
//! variables and default.

use super::options::{Default, Kind, OPTIONS, Opt};
use crate::text::duration;

const ABOUT: &str = "A small PID 1 for containers: forwards signals, reaps zombies, runs lifecycle hooks, drains gracefully.";
const USAGE: &str = "vigil [OPTIONS] [--] COMMAND [ARG...]
       vigil --probe URL [--probe-timeout DUR]
       vigil -P [OPTIONS]
       vigil --install DIR";
const AFTER: &str = "\
Precedence: the command line, then the VIGIL_* variable, then tini's TINI_* one, then the default. \
An empty VIGIL_* variable counts as unset, except VIGIL_TERMINATION_LOG= (no termination log). \
VIGIL_SUBREAPER and VIGIL_KILL_PROCESS_GROUP take 1/0, true/false, yes/no or on/off; \
TINI_SUBREAPER and TINI_KILL_PROCESS_GROUP switch on when set at all.
DUR is a number with a unit: 500ms, 5s, 2m (a bare number means seconds), or several, \
the largest unit first: 1m30s. \
CMD is split into words by shell quoting rules and run without a shell.";

/// The option's left column: `-p <SIGNAL>`, `    --timeout <DUR>`, `-v...`.
fn left(opt: &Opt) -> String {
    let names = match (opt.short, opt.long) {
        (Some(s), Some(l)) => format!("-{s}, --{l}"),
        (Some(s), None) => format!("-{s}"),
        (None, Some(l)) => format!("    --{l}"),
        (None, None) => String::new(),
    };
    let value = match opt.kind.value_name() {
        "" => String::new(),
        name => format!(" <{name}>"),
    };
    let repeat = if opt.kind == Kind::Level { "..." } else { "" };
    format!("{names}{value}{repeat}")
}

/// The option's description, with its default and its variables.
fn right(opt: &Opt) -> String {
    let mut text = opt.help.to_string();
    match opt.default {
        Default::None => {}
        Default::Value(value) => text.push_str(&format!(" [default: {value}]")),
        Default::HalfGrace(otherwise) => text.push_str(&format!(
            " [default: half the grace period, else {}]",
            duration(otherwise)
        )),
        Default::AfterTimeout(period) => text.push_str(&format!(
            " [default: {} after --timeout or --ready-timeout, else none]",
            duration(period)
        )),
        Default::IfExists(path) => text.push_str(&format!(" [default: {path} if it exists]")),
    }
    let vars: Vec<&str> = [opt.env, opt.tini_env].into_iter().flatten().collect();
    if !vars.is_empty() {
        text.push_str(&format!(" [env: {}]", vars.join(", ")));
    }
    text
}

pub fn render() -> String {
    let rows: Vec<(String, String)> = OPTIONS.iter().map(|o| (left(o), right(o))).collect();
    let width = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
    let mut out = format!("{ABOUT}\n\nUsage: {USAGE}\n\nOptions:\n");
    for (l, r) in rows {
        out.push_str(&format!("  {l:width$}  {r}\n"));
    }
    out.push_str(&format!("\n{AFTER}\n"));
    out
}
