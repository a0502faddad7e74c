//! The children the tests give vigil most often: a shell script in the
//! test's directory, `sleep 1000`, and a shell that ignores SIGTERM.

use super::{Output, Running, TIMEOUT, TempDir, Vigil, nspid, wait_for_file};

/// Starts vigil (options already on `v`) with `sh -c SCRIPT` as the child,
/// in `dir` (the working directory of vigil, the child and the hooks).
pub fn spawn_sh(v: Vigil, dir: &TempDir, script: &str) -> Running {
    v.cwd(dir.path()).args(["--", "sh", "-c", script]).spawn()
}

/// `spawn_sh` and wait for the end.
pub fn run_sh(v: Vigil, dir: &TempDir, script: &str) -> Output {
    spawn_sh(v, dir, script).wait(TIMEOUT)
}

/// `spawn_sh`, then waits until the script has created `ready` in `dir`.
pub fn start_sh(v: Vigil, dir: &TempDir, script: &str) -> Running {
    let run = spawn_sh(v, dir, script);
    assert!(
        wait_for_file(&dir.join("ready"), TIMEOUT),
        "the child never created 'ready'\n{}",
        run.describe()
    );
    run
}

/// A shell child that ignores SIGTERM: it writes its pid to `pid`, creates
/// `ready` and becomes `sleep 1000` (which inherits the ignored SIGTERM).
pub const TERM_IGNORER: &str = "trap '' TERM; echo $$ > pid; : > ready; exec sleep 1000";

/// Starts vigil with `sleep 1000` as the child; returns once the child runs,
/// with the child's pid as vigil's namespace sees it.
pub fn start_sleep(v: Vigil) -> (Running, i32) {
    let run = v.args(["--", "sleep", "1000"]).spawn();
    let host = run.child_pid();
    let ns = *nspid(host).last().expect("the child's NSpid");
    (run, ns)
}
