//! The command line and the environment: everything vigil is told, checked
//! and turned into one `Config` before anything starts.
//!
//! Precedence: command line, then `VIGIL_*`, then `TINI_*`, then the default.
//! Every bad value becomes one line naming it, and exit status 2.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches, Command};

use crate::hooks;
use crate::signals::{self, Rewrites};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The commit and the target this binary was built from and for (build.rs).
const BUILD: &str = concat!(
    "commit ",
    env!("VIGIL_COMMIT"),
    ", built for ",
    env!("VIGIL_TARGET")
);

/// Where the exit report goes by default, when the file exists (Kubernetes
/// creates it and shows its content as the termination message).
const DEFAULT_TERMINATION_LOG: &str = "/dev/termination-log";

/// The verbosity tini starts from: warnings and errors.
const DEFAULT_VERBOSITY: u8 = 1;
const MAX_VERBOSITY: u8 = 4;

/// Everything vigil needs to run.
#[derive(Debug)]
pub struct Config {
    pub command: Vec<OsString>,
    pub subreaper: bool,
    pub parent_death_signal: Option<i32>,
    /// 0 errors, 1 warnings, 2 info, 3 debug, 4 trace (tini's scale).
    pub verbosity: u8,
    pub warn_on_reap: bool,
    pub signal_group: bool,
    pub expected_codes: Vec<i32>,
    pub rewrites: Rewrites,
    pub post_start: Option<Vec<OsString>>,
    pub post_start_timeout: Option<Duration>,
    pub pre_stop: Option<Vec<OsString>>,
    pub pre_stop_sleep: Duration,
    pub grace_period: Option<Duration>,
    pub drain_timeout: Duration,
    pub termination_log: Option<PathBuf>,
    /// `--timeout`: run the stop sequence this long after the start.
    pub timeout: Option<Duration>,
}

