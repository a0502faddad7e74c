//! vigil as PID 1 of a real Docker engine's containers, end to end: what a
//! user sees through `docker run`, `stop`, `kill`, `exec`, `logs` and
//! `inspect`, in the `FROM scratch` test image of the shared engine harness
//! (tests/it/common/engine.rs: vigil's static release build and Debian's
//! static busybox, built locally, nothing pulled). Several tests run the
//! same command with busybox `sh` as PID 1 beside it, as the control.
//!
//!     cargo test --test it e2e::docker -- --nocapture
//!
//! Every test prints what it measured as `e2e: TEST: ...` lines, past
//! libtest's output capture. When no engine answers (or
//! `VIGIL_E2E_DOCKER=0`, or no static busybox) every test prints `e2e:
//! TEST: SKIPPED: ...` and passes; with `VIGIL_E2E_REQUIRE=1` a skip is a
//! failure instead. The harness's doc lists the other knobs and how a
//! killed run is swept up.

use crate::common::*;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

const DOCKER: Engine = Engine::Docker;

/// The stop timeout given to Docker in the stop-timing tests.
const STOP_TIMEOUT: u64 = 4;
/// "Well within the stop timeout": what a stop under vigil may take at most.
/// Half the timeout leaves room for `docker stop`'s own round trip through
/// the daemon on a busy machine (docs/docker.md has the times), and is far
/// from the whole timeout that a dropped SIGTERM costs.
const FAST: Duration = Duration::from_millis(STOP_TIMEOUT * 1000 / 2);

/// Docker's test image, or None after printing why the test is skipped.
fn harness(test: &str) -> Option<&'static TestImage> {
    TestImage::get(DOCKER, test)
}

/// The same `SHELL -c SCRIPT` in two containers, each with its own
/// options before the image: under vigil, and the control, with the shell
/// itself as PID 1 (`--entrypoint SHELL`).
fn with_and_without_vigil(
    h: &TestImage,
    test: &'static str,
    shell: &str,
    script: &str,
    with_opts: &[&str],
    without_opts: &[&str],
) -> (Ctr, Ctr) {
    let with = h.start(test, with_opts, &[shell, "-c", script]);
    let without = h.start(
        test,
        &[without_opts, &["--entrypoint", shell]].concat(),
        &["-c", script],
    );
    (with, without)
}

/// `docker stop` of two containers at once, each timed on its own thread
/// (so that neither waits for the other's stop); returns both durations.
fn stop_both(a: &Ctr, b: &Ctr) -> (Duration, Duration) {
    thread::scope(|s| {
        let a = s.spawn(|| a.stop());
        let b = s.spawn(|| b.stop());
        (a.join().unwrap(), b.join().unwrap())
    })
}

// ---------------------------------------------------------------------------
// docker stop: the stop signal, hooks and the grace period
// ---------------------------------------------------------------------------

/// `docker stop` of `sh -c 'sleep 1000'`: under vigil it is over at once with
/// 143; with busybox sh as PID 1 the kernel drops the SIGTERM, so Docker waits
/// out the whole stop timeout and SIGKILLs (137).
#[test]
fn docker_stop_is_fast_under_vigil_and_waits_out_the_timeout_without() {
    const T: &str = "docker_stop_timing";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    let timeout = STOP_TIMEOUT.to_string();
    let script = "echo ready; sleep 1000";

    let opts = ["--stop-timeout", &timeout];
    let (with, without) = with_and_without_vigil(h, T, "sh", script, &opts, &opts);
    with.wait_log("ready", Duration::from_secs(20));
    without.wait_log("ready", Duration::from_secs(20));

    let (with_took, without_took) = stop_both(&with, &without);
    let (with_code, without_code) = (with.exit_code(), without.exit_code());
    note(
        T,
        format!(
            "--stop-timeout {STOP_TIMEOUT}: docker stop took {} under vigil (exit {with_code}), {} with busybox sh as PID 1 (exit {without_code})",
            secs(with_took),
            secs(without_took)
        ),
    );
    assert_eq!(
        with_code,
        143,
        "under vigil: exit status; logs:\n{}",
        with.logs()
    );
    assert!(
        with_took < FAST,
        "under vigil docker stop took {}, not well below the {STOP_TIMEOUT}s timeout",
        secs(with_took)
    );
    assert_eq!(without_code, 137, "without vigil: exit status");
    assert!(
        without_took >= Duration::from_millis(STOP_TIMEOUT * 1000 - 200),
        "without vigil docker stop took only {}: was the SIGTERM not dropped?",
        secs(without_took)
    );
    assert!(without_took > with_took + Duration::from_secs(1));
}

/// A shell-form command with a background worker: after the shell dies of
/// SIGTERM, vigil drains the worker with SIGTERM (its trap runs), where busybox
/// sh as PID 1 lets Docker SIGKILL everything at the timeout.
#[test]
fn shell_form_background_process_is_drained_with_sigterm() {
    const T: &str = "shell_form_drain";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    let timeout = STOP_TIMEOUT.to_string();
    // What `CMD worker & sleep 1000` (shell form) turns into: /bin/sh -c "...".
    let script = "worker() { trap 'echo worker: got SIGTERM; exit 0' TERM; echo worker: ready; \
                  while :; do sleep 0.1; done; }; worker & sleep 1000";

    let opts = ["--stop-timeout", &timeout];
    let (with, without) = with_and_without_vigil(h, T, "/bin/sh", script, &opts, &opts);
    with.wait_log("worker: ready", Duration::from_secs(20));
    without.wait_log("worker: ready", Duration::from_secs(20));
    let (with_took, without_took) = stop_both(&with, &without);
    let (with_logs, without_logs) = (with.logs(), without.logs());
    let (with_code, without_code) = (with.exit_code(), without.exit_code());
    let with_trap = with_logs.contains("worker: got SIGTERM");
    let without_trap = without_logs.contains("worker: got SIGTERM");
    note(
        T,
        format!(
            "docker stop: under vigil {} exit {with_code}, worker's TERM trap ran: {with_trap}; \
             busybox sh as PID 1 {} exit {without_code}, worker's TERM trap ran: {without_trap}",
            secs(with_took),
            secs(without_took)
        ),
    );
    assert!(
        with_trap,
        "under vigil the background worker did not get SIGTERM; logs:\n{with_logs}"
    );
    assert_eq!(
        with_code, 143,
        "under vigil: the shell's status; logs:\n{with_logs}"
    );
    assert!(
        with_took < FAST,
        "under vigil stop took {}",
        secs(with_took)
    );
    assert!(
        !without_trap,
        "without vigil the worker was not expected to see SIGTERM"
    );
    assert_eq!(without_code, 137);
}

/// `--pre-stop` and `--grace-period` (set by ENV, as in Dockerfile.example)
/// under `docker stop`: the hook's output is in `docker logs`; a child that
/// ignores SIGTERM is SIGKILLed at vigil's deadline, long before Docker's;
/// the exit report names it.
#[test]
fn pre_stop_hook_and_grace_period_under_docker_stop() {
    const T: &str = "pre_stop_and_grace";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    let docker_timeout = 10;
    let grace = Duration::from_secs(2);
    let ctr = h.start(
        T,
        &[
            "--stop-timeout",
            &docker_timeout.to_string(),
            "-e",
            "VIGIL_PRE_STOP=sh -c \"echo pre-stop: draining after $VIGIL_SIGNAL, child $VIGIL_CHILD_PID\"",
            "-e",
            "VIGIL_GRACE_PERIOD=2s",
            "-e",
            "VIGIL_LOG_FORMAT=json",
        ],
        &["sh", "-c", "trap '' TERM; echo ready; exec sleep 1000"],
    );
    ctr.wait_log("ready", Duration::from_secs(20));
    let took = ctr.stop();
    let code = ctr.exit_code();
    let logs = ctr.logs();
    note(
        T,
        format!(
            "grace period {}, docker stop timeout {docker_timeout}s: docker stop took {}, exit {code}",
            secs(grace),
            secs(took)
        ),
    );
    assert!(
        logs.contains("pre-stop: draining after") && logs.contains("TERM"),
        "the pre-stop hook's output is not in docker logs:\n{logs}"
    );
    assert_eq!(
        code, 137,
        "the child ignoring SIGTERM must end by SIGKILL; logs:\n{logs}"
    );
    assert!(
        took >= grace - Duration::from_millis(100),
        "stopped after {}, before the grace period",
        secs(took)
    );
    assert!(
        took < grace + Duration::from_secs(4),
        "docker stop took {}: vigil's grace deadline did not act before Docker's {docker_timeout}s",
        secs(took)
    );
    let records = Records::of(&logs);
    let exit = records.exit();
    assert_fields(
        exit,
        json!({"status": 137, "ending": {"signal": "SIGKILL", "cause": "grace_deadline"}}),
        &logs,
    );
    assert_eq!(
        names_of(&exit["grace_kills"]),
        ["sleep 1000"],
        "the exit report does not name the survivor killed at the grace deadline"
    );
}

