//! Reading one value of each `Kind`, wherever it comes from (the command
//! line, a variable, the table's default), and giving it back as its kind's
//! type to the options' effects. Every error names the bad text and says
//! what is accepted; the caller adds which option or variable it came from.

use std::ffi::{OsStr, OsString};
use std::time::Duration;

use super::options::Kind;
use crate::caps;
use crate::log::facts::signal::{self, Rewrite, Rewrites, Signal};
use crate::log::facts::stop::EndCause;
use crate::log::format::Format;
use crate::probe::Url;
use crate::text;
use crate::user;

/// The verbosity tini starts from: warnings and errors.
pub const DEFAULT_VERBOSITY: u8 = 1;
pub const MAX_VERBOSITY: u8 = 4;

/// One value, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Switch(bool),
    Level(u8),
    Signal(Signal),
    StopSignals(Vec<Signal>),
    ExitCode(i32),
    Duration(Duration),
    Command(Vec<OsString>),
    Path(OsString),
    Rewrite(Vec<Rewrite>),
    User(user::Spec),
    LogFormat(Format),
    Caps(caps::Set),
    Url(Url),
    Count(u32),
    ExitCodes(Vec<(EndCause, i32)>),
    /// Given nowhere, and no default: what an option's effect gets then.
    Unset,
}

/// `pub fn NAME(self) -> TYPE`: the value of the variant (in `Some` when
/// `TYPE` is an `Option`), else `UNSET`.
macro_rules! accessors {
    ($($name:ident: $variant:ident -> $ty:ty, else $unset:expr;)*) => {$(
        pub fn $name(self) -> $ty {
            match self {
                Value::$variant(value) => value.into(),
                _ => $unset,
            }
        }
    )*};
}

/// The value as the type of its kind, for the options' effects. An unset
/// value gives what the option means when it is not given (off, no
/// signal, tini's verbosity, nothing); so would a value of another kind,
/// which the table's kinds rule out.
impl Value {
    accessors! {
        switch: Switch -> bool, else false;
        level: Level -> u8, else DEFAULT_VERBOSITY;
        signal: Signal -> Option<Signal>, else None;
        stop_signals: StopSignals -> Vec<Signal>, else vec![Signal::TERM, Signal::INT];
        exit_code: ExitCode -> Option<i32>, else None;
        duration: Duration -> Option<Duration>, else None;
        command: Command -> Option<Vec<OsString>>, else None;
        path: Path -> Option<OsString>, else None;
        rewrites: Rewrite -> Vec<Rewrite>, else Vec::new();
        user: User -> Option<user::Spec>, else None;
        log_format: LogFormat -> Option<Format>, else None;
        caps: Caps -> Option<caps::Set>, else None;
        url: Url -> Option<Url>, else None;
        count: Count -> Option<u32>, else None;
        exit_codes: ExitCodes -> Vec<(EndCause, i32)>, else Vec::new();
    }
}

/// Where a value comes from, which decides how some kinds read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum From {
    CommandLine,
    /// vigil's own `VIGIL_*` variable, or the table's default.
    Vigil,
    /// tini's `TINI_*` variable, read as tini reads it.
    Tini,
}

/// Reads `raw` as a value of `kind`. Only a path and a user may be any
/// bytes; every other value must be UTF-8.
pub fn read(kind: Kind, raw: &OsStr, from: From) -> Result<Value, String> {
    let text = match kind {
        Kind::Path | Kind::Install | Kind::User => "",
        _ => raw.to_str().ok_or_else(|| {
            format!(
                "'{}' is not valid UTF-8 (the bad bytes shown as U+FFFD)",
                raw.to_string_lossy()
            )
        })?,
    };
    Ok(match (kind, from) {
        (Kind::Path, _) => Value::Path(raw.to_owned()),
        (Kind::Install, _) if raw.is_empty() => {
            return Err("an empty directory: give the directory to copy vigil into".into());
        }
        (Kind::Install, _) => Value::Path(raw.to_owned()),
        // Only the shape here: the files are read before the fork.
        (Kind::User, _) => Value::User(user::parse_spec(raw)?),
        // On the command line a switch has no value; tini's variables
        // switch on by being set at all.
        (Kind::Switch, From::CommandLine | From::Tini) => Value::Switch(true),
        (Kind::Switch, From::Vigil) => Value::Switch(parse_bool(text)?),
        (Kind::Level, From::CommandLine) => Value::Level(1),
        (Kind::Level, From::Vigil) => Value::Level(parse_verbosity(text)?),
        (Kind::Level, From::Tini) => Value::Level(atoi(text)),
        (Kind::Signal, _) => Value::Signal(signal::parse(text)?),
        (Kind::StopSignals, _) => Value::StopSignals(parse_stop_signals(text)?),
        (Kind::ExitCode, _) => Value::ExitCode(parse_exit_code(text)?),
        (Kind::Duration, _) => Value::Duration(text::parse_duration(text)?),
        (Kind::Command, _) => Value::Command(text::parse_command(text)?),
        (Kind::LogFormat, _) => Value::LogFormat(Format::parse(text)?),
        (Kind::Caps, _) => Value::Caps(caps::parse(text)?),
        (Kind::Url, _) => Value::Url(Url::parse(text)?),
        // On the command line one rule; in a variable, a list.
        (Kind::Rewrite, From::CommandLine) => Value::Rewrite(vec![Rewrites::parse_rule(text)?]),
        (Kind::Rewrite, From::Vigil | From::Tini) => {
            Value::Rewrite(list(text, Rewrites::parse_rule)?)
        }
        (Kind::Count, _) => Value::Count(parse_count(text)?),
        (Kind::ExitCodes, From::CommandLine) => Value::ExitCodes(vec![exit_code_rule(text)?]),
        (Kind::ExitCodes, From::Vigil | From::Tini) => {
            Value::ExitCodes(list(text, exit_code_rule)?)
        }
        (Kind::PrintHelp | Kind::PrintVersion | Kind::PrintLicense | Kind::Pause, _) => {
            Value::Switch(true)
        }
    })
}