impl Config {
    /// `-e`: 0 when `status` (an exit code or 128+N) is listed, else
    /// `status` itself.
    pub fn status_after_e(&self, status: i32) -> i32 {
        if self.expected_codes.contains(&status) {
            0
        } else {
            status
        }
    }
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Action {
    Run(Box<Config>),
    /// Help, version or license: print this on stdout and exit 0.
    Print(String),
}

/// A usage error: one line, naming the bad value.
#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

fn command_line() -> Command {
    // tini's switches may be given more than once (`-s -s`), as getopt
    // allows: a later one overrides an earlier one (the help then shows
    // `-s`, not a count's `-s...`).
    let flag = |name: &'static str, short: char, help: &'static str| {
        Arg::new(name)
            .short(short)
            .action(ArgAction::SetTrue)
            .overrides_with(name)
            .help(help)
    };
    let long = |name: &'static str, value: &'static str, help: &'static str| {
        // Hyphen values are values: `--grace-period -1s` is a bad duration,
        // named as such, not an unknown option `-1`.
        Arg::new(name)
            .long(name)
            .value_name(value)
            .allow_hyphen_values(true)
            .help(help)
    };
    Command::new("vigil")
        .about("A small PID 1 for containers: forwards signals, reaps zombies, runs lifecycle hooks, drains gracefully.")
        .override_usage("vigil [OPTIONS] [--] COMMAND [ARG...]")
        .disable_version_flag(true)
        .after_help(
            "Each long option can also be set by an environment variable: --grace-period by \
             VIGIL_GRACE_PERIOD, and so on. VIGIL_SUBREAPER, VIGIL_KILL_PROCESS_GROUP and \
             VIGIL_VERBOSITY stand for -s, -g and -v; tini's TINI_SUBREAPER, \
             TINI_KILL_PROCESS_GROUP and TINI_VERBOSITY work too.\n\
             DUR is a number with a unit: 500ms, 5s, 2m (a bare number means seconds).",
        )
        .arg(flag("subreaper", 's', "Register as a child subreaper (automatic when not PID 1)"))
        .arg(
            Arg::new("parent-death-signal")
                .short('p')
                .value_name("SIGNAL")
                .allow_hyphen_values(true)
                // As with getopt, a later -p replaces an earlier one (each
                // is still checked).
                .overrides_with("parent-death-signal")
                .value_parser(signals::parse)
                .help("Have the kernel send SIGNAL to vigil when vigil's parent dies"),
        )
        .arg(
            Arg::new("verbose")
                .short('v')
                .action(ArgAction::Count)
                .help("More output; repeatable (-vvv)"),
        )
        .arg(flag("warn-on-reap", 'w', "Warn about each orphaned zombie reaped"))
        .arg(flag("group", 'g', "Send forwarded signals to the child's whole process group"))
        .arg(
            Arg::new("expect")
                .short('e')
                .value_name("CODE")
                .allow_hyphen_values(true)
                .action(ArgAction::Append)
                .value_parser(parse_exit_code)
                .help("Exit with 0 when the child exits with CODE; repeatable"),
        )
        .arg(flag("license", 'l', "Print the license and exit"))
        .arg(
            Arg::new("version")
                .long("version")
                .action(ArgAction::SetTrue)
                .help("Print the version and exit"),
        )
        .arg(
            long("rewrite", "FROM:TO", "Forward signal FROM as TO (TO 0 drops it); repeatable")
                .action(ArgAction::Append)
                .value_parser(Rewrites::parse_rule),
        )
        .arg(long("post-start", "CMD", "Run CMD right after the child starts").value_parser(hooks::parse_command))
        .arg(long("post-start-timeout", "DUR", "A post-start hook still running then has failed").value_parser(parse_duration))
        .arg(long("pre-stop", "CMD", "Run CMD when a stop signal arrives, before forwarding it").value_parser(hooks::parse_command))
        .arg(long("pre-stop-sleep", "DUR", "Wait this long after pre-stop before forwarding the stop signal [default: 0]").value_parser(parse_duration))
        .arg(long("grace-period", "DUR", "After the first stop signal, time until everything left gets SIGKILL").value_parser(parse_duration))
        .arg(long("drain-timeout", "DUR", "After the child exits, time the others get between SIGTERM and SIGKILL [default: 2s]").value_parser(parse_duration))
        .arg(long("timeout", "DUR", "After DUR, stop the command as if SIGTERM had arrived, and exit 124 (0: no timeout)").value_parser(parse_duration))
        .arg(long("termination-log", "PATH", "Where the exit report is written; empty disables [default: /dev/termination-log if it exists]").value_parser(clap::value_parser!(OsString)))
        .arg(
            Arg::new("command")
                .value_name("COMMAND")
                .num_args(1..)
                .trailing_var_arg(true)
                .value_parser(clap::value_parser!(OsString)),
        )
}

