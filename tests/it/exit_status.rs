//! vigil's exit status: the child's code, 128+N for a death by signal N,
//! 0 for what `-e` lists; and when the child cannot be run at all, 127 (not
//! found) or 126 (not executable) with one line naming the program and the
//! OS error, a file without `#!` run with /bin/sh, an argument list too
//! long for the child.

use crate::common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// `sh -c SCRIPT` as the child of vigil as PID 1 with `vigil_args`.
fn run_pid1_sh(vigil_args: &[&str], script: &str) -> Output {
    run_sh(
        Vigil::pid1().args(vigil_args),
        &TempDir::new("status"),
        script,
    )
}

#[test]
fn pid1_exit_status_is_childs_code() {
    for code in [0, 1, 3, 255] {
        let out = run_pid1_sh(&[], &format!("exit {code}"));
        assert_eq!(out.status, Exit::Code(code), "child exited {code}\n{out}");
    }
}

#[test]
fn pid1_exit_status_128_plus_signal() {
    for (sig, want) in [("TERM", 143), ("KILL", 137), ("SEGV", 139)] {
        let out = run_pid1_sh(&[], &format!("kill -{sig} $$"));
        assert_eq!(
            out.status,
            Exit::Code(want),
            "child killed by SIG{sig}\n{out}"
        );
    }
}

#[test]
fn pid1_dash_e_maps_listed_codes_to_zero() {
    let out = run_pid1_sh(&["-e", "3"], "exit 3");
    assert_eq!(out.status, Exit::Code(0), "-e 3 with exit 3\n{out}");
    let out = run_pid1_sh(&["-e", "3"], "exit 4");
    assert_eq!(out.status, Exit::Code(4), "-e 3 with exit 4\n{out}");
    let out = run_pid1_sh(&["-e", "3", "-e", "4"], "exit 4");
    assert_eq!(out.status, Exit::Code(0), "-e 3 -e 4 with exit 4\n{out}");
}

/// As in tini, `-e` applies to the final status, so 128+N for a death by
/// signal N is listed like any code.
#[test]
fn pid1_dash_e_maps_a_signal_death_status_too() {
    let out = run_pid1_sh(&["-e", "143"], "kill -TERM $$");
    assert_eq!(
        out.status,
        Exit::Code(0),
        "-e 143, killed by SIGTERM\n{out}"
    );
    let out = run_pid1_sh(&["-e", "143"], "kill -KILL $$");
    assert_eq!(
        out.status,
        Exit::Code(137),
        "-e 143, killed by SIGKILL\n{out}"
    );
}

// ---------------------------------------------------------------------------
// Exec failures
// ---------------------------------------------------------------------------

/// Runs `v -- CMD`, which cannot be executed: status `status`, no panic,
/// and the one line naming CMD (quoted once) and the OS error `os_text`.
fn assert_exec_failure(v: Vigil, cmd: &str, status: i32, os_text: &str) {
    let out = v.arg("--").arg(cmd).run();
    no_panic(&out);
    assert_eq!(out.status, Exit::Code(status), "{cmd}: {out}");
    let want = format!("vigil: error: cannot run {cmd:?}: {os_text}");
    assert!(
        out.stderr.lines().any(|l| l == want),
        "{cmd}: expected the line\n{want}\n{out}"
    );
}

#[test]
fn pid1_exec_not_found_is_127() {
    assert_exec_failure(
        Vigil::pid1(),
        "/nonexistent/vigil-test-command",
        127,
        "No such file or directory",
    );
    assert_exec_failure(
        Vigil::pid1(),
        "vigil-test-no-such-command-in-path",
        127,
        "No such file or directory",
    );
    assert_exec_failure(
        Vigil::pid1(),
        "/etc/passwd/not-a-dir",
        127,
        "Not a directory",
    );
}

#[test]
fn pid1_exec_not_executable_is_126() {
    let dir = TempDir::new("noexec");
    let f = dir.join("not-executable");
    std::fs::write(&f, "#!/bin/sh\nexit 0\n").unwrap();
    assert_exec_failure(Vigil::pid1(), f.to_str().unwrap(), 126, "Permission denied");
    assert_exec_failure(
        Vigil::pid1(),
        dir.path().to_str().unwrap(),
        126,
        "Permission denied",
    );
}

