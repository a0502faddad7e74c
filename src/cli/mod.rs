//! The command line and the environment: everything vigil is told, checked
//! and turned into one `Config` before anything starts.
//!
//! Every option is declared once, in one row of `options::OPTIONS`, with
//! its effect on the `Config`; this module reads the command line and the
//! variables by that table, and `apply_rows` makes the `Config` by
//! applying every row to the values it was given. Parsing is getopt's,
//! as tini's is, except that it stops at the first word that is not an
//! option: short options cluster (`-sgv`), a short option's value may be
//! attached (`-pTERM`, `-e3`, `-e=3`) and, as in getopt, may be any word,
//! even one starting with `-`. Long ones take `--name VALUE` or
//! `--name=VALUE`; a VALUE word that is `--` or starts with `-` is a usage
//! error naming the option (`--termination-log -- true` would otherwise
//! write the report to a file called `--`), and `--name=-VALUE` says it
//! on purpose.
//!
//! Precedence: command line, then `VIGIL_*`, then `TINI_*`, then the default.
//! Every bad value becomes one line naming it, and exit status 2.

/// What an option does to the `Config` with its value (`Opt::apply` says
/// when it is called).
pub type Apply = fn(&mut Config, Value);

/// An option's effect, as the table writes it: here the closure itself.
/// The tests include the table with an `apply!` that drops it (options.rs
/// says why).
macro_rules! apply {
    ($effect:expr) => {
        $effect
    };
}

mod help;
pub mod options;
pub mod values;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use options::{DEFAULT_TERMINATION_LOG, Default, Kind, OPTIONS, Opt, Repeat};
pub use options::{NO_GRACE_WAIT, TIMEOUT_GRACE};
use values::{From, Value};

use crate::log::facts::signal::{Rewrites, Signal};
use crate::log::format::Format;
use crate::probe::Url;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The commit and the target this binary was built from and for (build.rs).
const BUILD: &str = concat!(
    "commit ",
    env!("VIGIL_COMMIT"),
    ", built for ",
    env!("VIGIL_TARGET")
);

/// Everything vigil needs to run. What the default leaves in a field does
/// not matter: every option's effect sets its field, given or not.
#[derive(Debug, Default)]
pub struct Config {
    pub command: Vec<OsString>,
    pub subreaper: bool,
    pub parent_death_signal: Option<Signal>,
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
    /// `--pre-stop-timeout`; unset: half the grace period, else
    /// `NO_GRACE_WAIT`.
    pub pre_stop_timeout: Option<Duration>,
    /// The signals that start the stop sequence.
    pub stop_signals: Vec<Signal>,
    pub grace_period: Option<Duration>,
    pub drain_timeout: Duration,
    pub termination_log: Option<PathBuf>,
    /// `--timeout`: run the stop sequence this long after the start.
    pub timeout: Option<Duration>,
    /// `--user`: whom the child and the hooks run as (looked up at start).
    pub user: Option<crate::user::Spec>,
    /// `--caps`: the capabilities the child and the hooks hold (checked at
    /// start).
    pub caps: Option<crate::caps::Set>,
    /// `--log-format`: how every line vigil writes looks.
    pub log_format: Format,
    /// `--probe`: check this once and exit, instead of running a command.
    pub probe: Option<Url>,
    /// How long one probe may take.
    pub probe_timeout: Duration,
    /// `--probe-timeout` is on the command line where nothing probes: no
    /// `--ready-when`, no `--live-when` (a `--probe` is no `Config::Run`).
    /// Its variable is no such mistake: it may be the image's health
    /// check's, which reads it too.
    pub probe_timeout_unused: bool,
    /// `--ready-when`: probe this until it first succeeds.
    pub ready_when: Option<Url>,
    /// `--ready-interval`: the longest wait between two probes.
    pub ready_interval: Duration,
    /// `--ready-timeout`: not ready this long after the start stops it.
    pub ready_timeout: Option<Duration>,
    /// `--live-when`: probe this for the child's whole life.
    pub live_when: Option<Url>,
    /// `--live-interval`: the wait between two liveness probes.
    pub live_interval: Duration,
    /// `--live-failures`: this many failures in a row stop the container.
    pub live_failures: u32,
    /// `--live-start`: the wait before the first liveness probe, without
    /// `--ready-when`.
    pub live_start: Duration,
    /// `--exit-code`: the exit status of each cause that sets one.
    pub exit_codes: crate::log::facts::stop::ExitCodes,
    /// `-P`: run no command, only reap until a stop signal.
    pub pause: bool,
    /// `--install DIR`: copy vigil there and exit.
    pub install: Option<PathBuf>,
    /// Mistakes that do not stop vigil (a misspelt variable), to be logged
    /// once logging is set up.
    pub warnings: Vec<UnknownVariable>,
}

