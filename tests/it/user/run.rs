//! `--user` on the real system, beyond what the differential test against
//! gosu (tests/it/user/gosu.rs) compares: the hooks run as the user too, an unknown user starts nothing (not even a hook) and is
//! written to the termination log, the option and `VIGIL_USER` follow the
//! usual precedence and usage errors, signals reach a child of another
//! uid, the drain ends what it left behind, and what happens when the
//! switch itself fails in the forked child or vigil lacks CAP_KILL.
//!
//! The child runs as `nobody` (uid 65534), which every Debian system has;
//! its files go to a directory anyone may write.

use crate::common::*;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

const NOBODY: &str = "65534";

/// A directory anyone may read and write, and whose files anyone may read.
fn open_dir(tag: &str) -> TempDir {
    let dir = TempDir::new(tag);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

/// nobody's home directory here, as /etc/passwd says.
fn nobody_home() -> String {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    passwd
        .lines()
        .find(|l| l.starts_with("nobody:"))
        .and_then(|l| l.split(':').nth(5))
        .unwrap_or_else(|| panic!("no nobody in /etc/passwd"))
        .to_string()
}

/// What each of the child and the hooks writes: `uid HOME VIGIL_HOOK`.
const WHO: &str = r#"echo "$(id -u) $HOME ${VIGIL_HOOK:-child}""#;

#[test]
fn the_child_and_both_hooks_run_as_the_user_with_its_home() {
    for v in [Vigil::plain(), Vigil::pid1()] {
        let dir = open_dir("user-hooks");
        let hook = |name: &str| format!("sh -c '{WHO} > {name}'");
        let run = start_sh(
            v.env("HOME", "/wrong/home")
                .args(["--user", "nobody"])
                .args(["--post-start", &hook("post")])
                .args(["--pre-stop", &hook("pre")]),
            &dir,
            &format!("{WHO} > child; : > ready; exec sleep 1000"),
        );
        assert!(
            wait_for_file(&dir.join("post"), TIMEOUT),
            "{}",
            run.describe()
        );
        let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
        assert_eq!(out.status, Exit::Code(143), "{out}");
        let home = nobody_home();
        for (file, hook) in [
            ("child", "child"),
            ("post", "post-start"),
            ("pre", "pre-stop"),
        ] {
            assert_eq!(
                read_trimmed(&dir.join(file)),
                format!("{NOBODY} {home} {hook}"),
                "{file}\n{out}"
            );
        }
    }
}

#[test]
fn an_unknown_user_or_group_starts_nothing_and_is_one_line() {
    for (spec, named) in [
        ("nosuch", r#"there is no user "nosuch" in /etc/passwd"#),
        (
            "nobody:nosuch",
            r#"there is no group "nosuch" in /etc/group"#,
        ),
    ] {
        for v in [Vigil::plain(), Vigil::pid1()] {
            let dir = open_dir("user-unknown");
            let log = dir.join("termination-log");
            let out = v
                .cwd(dir.path())
                .args(["--user", spec, "--termination-log"])
                .arg(&log)
                .args(["--post-start", "touch hook", "--", "touch", "child"])
                .run();
            assert_eq!(out.status, Exit::Code(1), "{spec}: {out}");
            let want = format!("vigil: error: cannot run as user \"{spec}\": {named}");
            assert_eq!(out.stderr_lines(), [want.as_str()], "{spec}: {out}");
            assert!(!dir.join("child").exists() && !dir.join("hook").exists());
            assert_eq!(
                std::fs::read_to_string(&log).unwrap().trim_end(),
                want.trim_start_matches("vigil: error: "),
                "the termination log says why"
            );
        }
    }
}

#[test]
fn bad_specs_are_usage_errors_and_an_empty_variable_is_unset() {
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: &[Case] = &[
        (&["--user", ""], &[], "empty"),
        (&["--user", ":"], &[], "empty"),
        (&["--user", "a:b:c"], &[], "more than one ':'"),
        (&["--user=-1"], &[], "not an id"),
        (&["--user", "-1"], &[], "not an id"),
        (&["--user", "1:2147483648"], &[], "not an id"),
        (&["--user", "0", "--user", "0"], &[], "given twice"),
        (&[], &[("VIGIL_USER", "x:y:z")], "VIGIL_USER"),
    ];
    for (args, env, needle) in cases {
        let mut v = Vigil::plain().args(*args);
        for (k, val) in *env {
            v = v.env(k, val);
        }
        let out = v.args(["--", "true"]).run();
        let line = usage_error_line(&out, needle);
        assert!(line.contains(needle), "{args:?} {env:?}: {line}");
    }
    // Empty: unset, so vigil's own user.
    let out = Vigil::plain()
        .env("VIGIL_USER", "")
        .args(["--", "id", "-u"])
        .run();
    assert_eq!(
        (out.status, out.stdout.trim()),
        (Exit::Code(0), "0"),
        "{out}"
    );
}

#[test]
fn the_command_line_wins_over_vigil_user() {
    let out = Vigil::plain()
        .env("VIGIL_USER", "daemon")
        .args(["--user", "nobody", "--", "id", "-u"])
        .run();
    assert_eq!(out.stdout.trim(), NOBODY, "{out}");
    let out = Vigil::plain()
        .env("VIGIL_USER", "nobody")
        .args(["--", "id", "-u"])
        .run();
    assert_eq!(out.stdout.trim(), NOBODY, "{out}");
}

/// vigil stays root, so it forwards signals to the child of another uid
/// (to its group with -g) and its drain ends what the child left behind.
#[test]
fn signals_and_the_drain_reach_processes_of_another_uid() {
    for v in [Vigil::plain(), Vigil::pid1().arg("-g")] {
        let dir = open_dir("user-signals");
        let rec = dir.join("rec");
        let run = spawn_sigrec(
            v.json().args(["--user", "nobody"]),
            &rec,
            &["--exit-on", "15"],
        );
        run.signal(libc::SIGUSR1);
        assert!(
            wait_for_signal(&rec, libc::SIGUSR1, TIMEOUT),
            "{}",
            run.describe()
        );
        let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
        assert_eq!(out.status, Exit::Code(0), "{out}");
        assert!(read_signals(&rec).contains(&libc::SIGTERM), "{out}");
        assert!(!out.records().has("send_failed"), "{out}");
    }
    let dir = open_dir("user-drain");
    let out = Vigil::plain()
        .cwd(dir.path())
        .args([
            "--user",
            "nobody",
            "--",
            "sh",
            "-c",
            "sleep 1000 & echo $! > left",
        ])
        .run();
    assert_eq!(out.status, Exit::Code(0), "{out}");
    let left: i32 = read_trimmed(&dir.join("left")).parse().unwrap();
    assert!(gone(left), "the left-over {left} still runs: {out}");
}

/// A switch that fails in the forked child (here: setgroups, which a user
/// namespace made by `unshare --map-root-user` denies) is vigil failing
/// before the child runs: status 1 and a line that names the switch, not
/// "cannot run" with a bare OS error as if exec had failed.
#[test]
fn a_switch_that_fails_in_the_child_says_so() {
    let probe = std::process::Command::new("unshare")
        .args(["--user", "--map-root-user", "true"])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        return skip(
            "a_switch_that_fails_in_the_child_says_so",
            "no user namespaces here (unshare --user --map-root-user true failed)",
        );
    }
    let dir = open_dir("user-switch-fails");
    let out = Vigil::wrapped(&["unshare", "--user", "--map-root-user"])
        .json()
        .cwd(dir.path())
        .args(["--user", "5000", "--", "touch", "child"])
        .run();
    assert_eq!(out.status, Exit::Code(1), "{out}");
    let records = out.records();
    assert_eq!(records.events(), ["user_switch_failed"], "{out}");
    assert_fields(
        &records.0[0],
        json!({
            "level": "error",
            "program": "touch",
            "user": "5000",
            "call": "setgroups",
            "error": "Operation not permitted",
            "status": 1,
        }),
        &out,
    );
    assert!(!dir.join("child").exists());
}

/// Without CAP_KILL (Kubernetes' `drop: [ALL]` with SETUID and SETGID
/// added back), vigil as root cannot signal a child of another uid: it
/// takes the child's uid itself once the child has started (saying so at
/// `-v`), and then its stop signal reaches the child.
#[test]
fn without_cap_kill_vigil_takes_the_childs_uid() {
    let drop_kill = ["setpriv", "--bounding-set", "-kill", "--inh-caps", "-kill"];
    let out = Vigil::wrapped(&drop_kill)
        .json()
        .args(["-v", "--user", "nobody", "--", "id", "-u"])
        .run();
    assert_eq!(
        (out.status, out.stdout.trim()),
        (Exit::Code(0), NOBODY),
        "{out}"
    );
    let records = out.records();
    let followed = records
        .0
        .iter()
        .find(|r| r["event"] == "following_user")
        .unwrap_or_else(|| panic!("no following_user\n{out}"));
    assert_fields(followed, json!({"level": "info", "uid": 65534}), &out);
    // Nothing is said at the default verbosity, and the stop reaches the
    // child: --timeout's SIGTERM kills it at once.
    let started = Instant::now();
    let out = Vigil::wrapped(&drop_kill)
        .args(["--timeout", "500ms", "--grace-period", "5s"])
        .args(["--user", "nobody", "--", "sleep", "1000"])
        .run();
    assert_eq!(out.status, Exit::Code(124), "{out}");
    assert!(started.elapsed() < Duration::from_secs(4), "{out}");
    assert!(
        out.stderr.contains("(sent SIGTERM)")
            && out.stderr.contains("child was killed by SIGTERM")
            && !out.stderr.contains("could not send"),
        "{out}"
    );
    // Its own uid needs no CAP_KILL: no warning.
    let out = Vigil::wrapped(&drop_kill)
        .args(["--user", "0:1", "--", "true"])
        .run();
    assert_eq!(
        (out.status, out.stderr.as_str()),
        (Exit::Code(0), ""),
        "{out}"
    );
}
