//! The command line and the environment, read into a `Config`.

use super::*;

fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    pairs
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect()
}

fn parse_strs(args: &[&str], env: &[(&str, &str)]) -> Result<Action, UsageError> {
    let args: Vec<OsString> = std::iter::once("vigil")
        .chain(args.iter().copied())
        .map(OsString::from)
        .collect();
    parse(&args, vars(env))
}

fn run(args: &[&str], env: &[(&str, &str)]) -> Result<Config, UsageError> {
    match parse_strs(args, env)? {
        Action::Run(c) => Ok(*c),
        Action::Probe(c) => panic!("a probe: {c:?}"),
        Action::Print(p) => panic!("printed {p}"),
    }
}

/// The `Config` of a `--probe` command line.
fn probe(args: &[&str], env: &[(&str, &str)]) -> Result<Config, UsageError> {
    match parse_strs(args, env)? {
        Action::Probe(c) => Ok(*c),
        Action::Run(c) => panic!("not a probe: {c:?}"),
        Action::Print(p) => panic!("printed {p}"),
    }
}

fn printed(args: &[&str]) -> Option<String> {
    match parse_strs(args, &[]) {
        Ok(Action::Print(text)) => Some(text),
        _ => None,
    }
}

#[test]
fn every_name_is_one_option() {
    use std::collections::HashSet;
    let mut names = HashSet::new();
    for o in OPTIONS {
        let shown = flag_name(o);
        assert!(o.short.is_some() || o.long.is_some(), "{o:?}");
        for name in [o.short.map(String::from), o.long.map(String::from)]
            .into_iter()
            .flatten()
            .chain(o.env.map(String::from))
            .chain(o.tini_env.map(String::from))
        {
            assert!(names.insert(name.clone()), "{name} twice");
        }
        // A default must read as a value of the option's kind.
        if let Default::Value(text) = o.default {
            assert!(
                values::read(o.kind, OsStr::new(text), From::Vigil).is_ok(),
                "{shown}"
            );
        }
    }
}

/// The `Config`'s fields, each as its name and its value (`Debug`'s
/// words).
fn fields(config: &Config) -> Vec<(String, String)> {
    let mut fields: Vec<(String, String)> = Vec::new();
    for line in format!("{config:#?}").lines() {
        // A field starts at the first level of indentation; the lines of a
        // value written on several are deeper, or close it (`    ],`).
        let depth = line.len() - line.trim_start().len();
        let starts_a_field = depth == 4 && line.trim_start().starts_with(char::is_alphabetic);
        match fields.last_mut() {
            _ if starts_a_field => {
                let (name, value) = line.trim().split_once(':').unwrap();
                fields.push((name.to_string(), value.to_string()));
            }
            Some((_, value)) if depth >= 4 => value.push_str(line.trim()),
            _ => {}
        }
    }
    fields
}

/// The fields `parse` fills itself, with what no row's effect knows: the
/// command, the warnings, whether `--probe-timeout` is on the command
/// line.
const PARSE_FILLS: [&str; 3] = ["command", "warnings", "probe_timeout_unused"];