/// A `VIGIL_*` variable vigil does not know (a misspelt one is otherwise
/// silently ignored), with the one it most likely meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVariable {
    pub name: String,
    pub meant: Option<&'static str>,
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
    /// `--probe`: check `config.probe` once, and exit 0 or 1.
    Probe(Box<Config>),
    /// Help, version or license: print this on stdout and exit 0.
    Print(String),
}

/// A usage error: one line, naming the bad value.
#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

/// The process's `VIGIL_*` and `TINI_*` variables, in any case (a
/// `vigil_timeout` is a mistake to point out), the only ones `parse` looks
/// at. The environment is read where the C library keeps it and only these
/// are copied: a container's environment may hold dozens of others.
pub fn own_variables() -> Vec<(OsString, OsString)> {
    let ours = |name: &[u8]| {
        [&b"VIGIL_"[..], b"TINI_"].iter().any(|prefix| {
            name.get(..prefix.len())
                .is_some_and(|start| start.eq_ignore_ascii_case(prefix))
        })
    };
    let variable = |entry: &[u8]| {
        let eq = entry.iter().position(|&b| b == b'=')?;
        let (name, value) = (entry.get(..eq)?, entry.get(eq + 1..)?);
        let os = |bytes| OsStr::from_bytes(bytes).to_os_string();
        ours(name).then(|| (os(name), os(value)))
    };
    crate::sys::env::entries()
        .filter_map(|entry| variable(entry.to_bytes()))
        .collect()
}

/// The `VIGIL_*` variables of the option table: the ones vigil reads.
pub fn own_variable_names() -> Vec<&'static str> {
    OPTIONS.iter().filter_map(|o| o.env).collect()
}