/// `VIGIL_PRE_STOP_SLEEP` delays the stop signal without any `sleep` process.
#[test]
fn pre_stop_sleep_delays_the_stop_signal() {
    const T: &str = "pre_stop_sleep";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    // The app's lines are computed, so that the command in vigil's
    // records does not hold them.
    let ctr = h.start(
        T,
        &[
            "--stop-timeout",
            "8",
            "-e",
            "VIGIL_PRE_STOP_SLEEP=1500ms",
            "-e",
            "VIGIL_LOG_FORMAT=json",
            "-e",
            "VIGIL_VERBOSITY=2",
        ],
        &[
            "sh",
            "-c",
            "trap 'echo app: got $((15)); exit 0' TERM; echo ready $((1)); while :; do sleep 0.1; done",
        ],
    );
    ctr.wait_log("ready 1", Duration::from_secs(20));
    // During the pre-stop sleep, no process but vigil, the app and its
    // short sleeps may exist: vigil needs no `sleep` binary.
    let (took, during) = thread::scope(|s| {
        let stopper = s.spawn(|| ctr.stop());
        ctr.wait_record("pre_stop_sleep", Duration::from_secs(20));
        let during = ctr.exec(&["ps", "-o", "pid,ppid,comm,args"]);
        (stopper.join().unwrap(), during)
    });
    let code = ctr.exit_code();
    let logs = ctr.logs();
    note(
        T,
        format!(
            "pre-stop sleep 1.5s: docker stop took {}, exit {code}",
            secs(took)
        ),
    );
    assert!(
        logs.contains("app: got 15"),
        "the app never got SIGTERM:\n{logs}"
    );
    assert_eq!(code, 0, "the app's trap exits 0; logs:\n{logs}");
    assert!(
        took >= Duration::from_millis(1400),
        "stop took only {}",
        secs(took)
    );
    assert!(
        took < Duration::from_millis(5000),
        "stop took {}",
        secs(took)
    );
    // PID 1's only child during the pre-stop sleep is the app.
    let children_of_vigil = during
        .lines()
        .skip(1)
        .filter(|l| l.split_whitespace().nth(1) == Some("1"))
        .count();
    assert_eq!(
        children_of_vigil, 1,
        "vigil started a process for its pre-stop sleep:\n{during}"
    );
}

// ---------------------------------------------------------------------------
// Signals and their senders
// ---------------------------------------------------------------------------

/// `docker kill -s USR1` and `-s HUP` reach the child's traps.
#[test]
fn docker_kill_usr1_and_hup_reach_the_child() {
    const T: &str = "docker_kill_signals";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    let ctr = h.start(
        T,
        &["--stop-timeout", "5"],
        &[
            "sh",
            "-c",
            "trap 'echo got USR1' USR1; trap 'echo got HUP' HUP; trap 'echo got TERM; exit 0' TERM; \
             echo ready; while :; do sleep 0.1; done",
        ],
    );
    ctr.wait_log("ready", Duration::from_secs(20));
    let started = Instant::now();
    ctr.kill("USR1");
    ctr.wait_log("got USR1", Duration::from_secs(5));
    let usr1 = started.elapsed();
    let started = Instant::now();
    ctr.kill("HUP");
    ctr.wait_log("got HUP", Duration::from_secs(5));
    let hup = started.elapsed();
    let took = ctr.stop();
    let code = ctr.exit_code();
    note(
        T,
        format!(
            "USR1 seen by the child within {}, HUP within {}; docker stop {} exit {code}",
            secs(usr1),
            secs(hup),
            secs(took)
        ),
    );
    assert!(ctr.logs().contains("got TERM"));
    assert_eq!(code, 0);
    assert!(ctr.inspect("{{.State.Running}}") == "false");
}

/// At `-v` (VIGIL_VERBOSITY=2) vigil says who sent each signal: the engine
/// (outside the PID namespace) or a process inside (docker exec ... sh -c
/// 'kill ...').
#[test]
fn signal_senders_are_logged() {
    const T: &str = "signal_senders";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    // The app's lines are computed, so that the command in vigil's
    // records does not hold them.
    let ctr = h.start(
        T,
        &[
            "--stop-timeout",
            "5",
            "-e",
            "VIGIL_VERBOSITY=2",
            "-e",
            "VIGIL_LOG_FORMAT=json",
        ],
        &["sh", "-c", "trap 'echo got $((10))' USR1; trap 'echo got $((12))' USR2; echo ready $((1)); while :; do sleep 0.1; done"],
    );
    ctr.wait_log("ready 1", Duration::from_secs(20));
    ctr.kill("USR1");
    ctr.wait_log("got 10", Duration::from_secs(5));
    // The sender stays alive a moment: vigil names it from /proc after
    // forwarding, and a bare `docker exec ... kill` may be gone by then
    // (vigil then says `name unknown`). And it stays the shell: with
    // `sleep 1` last, busybox's sh execs it in place, and a vigil that
    // reads /proc a moment later, on a loaded machine, finds `sleep 1`.
    ctr.exec(&["sh", "-c", "kill -USR2 1; sleep 1; exit 0"]);
    ctr.wait_log("got 12", Duration::from_secs(5));
    let took = ctr.stop();
    let logs = ctr.logs();
    note(
        T,
        format!("docker stop {} exit {}", secs(took), ctr.exit_code()),
    );
    let records = Records::of(&logs);
    let received = records.all("signal_received");
    let sender = |signal: &str| {
        received
            .iter()
            .find(|r| r["signal"] == signal)
            .map(|r| r["sender"].clone())
            .unwrap_or_else(|| panic!("no {signal} received in:\n{logs}"))
    };
    let outside = json!({"kind": "outside_namespace", "pid": 0, "uid": 0});
    assert_eq!(sender("SIGUSR1"), outside, "{logs}");
    assert_eq!(sender("SIGTERM"), outside, "{logs}");
    let usr2 = sender("SIGUSR2");
    note(T, format!("docker exec sh -c 'kill ...': {usr2}"));
    assert_fields(
        &usr2,
        json!({"kind": "process", "uid": 0, "name": "sh -c kill -USR2 1; sleep 1; exit 0"}),
        "the sender should be named by its command line",
    );
    assert_eq!(ctr.exit_code(), 143);
    assert_eq!(records.exit()["stop"]["sender"], outside, "{logs}");
}

// ---------------------------------------------------------------------------
// Exit status
// ---------------------------------------------------------------------------

/// Exit statuses come back from `docker run`: 0, 3, 127 (not found, with
/// vigil's message), 126 (not executable).
#[test]
fn exit_codes_from_docker_run() {
    const T: &str = "exit_codes";
    let Some(h) = harness(T) else { return };
    for (cmd, want) in [
        (vec!["sh", "-c", "exit 0"], 0),
        (vec!["sh", "-c", "exit 3"], 3),
        (vec!["/nonexistent"], 127),
        (vec!["/tmp"], 126),
    ] {
        let (code, _out, err, took) = h.run_fg(T, &[], &cmd);
        note(
            T,
            format!(
                "docker run ... {} -> {code} in {}",
                cmd.join(" "),
                secs(took)
            ),
        );
        assert_eq!(code, want, "docker run {cmd:?}: stderr:\n{err}");
        if want >= 126 {
            // `vigil: error: cannot run "CMD": ...`
            let what = format!("cannot run \"{}\": ", cmd[0]);
            let found = err
                .lines()
                .any(|l| l.starts_with("vigil: ") && l.contains(&what));
            assert!(
                found,
                "expected a `vigil: ... {what}` line on stderr, got:\n{err}"
            );
        }
    }
}

/// One cause of `--exit-code` through Docker: how to provoke it, vigil's
/// status without `--exit-code` and the exit record's fields that say
/// what happened.
struct CauseRow {
    cause: &'static str,
    /// vigil's status without `--exit-code`.
    default: i32,
    /// The status `--exit-code CAUSE=STATUS` gives it: distinct for each
    /// cause, so that a status given to the wrong cause shows.
    mapped: i32,
    docker: &'static [&'static str],
    vigil: &'static [&'static str],
    cmd: &'static [&'static str],
    /// `docker stop` once the child says `ready`.
    stop: bool,
    record: fn() -> Value,
}

/// A child that says `ready` once the stop signal would reach it.
const READY_SLEEP: &[&str] = &["sh", "-c", "echo ready; exec sleep 1000"];
/// A port nothing listens on in the container.
const CLOSED: &str = "tcp://127.0.0.1:9";

const CAUSES: &[CauseRow] = &[
    CauseRow {
        cause: "stopped",
        default: 143,
        mapped: 0,
        docker: &[],
        vigil: &[],
        cmd: READY_SLEEP,
        stop: true,
        record: || json!({"stop": {"cause": "signal"}, "ending": {"cause": "stop_signal"}}),
    },
    CauseRow {
        cause: "grace",
        default: 137,
        mapped: 11,
        docker: &["--stop-timeout", "10"],
        vigil: &["--grace-period", "1s"],
        cmd: &["sh", "-c", "trap '' TERM; echo ready; exec sleep 1000"],
        stop: true,
        record: || json!({"stop": {"cause": "signal"}, "ending": {"cause": "grace_deadline"}}),
    },
    CauseRow {
        cause: "timeout",
        default: 124,
        mapped: 12,
        docker: &[],
        vigil: &["--timeout", "1s"],
        cmd: &["sleep", "1000"],
        stop: false,
        record: || json!({"stop": {"cause": "timeout"}, "timeout": true}),
    },
    CauseRow {
        cause: "unhealthy",
        default: 69,
        mapped: 13,
        docker: &[],
        vigil: &["--live-when", CLOSED, "--live-failures", "1"],
        cmd: &["sleep", "1000"],
        stop: false,
        record: || json!({"stop": {"cause": "unhealthy", "url": CLOSED, "failures": 1}}),
    },
    CauseRow {
        cause: "not-ready",
        default: 143,
        mapped: 14,
        docker: &[],
        vigil: &["--ready-when", CLOSED, "--ready-timeout", "1s"],
        cmd: &["sleep", "1000"],
        stop: false,
        record: || json!({"stop": {"cause": "not_ready", "timeout": 1}}),
    },
    CauseRow {
        cause: "post-start",
        default: 143,
        mapped: 15,
        docker: &[],
        vigil: &["--post-start", "false"],
        cmd: &["sleep", "1000"],
        stop: false,
        record: || json!({"stop": {"cause": "post_start_failed"}}),
    },
    CauseRow {
        cause: "oom",
        default: 137,
        mapped: 16,
        docker: &["--memory", "32m", "--memory-swap", "32m"],
        vigil: &[],
        // busybox `tail` keeps growing its buffer on /dev/zero (no newline).
        cmd: &["tail", "/dev/zero"],
        stop: false,
        record: || json!({"ending": {"cause": "oom_killer"}}),
    },
];

