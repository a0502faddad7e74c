//! OOM kills told apart from `kill -9`: the child, or a process it started,
//! killed by the kernel's OOM killer in a memory cgroup made for the test
//! (cgroup v1 or v2; skipped with a line saying why where none can be
//! made), and a SIGKILL from outside that is not blamed on it.

use crate::common::*;

/// A child that allocates past the cgroup's memory limit is killed by the
/// kernel's OOM killer, and the exit report says so.
#[test]
fn oom_kill_is_reported_as_the_oom_killer() {
    let cg = match MemCgroup::create(Some(32 << 20)) {
        Ok(cg) => cg,
        Err(why) => {
            skip("oom_kill_is_reported_as_the_oom_killer", &why);
            return;
        }
    };
    let out = cg
        .pid1()
        .args([
            "--",
            test_program("memhog").to_str().unwrap(),
            "--max-mb",
            "512",
        ])
        .run();
    assert_eq!(out.code(), Some(137), "{out}");
    eprintln!("exit report for an OOM kill:\n{}", exit_line(&out));
    assert_has(
        &exit_report_text(&out, true),
        &[
            "child was killed by SIGKILL (status 137) by the kernel OOM killer; exit status 137",
            "; the kernel OOM killer killed 1 process in this container, one process at a time (memory.oom.group is off); ",
        ],
    );
}

/// `kill -9` of the child from outside, in a cgroup without an OOM kill, is
/// not blamed on the OOM killer.
#[test]
fn kill_9_from_outside_is_not_called_oom() {
    let cg = MemCgroup::create(None);
    let v = match &cg {
        Ok(cg) => cg.pid1(),
        Err(why) => {
            eprintln!("no test cgroup ({why}): running in the test's own cgroup");
            Vigil::pid1()
        }
    };
    let (run, pid) = start_sleep(v.json());
    kill(run.child_pid(), libc::SIGKILL).unwrap();
    let out = run.wait(TIMEOUT);
    assert_eq!(out.code(), Some(137), "{out}");
    let exit = out.records().exit().clone();
    assert_fields(
        &exit,
        json!({
            "level": "warning",
            "status": 137,
            "ending": {"signal": "SIGKILL", "cause": "unknown_sigkill"},
            "command": "sleep 1000",
            "pid": pid,
            "oom_kills": 0,
        }),
        &out,
    );
    assert!(exit.get("oom_group").is_none(), "{exit}");
}

/// `kill -9` of the child by a process in the container: the report says
/// what vigil knows (neither vigil nor the OOM killer sent it), not that
/// someone outside did.
#[test]
fn kill_9_from_inside_is_not_called_outside() {
    let dir = TempDir::new("kill9in");
    let out = run_sh(
        Vigil::pid1().json(),
        &dir,
        "sh -c 'kill -9 $PPID' & sleep 1000 & wait",
    );
    assert_eq!(out.code(), Some(137), "{out}");
    let exit = out.records().exit().clone();
    assert_fields(
        &exit,
        json!({"status": 137, "ending": {"signal": "SIGKILL", "cause": "unknown_sigkill"}}),
        &out,
    );
    // Nothing says who sent it.
    assert!(exit.get("stop").is_none(), "{exit}");
    assert!(exit["ending"].get("forwarded").is_none(), "{exit}");
}

/// Without Docker: a grandchild is OOM-killed in a v1 (or
/// v2) memory cgroup made for vigil, the child (its shell) exits 0. The
/// report, a warning, says the OOM killer killed a process.
#[test]
fn a_grandchilds_oom_kill_is_reported() {
    let cg = match MemCgroup::create(Some(32 << 20)) {
        Ok(cg) => cg,
        Err(why) => {
            skip("a_grandchilds_oom_kill_is_reported", &why);
            return;
        }
    };
    let hog = test_program("memhog");
    let script = format!("'{}' --max-mb 512; echo hog=$?", hog.display());
    let out = cg.pid1().json().args(["--", "sh", "-c", &script]).run();
    assert_eq!(out.code(), Some(0), "{out}");
    assert!(
        out.stdout.contains("hog=137"),
        "the hog was not killed\n{out}"
    );
    let exit = out.records().exit().clone();
    assert_fields(
        &exit,
        json!({
            "level": "warning",
            "status": 0,
            "ending": {"kind": "exited", "code": 0},
            "oom_kills": 1,
            "oom_group": false,
            "orphans_reaped": 0,
        }),
        &out,
    );
    assert!(exit["ending"].get("cause").is_none(), "{exit}");
}