/// Parses the command line (`args`, the program's name first) and the
/// environment (`vars`: only the variables in the table are looked at).
pub fn parse(
    args: &[OsString],
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Result<Action, UsageError> {
    let invoked_as_docker_init = args
        .first()
        .and_then(|a| Path::new(a).file_name())
        .is_some_and(|name| name == "docker-init");
    let scan = scan(args);
    let probing = scan.asks_probe();
    let Some(given) = scan.given()? else {
        return Ok(Action::Print(help::render()));
    };
    if given.asks(Kind::PrintVersion) && !probing {
        return Ok(Action::Print(if invoked_as_docker_init {
            // The form `docker info` parses for its init version.
            format!("tini version {VERSION} - vigil\n")
        } else {
            // The first line is what scripts match; the second traces the
            // binary back to its source and build.
            format!("vigil version {VERSION}\n{BUILD}\n")
        }));
    }
    if given.asks(Kind::PrintLicense) && !probing {
        return Ok(Action::Print(include_str!("../../LICENSE").to_string()));
    }
    check_mode(&given, probing)?;
    let (env, unknown) = Env::keep_known(vars);
    let mut config = apply_rows(given, &env, probing)?;
    if probing {
        // The probe's line is the health check's output, not vigil's log:
        // an image's `VIGIL_VERBOSITY=0`, meant to hide the container's
        // exit report, reaches its health check too, and must not leave
        // the health log with a failure and no reason.
        config.verbosity = config.verbosity.max(values::DEFAULT_VERBOSITY);
        return Ok(Action::Probe(Box::new(config)));
    }
    config.warnings = unknown;
    Ok(Action::Run(Box::new(config)))
}

/// Whether the command line asks for `--probe`: a `--probe` among its
/// options, as the parser reads them, even after a mistake or with one in
/// its own words. A usage error of such a command line exits 1, never 2
/// (which Docker's `HEALTHCHECK` reserves), and writes no termination log
/// (a probe runs beside the container's vigil, whose termination log it
/// is).
pub fn probe_asked(args: &[OsString]) -> bool {
    scan(args).asks_probe()
}

/// The `Config`: the command, and every row's effect (of the rows that
/// go with `--probe` when `probing`) applied to its values, in the
/// table's order (so a usage error names the first bad variable in the
/// order `--help` lists them); the durations checked.
fn apply_rows(given: Given, env: &Env, probing: bool) -> Result<Config, UsageError> {
    let mut config = Config::default();
    for (at, opt) in OPTIONS.iter().enumerate() {
        if !probing || reads("--probe", PROBE_READS, opt) {
            for value in given.resolve(at, opt, env)? {
                (opt.apply)(&mut config, value);
            }
        }
    }
    check_durations(&config, probing)?;
    config.probe_timeout_unused = given.opts().any(|o| o.long == Some("probe-timeout"))
        && config.ready_when.is_none()
        && config.live_when.is_none();
    config.command = given.command;
    Ok(config)
}

/// A probe with no time to answer always fails; probing without a pause
/// would never let the loop rest.
fn check_durations(config: &Config, probing: bool) -> Result<(), UsageError> {
    let zero = |what: &str| Err(usage(format!("{what} must be more than 0")));
    if config.probe_timeout.is_zero() {
        return zero("--probe-timeout (VIGIL_PROBE_TIMEOUT)");
    }
    if !probing && config.ready_interval.is_zero() {
        return zero("--ready-interval (VIGIL_READY_INTERVAL)");
    }
    if !probing && config.live_interval.is_zero() {
        return zero("--live-interval (VIGIL_LIVE_INTERVAL)");
    }
    if let Some((cause, first, second)) = config.exit_codes.given_twice() {
        let cause = cause.word();
        return Err(usage(format!(
            "--exit-code (VIGIL_EXIT_CODES) gives {cause} twice, {cause}={first} and {cause}={second}: give each cause one status"
        )));
    }
    Ok(())
}

/// Where the termination log goes when the command line or the
/// environment could not be read: the same precedence, read leniently (the
/// first `--termination-log` among the options before any mistake,
/// `VIGIL_TERMINATION_LOG`, the default), so that Kubernetes can show why
/// the container never started.
pub fn termination_log_after(args: &[OsString], var: Option<OsString>) -> Option<PathBuf> {
    termination_log(scan(args).first_value("termination-log").or(var))
}

/// The log format for what is said before the command line is read (a
/// usage error, a start-up failure): the first `--log-format` among the
/// options before any mistake, else `VIGIL_LOG_FORMAT`, read leniently. A
/// value that is itself wrong gives text, in which that mistake is then
/// reported.
pub fn log_format_before(args: &[OsString], var: Option<OsString>) -> Format {
    let value = scan(args).first_value("log-format");
    let value = value.or(var.filter(|v| !v.is_empty()));
    let format = value.and_then(|value| Format::parse(value.to_str()?).ok());
    format.unwrap_or_default()
}

/// The termination log's file, given `--termination-log`'s value: none
/// when it is empty; when it is unset, the default if that file exists.
fn termination_log(given: Option<OsString>) -> Option<PathBuf> {
    match given {
        Some(path) => (!path.is_empty()).then(|| PathBuf::from(path)),
        None => Path::new(DEFAULT_TERMINATION_LOG)
            .exists()
            .then(|| PathBuf::from(DEFAULT_TERMINATION_LOG)),
    }
}

/// What the command line said, option by option in the order given (each
/// option by its place in `OPTIONS`), and the command.
#[derive(Debug, Default)]
struct Given {
    values: Vec<(usize, Value)>,
    command: Vec<OsString>,
}

/// How the command line calls an option in messages: `-p` or `--timeout`.
fn flag_name(opt: &Opt) -> String {
    match opt.long {
        Some(long) => format!("--{long}"),
        None => opt.short.map(|c| format!("-{c}")).unwrap_or_default(),
    }
}

/// A command-line mistake, with the pointer to `--help`.
fn usage(message: String) -> UsageError {
    UsageError(format!("{message} (see vigil --help)"))
}

/// One option of the command line, as `scan` reads it.
enum Word<'a> {
    /// The row at this place in `OPTIONS`, with its value as written.
    Opt(usize, Option<&'a OsStr>),
    /// A mistake in the words themselves: an option vigil does not know,
    /// or one whose value is missing or not taken (with its row).
    Mistake(Option<usize>, UsageError),
}

/// The command line read once: its options in the order given, and the
/// command. The parser and the lenient readers (what a usage error needs
/// to know) all read this one reading, so they cannot disagree on which
/// word is what.
struct Scan<'a> {
    words: Vec<Word<'a>>,
    command: &'a [OsString],
}

