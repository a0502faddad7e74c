//! Issue 4: diagnosis. Who sent a signal (provenance), the exit report for
//! each way a container ends, the termination log, and OOM kills told apart
//! from `kill -9`. vigil runs as PID 1 of a fresh PID namespace (see
//! tests/common/mod.rs), sometimes behind a wrapper that first sets up a
//! mount namespace or a memory cgroup.

mod common;

use common::*;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

// ---------------------------------------------------------------------------
// Setup shared by the tests
// ---------------------------------------------------------------------------

/// `spawn_sh` and wait for the end.
fn run_sh(v: Vigil, dir: &TempDir, script: &str) -> Output {
    spawn_sh(v, dir, script).wait(TIMEOUT)
}

/// Starts vigil with `sleep 1000` as the child; returns once the child runs,
/// with the child's pid as vigil's namespace sees it.
fn start_sleep(v: Vigil) -> (Running, i32) {
    let run = v.args(["--", "sleep", "1000"]).spawn();
    let host = run.child_pid();
    let ns = *nspid(host).last().expect("the child's NSpid");
    (run, ns)
}

/// The exit report vigil logged: whether as a warning, and its text (what
/// follows `exit report: `). The report may follow the child's output on
/// the same line (a child killed mid-line), so it is looked for anywhere in
/// a line, not only at its start.
fn exit_report(out: &Output) -> Option<(bool, String)> {
    out.stderr.lines().find_map(|l| {
        if let Some((_, text)) = l.split_once("vigil: warning: exit report: ") {
            Some((true, text.to_string()))
        } else {
            l.split_once("vigil: exit report: ")
                .map(|(_, text)| (false, text.to_string()))
        }
    })
}

/// The exit report, which must be logged as a warning (or not).
fn report(out: &Output, warning: bool) -> String {
    let (is_warning, text) =
        exit_report(out).unwrap_or_else(|| panic!("no exit report in the log\n{out}"));
    let level = if warning { "a warning" } else { "no warning" };
    assert_eq!(
        is_warning, warning,
        "the exit report should be {level}\n{out}"
    );
    text
}

fn assert_has(text: &str, needles: &[&str]) {
    for n in needles {
        assert!(text.contains(n), "{n:?} not in:\n{text}");
    }
}

fn uid() -> u32 {
    // SAFETY: getuid has no arguments and cannot fail.
    unsafe { libc::getuid() }
}

// ---------------------------------------------------------------------------
// Provenance
// ---------------------------------------------------------------------------

/// Runs `script` (which writes the pid of the process that will `kill -TERM
/// 1` to `sender`) and checks that the log names that process as the
/// sender. Returns the output and the sender's pid.
fn assert_sender_named(script: &str) -> (Output, String) {
    let dir = TempDir::new("provenance");
    let out = run_sh(Vigil::pid1().arg("-v"), &dir, script);
    let sender = read_trimmed(&dir.join("sender"));
    assert!(!sender.is_empty(), "the script wrote no sender pid\n{out}");
    let line = format!(
        "vigil: received SIGTERM from pid {sender} (sh, uid {})",
        uid()
    );
    assert!(
        out.stderr.lines().any(|l| l == line),
        "no line {line:?}\n{out}"
    );
    // vigil forwarded it: the child (a shell waiting) died of it.
    assert_eq!(out.code(), Some(143), "{out}");
    (out, sender)
}

/// The child sends SIGTERM itself.
const CHILD_SENDS: &str = "echo $$ > sender; kill -TERM 1; sleep 1000 & wait";

/// A SIGTERM sent from inside the namespace names its sender's pid: the
/// child itself, or a process further down.
#[test]
fn provenance_names_a_sender_inside_the_namespace() {
    assert_sender_named(CHILD_SENDS);
    // A grandchild (a shell, still a shell while vigil looks) sends it.
    assert_sender_named("sh -c 'echo $$ > sender; kill -TERM 1; sleep 1000' & wait");
}

