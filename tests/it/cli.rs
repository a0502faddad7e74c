//! The command line: where option parsing stops, `--help`, `--version`
//! (also as `docker-init`) and `-l`, vigil's own variables, and every usage
//! error (status 2, one line naming the bad value, the child never started).
//! The same surface fuzzed is tests/it/cli_fuzz.rs; against tini's, in
//! tests/it/e2e/differential.rs.

use crate::common::*;
use std::path::Path;
use std::process::Command;

// ---------------------------------------------------------------------------
// Where option parsing stops
// ---------------------------------------------------------------------------

#[test]
fn double_dash_and_first_non_option_end_option_parsing() {
    let out = Vigil::pid1().args(["--", "sh", "-c", "exit 3"]).run();
    assert_eq!(out.status, Exit::Code(3), "vigil -- sh -c 'exit 3'\n{out}");
    let out = Vigil::pid1().args(["sh", "-c", "exit 3"]).run();
    assert_eq!(
        out.status,
        Exit::Code(3),
        "vigil sh -c 'exit 3' (no --)\n{out}"
    );
    // Options after the command belong to the command.
    let script = r#"printf '%s|' "$@""#;
    for pre in [&["--"][..], &[][..]] {
        let out = Vigil::pid1()
            .args(pre)
            .args([
                "sh",
                "-c",
                script,
                "sh",
                "-v",
                "--version",
                "-e",
                "3",
                "--",
                "-h",
            ])
            .run();
        assert_eq!(out.status, Exit::Code(0), "{pre:?}\n{out}");
        assert_eq!(
            out.stdout, "-v|--version|-e|3|--|-h|",
            "{pre:?}: arguments after the command changed\n{out}"
        );
    }
    // After `--` even an option-looking word is the command.
    let out = Vigil::pid1().args(["--", "-v"]).run();
    assert_eq!(
        out.status,
        Exit::Code(127),
        "vigil -- -v must try to run '-v'\n{out}"
    );
}

// ---------------------------------------------------------------------------
// --help, --version, -l
// ---------------------------------------------------------------------------

#[test]
fn version_flag() {
    let out = Vigil::plain().arg("--version").run();
    assert_eq!(out.status, Exit::Code(0), "{out}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some(format!("vigil version {}", env!("CARGO_PKG_VERSION")).as_str()),
        "{out}"
    );
    // The second line traces the binary: the commit (HEAD when built from
    // a git checkout) and the target.
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let commit = std::env::var("VIGIL_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or(head)
        .unwrap_or_else(|| "unknown".into());
    let arch = std::env::consts::ARCH;
    let second = lines.get(1).copied().unwrap_or("");
    assert!(
        second.starts_with(&format!("commit {commit}, built for {arch}-unknown-linux-")),
        "{out}"
    );
    assert_eq!(lines.len(), 2, "{out}");
}

/// Run PATH --version, retrying while a concurrent fork elsewhere in this
/// test process still holds a write descriptor of a fresh copy (ETXTBSY).
fn version_of(path: &Path) -> std::process::Output {
    let mut out = None;
    wait_until(TIMEOUT, || {
        match Command::new(path).arg("--version").output() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => return false,
            r => out = Some(r.unwrap()),
        }
        true
    });
    out.unwrap_or_else(|| panic!("{} stayed busy", path.display()))
}

#[test]
fn version_as_docker_init() {
    let want = format!("tini version {} - vigil", env!("CARGO_PKG_VERSION"));
    let dir = TempDir::new("docker-init");
    let link = dir.join("docker-init");
    std::os::unix::fs::symlink(vigil_bin(), &link).unwrap();
    let out = Vigil::plain().program(&link).arg("--version").run();
    assert_eq!(out.status, Exit::Code(0), "{out}");
    assert_eq!(
        out.stdout.trim_end(),
        want,
        "symlink named docker-init\n{out}"
    );

    let copy_dir = dir.join("copy");
    std::fs::create_dir(&copy_dir).unwrap();
    let copy = copy_dir.join("docker-init");
    std::fs::copy(vigil_bin(), &copy).unwrap();
    let out = version_of(&copy);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        want,
        "copy named docker-init"
    );
}