/// The items of a comma-separated list (`TERM,INT`, `TERM:QUIT, USR1:0`),
/// blanks around each trimmed, each read by `item`. Every list vigil reads
/// is read here: an empty item (`TERM,`, `,`) is read like any other, and
/// so is a mistake, never skipped (it may as well be a forgotten value as
/// a stray comma).
fn list<T>(text: &str, item: impl Fn(&str) -> Result<T, String>) -> Result<Vec<T>, String> {
    text.split(',').map(str::trim).map(item).collect()
}

/// A list of stop signals, `TERM,QUIT`: each one a signal vigil reads and
/// forwards (not KILL or STOP, which no one can catch, nor CHLD, TTIN and
/// TTOU, which vigil keeps or ignores), each once, at least one.
pub fn parse_stop_signals(text: &str) -> Result<Vec<Signal>, String> {
    let read = |word: &str| {
        let signal = signal::parse(word).map_err(|why| format!("in '{text}': {why}"))?;
        match signal::never_forwarded(signal) {
            Some(never) => Err(format!(
                "in '{text}': {signal} cannot be a stop signal: {never}"
            )),
            None => Ok(signal),
        }
    };
    let mut once = Vec::new();
    for signal in list(text, read)? {
        if !once.contains(&signal) {
            once.push(signal);
        }
    }
    Ok(once)
}

/// A whole number, at least 1: `3`.
fn parse_count(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "'{text}' is not a count: use a whole number, at least 1"
        )),
    }
}

/// `CAUSE=STATUS`, the status read as `-e` reads an exit code.
fn exit_code_rule(text: &str) -> Result<(EndCause, i32), String> {
    EndCause::parse_rule(text, parse_exit_code)
}

/// C's `atoi`, which tini uses for `TINI_VERBOSITY`: leading digits, else 0.
fn atoi(text: &str) -> u8 {
    let digits: String = text
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse::<u32>()
        .map_or(0, |n| n.min(u32::from(MAX_VERBOSITY)) as u8)
}

/// An exit code as tini reads it (C's `strtol`, base 10, nothing after
/// the number): leading blanks and a sign are allowed, `3 ` and `0x3` are
/// not. tini also takes an empty value as 0; vigil calls that a usage error.
pub fn parse_exit_code(text: &str) -> Result<i32, String> {
    // `str::parse` takes an optional sign and digits only, like strtol
    // after its leading blanks.
    let number = text.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    match number.parse::<i32>() {
        Ok(code) if (0..=255).contains(&code) => Ok(code),
        _ => Err(format!(
            "'{text}' is not an exit code: use a number from 0 to 255"
        )),
    }
}

pub fn parse_bool(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(format!(
            "'{text}' is not a switch: use 1/0, true/false, yes/no or on/off"
        )),
    }
}

pub fn parse_verbosity(text: &str) -> Result<u8, String> {
    match text.trim().parse::<u8>() {
        Ok(v) if v <= MAX_VERBOSITY => Ok(v),
        _ => Err(format!(
            "'{text}' is not a verbosity: use a number from 0 to {MAX_VERBOSITY}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_read_as_tini_reads_them() {
        for (text, code) in [
            ("3", 3),
            ("+3", 3),
            (" 3", 3),
            ("003", 3),
            ("-0", 0),
            ("255", 255),
        ] {
            assert_eq!(parse_exit_code(text), Ok(code), "{text:?}");
        }
        for text in ["", "3 ", "0x3", "256", "-1", "3a", "1e2", "99999999999"] {
            assert!(parse_exit_code(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn tini_verbosity_is_atoi() {
        assert_eq!(atoi("3"), 3);
        assert_eq!(atoi(" 2x"), 2);
        assert_eq!(atoi("x"), 0);
        assert_eq!(atoi("99"), MAX_VERBOSITY);
        assert_eq!(atoi(""), 0);
    }

    #[test]
    fn rewrites_from_a_variable_are_a_list() {
        assert_eq!(
            read(Kind::Rewrite, OsStr::new("TERM:QUIT, USR1:0"), From::Vigil),
            Ok(Value::Rewrite(vec![
                (Signal(15), Some(Signal(3))),
                (Signal(10), None)
            ]))
        );
        assert!(read(Kind::Rewrite, OsStr::new("TERM"), From::Vigil).is_err());
    }

    /// Every list reads an empty item as a mistake, as `--stop-signals`
    /// always did.
    #[test]
    fn an_empty_item_is_a_mistake_in_every_list() {
        for (kind, text) in [
            (Kind::Rewrite, "TERM:QUIT,,"),
            (Kind::Rewrite, "TERM:QUIT,"),
            (Kind::Rewrite, ","),
            (Kind::Rewrite, " "),
            (Kind::StopSignals, "TERM,"),
            (Kind::StopSignals, ",TERM"),
            (Kind::Caps, "NET_RAW,"),
        ] {
            let read = read(kind, OsStr::new(text), From::Vigil);
            assert!(read.is_err(), "{kind:?} {text:?}: {read:?}");
        }
    }
}
