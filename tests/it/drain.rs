//! The drain: after the child exits, whatever is left gets SIGTERM (with
//! SIGCONT), then SIGKILL at `--drain-timeout`; vigil exits the moment
//! nothing is left, at once with `--drain-timeout 0` (as tini), and a stop
//! signal during the drain hurries it. As PID 1 and not.
//!
//! Most children here are `sigrec --fork rec2 --exit-on 10`: it forks a
//! grandchild that records every signal into rec2, and exits 0 on SIGUSR1
//! (which vigil forwards to the child only). The grandchild is then an
//! orphan of vigil's. With `--exit-on 15` it exits after recording SIGTERM
//! (a SIGTERM handler that writes a file); without, it survives SIGTERM.

use crate::common::*;
use std::time::{Duration, Instant};

/// Child exits on SIGUSR1 and leaves an orphan (see the module doc).
fn start_with_orphan(v: Vigil, dir: &TempDir, orphan_exits_on_term: bool) -> Running {
    let mut args = vec!["--fork", "rec2", "--exit-on", "10"];
    if orphan_exits_on_term {
        args.extend(["--exit-on", "15"]);
    }
    // rec2 is relative to the working directory, `dir`.
    start_rec(v, dir, &args).0
}

/// The orphan's pid as the namespace (or vigil's parent, for a plain vigil)
/// sees it: sigrec writes it into its ready file.
fn orphan_pid(dir: &TempDir) -> i32 {
    read_trimmed(&ready_file(&dir.join("rec2")))
        .parse()
        .expect("pid in rec2.ready")
}

/// An orphan with a SIGTERM handler that writes a file gets to write it
/// before vigil exits, and vigil exits as soon as it is gone (long before the
/// drain timeout).
#[test]
fn drain_lets_an_orphan_finish_its_sigterm_handler() {
    let _cpu = timing();
    let dir = TempDir::new("drain");
    let v = Vigil::pid1().json().args(["-v", "--drain-timeout", "10s"]);
    let run = start_with_orphan(v, &dir, true);
    let (out, took) = signal_timed(run, libc::SIGUSR1);
    assert_eq!(out.code(), Some(0), "{out}");
    assert!(
        read_signals(&dir.join("rec2")).contains(&libc::SIGTERM),
        "the orphan's SIGTERM handler did not write its file before vigil exited\n{out}"
    );
    assert!(
        took < ABOUT_1S_MAX,
        "vigil took {took:?} although nothing was left\n{out}"
    );
    let draining = out.records().one("draining").clone();
    assert_eq!(pids_of(&draining["terminated"]).len(), 1, "{out}");
}

/// An orphan that survives SIGTERM is SIGKILLed after `--drain-timeout 1s`,
/// and nothing is left of the namespace.
fn drain_timeout_kills_the_orphan(via: Via) {
    let _cpu = timing();
    let dir = TempDir::new("draintimeout");
    let v = opt(Vigil::pid1().json(), via, "--drain-timeout", "1s");
    let run = start_with_orphan(v, &dir, false);
    let orphan = orphan_pid(&dir);
    let orphan_host = run.host_pid(orphan).expect("the orphan's host pid");
    let (out, took) = signal_timed(run, libc::SIGUSR1);
    assert_eq!(out.code(), Some(0), "{out}");
    assert_between(took, ONE_SECOND, ABOUT_1S_MAX, "vigil", &out);
    assert!(
        read_signals(&dir.join("rec2")).contains(&libc::SIGTERM),
        "the orphan did not get SIGTERM first\n{out}"
    );
    let killed = out.records().one("drain_killed").clone();
    assert_fields(
        &killed,
        json!({"level": "warning", "cause": "drain_timeout", "drain_timeout": 1}),
        &out,
    );
    assert_eq!(pids_of(&killed["killed"]), [i64::from(orphan)], "{out}");
    assert!(
        names_of(&killed["killed"])[0].starts_with("sigrec "),
        "{killed}"
    );
    assert!(
        wait_until(TIMEOUT, || gone(orphan_host)),
        "the orphan (host pid {orphan_host}) is still there\n{out}"
    );
}