/// Parses the command line and the environment.
pub fn parse(
    args: impl IntoIterator<Item = OsString>,
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<Action, UsageError> {
    let args: Vec<OsString> = args.into_iter().collect();
    let invoked_as_docker_init = args
        .first()
        .and_then(|a| Path::new(a).file_name())
        .is_some_and(|name| name == "docker-init");
    let mut cli = command_line();
    let matches = match cli.try_get_matches_from_mut(&args) {
        Ok(m) => m,
        Err(e) => {
            use clap::error::ErrorKind::*;
            return match e.kind() {
                DisplayHelp => Ok(Action::Print(cli.render_help().to_string())),
                _ => Err(UsageError(clap_message(&e.to_string()))),
            };
        }
    };
    if matches.get_flag("version") {
        return Ok(Action::Print(if invoked_as_docker_init {
            // The form `docker info` parses for its init version.
            format!("tini version {VERSION} - vigil\n")
        } else {
            // The first line is what scripts match; the second traces the
            // binary back to its source and build.
            format!("vigil version {VERSION}\n{BUILD}\n")
        }));
    }
    if matches.get_flag("license") {
        return Ok(Action::Print(include_str!("../LICENSE").to_string()));
    }
    let env = Env(&env);
    build(&matches, &env).map(|config| Action::Run(Box::new(config)))
}

/// clap's message without its `error: ` prefix and the usage and `--help`
/// sections it appends (the bad value itself may hold a newline, so this
/// cuts at those sections rather than at the first line break), plus a
/// pointer to `--help`. `logging::say` escapes what is left into one line.
fn clap_message(message: &str) -> String {
    let message = message.strip_prefix("error: ").unwrap_or(message);
    let end = ["\n\nUsage:", "\n\nFor more information", "\n\n  tip:"]
        .iter()
        .filter_map(|marker| message.find(marker))
        .min()
        .unwrap_or(message.len());
    let text = message.get(..end).unwrap_or(message).trim_end();
    format!("{text} (see vigil --help)")
}

/// Reads the environment, turning each malformed value into a usage error
/// that names the variable.
struct Env<'a>(&'a dyn Fn(&str) -> Option<OsString>);

impl Env<'_> {
    /// A variable's value, `None` when unset or empty: an empty `VIGIL_*`
    /// means "not set", so `docker run -e VIGIL_PRE_STOP=` can switch off
    /// what an image's `ENV` line switched on.
    fn get(&self, name: &str) -> Result<Option<String>, UsageError> {
        match (self.0)(name) {
            None => Ok(None),
            Some(v) if v.is_empty() => Ok(None),
            Some(v) => v.into_string().map(Some).map_err(|v| {
                UsageError(format!("{name}='{}': not valid UTF-8", v.to_string_lossy()))
            }),
        }
    }

    fn parsed<T>(
        &self,
        name: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, UsageError> {
        match self.get(name)? {
            None => Ok(None),
            Some(text) => parse(&text)
                .map(Some)
                .map_err(|why| UsageError(format!("{name}: {why}"))),
        }
    }

    /// tini's switches are on when set at all, even to an empty string.
    fn is_set(&self, name: &str) -> bool {
        (self.0)(name).is_some()
    }

    fn raw(&self, name: &str) -> Option<String> {
        (self.0)(name).map(|v| v.to_string_lossy().into_owned())
    }
}

