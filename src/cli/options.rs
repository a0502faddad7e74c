//! vigil's options, each declared once, in one row: its names, its
//! environment variables, the kind of value it takes, its default, its help
//! and its effect on the `Config`.
//!
//! Everything else about the command line is derived from this table: the
//! parser (`cli::scan`), the environment precedence (`cli::Given`), the
//! `Config` (`cli::apply_rows` applies every row's effect), `--help` and so
//! the man page, and the integration tests' fuzz grammar and
//! flag/environment pairs. A default that depends on something else
//! (`Default::HalfGrace`, `AfterTimeout`, `IfExists`) is data too: its row
//! gives it by a constant of this file (`NO_GRACE_WAIT`, `TIMEOUT_GRACE`,
//! `DEFAULT_TERMINATION_LOG`), which the code that works it out reads too,
//! and `--help` says it in words. The option table of docs/options.md is
//! checked against it by a test.
//!
//! The tests include this very file, without the rest of vigil, so that
//! what they generate and check is what the binary reads. All of it but the
//! effects depends on nothing but `core`; an effect is a closure over
//! vigil's `Config`, written `apply!(|c, v| ...)` (`c` the `Config`, `v`
//! the option's `Value`), and the module that includes this file defines
//! `apply!` and the type `Apply` of an effect: `cli` keeps the closure, as
//! a `fn(&mut Config, Value)`; the tests (tests/it/common/mod.rs) drop it
//! unread, as `()`, and so never need `Config`.
//!
//! Adding an option of a kind the table already has: a row here, the
//! `Config` field its effect sets, the behaviour that reads that field, its
//! tests, and its row in docs/options.md's option table. A new kind: a
//! `Kind` and what `--help` calls its value (`Kind::value_name`), how
//! `values::read` reads it into a new `Value` and the accessor effects use,
//! a sample value in cli/tests.rs and its generator in the fuzz grammar
//! (tests/it/cli_fuzz.rs).

use core::time::Duration;

use super::Apply;

/// What an option takes, which decides how its value (from the command
/// line, the environment or the default) is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// On when given. `VIGIL_*` takes 1/0, true/false, yes/no, on/off;
    /// tini's `TINI_*` switches it on by being set at all, even empty.
    Switch,
    /// Each use adds one level (`-vvv`). `VIGIL_*` gives the level itself
    /// (0-4); tini's `TINI_*` too, read as C's `atoi` reads it.
    Level,
    /// A signal by name (`TERM`, `SIGTERM`, `RTMIN+2`) or number.
    Signal,
    /// Signals that start the stop sequence: a comma-separated list of
    /// signals, each one vigil can catch and forward.
    StopSignals,
    /// An exit code, 0-255, read as tini reads it (strtol).
    ExitCode,
    /// A duration: `500ms`, `5s`, `2m`, `1h`, a bare number of seconds, or
    /// parts with their units, the largest first (`1m30s`).
    Duration,
    /// A command, split into words by shell quoting rules.
    Command,
    /// A path; empty switches the feature off. So an empty `VIGIL_*`
    /// variable is a value (`VIGIL_TERMINATION_LOG=` switches the log off)
    /// rather than "unset", as it is for every other kind (so that
    /// `docker run -e VIGIL_PRE_STOP=` undoes an image's `ENV`).
    Path,
    /// `FROM:TO` signal rewrites; in the environment, comma separated.
    Rewrite,
    /// `USER[:GROUP]`, each a name or a number; any bytes (names in
    /// /etc/passwd need not be UTF-8).
    User,
    /// `text`, `json` or `logfmt`.
    LogFormat,
    /// Capabilities: a comma-separated list of names (`NET_BIND_SERVICE`,
    /// `cap_net_raw`), at least one.
    Caps,
    /// A probe's URL: `http://HOST[:PORT][/PATH]`, `tcp://HOST:PORT`,
    /// `unix:/PATH`, `http+unix://%2FPATH[/PATH]`, `file:/PATH`.
    Url,
    /// A whole number, at least 1.
    Count,
    /// `CAUSE=STATUS`: the exit status of a cause of vigil's ending; in
    /// the environment, comma separated.
    ExitCodes,
    /// Prints something and exits 0: help at once, where it is met (as
    /// getopt-style tools do); the version and the license after the whole
    /// command line has been read.
    PrintHelp,
    PrintVersion,
    PrintLicense,
    /// `-P`: run no command, only reap until a stop signal (a pod's
    /// infra process). On when given; no variable.
    Pause,
    /// `--install DIR`: copy this binary to DIR/vigil and exit. A
    /// directory, not empty; no variable (an image's `ENV` would make
    /// every start an install).
    Install,
}