/// Reads the options of `args` (the program's name first), up to `--` or
/// the first word that is not one. A mistake does not end the reading:
/// the words after it are read as they would be without it, for a probe
/// to be recognised beyond it.
fn scan(args: &[OsString]) -> Scan<'_> {
    let mut words = Vec::new();
    let mut rest = args.get(1..).unwrap_or_default();
    while let Some((arg, after)) = rest.split_first() {
        let bytes = arg.as_bytes();
        if bytes == b"--" {
            rest = after;
            break;
        }
        if let Some(long) = bytes.strip_prefix(b"--") {
            rest = after;
            words.push(long_option(arg, long, &mut rest));
        } else if let Some(cluster) = bytes.strip_prefix(b"-").filter(|c| !c.is_empty()) {
            rest = after;
            short_options(cluster, &mut rest, &mut words);
        } else {
            // The first word that is not an option: the command starts here.
            break;
        }
    }
    Scan {
        words,
        command: rest,
    }
}

/// The row of the option `is` picks, with its place in `OPTIONS`.
fn row(is: impl Fn(&Opt) -> bool) -> Option<(usize, &'static Opt)> {
    OPTIONS.iter().enumerate().find(|(_, o)| is(o))
}

/// What is wrong with `--NAME WORD`, WORD starting with `-`, which is
/// never taken as a value: a missing value, and how to give one that
/// starts with `-` when WORD would be one (`--pre-stop=-x`). A negative
/// number (`--grace-period -1s`) is a value, and a bad one: its own
/// mistake is said, not advice whose result would only be refused too.
fn dash_value(opt: &Opt, word: &OsStr) -> String {
    let name = flag_name(opt);
    let read = values::read(opt.kind, word, From::CommandLine);
    let number = word
        .as_bytes()
        .get(1)
        .is_some_and(|b| b.is_ascii_digit() || *b == b'.');
    let missing = format!(
        "{name} needs a value ({}), but the next word is '{}'",
        opt.kind.value_name(),
        word.to_string_lossy()
    );
    match read {
        Err(why) if number => format!("{name}: {why}"),
        Ok(_) => format!("{missing}: for a value that starts with '-', write {name}=VALUE"),
        Err(_) => missing,
    }
}

