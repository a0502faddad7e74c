//! The termination log (Kubernetes' terminationMessagePath): the exit
//! report written to `--termination-log`, `VIGIL_TERMINATION_LOG` or, by
//! default, /dev/termination-log when that file exists; at most 4096 bytes
//! with the ending and the status first; a file that cannot be written is a
//! warning, never a different status. (A read-only one is in
//! tests/it/restricted.rs, under Docker in tests/it/e2e/docker.rs.)

use crate::common::*;
use std::ffi::OsString;
use std::fs;
use std::path::Path;
use std::process::Command;

/// `--termination-log PATH` or `VIGIL_TERMINATION_LOG=PATH`: the file holds
/// the exit report (plus a newline).
fn termination_log_holds_the_report(v: impl FnOnce(&Path) -> Vigil) {
    let dir = TempDir::new("tlog");
    let log = dir.join("termination-log");
    let out = run_sh(v(&log), &dir, "exit 3");
    assert_eq!(out.code(), Some(3), "{out}");
    let text = exit_report_text(&out, true);
    assert_eq!(
        fs::read_to_string(&log).unwrap_or_default(),
        format!("{text}\n"),
        "{out}"
    );
}

#[test]
fn termination_log_from_the_option() {
    termination_log_holds_the_report(|log| Vigil::pid1().arg("--termination-log").arg(log));
}

#[test]
fn termination_log_from_vigil_termination_log() {
    termination_log_holds_the_report(|log| Vigil::pid1().env("VIGIL_TERMINATION_LOG", log));
}

/// A command line of 50,000 arguments (288,890 bytes):
/// the report is shortened to a line that fits in one pipe write, and the
/// termination message (what Kubernetes reads, 4096 bytes at most) holds
/// the ending and the status, which come first; the long command is cut in
/// the middle and says how long it was.
#[test]
fn a_long_command_line_leaves_the_cause_in_the_termination_log() {
    let dir = TempDir::new("tlogcap");
    let log = dir.join("termination-log");
    let words: Vec<String> = (1..=50_000).map(|n| n.to_string()).collect();
    let out = Vigil::pid1()
        .cwd(dir.path())
        .arg("--termination-log")
        .arg(&log)
        .args(["--", "sh", "-c", "exit 3"])
        .args(&words)
        .run();
    assert_eq!(out.code(), Some(3), "{out}");
    let line = exit_line(&out);
    eprintln!("exit report for a 50,000-word command line:\n{line}");
    assert!(line.len() < 4096, "a {}-byte report line", line.len());
    let text = exit_report_text(&out, true);
    assert!(
        text.starts_with("child exited with code 3; exit status 3; command: sh -c 'exit 3' 1 2 3 "),
        "{text}"
    );
    assert!(text.contains(" bytes in all ...] "), "{text}");
    assert!(
        text.ends_with(" 49999 50000 (pid 2); orphans reaped: 0"),
        "{text}"
    );
    let written = fs::read_to_string(&log).expect("the termination log");
    assert_eq!(written, format!("{text}\n"));
}

/// The same with 5,000 bytes of command line: the termination message
/// starts with the ending and the status.
#[test]
fn a_5000_byte_command_line_in_the_termination_log() {
    let dir = TempDir::new("tlog5000");
    let log = dir.join("termination-log");
    let long = "x".repeat(5_000);
    let out = Vigil::pid1()
        .cwd(dir.path())
        .arg("--termination-log")
        .arg(&log)
        .args(["--", "sh", "-c", "exit 0", "sh", &long])
        .run();
    assert_eq!(out.code(), Some(0), "{out}");
    let written = fs::read_to_string(&log).expect("the termination log");
    assert!(written.len() <= 4096, "{} bytes", written.len());
    assert!(
        written
            .starts_with("child exited with code 0; exit status 0; command: sh -c 'exit 0' sh xxx"),
        "{written}"
    );
    assert!(
        written.ends_with("(pid 2); orphans reaped: 0\n"),
        "{written}"
    );
}

/// `unshare --mount --pid --fork --mount-proc` with a host directory
/// bind-mounted on /dev, so that the test decides whether
/// /dev/termination-log exists, sees what vigil writes there, and the host's
/// /dev is never touched.
fn with_private_dev(devdir: &Path) -> Vigil {
    let prefix: Vec<OsString> = vec![
        "unshare".into(),
        "--mount".into(),
        "--pid".into(),
        "--fork".into(),
        "--mount-proc".into(),
        "--".into(),
        "sh".into(),
        "-c".into(),
        r#"mount --bind "$0" /dev && exec "$@""#.into(),
        devdir.into(),
    ];
    Vigil::wrapped(&prefix)
}