#[test]
fn license_flag() {
    let out = Vigil::plain().arg("-l").run();
    assert_eq!(out.status, Exit::Code(0), "{out}");
    assert!(
        out.stdout.contains("MIT"),
        "-l does not print the MIT license\n{out}"
    );
    assert!(
        out.stdout.contains("Permission is hereby granted"),
        "-l does not print the license text\n{out}"
    );
}

#[test]
fn help_flags_exit_0_on_stdout() {
    for flag in ["-h", "--help"] {
        let out = Vigil::plain().arg(flag).run();
        assert_eq!(out.status, Exit::Code(0), "{flag}\n{out}");
        assert!(
            out.stdout.to_lowercase().contains("usage"),
            "{flag}: no usage on stdout\n{out}"
        );
        for opt in ["-s", "-p", "-v", "-w", "-g", "-e", "-l"] {
            assert!(
                out.stdout.contains(opt),
                "{flag}: help does not mention {opt}\n{out}"
            );
        }
        assert!(out.stderr.is_empty(), "{flag}: unexpected stderr\n{out}");
    }
}

// ---------------------------------------------------------------------------
// vigil's own variables
// ---------------------------------------------------------------------------

/// An empty `VIGIL_*` variable means "not set" (so `docker run -e VAR=` can
/// switch off what an image's ENV line switched on).
#[test]
fn empty_vigil_variables_mean_unset() {
    let dir = TempDir::new("emptyvars");
    let mut v = Vigil::pid1();
    // Every variable of an option with a value, from the option table
    // (`VIGIL_TERMINATION_LOG=` means "none", tested with it).
    let set: Vec<&str> = options::OPTIONS
        .iter()
        .filter(|o| o.kind.takes_value() && o.kind != options::Kind::Path)
        .filter_map(|o| o.env)
        .collect();
    assert!(set.len() >= 8, "{set:?}");
    for var in set {
        v = v.env(var, "");
    }
    let out = spawn_sh(v, &dir, ": > started").wait(TIMEOUT);
    assert_eq!(out.code(), Some(0), "{out}");
    assert!(dir.join("started").exists(), "{out}");
    assert_eq!(out.stderr, "", "{out}");
}

/// A `VIGIL_*` variable vigil does not know (in any case), or a `TINI_*`
/// one close to one of tini's, is most likely a misspelt one: vigil says
/// so, with the variable it probably meant, and runs the child as usual
/// (the child's status stands).
#[test]
fn a_misspelt_variable_is_a_warning_naming_the_real_one() {
    let out = Vigil::pid1()
        .json()
        .env("VIGIL_TIMOUT", "1m")
        .env("VIGIL_GRACE", "5s")
        .env("VIGIL_HOOK", "pre-stop")
        .env("vigil_drain_timeout", "0")
        .env("TINI_VERBOSTY", "3")
        .args(["--", "sh", "-c", "exit 3"])
        .run();
    assert_eq!(out.code(), Some(3), "{out}");
    let records = out.records();
    let mut named: Vec<(&str, &str)> = records
        .all("unknown_variable")
        .iter()
        .map(|r| {
            assert_eq!(r["level"], "warning", "{r}");
            (
                r["variable"].as_str().unwrap(),
                r["meant"].as_str().unwrap_or(""),
            )
        })
        .collect();
    named.sort();
    // VIGIL_HOOK is what vigil gives its hooks: no one's mistake.
    assert_eq!(
        named,
        [
            ("TINI_VERBOSTY", "TINI_VERBOSITY"),
            ("VIGIL_GRACE", "VIGIL_GRACE_PERIOD"),
            ("VIGIL_TIMOUT", "VIGIL_TIMEOUT"),
            ("vigil_drain_timeout", "VIGIL_DRAIN_TIMEOUT"),
        ],
        "{out}"
    );
}

/// A post-start timeout with no post-start hook has nothing to time: vigil
/// says so once and runs the child as usual (it is not a usage error, so an
/// image's `ENV VIGIL_POST_START_TIMEOUT` survives `-e VIGIL_POST_START=`).
#[test]
fn post_start_timeout_without_a_hook_warns_and_runs() {
    let out = Vigil::pid1()
        .json()
        .args(["--post-start-timeout", "1s", "--", "sh", "-c", "exit 3"])
        .run();
    assert_eq!(out.code(), Some(3), "{out}");
    let records = out.records();
    let unused = records.one("post_start_timeout_unused");
    assert_eq!(unused["level"], "warning", "{out}");
}