/// Every cause's `--exit-code CAUSE=STATUS`, all of them on each run.
fn every_rule() -> Vec<String> {
    CAUSES
        .iter()
        .flat_map(|r| {
            [
                "--exit-code".to_string(),
                format!("{}={}", r.cause, r.mapped),
            ]
        })
        .collect()
}

/// Runs one container of vigil (`--entrypoint /vigil`, its options, then
/// `-- CMD`) logging JSON at `-v`, stops it when `stop`, and returns its
/// exit code and exit record.
fn run_cause(
    h: &TestImage,
    docker: &[&str],
    vigil: &[String],
    cmd: &[&str],
    stop: bool,
) -> (i32, Value, String) {
    const T: &str = "exit_status_per_cause";
    let opts = [&JSON_V[..], &["--entrypoint", "/vigil"], docker].concat();
    let mut args: Vec<&str> = vigil.iter().map(String::as_str).collect();
    args.push("--");
    args.extend(cmd);
    let ctr = h.start(T, &opts, &args);
    if stop {
        ctr.wait_log("ready", TIMEOUT);
        ctr.stop();
    }
    let code = ctr.wait();
    let logs = ctr.logs();
    let exit = Records::of(&logs).exit().clone();
    (code, exit, logs)
}

/// Each cause of docs/health.md's table, through Docker, with vigil's
/// default status and with `--exit-code` giving every cause a status of
/// its own: the container's exit code, the record's `status` and
/// `status_cause`, and the report's words (`exit status N
/// (--exit-code CAUSE=N)`). A child that exits 3 on the stop signal keeps
/// its 3 even with `--exit-code stopped=0`. The runs go side by side.
#[test]
fn exit_status_per_cause_through_docker() {
    const T: &str = "exit_status_per_cause";
    let Some(h) = harness(T) else { return };
    let oom = DOCKER.ok(&["info", "--format", "{{.MemoryLimit}}"]).trim() == "true";
    if !oom {
        // The other causes still run; CI's engine enforces memory limits.
        skip(
            T,
            "the oom row: this engine does not enforce memory limits (docker info: MemoryLimit false)",
        );
    }
    let rules = &every_rule();
    let rows: Vec<&CauseRow> = CAUSES.iter().filter(|r| oom || r.cause != "oom").collect();
    thread::scope(|s| {
        let mut runs = Vec::new();
        for row in &rows {
            for mapped in [false, true] {
                runs.push((
                    *row,
                    mapped,
                    s.spawn(move || {
                        let vigil: Vec<String> = row
                            .vigil
                            .iter()
                            .map(|a| a.to_string())
                            .chain(if mapped { rules.clone() } else { Vec::new() })
                            .collect();
                        run_cause(h, row.docker, &vigil, row.cmd, row.stop)
                    }),
                ));
            }
        }
        let own = s.spawn(move || {
            let vigil = rules.clone();
            let cmd = [
                "sh",
                "-c",
                "trap 'exit 3' TERM; echo ready; sleep 1000 & wait",
            ];
            run_cause(h, &[], &vigil, &cmd, true)
        });
        for (row, mapped, run) in runs {
            let (code, exit, logs) = run.join().unwrap();
            let cause = row.cause;
            let msg = exit["msg"].as_str().unwrap_or_default();
            note(T, format!("{cause}, mapped {mapped}: exit {code}: {msg}"));
            let want = if mapped { row.mapped } else { row.default };
            assert_eq!(code, want, "{cause} (mapped: {mapped}):\n{logs}");
            assert_eq!(exit["status"], want, "{cause}: {exit}");
            assert_fields(&exit, (row.record)(), &logs);
            if mapped {
                assert_eq!(exit["status_cause"], cause, "{exit}");
                let words = format!("; exit status {want} (--exit-code {cause}={want}); ");
                assert!(msg.contains(&words), "{cause}: {words:?} not in {msg}");
            } else {
                assert!(exit.get("status_cause").is_none(), "{cause}: {exit}");
                let words = format!("; exit status {want}; ");
                assert!(msg.contains(&words), "{cause}: {words:?} not in {msg}");
            }
        }
        let (code, exit, logs) = own.join().unwrap();
        note(T, format!("a child's own 3 under every rule: exit {code}"));
        assert_eq!(code, 3, "{logs}");
        assert_fields(
            &exit,
            json!({"status": 3, "ending": {"kind": "exited", "code": 3}, "stop": {"cause": "signal"}}),
            &logs,
        );
        assert!(exit.get("status_cause").is_none(), "{exit}");
        let msg = exit["msg"].as_str().unwrap_or_default();
        assert!(msg.contains("; exit status 3; "), "{msg}");
    });
}

