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

/// The exit report vigil logged: whether at warning level, and its text
/// (what follows `exit report: `).
fn exit_report(out: &Output) -> Option<(bool, String)> {
    out.stderr.lines().find_map(|l| {
        if let Some(text) = l.strip_prefix("vigil: warning: exit report: ") {
            Some((true, text.to_string()))
        } else {
            l.strip_prefix("vigil: exit report: ")
                .map(|text| (false, text.to_string()))
        }
    })
}

/// The exit report, which must be logged at `warning` level (or not).
fn report(out: &Output, warning: bool) -> String {
    let (is_warning, text) =
        exit_report(out).unwrap_or_else(|| panic!("no exit report in the log\n{out}"));
    let level = if warning { "warning" } else { "info" };
    assert_eq!(
        is_warning, warning,
        "the exit report should be at {level} level\n{out}"
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
            "; stop: SIGTERM from pid {sender} (sh, uid {}), child ended ",
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
    assert!(text.starts_with("sh -c "), "{text}");
    assert!(
        text.ends_with(&format!(
            " (pid {pid}) exited with code 0; exit status 0; orphans reaped: 0"
        )),
        "{text}"
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
    assert_has(
        &report(&out, true),
        &[&format!(
            " (pid {pid}) exited with code 3; exit status 3; orphans reaped: 0"
        )],
    );

    let out = run_sh(Vigil::pid1().args(["-e", "3"]), &dir, "exit 3");
    assert_eq!(out.code(), Some(0), "{out}");
    assert_eq!(out.stderr, "", "-e 3 makes exit 3 normal\n{out}");
    let out = run_sh(Vigil::pid1().args(["-v", "-e", "3"]), &dir, "exit 3");
    assert_has(&report(&out, false), &["exited with code 3; exit status 0"]);
}

/// Death by the SIGTERM vigil forwarded: the report says who sent it and
/// when; it is the expected answer, so info level.
#[test]
fn exit_report_death_by_sigterm() {
    let (run, pid) = start_sleep(Vigil::pid1().arg("-v"));
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.code(), Some(143), "{out}");
    let text = report(&out, false);
    assert_has(
        &text,
        &[
            &format!("sleep 1000 (pid {pid}) was killed by SIGTERM (status 143); exit status 143"),
            "; stop: SIGTERM from pid 0 (outside this PID namespace), child ended 0.",
            " later (sent SIGTERM)",
            "; orphans reaped: 0",
        ],
    );

    let (run, _) = start_sleep(Vigil::pid1());
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.code(), Some(143), "{out}");
    assert!(exit_report(&out).is_none(), "{out}");
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
            &format!(
                " (pid {pid}) was killed by SIGKILL (status 137) by vigil, at the grace deadline; exit status 137"
            ),
            "; stop: SIGTERM from pid 0 (outside this PID namespace), child ended 1.",
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
            "was killed by SIGTERM (status 143); exit status 143; stop: the post-start hook failed",
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
            "was killed by SIGTERM (status 143); exit status 143; stop: SIGTERM from pid 0",
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

/// The termination log is cut to 4096 bytes (what Kubernetes reads): a
/// report with a 10,000-character command line is cut cleanly, with `...`.
#[test]
fn termination_log_is_capped_at_4096_bytes() {
    let dir = TempDir::new("tlogcap");
    let log = dir.join("termination-log");
    let long = "x".repeat(10_000);
    let out = Vigil::pid1()
        .cwd(dir.path())
        .arg("-v")
        .arg("--termination-log")
        .arg(&log)
        .args(["--", "sh", "-c", "exit 0", "sh", &long])
        .run();
    assert_eq!(out.code(), Some(0), "{out}");
    let text = report(&out, false);
    assert!(text.len() > 10_000, "the report lacks the long argument");
    let written = fs::read_to_string(&log).expect("the termination log");
    assert!(
        written.len() <= 4096,
        "the termination log has {} bytes",
        written.len()
    );
    assert!(
        written.len() >= 4000,
        "cut too short: {} bytes",
        written.len()
    );
    let kept = written.strip_suffix("...\n").unwrap_or_else(|| {
        panic!(
            "a cut report ends with '...': {:?}",
            &written[written.len() - 20..]
        )
    });
    assert!(
        text.starts_with(kept),
        "the cut report is not the report's beginning"
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
        .args(["--", example("memhog").to_str().unwrap(), "--max-mb", "512"])
        .run();
    assert_eq!(out.code(), Some(137), "{out}");
    eprintln!("exit report for an OOM kill:\n{}", exit_line(&out));
    assert_has(
        &report(&out, true),
        &[
            "was killed by SIGKILL (status 137) by the kernel OOM killer; exit status 137",
            "; the kernel OOM killer killed 1 process(es) in this container",
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
            "sleep 1000 (pid {pid}) was killed by SIGKILL (status 137) by someone outside vigil, not the OOM killer; exit status 137"
        )],
    );
    assert!(!text.contains("OOM killer killed"), "{text}");
}