/// The exit report names the sender of the stop signal as it was when the
/// signal came (by the time vigil exits, the sender may be gone).
#[test]
fn exit_report_names_a_sender_inside_the_namespace() {
    let (out, sender) = assert_sender_named(CHILD_SENDS);
    assert_has(
        &report(&out, false),
        &[&format!(
            "; stop: SIGTERM from pid {sender} (sh, uid {}) (sent SIGTERM), child ended ",
            uid()
        )],
    );
}

/// A signal sent from outside the namespace (here by the test) comes from
/// "pid 0 (outside this PID namespace)"; at default verbosity no signal is
/// logged.
#[test]
fn provenance_from_outside_the_namespace() {
    let (run, _) = start_sleep(Vigil::pid1().arg("-v"));
    // SIGWINCH: forwarded, and harmless to `sleep`.
    run.signal(libc::SIGWINCH);
    assert!(
        run.wait_stderr(
            "vigil: received SIGWINCH from pid 0 (outside this PID namespace)",
            TIMEOUT
        ),
        "{}",
        run.describe()
    );
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert!(
        out.stderr
            .lines()
            .any(|l| l == "vigil: received SIGTERM from pid 0 (outside this PID namespace)"),
        "{out}"
    );

    let (run, _) = start_sleep(Vigil::pid1());
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert!(!out.stderr.contains("received"), "{out}");
}

// ---------------------------------------------------------------------------
// The exit report
// ---------------------------------------------------------------------------

/// A normal exit: the report is logged at -v (info), not at all by default.
#[test]
fn exit_report_normal_exit_only_with_v() {
    let dir = TempDir::new("reportok");
    let script = "echo $$ > pid; exit 0";
    let out = run_sh(Vigil::pid1().arg("-v"), &dir, script);
    assert_eq!(out.code(), Some(0), "{out}");
    let text = report(&out, false);
    let pid = read_trimmed(&dir.join("pid"));
    assert_eq!(
        text,
        format!(
            "child exited with code 0; exit status 0; command: sh -c 'echo $$ > pid; exit 0' (pid {pid}); orphans reaped: 0"
        )
    );

    let out = run_sh(Vigil::pid1(), &dir, script);
    assert_eq!(out.code(), Some(0), "{out}");
    assert_eq!(out.stderr, "", "a normal exit logs nothing by default");
}

/// Exit 3 is abnormal (a warning, logged by default), unless `-e 3` says
/// it is expected.
#[test]
fn exit_report_exit_3_is_a_warning() {
    let dir = TempDir::new("report3");
    let out = run_sh(Vigil::pid1(), &dir, "echo $$ > pid; exit 3");
    assert_eq!(out.code(), Some(3), "{out}");
    let pid = read_trimmed(&dir.join("pid"));
    assert_eq!(
        report(&out, true),
        format!(
            "child exited with code 3; exit status 3; command: sh -c 'echo $$ > pid; exit 3' (pid {pid}); orphans reaped: 0"
        )
    );

    let out = run_sh(Vigil::pid1().args(["-e", "3"]), &dir, "exit 3");
    assert_eq!(out.code(), Some(0), "{out}");
    assert_eq!(out.stderr, "", "-e 3 makes exit 3 normal\n{out}");
    let out = run_sh(Vigil::pid1().args(["-v", "-e", "3"]), &dir, "exit 3");
    assert_has(
        &report(&out, false),
        &["child exited with code 3; exit status 0"],
    );
}

/// Issue 11, case 2. Death by the SIGTERM vigil forwarded (what `docker
/// stop` does): the report says who sent it and when. It is the expected
/// answer, so no warning, but it is shown at the default verbosity: "exit
/// 143, who sent SIGTERM?" is answered in `docker logs` without `-v`. A
/// lower verbosity (`TINI_VERBOSITY=0`) hides it.
#[test]
fn exit_report_after_a_stop_is_shown_by_default() {
    let (run, pid) = start_sleep(Vigil::pid1());
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.code(), Some(143), "{out}");
    eprintln!("exit report after a stop:\n{}", exit_line(&out));
    let text = report(&out, false);
    assert!(
        text.starts_with(&format!(
            "child was killed by SIGTERM (status 143); exit status 143; command: sleep 1000 (pid {pid}); stop: SIGTERM from pid 0 (outside this PID namespace) (sent SIGTERM), child ended 0."
        )),
        "{text}"
    );
    assert!(text.ends_with(" later; orphans reaped: 0"), "{text}");
    assert_eq!(out.stderr_lines().len(), 1, "{out}");

    let (run, _) = start_sleep(Vigil::pid1().env("TINI_VERBOSITY", "0"));
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.code(), Some(143), "{out}");
    assert_eq!(out.stderr, "", "verbosity 0 hides the report\n{out}");
}