/// The field an option's effect sets, by the one thing that changes when it
/// is given: each option sets a field of its own, so an effect copied from
/// another row and not edited fails here, and so does a field no row sets.
#[test]
fn every_option_sets_a_field_of_its_own() {
    // A value of each kind that is no option's default.
    let sample = |kind| match kind {
        Kind::Signal => "HUP",
        Kind::StopSignals => "QUIT,TERM",
        Kind::ExitCode => "3",
        Kind::Duration => "7s",
        Kind::Command => "true",
        Kind::Path | Kind::Install => "/elsewhere",
        Kind::Rewrite => "TERM:QUIT",
        Kind::User => "7:7",
        Kind::LogFormat => "json",
        Kind::Caps => "NET_RAW",
        Kind::Url => "http://127.0.0.1:8080/ready",
        Kind::Count => "2",
        Kind::ExitCodes => "stopped=0",
        Kind::Switch
        | Kind::Level
        | Kind::PrintHelp
        | Kind::PrintVersion
        | Kind::PrintLicense
        | Kind::Pause => "",
    };
    let unset = fields(&run(&["x"], &[]).unwrap());
    let mut set_by = std::collections::HashMap::new();
    for o in OPTIONS {
        if matches!(
            o.kind,
            Kind::PrintHelp | Kind::PrintVersion | Kind::PrintLicense
        ) {
            continue;
        }
        let flag = flag_name(o);
        let mut args = vec![flag.as_str()];
        if o.kind.takes_value() {
            args.push(sample(o.kind));
        }
        // `--probe` runs no command, and its `Config` holds only what a
        // probe reads: of the fields that differ, the one of its own. The
        // modes run no command either.
        let probing = o.long == Some("probe");
        let mode = matches!(o.kind, Kind::Pause | Kind::Install);
        let given = if probing {
            fields(&probe(&args, &[]).unwrap())
        } else {
            if !mode {
                args.push("x");
            }
            fields(&run(&args, &[]).unwrap())
        };
        let changed: Vec<&String> = given
            .iter()
            .filter(|field| !unset.contains(field))
            .filter(|(name, _)| !mode || name != "command")
            .filter(|(name, _)| !PARSE_FILLS.contains(&name.as_str()))
            .map(|(name, _)| name)
            .filter(|name| !probing || *name == "probe")
            .collect();
        assert_eq!(changed.len(), 1, "{args:?} changed {changed:?}");
        let field = changed[0].clone();
        if let Some(other) = set_by.insert(field.clone(), flag.clone()) {
            panic!("{flag} and {other} both set {field}");
        }
    }
    // And every field is some option's, but those `parse` fills itself.
    for (field, _) in &unset {
        assert!(
            set_by.contains_key(field) || PARSE_FILLS.contains(&field.as_str()),
            "no option sets {field}"
        );
    }
}

#[test]
fn stops_at_the_first_word() {
    let c = run(&["-v", "sh", "-c", "exit 3", "-v"], &[]).unwrap();
    assert_eq!(c.command, ["sh", "-c", "exit 3", "-v"]);
    assert_eq!(c.verbosity, 2);
    let c = run(&["--", "ls", "-l"], &[]).unwrap();
    assert_eq!(c.command, ["ls", "-l"]);
    let c = run(&["-", "x"], &[]).unwrap();
    assert_eq!(c.command, ["-", "x"]);
    let c = run(&["-v", "--", "-x"], &[]).unwrap();
    assert_eq!(c.command, ["-x"]);
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
    assert_eq!(c.parent_death_signal, Some(Signal(10)));
    assert_eq!(c.expected_codes, [3, 4]);
    assert_eq!(c.verbosity, 4);
}

#[test]
fn values_attached_and_clustered() {
    let c = run(&["-ve3", "-pTERM", "-gp", "HUP", "--timeout=5s", "x"], &[]).unwrap();
    assert_eq!(c.verbosity, 2);
    assert_eq!(c.expected_codes, [3]);
    assert!(c.signal_group);
    assert_eq!(c.parent_death_signal, Some(Signal(1)));
    assert_eq!(c.timeout, Some(Duration::from_secs(5)));
    let c = run(&["-e=3", "-e-0", "--drain-timeout", "-0", "x"], &[]);
    assert!(c.is_err(), "-0 is no duration");
    let c = run(&["-e=3", "-e", "-0", "x"], &[]).unwrap();
    assert_eq!(c.expected_codes, [3, 0]);
}

#[test]
fn repeated_tini_options_are_accepted() {
    let c = run(&["-s", "-s", "-gg", "-w", "-w", "-v", "-v", "--", "x"], &[]).unwrap();
    assert!(c.subreaper && c.signal_group && c.warn_on_reap);
    assert_eq!(c.verbosity, 3);
    // However many, `-v` tops out at the highest level.
    for n in [3, 255, 256, 257, 1000] {
        let flag = format!("-{}", "v".repeat(n));
        assert_eq!(run(&[&flag, "x"], &[]).unwrap().verbosity, 4, "{n} times");
    }
    // The last -p wins, as with getopt; each is checked.
    let c = run(&["-p", "SIGHUP", "-p", "SIGKILL", "x"], &[]).unwrap();
    assert_eq!(c.parent_death_signal, Some(Signal(9)));
    assert!(run(&["-p", "SIGNOPE", "-p", "SIGKILL", "x"], &[]).is_err());
    let c = run(&["-e", "3", "-e", "3", "x"], &[]).unwrap();
    assert_eq!(c.expected_codes, [3, 3]);
    assert!(printed(&["-l", "-l"]).is_some());
    // vigil's own long options are given once.
    assert!(run(&["--timeout", "1s", "--timeout", "2s", "x"], &[]).is_err());
}