impl Kind {
    /// What `--help` calls a value of this kind (`DUR`); empty for a kind
    /// that takes none.
    pub const fn value_name(self) -> &'static str {
        match self {
            Kind::Signal => "SIGNAL",
            Kind::StopSignals => "SIG[,SIG]",
            Kind::ExitCode => "CODE",
            Kind::Duration => "DUR",
            Kind::Command => "CMD",
            Kind::Path => "PATH",
            Kind::Rewrite => "FROM:TO",
            Kind::User => "USER[:GROUP]",
            Kind::LogFormat => "FORMAT",
            Kind::Caps => "CAP[,CAP]",
            Kind::Url => "URL",
            Kind::Count => "N",
            Kind::ExitCodes => "CAUSE=STATUS",
            Kind::Install => "DIR",
            Kind::Switch
            | Kind::Level
            | Kind::PrintHelp
            | Kind::PrintVersion
            | Kind::PrintLicense
            | Kind::Pause => "",
        }
    }

    /// Whether the option takes a value.
    pub const fn takes_value(self) -> bool {
        !self.value_name().is_empty()
    }
}

/// What a second use of the same option means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repeat {
    /// tini's short options, as getopt reads them: a later use replaces an
    /// earlier one (a switch given twice is still on). Each value is checked.
    Replace,
    /// Every use counts (`-e 3 -e 4`, `--rewrite` rules, `-v`).
    Append,
    /// vigil's long options: given twice is a usage error, since one of the
    /// two would be silently ignored.
    Once,
}