#[test]
fn drain_timeout_sigkills_an_orphan_that_ignores_sigterm() {
    drain_timeout_kills_the_orphan(Via::Flag);
}

#[test]
fn drain_timeout_through_vigil_drain_timeout() {
    drain_timeout_kills_the_orphan(Via::Env);
}

/// Not as PID 1 (where the kernel would not clean up after vigil), the
/// drain still leaves no descendant behind.
#[test]
fn drain_as_a_plain_process_leaves_no_descendant() {
    let _cpu = timing();
    let dir = TempDir::new("drainplain");
    let v = Vigil::plain().args(["--drain-timeout", "1s"]);
    let run = start_with_orphan(v, &dir, false);
    let orphan = orphan_pid(&dir);
    let (out, took) = signal_timed(run, libc::SIGUSR1);
    assert_eq!(out.code(), Some(0), "{out}");
    assert_between(took, ONE_SECOND, ABOUT_1S_MAX, "vigil", &out);
    assert!(
        wait_until(TIMEOUT, || !alive(orphan)),
        "the orphan (pid {orphan}) outlived vigil\n{out}"
    );
}

/// `--drain-timeout 0` exits at once, like tini, even when an orphan
/// ignores SIGTERM (as PID 1, the kernel then kills the rest).
#[test]
fn drain_timeout_0_exits_at_once() {
    let _cpu = timing();
    let dir = TempDir::new("drain0");
    let v = Vigil::pid1().args(["--drain-timeout", "0"]);
    let run = start_with_orphan(v, &dir, false);
    let (out, took) = signal_timed(run, libc::SIGUSR1);
    assert_eq!(out.code(), Some(0), "{out}");
    assert!(
        took < ONE_SECOND,
        "vigil took {took:?} with --drain-timeout 0\n{out}"
    );
}

/// With nothing left over, vigil exits at once, not after the default
/// 2 s drain timeout.
#[test]
fn nothing_left_over_exits_without_delay() {
    let _cpu = timing();
    let dir = TempDir::new("drainnothing");
    let (run, _) = start_rec(Vigil::pid1(), &dir, &["--exit-on", "10"]);
    let (out, took) = signal_timed(run, libc::SIGUSR1);
    assert_eq!(out.code(), Some(0), "{out}");
    assert!(
        took < Duration::from_millis(1500),
        "vigil took {took:?} with nothing left (the default drain timeout is 2 s)\n{out}"
    );
}

/// The stop time of `sh -c 'sleep 1000 & wait'` under a `docker stop`-like
/// SIGTERM, with the default drain and with `--drain-timeout 0` (printed).
/// With the drain, the background process ends by SIGTERM, not SIGKILL: the
/// debug log shows `sleep` reaped after SIGTERM, and a trap-ing shell in its
/// place gets to write its file.
#[test]
fn stop_time_of_a_shell_with_a_background_process() {
    let _cpu = timing();
    /// Runs `sh -c SCRIPT` under vigil with `extra` options, waits until a
    /// `sleep` runs in the namespace, sends SIGTERM: output and stop time.
    fn stop(extra: &[&str], script: &str) -> (Output, Duration, TempDir) {
        let dir = TempDir::new("stoptime");
        let run = spawn_sh(Vigil::pid1().json().arg("-vv").args(extra), &dir, script);
        let v = run.vigil_pid();
        assert!(
            wait_until(TIMEOUT, || pidns_members(v)
                .iter()
                .any(|&p| comm(p).as_deref() == Some("sleep"))),
            "no sleep started\n{}",
            run.describe()
        );
        let (out, took) = signal_timed(run, libc::SIGTERM);
        (out, took, dir)
    }
    const PLAIN: &str = "sleep 1000 & wait";
    const TRAPPING: &str =
        "sh -c 'trap \"echo TERM > bg_term; exit 0\" TERM; sleep 1000 & wait' & wait";

    let (drained, t_drain, _d1) = stop(&[], PLAIN);
    let (at_once, t_zero, _d2) = stop(&["--drain-timeout", "0"], PLAIN);
    let (trap_drained, t_trap_drain, d3) = stop(&[], TRAPPING);
    let (trap_at_once, t_trap_zero, d4) = stop(&["--drain-timeout", "0"], TRAPPING);
    eprintln!(
        "stop time of sh -c '{PLAIN}' after SIGTERM: default drain (2s) {t_drain:?}, --drain-timeout 0 {t_zero:?}"
    );
    eprintln!(
        "stop time with a trap-ing background shell: default drain {t_trap_drain:?} \
         (its TERM trap ran: {}), --drain-timeout 0 {t_trap_zero:?} (its TERM trap ran: {})",
        d3.join("bg_term").exists(),
        d4.join("bg_term").exists()
    );
    for out in [&drained, &at_once, &trap_drained, &trap_at_once] {
        assert_eq!(out.code(), Some(143), "{out}");
    }
    for (out, took) in [(&drained, t_drain), (&trap_drained, t_trap_drain)] {
        assert!(
            took < Duration::from_millis(1500),
            "stop took {took:?}, the drain should end at once\n{out}"
        );
    }
    let records = drained.records();
    let reaped = records.all("reaped");
    assert!(
        reaped.iter().any(|r| r["ending"]["signal"] == "SIGTERM"),
        "no sleep reaped after SIGTERM in the drain\n{drained}"
    );
    assert!(
        !records.has("drain_killed")
            && !records.has("grace_deadline")
            && reaped.iter().all(|r| r["ending"]["signal"] != "SIGKILL"),
        "the drain should not need SIGKILL\n{drained}"
    );
    assert_eq!(
        read_trimmed(&d3.join("bg_term")),
        "TERM",
        "the background shell did not get SIGTERM in the drain\n{trap_drained}"
    );
}