#[test]
fn help_version_and_license() {
    let help = printed(&["-h", "-x"]).unwrap();
    assert!(help.contains("Usage: vigil [OPTIONS] [--] COMMAND [ARG...]"));
    assert_eq!(printed(&["--help"]), Some(help.clone()));
    // An error before the help is an error.
    assert!(parse_strs(&["-x", "-h"], &[]).is_err());
    assert!(
        printed(&["--version", "-l"])
            .unwrap()
            .starts_with("vigil version")
    );
    assert!(
        printed(&["-l", "--version", "cmd"])
            .unwrap()
            .starts_with("vigil version")
    );
    assert!(printed(&["-l"]).unwrap().contains("MIT License"));
    assert!(parse_strs(&["--version", "-x"], &[]).is_err());
    assert!(parse_strs(&["--version=1"], &[]).is_err());
    assert!(parse_strs(&["--help=x"], &[]).is_err());
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
    assert_eq!(c.rewrites.apply(Signal(15)), Some(Signal(3)));
    assert_eq!(c.rewrites.apply(Signal(10)), None);
    assert_eq!(c.pre_stop.unwrap(), ["echo", "a b"]);
    let c = run(&["x"], &[("VIGIL_TERMINATION_LOG", "")]).unwrap();
    assert_eq!(c.termination_log, None);
    // Empty means unset: the default stands.
    let c = run(&["x"], &[("VIGIL_DRAIN_TIMEOUT", "")]).unwrap();
    assert_eq!(c.drain_timeout, Duration::from_secs(2));
    // -v on the command line wins over every variable.
    let c = run(&["-v", "x"], &[("VIGIL_VERBOSITY", "0")]).unwrap();
    assert_eq!(c.verbosity, 2);
}

#[test]
fn usage_errors_name_the_value() {
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: &[Case] = &[
        (&["-x", "cmd"], &[], "-x"),
        (&["-vx", "cmd"], &[], "-x"),
        (&["--grace", "cmd"], &[], "--grace"),
        (&["-p", "SIGFOO", "cmd"], &[], "SIGFOO"),
        (&["-p"], &[], "-p needs a value"),
        (&["-e", "256", "cmd"], &[], "256"),
        (&["-e", "-1", "cmd"], &[], "-1"),
        (&["--post-start-timeout", "-1s", "cmd"], &[], "-1s"),
        (&["--post-start-timeout=-1s", "cmd"], &[], "-1s"),
        (
            &["--termination-log", "--", "true"],
            &[],
            "--termination-log needs a value",
        ),
        (
            &["--termination-log", "--grace-period", "5s", "--", "true"],
            &[],
            "--termination-log needs a value",
        ),
        (&["--pre-stop", "-x", "cmd"], &[], "--pre-stop=VALUE"),
        (&["-e", "abc", "cmd"], &[], "abc"),
        (&[], &[], "no command"),
        (&["-v"], &[], "no command"),
        (&["--grace-period", "5x", "cmd"], &[], "5x"),
        (&["--rewrite", "TERM:", "cmd"], &[], "TERM:"),
        (&["--rewrite", "99:1", "cmd"], &[], "99"),
        (&["--pre-stop", "sh -c 'oops", "cmd"], &[], "oops"),
        (&["--pre-stop", "", "cmd"], &[], "empty"),
        (
            &["--timeout", "1s", "--timeout", "1s", "cmd"],
            &[],
            "--timeout",
        ),
        (&["cmd"], &[("VIGIL_SUBREAPER", "maybe")], "VIGIL_SUBREAPER"),
        (&["cmd"], &[("VIGIL_VERBOSITY", "9")], "VIGIL_VERBOSITY"),
        (&["cmd"], &[("VIGIL_GRACE_PERIOD", "soon")], "soon"),
        (&["cmd"], &[("VIGIL_REWRITE", "TERM")], "VIGIL_REWRITE"),
        // An empty item of a list, as in every list.
        (
            &["cmd"],
            &[("VIGIL_REWRITE", "TERM:QUIT,,")],
            "VIGIL_REWRITE: '' is not FROM:TO",
        ),
        (
            &["cmd"],
            &[("VIGIL_REWRITE", ",")],
            "VIGIL_REWRITE: '' is not FROM:TO",
        ),
        (&["--rewrite", "TERM:QUIT,", "cmd"], &[], "'TERM:QUIT,'"),
        (
            &["--stop-signals", "TERM,", "cmd"],
            &[],
            "in 'TERM,': '' is not a signal",
        ),
        (&["cmd"], &[("VIGIL_CAPS", "NET_RAW,")], "an empty name"),
    ];
    for (args, vars, needle) in cases {
        let err = run(args, vars).expect_err(needle);
        assert!(err.0.contains(needle), "{args:?}: {}", err.0);
        assert!(!err.0.contains('\n'), "{args:?}: {}", err.0);
    }
}

