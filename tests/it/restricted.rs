//! Restricted environments: no /proc of vigil's own namespace (the host's,
//! unmounted, an empty tmpfs), no privileges (vigil run as nobody), a
//! read-only working directory and termination log. vigil still forwards,
//! reaps and drains what it can reach, says what it cannot, and never
//! hangs.

use crate::common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------
// No /proc of its own
// ---------------------------------------------------------------------------

/// Starts vigil behind `prefix` (as PID 1, with /proc as `prefix` leaves
/// it), with `vigil_args`; its child starts `leftover` (a command that ends
/// up as `sleep`) in a session of its own, so that only the drain reaches
/// it, then becomes the counting child (see `start_counter`). Returns once
/// both run, with the leftover's host pid.
fn start_with_leftover(
    prefix: &[&str],
    vigil_args: &[&str],
    leftover: &str,
    out: &Path,
    what: &str,
) -> (Running, i32) {
    let script = format!(
        "setsid {leftover} & exec '{}' --out '{}' --die-on 15",
        test_program("sigcount").display(),
        out.display()
    );
    let run = Vigil::wrapped(prefix)
        .json()
        .args(vigil_args)
        .args(["--", "sh", "-c", &script])
        .spawn();
    wait_ready(&run, out);
    let vp = run.vigil_pid();
    let mut found = None;
    wait_until(TIMEOUT, || {
        found = descendants(vp)
            .into_iter()
            .find(|&p| comm(p).as_deref() == Some("sleep"));
        found.is_some()
    });
    let pid = found.unwrap_or_else(|| panic!("{what}: no leftover\n{}", run.describe()));
    (run, pid)
}

/// Has `pid` ended (reaped, or a zombie waiting for a reaper)?
fn ended(pid: i32) -> bool {
    gone(pid) || state(pid) == Some('Z')
}

/// vigil as PID 1 with /proc as `prefix` leaves it: it still forwards
/// signals, and its drain still reaches a leftover (kill(-1)).
fn forwards_and_drains_without_proc(prefix: &[&str], what: &str) {
    let _cpu = timing();
    let dir = TempDir::new("noproc");
    let out = dir.join("counts");
    let (run, leftover) = start_with_leftover(
        prefix,
        &["--drain-timeout", "20s"],
        "sleep 1000",
        &out,
        what,
    );
    assert_forwards(&run, &out, libc::SIGUSR1);
    assert_forwards(&run, &out, 40);
    let (o, took) = timed_stop(run);
    no_panic(&o);
    assert_eq!(o.status, Exit::Code(143), "{what}: {o}");
    assert!(
        wait_until(Duration::from_secs(5), || ended(leftover)),
        "{what}: the leftover {leftover} survived the drain"
    );
    assert!(
        took < Duration::from_secs(10),
        "{what}: the drain waited {took:?}: SIGTERM (kill(-1)) did not reach the leftover\n{o}"
    );
    assert_eq!(
        o.records().one("proc_unlisted")["level"],
        "warning",
        "{what}: no warning says /proc is unavailable\n{o}"
    );
}

#[test]
fn proc_of_the_host_not_of_the_namespace() {
    forwards_and_drains_without_proc(
        &["unshare", "--pid", "--fork", "--"],
        "unshare without --mount-proc",
    );
}

#[test]
fn proc_unmounted() {
    forwards_and_drains_without_proc(
        &unshare_sh(&["--mount", "--pid", "--fork"], UMOUNT_PROC),
        "/proc unmounted",
    );
}

#[test]
fn proc_is_an_empty_tmpfs() {
    forwards_and_drains_without_proc(
        &unshare_sh(
            &["--mount", "--pid", "--fork"],
            "mount -t tmpfs none /proc && exec \"$@\"",
        ),
        "tmpfs over /proc",
    );
}

