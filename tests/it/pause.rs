//! Pause mode (`-P`): no command; vigil reaps whatever is reparented to it,
//! sleeps otherwise, and exits 0 at once on a stop signal. As PID 1 of a
//! namespace that another process enters and leaves an orphan in, not as
//! PID 1, and as a podman pod's infra process whose member container
//! leaves orphans in the pod's shared PID namespace.

use crate::common::*;
use serde_json::Value as Json;
use std::process::Command;
use std::time::Duration;

/// vigil's JSON records on stderr.
pub(crate) fn records(stderr: &str) -> Vec<Json> {
    stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Json>(l).ok())
        .collect()
}

pub(crate) fn events<'a>(records: &'a [Json], event: &str) -> Vec<&'a Json> {
    records.iter().filter(|r| r["event"] == event).collect()
}

/// `vigil -P` with json records at `-vv` (each reaped process), once it
/// has said it pauses.
pub(crate) fn pausing(v: Vigil, extra: &[&str]) -> Running {
    let mut args = vec!["-P", "-vv", "--log-format", "json"];
    args.extend(extra);
    let run = v.args(args).spawn();
    assert!(
        run.wait_stderr("\"event\":\"pausing\"", TIMEOUT),
        "{}",
        run.describe()
    );
    run
}

// ---------------------------------------------------------------------------
// As PID 1
// ---------------------------------------------------------------------------

#[test]
pub(crate) fn pid1_reaps_an_orphan_that_enters_its_namespace() {
    let run = pausing(Vigil::pid1(), &[]);
    let v = run.vigil_pid();
    // A process entering vigil's PID namespace from outside (nsenter forks
    // into it) leaves a background child behind: once the shell is gone,
    // the kernel reparents the child to the namespace's PID 1, vigil.
    let out = Command::new("nsenter")
        .args(["-t", &v.to_string(), "-p", "--", "sh", "-c"])
        .arg("sleep 2 </dev/null >/dev/null 2>&1 & echo $!")
        .output()
        .expect("nsenter");
    assert!(out.status.success(), "{out:?}");
    let ns_pid: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    let host = run
        .host_pid(ns_pid)
        .unwrap_or_else(|| panic!("no pid {ns_pid} in vigil's namespace"));
    assert_eq!(
        stat(host).map(|s| s.ppid),
        Some(v),
        "pid {host} was not reparented to vigil"
    );
    // Reaped: gone from /proc, not left a zombie.
    assert!(
        wait_until(TIMEOUT, || gone(host)),
        "the orphan {host} is still there: {:?}\n{}",
        state(host),
        run.describe()
    );
    assert_eq!(zombies_in_pidns(v), Vec::<i32>::new());
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.status, Exit::Code(0), "{out}");
    let records = records(&out.stderr);
    let reaped = events(&records, "reaped");
    assert!(
        reaped.iter().any(|r| r["pid"] == ns_pid),
        "no reaped record for pid {ns_pid}\n{out}"
    );
    let ended = events(&records, "pause_ended");
    assert_eq!(ended.len(), 1, "{out}");
    assert_eq!(ended[0]["orphans_reaped"], 1, "{out}");
    assert_eq!(ended[0]["signal"], "SIGTERM", "{out}");
    assert_eq!(ended[0]["status"], 0, "{out}");
}

#[test]
pub(crate) fn pid1_never_wakes_up_while_idle() {
    let run = pausing(Vigil::pid1(), &[]);
    let v = run.vigil_pid();
    // Settled: asleep, waiting for a signal.
    assert!(
        wait_until(TIMEOUT, || state(v) == Some('S')),
        "{}",
        run.describe()
    );
    let a = ctxt_switches(v).expect("vigil status");
    // The wait is the point: nothing must happen in it.
    std::thread::sleep(Duration::from_secs(3));
    let b = ctxt_switches(v).expect("vigil status");
    assert_eq!(
        a, b,
        "vigil -P woke up while idle: (voluntary, nonvoluntary) went from {a:?} to {b:?} in 3 s"
    );
}

#[test]
pub(crate) fn pid1_exits_0_within_100ms_of_sigterm() {
    let _timing = timing();
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let run = pausing(Vigil::pid1(), &[]);
        let (out, took) = signal_timed(run, signal);
        no_panic(&out);
        assert_eq!(out.status, Exit::Code(0), "{out}");
        note(
            "pid1_exits_0_within_100ms_of_sigterm",
            format!("signal {signal}: ended {} after it", secs(took)),
        );
        assert!(
            took < Duration::from_millis(100),
            "vigil -P took {took:?} to end after signal {signal}\n{out}"
        );
    }
}

#[test]
pub(crate) fn other_signals_change_nothing() {
    let run = pausing(Vigil::pid1(), &[]);
    let v = run.vigil_pid();
    for signal in [
        libc::SIGHUP,
        libc::SIGUSR1,
        libc::SIGQUIT,
        libc::SIGTSTP,
        34,
    ] {
        run.signal(signal);
    }
    // The wait is the point: vigil must still be pausing after it.
    std::thread::sleep(Duration::from_millis(500));
    assert!(alive(v) && state(v) != Some('Z'), "{}", run.describe());
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.status, Exit::Code(0), "{out}");
    let received: Vec<String> = events(&records(&out.stderr), "signal_received")
        .iter()
        .map(|r| r["signal"].as_str().unwrap_or("?").to_string())
        .collect();
    for name in ["SIGHUP", "SIGUSR1", "SIGQUIT", "SIGTSTP"] {
        assert!(received.iter().any(|r| r == name), "{name}: {out}");
    }
}

#[test]
pub(crate) fn stop_signals_add_to_term_and_int() {
    let run = pausing(Vigil::pid1(), &["--stop-signals", "QUIT"]);
    let out = run.stop_and_wait(libc::SIGQUIT, TIMEOUT);
    assert_eq!(out.status, Exit::Code(0), "{out}");
    let run = pausing(Vigil::pid1().env("VIGIL_STOP_SIGNALS", "USR2"), &[]);
    let out = run.stop_and_wait(libc::SIGUSR2, TIMEOUT);
    assert_eq!(out.status, Exit::Code(0), "{out}");
    let run = pausing(Vigil::pid1(), &["--stop-signals", "QUIT"]);
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.status, Exit::Code(0), "{out}");
}

// ---------------------------------------------------------------------------
// Not as PID 1, and what it does not take
// ---------------------------------------------------------------------------

#[test]
pub(crate) fn not_pid1_it_pauses_all_the_same() {
    let run = pausing(Vigil::plain(), &[]);
    let v = run.vigil_pid();
    assert!(
        wait_until(TIMEOUT, || state(v) == Some('S')),
        "{}",
        run.describe()
    );
    // It left the directory it was started in, keeping no mount busy.
    assert_eq!(
        std::fs::read_link(format!("/proc/{v}/cwd")).unwrap(),
        std::path::Path::new("/")
    );
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.status, Exit::Code(0), "{out}");
}

#[test]
pub(crate) fn a_command_or_an_option_for_one_is_a_usage_error() {
    for args in [
        &["-P", "true"][..],
        &["-P", "--", "true"],
        &["-P", "-g"],
        &["-P", "--grace-period", "5s"],
        &["-P", "--pre-stop", "true"],
    ] {
        let out = Vigil::plain().args(args).run();
        let line = usage_error_line(&out, &format!("{args:?}"));
        assert!(line.contains("-P"), "{args:?}: {line}");
    }
}

// ---------------------------------------------------------------------------
// A podman pod's infra process
// ---------------------------------------------------------------------------