/// A stop signal during the drain hurries it: what is left gets SIGKILL at
/// once, rather than at a long drain timeout. As PID 1 and not, with
/// SIGTERM and SIGINT.
#[test]
fn a_stop_signal_during_the_drain_kills_what_is_left() {
    let _cpu = timing();
    for (v, sig) in [
        (Vigil::pid1(), libc::SIGTERM),
        (Vigil::pid1(), libc::SIGINT),
        (Vigil::plain(), libc::SIGTERM),
    ] {
        let dir = TempDir::new("drainstop");
        let v = v.json().args(["-v", "--drain-timeout", "60s"]);
        let run = start_with_orphan(v, &dir, false);
        let orphan = orphan_pid(&dir);
        run.signal(libc::SIGUSR1);
        run.expect_record("draining", TIMEOUT);
        let t0 = Instant::now();
        let is_pid1 = run.is_pid1();
        let orphan_host = if is_pid1 {
            run.host_pid(orphan)
        } else {
            Some(orphan)
        };
        run.signal(sig);
        let (out, took) = wait_timed(run, t0);
        assert_eq!(out.code(), Some(0), "signal {sig}\n{out}");
        assert!(
            took < Duration::from_secs(10),
            "signal {sig}: vigil took {took:?} (drain timeout 60 s)\n{out}"
        );
        let name = if sig == libc::SIGINT {
            "SIGINT"
        } else {
            "SIGTERM"
        };
        assert_fields(
            out.records().one("drain_killed"),
            json!({"cause": "stop_signal", "signal": name}),
            &out,
        );
        if let Some(pid) = orphan_host {
            assert!(
                wait_until(TIMEOUT, || !alive(pid)),
                "the orphan is still there\n{out}"
            );
        }
    }
}

/// A left-over that was stopped (SIGSTOP) when the child exited is
/// continued along with the drain's SIGTERM, so its TERM trap runs.
#[test]
fn a_stopped_leftover_gets_to_clean_up() {
    let _cpu = timing();
    for v in [Vigil::pid1(), Vigil::plain()] {
        let dir = TempDir::new("drainstopped");
        let v = v.args(["--drain-timeout", "20s"]);
        let t0 = Instant::now();
        let run = spawn_sh(
            v,
            &dir,
            "sh -c 'trap \"echo done > cleaned; exit 0\" TERM; : > wready; \
             while :; do sleep 0.1; done' & \
             while [ ! -e wready ]; do sleep 0.05; done; kill -STOP $!; exit 0",
        );
        let (out, took) = wait_timed(run, t0);
        assert_eq!(out.code(), Some(0), "{out}");
        assert!(
            dir.join("cleaned").exists(),
            "the stopped worker's TERM trap never ran\n{out}"
        );
        assert!(
            took < Duration::from_secs(15),
            "vigil took {took:?}: the worker was not continued\n{out}"
        );
    }
}