/// SIGKILL at the grace deadline: a warning that names the survivor.
#[test]
fn exit_report_grace_deadline() {
    let dir = TempDir::new("reportgrace");
    let run = start_sh(
        Vigil::pid1().args(["--grace-period", "1s"]),
        &dir,
        TERM_IGNORER,
    );
    let pid = read_trimmed(&dir.join("pid"));
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.code(), Some(137), "{out}");
    let text = report(&out, true);
    eprintln!(
        "exit report for a grace-period expiry:\n{}",
        exit_line(&out)
    );
    assert_has(
        &text,
        &[
            "child was killed by SIGKILL (status 137) by vigil, at the grace deadline; exit status 137; command: sh -c 'trap ",
            &format!("; exec sleep 1000' (pid {pid}); stop: "),
            "; stop: SIGTERM from pid 0 (outside this PID namespace) (sent SIGTERM), child ended 1.",
            &format!("; grace period 1.00s over, SIGKILL to: {pid} (sleep)"),
        ],
    );
}

/// The exit report line exactly as vigil printed it.
fn exit_line(out: &Output) -> &str {
    out.stderr
        .lines()
        .find(|l| l.contains("exit report: "))
        .unwrap_or("")
}

/// A failed hook makes the report a warning and is in it, with its outcome.
#[test]
fn exit_report_failed_hook() {
    // post-start fails: the stop comes from it.
    let dir = TempDir::new("reporthook");
    let v = Vigil::pid1().args(["--post-start", "sh -c 'exit 5'"]);
    let out = v.cwd(dir.path()).args(["--", "sleep", "1000"]).run();
    assert_eq!(out.code(), Some(143), "{out}");
    assert_has(
        &report(&out, true),
        &[
            "child was killed by SIGTERM (status 143); exit status 143; command: sleep 1000 (pid ",
            "; stop: the post-start hook failed (sent SIGTERM)",
            "; post-start hook failed: exited with code 5 after ",
        ],
    );

    // pre-stop fails: the stop goes on, the report says so.
    let (run, _) = start_sleep(Vigil::pid1().args(["--pre-stop", "sh -c 'exit 6'"]));
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.code(), Some(143), "{out}");
    assert_has(
        &report(&out, true),
        &[
            "child was killed by SIGTERM (status 143); exit status 143; command: sleep 1000 (pid ",
            "; stop: SIGTERM from pid 0",
            "; pre-stop hook failed: exited with code 6 after ",
        ],
    );
}

// ---------------------------------------------------------------------------
// The termination log
// ---------------------------------------------------------------------------

/// `--termination-log PATH` or `VIGIL_TERMINATION_LOG=PATH`: the file holds
/// the exit report (plus a newline).
fn termination_log_holds_the_report(v: impl FnOnce(&Path) -> Vigil) {
    let dir = TempDir::new("tlog");
    let log = dir.join("termination-log");
    let out = run_sh(v(&log), &dir, "exit 3");
    assert_eq!(out.code(), Some(3), "{out}");
    let text = report(&out, true);
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

/// Issue 11, case 4. A command line of 50,000 arguments (288,890 bytes):
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
    let text = report(&out, true);
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

/// The same with 5,000 bytes of command line, as in the issue: the
/// termination message starts with the ending and the status.
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
        format!("{}\n", report(&out, true)),
        "{out}"
    );

    // No file: none is created.
    let devdir = TempDir::new("dev");
    let out = run_sh(with_private_dev(devdir.path()), &work, "exit 3");
    assert_eq!(out.code(), Some(3), "{out}");
    report(&out, true);
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