#[test]
fn a_value_that_is_not_utf8_names_its_option() {
    use std::os::unix::ffi::OsStringExt;
    let args = [
        OsString::from("vigil"),
        OsString::from("--grace-period"),
        OsString::from_vec(b"5\xffs".to_vec()),
        OsString::from("x"),
    ];
    let err = parse(&args, Vec::new()).unwrap_err();
    assert!(
        err.0.contains("--grace-period") && err.0.contains("UTF-8"),
        "{}",
        err.0
    );
    // A path may be any bytes.
    let args = [
        OsString::from("vigil"),
        OsString::from("--termination-log"),
        OsString::from_vec(b"/tmp/\xff".to_vec()),
        OsString::from("x"),
    ];
    assert!(parse(&args, Vec::new()).is_ok());
}

#[test]
fn the_termination_log_of_a_usage_error() {
    let args = |words: &[&str]| -> Vec<OsString> {
        std::iter::once("vigil")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect()
    };
    let at = |words: &[&str], var: Option<&str>| {
        termination_log_after(&args(words), var.map(OsString::from))
    };
    assert_eq!(
        at(
            &["-v", "--termination-log", "/t/a", "-x", "cmd"],
            Some("/t/b")
        ),
        Some(PathBuf::from("/t/a"))
    );
    assert_eq!(
        at(&["--termination-log=/t/a", "-x"], None),
        Some(PathBuf::from("/t/a"))
    );
    assert_eq!(at(&["-x"], Some("/t/b")), Some(PathBuf::from("/t/b")));
    assert_eq!(at(&["-x"], Some("")), None);
    // A word that looks like an option is no value (the usage error says
    // so): never a file called `--`.
    assert_eq!(
        at(&["--termination-log", "--", "true"], Some("/t/b")),
        Some(PathBuf::from("/t/b"))
    );
    // After the command, a word is the command's.
    assert_eq!(
        at(&["cmd", "--termination-log", "/t/a"], Some("/t/b")),
        Some(PathBuf::from("/t/b"))
    );
    // After a word that is no option, nothing is trusted: the word
    // after `--termination-log` may be the program.
    assert_eq!(
        at(&["-x", "--termination-log", "/bin/app"], Some("/t/b")),
        Some(PathBuf::from("/t/b"))
    );
    assert_eq!(
        at(
            &["-e", "3", "-pTERM", "--termination-log", "/t/a", "-x"],
            None
        ),
        Some(PathBuf::from("/t/a"))
    );
    assert_eq!(
        at(&["-se", "3", "--termination-log", "/t/a", "cmd"], None),
        Some(PathBuf::from("/t/a"))
    );
    // `--` is no option's value: it ends the options.
    assert_eq!(
        at(
            &["--post-start-timeout", "--", "--termination-log", "/t/a"],
            Some("/t/b")
        ),
        Some(PathBuf::from("/t/b"))
    );
}