fn build(m: &ArgMatches, env: &Env<'_>) -> Result<Config, UsageError> {
    let command: Vec<OsString> = m
        .get_many::<OsString>("command")
        .map(|v| v.cloned().collect())
        .unwrap_or_default();
    if command.is_empty() {
        return Err(UsageError(
            "no command given: usage is vigil [OPTIONS] [--] COMMAND [ARG...]".into(),
        ));
    }

    let switch = |flag: &str, vigil: &str, tini: &str| -> Result<bool, UsageError> {
        if m.get_flag(flag) {
            return Ok(true);
        }
        Ok(env
            .parsed(vigil, parse_bool)?
            .unwrap_or_else(|| env.is_set(tini)))
    };

    let verbosity = match m.get_count("verbose") {
        0 => match env.parsed("VIGIL_VERBOSITY", parse_verbosity)? {
            Some(v) => v,
            None => env
                .raw("TINI_VERBOSITY")
                .map_or(DEFAULT_VERBOSITY, |v| atoi(&v)),
        },
        n => DEFAULT_VERBOSITY.saturating_add(n),
    }
    .min(MAX_VERBOSITY);

    let mut rewrites = Rewrites::default();
    match m.get_many::<(i32, i32)>("rewrite") {
        Some(rules) => rules.for_each(|r| rewrites.add(*r)),
        None => {
            if let Some(list) = env.get("VIGIL_REWRITE")? {
                for rule in list.split(',').filter(|r| !r.trim().is_empty()) {
                    let rule = Rewrites::parse_rule(rule.trim())
                        .map_err(|why| UsageError(format!("VIGIL_REWRITE: {why}")))?;
                    rewrites.add(rule);
                }
            }
        }
    }

    let option = |id: &str, var: &str, parse: fn(&str) -> Result<Duration, String>| match m
        .get_one::<Duration>(id)
    {
        Some(d) => Ok(Some(*d)),
        None => env.parsed(var, parse),
    };
    let hook = |id: &str, var: &str| match m.get_one::<Vec<OsString>>(id) {
        Some(words) => Ok(Some(words.clone())),
        None => env.parsed(var, hooks::parse_command),
    };

    let termination_log = match m.get_one::<OsString>("termination-log") {
        Some(path) => non_empty_path(path),
        None => match (env.0)("VIGIL_TERMINATION_LOG") {
            // Here an empty value is meaningful: it switches the log off.
            Some(path) => non_empty_path(&path),
            None => Path::new(DEFAULT_TERMINATION_LOG)
                .exists()
                .then(|| PathBuf::from(DEFAULT_TERMINATION_LOG)),
        },
    };

    Ok(Config {
        command,
        subreaper: switch("subreaper", "VIGIL_SUBREAPER", "TINI_SUBREAPER")?,
        signal_group: switch(
            "group",
            "VIGIL_KILL_PROCESS_GROUP",
            "TINI_KILL_PROCESS_GROUP",
        )?,
        parent_death_signal: m.get_one::<i32>("parent-death-signal").copied(),
        verbosity,
        warn_on_reap: m.get_flag("warn-on-reap"),
        expected_codes: m
            .get_many::<i32>("expect")
            .map(|v| v.copied().collect())
            .unwrap_or_default(),
        rewrites,
        post_start: hook("post-start", "VIGIL_POST_START")?,
        post_start_timeout: option(
            "post-start-timeout",
            "VIGIL_POST_START_TIMEOUT",
            parse_duration,
        )?,
        pre_stop: hook("pre-stop", "VIGIL_PRE_STOP")?,
        pre_stop_sleep: option("pre-stop-sleep", "VIGIL_PRE_STOP_SLEEP", parse_duration)?
            .unwrap_or(Duration::ZERO),
        grace_period: option("grace-period", "VIGIL_GRACE_PERIOD", parse_duration)?,
        drain_timeout: option("drain-timeout", "VIGIL_DRAIN_TIMEOUT", parse_duration)?
            .unwrap_or(Duration::from_secs(2)),
        termination_log,
        // 0 means no timeout, as with coreutils `timeout`.
        timeout: option("timeout", "VIGIL_TIMEOUT", parse_duration)?.filter(|d| !d.is_zero()),
    })
}

fn non_empty_path(path: &OsString) -> Option<PathBuf> {
    (!path.is_empty()).then(|| PathBuf::from(path))
}

/// C's `atoi`, which tini uses for `TINI_VERBOSITY`: leading digits, else 0.
fn atoi(text: &str) -> u8 {
    let digits: String = text
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits
        .parse::<u32>()
        .map_or(0, |n| n.min(u32::from(MAX_VERBOSITY)) as u8)
}

/// An exit code as tini reads it (C's `strtol`, base 10, nothing after
/// the number): leading blanks and a sign are allowed, `3 ` and `0x3` are
/// not. tini also takes an empty value as 0; vigil calls that a usage error.
fn parse_exit_code(text: &str) -> Result<i32, String> {
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

fn parse_bool(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(format!(
            "'{text}' is not a switch: use 1/0, true/false, yes/no or on/off"
        )),
    }
}

fn parse_verbosity(text: &str) -> Result<u8, String> {
    match text.trim().parse::<u8>() {
        Ok(v) if v <= MAX_VERBOSITY => Ok(v),
        _ => Err(format!(
            "'{text}' is not a verbosity: use a number from 0 to {MAX_VERBOSITY}"
        )),
    }
}