/// By default the report goes to /dev/termination-log only when that file
/// exists; an empty `--termination-log` or `VIGIL_TERMINATION_LOG` turns it
/// off.
#[test]
fn default_termination_log_only_when_the_file_exists() {
    let host_had_one = Path::new("/dev/termination-log").exists();
    let work = TempDir::new("tlogdefault");

    // The file exists: the report lands in it.
    let devdir = TempDir::new("dev");
    let log = devdir.join("termination-log");
    fs::write(&log, "").unwrap();
    let out = run_sh(with_private_dev(devdir.path()), &work, "exit 3");
    assert_eq!(out.code(), Some(3), "{out}");
    assert_eq!(
        fs::read_to_string(&log).unwrap(),
        format!("{}\n", exit_report_text(&out, true)),
        "{out}"
    );

    // No file: none is created.
    let devdir = TempDir::new("dev");
    let out = run_sh(with_private_dev(devdir.path()), &work, "exit 3");
    assert_eq!(out.code(), Some(3), "{out}");
    exit_report_text(&out, true);
    let entries: Vec<_> = fs::read_dir(devdir.path()).unwrap().flatten().collect();
    assert!(
        entries.is_empty(),
        "vigil created {:?} in /dev\n{out}",
        entries.iter().map(|e| e.file_name()).collect::<Vec<_>>()
    );

    // The file exists but an empty value switches the log off.
    for off in [
        with_private_dev_off(TermLogOff::Option),
        with_private_dev_off(TermLogOff::Env),
    ] {
        let devdir = TempDir::new("dev");
        let log = devdir.join("termination-log");
        fs::write(&log, "").unwrap();
        let out = run_sh(off(devdir.path()), &work, "exit 3");
        assert_eq!(out.code(), Some(3), "{out}");
        assert_eq!(fs::read_to_string(&log).unwrap(), "", "{out}");
    }

    assert_eq!(
        Path::new("/dev/termination-log").exists(),
        host_had_one,
        "the host's /dev changed"
    );
}

enum TermLogOff {
    Option,
    Env,
}

/// `with_private_dev` plus an empty `--termination-log` or
/// `VIGIL_TERMINATION_LOG`.
fn with_private_dev_off(how: TermLogOff) -> impl Fn(&Path) -> Vigil {
    move |devdir: &Path| match how {
        TermLogOff::Option => with_private_dev(devdir).args(["--termination-log", ""]),
        TermLogOff::Env => with_private_dev(devdir).env("VIGIL_TERMINATION_LOG", ""),
    }
}

/// A termination log that cannot be written (no such directory) is one
/// warning, though vigil tries it twice (the provisional message at start,
/// the report at the end); the exit status stays the child's.
#[test]
fn termination_log_write_failure_is_harmless() {
    let dir = TempDir::new("tlogfail");
    let log = dir.join("no-such-directory").join("termination-log");
    for code in [0, 3] {
        let v = Vigil::pid1().json().arg("--termination-log").arg(&log);
        let out = run_sh(v, &dir, &format!("exit {code}"));
        assert_eq!(out.code(), Some(code), "{out}");
        let failed = out.records().one("termination_log_failed").clone();
        assert_fields(
            &failed,
            json!({"level": "warning", "path": log.display().to_string(), "unread": false}),
            &out,
        );
    }
}

// Writing it never hangs and never destroys another stream.

/// A FIFO that nobody reads as the termination log: opening it would
/// block until a reader comes, which may be never. vigil says so and exits
/// with the child's status.
#[test]
fn a_fifo_without_a_reader_is_a_warning_not_a_hang() {
    let dir = TempDir::new("tlogfifo");
    let fifo = dir.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    for v in [Vigil::pid1(), Vigil::plain()] {
        let out = run_sh(v.json().arg("--termination-log").arg(&fifo), &dir, "exit 3");
        assert_eq!(out.code(), Some(3), "{out}");
        let failed = out.records().one("termination_log_failed").clone();
        assert_fields(
            &failed,
            json!({"path": fifo.display().to_string(), "unread": true}),
            &out,
        );
    }
}

/// `--termination-log /dev/stderr` with stderr appended to a file (a CI
/// job's `2>>ci.log`): what the job and vigil wrote before stays, and the
/// report is not written twice.
#[test]
fn vigils_own_stderr_as_the_termination_log_is_appended_to() {
    let dir = TempDir::new("tlogstderr");
    let ci_log = dir.join("ci.log");
    fs::write(&ci_log, "earlier step\n").unwrap();
    for (code, shown) in [(3, true), (0, false)] {
        let script = format!(
            "exec '{}' --log-format json --termination-log /dev/stderr -- sh -c 'echo job output >&2; exit {code}' 2>>'{}'",
            vigil_bin().display(),
            ci_log.display()
        );
        let status = Command::new("sh").arg("-c").arg(&script).status().unwrap();
        assert_eq!(status.code(), Some(code));
        let text = fs::read_to_string(&ci_log).unwrap();
        assert!(text.starts_with("earlier step\n"), "{text}");
        assert!(text.contains("job output\n"), "{text}");
        let records = Records::of(&text);
        let reports = records.all("exit");
        let reports = reports.iter().filter(|r| r["ending"]["code"] == code);
        // Shown in the log (a non-zero status): once, not twice. Not
        // shown (a success at the default verbosity): once, appended as
        // the termination log.
        assert_eq!(reports.count(), 1, "shown in the log: {shown}\n{text}");
    }
}