/// `--NAME`, `--NAME=VALUE` or `--NAME VALUE`, `rest` the words after it.
/// A VALUE word that looks like an option is no value: the mistake names
/// the option, and that word is read as what it looks like.
fn long_option<'a>(arg: &OsStr, long: &'a [u8], rest: &mut &'a [OsString]) -> Word<'a> {
    let (name, inline) = match long.iter().position(|&b| b == b'=') {
        Some(eq) => (long.get(..eq).unwrap_or_default(), long.get(eq + 1..)),
        None => (long, None),
    };
    let Some((at, opt)) = row(|o| o.long.is_some_and(|l| l.as_bytes() == name)) else {
        let mut unknown = format!("unknown option '{}'", arg.to_string_lossy());
        if let Some(meant) = nearest_option(&String::from_utf8_lossy(name)) {
            unknown.push_str(&format!(": did you mean {meant}?"));
        }
        return Word::Mistake(None, usage(unknown));
    };
    let mistake = |message| Word::Mistake(Some(at), usage(message));
    match (opt.kind.takes_value(), inline, rest.split_first()) {
        (true, Some(value), _) => Word::Opt(at, Some(OsStr::from_bytes(value))),
        (true, None, None) => mistake(needs_value(opt)),
        (true, None, Some((word, _))) if word.as_bytes().starts_with(b"-") => {
            mistake(dash_value(opt, word))
        }
        (true, None, Some((value, after))) => {
            *rest = after;
            Word::Opt(at, Some(value))
        }
        (false, Some(value), _) => mistake(format!(
            "{} takes no value, but was given '{}'",
            flag_name(opt),
            OsStr::from_bytes(value).to_string_lossy()
        )),
        (false, None, _) => Word::Opt(at, None),
    }
}

/// A word of short options (`-s`, `-sgv`), `rest` the words after it. As
/// in getopt, the first that takes a value takes the rest of the word
/// (`-pTERM`, and `-e=3` as `-e 3`), else the next word, whatever it is.
fn short_options<'a>(cluster: &'a [u8], rest: &mut &'a [OsString], words: &mut Vec<Word<'a>>) {
    let mut letters = cluster;
    while let Some((&letter, after)) = letters.split_first() {
        letters = after;
        let Some((at, opt)) = row(|o| letter.is_ascii() && o.short == Some(char::from(letter)))
        else {
            let shown = if letter.is_ascii() {
                char::from(letter).to_string()
            } else {
                String::from_utf8_lossy(letters).into_owned()
            };
            let unknown = usage(format!("unknown option '-{shown}'"));
            words.push(Word::Mistake(None, unknown));
            continue;
        };
        if !opt.kind.takes_value() {
            words.push(Word::Opt(at, None));
            continue;
        }
        let value = if letters.is_empty() {
            let Some((value, after)) = rest.split_first() else {
                words.push(Word::Mistake(Some(at), usage(needs_value(opt))));
                return;
            };
            *rest = after;
            value.as_os_str()
        } else {
            OsStr::from_bytes(letters.strip_prefix(b"=").unwrap_or(letters))
        };
        words.push(Word::Opt(at, Some(value)));
        return;
    }
}

/// An option given without the value it takes.
fn needs_value(opt: &Opt) -> String {
    format!(
        "{} needs a value: {}",
        flag_name(opt),
        opt.kind.value_name()
    )
}

