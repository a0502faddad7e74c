//! vigil's options, each declared once: its names, its environment
//! variables, the kind of value it takes, its default and its help.
//!
//! Everything else about the command line is derived from this table: the
//! parser (`cli::scan`), the environment precedence (`cli::Given`), `--help`
//! and so the man page, and the integration tests' fuzz grammar and
//! flag/environment pairs, which include this file as it is (it depends on
//! nothing but `core`). The README's option table is checked against it by
//! a test.
//!
//! Adding an option: an `Id`, a row here, the `Config` field it sets and the
//! behaviour that reads it, and its tests.

/// Names an option in code, so that a misspelt option is a compile error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Id {
    Subreaper,
    ParentDeathSignal,
    Verbose,
    WarnOnReap,
    Group,
    Expect,
    License,
    Version,
    Help,
    Rewrite,
    PostStart,
    PostStartTimeout,
    PreStop,
    PreStopSleep,
    GracePeriod,
    DrainTimeout,
    Timeout,
    TerminationLog,
    User,
    LogFormat,
}

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
    /// An exit code, 0-255, read as tini reads it (strtol).
    ExitCode,
    /// A duration: `500ms`, `5s`, `2m`, `1h`, or a bare number of seconds.
    Duration,
    /// A command, split into words by shell quoting rules.
    Command,
    /// A path; empty switches the feature off.
    Path,
    /// `FROM:TO` signal rewrites; in the environment, comma separated.
    Rewrite,
    /// `USER[:GROUP]`, each a name or a number; any bytes (names in
    /// /etc/passwd need not be UTF-8).
    User,
    /// `text`, `json` or `logfmt`.
    LogFormat,
    /// Prints something and exits 0: help at once, where it is met (as
    /// getopt-style tools do); the version and the license after the whole
    /// command line has been read.
    PrintHelp,
    PrintVersion,
    PrintLicense,
}