/// A termination log that cannot be written (no such directory) is a
/// warning; the exit status stays the child's.
#[test]
fn termination_log_write_failure_is_harmless() {
    let dir = TempDir::new("tlogfail");
    let log = dir.join("no-such-directory").join("termination-log");
    for code in [0, 3] {
        let v = Vigil::pid1().arg("--termination-log").arg(&log);
        let out = run_sh(v, &dir, &format!("exit {code}"));
        assert_eq!(out.code(), Some(code), "{out}");
        let warning = format!(
            "vigil: warning: could not write the termination log {}: No such file or directory",
            log.display()
        );
        assert!(
            out.stderr.lines().any(|l| l.starts_with(&warning)),
            "no line starting {warning:?}\n{out}"
        );
    }
}

// ---------------------------------------------------------------------------
// OOM kills
// ---------------------------------------------------------------------------

/// A memory cgroup made for one test, as a child of the test's own memory
/// cgroup (v1 `memory` hierarchy, else v2), removed when dropped (once no
/// process is left in it).
struct MemCgroup {
    dir: PathBuf,
}

impl MemCgroup {
    /// Makes the cgroup, with a memory limit (and no swap) if asked. `Err`
    /// says why it cannot be done here.
    fn create(limit: Option<u64>) -> Result<MemCgroup, String> {
        static N: AtomicU32 = AtomicU32::new(0);
        let (parent, v1) = own_memory_cgroup()?;
        let name = format!(
            "vigil-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let dir = parent.join(name);
        fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        let cg = MemCgroup { dir };
        let (limit_file, swap_file, swap_value) = if v1 {
            (
                "memory.limit_in_bytes",
                "memory.memsw.limit_in_bytes",
                limit,
            )
        } else {
            ("memory.max", "memory.swap.max", limit.map(|_| 0))
        };
        if !cg.dir.join(limit_file).exists() {
            return Err(format!(
                "{} has no {limit_file}: the memory controller is not enabled there",
                cg.dir.display()
            ));
        }
        if let Some(bytes) = limit {
            fs::write(cg.dir.join(limit_file), bytes.to_string())
                .map_err(|e| format!("cannot set {limit_file}: {e}"))?;
            // Without swap accounting the limit alone has to do.
            if let Some(swap) = swap_value {
                let _ = fs::write(cg.dir.join(swap_file), swap.to_string());
            }
        }
        Ok(cg)
    }

    /// A wrapper that moves itself into the cgroup and then becomes
    /// `unshare --pid --fork --mount-proc -- VIGIL ...`: vigil is PID 1 of a
    /// new namespace inside the cgroup from its first instruction.
    fn pid1(&self) -> Vigil {
        let prefix: Vec<OsString> = vec![
            "sh".into(),
            "-c".into(),
            r#"echo $$ > "$0" && exec unshare --pid --fork --mount-proc -- "$@""#.into(),
            self.dir.join("cgroup.procs").into(),
        ];
        Vigil::wrapped(&prefix)
    }

    fn procs(&self) -> String {
        read_trimmed(&self.dir.join("cgroup.procs"))
    }
}

impl Drop for MemCgroup {
    fn drop(&mut self) {
        wait_until(Duration::from_secs(10), || self.procs().is_empty());
        let removed = wait_until(Duration::from_secs(10), || {
            fs::remove_dir(&self.dir).is_ok()
        });
        if !removed {
            eprintln!(
                "could not remove the test cgroup {} (processes: {})",
                self.dir.display(),
                self.procs()
            );
        }
    }
}

/// The directory of this process's memory cgroup and whether it is v1.
fn own_memory_cgroup() -> Result<(PathBuf, bool), String> {
    let cgroups = fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
    // (root of the hierarchy the mount shows, mount point) of the first
    // mount that `wanted(fstype, super options)` accepts.
    let mount = |wanted: &dyn Fn(&str, &str) -> bool| {
        mountinfo.lines().find_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let right: Vec<&str> = right.split(' ').collect();
            let (fstype, options) = (*right.first()?, *right.get(2).unwrap_or(&""));
            let (root, point) = (left.get(3)?, left.get(4)?);
            wanted(fstype, options).then(|| (root.to_string(), point.to_string()))
        })
    };
    let under = |(root, point): (String, String), path: &str| {
        let rel = path.strip_prefix(root.as_str()).unwrap_or(path);
        Path::new(&point).join(rel.trim_start_matches('/'))
    };
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = match (parts.next(), parts.next(), parts.next()) {
            (Some(a), Some(b), Some(c)) => (a, b, c),
            _ => continue,
        };
        if controllers.split(',').any(|c| c == "memory") {
            let m = mount(&|fs, opts| fs == "cgroup" && opts.split(',').any(|o| o == "memory"))
                .ok_or("the v1 memory hierarchy is not mounted")?;
            return Ok((under(m, path), true));
        }
    }
    let path = cgroups
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or("no memory cgroup (neither v1 memory nor v2)")?;
    let m = mount(&|fs, _| fs == "cgroup2").ok_or("cgroup2 is not mounted")?;
    Ok((under(m, path), false))
}