#[test]
fn misspelt_variables_are_named_with_the_nearest_one() {
    let Ok(Action::Run(c)) = parse_strs(
        &["x"],
        &[
            ("VIGIL_TIMOUT", "1m"),
            ("VIGIL_GRACE", "5s"),
            ("VIGIL_HOOK", "pre-stop"),
            ("VIGIL_ZZZZZZZZZZ", "1"),
            ("TINI_WHATEVER", "1"),
            ("vigil_timeout", "1m"),
            ("TINI_VERBOSTY", "2"),
            ("tini_subreaper", ""),
        ],
    ) else {
        panic!()
    };
    assert_eq!(c.warnings.len(), 6, "{:?}", c.warnings);
    let said: Vec<(&str, Option<&str>)> = c
        .warnings
        .iter()
        .map(|w| (w.name.as_str(), w.meant))
        .collect();
    // Another case, and tini's own names misspelt (a TINI_* variable
    // that resembles none of tini's is nobody's business).
    assert_eq!(
        said,
        [
            ("VIGIL_TIMOUT", Some("VIGIL_TIMEOUT")),
            ("VIGIL_GRACE", Some("VIGIL_GRACE_PERIOD")),
            ("VIGIL_ZZZZZZZZZZ", None),
            ("vigil_timeout", Some("VIGIL_TIMEOUT")),
            ("TINI_VERBOSTY", Some("TINI_VERBOSITY")),
            ("tini_subreaper", Some("TINI_SUBREAPER")),
        ]
    );
    assert_eq!(c.timeout, None, "vigil_timeout is not read");
    assert_eq!(distance("VIGIL_TIMOUT", "VIGIL_TIMEOUT"), 1);
    assert_eq!(distance("abc", "abc"), 0);
    assert_eq!(distance("kitten", "sitting"), 3);
}