/// A usage error leaves its reason in the termination log, so that
/// Kubernetes shows why the container never started.
#[test]
fn a_usage_error_is_written_to_the_termination_log() {
    let dir = TempDir::new("tlogusage");
    let log = dir.join("termination-log");
    let cases: [(Vigil, &str); 3] = [
        (
            Vigil::plain()
                .arg("--termination-log")
                .arg(&log)
                .args(["--grace-period", "soon"]),
            "'soon' is not a duration",
        ),
        (
            Vigil::plain()
                .env("VIGIL_TERMINATION_LOG", &log)
                .env("VIGIL_GRACE_PERIOD", "soon"),
            "VIGIL_GRACE_PERIOD: 'soon' is not a duration",
        ),
        (
            Vigil::plain()
                .env("VIGIL_TERMINATION_LOG", &log)
                .arg("--no-such-option"),
            "unknown option '--no-such-option'",
        ),
    ];
    for (v, reason) in cases {
        let _ = fs::remove_file(&log);
        let out = run_sh(v, &dir, ": > started");
        assert_eq!(out.code(), Some(2), "{out}");
        let line = usage_error_line(&out, reason);
        let written = fs::read_to_string(&log).unwrap_or_default();
        assert_eq!(written, format!("{line}\n"), "{out}");
        assert!(written.contains(reason), "{written}");
        assert!(!dir.join("started").exists());
    }
}

/// `vigil --termination-log /app/server`, the path forgotten: the program
/// is taken for the path and there is no command. The usage error is not
/// written over the program.
#[test]
fn a_usage_error_is_never_written_over_the_program() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("tlogprogram");
    let program = dir.join("server");
    fs::write(&program, "#!/bin/sh\necho serving\n").unwrap();
    fs::set_permissions(&program, fs::Permissions::from_mode(0o755)).unwrap();
    let out = Vigil::plain().arg("--termination-log").arg(&program).run();
    usage_error_line(&out, "the path forgotten");
    assert_eq!(
        fs::read_to_string(&program).unwrap(),
        "#!/bin/sh\necho serving\n"
    );
}

// ---------------------------------------------------------------------------
// The provisional message
// ---------------------------------------------------------------------------

/// While the child runs, the termination log holds the provisional message
/// (what a silent end most likely means, the command, its pid); vigil
/// killed by SIGKILL leaves it there, saying so; a normal exit writes the
/// report over it, with nothing of it left. As PID 1 and not, in text and
/// in JSON.
#[test]
fn the_provisional_message_stands_until_vigil_s_own_exit() {
    for (v, pid1) in [(Vigil::pid1(), true), (Vigil::plain(), false)] {
        let dir = TempDir::new("provisional");
        let log = dir.join("termination-log");
        // A longer message was there before: none of it may be left.
        fs::write(&log, "x".repeat(5000)).unwrap();
        let run = start_sh(
            v.arg("--termination-log").arg(&log),
            &dir,
            ": > ready; exec sleep 1000",
        );
        // Written right after the child starts, which may be after the
        // child said it was ready.
        let provisional = "vigil ended without its exit report: ";
        wait_until(TIMEOUT, || {
            fs::read_to_string(&log).is_ok_and(|t| t.starts_with(provisional))
        });
        let text = fs::read_to_string(&log).unwrap();
        assert!(
            text.starts_with("vigil ended without its exit report: most likely vigil was killed by SIGKILL from outside (docker kill, the kubelet after the grace period, or the kernel); command: sh -c ")
                && text.contains(" started 20")
                && text.ends_with('\n')
                && !text.contains("xxx"),
            "pid1={pid1}: {text:?}"
        );
        let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
        assert_eq!(out.code(), Some(143), "{out}");
        let report = exit_report_text(&out, false);
        assert_eq!(
            fs::read_to_string(&log).unwrap(),
            format!("{report}\n"),
            "{out}"
        );
    }
    // SIGKILL from outside: the provisional message is what is left.
    let dir = TempDir::new("provisionalkill");
    let log = dir.join("termination-log");
    let run = start_sh(
        Vigil::pid1()
            .args(["--log-format", "json"])
            .arg("--termination-log")
            .arg(&log),
        &dir,
        ": > ready; exec sleep 1000",
    );
    // Killed once the provisional record is there (written right after
    // the child starts).
    let provisional = || {
        let text = fs::read_to_string(&log).unwrap_or_default();
        vigil_record(text.trim_end()).ok().flatten()
    };
    assert!(
        wait_until(TIMEOUT, || provisional().is_some()),
        "no provisional record\n{}",
        run.describe()
    );
    let out = run.stop_and_wait(libc::SIGKILL, TIMEOUT);
    assert_eq!(out.status, Exit::Signal(libc::SIGKILL), "{out}");
    let record = provisional().unwrap_or_else(|| panic!("no record left\n{out}"));
    assert_fields(
        &record,
        json!({"event": "provisional", "likely": "sigkill"}),
        &out,
    );
}