/// Without /proc, a leftover that ignores SIGTERM still gets SIGKILL at the
/// drain timeout (kill(-1) as PID 1).
#[test]
fn proc_unmounted_drain_timeout_still_kills() {
    let _cpu = timing();
    let dir = TempDir::new("noproc2");
    let out = dir.join("counts");
    let (run, leftover) = start_with_leftover(
        &unshare_sh(&["--mount", "--pid", "--fork"], UMOUNT_PROC),
        &["--drain-timeout", "1s"],
        "sh -c 'trap \"\" TERM; exec sleep 1000'",
        &out,
        "/proc unmounted",
    );
    let o = stop_at_a_1s_deadline(run, 143, "drain timeout", Duration::from_secs(5));
    assert!(
        wait_until(Duration::from_secs(5), || ended(leftover)),
        "the leftover that ignores SIGTERM survived"
    );
    assert_fields(
        o.records().one("drain_killed"),
        json!({"cause": "drain_timeout", "drain_timeout": 1}),
        &o,
    );
}

/// Runs vigil with /proc hidden (a tmpfs over it, in a mount namespace of
/// its own): vigil is not PID 1 and cannot list its descendants.
fn plain_with_proc_hidden() -> Vigil {
    Vigil::wrapped(&[
        "unshare",
        "--mount",
        "sh",
        "-c",
        "mount -t tmpfs none /proc && exec \"$@\"",
        "sh",
    ])
}

/// A left-over that vigil cannot see (no /proc, its own session) does not
/// make vigil hang: it exits after the drain timeout and does not claim to
/// have killed "everything left".
#[test]
fn without_proc_the_drain_ends_at_its_timeout() {
    let _cpu = timing();
    let dir = TempDir::new("noproc");
    let v = plain_with_proc_hidden()
        .json()
        .args(["-v", "--drain-timeout", "1s"]);
    let t0 = Instant::now();
    let run = spawn_sh(
        v,
        &dir,
        "sleep 300 & setsid sh -c 'echo $$ > hidden; exec sleep 301' & \
         while [ ! -s hidden ]; do sleep 0.05; done; exit 0",
    );
    let (out, took) = wait_timed(run, t0);
    if let Ok(pid) = read_trimmed(&dir.join("hidden")).parse::<i32>() {
        let _ = kill(pid, libc::SIGKILL);
    }
    assert_eq!(out.code(), Some(0), "{out}");
    assert!(took < Duration::from_secs(10), "vigil took {took:?}\n{out}");
    // It says what it could not do, and claims no kill of what it could
    // not list.
    let records = out.records();
    assert!(records.has("cannot_reach_all"), "{out}");
    for killed in records.all("drain_killed") {
        assert_eq!(killed["listed"], false, "{out}");
    }
}

// ---------------------------------------------------------------------------
// No privileges, a read-only filesystem
// ---------------------------------------------------------------------------

const NOBODY: &str = "65534";

fn setpriv_args() -> Vec<String> {
    vec![
        "setpriv".into(),
        format!("--reuid={NOBODY}"),
        format!("--regid={NOBODY}"),
        "--clear-groups".into(),
        "--".into(),
    ]
}

/// A temp dir nobody may write to... and one everybody may.
fn world_writable(tag: &str) -> TempDir {
    let d = TempDir::new(tag);
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    d
}