/// `docker run --pids-limit 1`: vigil is the one process allowed, its fork
/// of the child fails, and it says so: "could not start", exit 1, as tini,
/// dumb-init and catatonit exit 1 (not 126: the program is fine).
#[test]
fn pids_limit_1_is_a_fork_failure_not_an_exec_failure() {
    const T: &str = "pids_limit";
    let Some(h) = harness(T) else { return };
    let (code, _out, err, _took) = h.run_fg(T, &["--pids-limit", "1"], &["sh", "-c", "echo hi"]);
    note(T, format!("exit {code}; {}", err.trim()));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("vigil: error: could not start \"sh\": ")
            && err.contains("the container's process limit"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// Reaping
// ---------------------------------------------------------------------------

/// A child that leaves 1000 orphans behind: vigil reaps them all. With
/// `sleep` as PID 1 (the control) they stay zombies.
#[test]
fn thousand_orphans_leave_no_zombies() {
    const T: &str = "orphans";
    let Some(h) = harness(T) else { return };
    let _cpu = heavy();
    // Each `(sleep 3 &)` leaves an orphan: the subshell exits at once, and
    // its `sleep` is re-parented to PID 1, where it exits 3 s later: after
    // the loop has made them all, so that in the control they die after
    // `exec sleep` has replaced the reaping shell.
    // The line is computed, so that the command in vigil's records does
    // not hold it.
    let script = "i=0; while [ $i -lt 1000 ]; do (sleep 3 &); i=$((i+1)); done; echo spawned $i; exec sleep 1000";
    let (with, without) = with_and_without_vigil(
        h,
        T,
        "sh",
        script,
        &[
            "--stop-timeout",
            "5",
            "-e",
            "VIGIL_VERBOSITY=2",
            "-e",
            "VIGIL_LOG_FORMAT=json",
        ],
        &[],
    );
    with.wait_log("spawned 1000", Duration::from_secs(60));
    without.wait_log("spawned 1000", Duration::from_secs(60));

    // Wait until the orphans are gone under vigil (3 s sleeps + slack).
    let started = Instant::now();
    let (total, zombies) = with.processes_until(
        Duration::from_secs(20),
        Duration::from_millis(250),
        |total, zombies| total <= 2 && zombies == 0,
    );
    // Wait until the control's orphans have exited too: all that is left
    // alive there is `sleep` as PID 1.
    let (ctl_total, ctl_zombies) = without.processes_until(
        Duration::from_secs(20),
        Duration::from_millis(250),
        |total, zombies| total - zombies <= 1,
    );
    note(
        T,
        format!(
            "1000 orphans: under vigil, {} after they were spawned: {total} processes, {zombies} zombies; \
             with sleep as PID 1: {ctl_total} processes, {ctl_zombies} zombies",
            secs(started.elapsed())
        ),
    );
    assert_eq!(
        zombies,
        0,
        "zombies under vigil:\n{}",
        with.exec(&["ps", "-o", "pid,ppid,stat,comm"])
    );
    assert_eq!(
        total,
        2,
        "expected only vigil and sleep:\n{}",
        with.exec(&["ps", "-o", "pid,ppid,stat,comm"])
    );
    assert!(
        ctl_zombies >= 500,
        "the control should show zombies (the check would be blind otherwise): {ctl_zombies}"
    );

    let took = with.stop();
    let logs = with.logs();
    note(
        T,
        format!(
            "docker stop after the orphans: {}, exit {}",
            secs(took),
            with.exit_code()
        ),
    );
    let records = Records::of(&logs);
    let exit = records.exit();
    assert!(
        exit["orphans_reaped"].as_u64().unwrap() >= 1000,
        "the exit report should count 1000 orphans reaped: {exit}"
    );
}

// ---------------------------------------------------------------------------
// The exit report: shown, never lost, naming the right cause
// ---------------------------------------------------------------------------

/// `docker stop` of a child that ignores SIGTERM and keeps stderr
/// full (`yes >&2`), with a 1 s grace period. Both final lines, the grace
/// warning and the report, reach `docker logs`, every time (three runs).
/// A line may follow the app's last, cut-off line, but is itself whole.
#[test]
fn busy_stderr_keeps_the_final_lines() {
    const T: &str = "busy_stderr";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    for round in 1..=3 {
        let ctr = h.start(
            T,
            &[
                "--stop-timeout",
                "10",
                "--log-opt",
                "max-size=4m",
                "--log-opt",
                "max-file=2",
                "-e",
                "VIGIL_GRACE_PERIOD=1s",
                "-e",
                "VIGIL_LOG_FORMAT=json",
            ],
            &["sh", "-c", "trap '' TERM; yes 0123456789 >&2"],
        );
        // The flood is on.
        ctr.wait_log("0123456789\n", Duration::from_secs(20));
        let took = ctr.stop();
        let code = ctr.exit_code();
        // Not just the last few lines: `yes` may still be inside the
        // `write` it started before its SIGKILL, and the kernel lets that
        // write go on copying while the pipe has room (it only looks at
        // the pending signal when the pipe is full), so up to one stdio
        // buffer of these lines can land between the two vigil lines (how
        // many: docs/benchmarks.md), more than a short tail holds.
        let logs = ctr.logs_tail(2000);
        let lines: Vec<&str> = logs.lines().collect();
        // A record that is not whole fails to parse, and fails the test.
        let at = |event: &str| {
            lines.iter().position(|l| {
                vigil_record(l)
                    .unwrap_or_else(|e| panic!("round {round}: {e}"))
                    .is_some_and(|r| r["event"] == event)
            })
        };
        let (grace, report) = (at("grace_deadline"), at("exit"));
        let between = match (grace, report) {
            (Some(g), Some(r)) => r.checked_sub(g + 1),
            _ => None,
        };
        let records = Records::of(&logs);
        note(
            T,
            format!(
                "round {round}: docker stop {} exit {code}; grace warning: {}; app lines between it and the report: {between:?}; report: {}",
                secs(took),
                grace.is_some(),
                records
                    .all("exit")
                    .first()
                    .map_or("none".to_string(), |r| r["msg"].to_string())
            ),
        );
        let tail = lines[lines.len().saturating_sub(30)..].join("\n");
        assert_eq!(code, 137, "round {round}; logs:\n{tail}");
        assert!(
            grace.is_some(),
            "round {round}: no grace warning in the last 2000 lines; they end:\n{tail}"
        );
        assert!(
            report.is_some(),
            "round {round}: no exit report in:\n{tail}"
        );
        assert!(
            between.is_some(),
            "round {round}: the grace warning comes after the report:\n{tail}"
        );
        assert_fields(
            records.exit(),
            json!({"status": 137, "ending": {"signal": "SIGKILL", "cause": "grace_deadline"}, "orphans_reaped": 0}),
            format!("round {round}"),
        );
    }
}

/// After `docker stop`, the report is in `docker logs` at the
/// default verbosity (no warning: the container did what it was asked),
/// and says who sent the SIGTERM behind the 143.
#[test]
fn report_after_docker_stop_by_default() {
    const T: &str = "report_after_stop";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    let ctr = h.start(
        T,
        &["--stop-timeout", "5"],
        &["sh", "-c", "echo ready; sleep 1000"],
    );
    ctr.wait_log("ready", Duration::from_secs(20));
    ctr.stop();
    let logs = ctr.logs();
    let report = must_report(T, &logs);
    assert_eq!(ctr.exit_code(), 143, "{logs}");
    assert!(
        report.starts_with("vigil: exit report: child was killed by SIGTERM (status 143); exit status 143; command: sh -c 'echo ready; sleep 1000' (pid ")
            && report.contains("; stop: SIGTERM from pid 0 (outside this PID namespace) (sent SIGTERM), child ended "),
        "{report}"
    );
}

/// `docker kill -s USR1` kills a child with no USR1 handler: the
/// report says vigil forwarded it from outside the container.
#[test]
fn docker_kill_usr1_death_is_attributed() {
    const T: &str = "kill_usr1_death";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    // The shell (or the sleep that replaced it) dies of USR1 either way.
    let ctr = h.start(T, &[], &["sh", "-c", "echo ready; exec sleep 1000"]);
    ctr.wait_log("ready", Duration::from_secs(20));
    ctr.kill("USR1");
    let code = ctr.wait();
    let logs = ctr.logs();
    let report = must_report(T, &logs);
    assert_eq!(code, 138, "{logs}");
    assert!(
        report.starts_with("vigil: warning: exit report: child was killed by SIGUSR1 (status 138), forwarded by vigil: SIGUSR1 from pid 0 (outside this PID namespace); exit status 138; command: sh -c 'echo ready; exec sleep 1000' (pid "),
        "{report}"
    );
}

/// Two vigils in one log: the image's vigil run with `--init` and vigil as
/// the engine's init. The inner one (whose parent is the engine's
/// `docker-init`) writes `vigil[PID]:`; PID 1 writes `vigil:`.
#[test]
fn two_vigils_in_one_log() {
    const T: &str = "two_vigils";
    let Some(h) = harness(T) else { return };
    let mount = format!("{}:/sbin/docker-init:ro", h.vigil.display());
    let (code, _out, err, _) = h.run_fg(T, &["--init", "-v", &mount], &["sh", "-c", "exit 3"]);
    note(T, format!("exit {code}; stderr: {err:?}"));
    assert_eq!(code, 3, "{err}");
    let lines: Vec<&str> = err.lines().collect();
    if !lines.iter().any(|l| l.starts_with("vigil: ")) {
        return skip(T, "this engine mounted its own init over the bind mount");
    }
    assert_eq!(lines.len(), 2, "{err}");
    // The inner vigil's pid is the outer one's child's.
    let inner = lines[1]
        .split_once("command: /vigil -- sh -c 'exit 3' (pid ")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(pid, _)| pid)
        .unwrap_or_else(|| panic!("PID 1's report does not name the inner vigil: {err}"));
    assert!(
        lines[0].starts_with(&format!("vigil[{inner}]: warning: exit report: child exited with code 3; exit status 3; command: sh -c 'exit 3' (pid ")),
        "{err}"
    );
    assert!(
        lines[1]
            .starts_with("vigil: warning: exit report: child exited with code 3; exit status 3; "),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// Log floods and the engine's cut-off
// ---------------------------------------------------------------------------

/// An app flooding its output when `docker stop` comes: after the container
/// exits, dockerd waits at most 2 s for its log copiers, then drops what is
/// still in the pipes: the last lines, vigil's report among them. vigil
/// waits, at exit, for its pipes to be read empty, so the report reaches
/// `docker logs` every time: with both streams flooding, with stdout alone
/// (vigil's own stderr quiet), and with a grace-deadline SIGKILL.
#[test]
fn the_report_outlasts_the_engines_log_cut_off_under_a_flood() {
    const T: &str = "log_flood";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    let cases: [(&str, &str, &[&str]); 3] = [
        (
            "both streams",
            "yes 0123456789 & exec yes 9876543210 >&2",
            &[],
        ),
        ("stdout alone", "exec yes 0123456789", &[]),
        (
            "grace SIGKILL",
            "trap '' TERM; yes 0123456789 & yes 9876543210 >&2",
            &["-e", "VIGIL_GRACE_PERIOD=1s"],
        ),
    ];
    const ROUNDS: usize = 3;
    for (case, script, opts) in cases {
        let mut reached = 0;
        for round in 1..=ROUNDS {
            let mut all_opts = vec!["--stop-timeout", "10"];
            all_opts.extend_from_slice(opts);
            let ctr = h.start(T, &all_opts, &["sh", "-c", script]);
            // The flood is on.
            ctr.wait_log("0123456789\n", Duration::from_secs(20));
            let took = ctr.stop();
            // The whole log: the engine copies the two streams on its own,
            // so much of the app's stdout can follow vigil's last stderr line.
            let logs = ctr.logs();
            let lines: Vec<&str> = logs.lines().collect();
            let found = lines.iter().rev().enumerate().find_map(|(from_end, l)| {
                l.split_once("exit report: ")
                    .map(|(_, r)| (from_end, r.to_string()))
            });
            note(
                T,
                format!(
                    "{case}, round {round}: docker stop {}; report in docker logs: {}",
                    secs(took),
                    found
                        .as_ref()
                        .map_or("MISSING".to_string(), |(n, r)| format!(
                            "{n} lines from the end: {r}"
                        ))
                ),
            );
            let report = found.map(|(_, r)| r);
            reached += usize::from(report.is_some());
        }
        note(
            T,
            format!("{case}: the report reached docker logs in {reached} of {ROUNDS} runs"),
        );
        assert_eq!(reached, ROUNDS, "{case}: the report was lost");
    }
}

// ---------------------------------------------------------------------------
// OOM kills
// ---------------------------------------------------------------------------

/// `docker run --memory 32m` with a child that allocates past it: vigil's
/// report blames the OOM killer, and the engine or the kernel agrees.
///
/// Docker's `OOMKilled` flag is the first witness, but it can miss a kill
/// (exit 137 with `OOMKilled=false`) when the engine hears of the exit
/// before the OOM event. So when the flag stays false, the kernel's own `oom-kill:` line, which
/// names the container's memory cgroup, is the witness instead.
#[test]
fn oom_kill_is_reported() {
    const T: &str = "oom";
    let Some(h) = harness(T) else { return };
    if DOCKER.ok(&["info", "--format", "{{.MemoryLimit}}"]).trim() != "true" {
        return skip(
            T,
            "this engine does not enforce memory limits (docker info: MemoryLimit false)",
        );
    }
    // busybox `tail` keeps growing its buffer on /dev/zero (no newline).
    let ctr = h.start(
        T,
        &["--memory", "32m", "--memory-swap", "32m"],
        &["sh", "-c", "echo ready; exec tail /dev/zero"],
    );
    let started = Instant::now();
    let code = ctr.wait();
    let took = started.elapsed();
    let logs = ctr.logs();
    assert_eq!(code, 137, "logs:\n{logs}");
    let report = must_report(T, &logs);
    assert!(
        report.contains("by the kernel OOM killer"),
        "the exit report does not blame the OOM killer: {report}"
    );
    let flag_set = wait_until_every(Duration::from_secs(5), Duration::from_millis(100), || {
        ctr.inspect("{{.State.OOMKilled}}") == "true"
    });
    let witness = if flag_set {
        "docker inspect OOMKilled=true".to_string()
    } else {
        let id = ctr.inspect("{{.Id}}");
        let line = kernel_oom_kill(&id, "tail").unwrap_or_else(|| {
            panic!("neither Docker (OOMKilled=false) nor the kernel log saw an OOM kill in {id}; logs:\n{logs}")
        });
        format!("docker inspect OOMKilled=false after 5 s; the kernel log: oom-kill:{line}")
    };
    note(
        T,
        format!("--memory 32m: exit {code} after {}; {witness}", secs(took)),
    );
}

/// The kernel log's `oom-kill:` line for a kill of `task` in the memory
/// cgroup of the container `id` (its path holds the full ID, under either
/// cgroup driver), or None when there is none or the log cannot be read.
fn kernel_oom_kill(id: &str, task: &str) -> Option<String> {
    let out = Command::new("dmesg").output().ok()?;
    let log = String::from_utf8_lossy(&out.stdout);
    let task = format!(",task={task},");
    log.lines()
        .filter_map(|l| l.split_once("oom-kill:").map(|(_, rest)| rest))
        .find(|l| l.contains(id) && l.contains(&task))
        .map(|l| l.split(",pid=").next().unwrap_or(l).to_string())
}

/// `--memory 32m`, a grandchild (`dd` with a 200 MB buffer) is
/// OOM-killed, the shell exits 0: the report names the OOM kill (a
/// warning) where Docker says `OOMKilled`.
#[test]
fn grandchild_oom_kill_is_reported() {
    const T: &str = "grandchild_oom";
    let Some(h) = harness(T) else { return };
    if DOCKER.ok(&["info", "--format", "{{.MemoryLimit}}"]).trim() != "true" {
        return skip(T, "this engine does not enforce memory limits");
    }
    let (code, out, err, took) = h.run_fg(
        T,
        &["--memory", "32m", "--memory-swap", "32m"],
        &[
            "sh",
            "-c",
            "dd if=/dev/zero of=/dev/null bs=200M count=1; echo dd rc=$?",
        ],
    );
    let report = must_report(T, &err);
    note(T, format!("exit {code} in {}; {}", secs(took), out.trim()));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("dd rc=137"), "dd was not killed: {out}{err}");
    assert!(
        report.starts_with("vigil: warning: exit report: child exited with code 0; exit status 0; ")
            && report.contains("; earlier, the kernel OOM killer killed 1 process in this container (not the child: a process it started, or a hook)"),
        "{report}"
    );
}

// ---------------------------------------------------------------------------
// The termination log
// ---------------------------------------------------------------------------

/// Kubernetes mounts a file at /dev/termination-log; vigil writes its exit
/// report there by default when the file exists.
#[test]
fn termination_log_gets_the_exit_report() {
    const T: &str = "termination_log";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    let dir = std::env::temp_dir().join(format!("{LABEL}-{}-termlog", run_id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("termination-log");
    fs::write(&file, "").unwrap();
    let mount = format!("{}:/dev/termination-log", file.display());
    let ctr = h.start(
        T,
        &["--stop-timeout", "5", "-v", &mount],
        &["sh", "-c", "echo ready; sleep 1000"],
    );
    ctr.wait_log("ready", Duration::from_secs(20));
    let took = ctr.stop();
    let code = ctr.exit_code();
    let report = fs::read_to_string(&file).unwrap_or_default();
    let _ = fs::remove_dir_all(&dir);
    note(
        T,
        format!(
            "docker stop {} exit {code}; termination log: {:?}",
            secs(took),
            report.trim()
        ),
    );
    assert_eq!(code, 143);
    assert!(
        !report.trim().is_empty(),
        "nothing written to /dev/termination-log"
    );
    assert!(
        report.len() <= 4096,
        "termination message too long: {} bytes",
        report.len()
    );
    assert!(
        report.contains("143") && report.contains("SIGTERM"),
        "{report}"
    );
}

/// `docker kill -s KILL` (the kubelet at the end of the grace period)
/// leaves vigil no time to report: the termination log, a file mounted
/// from the host as Kubernetes mounts it, holds the provisional message
/// vigil wrote at start, which names a SIGKILL from outside. Written in
/// place: a bind-mounted file cannot be replaced by a rename.
#[test]
fn docker_kill_leaves_the_provisional_termination_message() {
    const T: &str = "provisional";
    let Some(h) = harness(T) else { return };
    let dir = std::env::temp_dir().join(format!("{LABEL}-{}-provisional", run_id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("termination-log");
    fs::write(&file, "").unwrap();
    let mount = format!("{}:/dev/termination-log", file.display());
    let ctr = h.start(T, &["-v", &mount], &["sh", "-c", "echo ready; sleep 1000"]);
    ctr.wait_log("ready", Duration::from_secs(20));
    // Written right after the child starts, which may be after its line.
    let written = wait_until(TIMEOUT, || {
        fs::read_to_string(&file).is_ok_and(|t| !t.is_empty())
    });
    assert!(written, "no provisional message in the termination log");
    let before = fs::read_to_string(&file).unwrap_or_default();
    ctr.kill("KILL");
    assert_eq!(ctr.wait(), 137, "{}", ctr.logs());
    let after = fs::read_to_string(&file).unwrap_or_default();
    let _ = fs::remove_dir_all(&dir);
    note(
        T,
        format!("docker kill -s KILL: termination log: {:?}", after.trim()),
    );
    assert_eq!(before, after, "vigil wrote nothing after the SIGKILL");
    assert!(
        after.starts_with("vigil ended without its exit report: most likely vigil was killed by SIGKILL from outside (docker kill, the kubelet after the grace period, or the kernel); command: sh -c 'echo ready; sleep 1000' (pid "),
        "{after:?}"
    );
}

/// A 5,000-byte command line, the report in a bind-mounted
/// termination log: the file starts with the ending and the status.
#[test]
fn long_command_line_in_the_termination_log() {
    const T: &str = "long_command_termlog";
    let Some(h) = harness(T) else { return };
    let dir = std::env::temp_dir().join(format!("{LABEL}-{}-longcmd", run_id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("termination-log");
    fs::write(&file, "").unwrap();
    let mount = format!("{}:/dev/termination-log", file.display());
    let long = "x".repeat(5000);
    let (code, _out, err, _) = h.run_fg(T, &["-v", &mount], &["sh", "-c", "exit 3", "sh", &long]);
    let message = fs::read_to_string(&file).unwrap_or_default();
    let _ = fs::remove_dir_all(&dir);
    note(
        T,
        format!(
            "exit {code}; termination message ({} bytes): {message:?}",
            message.len()
        ),
    );
    assert_eq!(code, 3, "{err}");
    assert!(message.len() <= 4096, "{} bytes", message.len());
    assert!(
        message
            .starts_with("child exited with code 3; exit status 3; command: sh -c 'exit 3' sh xxx"),
        "{message}"
    );
    assert!(message.ends_with("); orphans reaped: 0\n"), "{message}");
    let report = must_report(T, &err);
    assert!(report.len() < 4096, "a {}-byte report line", report.len());
}

/// docs/kubernetes.md and docs/docker.md: a bind-mounted termination log
/// must exist and be writable by the container's user. A root-owned 0644
/// file and `--user 1000`: vigil says it cannot write it, and the status is
/// still the child's.
#[test]
fn termination_log_not_writable_by_the_user_is_a_warning() {
    const T: &str = "termlog_not_writable";
    let Some(h) = harness(T) else { return };
    let dir = std::env::temp_dir().join(format!("{LABEL}-{}-rotermlog", run_id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("termination-log");
    fs::write(&file, "").unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
    let mount = format!("{}:/dev/termination-log", file.display());
    let (code, _out, err, _) = h.run_fg(
        T,
        &["--user", "1000:1000", "-v", &mount],
        &["sh", "-c", "exit 3"],
    );
    let message = fs::read_to_string(&file).unwrap_or_default();
    let _ = fs::remove_dir_all(&dir);
    note(T, format!("exit {code}; stderr: {err:?}"));
    assert_eq!(code, 3, "{err}");
    assert_eq!(message, "", "{err}");
    assert!(
        err.contains("vigil: warning: could not write the termination log /dev/termination-log: Permission denied"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// A terminal
// ---------------------------------------------------------------------------

/// With a terminal (`docker run -t`), the child's group is the terminal's
/// foreground group, and its exit status comes back.
#[test]
fn tty_container_gets_the_foreground() {
    const T: &str = "tty";
    let Some(h) = harness(T) else { return };
    let script = "read -r pid comm state ppid pgrp sid tty tpgid rest < /proc/$$/stat; \
                  if [ \"$pgrp\" = \"$tpgid\" ]; then echo foreground; else echo background pgrp=$pgrp tpgid=$tpgid; fi; exit 4";
    let (code, out, err, took) = h.run_fg(T, &["-t"], &["sh", "-c", script]);
    note(
        T,
        format!(
            "docker run -t: exit {code} in {}, child says {:?}",
            secs(took),
            out.trim()
        ),
    );
    assert_eq!(code, 4, "stdout: {out}\nstderr: {err}");
    assert!(out.contains("foreground"), "stdout: {out}\nstderr: {err}");
}

/// `docker run -it` with the docker client on a pseudo-terminal of its own,
/// as a user's terminal: keys typed into it, what it shows collected.
struct RunIt {
    client: std::process::Child,
    master: fs::File,
    shown: std::sync::Arc<std::sync::Mutex<String>>,
    reader: Option<thread::JoinHandle<()>>,
    _guard: Ctr,
}

impl RunIt {
    fn start(h: &TestImage, test: &'static str, cmd: &[&str]) -> RunIt {
        Self::start_with(h, test, &[], cmd)
    }

    /// `start`, with these options of `docker run` too.
    fn start_with(h: &TestImage, test: &'static str, opts: &[&str], cmd: &[&str]) -> RunIt {
        let pty = nix::pty::openpty(None, None).expect("openpty");
        let guard = Ctr::new(DOCKER, test);
        let opts = [&["-it"][..], opts].concat();
        let args = guard.run_args("--rm", &opts, &h.image, cmd);
        let slave = |pty: &nix::pty::OpenptyResult| Stdio::from(pty.slave.try_clone().unwrap());
        let client = Command::new(DOCKER.name())
            .args(&args)
            .stdin(slave(&pty))
            .stdout(slave(&pty))
            .stderr(slave(&pty))
            .spawn()
            .expect("docker run -it");
        drop(pty.slave);
        let master = fs::File::from(pty.master);
        let mut reader = master.try_clone().unwrap();
        let shown = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = shown.clone();
        let reader = thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // EIO once the client has closed the terminal.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().push_str(&text(&buf[..n]));
            }
        });
        let run = RunIt {
            client,
            master,
            shown,
            reader: Some(reader),
            _guard: guard,
        };
        let running = wait_until_every(TIMEOUT, Duration::from_millis(100), || {
            run._guard.inspect("{{.State.Running}}") == "true"
        });
        assert!(running, "the container did not start");
        run
    }

    /// Types these bytes.
    fn send(&mut self, keys: &[u8]) {
        self.master.write_all(keys).unwrap();
    }

    fn shown(&self) -> String {
        self.shown.lock().unwrap().clone()
    }

    /// The client's exit status once the container is over, and everything
    /// the terminal showed.
    fn finish(mut self, what: &str) -> (Option<i32>, String) {
        let mut status = None;
        wait_until(TIMEOUT, || {
            status = self.client.try_wait().unwrap();
            status.is_some()
        });
        let Some(status) = status else {
            let _ = self.client.kill();
            panic!("docker run -it did not end after {what}");
        };
        // The reader ends once the client, the terminal's last user, is gone.
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        (status.code(), self.shown())
    }
}

/// Ctrl-C in `docker run -it` (the docker client on a terminal of
/// its own, here a pseudo-terminal). The child holds the container's
/// terminal, dies of SIGINT (130), and vigil says nothing, as tini,
/// dumb-init, catatonit and a shell say nothing.
#[test]
fn ctrl_c_in_docker_run_it_is_quiet() {
    const T: &str = "ctrl_c_it";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    let mut run = RunIt::start(h, T, &["sleep", "1000"]);
    // The child runs, and holds the container's terminal.
    let vigil = run._guard.host_pid();
    let holds = wait_until(TIMEOUT, || {
        children(vigil).iter().any(|&c| {
            comm(c).as_deref() == Some("sleep") && stat(c).is_some_and(|s| s.tpgid == s.pgrp)
        })
    });
    assert!(
        holds,
        "the child never held the terminal: {:?}",
        run.shown()
    );
    run.send(b"\x03");
    let (code, shown) = run.finish("Ctrl-C");
    note(T, format!("exit {code:?}; terminal shows {shown:?}"));
    assert_eq!(code, Some(130), "{shown}");
    assert!(!shown.contains("exit report"), "{shown}");
    assert!(!shown.contains("vigil"), "{shown}");
}

/// Ctrl-Z in `docker run -it`: there is no job-control shell above PID 1
/// to `fg` the child, so vigil continues it at once (the ticks go on), and
/// Ctrl-C then ends the container with 130, as under catatonit and
/// dumb-init. (Under tini the container froze.)
#[test]
fn ctrl_z_in_docker_run_it_cannot_freeze_the_container() {
    const T: &str = "ctrl_z_it";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    let mut run = RunIt::start_with(
        h,
        T,
        &["-e", "VIGIL_LOG_FORMAT=json", "-e", "VIGIL_VERBOSITY=2"],
        &["sh", "-c", "while :; do echo tick; sleep 0.2; done"],
    );
    let ticks = |run: &RunIt| run.shown().matches("tick").count();
    assert!(wait_until(TIMEOUT, || ticks(&run) >= 3), "no ticks");
    run.send(b"\x1a");
    // vigil saw the child stop and continued it.
    let continued = wait_until(TIMEOUT, || {
        Records::of(&run.shown())
            .all("child_stopped")
            .iter()
            .any(|r| r["action"] == "continue")
    });
    assert!(
        continued,
        "vigil never continued its child: {:?}",
        run.shown()
    );
    let before = ticks(&run);
    let ticking = wait_until(TIMEOUT, || ticks(&run) > before + 1);
    run.send(b"\x03");
    let (code, _) = run.finish("Ctrl-Z and Ctrl-C");
    note(
        T,
        format!("ticks go on after Ctrl-Z: {ticking}; exit {code:?}"),
    );
    assert!(ticking, "Ctrl-Z froze the container");
    assert_eq!(code, Some(130));
}

// ---------------------------------------------------------------------------
// As Docker's init (`docker run --init`)
// ---------------------------------------------------------------------------

/// What `docker info` does with `docker-init --version` (moby's
/// parseInitVersion): "tini version X - git.Y" gives version X and commit Y.
fn parse_init_version(v: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = v.split(" - ").collect();
    let mut commit = String::new();
    if parts.len() >= 2 {
        let git: Vec<&str> = parts[1].trim().split('.').collect();
        if git.len() == 2 && git[0] == "git" {
            commit = git[1].to_string();
        }
    }
    let version = parts[0]
        .trim()
        .strip_prefix("tini version ")
        .unwrap_or("")
        .to_string();
    if version.is_empty() && commit.is_empty() {
        None
    } else {
        Some((version, commit))
    }
}

/// vigil as Docker's init: bind-mounted read-only at /sbin/docker-init and
/// called as `/sbin/docker-init -- CMD...`, first by hand, then through
/// `docker run --init` itself (the bind mount replaces the daemon's init).
#[test]
fn vigil_as_docker_init() {
    const T: &str = "docker_init";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    let mount = format!("{}:/sbin/docker-init:ro", h.vigil.display());

    let (code, out, err, _) = h.run_fg(
        T,
        &["-v", &mount, "--entrypoint", "/sbin/docker-init"],
        &["--version"],
    );
    let version = out.trim();
    note(T, format!("/sbin/docker-init --version: {version:?}"));
    assert_eq!(code, 0, "stderr: {err}");
    assert_eq!(
        version,
        format!("tini version {} - vigil", env!("CARGO_PKG_VERSION"))
    );
    let parsed = parse_init_version(version);
    assert_eq!(
        parsed.as_ref().map(|p| p.0.as_str()),
        Some(env!("CARGO_PKG_VERSION")),
        "{parsed:?}"
    );

    let timeout = STOP_TIMEOUT.to_string();
    let script = "echo ready; sleep 1000";
    let opts = [
        "--stop-timeout",
        &timeout,
        "-e",
        "VIGIL_VERBOSITY=2",
        "-v",
        &mount,
    ];
    // 1. The argv `docker run --init` uses, given by hand.
    let by_hand = h.start(
        T,
        &[&opts[..], &["--entrypoint", "/sbin/docker-init"]].concat(),
        &["--", "sh", "-c", script],
    );
    // 2. `docker run --init` itself, with our binary mounted over the daemon's.
    let real = h.start(
        T,
        &[&["--init"][..], &opts, &["--entrypoint", ""]].concat(),
        &["sh", "-c", script],
    );
    by_hand.wait_log("ready", Duration::from_secs(20));
    real.wait_log("ready", Duration::from_secs(20));
    let argv = |c: &Ctr| {
        c.exec(&["cat", "/proc/1/cmdline"])
            .replace('\0', " ")
            .trim()
            .to_string()
    };
    let (hand_argv, real_argv) = (argv(&by_hand), argv(&real));
    note(
        T,
        format!("PID 1 argv: by hand {hand_argv:?}; docker run --init {real_argv:?}"),
    );
    assert_eq!(hand_argv, format!("/sbin/docker-init -- sh -c {script}"));
    let real_is_vigil = real
        .exec(&["/sbin/docker-init", "--version"])
        .contains("vigil");

    let (hand_took, real_took) = stop_both(&by_hand, &real);
    let hand_logs = by_hand.logs();
    note(
        T,
        format!(
            "docker stop: by hand {} exit {}; docker run --init {} exit {}",
            secs(hand_took),
            by_hand.exit_code(),
            secs(real_took),
            real.exit_code()
        ),
    );
    assert_eq!(by_hand.exit_code(), 143, "logs:\n{hand_logs}");
    assert!(hand_took < FAST);
    assert!(
        hand_logs.contains("vigil: "),
        "no vigil log lines at VIGIL_VERBOSITY=2:\n{hand_logs}"
    );

    if !real_is_vigil {
        return skip(
            T,
            "the `docker run --init` part: this engine mounted its own init over the bind mount",
        );
    }
    assert_eq!(real_argv, format!("/sbin/docker-init -- sh -c {script}"));
    assert_eq!(real.exit_code(), 143, "logs:\n{}", real.logs());
    assert!(real_took < FAST);
    assert!(real.logs().contains("vigil: "));
}

// ---------------------------------------------------------------------------
// --user: one binary instead of tini + gosu
// ---------------------------------------------------------------------------

/// The test image with an /etc/passwd and /etc/group (a FROM scratch image
/// has none): `app` (1000:1000, also in group `audio`), and root. Built once
/// for every test that wants it, and removed with the run's other images
/// at exit: two tests building the same layers at once shared the cache,
/// and one's clean-up took a layer from under the other's build.
fn image_with_users(h: &TestImage) -> &'static str {
    static IMAGE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    IMAGE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("{LABEL}-{}-users", run_id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("passwd"),
            "root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000:app:/home/app:/bin/sh\n",
        )
        .unwrap();
        fs::write(
            dir.join("group"),
            "root:x:0:\naudio:x:29:app\napp:x:1000:\n",
        )
        .unwrap();
        fs::write(
            dir.join("Dockerfile"),
            format!(
                "FROM {}\nLABEL {}\nCOPY passwd group /etc/\n",
                h.image,
                run_label()
            ),
        )
        .unwrap();
        let image = format!("{LABEL}:users-{}", run_id());
        DOCKER.ok(&["build", "-q", "-t", &image, &dir.to_string_lossy()]);
        let _ = fs::remove_dir_all(&dir);
        image
    })
}

/// `ENV VIGIL_USER=app` in a FROM scratch image: the app (and the pre-stop
/// hook) run as app with its groups and HOME, vigil stays root (it can
/// still signal, reap and drain everything and write the termination
/// log), and `docker stop` still ends in 143 at once.
#[test]
fn vigil_user_runs_the_app_and_the_hooks_as_the_user() {
    const T: &str = "vigil_user";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    let image = image_with_users(h);
    let dir = std::env::temp_dir().join(format!("{LABEL}-{}-user-tlog", run_id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let log = dir.join("termination-log");
    fs::write(&log, "").unwrap();
    let mount = format!("{}:/dev/termination-log", log.display());
    let ctr = Ctr::start(
        DOCKER,
        T,
        &[
            "--stop-timeout",
            &STOP_TIMEOUT.to_string(),
            "-v",
            &mount,
            "-e",
            "VIGIL_USER=app",
            "-e",
            "HOME=/wrong",
            "-e",
            "VIGIL_PRE_STOP=sh -c 'echo hook uid=$(id -u) gid=$(id -g)'",
        ],
        image,
        &[
            "sh",
            "-c",
            "echo app uid=$(id -u) gid=$(id -g) groups=\"$(id -G)\" home=$HOME; exec sleep 1000",
        ],
    );
    ctr.wait_log("app uid=", Duration::from_secs(20));
    let top = DOCKER.ok(&["top", &ctr.name, "-o", "uid,pid,comm"]);
    let owner = |comm: &str| {
        top.lines()
            .find(|l| l.split_whitespace().nth(2) == Some(comm))
            .and_then(|l| l.split_whitespace().next())
            .map(String::from)
    };
    let took = ctr.stop();
    let code = ctr.exit_code();
    let logs = ctr.logs();
    let report = fs::read_to_string(&log).unwrap_or_default();
    let _ = fs::remove_dir_all(&dir);
    note(
        T,
        format!(
            "docker stop {} exit {code}; vigil runs as uid {:?}, sleep as {:?}; termination log: {}",
            secs(took),
            owner("vigil"),
            owner("sleep"),
            report.trim()
        ),
    );
    assert!(
        logs.contains("app uid=1000 gid=1000 groups=1000 29 home=/home/app"),
        "{logs}"
    );
    assert!(logs.contains("hook uid=1000 gid=1000"), "{logs}");
    assert_eq!(owner("vigil").as_deref(), Some("0"), "{top}");
    assert_eq!(owner("sleep").as_deref(), Some("1000"), "{top}");
    assert_eq!(code, 143, "{logs}");
    assert!(took < FAST, "docker stop took {}", secs(took));
    assert!(report.contains("exit status 143"), "{report}");
}

/// `docker run --user 1000` (a non-root container) with the image's
/// `VIGIL_USER`: the same ids are accepted, other ones fail with one clear
/// line; an arbitrary uid with no entry (OpenShift's) runs with HOME=/.
#[test]
fn vigil_user_under_docker_run_user_and_arbitrary_uids() {
    const T: &str = "vigil_user_ids";
    let Some(h) = harness(T) else { return };
    let image = image_with_users(h);
    let run = |opts: &[&str]| {
        Ctr::run_fg(
            DOCKER,
            T,
            opts,
            image,
            &["sh", "-c", "echo uid=$(id -u) gid=$(id -g) home=$HOME"],
        )
    };
    let (code, out, err, _) = run(&["--user", "1000:1000", "-e", "VIGIL_USER=1000:1000"]);
    note(
        T,
        format!(
            "--user 1000:1000, VIGIL_USER=1000:1000: exit {code}: {}",
            out.trim()
        ),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("uid=1000 gid=1000 home=/home/app"),
        "{out}{err}"
    );

    let (code, out, err, _) = run(&["--user", "1000:1000", "-e", "VIGIL_USER=root"]);
    note(
        T,
        format!(
            "--user 1000:1000, VIGIL_USER=root: exit {code}: {}",
            err.trim()
        ),
    );
    assert_eq!(code, 1, "{out}{err}");
    let errors: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("vigil: error: "))
        .collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].contains("root") && errors[0].contains("without"),
        "{err}"
    );
    assert!(!out.contains("uid="), "the app ran: {out}");

    let (code, out, err, _) = run(&["-e", "VIGIL_USER=1000770000:0"]);
    note(
        T,
        format!("VIGIL_USER=1000770000:0: exit {code}: {}", out.trim()),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("uid=1000770000 gid=0 home=/"), "{out}{err}");
}

// ---------------------------------------------------------------------------
// A restricted container
// ---------------------------------------------------------------------------

/// A non-root (`--user 1000:1000`), read-only, capability-less container:
/// vigil still forwards the stop signal and reaps orphans.
#[test]
fn user_1000_and_read_only_root() {
    const T: &str = "user_read_only";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    let ctr = h.start(
        T,
        &[
            "--user",
            "1000:1000",
            "--read-only",
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--stop-timeout",
            &STOP_TIMEOUT.to_string(),
        ],
        &[
            "sh",
            "-c",
            "echo uid=$(id -u) gid=$(id -g); touch /rofs 2>/dev/null || echo read-only; \
             i=0; while [ $i -lt 20 ]; do (sleep 0.5 &); i=$((i+1)); done; echo ready; exec sleep 1000",
        ],
    );
    ctr.wait_log("ready", Duration::from_secs(20));
    let logs = ctr.logs();
    assert!(logs.contains("uid=1000 gid=1000"), "{logs}");
    assert!(logs.contains("read-only"), "{logs}");
    let top = DOCKER.ok(&["top", &ctr.name, "-o", "uid,pid,comm"]);
    let pid1_user = top
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some("vigil"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or("?")
        .to_string();
    let (total, zombies) = ctr.processes_until(
        Duration::from_secs(10),
        Duration::from_millis(200),
        |total, zombies| total <= 2 && zombies == 0,
    );
    let took = ctr.stop();
    let code = ctr.exit_code();
    note(
        T,
        format!(
            "PID 1 owner: {}; after 20 orphans: {total} processes, {zombies} zombies; docker stop {} exit {code}",
            pid1_user.trim(),
            secs(took)
        ),
    );
    assert_eq!(pid1_user, "1000", "docker top:\n{top}");
    assert_eq!(zombies, 0);
    assert_eq!(code, 143, "logs:\n{}", ctr.logs());
    assert!(took < FAST, "docker stop took {}", secs(took));
    assert!(!ctr.logs().contains("vigil: error"), "{}", ctr.logs());
}

/// docs/docker.md's least-privilege recipe as written, with no CAP_KILL:
/// every capability dropped but NET_BIND_SERVICE, SETUID and SETGID,
/// no-new-privileges, ports below 1024 closed to other users again, and
/// `VIGIL_USER=1000 VIGIL_CAPS=NET_BIND_SERVICE` from the environment as the
/// recipe's `ENV` line sets them. The server serves on port 80 as uid
/// 1000; vigil, unable to signal another uid, takes that uid itself
/// (`following_user`), so that `docker stop` reaches the server at once:
/// 143, well within the stop timeout, and no warning that it could not.
#[test]
fn least_privilege_recipe_stops_without_cap_kill() {
    const T: &str = "least_privilege";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    let ctr = h.start(
        T,
        &[
            super::LEAST_PRIVILEGE,
            &[
                "-e",
                "VIGIL_USER=1000",
                "-e",
                "VIGIL_CAPS=NET_BIND_SERVICE",
                "-e",
                "VIGIL_LOG_FORMAT=json",
                "-e",
                "VIGIL_VERBOSITY=2",
            ],
        ]
        .concat(),
        &[
            "sh",
            "-c",
            "echo hello > /tmp/index.html; exec busybox httpd -f -p 80 -h /tmp",
        ],
    );
    let mut got = String::new();
    let served = wait_until_every(TIMEOUT, Duration::from_millis(200), || {
        let out = ctr.fetch("http://127.0.0.1:80/index.html");
        got = text(&out.stdout);
        got == "hello\n"
    });
    assert!(
        served,
        "{T}: port 80 never answered: {got:?}\n{}",
        ctr.logs()
    );
    // The server, and vigil now too, run as uid 1000 (real, effective,
    // saved and filesystem ids: /proc's `Uid:` line).
    let vigil = ctr.host_pid();
    let uids = |pid: i32| status_field(pid, "Uid").unwrap_or_default();
    let server = children(vigil);
    assert_eq!(server.len(), 1, "{T}: vigil's children: {server:?}");
    for pid in [vigil, server[0]] {
        assert_eq!(
            uids(pid).split_whitespace().collect::<Vec<_>>(),
            ["1000"; 4],
            "{T}: pid {pid}"
        );
    }
    // Half the stop timeout: far from the whole of it, which a SIGTERM
    // that could not reach the server would cost.
    let took = ctr.stop_within(10);
    let code = ctr.exit_code();
    let logs = ctr.logs();
    let records = Records::of(&logs);
    note(
        T,
        format!(
            "docker stop {} exit {code}; the server ended {}s after the SIGTERM reached vigil",
            secs(took),
            records.exit()["stop"]["ended_after"]
        ),
    );
    assert_eq!(code, 143, "{T}: {logs}");
    assert!(
        took < Duration::from_secs(5),
        "{T}: docker stop took {}\n{logs}",
        secs(took)
    );
    assert_fields(records.one("following_user"), json!({"uid": 1000}), &logs);
    assert!(!records.has("cannot_signal_user"), "{T}: {logs}");
    assert_fields(
        records.exit(),
        json!({"status": 143, "ending": {"signal": "SIGTERM", "cause": "stop_signal"}}),
        &logs,
    );
}

// ---------------------------------------------------------------------------
// --log-format json in Docker, read with jq
// ---------------------------------------------------------------------------

/// docs/logging.md's jq filter for vigil's exit record.
const VIGIL_EXIT: &str = r#"fromjson? | select(.logger == "vigil" and .event == "exit")"#;

/// `docker logs CTR 2>&1 | jq -cR 'fromjson? | select(.logger == "vigil"
/// and .event == "exit")'` (docs/logging.md's recipe): the exit
/// record, found by jq in a log where every line is vigil's (the children
/// here write nothing). Every line of that log is also held to the schema.
/// None (after a skip line) when jq is missing.
fn jq_exit_record(test: &str, ctr: &Ctr) -> Option<serde_json::Value> {
    if Command::new("jq").arg("--version").output().is_err() {
        skip(test, "no jq (Debian package jq)");
        return None;
    }
    let logs = ctr.logs();
    let schema = crate::common::check::Schema::load();
    for line in logs.lines() {
        let value: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{test}: not JSON ({e}): {line}\n{logs}"));
        schema
            .check_json(&value)
            .unwrap_or_else(|e| panic!("{test}: {e}\n{line}"));
    }
    let script = format!("docker logs {} 2>&1 | jq -cR '{VIGIL_EXIT}'", ctr.name);
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    let found = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{test}: jq failed: {out:?}");
    let lines: Vec<&str> = found.lines().collect();
    assert_eq!(lines.len(), 1, "{test}: jq found {found:?} in\n{logs}");
    note(test, format!("jq: {}", lines[0]));
    Some(serde_json::from_str(lines[0]).unwrap())
}

/// The environment that makes vigil log JSON at `-v` (so that the test can
/// wait for the child's start), as an image's `ENV` would.
const JSON_V: [&str; 4] = ["-e", "VIGIL_LOG_FORMAT=json", "-e", "VIGIL_VERBOSITY=2"];

/// `docker stop`: the exit record says SIGTERM from outside the namespace,
/// answered (143, no warning).
#[test]
fn json_exit_record_after_docker_stop() {
    const T: &str = "json_stop";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    let ctr = h.start(T, &JSON_V, &["sleep", "1000"]);
    ctr.wait_log("\"event\":\"started\"", Duration::from_secs(20));
    ctr.stop();
    assert_eq!(ctr.exit_code(), 143, "{}", ctr.logs());
    let Some(exit) = jq_exit_record(T, &ctr) else {
        return;
    };
    assert_eq!(exit["level"], "info");
    assert_eq!(exit["status"], 143);
    assert_eq!(exit["ending"]["cause"], "stop_signal");
    assert_eq!(exit["stop"]["sender"]["kind"], "outside_namespace");
    assert_eq!(exit["stop"]["sent"], "SIGTERM");
}

/// An exit code nobody asked for: a warning record with the code.
#[test]
fn json_exit_record_of_an_exit_code() {
    const T: &str = "json_code";
    let Some(h) = harness(T) else { return };
    let ctr = h.start(T, &JSON_V, &["sh", "-c", "exit 3"]);
    assert_eq!(ctr.wait(), 3);
    let Some(exit) = jq_exit_record(T, &ctr) else {
        return;
    };
    assert_eq!(exit["level"], "warning");
    assert_eq!(exit["ending"]["code"], 3);
    assert_eq!(exit["command"], "sh -c 'exit 3'");
}

/// A child that ignores SIGTERM, `docker stop` with a grace period below
/// Docker's timeout: vigil's SIGKILL at the grace deadline, named.
#[test]
fn json_exit_record_of_a_sigkill_at_the_grace_deadline() {
    const T: &str = "json_grace";
    let Some(h) = harness(T) else { return };
    let _cpu = timing();
    let opts = [
        &JSON_V[..],
        &["-e", "VIGIL_GRACE_PERIOD=1s", "--stop-timeout", "10"],
    ]
    .concat();
    let ctr = h.start(T, &opts, &["sh", "-c", "trap '' TERM; sleep 1000 & wait"]);
    // Ready once the trap is set and the sleep runs.
    let sleeping = wait_until_every(TIMEOUT, Duration::from_millis(100), || {
        ctr.exec(&["ps", "-o", "comm"])
            .lines()
            .any(|l| l.trim() == "sleep")
    });
    assert!(sleeping, "the child never started its sleep");
    ctr.stop();
    assert_eq!(ctr.exit_code(), 137, "{}", ctr.logs());
    let Some(exit) = jq_exit_record(T, &ctr) else {
        return;
    };
    assert_eq!(exit["ending"]["cause"], "grace_deadline");
    assert_eq!(exit["stop"]["grace_period"], 1);
    let killed: Vec<&str> = exit["grace_kills"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(
        killed.contains(&"sh -c trap '' TERM; sleep 1000 & wait") && killed.contains(&"sleep 1000"),
        "{exit}"
    );
}

/// `--memory 32m`: the OOM killer's SIGKILL, told apart from any other,
/// and counted.
#[test]
fn json_exit_record_of_an_oom_kill() {
    const T: &str = "json_oom";
    let Some(h) = harness(T) else { return };
    if DOCKER.ok(&["info", "--format", "{{.MemoryLimit}}"]).trim() != "true" {
        return skip(T, "this engine does not enforce memory limits");
    }
    let opts = [&JSON_V[..], &["--memory", "32m", "--memory-swap", "32m"]].concat();
    let ctr = h.start(T, &opts, &["sh", "-c", "exec tail /dev/zero"]);
    assert_eq!(ctr.wait(), 137, "{}", ctr.logs());
    let Some(exit) = jq_exit_record(T, &ctr) else {
        return;
    };
    assert_eq!(exit["ending"]["cause"], "oom_killer");
    assert_eq!(exit["oom_kills"], 1);
}

/// `VIGIL_TIMEOUT`: the stop vigil started itself, exit 124.
#[test]
fn json_exit_record_of_a_timeout() {
    const T: &str = "json_timeout";
    let Some(h) = harness(T) else { return };
    let opts = [&JSON_V[..], &["-e", "VIGIL_TIMEOUT=1s"]].concat();
    let ctr = h.start(T, &opts, &["sleep", "1000"]);
    assert_eq!(ctr.wait(), 124, "{}", ctr.logs());
    let Some(exit) = jq_exit_record(T, &ctr) else {
        return;
    };
    assert_eq!(exit["timeout"], true);
    assert_eq!(exit["stop"]["cause"], "timeout");
    assert_eq!(exit["stop"]["timeout"], 1);
}

/// A post-start hook that fails: the stop it started, and the hook.
#[test]
fn json_exit_record_of_a_failed_post_start_hook() {
    const T: &str = "json_post_start";
    let Some(h) = harness(T) else { return };
    let opts = [&JSON_V[..], &["-e", "VIGIL_POST_START=sh -c 'exit 1'"]].concat();
    let ctr = h.start(T, &opts, &["sleep", "1000"]);
    assert_eq!(ctr.wait(), 143, "{}", ctr.logs());
    let Some(exit) = jq_exit_record(T, &ctr) else {
        return;
    };
    assert_eq!(exit["stop"]["cause"], "post_start_failed");
    assert_eq!(exit["hooks"][0]["hook"], "post-start");
    assert_eq!(exit["hooks"][0]["outcome"], "failed");
}

/// `docker kill -s USR1`: the signal vigil forwarded, and whose it was.
#[test]
fn json_exit_record_of_a_forwarded_signal() {
    const T: &str = "json_usr1";
    let Some(h) = harness(T) else { return };
    let ctr = h.start(T, &JSON_V, &["sleep", "1000"]);
    ctr.wait_log("\"event\":\"started\"", Duration::from_secs(20));
    ctr.kill("USR1");
    assert_eq!(ctr.wait(), 138, "{}", ctr.logs());
    let Some(exit) = jq_exit_record(T, &ctr) else {
        return;
    };
    assert_eq!(exit["ending"]["cause"], "forwarded");
    assert_eq!(
        exit["ending"]["forwarded"]["sender"]["kind"],
        "outside_namespace"
    );
}

/// Docker's json-file log, read directly with jq: each of its lines wraps
/// one output line, vigil's exit record among them.
#[test]
fn json_file_log_read_with_jq() {
    const T: &str = "json_file_log";
    let Some(h) = harness(T) else { return };
    if DOCKER
        .ok(&["info", "--format", "{{.LoggingDriver}}"])
        .trim()
        != "json-file"
    {
        return skip(T, "the engine's logging driver is not json-file");
    }
    let ctr = h.start(
        T,
        &["-e", "VIGIL_LOG_FORMAT=json"],
        &["sh", "-c", "echo not json; exit 3"],
    );
    assert_eq!(ctr.wait(), 3);
    let path = ctr.inspect("{{.LogPath}}");
    let filter = format!(".log | {VIGIL_EXIT}");
    let out = Command::new("jq").args(["-c", &filter, &path]).output();
    let Ok(out) = out else {
        skip(T, "no jq (Debian package jq)");
        return;
    };
    let found = String::from_utf8_lossy(&out.stdout).into_owned();
    note(T, format!("jq {path}: {}", found.trim()));
    assert!(out.status.success(), "{out:?}");
    let exit: serde_json::Value = serde_json::from_str(found.trim()).unwrap();
    assert_eq!(exit["status"], 3);
    crate::common::check::Schema::load()
        .check_json(&exit)
        .unwrap();
}

/// An application that logs JSON lines of its own, one of them looking
/// like vigil's exit record: the recipe finds vigil's record only, by its
/// `logger`.
#[test]
fn an_applications_own_json_is_not_taken_for_vigils() {
    const T: &str = "app_json";
    let Some(h) = harness(T) else { return };
    let app_line = r#"{"event":"exit","level":"info","status":2}"#;
    let ctr = h.start(
        T,
        &["-e", "VIGIL_LOG_FORMAT=json"],
        &["sh", "-c", &format!("echo '{app_line}' >&2; exit 3")],
    );
    assert_eq!(ctr.wait(), 3);
    let script = format!("docker logs {} 2>&1 | jq -cR '{VIGIL_EXIT}'", ctr.name);
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    if !out.status.success() && Command::new("jq").arg("--version").output().is_err() {
        skip(T, "no jq (Debian package jq)");
        return;
    }
    let found = String::from_utf8_lossy(&out.stdout).into_owned();
    note(T, format!("jq: {}", found.trim()));
    let records: Vec<serde_json::Value> = found
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        records.len(),
        1,
        "{found}
{}",
        ctr.logs()
    );
    assert_eq!(records[0]["status"], 3, "vigil's, not the app's: {found}");
    assert_eq!(records[0]["logger"], "vigil");
}

/// Docker's own `--init` (tini, as `docker-init`) above the image's vigil:
/// one vigil in the log, whose lines start `vigil: `.
#[test]
fn under_dockers_own_init_vigil_lines_start_vigil() {
    const T: &str = "tini_init";
    let Some(h) = harness(T) else { return };
    let (code, _out, err, _) = h.run_fg(T, &["--init"], &["sh", "-c", "exit 3"]);
    note(T, format!("exit {code}; stderr: {err:?}"));
    assert_eq!(code, 3, "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with("vigil: warning: exit report: child exited with code 3; "),
        "{err}"
    );
}