fn exec_failures(mk: fn() -> Vigil) {
    let dir = TempDir::new("execfail");
    let d = dir.path().display().to_string();
    let noexec = dir.join("noexec");
    std::fs::write(&noexec, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&noexec, std::fs::Permissions::from_mode(0o644)).unwrap();
    let cases: Vec<(String, i32, &str)> = vec![
        (format!("{d}/missing"), 127, "No such file or directory"),
        (
            "vigil-no-such-command".into(),
            127,
            "No such file or directory",
        ),
        ("/etc/passwd/x".into(), 127, "Not a directory"),
        (format!("{d}/noexec"), 126, "Permission denied"),
        (d.clone(), 126, "Permission denied"),
    ];
    for (cmd, status, text) in cases {
        assert_exec_failure(mk(), &cmd, status, text);
    }
}

#[test]
fn pid1_exec_failures_give_126_or_127_and_a_clear_message() {
    exec_failures(Vigil::pid1);
}

#[test]
fn plain_exec_failures_give_126_or_127_and_a_clear_message() {
    exec_failures(Vigil::plain);
}

/// An executable text file without `#!`: execve fails with ENOEXEC, and
/// vigil runs it as `/bin/sh FILE ARGS...`, as glibc's `execvp` (and so
/// tini, dumb-init and catatonit) does; musl's `execvp`, which the static
/// build uses, does not (it would give 126, "Exec format error").
#[test]
fn script_without_shebang_runs_with_bin_sh() {
    let dir = TempDir::new("noshebang");
    let script = dir.join("script");
    std::fs::write(&script, "echo \"$0\" \"$@\"\nexit 5\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Vigil::pid1()
        .arg("--")
        .arg(&script)
        .args(["a b", "c"])
        .run();
    no_panic(&out);
    assert_eq!(out.status, Exit::Code(5), "{out}");
    assert_eq!(out.stdout, format!("{} a b c\n", script.display()), "{out}");
    // Found through PATH, $0 is the path where execvp found it.
    let out = Vigil::plain()
        .env(
            "PATH",
            format!("/nonexistent:{}:/bin:/usr/bin", dir.path().display()),
        )
        .args(["--", "script", "x"])
        .run();
    assert_eq!(out.status, Exit::Code(5), "{out}");
    assert_eq!(out.stdout, format!("{} x\n", script.display()), "{out}");
}

/// The same script where there is no /bin/sh (an empty directory mounted
/// over /bin in a mount namespace of its own): 126, and the message says
/// both why the file did not run and why the shell did not either.
#[test]
fn script_without_shebang_and_no_shell_gives_126() {
    let dir = TempDir::new("noshebang-nosh");
    let script = dir.join("script");
    let empty = dir.join("empty");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(&script, "exit 5\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let wrapper = format!("mount --bind '{}' /bin && exec \"$@\"", empty.display());
    let out = Vigil::wrapped(&[
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        &wrapper,
        "sh",
    ])
    .arg("--")
    .arg(&script)
    .run();
    no_panic(&out);
    assert_eq!(out.status, Exit::Code(126), "{out}");
    let want = format!(
        "vigil: error: cannot run {:?}: Exec format error (a file without #! runs with /bin/sh, which failed: No such file or directory)",
        script.display().to_string()
    );
    assert!(out.stderr.lines().any(|l| l == want), "{want}\n{out}");
}

/// An argument list too long for the child (E2BIG) but not for vigil: the
/// kernel counts the path the program is executed by, and the child is
/// found through a long PATH entry while vigil is run by a short path. The
/// environment is padded until exactly that happens.
#[test]
fn argument_list_too_long_gives_126() {
    let dir = TempDir::new("e2big");
    // A directory with a ~3800-byte path, holding `e2big-target` (-> true).
    let mut long = dir.path().to_path_buf();
    while long.as_os_str().len() < 3800 {
        long.push("d".repeat(200));
    }
    std::fs::create_dir_all(&long).unwrap();
    let truth = ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("no true");
    std::os::unix::fs::symlink(truth, long.join("e2big-target")).unwrap();
    let path_var = format!("{}:/usr/bin:/bin", long.display());

    #[derive(Debug, PartialEq)]
    enum Outcome {
        VigilTooBig,
        ChildTooBig(std::process::Output),
        ChildRan,
        Other(String),
    }
    let run = |pad: usize| -> Outcome {
        let mut cmd = Command::new(vigil_bin());
        cmd.env_clear().env("PATH", &path_var);
        let chunk = 100_000;
        let mut left = pad;
        let mut i = 0;
        while left > 0 {
            let n = left.min(chunk);
            cmd.env(format!("PAD{i}"), "x".repeat(n));
            left -= n;
            i += 1;
        }
        cmd.args(["--", "e2big-target"]).stdin(Stdio::null());
        match cmd.output() {
            Err(e) if e.raw_os_error() == Some(libc::E2BIG) => Outcome::VigilTooBig,
            Err(e) => Outcome::Other(format!("spawn: {e}")),
            Ok(o) if o.status.code() == Some(0) => Outcome::ChildRan,
            Ok(o) if o.status.code() == Some(126) => Outcome::ChildTooBig(o),
            Ok(o) => Outcome::Other(format!("{o:?}")),
        }
    };
    assert_eq!(run(0), Outcome::ChildRan);
    let (mut lo, mut hi) = (0usize, 16 << 20);
    match run(hi) {
        Outcome::VigilTooBig => {}
        other => {
            return skip(
                "argument_list_too_long",
                &format!("16 MiB of environment is not too big here: {other:?}"),
            );
        }
    }
    let mut found = None;
    while hi - lo > 256 {
        let mid = (lo + hi) / 2;
        match run(mid) {
            Outcome::ChildRan => lo = mid,
            Outcome::VigilTooBig => hi = mid,
            Outcome::ChildTooBig(o) => {
                found = Some(o);
                break;
            }
            Outcome::Other(o) => panic!("padding {mid}: unexpected outcome {o}"),
        }
    }
    let o = found.unwrap_or_else(|| {
        panic!("no padding between {lo} and {hi} made only the child's exec too big")
    });
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l == "vigil: error: cannot run \"e2big-target\": Argument list too long"),
        "{stderr}"
    );
}