/// Copies of vigil and the helpers nobody can run wherever the build is
/// (a clone under /root is out of nobody's reach).
fn nobody_bins() -> TempDir {
    let bins = TempDir::new("nobody-bin");
    std::fs::set_permissions(bins.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::copy(vigil_bin(), bins.join("vigil")).unwrap();
    for name in ["orphans", "sigcount", "marker"] {
        std::fs::copy(test_program(name), bins.join(name)).unwrap();
    }
    bins
}

fn as_nobody(make: impl FnOnce(&Path) -> Vigil, pid1: bool) {
    let bins = nobody_bins();
    let v = make(&bins.join("vigil")).json();
    let dir = world_writable("nobody");
    let out = dir.join("counts");
    let hook = dir.join("hook");
    // Root-owned, mode 0755: nobody cannot create the termination log here.
    let locked = TempDir::new("nobody-locked");
    let script = format!(
        "'{}' --count 30 --burst 10 && exec '{}' --out '{}' --die-on 15",
        bins.join("orphans").display(),
        bins.join("sigcount").display(),
        out.display()
    );
    let run = v
        .args(["-v", "--termination-log"])
        .arg(locked.join("tlog"))
        .arg("--post-start")
        .arg(format!(
            "'{}' '{}' 0",
            bins.join("marker").display(),
            hook.display()
        ))
        .args(["--", "sh", "-c", &script])
        .spawn();
    wait_ready(&run, &out);
    let vp = run.vigil_pid();
    assert_eq!(
        status_field(vp, "Uid").unwrap().split_whitespace().next(),
        Some(NOBODY),
        "vigil is not running as nobody"
    );
    assert!(
        wait_for_file(&hook, TIMEOUT),
        "the post-start hook did not run"
    );
    assert!(
        wait_until(TIMEOUT, || zombie_descendants(vp).is_empty()),
        "zombies left: {:?}",
        zombie_descendants(vp)
    );
    assert_forwards(&run, &out, libc::SIGUSR1);
    assert_forwards(&run, &out, 40);
    let o = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    no_panic(&o);
    assert_eq!(o.status, Exit::Code(143), "{o}");
    let records = o.records();
    assert_eq!(
        records.exit()["orphans_reaped"],
        30,
        "the 30 orphans were not all reaped (pid1={pid1})\n{o}"
    );
    assert_fields(
        records.one("termination_log_failed"),
        json!({"level": "warning", "error": "Permission denied"}),
        format!("a termination log it cannot write must be a warning\n{o}"),
    );
    assert!(!locked.join("tlog").exists());
}

#[test]
fn pid1_as_nobody() {
    let mut prefix: Vec<String> = ["unshare", "--pid", "--fork", "--mount-proc", "--"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    prefix.extend(setpriv_args());
    as_nobody(|vigil| Vigil::wrapped(&prefix).program(vigil), true);
}

#[test]
fn plain_as_nobody() {
    let mut args = setpriv_args();
    let program = args.remove(0);
    as_nobody(
        |vigil| {
            Vigil::plain()
                .program(which(&program))
                .args(args)
                .arg(vigil)
        },
        false,
    );
}

/// cwd and the termination log in a read-only bind mount (in a private
/// mount namespace): the child runs; the termination log is a warning.
#[test]
fn read_only_cwd_and_termination_log() {
    let ro = TempDir::new("ro");
    let rw = TempDir::new("rw");
    let out = rw.join("counts");
    let r = ro.path().display();
    let script = format!(
        "mount --bind '{r}' '{r}' && mount -o remount,bind,ro '{r}' && cd '{r}' && exec \"$@\""
    );
    let v = pid1_via_sh_with_mounts(&script)
        .args(["-v", "--termination-log", "tlog", "--post-start"])
        .arg(format!(
            "'{}' '{}' 0",
            test_program("marker").display(),
            rw.join("hook").display()
        ));
    let run = start_counter(v, &out);
    let vp = run.vigil_pid();
    assert_eq!(
        std::fs::read_link(format!("/proc/{vp}/cwd"))
            .ok()
            .as_deref(),
        Some(ro.path()),
        "vigil's cwd is not the read-only directory"
    );
    assert!(
        wait_for_file(&rw.join("hook"), TIMEOUT),
        "post-start hook did not run"
    );
    assert_forwards(&run, &out, libc::SIGUSR1);
    let o = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    no_panic(&o);
    assert_eq!(o.status, Exit::Code(143), "{o}");
    assert!(
        o.stderr.contains(
            "vigil: warning: could not write the termination log tlog: Read-only file system"
        ),
        "{o}"
    );
    assert!(!ro.join("tlog").exists());
}