/// The default, for `--help` and for the value itself. A default that
/// depends on something else is worked out where that is known, from the
/// data here: the code reads it from the row (`cli`'s constants), and
/// `--help` says it in words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Default {
    /// Unset: the feature is off.
    None,
    /// This text, read like a given value.
    Value(&'static str),
    /// Half the grace period; without a grace period, this.
    HalfGrace(Duration),
    /// This, for a stop that vigil started itself (`--timeout`,
    /// `--ready-timeout`); none for any other.
    AfterTimeout(Duration),
    /// This file, when it exists at start; none otherwise.
    IfExists(&'static str),
}

/// One option.
#[derive(Clone, Copy, Debug)]
pub struct Opt {
    pub short: Option<char>,
    /// Without the leading `--`.
    pub long: Option<&'static str>,
    pub kind: Kind,
    pub repeat: Repeat,
    /// vigil's own variable.
    pub env: Option<&'static str>,
    /// tini's variable for the same thing, read after vigil's.
    pub tini_env: Option<&'static str>,
    pub default: Default,
    pub help: &'static str,
    /// What the option does to the `Config`: called by `cli::apply_rows`
    /// once for each use on the command line, in order (a level once, with
    /// the uses counted), else once with the value of its variable or its
    /// default, else with `Value::Unset`. So an option given twice is
    /// applied twice: an effect that sets its field keeps the last value, one
    /// that adds to it (`-e`, `--rewrite`) keeps them all.
    pub apply: Apply,
}

/// A row with the fields most rows leave empty already empty.
const fn opt(kind: Kind, help: &'static str, apply: Apply) -> Opt {
    Opt {
        short: None,
        long: None,
        kind,
        repeat: Repeat::Once,
        env: None,
        tini_env: None,
        default: Default::None,
        help,
        apply,
    }
}

/// tini's one-letter options: a later use replaces an earlier one.
const fn short(c: char, kind: Kind, help: &'static str, apply: Apply) -> Opt {
    Opt {
        short: Some(c),
        repeat: Repeat::Replace,
        ..opt(kind, help, apply)
    }
}

/// vigil's long options, each with its `VIGIL_*` variable and its
/// default.
const fn long(
    name: &'static str,
    kind: Kind,
    env: &'static str,
    default: Default,
    help: &'static str,
    apply: Apply,
) -> Opt {
    Opt {
        long: Some(name),
        env: Some(env),
        default,
        ..opt(kind, help, apply)
    }
}

/// The effect of the options that print and exit: they set nothing.
const PRINTS: Apply = apply!(|_, _| {});

// The defaults that depend on something else: their rows give them, and
// the code that works them out reads them here.

/// `--pre-stop-timeout`'s default without a grace period: 5 s, half of
/// `docker stop`'s default wait, so that the hook is killed before its
/// SIGKILL. (The line saying what still runs comes at the same time, and
/// reads it too.)
pub const NO_GRACE_WAIT: Duration = Duration::from_secs(5);

/// `--grace-period`'s default for a stop that `--timeout` or
/// `--ready-timeout` started: `docker stop`'s default wait, so that a job
/// that ignores SIGTERM still ends; a stop signal from outside gets none
/// (the runtime that sent it has its own deadline).
pub const TIMEOUT_GRACE: Duration = Duration::from_secs(10);

/// `--termination-log`'s default when it exists: Kubernetes' file, which
/// it creates and shows as the termination message.
pub const DEFAULT_TERMINATION_LOG: &str = "/dev/termination-log";

/// Every option, in the order `--help` lists them, which is also the order
/// their values are read in, and so which of two bad ones is named.
pub const OPTIONS: &[Opt] = &[
    Opt {
        env: Some("VIGIL_SUBREAPER"),
        tini_env: Some("TINI_SUBREAPER"),
        ..short(
            's',
            Kind::Switch,
            "Register as a child subreaper (automatic when not PID 1)",
            apply!(|c, v| c.subreaper = v.switch()),
        )
    },
    short(
        'p',
        Kind::Signal,
        "Have the kernel send SIGNAL to vigil when vigil's parent dies",
        apply!(|c, v| c.parent_death_signal = v.signal()),
    ),
    Opt {
        env: Some("VIGIL_VERBOSITY"),
        tini_env: Some("TINI_VERBOSITY"),
        repeat: Repeat::Append,
        ..short(
            'v',
            Kind::Level,
            "More output: 1 is the default (warnings, errors, the exit report when due), -v 2 (the lifecycle, readiness, signals and their senders), -vv 3 (each reaped process), -vvv 4 (everything); the variables take the level, 0-4 (0: errors alone)",
            apply!(|c, v| c.verbosity = v.level()),
        )
    },
    short(
        'w',
        Kind::Switch,
        "Warn about each orphaned zombie reaped",
        apply!(|c, v| c.warn_on_reap = v.switch()),
    ),
    Opt {
        env: Some("VIGIL_KILL_PROCESS_GROUP"),
        tini_env: Some("TINI_KILL_PROCESS_GROUP"),
        ..short(
            'g',
            Kind::Switch,
            "Send forwarded signals to the child's whole process group",
            apply!(|c, v| c.signal_group = v.switch()),
        )
    },
    Opt {
        repeat: Repeat::Append,
        ..short(
            'e',
            Kind::ExitCode,
            "Exit with 0 when the child exits with CODE; repeatable",
            apply!(|c, v| c.expected_codes.extend(v.exit_code())),
        )
    },
    short(
        'l',
        Kind::PrintLicense,
        "Print the license and exit",
        PRINTS,
    ),
    Opt {
        long: Some("version"),
        repeat: Repeat::Replace,
        ..opt(Kind::PrintVersion, "Print the version and exit", PRINTS)
    },
    short(
        'P',
        Kind::Pause,
        "Pause: run no command; reap whatever is reparented to vigil, and exit 0 on a stop signal (a pod's infra process)",
        apply!(|c, v| c.pause = v.switch()),
    ),
    Opt {
        long: Some("install"),
        ..opt(
            Kind::Install,
            "Copy this vigil to DIR/vigil (mode 0755, atomically), say what was written, and exit",
            apply!(|c, v| c.install = v.path().map(std::path::PathBuf::from)),
        )
    },
    Opt {
        long: Some("probe"),
        ..opt(
            Kind::Url,
            "Check URL once and exit: 0 healthy (HTTP 2xx/3xx, or a connection), 1 not, with one line saying why",
            apply!(|c, v| c.probe = v.url()),
        )
    },
    long(
        "probe-timeout",
        Kind::Duration,
        "VIGIL_PROBE_TIMEOUT",
        Default::Value("2s"),
        "How long one probe may take (--probe, and each of --ready-when's and --live-when's)",
        apply!(|c, v| c.probe_timeout = v.duration().unwrap_or_default()),
    ),
    Opt {
        repeat: Repeat::Append,
        ..long(
            "rewrite",
            Kind::Rewrite,
            "VIGIL_REWRITE",
            Default::None,
            "Forward signal FROM as TO (TO 0 drops it); repeatable; the variable takes a comma-separated list",
            apply!(|c, v| for rule in v.rewrites() {
                c.rewrites.add(rule)
            }),
        )
    },
    long(
        "post-start",
        Kind::Command,
        "VIGIL_POST_START",
        Default::None,
        "Run CMD right after the child starts",
        apply!(|c, v| c.post_start = v.command()),
    ),
    long(
        "post-start-timeout",
        Kind::Duration,
        "VIGIL_POST_START_TIMEOUT",
        Default::None,
        "A post-start hook still running then has failed",
        apply!(|c, v| c.post_start_timeout = v.duration()),
    ),
    long(
        "pre-stop",
        Kind::Command,
        "VIGIL_PRE_STOP",
        Default::None,
        "Run CMD when a stop signal arrives, before forwarding it",
        apply!(|c, v| c.pre_stop = v.command()),
    ),
    long(
        "pre-stop-timeout",
        Kind::Duration,
        "VIGIL_PRE_STOP_TIMEOUT",
        Default::HalfGrace(NO_GRACE_WAIT),
        "A pre-stop hook still running then is killed, and the stop signal forwarded",
        apply!(|c, v| c.pre_stop_timeout = v.duration()),
    ),
    long(
        "pre-stop-sleep",
        Kind::Duration,
        "VIGIL_PRE_STOP_SLEEP",
        Default::Value("0"),
        "Wait this long after pre-stop before forwarding the stop signal",
        apply!(|c, v| c.pre_stop_sleep = v.duration().unwrap_or_default()),
    ),
    long(
        "stop-signals",
        Kind::StopSignals,
        "VIGIL_STOP_SIGNALS",
        Default::Value("TERM,INT"),
        "The signals that start the stop sequence (pre-stop, grace period); others are forwarded at once",
        apply!(|c, v| c.stop_signals = v.stop_signals()),
    ),
    long(
        "grace-period",
        Kind::Duration,
        "VIGIL_GRACE_PERIOD",
        Default::AfterTimeout(TIMEOUT_GRACE),
        "After the first stop signal, time until everything left gets SIGKILL",
        apply!(|c, v| c.grace_period = v.duration()),
    ),
    long(
        "drain-timeout",
        Kind::Duration,
        "VIGIL_DRAIN_TIMEOUT",
        Default::Value("2s"),
        "After the child exits, time the others get between SIGTERM and SIGKILL",
        apply!(|c, v| c.drain_timeout = v.duration().unwrap_or_default()),
    ),
    long(
        "timeout",
        Kind::Duration,
        "VIGIL_TIMEOUT",
        Default::None,
        "After DUR, stop the command as if SIGTERM (the first of --stop-signals) had arrived, and exit 124 (0: no timeout)",
        apply!(|c, v| c.timeout = v.duration().filter(|d| !d.is_zero())),
    ),
    long(
        "ready-when",
        Kind::Url,
        "VIGIL_READY_WHEN",
        Default::None,
        "Probe URL (as --probe) until it first succeeds: then READY=1 to $NOTIFY_SOCKET; STOPPING=1 when the stop begins",
        apply!(|c, v| c.ready_when = v.url()),
    ),
    long(
        "ready-interval",
        Kind::Duration,
        "VIGIL_READY_INTERVAL",
        Default::Value("1s"),
        "The longest wait between two --ready-when probes (the first comes after 50ms, and each failure doubles the wait)",
        apply!(|c, v| c.ready_interval = v.duration().unwrap_or_default()),
    ),
    long(
        "ready-timeout",
        Kind::Duration,
        "VIGIL_READY_TIMEOUT",
        Default::None,
        "Not ready DUR after the start: stop as if SIGTERM (the first of --stop-signals) had arrived, and never exit 0 (0: no timeout)",
        apply!(|c, v| c.ready_timeout = v.duration().filter(|d| !d.is_zero())),
    ),
    long(
        "live-when",
        Kind::Url,
        "VIGIL_LIVE_WHEN",
        Default::None,
        "Probe URL (as --probe) every --live-interval for the child's whole life (from readiness, with --ready-when); after --live-failures failures in a row, stop as if SIGTERM (the first of --stop-signals) had arrived, and exit with the unhealthy status",
        apply!(|c, v| c.live_when = v.url()),
    ),
    long(
        "live-interval",
        Kind::Duration,
        "VIGIL_LIVE_INTERVAL",
        Default::Value("10s"),
        "The wait between two --live-when probes, from the end of one to the start of the next",
        apply!(|c, v| c.live_interval = v.duration().unwrap_or_default()),
    ),
    long(
        "live-failures",
        Kind::Count,
        "VIGIL_LIVE_FAILURES",
        Default::Value("3"),
        "How many --live-when probes must fail in a row to stop the container",
        apply!(|c, v| c.live_failures = v.count().unwrap_or(1)),
    ),
    long(
        "live-start",
        Kind::Duration,
        "VIGIL_LIVE_START",
        Default::Value("0s"),
        "The wait before the first --live-when probe, without --ready-when (with it, probing starts one interval after readiness)",
        apply!(|c, v| c.live_start = v.duration().unwrap_or_default()),
    ),
    Opt {
        repeat: Repeat::Append,
        ..long(
            "exit-code",
            Kind::ExitCodes,
            "VIGIL_EXIT_CODES",
            Default::None,
            "Exit with STATUS when the container ends of CAUSE: stopped, grace, timeout, unhealthy, not-ready, post-start or oom (a child's own exit code stands); repeatable; the variable takes a comma-separated list",
            apply!(|c, v| for rule in v.exit_codes() {
                c.exit_codes.add(rule)
            }),
        )
    },
    long(
        "termination-log",
        Kind::Path,
        "VIGIL_TERMINATION_LOG",
        Default::IfExists(DEFAULT_TERMINATION_LOG),
        "Where the exit report is written; empty disables",
        apply!(|c, v| c.termination_log = super::termination_log(v.path())),
    ),
    long(
        "user",
        Kind::User,
        "VIGIL_USER",
        Default::None,
        "Run the child and the hooks as USER (name or uid), with GROUP, else USER's groups",
        apply!(|c, v| c.user = v.user()),
    ),
    long(
        "caps",
        Kind::Caps,
        "VIGIL_CAPS",
        Default::None,
        "The child and the hooks hold exactly these capabilities (with or without --user); vigil keeps its own",
        apply!(|c, v| c.caps = v.caps()),
    ),
    long(
        "log-format",
        Kind::LogFormat,
        "VIGIL_LOG_FORMAT",
        Default::Value("text"),
        "text, json or logfmt: the form of each line vigil writes and of the termination log",
        apply!(|c, v| c.log_format = v.log_format().unwrap_or_default()),
    ),
    Opt {
        short: Some('h'),
        long: Some("help"),
        repeat: Repeat::Replace,
        ..opt(Kind::PrintHelp, "Print help", PRINTS)
    },
];