/// A child that allocates past the cgroup's memory limit is killed by the
/// kernel's OOM killer, and the exit report says so.
#[test]
fn oom_kill_is_reported_as_the_oom_killer() {
    let cg = match MemCgroup::create(Some(32 << 20)) {
        Ok(cg) => cg,
        Err(why) => {
            eprintln!("SKIPPED oom_kill_is_reported_as_the_oom_killer: {why}");
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
        &report(&out, true),
        &[
            "child was killed by SIGKILL (status 137) by the kernel OOM killer; exit status 137",
            "; the kernel OOM killer killed 1 process in this container; ",
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
    let (run, pid) = start_sleep(v);
    kill(run.child_pid(), libc::SIGKILL).unwrap();
    let out = run.wait(TIMEOUT);
    assert_eq!(out.code(), Some(137), "{out}");
    let text = report(&out, true);
    assert_has(
        &text,
        &[&format!(
            "child was killed by SIGKILL (status 137) by someone outside vigil, not the OOM killer; exit status 137; command: sleep 1000 (pid {pid})"
        )],
    );
    assert!(!text.contains("OOM killer killed"), "{text}");
}

// ---------------------------------------------------------------------------
// Issue 11: the report is shown, never lost, and names the right cause
// ---------------------------------------------------------------------------

/// A wrapper that runs vigil as PID 1 with its stdout and stderr on a pipe
/// that `reader` (a shell command) empties onto the test's stderr. The
/// wrapper exits with vigil's status (kept in `.status` in the working
/// directory: dash has no `pipefail`).
fn pid1_behind(reader: &str) -> Vigil {
    let script =
        format!("{{ \"$@\" 2>&1; echo $? > .status; }} | ({reader}) >&2; exit \"$(cat .status)\"");
    Vigil::wrapped(&[
        "sh",
        "-c",
        &script,
        "sh",
        "unshare",
        "--pid",
        "--fork",
        "--mount-proc",
        "--",
    ])
}

/// Issue 11, case 1, as in the issue: the child fills the stderr pipe (64
/// KiB) and exits 3 while nobody reads yet. vigil waits for room (about a
/// second in all) instead of dropping the report.
#[test]
fn the_report_waits_for_room_in_a_full_stderr_pipe() {
    let dir = TempDir::new("fullpipe");
    let v = pid1_behind("sleep 0.5; cat");
    let out = spawn_sh(v, &dir, "head -c 65536 /dev/zero >&2; exit 3").wait(TIMEOUT);
    assert_eq!(out.code(), Some(3), "{out}");
    let text = report(&out, true);
    assert!(
        text.starts_with("child exited with code 3; exit status 3; command: sh -c "),
        "{text}"
    );
    assert!(
        out.stderr.ends_with("; orphans reaped: 0\n"),
        "the report is not whole, or not last"
    );
}

/// Issue 11, case 1, the `docker stop` form: a child that ignores SIGTERM
/// and keeps stderr full (`yes >&2`), a 1 s grace period, and a reader that
/// only starts after the deadline. Both final lines (the grace warning and
/// the report) get through, whole, within the second vigil allows them.
#[test]
fn the_grace_warning_and_report_get_through_a_busy_stderr() {
    let dir = TempDir::new("busypipe");
    let go = dir.join("go");
    let reader = format!(
        "while [ ! -e '{}' ]; do sleep 0.05; done; cat",
        go.display()
    );
    let v = pid1_behind(&reader).args(["--grace-period", "1s"]);
    let run = start_sh(
        v,
        &dir,
        "trap '' TERM; echo $$ > pid; : > ready; exec yes 0123456789 >&2",
    );
    // Let the pipe fill up.
    std::thread::sleep(Duration::from_millis(300));
    // vigil is the wrapper's grandchild (sh, unshare, vigil).
    let exe = fs::canonicalize(vigil_bin()).unwrap();
    let vigil = descendants(run.outer_pid())
        .into_iter()
        .find(|&p| fs::read_link(format!("/proc/{p}/exe")).is_ok_and(|e| e == exe))
        .unwrap_or_else(|| panic!("no vigil below the wrapper\n{}", run.describe()));
    kill(vigil, libc::SIGTERM).unwrap();
    std::thread::sleep(Duration::from_millis(1300));
    fs::write(&go, "").unwrap();
    let out = run.wait(TIMEOUT);
    let pid = read_trimmed(&dir.join("pid"));
    assert_eq!(out.code(), Some(137), "{}", tail(&out.stderr));
    let grace = format!("vigil: warning: grace period (1.00s) over: SIGKILL to {pid} (yes)\n");
    assert!(
        out.stderr.contains(&grace),
        "no whole line {grace:?} in:\n{}",
        tail(&out.stderr)
    );
    let report_start = "vigil: warning: exit report: child was killed by SIGKILL (status 137) by vigil, at the grace deadline; exit status 137; ";
    // The child ended at the deadline, though vigil, waiting for room to
    // write the warning, reaped it later.
    assert!(
        out.stderr.contains("(sent SIGTERM), child ended 1.0"),
        "{}",
        tail(&out.stderr)
    );
    let at = out
        .stderr
        .find(report_start)
        .unwrap_or_else(|| panic!("no exit report in:\n{}", tail(&out.stderr)));
    assert!(
        out.stderr[at..].ends_with("; orphans reaped: 0\n")
            && out.stderr[at..].matches('\n').count() == 1,
        "the report is not whole:\n{}",
        tail(&out.stderr)
    );
}

/// The last lines of a long output.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}

/// Issue 11, case 3, without Docker: a grandchild is OOM-killed in a v1 (or
/// v2) memory cgroup made for vigil, the child (its shell) exits 0. The
/// report, a warning, says the OOM killer killed a process.
#[test]
fn a_grandchilds_oom_kill_is_reported() {
    let cg = match MemCgroup::create(Some(32 << 20)) {
        Ok(cg) => cg,
        Err(why) => {
            eprintln!("SKIPPED a_grandchilds_oom_kill_is_reported: {why}");
            return;
        }
    };
    let hog = test_program("memhog");
    let script = format!("'{}' --max-mb 512; echo hog=$?", hog.display());
    let out = cg.pid1().args(["--", "sh", "-c", &script]).run();
    assert_eq!(out.code(), Some(0), "{out}");
    assert!(
        out.stdout.contains("hog=137"),
        "the hog was not killed\n{out}"
    );
    eprintln!(
        "exit report for a grandchild's OOM kill:\n{}",
        exit_line(&out)
    );
    let text = report(&out, true);
    assert!(
        text.starts_with("child exited with code 0; exit status 0; "),
        "{text}"
    );
    assert_has(
        &text,
        &["; the kernel OOM killer killed 1 process in this container (not the child: a process it started, or a hook); orphans reaped: 0"],
    );
}

/// Issue 11, case 5: a child killed by a forwarded signal other than a stop
/// signal (`docker kill -s USR1`): the report says vigil forwarded it, and
/// from whom.
#[test]
fn a_forwarded_signal_that_kills_the_child_is_attributed() {
    let (run, pid) = start_sleep(Vigil::pid1());
    let out = run.stop_and_wait(libc::SIGUSR1, TIMEOUT);
    assert_eq!(out.code(), Some(138), "{out}");
    eprintln!("exit report for a forwarded SIGUSR1:\n{}", exit_line(&out));
    assert_eq!(
        report(&out, true),
        format!("child was killed by SIGUSR1 (status 138), forwarded by vigil: SIGUSR1 from pid 0 (outside this PID namespace); exit status 138; command: sleep 1000 (pid {pid}); orphans reaped: 0")
    );
}

/// Issue 11, case 5: SIGINT starts the stop (the child's trap shrugs it
/// off), SIGTERM follows and the child's TERM trap exits 143. The report
/// names both and says the child ended on the SIGTERM; 143 answers a stop
/// signal vigil forwarded, so it is no warning.
#[test]
fn sigint_then_sigterm_names_the_one_the_child_ended_on() {
    let dir = TempDir::new("intterm");
    let script = "trap 'echo got INT' INT; trap 'exit 143' TERM; : > ready; \
                  while :; do sleep 1000 & wait; done";
    let run = start_sh(Vigil::pid1(), &dir, script);
    run.signal(libc::SIGINT);
    assert!(run.wait_stdout("got INT", TIMEOUT), "{}", run.describe());
    std::thread::sleep(Duration::from_millis(200));
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.code(), Some(143), "{out}");
    eprintln!("exit report for SIGINT then SIGTERM:\n{}", exit_line(&out));
    let text = report(&out, false);
    assert_has(
        &text,
        &[
            "child exited with code 143; exit status 143; ",
            "; stop: SIGINT from pid 0 (outside this PID namespace) (sent SIGINT); then SIGTERM from pid 0 (outside this PID namespace) (sent SIGTERM at once), child ended 0.",
            " after the SIGTERM; ",
        ],
    );
}

/// Issue 11, case 5: `-p TERM` (vigil not PID 1, under a shell that exits):
/// the SIGTERM that comes when the parent dies is reported as that, not as
/// sent by the dying parent.
#[test]
fn the_parent_death_signal_is_reported_as_that() {
    let dir = TempDir::new("pdeath");
    let v = Vigil::wrapped(&["sh", "-c", "\"$@\" & sleep 0.5", "sh"]).args(["-v", "-p", "TERM"]);
    let run = spawn_sh(v, &dir, "sleep 1000 & wait");
    let vigil = run.vigil_pid();
    let out = run.wait(TIMEOUT);
    assert!(
        wait_until(TIMEOUT, || gone(vigil)),
        "vigil did not stop when its parent died"
    );
    let line = "vigil: received SIGTERM from the kernel: vigil's parent died (-p)";
    assert!(
        out.stderr.lines().any(|l| l == line),
        "no line {line:?}\n{out}"
    );
    assert_has(
        &report(&out, false),
        &["; stop: SIGTERM from the kernel: vigil's parent died (-p) (sent SIGTERM)"],
    );
}

/// Issue 11, case 5: a pre-stop hook that vigil killed at the grace
/// deadline was cancelled, not failed, and nothing says "going on with the
/// stop" after the deadline.
#[test]
fn a_pre_stop_hook_killed_at_the_grace_deadline_was_cancelled() {
    let (run, _) =
        start_sleep(Vigil::pid1().args(["--grace-period", "1s", "--pre-stop", "sleep 1000"]));
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.code(), Some(137), "{out}");
    eprintln!(
        "exit report for a pre-stop hook overtaken by the grace deadline:\n{}",
        exit_line(&out)
    );
    assert!(!out.stderr.contains("failed"), "{out}");
    assert!(!out.stderr.contains("going on with the stop"), "{out}");
    assert_has(
        &report(&out, true),
        &[
            "; stop: SIGTERM from pid 0 (outside this PID namespace) (not sent: the grace deadline came first), child ended 1.",
            "; pre-stop hook cancelled at the grace deadline after 1.",
        ],
    );
}

/// Issue 11, case 5: a process whose command name (`comm`) is `exe` (how
/// busybox names an applet it re-executes through /proc/self/exe) is
/// listed by the first word of its command line.
#[test]
fn a_process_called_exe_is_named_by_its_command_line() {
    let dir = TempDir::new("exename");
    std::os::unix::fs::symlink(which("sleep"), dir.join("exe")).unwrap();
    let script = "trap '' TERM; echo $$ > pid; : > ready; exec -a sleep ./exe 1000";
    // bash: `exec -a` sets argv[0], which dash cannot.
    let run = Vigil::pid1()
        .cwd(dir.path())
        .args(["--grace-period", "1s", "--", "bash", "-c", script])
        .spawn();
    assert!(
        wait_for_file(&dir.join("ready"), TIMEOUT),
        "{}",
        run.describe()
    );
    let pid = read_trimmed(&dir.join("pid"));
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.code(), Some(137), "{out}");
    assert_has(
        &report(&out, true),
        &[&format!(
            "; grace period 1.00s over, SIGKILL to: {pid} (sleep)"
        )],
    );
}