// ---------------------------------------------------------------------------
// A child that cannot even be made
// ---------------------------------------------------------------------------

/// At the container's process limit (a pids cgroup, `docker run
/// --pids-limit`) the fork fails: vigil says it could not start the child
/// and why that may be, and exits 1, as tini, dumb-init and catatonit do.
/// Not 126: nothing is wrong with the program. `-e 1` does not turn it
/// into 0: it is vigil failing, not the child. A limit of 1 leaves room for
/// a plain vigil alone; as PID 1, `unshare` takes a place too.
#[test]
fn a_fork_at_the_process_limit_is_not_an_exec_failure() {
    for (limit, place) in [(1, Place::Plain), (2, Place::Pid1)] {
        let cg = PidsCgroup::create(limit).expect("a pids cgroup");
        let v = match place {
            Place::Plain => cg.plain(),
            Place::Pid1 => cg.pid1(),
        };
        let out = v.json().args(["-e", "1", "--", "sh", "-c", "exit 0"]).run();
        assert_eq!(out.code(), Some(1), "limit {limit}: {out}");
        let records = out.records();
        let failed = records.one("fork_failed");
        assert_fields(
            failed,
            json!({"level": "error", "program": "sh", "status": 1}),
            &out,
        );
        // Why that may be, in the words users read.
        let msg = failed["msg"].as_str().unwrap();
        assert!(
            msg.contains("(no new process could be made: the container's process limit"),
            "limit {limit}: {out}"
        );
        assert!(cg.max_hits() > 0, "the limit was never hit\n{out}");
    }
}

enum Place {
    Plain,
    Pid1,
}

/// Room for `unshare`, vigil and the child, none for the post-start hook:
/// it is reported as "could not start", fails, and so stops the child.
#[test]
fn a_hook_at_the_process_limit_could_not_start() {
    let cg = PidsCgroup::create(3).expect("a pids cgroup");
    let out = cg
        .pid1()
        .json()
        .args(["--post-start", "echo hook ran", "--", "sleep", "30"])
        .run();
    assert_fields(
        out.records().one("hook_ended"),
        json!({"level": "warning", "hook": "post-start", "outcome": "failed", "reason": "could_not_run"}),
        &out,
    );
    assert!(!out.stdout.contains("hook ran"), "{out}");
    assert_eq!(out.code(), Some(143), "{out}");
}