/// A misspelt variable is pointed at the name it most likely meant, never
/// at a shorter one that it merely starts with: following the advice for
/// `VIGIL_PRE_STOP_SLEPP=3s` must not run `3s` as a hook.
#[test]
fn a_misspelling_is_pointed_at_the_nearest_name_not_a_shorter_one() {
    let out = Vigil::pid1()
        .json()
        .env("VIGIL_PRE_STOP_SLEPP", "3s")
        .env("VIGIL_POST_START_TIMOUT", "1s")
        .env("VIGIL_PRE_STOP_TIMOUT", "1s")
        .args(["--", "sh", "-c", "exit 3"])
        .run();
    assert_eq!(out.code(), Some(3), "{out}");
    let records = out.records();
    let mut named: Vec<(&str, &str)> = records
        .all("unknown_variable")
        .iter()
        .map(|r| {
            let meant = r["meant"].as_str().unwrap_or("");
            (r["variable"].as_str().unwrap(), meant)
        })
        .collect();
    named.sort();
    assert_eq!(
        named,
        [
            ("VIGIL_POST_START_TIMOUT", "VIGIL_POST_START_TIMEOUT"),
            ("VIGIL_PRE_STOP_SLEPP", "VIGIL_PRE_STOP_SLEEP"),
            ("VIGIL_PRE_STOP_TIMOUT", "VIGIL_PRE_STOP_TIMEOUT"),
        ],
        "{out}"
    );
}

/// `--probe-timeout` where nothing probes (no `--ready-when`, no
/// `--live-when`) has nothing to act on: one warning, as for
/// `--ready-timeout`, and the child runs. Its variable is no such
/// mistake: the image's health check (`vigil --probe`) reads it too.
#[test]
fn a_probe_timeout_without_a_probe_warns_and_runs() {
    let out = Vigil::pid1()
        .json()
        .args(["--probe-timeout", "1s", "--", "sh", "-c", "exit 3"])
        .run();
    assert_eq!(out.code(), Some(3), "{out}");
    let records = out.records();
    let unused = records.one("probe_timeout_unused");
    assert_eq!(unused["level"], "warning", "{out}");
    let out = Vigil::pid1()
        .json()
        .env("VIGIL_PROBE_TIMEOUT", "1s")
        .args(["--", "sh", "-c", "exit 3"])
        .run();
    assert_eq!(out.code(), Some(3), "{out}");
    assert!(
        out.records().all("probe_timeout_unused").is_empty(),
        "{out}"
    );
}

// ---------------------------------------------------------------------------
// Usage errors
// ---------------------------------------------------------------------------

/// Runs vigil as PID 1 with `args` and `env` and a child that would leave a
/// file behind, and checks a usage error: status 2, one stderr line with
/// one level word (vigil's: clap's own `error: ` is not repeated) naming
/// each of `needles`, and the child never started.
fn assert_usage_error(args: &[&str], env: &[(&str, &str)], needles: &[&str]) {
    let dir = TempDir::new("usage");
    let mut v = Vigil::pid1().args(args);
    for (k, val) in env {
        v = v.env(k, val);
    }
    let out = run_sh(v, &dir, ": > started");
    let what = format!("args {args:?} env {env:?}");
    let line = usage_error_line(&out, &what);
    assert_eq!(line.matches("error:").count(), 1, "{what}: {line}");
    for needle in needles {
        assert!(line.contains(needle), "{what}: {needle:?} not in {line}");
    }
    assert!(
        !dir.join("started").exists(),
        "{what}: the child ran although the usage was bad"
    );
}

fn assert_usage_error_no_command(args: &[&str]) {
    let out = Vigil::pid1().args(args).run();
    usage_error_line(&out, &format!("args {args:?}"));
}

#[test]
fn usage_unknown_option() {
    assert_usage_error(&["--bogus-option"], &[], &["--bogus-option"]);
    assert_usage_error(&["-x"], &[], &["-x"]);
}