/// As PID 1, a process that joined the namespace from outside (`docker
/// exec`; here `nsenter`) is no child of vigil's, and its end sends vigil
/// no SIGCHLD, yet it is drained like any other: SIGTERM when the child
/// exits, and vigil waits for it to end rather than leaving it to the
/// kernel's SIGKILL.
#[test]
fn pid1_drains_a_process_started_from_outside() {
    let dir = TempDir::new("execdrain");
    let v = Vigil::pid1().json().args(["-v", "--drain-timeout", "5s"]);
    let run = start_sh(
        v,
        &dir,
        ": > ready; while [ ! -e go ]; do sleep 0.05; done; exit 0",
    );
    let script = format!(
        "trap 'echo TERM > {0}/exec_term; exit 0' TERM; echo $$ > {0}/exec_pid; sleep 1000 & wait",
        dir.path().display()
    );
    let mut exec = std::process::Command::new(which("nsenter"))
        .args([
            "--target",
            &run.vigil_pid().to_string(),
            "--pid",
            "--mount",
            "--",
        ])
        .args(["sh", "-c", &script])
        .spawn()
        .unwrap();
    run.guard().track(exec.id() as i32);
    assert!(
        wait_for_file(&dir.join("exec_pid"), TIMEOUT),
        "{}",
        run.describe()
    );
    let exec_pid: i64 = read_trimmed(&dir.join("exec_pid")).parse().unwrap();
    std::fs::write(dir.join("go"), "").unwrap();
    let out = run.wait(TIMEOUT);
    let _ = exec.wait();
    assert_eq!(out.code(), Some(0), "{out}");
    assert!(
        dir.join("exec_term").exists(),
        "the process started from outside got no SIGTERM\n{out}"
    );
    let records = out.records();
    let terminated = &records.one("draining")["terminated"];
    let exec = terminated
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pid"] == exec_pid)
        .unwrap_or_else(|| panic!("{exec_pid} not drained\n{out}"));
    assert!(
        exec["name"].as_str().unwrap().starts_with("sh -c "),
        "{exec}"
    );
    assert!(!records.has("drain_killed"), "{out}");
}

/// The look for leftovers at the child's exit reads the namespace's own
/// /proc, not `kill(-1, 0)`, which the kernel answers by walking every
/// process of the machine (docs/design.md). strace, attached to vigil,
/// sees each `kill` it makes on the way out.
#[test]
fn the_exit_does_not_walk_the_machines_processes() {
    let test = "the_exit_does_not_walk_the_machines_processes";
    let Some(strace) = need_program(test, "strace", "strace") else {
        return;
    };
    let dir = TempDir::new("exitwalk");
    let trace = dir.join("trace");
    let (run, child) = start_sleep(Vigil::pid1());
    let mut tracer = std::process::Command::new(strace)
        .args(["-e", "trace=kill", "-o"])
        .arg(&trace)
        .args(["-p", &run.vigil_pid().to_string()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut attached = String::new();
    let mut stderr = std::io::BufReader::new(tracer.stderr.take().unwrap());
    std::io::BufRead::read_line(&mut stderr, &mut attached).unwrap();
    assert!(attached.contains("attached"), "strace: {attached}");
    run.signal(libc::SIGTERM);
    let out = run.wait(TIMEOUT);
    let _ = tracer.wait();
    assert_eq!(out.code(), Some(143), "{out}");
    let kills = std::fs::read_to_string(&trace).unwrap();
    assert!(
        kills.contains(&format!("kill({child}, SIGTERM)")),
        "strace saw no forwarded SIGTERM:\n{kills}"
    );
    assert!(!kills.contains("kill(-1"), "{kills}\n{out}");
}