impl Kind {
    /// Whether the option takes a value.
    pub const fn takes_value(self) -> bool {
        !matches!(
            self,
            Kind::Switch | Kind::Level | Kind::PrintHelp | Kind::PrintVersion | Kind::PrintLicense
        )
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

/// The default, for `--help` and for the value itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Default {
    /// Unset: the feature is off.
    None,
    /// This text, read like a given value.
    Value(&'static str),
    /// Worked out at start (what the note says); the text is for `--help`.
    Note(&'static str),
}

/// One option.
#[derive(Clone, Copy, Debug)]
pub struct Opt {
    pub id: Id,
    pub short: Option<char>,
    /// Without the leading `--`.
    pub long: Option<&'static str>,
    /// What `--help` calls the value (`DUR`); empty for an option without one.
    pub value_name: &'static str,
    pub kind: Kind,
    pub repeat: Repeat,
    /// vigil's own variable.
    pub env: Option<&'static str>,
    /// tini's variable for the same thing, read after vigil's.
    pub tini_env: Option<&'static str>,
    /// Whether an empty `env` value is a value (`VIGIL_TERMINATION_LOG=`
    /// switches the log off) rather than "unset" (every other variable, so
    /// that `docker run -e VIGIL_PRE_STOP=` undoes an image's `ENV`).
    pub empty_env_is_value: bool,
    pub default: Default,
    pub help: &'static str,
}

/// A row with the fields most rows leave empty already empty.
const fn opt(id: Id, kind: Kind, help: &'static str) -> Opt {
    Opt {
        id,
        short: None,
        long: None,
        value_name: "",
        kind,
        repeat: Repeat::Once,
        env: None,
        tini_env: None,
        empty_env_is_value: false,
        default: Default::None,
        help,
    }
}

/// tini's one-letter options.
const fn short(id: Id, c: char, kind: Kind, repeat: Repeat, help: &'static str) -> Opt {
    Opt {
        short: Some(c),
        repeat,
        ..opt(id, kind, help)
    }
}

/// vigil's long options, each with its `VIGIL_*` variable.
const fn long(
    id: Id,
    name: &'static str,
    value_name: &'static str,
    kind: Kind,
    env: &'static str,
    help: &'static str,
) -> Opt {
    Opt {
        long: Some(name),
        value_name,
        env: Some(env),
        ..opt(id, kind, help)
    }
}

/// Every option, in the order `--help` lists them.
pub const OPTIONS: &[Opt] = &[
    Opt {
        env: Some("VIGIL_SUBREAPER"),
        tini_env: Some("TINI_SUBREAPER"),
        ..short(Id::Subreaper, 's', Kind::Switch, Repeat::Replace,
            "Register as a child subreaper (automatic when not PID 1)")
    },
    Opt {
        value_name: "SIGNAL",
        ..short(Id::ParentDeathSignal, 'p', Kind::Signal, Repeat::Replace,
            "Have the kernel send SIGNAL to vigil when vigil's parent dies")
    },
    Opt {
        env: Some("VIGIL_VERBOSITY"),
        tini_env: Some("TINI_VERBOSITY"),
        ..short(Id::Verbose, 'v', Kind::Level, Repeat::Append,
            "More output; repeatable (-vvv); the variables take the level, 0-4")
    },
    short(Id::WarnOnReap, 'w', Kind::Switch, Repeat::Replace,
        "Warn about each orphaned zombie reaped"),
    Opt {
        env: Some("VIGIL_KILL_PROCESS_GROUP"),
        tini_env: Some("TINI_KILL_PROCESS_GROUP"),
        ..short(Id::Group, 'g', Kind::Switch, Repeat::Replace,
            "Send forwarded signals to the child's whole process group")
    },
    Opt {
        value_name: "CODE",
        ..short(Id::Expect, 'e', Kind::ExitCode, Repeat::Append,
            "Exit with 0 when the child exits with CODE; repeatable")
    },
    short(Id::License, 'l', Kind::PrintLicense, Repeat::Replace, "Print the license and exit"),
    Opt {
        long: Some("version"),
        repeat: Repeat::Replace,
        ..opt(Id::Version, Kind::PrintVersion, "Print the version and exit")
    },
    Opt {
        repeat: Repeat::Append,
        ..long(Id::Rewrite, "rewrite", "FROM:TO", Kind::Rewrite, "VIGIL_REWRITE",
            "Forward signal FROM as TO (TO 0 drops it); repeatable; the variable takes a comma-separated list")
    },
    long(Id::PostStart, "post-start", "CMD", Kind::Command, "VIGIL_POST_START",
        "Run CMD right after the child starts"),
    long(Id::PostStartTimeout, "post-start-timeout", "DUR", Kind::Duration,
        "VIGIL_POST_START_TIMEOUT", "A post-start hook still running then has failed"),
    long(Id::PreStop, "pre-stop", "CMD", Kind::Command, "VIGIL_PRE_STOP",
        "Run CMD when a stop signal arrives, before forwarding it"),
    Opt {
        default: Default::Value("0"),
        ..long(Id::PreStopSleep, "pre-stop-sleep", "DUR", Kind::Duration, "VIGIL_PRE_STOP_SLEEP",
            "Wait this long after pre-stop before forwarding the stop signal")
    },
    long(Id::GracePeriod, "grace-period", "DUR", Kind::Duration, "VIGIL_GRACE_PERIOD",
        "After the first stop signal, time until everything left gets SIGKILL"),
    Opt {
        default: Default::Value("2s"),
        ..long(Id::DrainTimeout, "drain-timeout", "DUR", Kind::Duration, "VIGIL_DRAIN_TIMEOUT",
            "After the child exits, time the others get between SIGTERM and SIGKILL")
    },
    long(Id::Timeout, "timeout", "DUR", Kind::Duration, "VIGIL_TIMEOUT",
        "After DUR, stop the command as if SIGTERM had arrived, and exit 124 (0: no timeout)"),
    Opt {
        empty_env_is_value: true,
        default: Default::Note("/dev/termination-log if it exists"),
        ..long(Id::TerminationLog, "termination-log", "PATH", Kind::Path, "VIGIL_TERMINATION_LOG",
            "Where the exit report is written; empty disables")
    },
    long(Id::User, "user", "USER[:GROUP]", Kind::User, "VIGIL_USER",
        "Run the child and the hooks as USER (name or uid), with GROUP, else USER's groups"),
    Opt {
        default: Default::Value("text"),
        ..long(Id::LogFormat, "log-format", "FORMAT", Kind::LogFormat, "VIGIL_LOG_FORMAT",
            "text, json or logfmt: the form of each line vigil writes and of the termination log")
    },
    Opt {
        short: Some('h'),
        long: Some("help"),
        repeat: Repeat::Replace,
        ..opt(Id::Help, Kind::PrintHelp, "Print help")
    },
];

/// The row of `id`. Every `Id` has exactly one (a unit test checks it).
pub fn get(id: Id) -> Option<&'static Opt> {
    OPTIONS.iter().find(|o| o.id == id)
}