#[test]
fn version_forms() {
    let print = |argv0: &str| match parse(&[argv0, "--version"].map(OsString::from), Vec::new()) {
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

#[test]
fn a_probe_takes_its_own_options_and_no_command() {
    let c = probe(&["--probe", "tcp://127.0.0.1:5432"], &[]).unwrap();
    assert_eq!(c.probe.unwrap().text, "tcp://127.0.0.1:5432");
    assert_eq!(c.probe_timeout, Duration::from_secs(2));
    let c = probe(
        &[
            "-vv",
            "--probe-timeout",
            "500ms",
            "--log-format=json",
            "--probe",
            "http://x/",
        ],
        &[],
    )
    .unwrap();
    assert_eq!(c.verbosity, 3);
    assert_eq!(c.probe_timeout, Duration::from_millis(500));
    assert_eq!(c.log_format, Format::Json);
    // The container's variables are vigil's, not the probe's: only those
    // of the probe's options are read, and a bad one of another is no
    // mistake of the probe's.
    let env = [
        ("VIGIL_PROBE_TIMEOUT", "3s"),
        ("VIGIL_READY_WHEN", "http://[::1]:80/"),
        ("VIGIL_GRACE_PERIOD", "not a duration"),
        ("VIGIL_TIMOUT", "1s"),
    ];
    let c = probe(&["--probe", "http://x/"], &env).unwrap();
    assert_eq!(c.probe_timeout, Duration::from_secs(3));
    assert!(c.ready_when.is_none() && c.grace_period.is_none() && c.warnings.is_empty());
    for (args, why) in [
        (
            &["--probe", "http://x/", "sh"][..],
            "it runs no command, but was given 'sh'",
        ),
        (&["--probe", "http://x/", "--", "sh"], "it runs no command"),
        (
            &["--grace-period", "5s", "--probe", "http://x/"],
            "--grace-period does not go with --probe",
        ),
        (
            &["--probe", "http://x/", "--version"],
            "--version does not go with --probe",
        ),
        (
            &["-l", "--probe", "http://x/"],
            "-l does not go with --probe",
        ),
        (
            &["--probe", "http://x/", "--ready-when", "http://x/"],
            "--ready-when does not go",
        ),
        (
            &["--probe", "http://x/", "--probe", "http://y/"],
            "--probe is given twice",
        ),
        (
            &["--probe-timeout", "0", "--probe", "http://x/"],
            "--probe-timeout (VIGIL_PROBE_TIMEOUT) must be more than 0",
        ),
        (&["--probe", "https://x/"], "https is not supported"),
        (&["--probe", "x"], "'x' is not a URL vigil can probe"),
    ] {
        let UsageError(e) = parse_strs(args, &[]).expect_err(why);
        assert!(e.contains(why), "{args:?}: {e}");
    }
    let UsageError(e) = parse_strs(
        &["--probe", "http://x/"],
        &[("VIGIL_PROBE_TIMEOUT", "soon")],
    )
    .expect_err("a bad VIGIL_PROBE_TIMEOUT");
    assert!(
        e.starts_with("VIGIL_PROBE_TIMEOUT: 'soon' is not a duration"),
        "{e}"
    );
}

#[test]
fn a_probe_is_recognised_before_the_command_line_is_read() {
    let asked = |args: &[&str]| {
        let args: Vec<OsString> = std::iter::once("vigil")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        probe_asked(&args)
    };
    assert!(asked(&["--probe", "x"]));
    assert!(asked(&["--probe=x"]));
    assert!(asked(&[
        "-v",
        "--bogus",
        "--probe-timeout",
        "--probe",
        "--probe"
    ]));
    assert!(asked(&["-p", "--probe", "--probe", "x"]));
    assert!(!asked(&["--probe-timeout", "2s", "x", "--probe", "y"]));
    assert!(!asked(&["--", "--probe", "x"]));
    assert!(!asked(&["sh", "--probe", "x"]));
    // As the parser reads them: a long option's value never looks like an
    // option, so `--probe` is one, and `--` ends the options.
    assert!(asked(&["--post-start", "--probe", "sh"]));
    assert!(!asked(&["--post-start-timeout", "--", "--probe", "x"]));
    // A word of short options whose last takes the next word as its value.
    assert!(asked(&["-se", "3", "--probe", "x"]));
    assert!(!asked(&["-sp", "--probe", "x"]));
    assert!(asked(&["-pTERM", "--probe", "x"]));
}

#[test]
fn readiness_options() {
    let c = run(&["--ready-when", "http://localhost:8080/healthz", "x"], &[]).unwrap();
    assert_eq!(
        c.ready_when.as_ref().unwrap().path.as_deref(),
        Some("/healthz")
    );
    assert_eq!(c.ready_interval, Duration::from_secs(1));
    assert_eq!(c.ready_timeout, None);
    let env = [
        ("VIGIL_READY_WHEN", "tcp://db:5432"),
        ("VIGIL_READY_INTERVAL", "250ms"),
        ("VIGIL_READY_TIMEOUT", "1m"),
    ];
    let c = run(&["x"], &env).unwrap();
    assert!(c.ready_when.as_ref().unwrap().path.is_none());
    assert_eq!(c.ready_interval, Duration::from_millis(250));
    assert_eq!(c.ready_timeout, Some(Duration::from_secs(60)));
    assert_eq!(
        run(&["--ready-timeout", "0", "x"], &[])
            .unwrap()
            .ready_timeout,
        None
    );
    for (args, env, why) in [
        (
            &["--ready-when", "localhost:8080", "x"][..],
            &[][..],
            "--ready-when: 'localhost:8080' is not a URL",
        ),
        (
            &["--ready-interval", "0", "x"],
            &[],
            "--ready-interval (VIGIL_READY_INTERVAL) must be more than 0",
        ),
        (
            &["x"],
            &[("VIGIL_READY_INTERVAL", "0ms")],
            "must be more than 0",
        ),
        (
            &["--ready-timeout", "later", "x"],
            &[],
            "--ready-timeout: 'later' is not a duration",
        ),
        (
            &["x"],
            &[("VIGIL_READY_WHEN", "https://x/")],
            "VIGIL_READY_WHEN: 'https://x/' is not a URL",
        ),
    ] {
        let UsageError(e) = parse_strs(args, env).expect_err(why);
        assert!(e.contains(why), "{args:?}: {e}");
    }
}

#[test]
fn pause_runs_no_command_and_reads_only_its_options() {
    let c = run(&["-P"], &[]).unwrap();
    assert!(c.pause && c.command.is_empty());
    let c = run(
        &["-Pvw", "-s", "-p", "HUP", "--stop-signals", "QUIT", "--"],
        &[("VIGIL_GRACE_PERIOD", "5s")],
    )
    .unwrap();
    assert!(c.pause && c.warn_on_reap && c.subreaper);
    assert_eq!(c.stop_signals, [Signal::QUIT]);
    let message = |args: &[&str]| run(args, &[]).unwrap_err().0;
    let m = message(&["-P", "sleep", "1"]);
    assert!(
        m.starts_with("-P runs no command, but was given 'sleep'"),
        "{m}"
    );
    assert!(message(&["-P", "--", "sleep"]).contains("'sleep'"));
    for other in [
        &["-P", "-g"][..],
        &["-e", "3", "-P"],
        &["-P", "--grace-period", "5s"],
        &["-P", "--pre-stop", "true"],
        &["-P", "--termination-log", "/x"],
    ] {
        let m = message(other);
        assert!(
            m.contains("has nothing to act on with -P"),
            "{other:?}: {m}"
        );
    }
    // Help and the version still print.
    assert!(printed(&["-P", "--version"]).is_some());
}

#[test]
fn install_takes_a_directory_and_nothing_else() {
    let c = run(
        &["--install", "/opt/vigil"],
        &[("VIGIL_GRACE_PERIOD", "5s")],
    )
    .unwrap();
    assert_eq!(c.install.as_deref(), Some(Path::new("/opt/vigil")));
    assert!(c.command.is_empty());
    let c = run(&["-v", "--log-format=json", "--install=/x"], &[]).unwrap();
    assert_eq!(c.install.as_deref(), Some(Path::new("/x")));
    let message = |args: &[&str]| run(args, &[]).unwrap_err().0;
    let m = message(&["--install", "/x", "true"]);
    assert!(
        m.starts_with("--install runs no command, but was given 'true'"),
        "{m}"
    );
    let m = message(&["--install", ""]);
    assert!(m.contains("--install: an empty directory"), "{m}");
    let m = message(&["--install"]);
    assert!(m.contains("--install needs a value"), "{m}");
    let m = message(&["--install", "/x", "--install", "/y"]);
    assert!(m.contains("given twice"), "{m}");
    let m = message(&["--install", "/x", "-P"]);
    assert!(m.contains("two modes"), "{m}");
    for other in [&["-g", "--install", "/x"][..], &["--install", "/x", "-w"]] {
        let m = message(other);
        assert!(
            m.contains("has nothing to act on with --install"),
            "{other:?}: {m}"
        );
    }
}

/// The probe's line is the health check's output: a probe reads its
/// verbosity as any vigil does, but never below the default, so that
/// an image's `VIGIL_VERBOSITY=0` (which hides the container's exit
/// report) cannot silence why its health check failed.
#[test]
fn a_probe_always_says_why_it_failed() {
    for env in [("VIGIL_VERBOSITY", "0"), ("TINI_VERBOSITY", "0")] {
        let c = probe(&["--probe", "http://x/"], &[env]).unwrap();
        assert_eq!(c.verbosity, values::DEFAULT_VERBOSITY, "{env:?}");
    }
    let c = probe(&["--probe", "http://x/"], &[("VIGIL_VERBOSITY", "3")]).unwrap();
    assert_eq!(c.verbosity, 3);
    // A command's vigil keeps the 0 it was given.
    let c = run(&["x"], &[("VIGIL_VERBOSITY", "0")]).unwrap();
    assert_eq!(c.verbosity, 0);
}

/// What a misspelt variable or an unknown option is told to use instead:
/// the nearest real name, by edit distance or because the typo is the
/// start of it; never a shorter real name that the typo merely starts
/// with when a closer one exists (`VIGIL_PRE_STOP_SLEPP` is not
/// `VIGIL_PRE_STOP`, which would run `3s` as a hook).
#[test]
fn suggestions_name_the_nearest_real_name() {
    let meant = |name: &str| {
        let c = run(&["x"], &[(name, "3s")]).unwrap();
        assert_eq!(c.warnings.len(), 1, "{name}: {:?}", c.warnings);
        c.warnings[0].meant
    };
    for (typed, real) in [
        ("VIGIL_PRE_STOP_SLEPP", "VIGIL_PRE_STOP_SLEEP"),
        ("VIGIL_POST_START_TIMOUT", "VIGIL_POST_START_TIMEOUT"),
        ("VIGIL_PRE_STOP_TIMOUT", "VIGIL_PRE_STOP_TIMEOUT"),
        ("VIGIL_PRE_STOP_SLEEPS", "VIGIL_PRE_STOP_SLEEP"),
        ("VIGIL_TIMOUT", "VIGIL_TIMEOUT"),
        ("VIGIL_GRACE", "VIGIL_GRACE_PERIOD"),
        ("VIGIL_GRACEPERIOD", "VIGIL_GRACE_PERIOD"),
        ("VIGIL_READY", "VIGIL_READY_WHEN"),
        ("VIGIL_POST_START_TIME", "VIGIL_POST_START_TIMEOUT"),
    ] {
        assert_eq!(meant(typed), Some(real), "{typed}");
    }
    // A real name that the typo starts with is no suggestion by itself.
    for typed in ["VIGIL_PRE_STOP_COMMAND", "VIGIL_ZZZZZZZZZZ", "VIGIL_X"] {
        assert_eq!(meant(typed), None, "{typed}");
    }
    // The same help for an unknown option, and the variable's own words
    // for an option that has only a letter.
    for (args, said) in [
        (&["--grace", "5s", "x"][..], "did you mean --grace-period?"),
        (&["--grace=5s", "x"], "did you mean --grace-period?"),
        (
            &["--grace_period", "5s", "x"],
            "did you mean --grace-period?",
        ),
        (
            &["--pre-stop-slepp", "3s", "x"],
            "did you mean --pre-stop-sleep?",
        ),
        (
            &["--post-start-timout", "1s", "x"],
            "did you mean --post-start-timeout?",
        ),
        (&["--timout", "1s", "x"], "did you mean --timeout?"),
        (&["--verbose", "x"], "did you mean -v?"),
        (&["--verbosity", "x"], "did you mean -v?"),
        (&["--subreaper", "x"], "did you mean -s?"),
        (&["--kill-process-group", "x"], "did you mean -g?"),
    ] {
        let UsageError(e) = parse_strs(args, &[]).expect_err(said);
        let unknown = format!("unknown option '{}': {said}", args[0]);
        assert!(e.starts_with(&unknown), "{args:?}: {e}");
    }
    for args in [&["--bogus-option", "x"][..], &["-x", "x"], &["--zz", "x"]] {
        let UsageError(e) = parse_strs(args, &[]).expect_err("unknown");
        assert!(!e.contains("did you mean"), "{args:?}: {e}");
    }
}

/// A negative duration is one mistake, said once, with no advice that
/// would only lead to another (`--grace-period=-1s` is no duration
/// either); the `=` advice stays where it works.
#[test]
fn a_negative_duration_is_named_without_advice_that_fails() {
    for (args, env) in [
        (&["--grace-period", "-1s", "x"][..], &[][..]),
        (&["--grace-period=-1s", "x"], &[]),
        (&["x"], &[("VIGIL_GRACE_PERIOD", "-1s")]),
    ] {
        let UsageError(e) = parse_strs(args, env).expect_err("negative");
        assert!(e.contains("'-1s' is negative"), "{args:?} {env:?}: {e}");
        assert!(!e.contains("write"), "{args:?} {env:?}: {e}");
    }
    let UsageError(e) = parse_strs(&["--grace-period", "-x", "x"], &[]).unwrap_err();
    assert!(
        e.starts_with("--grace-period needs a value (DUR), but the next word is '-x'")
            && !e.contains("write"),
        "{e}"
    );
    // A value that does start with '-' is still told how to write it.
    let UsageError(e) = parse_strs(&["--pre-stop", "-x", "x"], &[]).unwrap_err();
    assert!(e.contains("write --pre-stop=VALUE"), "{e}");
    assert!(run(&["--pre-stop=-x", "x"], &[]).is_ok());
}

/// `--probe-timeout` on a command line that probes nothing has nothing
/// to act on (said at start, as for `--ready-timeout`); its variable is
/// no such mistake, since a health check's `vigil --probe` reads it too.
#[test]
fn a_probe_timeout_without_a_probe_is_unused() {
    let unused = |args: &[&str], env: &[(&str, &str)]| run(args, env).unwrap().probe_timeout_unused;
    assert!(unused(&["--probe-timeout", "1s", "x"], &[]));
    assert!(!unused(&["x"], &[("VIGIL_PROBE_TIMEOUT", "5s")]));
    assert!(!unused(&["x"], &[]));
    for probing in ["--ready-when", "--live-when"] {
        let args = ["--probe-timeout", "1s", probing, "tcp://127.0.0.1:1", "x"];
        assert!(!unused(&args, &[]), "{probing}");
    }
}