impl Scan<'_> {
    /// What the options said, each value checked, in order; none when the
    /// help is asked for before any mistake.
    fn given(self) -> Result<Option<Given>, UsageError> {
        let mut given = Given::default();
        for word in self.words {
            let (at, raw) = match word {
                Word::Opt(at, raw) => (at, raw),
                Word::Mistake(_, error) => return Err(error),
            };
            let Some(opt) = OPTIONS.get(at) else {
                continue;
            };
            if opt.kind == Kind::PrintHelp {
                return Ok(None);
            }
            if opt.repeat == Repeat::Once && given.all(at).next().is_some() {
                let twice = format!("{} is given twice: give it once", flag_name(opt));
                return Err(usage(twice));
            }
            let value = values::read(opt.kind, raw.unwrap_or_default(), From::CommandLine)
                .map_err(|why| usage(format!("{}: {why}", flag_name(opt))))?;
            given.values.push((at, value));
        }
        given.command = self.command.to_vec();
        Ok(Some(given))
    }

    /// Whether `--probe` is among the options.
    fn asks_probe(&self) -> bool {
        let probe = |opt: &Opt| opt.long == Some("probe");
        self.words.iter().any(|word| word.opt().is_some_and(probe))
    }

    /// The value of the first `--LONG` among the options before any
    /// mistake: after one, which word is what cannot be told for sure (the
    /// word after a `--termination-log` might be the program to run).
    fn first_value(&self, long: &str) -> Option<OsString> {
        self.words
            .iter()
            .map_while(|word| match word {
                Word::Opt(_, value) => Some((word.opt(), *value)),
                Word::Mistake(..) => None,
            })
            .find(|(opt, _)| opt.is_some_and(|o| o.long == Some(long)))
            .and_then(|(_, value)| value)
            .map(OsStr::to_os_string)
    }
}

impl Word<'_> {
    /// The option's row, when vigil knows the option.
    fn opt(&self) -> Option<&'static Opt> {
        match self {
            Word::Opt(at, _) | Word::Mistake(Some(at), _) => OPTIONS.get(*at),
            Word::Mistake(None, _) => None,
        }
    }
}

impl Given {
    /// The rows of the options given, in order.
    fn opts(&self) -> impl Iterator<Item = &'static Opt> + '_ {
        self.values.iter().filter_map(|(at, _)| OPTIONS.get(*at))
    }

    /// Whether an option of `kind` was given (`--version`, `-l`).
    fn asks(&self, kind: Kind) -> bool {
        self.opts().any(|o| o.kind == kind)
    }

    /// Every value given for the row at `at`, in order.
    fn all(&self, at: usize) -> impl Iterator<Item = &Value> {
        self.values
            .iter()
            .filter(move |(i, _)| *i == at)
            .map(|(_, v)| v)
    }

    /// The values of `opt`, the row at `at`, after the precedence, to be
    /// applied in turn: its uses on the command line, in order (a level's
    /// uses counted, as one value); else vigil's variable, then tini's, then
    /// the table's default; else `Value::Unset`.
    fn resolve(&self, at: usize, opt: &Opt, env: &Env) -> Result<Vec<Value>, UsageError> {
        let uses: Vec<Value> = self.all(at).cloned().collect();
        if opt.kind == Kind::Level && !uses.is_empty() {
            let uses = u8::try_from(uses.len()).unwrap_or(u8::MAX);
            let level = values::DEFAULT_VERBOSITY.saturating_add(uses);
            return Ok(vec![Value::Level(level.min(values::MAX_VERBOSITY))]);
        }
        if !uses.is_empty() {
            return Ok(uses);
        }
        if let Some(value) = env.value(opt)? {
            return Ok(vec![value]);
        }
        match opt.default {
            Default::Value(text) => values::read(opt.kind, OsStr::new(text), From::Vigil)
                .map(|value| vec![value])
                .map_err(|why| UsageError(format!("the default of {}: {why}", flag_name(opt)))),
            // The others are worked out where what they depend on is known.
            _ => Ok(vec![Value::Unset]),
        }
    }
}

/// The environment variables the table names, kept from the environment.
struct Env(Vec<(OsString, OsString)>);

/// Variables vigil sets itself, for its hooks: a vigil started by a hook
/// sees them, and they are no one's mistake.
const HOOK_VARIABLES: [&str; 3] = ["VIGIL_HOOK", "VIGIL_CHILD_PID", "VIGIL_SIGNAL"];