/// An unknown option gets the help a misspelt variable gets: the option
/// it most likely meant.
#[test]
fn usage_unknown_option_names_the_nearest_one() {
    for (args, meant) in [
        (&["--grace", "5s"][..], "--grace-period"),
        (&["--verbose"], "-v"),
        (&["--pre-stop-slepp", "3s"], "--pre-stop-sleep"),
    ] {
        let said = format!("unknown option '{}': did you mean {meant}?", args[0]);
        assert_usage_error(args, &[], &[&said]);
    }
}

/// A negative duration is named as such, with no advice that fails
/// (`write --grace-period=-1s` would only lead to "not a duration").
#[test]
fn usage_negative_duration_is_one_line_without_advice_that_fails() {
    for args in [&["--grace-period", "-1s"][..], &["--grace-period=-1s"]] {
        let out = Vigil::pid1().args(args).args(["true"]).run();
        let line = usage_error_line(&out, &format!("{args:?}"));
        assert!(line.contains("--grace-period: '-1s' is negative"), "{line}");
        assert!(!line.contains("write"), "{line}");
    }
}

#[test]
fn usage_bad_dash_p_signal() {
    assert_usage_error(&["-p", "SIGFOO"], &[], &["SIGFOO"]);
    assert_usage_error(&["-p", "65"], &[], &["65"]);
}

#[test]
fn usage_dash_e_out_of_range() {
    assert_usage_error(&["-e", "256"], &[], &["256"]);
    assert_usage_error(&["-e", "-1"], &[], &["-1"]);
}

#[test]
fn usage_dash_e_not_a_number() {
    assert_usage_error(&["-e", "abc"], &[], &["abc"]);
}

#[test]
fn usage_no_command() {
    assert_usage_error_no_command(&[]);
    assert_usage_error_no_command(&["--"]);
    assert_usage_error_no_command(&["-s", "-v"]);
}

#[test]
fn usage_malformed_vigil_subreaper() {
    assert_usage_error(&[], &[("VIGIL_SUBREAPER", "maybe")], &["maybe"]);
}

#[test]
fn usage_malformed_vigil_kill_process_group() {
    assert_usage_error(
        &[],
        &[("VIGIL_KILL_PROCESS_GROUP", "sometimes")],
        &["sometimes"],
    );
}

#[test]
fn usage_malformed_vigil_verbosity() {
    assert_usage_error(&[], &[("VIGIL_VERBOSITY", "9")], &["9"]);
    assert_usage_error(&[], &[("VIGIL_VERBOSITY", "loud")], &["loud"]);
}

/// A rewrite of a signal vigil never receives (SIGKILL, SIGSTOP) or never
/// forwards (SIGCHLD, SIGTTIN, SIGTTOU) could never take effect: a usage
/// error, from the command line and from `VIGIL_REWRITE`, naming the rule.
#[test]
fn rewriting_a_signal_vigil_never_forwards_is_a_usage_error() {
    for rule in ["KILL:TERM", "STOP:0", "CHLD:HUP", "TTIN:0", "SIGTTOU:INT"] {
        assert_usage_error(&["--rewrite", rule], &[], &[rule, "vigil never forwards"]);
        let list = format!("USR1:HUP,{rule}");
        assert_usage_error(
            &[],
            &[("VIGIL_REWRITE", &list)],
            &["VIGIL_REWRITE", rule, "vigil never forwards"],
        );
    }
}

/// A value that is not UTF-8 is named with its option (the bad bytes shown
/// as U+FFFD), not with a message that names neither.
#[test]
fn a_value_that_is_not_utf8_names_its_option() {
    use std::os::unix::ffi::OsStringExt;
    let dir = TempDir::new("utf8");
    for option in ["--grace-period", "--pre-stop", "-p"] {
        let bad = std::ffi::OsString::from_vec(b"5\xffs".to_vec());
        let v = Vigil::pid1().arg(option).arg(&bad);
        let out = run_sh(v, &dir, ": > started");
        let line = usage_error_line(&out, option);
        assert!(
            line.starts_with(&format!(
                "vigil: error: {option}: '5\u{fffd}s' is not valid UTF-8"
            )),
            "{line}"
        );
        assert!(!dir.join("started").exists());
    }
}