/// The longest duration vigil takes: longer ones mean nothing for a
/// container, and deadlines far beyond it would overflow the clock.
const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// Parses a duration: `500ms`, `5s`, `1.5s`, `2m`, `1h`; a bare number is
/// seconds. Integer arithmetic only: floats would cost the binary 20 KiB.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || {
        format!("'{text}' is not a duration: use a number with a unit ms, s, m or h (500ms, 5s, 2m); a bare number means seconds")
    };
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let nanos_per_unit: u128 = match unit {
        "" | "s" => 1_000_000_000,
        "ms" => 1_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return Err(bad()),
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() || (number.contains('.') && fraction.is_empty()) || fraction.len() > 9 {
        return Err(bad());
    }
    let digits = |s: &str| -> Result<u128, String> {
        if s.is_empty() {
            return Ok(0);
        }
        s.parse::<u128>().map_err(|_| bad())
    };
    let scale = 10u128.pow(fraction.len() as u32);
    let fraction_nanos = digits(fraction)? * nanos_per_unit / scale;
    let nanos = digits(whole)?
        .checked_mul(nanos_per_unit)
        .and_then(|n| n.checked_add(fraction_nanos))
        .ok_or_else(bad)?;
    if nanos > MAX_DURATION.as_nanos() {
        return Err(format!("'{text}' is too long: at most 8760h (a year)"));
    }
    let secs = u64::try_from(nanos / 1_000_000_000).map_err(|_| bad())?;
    Ok(Duration::new(secs, (nanos % 1_000_000_000) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str], vars: &[(&str, &str)]) -> Result<Config, UsageError> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let env = move |k: &str| {
            vars.iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| OsString::from(v))
        };
        let args = std::iter::once("vigil")
            .chain(args.iter().copied())
            .map(OsString::from);
        match parse(args, env)? {
            Action::Run(c) => Ok(*c),
            Action::Print(p) => panic!("printed {p}"),
        }
    }

    #[test]
    fn stops_at_the_first_word() {
        let c = run(&["-v", "sh", "-c", "exit 3", "-v"], &[]).unwrap();
        assert_eq!(c.command, ["sh", "-c", "exit 3", "-v"]);
        assert_eq!(c.verbosity, 2);
        let c = run(&["--", "ls", "-l"], &[]).unwrap();
        assert_eq!(c.command, ["ls", "-l"]);
    }

    #[test]
    fn tini_options() {
        let c = run(
            &[
                "-s", "-g", "-w", "-p", "SIGUSR1", "-e", "3", "-e", "4", "-vvv", "--", "x",
            ],
            &[],
        )
        .unwrap();
        assert!(c.subreaper && c.signal_group && c.warn_on_reap);
        assert_eq!(c.parent_death_signal, Some(10));
        assert_eq!(c.expected_codes, [3, 4]);
        assert_eq!(c.verbosity, 4);
    }

    #[test]
    fn repeated_tini_options_are_accepted() {
        let c = run(&["-s", "-s", "-gg", "-w", "-w", "-v", "-v", "--", "x"], &[]).unwrap();
        assert!(c.subreaper && c.signal_group && c.warn_on_reap);
        assert_eq!(c.verbosity, 3);
        // The last -p wins, as with getopt; each is checked.
        let c = run(&["-p", "SIGHUP", "-p", "SIGKILL", "x"], &[]).unwrap();
        assert_eq!(c.parent_death_signal, Some(9));
        assert!(run(&["-p", "SIGNOPE", "-p", "SIGKILL", "x"], &[]).is_err());
        let c = run(&["-e", "3", "-e", "3", "x"], &[]).unwrap();
        assert_eq!(c.expected_codes, [3, 3]);
        let printed = |args: &[&str]| {
            let args = std::iter::once("vigil").chain(args.iter().copied());
            matches!(
                parse(args.map(OsString::from), |_| None),
                Ok(Action::Print(_))
            )
        };
        assert!(printed(&["-l", "-l"]));
    }

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
    fn environment_precedence() {
        let c = run(&["x"], &[("TINI_SUBREAPER", ""), ("TINI_VERBOSITY", "3")]).unwrap();
        assert!(c.subreaper);
        assert_eq!(c.verbosity, 3);
        let c = run(
            &["x"],
            &[
                ("TINI_SUBREAPER", ""),
                ("VIGIL_SUBREAPER", "off"),
                ("VIGIL_VERBOSITY", "0"),
                ("TINI_VERBOSITY", "3"),
            ],
        )
        .unwrap();
        assert!(!c.subreaper);
        assert_eq!(c.verbosity, 0);
        let c = run(
            &["--grace-period", "3s", "x"],
            &[
                ("VIGIL_GRACE_PERIOD", "9s"),
                ("VIGIL_DRAIN_TIMEOUT", "500ms"),
            ],
        )
        .unwrap();
        assert_eq!(c.grace_period, Some(Duration::from_secs(3)));
        assert_eq!(c.drain_timeout, Duration::from_millis(500));
        let c = run(
            &["x"],
            &[
                ("VIGIL_REWRITE", "TERM:QUIT, USR1:0"),
                ("VIGIL_PRE_STOP", "echo 'a b'"),
            ],
        )
        .unwrap();
        assert_eq!(c.rewrites.apply(15), Some(3));
        assert_eq!(c.rewrites.apply(10), None);
        assert_eq!(c.pre_stop.unwrap(), ["echo", "a b"]);
        let c = run(&["x"], &[("VIGIL_TERMINATION_LOG", "")]).unwrap();
        assert_eq!(c.termination_log, None);
    }

    #[test]
    fn usage_errors_name_the_value() {
        type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
        let cases: &[Case] = &[
            (&["-x", "cmd"], &[], "-x"),
            (&["-p", "SIGFOO", "cmd"], &[], "SIGFOO"),
            (&["-e", "256", "cmd"], &[], "256"),
            (&["-e", "-1", "cmd"], &[], "-1"),
            (&["--post-start-timeout", "-1s", "cmd"], &[], "-1s"),
            (&["-e", "abc", "cmd"], &[], "abc"),
            (&[], &[], "no command"),
            (&["-v"], &[], "no command"),
            (&["--grace-period", "5x", "cmd"], &[], "5x"),
            (&["--rewrite", "TERM:", "cmd"], &[], "TERM:"),
            (&["--rewrite", "99:1", "cmd"], &[], "99"),
            (&["--pre-stop", "sh -c 'oops", "cmd"], &[], "oops"),
            (&["--pre-stop", "", "cmd"], &[], "empty"),
            (&["cmd"], &[("VIGIL_SUBREAPER", "maybe")], "VIGIL_SUBREAPER"),
            (&["cmd"], &[("VIGIL_VERBOSITY", "9")], "VIGIL_VERBOSITY"),
            (&["cmd"], &[("VIGIL_GRACE_PERIOD", "soon")], "soon"),
            (&["cmd"], &[("VIGIL_REWRITE", "TERM")], "VIGIL_REWRITE"),
        ];
        for (args, vars, needle) in cases {
            let err = run(args, vars).expect_err(needle);
            assert!(err.0.contains(needle), "{args:?}: {}", err.0);
            assert!(!err.0.contains("\n\n"), "{args:?}: {}", err.0);
        }
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

    #[test]
    fn version_forms() {
        let print = |argv0: &str| match parse([argv0, "--version"].map(OsString::from), |_| None) {
            Ok(Action::Print(p)) => p,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            print("/usr/bin/vigil"),
            format!("vigil version {VERSION}\n{BUILD}\n")
        );
        assert_eq!(
            print("/sbin/docker-init"),
            format!("tini version {VERSION} - vigil\n")
        );
    }
}