impl Env {
    /// The variables the table names, and the mistakes among the others:
    /// every `VIGIL_*` variable it does not name, in any case (a
    /// misspelt variable is otherwise silently ignored), and a `TINI_*`
    /// one that looks like a misspelling of one of tini's.
    fn keep_known(
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> (Env, Vec<UnknownVariable>) {
        let mut known = Vec::new();
        let mut unknown = Vec::new();
        for (name, value) in vars {
            let Some(text) = name.to_str() else {
                continue;
            };
            if OPTIONS
                .iter()
                .any(|o| o.env == Some(text) || o.tini_env == Some(text))
            {
                known.push((name, value));
                continue;
            }
            let upper = text.to_ascii_uppercase();
            let vigil_name = upper.starts_with("VIGIL_") && !HOOK_VARIABLES.contains(&text);
            let family = if vigil_name { "VIGIL_" } else { "TINI_" };
            let names = OPTIONS
                .iter()
                .filter_map(|o| if vigil_name { o.env } else { o.tini_env })
                .filter_map(|name| Some((name.strip_prefix(family)?, name)));
            let meant = upper
                .strip_prefix(family)
                .and_then(|typed| nearest(typed, names));
            if vigil_name || (upper.starts_with("TINI_") && meant.is_some()) {
                let name = text.to_string();
                unknown.push(UnknownVariable { name, meant });
            }
        }
        (Env(known), unknown)
    }

    fn get(&self, name: &str) -> Option<&OsStr> {
        self.0
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_os_str())
    }

    /// The value of `opt` from its variables: vigil's own, where an empty
    /// one counts as unset (unless it is a path, which empty switches off),
    /// else tini's, which counts when set at all and is read as tini reads
    /// it (never a usage error: tini accepts anything there).
    fn value(&self, opt: &Opt) -> Result<Option<Value>, UsageError> {
        if let Some(name) = opt.env
            && let Some(raw) = self.get(name)
            && (!raw.is_empty() || opt.kind == Kind::Path)
        {
            return values::read(opt.kind, raw, From::Vigil)
                .map(Some)
                .map_err(|why| UsageError(format!("{name}: {why}")));
        }
        let tini = opt.tini_env.and_then(|name| self.get(name));
        Ok(tini.and_then(|raw| {
            let text = raw.to_string_lossy();
            values::read(opt.kind, OsStr::new(text.as_ref()), From::Tini).ok()
        }))
    }
}

/// What `typed` most likely meant among `known`, each a name to compare
/// it with (without the family's `VIGIL_` or `--`) and what to suggest:
/// the nearest name in edit distance of those that `typed` is close to
/// (at most 3 edits, and fewer than half its letters, so that a short
/// word is not close to every short name) or is the start of (`GRACE`
/// for `GRACE_PERIOD`). A name that `typed` merely starts with is only
/// as near as its distance says: `PRE_STOP` is 6 edits from
/// `PRE_STOP_SLEPP`, which meant `PRE_STOP_SLEEP`, 1 edit away, and
/// suggesting it would run the sleep's value as a hook.
fn nearest<T: Ord>(typed: &str, known: impl Iterator<Item = (impl AsRef<str>, T)>) -> Option<T> {
    let letters = typed.chars().count();
    known
        .filter_map(|(name, meant)| {
            let name = name.as_ref();
            let d = distance(typed, name);
            let close = d <= 3 && 2 * d < letters;
            let start = letters > 0 && name.starts_with(typed);
            (close || start).then_some((d, meant))
        })
        .min()
        .map(|(_, meant)| meant)
}