/// Every bad value exits 2 with one line on stderr naming it, and the child
/// never starts.
#[test]
fn bad_values_exit_2_and_never_start_the_child() {
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a [&'a str]);
    let cases: &[Case] = &[
        (&["--grace-period", "5x"], &[], &["'5x'"]),
        (&["--drain-timeout", "5x"], &[], &["'5x'"]),
        (&["--timeout", "later"], &[], &["'later'"]),
        (&[], &[("VIGIL_TIMEOUT", "1y")], &["VIGIL_TIMEOUT", "'1y'"]),
        (&["--pre-stop-sleep", "soon"], &[], &["'soon'"]),
        (&["--post-start-timeout=-1s"], &[], &["'-1s'"]),
        (&["--rewrite", "FOO:TERM"], &[], &["FOO:TERM"]),
        (&["--rewrite", "TERM:"], &[], &["'TERM:'"]),
        (&["--rewrite", "99:1"], &[], &["99:1"]),
        (&["--pre-stop", "sh -c 'oops"], &[], &["sh -c 'oops"]),
        (&["--pre-stop", ""], &[], &["''", "empty"]),
        (&["--post-start", "sh -c 'oops"], &[], &["sh -c 'oops"]),
        (&["--post-start", " "], &[], &["' '", "empty"]),
        (
            &[],
            &[("VIGIL_GRACE_PERIOD", "5x")],
            &["VIGIL_GRACE_PERIOD", "'5x'"],
        ),
        (
            &[],
            &[("VIGIL_DRAIN_TIMEOUT", "5x")],
            &["VIGIL_DRAIN_TIMEOUT", "'5x'"],
        ),
        (
            &[],
            &[("VIGIL_PRE_STOP_SLEEP", "soon")],
            &["VIGIL_PRE_STOP_SLEEP", "'soon'"],
        ),
        (
            &[],
            &[("VIGIL_POST_START_TIMEOUT", "1.s")],
            &["VIGIL_POST_START_TIMEOUT", "'1.s'"],
        ),
        (
            &[],
            &[("VIGIL_REWRITE", "FOO:TERM")],
            &["VIGIL_REWRITE", "FOO"],
        ),
        (
            &[],
            &[("VIGIL_REWRITE", "TERM:")],
            &["VIGIL_REWRITE", "'TERM:'"],
        ),
        (
            &[],
            &[("VIGIL_REWRITE", "HUP:HUP,99:1")],
            &["VIGIL_REWRITE", "99"],
        ),
        // An empty item, as in every list.
        (
            &[],
            &[("VIGIL_REWRITE", "TERM:QUIT,,")],
            &["VIGIL_REWRITE", "''"],
        ),
        (&[], &[("VIGIL_REWRITE", ",")], &["VIGIL_REWRITE", "''"]),
        (
            &[],
            &[("VIGIL_PRE_STOP", "sh -c 'oops")],
            &["VIGIL_PRE_STOP", "sh -c 'oops"],
        ),
        (
            &[],
            &[("VIGIL_POST_START", "sh -c 'oops")],
            &["VIGIL_POST_START", "sh -c 'oops"],
        ),
        // Empty means unset; blank is a value, and an empty command.
        (
            &[],
            &[("VIGIL_PRE_STOP", "  ")],
            &["VIGIL_PRE_STOP", "empty"],
        ),
    ];
    for (args, vars, needles) in cases {
        assert_usage_error(args, vars, needles);
    }
}

/// `--live-when`'s options and `--exit-code`: each bad value, and each
/// bad combination, is one line naming it and status 2; the child never
/// starts. In `--probe` mode `--live-when` is a probe's mistake: status 1
/// (Docker's `HEALTHCHECK` reserves 2).
#[test]
fn liveness_and_exit_code_mistakes_are_one_line_naming_them() {
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a [&'a str]);
    let cases: &[Case] = &[
        (
            &["--live-failures", "0"],
            &[],
            &["--live-failures: '0' is not a count", "at least 1"],
        ),
        (
            &["--live-failures", "x"],
            &[],
            &["--live-failures: 'x' is not a count"],
        ),
        (
            &[],
            &[("VIGIL_LIVE_FAILURES", "0")],
            &["VIGIL_LIVE_FAILURES: '0' is not a count"],
        ),
        (
            &["--live-interval", "0"],
            &[],
            &["--live-interval", "must be more than 0"],
        ),
        (
            &["--live-interval", "soon"],
            &[],
            &["--live-interval: 'soon' is not a duration"],
        ),
        (
            &["--exit-code", "nope=1"],
            &[],
            &[
                "--exit-code: in 'nope=1': 'nope' is not a cause",
                "stopped, grace",
            ],
        ),
        (
            &["--exit-code", "stopped=256"],
            &[],
            &[
                "--exit-code: in 'stopped=256': '256' is not an exit code",
                "0 to 255",
            ],
        ),
        (
            &["--exit-code", "stopped"],
            &[],
            &["--exit-code: 'stopped' is not CAUSE=STATUS"],
        ),
        (
            &["--exit-code", "stopped=0", "--exit-code", "stopped=1"],
            &[],
            &["gives stopped twice, stopped=0 and stopped=1"],
        ),
        (
            &[],
            &[("VIGIL_EXIT_CODES", "stopped=0,stopped=1")],
            &[
                "VIGIL_EXIT_CODES",
                "gives stopped twice, stopped=0 and stopped=1",
            ],
        ),
        (
            &[],
            &[("VIGIL_EXIT_CODES", "stopped=0,bogus=3")],
            &["VIGIL_EXIT_CODES: in 'bogus=3': 'bogus' is not a cause"],
        ),
        (
            &["--live-when", "ftp://x/"],
            &[],
            &[
                "--live-when: 'ftp://x/' is not a URL vigil can probe",
                "unknown scheme 'ftp'",
            ],
        ),
        (
            &[],
            &[("VIGIL_LIVE_WHEN", "https://127.0.0.1/")],
            &[
                "VIGIL_LIVE_WHEN: 'https://127.0.0.1/'",
                "https is not supported",
            ],
        ),
    ];
    for (args, vars, needles) in cases {
        assert_usage_error(args, vars, needles);
    }
    let url = "http://127.0.0.1:1/";
    crate::probe::probe_mistake(
        &["--probe", url, "--live-when", url],
        &[],
        &["--live-when does not go with --probe"],
    );
    crate::probe::probe_mistake(
        &["--exit-code", "stopped=0", "--probe", url],
        &[],
        &["--exit-code does not go with --probe"],
    );
}

/// A long option whose value is missing does not take the next word when
/// that word looks like an option: `--termination-log -- true` is a usage
/// error naming the option, not a report written to a file called `--`,
/// and `--termination-log --grace-period 5s -- true` does not try to run
/// `5s`. `--opt=-VALUE` gives such a value on purpose (a negative
/// number, which no option takes, is said to be one instead: see
/// `usage_negative_duration_is_one_line_without_advice_that_fails`).
/// tini's short options keep getopt's reading (`-p -1` is `-p`'s value
/// `-1`).
#[test]
fn a_long_option_does_not_take_an_option_for_its_value() {
    for args in [
        &["--termination-log", "--", "true"][..],
        &["--termination-log", "--grace-period", "5s", "--", "true"],
        &["--pre-stop", "-x", "true"],
    ] {
        let dir = TempDir::new("dashvalue");
        let out = Vigil::plain().cwd(dir.path()).args(args).run();
        let line = usage_error_line(&out, &format!("{args:?}"));
        assert!(
            line.contains(&format!("{} needs a value", args[0])) && line.contains("=VALUE"),
            "{line}"
        );
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{args:?} wrote {left:?}");
    }
    let dir = TempDir::new("dashvalue");
    let log = dir.join("-report");
    let out = Vigil::plain()
        .cwd(dir.path())
        .args(["--termination-log=-report", "--", "sh", "-c", "exit 3"])
        .run();
    assert_eq!(out.code(), Some(3), "{out}");
    assert!(
        log.exists(),
        "no termination log at {}\n{out}",
        log.display()
    );
    let out = Vigil::plain().args(["-p", "-1", "true"]).run();
    let line = usage_error_line(&out, "-p -1");
    assert!(
        line.contains("'-1'"),
        "-p takes -1 as its value, as getopt does: {line}"
    );
}