/// Issue 11, case 6: `vigil -- yes | head -1`. The child dies of SIGPIPE
/// (141), as it would without vigil, and vigil says nothing about it by
/// default (nor do bash, tini, dumb-init or catatonit); at `-v` the report
/// is there.
#[test]
fn a_sigpipe_death_is_reported_only_at_v() {
    let v = Vigil::wrapped(&["sh", "-c", "\"$@\" | head -1; exit \"$?\"", "sh"]);
    let out = v.args(["--", "yes"]).run();
    assert_eq!(out.stdout, "y\n", "{out}");
    assert_eq!(out.stderr, "", "{out}");
    let v = Vigil::wrapped(&["sh", "-c", "\"$@\" | head -1", "sh"]);
    let out = v.args(["-v", "--", "yes"]).run();
    assert_has(
        &report(&out, false),
        &["child was killed by SIGPIPE (status 141); exit status 141; command: yes (pid "],
    );
}

/// Issue 11, case 6: Ctrl-C in a terminal kills the child (it holds the
/// terminal's foreground) with SIGINT: status 130, and no report by
/// default, as a shell reports none; at `-v` it says it was Ctrl-C.
#[test]
fn ctrl_c_is_reported_only_at_v() {
    for (flags, report_shown) in [("", false), ("-v ", true)] {
        let sh = PtyShell::spawn(&[]);
        assert!(sh.wait_output(PTY_PROMPT, TIMEOUT), "{}", sh.output());
        sh.send(&format!(
            "{} {flags}-- sleep 1000; echo status=$?\n",
            vigil_bin().display()
        ));
        assert!(
            wait_until(TIMEOUT, || sh.output().contains("sleep 1000") && {
                std::thread::sleep(Duration::from_millis(300));
                true
            }),
            "{}",
            sh.output()
        );
        sh.send("\x03");
        assert!(sh.wait_output("status=130", TIMEOUT), "{}", sh.output());
        let output = sh.output();
        assert_eq!(output.contains("exit report"), report_shown, "{output}");
        if report_shown {
            assert!(
                output.contains("vigil: exit report: child was killed by SIGINT (status 130), from the terminal (Ctrl-C); exit status 130; command: sleep 1000"),
                "{output}"
            );
        }
    }
}

/// Issue 11: two vigils in one log (an image whose entrypoint is vigil, run
/// under vigil as the engine's init): the inner one, whose parent is a
/// vigil, tags its lines with its pid.
#[test]
fn two_vigils_in_one_log_are_told_apart() {
    let inner = vigil_bin();
    let out = Vigil::pid1()
        .arg("--")
        .arg(&inner)
        .args(["--", "sh", "-c", "exit 3"])
        .run();
    assert_eq!(out.code(), Some(3), "{out}");
    let lines = out.stderr_lines();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("vigil[2]: warning: exit report: child exited with code 3; exit status 3; command: sh -c 'exit 3' (pid 3)"),
        "{out}"
    );
    assert!(
        lines[1].starts_with(
            "vigil: warning: exit report: child exited with code 3; exit status 3; command: "
        ),
        "{out}"
    );
}