/// The option an unknown `--NAME` most likely meant, as the command line
/// writes it: a long option by its name (`--grace` for
/// `--grace-period`), and one that has only a letter by its variable's
/// words (`--verbose` for `-v`, whose variable is `VIGIL_VERBOSITY`).
/// Case and `_` for `-` are not told apart (`--grace_period`).
fn nearest_option(name: &str) -> Option<String> {
    let typed = name.to_ascii_lowercase().replace('_', "-");
    let words = |o: &Opt| {
        let var = o.env?.strip_prefix("VIGIL_")?;
        Some(var.to_ascii_lowercase().replace('_', "-"))
    };
    let names = OPTIONS.iter().filter_map(|o| {
        let name = o.long.map(str::to_string).or_else(|| words(o))?;
        Some((name, flag_name(o)))
    });
    nearest(&typed, names)
}

/// The number of letters to insert, delete or change to make one name
/// the other (Levenshtein).
fn distance(a: &str, b: &str) -> usize {
    // Row by row, the distances from the letters of `a` read so far to
    // each start of `b`.
    let mut row: Vec<usize> = (0..=b.chars().count()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut left = i + 1;
        let mut next = vec![left];
        for ((cb, diagonal), up) in b.chars().zip(&row).zip(row.iter().skip(1)) {
            left = (diagonal + usize::from(ca != cb)).min(up + 1).min(left + 1);
            next.push(left);
        }
        row = next;
    }
    row.last().copied().unwrap_or(usize::MAX)
}

/// The options a `--probe` command line may hold besides `--probe`
/// itself: the timeout and how the line is said. Of the variables, too,
/// a probe reads only theirs: an image's `ENV` configures the vigil that
/// runs the container, and the probe runs beside it with the same
/// variables.
const PROBE_READS: &[&str] = &["--probe-timeout", "-v", "--log-format"];
/// The options `-P` reads besides itself: the rest act on a command or a
/// stop sequence, which pause mode has not.
const PAUSE_READS: &[&str] = &["-s", "-p", "-v", "-w", "--stop-signals", "--log-format"];
/// The options `--install` reads besides itself.
const INSTALL_READS: &[&str] = &["-v", "--log-format"];

/// Whether `mode`, a mode that runs no command, reads `opt`: it is the
/// mode's own option or one of the `others` it reads.
fn reads(mode: &str, others: &[&str], opt: &Opt) -> bool {
    let name = flag_name(opt);
    name == mode || others.contains(&name.as_str())
}

/// A command, or one of the three modes that run none (`--probe`, `-P`,
/// `--install`), with only the options that mode reads. Only the command
/// line is held to that: a `VIGIL_*` variable an image sets for its
/// command must not keep the same image from serving as a probe, a pause
/// or an install.
fn check_mode(given: &Given, probing: bool) -> Result<(), UsageError> {
    let (mode, others) = match (probing, given.asks(Kind::Pause), given.asks(Kind::Install)) {
        (true, ..) => ("--probe", PROBE_READS),
        (false, true, true) => {
            return Err(usage("-P and --install are two modes: give one".into()));
        }
        (false, true, false) => ("-P", PAUSE_READS),
        (false, false, true) => ("--install", INSTALL_READS),
        (false, false, false) if given.command.is_empty() => {
            return Err(UsageError(
                "no command given: usage is vigil [OPTIONS] [--] COMMAND [ARG...]".into(),
            ));
        }
        (false, false, false) => return Ok(()),
    };
    // A probe's mistakes say that it checks once and exits.
    let checks = if probing {
        " checks once and exits: it"
    } else {
        ""
    };
    if let Some(word) = given.command.first() {
        return Err(usage(format!(
            "{mode}{checks} runs no command, but was given '{}'",
            word.to_string_lossy()
        )));
    }
    let Some(opt) = given.opts().find(|o| !reads(mode, others, o)) else {
        return Ok(());
    };
    let name = flag_name(opt);
    Err(usage(if probing {
        format!(
            "{name} does not go with --probe, which checks once and exits (it takes --probe-timeout, -v and --log-format)"
        )
    } else {
        format!(
            "{name} has nothing to act on with {mode}, which reads only {}",
            others.join(", ")
        )
    }))
}

#[cfg(test)]
mod tests;
