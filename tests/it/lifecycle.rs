//! The lifecycle: the post-start and pre-stop hooks, `--pre-stop-sleep`,
//! the grace period and `--timeout` (each option also through its
//! `VIGIL_*` variable), and hooks that misbehave (never end, ignore
//! SIGTERM, close their stdio, fork-bomb). vigil runs as PID 1 of a fresh
//! PID namespace unless a test says otherwise. What comes after the child
//! exits is tests/it/drain.rs.

use crate::common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// A shell child for `start_sh`: records when SIGTERM reaches it (`date
/// +%s%N` into `term_at`, then exits 0), writes its pid (as the namespace
/// sees it) to `pid`, creates `ready`, and waits.
const TERM_RECORDER: &str = "trap 'date +%s%N > term_at; exit 0' TERM; \
     date +%s%N > started; echo $$ > pid; : > ready; sleep 1000 & wait";

/// A `date +%s%N` timestamp written to a file, in nanoseconds.
fn stamp(path: &Path) -> u128 {
    let text = read_trimmed(path);
    text.parse()
        .unwrap_or_else(|_| panic!("{} holds no timestamp: {text:?}", path.display()))
}

// ---------------------------------------------------------------------------
// pre-stop
// ---------------------------------------------------------------------------

/// The pre-stop hook runs to completion before the child gets SIGTERM, and
/// sees VIGIL_HOOK, VIGIL_SIGNAL and VIGIL_CHILD_PID.
fn pre_stop_runs_before_sigterm(via: Via) {
    let _cpu = timing();
    let dir = TempDir::new("prestop");
    let hook = "sh -c 'date +%s%N > hook_start; env | grep ^VIGIL_ | sort > hook_env; \
                sleep 0.5; date +%s%N > hook_end'";
    let v = opt(Vigil::pid1(), via, "--pre-stop", hook);
    let run = start_sh(v, &dir, TERM_RECORDER);
    let child = read_trimmed(&dir.join("pid"));
    let (out, _) = signal_timed(run, libc::SIGTERM);
    assert_eq!(out.code(), Some(0), "{out}");

    let (start, end, term) = (
        stamp(&dir.join("hook_start")),
        stamp(&dir.join("hook_end")),
        stamp(&dir.join("term_at")),
    );
    assert!(
        end <= term,
        "the child got SIGTERM {} ms before the pre-stop hook ended\n{out}",
        (end - term) / 1_000_000
    );
    assert!(
        term - start >= 500_000_000,
        "SIGTERM reached the child {} ms after the hook started, the hook takes 500 ms\n{out}",
        (term - start) / 1_000_000
    );
    let env = read_trimmed(&dir.join("hook_env"));
    for line in [
        "VIGIL_HOOK=pre-stop".to_string(),
        "VIGIL_SIGNAL=SIGTERM".to_string(),
        format!("VIGIL_CHILD_PID={child}"),
    ] {
        assert!(
            env.lines().any(|l| l == line),
            "the pre-stop hook's environment lacks {line}:\n{env}\n{out}"
        );
    }
}

#[test]
fn pre_stop_runs_before_the_child_gets_sigterm() {
    pre_stop_runs_before_sigterm(Via::Flag);
}

#[test]
fn pre_stop_through_vigil_pre_stop() {
    pre_stop_runs_before_sigterm(Via::Env);
}

/// A pre-stop hook that fails (non-zero exit, or cannot be run at all) is
/// reported, and the stop signal is forwarded all the same.
#[test]
fn failing_pre_stop_still_forwards_sigterm() {
    let _cpu = timing();
    for (hook, why) in [
        ("sh -c 'exit 7'", json!({"ending": {"code": 7}})),
        (
            "/nonexistent/pre-stop-hook",
            json!({"reason": "could_not_run"}),
        ),
    ] {
        let dir = TempDir::new("prestopfail");
        let v = Vigil::pid1().json().args(["--pre-stop", hook]);
        let (run, rec) = start_rec(v, &dir, &["--exit-on", "15"]);
        let (out, _) = signal_timed(run, libc::SIGTERM);
        assert_eq!(out.code(), Some(0), "hook {hook}: {out}");
        assert!(
            read_signals(&rec).contains(&libc::SIGTERM),
            "hook {hook}: the child never got SIGTERM\n{out}"
        );
        let records = out.records();
        let ended = records.one("hook_ended");
        assert_fields(
            ended,
            json!({"level": "warning", "hook": "pre-stop", "outcome": "failed"}),
            &out,
        );
        assert_fields(ended, why, &out);
        if ended["reason"] == "could_not_run" {
            let error = ended["error"].as_str().unwrap();
            assert!(error.ends_with("No such file or directory"), "{ended}");
        }
        assert_eq!(records.exit()["stop"]["sent"], "SIGTERM", "{out}");
    }
}

/// `--pre-stop-sleep 1s` delays the forward by at least 1 s, with a PATH in
/// which there is no `sleep` (nor anything else): vigil waits by itself.
fn pre_stop_sleep_delays_the_forward(via: Via) {
    let _cpu = timing();
    let dir = TempDir::new("prestopsleep");
    let empty = TempDir::new("emptypath");
    // `unshare` is looked up in the PATH given to it: name it by its path.
    let unshare = which("unshare");
    let pid1 = Vigil::wrapped(&[
        unshare.as_os_str(),
        "--pid".as_ref(),
        "--fork".as_ref(),
        "--mount-proc".as_ref(),
        "--".as_ref(),
    ]);
    let v = opt(
        pid1.env("PATH", empty.path()).arg("-v").json(),
        via,
        "--pre-stop-sleep",
        "1s",
    );
    let (run, rec) = start_rec(v, &dir, &["--exit-on", "15"]);
    let t0 = Instant::now();
    run.signal(libc::SIGTERM);
    assert!(
        wait_for_signal(&rec, libc::SIGTERM, TIMEOUT),
        "SIGTERM never reached the child\n{}",
        run.describe()
    );
    let delay = t0.elapsed();
    let (out, _) = wait_timed(run, t0);
    assert_eq!(out.code(), Some(0), "{out}");
    assert_between(delay, ONE_SECOND, ABOUT_1S_MAX, "the forward", &out);
    assert_fields(
        out.records().one("pre_stop_sleep"),
        json!({"sleep": 1, "signal": "SIGTERM"}),
        &out,
    );
}

#[test]
fn pre_stop_sleep_delays_the_forward_without_a_sleep_binary() {
    pre_stop_sleep_delays_the_forward(Via::Flag);
}

#[test]
fn pre_stop_sleep_through_vigil_pre_stop_sleep() {
    pre_stop_sleep_delays_the_forward(Via::Env);
}

/// The child records the signal that ended it: QUIT or TERM.
const QUIT_OR_TERM: &str = "trap 'echo QUIT > got; exit 0' QUIT; trap 'echo TERM > got; exit 0' TERM; \
     : > ready; sleep 1000 & wait";

/// `--stop-signals QUIT` (beside an image's `STOPSIGNAL SIGQUIT`: nginx's
/// graceful stop): QUIT runs the stop sequence, the pre-stop hook (told
/// SIGQUIT) and then QUIT to the child, and the report names it; TERM is
/// then any other signal, forwarded at once without the hook.
fn stop_signals_choose_what_starts_the_stop(via: Via) {
    let _cpu = timing();
    let hook = "sh -c 'echo $VIGIL_SIGNAL > hook_signal'";
    let dir = TempDir::new("stopsignals");
    let v = opt(Vigil::pid1().json(), via, "--stop-signals", "QUIT").args(["--pre-stop", hook]);
    let run = start_sh(v, &dir, QUIT_OR_TERM);
    let (out, _) = signal_timed(run, libc::SIGQUIT);
    assert_eq!(out.code(), Some(0), "{out}");
    assert_eq!(read_trimmed(&dir.join("hook_signal")), "SIGQUIT", "{out}");
    assert_eq!(read_trimmed(&dir.join("got")), "QUIT", "{out}");
    assert_fields(
        out.records().exit(),
        json!({
            "level": "info",
            "stop": {
                "cause": "signal",
                "signal": "SIGQUIT",
                "sender": {"kind": "outside_namespace", "pid": 0},
                "sent": "SIGQUIT",
            }
        }),
        &out,
    );
    let dir = TempDir::new("stopsignals");
    let v = opt(Vigil::pid1(), via, "--stop-signals", "QUIT").args(["--pre-stop", hook]);
    let run = start_sh(v, &dir, QUIT_OR_TERM);
    let (out, _) = signal_timed(run, libc::SIGTERM);
    assert_eq!(out.code(), Some(0), "{out}");
    assert_eq!(read_trimmed(&dir.join("got")), "TERM", "{out}");
    assert!(
        !dir.join("hook_signal").exists(),
        "TERM ran the hook\n{out}"
    );
}

#[test]
fn stop_signals_choose_what_starts_the_stop_sequence() {
    stop_signals_choose_what_starts_the_stop(Via::Flag);
}

#[test]
fn stop_signals_through_vigil_stop_signals() {
    stop_signals_choose_what_starts_the_stop(Via::Env);
}

// ---------------------------------------------------------------------------
// post-start
// ---------------------------------------------------------------------------

/// Waits until vigil says `hook` succeeded.
fn wait_hook_succeeded(run: &Running, hook: &str) {
    let ended = run.wait_record("hook_ended", TIMEOUT, |r| r["hook"] == hook);
    let ended = ended.unwrap_or_else(|| panic!("the {hook} hook never ended\n{}", run.describe()));
    assert_eq!(ended["outcome"], "succeeded", "{ended}\n{}", run.describe());
}

/// The post-start hook runs while the child runs: it waits for the child's
/// `ready` file (which it could never see if vigil started the child only
/// after the hook), then checks that the child is alive.
fn post_start_runs_with_the_child(via: Via) {
    let _cpu = timing();
    let dir = TempDir::new("poststart");
    let hook = "sh -c 'i=0; while [ ! -e ready ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done; \
                date +%s%N > hook_at; env | grep ^VIGIL_ | sort > hook_env; \
                kill -0 $VIGIL_CHILD_PID && echo running > hook_saw'";
    let v = opt(Vigil::pid1().arg("-v").json(), via, "--post-start", hook);
    let run = start_sh(v, &dir, TERM_RECORDER);
    assert!(
        wait_for_file(&dir.join("hook_saw"), TIMEOUT),
        "the post-start hook did not see the child running\n{}",
        run.describe()
    );
    wait_hook_succeeded(&run, "post-start");
    let child = read_trimmed(&dir.join("pid"));
    let (out, _) = signal_timed(run, libc::SIGTERM);
    assert_eq!(out.code(), Some(0), "{out}");
    assert!(
        stamp(&dir.join("started")) <= stamp(&dir.join("hook_at")),
        "{out}"
    );
    assert_eq!(read_trimmed(&dir.join("hook_saw")), "running");
    let env = read_trimmed(&dir.join("hook_env"));
    assert!(
        env.lines().any(|l| l == "VIGIL_HOOK=post-start"),
        "{env}\n{out}"
    );
    assert!(
        env.lines().any(|l| l == format!("VIGIL_CHILD_PID={child}")),
        "{env}\n{out}"
    );
    assert!(
        !env.contains("VIGIL_SIGNAL="),
        "post-start has no stop signal: {env}"
    );
}

#[test]
fn post_start_runs_while_the_child_runs() {
    post_start_runs_with_the_child(Via::Flag);
}

#[test]
fn post_start_through_vigil_post_start() {
    post_start_runs_with_the_child(Via::Env);
}

/// A post-start hook that exits non-zero stops the container as if SIGTERM
/// had arrived: the child (`sleep`) dies of SIGTERM, vigil exits 143.
#[test]
fn failing_post_start_sends_sigterm_and_exits_143() {
    let dir = TempDir::new("poststartfail");
    let run = Vigil::pid1()
        .json()
        .cwd(dir.path())
        .args([
            "--post-start",
            "sh -c 'sleep 0.2; exit 3'",
            "--",
            "sleep",
            "1000",
        ])
        .spawn();
    let out = run.wait(TIMEOUT);
    assert_eq!(out.code(), Some(143), "{out}");
    let records = out.records();
    assert_fields(
        records.one("hook_ended"),
        json!({"level": "warning", "hook": "post-start", "outcome": "failed", "ending": {"code": 3}}),
        &out,
    );
    assert_fields(
        records.exit(),
        json!({"stop": {"cause": "post_start_failed", "sent": "SIGTERM"}, "ending": {"signal": "SIGTERM"}}),
        &out,
    );
}

/// A post-start hook still running at `--post-start-timeout 1s` has failed:
/// after about 1 s the child gets SIGTERM and vigil exits 143.
fn hanging_post_start_times_out(via: Via) {
    let _cpu = timing();
    let dir = TempDir::new("poststarthang");
    let v = opt(Vigil::pid1().json(), via, "--post-start", "sleep 1000");
    let v = opt(v, via, "--post-start-timeout", "1s");
    let t0 = Instant::now();
    let run = v.cwd(dir.path()).args(["--", "sleep", "1000"]).spawn();
    let (out, took) = wait_timed(run, t0);
    assert_eq!(out.code(), Some(143), "{out}");
    assert_between(took, ONE_SECOND, ABOUT_1S_MAX, "vigil", &out);
    let records = out.records();
    let ended = records.one("hook_ended");
    assert_fields(
        ended,
        json!({"level": "warning", "hook": "post-start", "outcome": "failed", "reason": "timed_out"}),
        &out,
    );
    let ran = ended["duration"].as_f64().unwrap();
    assert!((1.0..2.0).contains(&ran), "{ended}");
}

#[test]
fn hanging_post_start_fails_after_its_timeout() {
    hanging_post_start_times_out(Via::Flag);
}

#[test]
fn post_start_timeout_through_vigil_post_start_timeout() {
    hanging_post_start_times_out(Via::Env);
}

/// A child that exits with `code` on SIGTERM (after a failed post-start, say).
fn exits_on_term(code: i32) -> String {
    format!("trap 'exit {code}' TERM; : > ready; while :; do sleep 0.1; done")
}

/// A failed post-start hook makes the container fail even when the child
/// answers the stop with 0 (else `--restart on-failure` and a Kubernetes
/// Job would count it a success); a non-zero status of the child's stands.
#[test]
fn a_failed_post_start_never_ends_in_exit_0() {
    for (via, child_code, want) in [(Via::Flag, 0, 1), (Via::Env, 0, 1), (Via::Flag, 5, 5)] {
        let dir = TempDir::new("poststart0");
        // The hook fails once the child's TERM trap is in place.
        let hook = r#"sh -c "while [ ! -e ready ]; do sleep 0.05; done; exit 4""#;
        let v = opt(Vigil::pid1().json(), via, "--post-start", hook);
        let out = spawn_sh(v, &dir, &exits_on_term(child_code)).wait(TIMEOUT);
        assert_eq!(
            out.code(),
            Some(want),
            "{via:?}, child exits {child_code} on SIGTERM\n{out}"
        );
        assert_fields(
            out.records().one("hook_ended"),
            json!({"hook": "post-start", "outcome": "failed", "ending": {"code": 4}}),
            &out,
        );
    }
    // `-e` cannot turn it into a success either.
    let dir = TempDir::new("poststart0e");
    let v = Vigil::pid1().args(["-e", "143", "--post-start", "false"]);
    let out = spawn_sh(v, &dir, "exec sleep 1000").wait(TIMEOUT);
    assert_eq!(out.code(), Some(143), "{out}");
}

/// The post-start hook that the child's exit overtook was cancelled, not
/// failed: the status is the child's own.
#[test]
fn a_post_start_overtaken_by_the_childs_exit_is_cancelled() {
    let dir = TempDir::new("poststartcancel");
    let hook = "sh -c ': > hook-runs; exec sleep 1000'";
    let v = Vigil::pid1().arg("-v").json().args(["--post-start", hook]);
    // The child exits once the hook runs.
    let child = "while [ ! -e hook-runs ]; do sleep 0.01; done; exit 0";
    let out = spawn_sh(v, &dir, child).wait(TIMEOUT);
    assert_eq!(out.code(), Some(0), "{out}");
    assert_fields(
        out.records().exit(),
        json!({"status": 0, "hooks": [{"hook": "post-start", "outcome": "cancelled", "reason": "child_exited"}]}),
        &out,
    );
}

// ---------------------------------------------------------------------------
// The grace period
// ---------------------------------------------------------------------------

/// `--grace-period 1s` and a child that ignores SIGTERM: vigil SIGKILLs it
/// after 1 s, exits 137, and the log names the survivor (pid and name).
fn grace_period_kills_the_survivor(via: Via) {
    let _cpu = timing();
    let dir = TempDir::new("grace");
    let v = opt(Vigil::pid1().json(), via, "--grace-period", "1s");
    let run = start_sh(v, &dir, TERM_IGNORER);
    let child: i64 = read_trimmed(&dir.join("pid")).parse().unwrap();
    let (out, took) = signal_timed(run, libc::SIGTERM);
    assert_eq!(out.code(), Some(137), "{out}");
    assert_between(took, ONE_SECOND, ABOUT_1S_MAX, "vigil", &out);
    assert_fields(
        out.records().one("grace_deadline"),
        json!({"level": "warning", "grace_period": 1, "killed": [{"pid": child, "name": "sleep 1000"}]}),
        &out,
    );
}

#[test]
fn grace_period_sigkills_a_child_that_ignores_sigterm() {
    grace_period_kills_the_survivor(Via::Flag);
}

#[test]
fn grace_period_through_vigil_grace_period() {
    grace_period_kills_the_survivor(Via::Env);
}

/// A pre-stop hook that never ends does not withhold the stop signal: at
/// half the grace period (the default `--pre-stop-timeout`) its group gets
/// SIGKILL and the child SIGTERM, so a database gets its clean shutdown
/// rather than a SIGKILL at the deadline.
#[test]
fn a_hung_pre_stop_hook_is_killed_and_the_child_still_gets_sigterm() {
    let _cpu = timing();
    let dir = TempDir::new("hunghook");
    let v = Vigil::pid1()
        .json()
        .args(["--grace-period", "2s", "--pre-stop", "sleep 1000"]);
    let run = start_sh(v, &dir, TERM_RECORDER);
    let (out, took) = signal_timed(run, libc::SIGTERM);
    assert_eq!(out.code(), Some(0), "the child's TERM trap ran: {out}");
    assert!(
        dir.join("term_at").exists(),
        "no SIGTERM reached the child
{out}"
    );
    assert_between(
        took,
        Duration::from_millis(900),
        Duration::from_millis(1900),
        "vigil",
        &out,
    );
    let records = out.records();
    assert_fields(
        records.one("pre_stop_timed_out"),
        json!({"timeout": 1}),
        &out,
    );
    let exit = records.exit();
    assert_fields(
        exit,
        json!({"stop": {"sent": "SIGTERM"}, "hooks": [{"hook": "pre-stop", "outcome": "failed", "reason": "timed_out"}]}),
        &out,
    );
    let ran = exit["hooks"][0]["duration"].as_f64().unwrap();
    assert!((1.0..2.0).contains(&ran), "{exit}");
}

/// `--pre-stop-timeout` longer than the grace period: the grace deadline
/// comes first and ends everything, the hook included (cancelled, not
/// failed), and the report says the stop signal waited for the hook.
#[test]
fn grace_period_bounds_a_pre_stop_hook_that_never_ends() {
    let _cpu = timing();
    let dir = TempDir::new("gracehook");
    let run = Vigil::pid1()
        .json()
        .cwd(dir.path())
        .args([
            "--grace-period",
            "1s",
            "--pre-stop-timeout",
            "1m",
            "--pre-stop",
            "sleep 1000",
            "--",
            "sleep",
            "1000",
        ])
        .spawn();
    run.child_pid();
    let (out, took) = signal_timed(run, libc::SIGTERM);
    assert_eq!(out.code(), Some(137), "{out}");
    assert_between(took, ONE_SECOND, ABOUT_1S_MAX, "vigil", &out);
    // vigil ended the hook at the deadline: it was cancelled, not failed,
    // and the exit report says so, whichever of the hook and the child
    // vigil happens to reap first; the hook is no orphan.
    let exit = cancelled_at_the_grace_deadline(&out);
    assert_fields(
        &exit,
        json!({"stop": {"not_sent": "pre_stop_hook"}, "orphans_reaped": 0}),
        &out,
    );
}

/// The pre-stop hook was cancelled at the grace deadline after about 1 s,
/// and no hook failed; returns the exit record.
fn cancelled_at_the_grace_deadline(out: &Output) -> Value {
    let records = out.records();
    assert!(
        records
            .all("hook_ended")
            .iter()
            .all(|r| r["outcome"] != "failed"),
        "{out}"
    );
    let exit = records.exit().clone();
    assert_fields(
        &exit,
        json!({"hooks": [{"hook": "pre-stop", "outcome": "cancelled", "reason": "grace_deadline"}]}),
        out,
    );
    let ran = exit["hooks"][0]["duration"].as_f64().unwrap();
    assert!((1.0..2.0).contains(&ran), "{exit}");
    exit
}

// ---------------------------------------------------------------------------
// Hooks that misbehave
// ---------------------------------------------------------------------------

#[test]
fn fork_bomb_in_a_hook_is_contained_by_the_grace_deadline() {
    let _cpu = heavy();
    let cg = match PidsCgroup::create(50) {
        Ok(cg) => cg,
        Err(why) => {
            skip(
                "fork_bomb_in_a_hook",
                &format!("cannot make a pids cgroup: {why}"),
            );
            return;
        }
    };
    let dir = TempDir::new("forkbomb");
    let out = dir.join("counts");
    // vigil (and so everything it starts) lives in the pids cgroup.
    let script = format!(
        "echo $$ > '{}/cgroup.procs' && exec unshare --pid --fork --mount-proc -- \"$@\"",
        cg.path.display()
    );
    let v = Vigil::wrapped(&["sh", "-c", &script, "sh"]).json().args([
        "-v",
        "--grace-period",
        "2s",
        "--pre-stop",
        "sh -c 'b() { b | b & }; b; exec sleep 1000'",
    ]);
    let run = start_counter(v, &out);
    let vp = run.vigil_pid();
    assert!(
        cg.procs().contains(&vp),
        "vigil is not in the pids cgroup {}",
        cg.path.display()
    );
    let t = Instant::now();
    run.signal(libc::SIGTERM);
    // The bomb hits the limit...
    let hit = wait_until(Duration::from_secs(2), || cg.max_hits() > 0);
    // ... and vigil still forwards signals during it.
    if alive(vp) && t.elapsed() < Duration::from_millis(1500) {
        assert_forwards(&run, &out, libc::SIGUSR1);
    }
    let out = run.wait(TIMEOUT);
    let took = t.elapsed();
    no_panic(&out);
    eprintln!(
        "fork bomb: stop took {took:?}, status {:?}, pids.max hit {} times; {}",
        out.status,
        cg.max_hits(),
        out.records()
            .0
            .iter()
            .filter(|r| r["level"] == "warning")
            .map(|r| r["msg"].to_string())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    assert!(
        hit,
        "the fork bomb never hit pids.max: was it a bomb?\n{out}"
    );
    assert!(
        took < Duration::from_secs(5),
        "the stop took {took:?} with a 2s grace period\n{out}"
    );
    assert!(
        matches!(out.status, Exit::Code(137) | Exit::Code(143)),
        "{out}"
    );
    let records = out.records();
    let exit = records.exit();
    assert_eq!(exit["level"], "warning", "{out}");
    assert_eq!(
        exit["hooks"][0]["hook"], "pre-stop",
        "the pre-stop hook is not reported\n{out}"
    );
    assert!(
        wait_until(Duration::from_secs(5), || cg.procs().is_empty()),
        "processes left in the cgroup after vigil exited: {:?}",
        cg.procs()
    );
}

#[test]
fn hooks_that_close_their_stdio() {
    let _cpu = timing();
    let dir = TempDir::new("hookstdio");
    let out = dir.join("counts");
    let v = Vigil::pid1().json().args([
        "-v",
        "--post-start",
        "sh -c 'exec 0<&- 1>&- 2>&-; echo lost; echo lost >&2; sleep 0.2'",
        "--pre-stop",
        "sh -c 'exec 0<&- 1>&- 2>&-; echo lost; echo lost >&2; exit 3'",
    ]);
    let run = start_counter(v, &out);
    wait_hook_succeeded(&run, "post-start");
    assert_forwards(&run, &out, libc::SIGUSR1);
    let (out, took) = timed_stop(run);
    no_panic(&out);
    assert_eq!(out.status, Exit::Code(143), "{out}");
    let records = out.records();
    let failed: Vec<&Value> = records
        .all("hook_ended")
        .into_iter()
        .filter(|r| r["hook"] == "pre-stop")
        .collect();
    assert_eq!(failed.len(), 1, "{out}");
    assert_fields(
        failed[0],
        json!({"outcome": "failed", "ending": {"code": 3}}),
        &out,
    );
    // vigil's own stderr is untouched by what the hooks did to theirs.
    assert_eq!(
        records.exit()["level"],
        "warning",
        "no exit report after the hooks closed their stdio\n{out}"
    );
    assert!(took < Duration::from_secs(5), "stop took {took:?}\n{out}");
}

#[test]
fn pre_stop_hook_that_never_exits_ends_at_the_grace_deadline() {
    let _cpu = timing();
    let dir = TempDir::new("hooknever");
    let out = dir.join("counts");
    let v = Vigil::pid1().json().args([
        "--grace-period",
        "1s",
        "--pre-stop-timeout",
        "1m",
        "--pre-stop",
        "sleep 1000",
    ]);
    let run = start_counter(v, &out);
    // The stop signal was never forwarded (pre-stop never finished, and may
    // run longer than the grace period): the child got SIGKILL at the
    // deadline.
    let out = stop_at_a_1s_deadline(run, 137, "grace period", Duration::from_secs(4));
    let child = out.records().one("grace_deadline")["killed"].clone();
    assert!(!pids_of(&child).is_empty(), "{out}");
    // vigil ended the hook at the deadline: cancelled, not failed.
    cancelled_at_the_grace_deadline(&out);
}

#[test]
fn post_start_hook_that_never_exits_times_out() {
    let _cpu = timing();
    let dir = TempDir::new("poststartnever");
    let out = dir.join("counts");
    let v = Vigil::pid1().json().args([
        "--post-start-timeout",
        "500ms",
        "--post-start",
        "sleep 1000",
    ]);
    let t = Instant::now();
    let run = start_counter(v, &out);
    let out = run.wait(TIMEOUT);
    let took = t.elapsed();
    no_panic(&out);
    // A failed post-start stops the container as if SIGTERM had come.
    assert_eq!(out.status, Exit::Code(143), "{out}");
    assert!(took < Duration::from_secs(5), "took {took:?}\n{out}");
    let records = out.records();
    assert_fields(
        records.one("post_start_timed_out"),
        json!({"level": "warning", "timeout": 0.5}),
        &out,
    );
    assert_fields(
        records.one("hook_ended"),
        json!({"hook": "post-start", "outcome": "failed", "reason": "timed_out"}),
        &out,
    );
}

#[test]
fn pre_stop_hook_that_ignores_sigterm_ends_at_the_grace_deadline() {
    let _cpu = timing();
    let dir = TempDir::new("hookterm");
    let out = dir.join("counts");
    let v = Vigil::pid1().json().args([
        "--grace-period",
        "1s",
        "--pre-stop-timeout",
        "1m",
        "--pre-stop",
        "sh -c 'trap \"\" TERM; kill -TERM $$; exec sleep 1000'",
    ]);
    let run = start_counter(v, &out);
    let out = stop_at_a_1s_deadline(run, 137, "grace period", Duration::from_secs(4));
    // vigil ended the hook at the deadline: cancelled, not failed.
    cancelled_at_the_grace_deadline(&out);
}

#[test]
fn hook_leftover_that_ignores_sigterm_is_killed_at_the_drain_timeout() {
    let _cpu = timing();
    let dir = TempDir::new("hookleft");
    let out = dir.join("counts");
    let v = Vigil::pid1().json().args([
        "-v",
        "--drain-timeout",
        "1s",
        "--post-start",
        "sh -c 'trap \"\" TERM; sleep 1000 & exit 0'",
    ]);
    let run = start_counter(v, &out);
    wait_hook_succeeded(&run, "post-start");
    let out = stop_at_a_1s_deadline(run, 143, "drain timeout", Duration::from_secs(4));
    let killed = out.records().one("drain_killed").clone();
    assert_eq!(killed["cause"], "drain_timeout", "{out}");
    assert_eq!(
        names_of(&killed["killed"]),
        ["sleep 1000"],
        "the leftover that ignored SIGTERM is not reported\n{out}"
    );
}

/// A hook whose program cannot run (misspelt, not executable) is said when
/// the container starts, not only when the hook's time comes.
#[test]
fn a_hook_program_that_cannot_run_is_said_at_start() {
    let dir = TempDir::new("hookcheck");
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, "not a program\n").unwrap();
    let v = Vigil::pid1()
        .json()
        .args(["--pre-stop", "drian-connections now", "--post-start"])
        .arg(&notes);
    // The post-start hook fails at once and stops the child: the warnings
    // must come before that, at start.
    let out = run_sh(v, &dir, "exec sleep 1000");
    no_panic(&out);
    let records = out.records();
    let first_failure = records
        .0
        .iter()
        .position(|r| r["event"] == "hook_ended" && r["outcome"] == "failed")
        .unwrap_or_else(|| panic!("no hook failed\n{out}"));
    let at_start = Records(records.0[..first_failure].to_vec());
    let unrunnable = at_start.all("hook_unrunnable");
    for (hook, program, why) in [
        (
            "pre-stop",
            "drian-connections".to_string(),
            "it is not in PATH (",
        ),
        (
            "post-start",
            notes.display().to_string(),
            "it is not an executable file",
        ),
    ] {
        let said = unrunnable
            .iter()
            .find(|r| r["hook"] == hook)
            .unwrap_or_else(|| panic!("no hook_unrunnable for {hook} at start\n{out}"));
        assert_fields(said, json!({"level": "warning", "program": program}), &out);
        assert!(said["error"].as_str().unwrap().starts_with(why), "{said}");
    }
}

/// Without a grace period, a child still running 5 s after the stop began
/// is named at the default verbosity, with the pre-stop hook it waits for,
/// before `docker stop`'s SIGKILL at 10 s; then the hook is killed and the
/// child gets its SIGTERM.
#[test]
fn a_stop_still_waiting_after_5s_says_what_runs() {
    let _cpu = timing();
    let dir = TempDir::new("stillrunning");
    let v = Vigil::pid1().json().args(["--pre-stop", "sleep 30"]);
    let run = start_sh(v, &dir, ": > ready; exec sleep 1000");
    let child = nspid(run.child_pid()).last().copied().unwrap();
    let (out, took) = signal_timed(run, libc::SIGTERM);
    assert_eq!(out.code(), Some(143), "{out}");
    assert_between(
        took,
        Duration::from_millis(4900),
        Duration::from_secs(9),
        "vigil",
        &out,
    );
    let records = out.records();
    let still = records.one("still_running");
    assert_fields(
        still,
        json!({
            "level": "warning",
            "signal": "SIGTERM",
            "after": 5,
            "running": [{"pid": child, "name": "sleep 1000", "state": "sleeping"}],
        }),
        &out,
    );
    // The pre-stop hook it waits for, by pid, which is then killed.
    let hook = &records.one("pre_stop_timed_out")["pid"];
    assert!(hook.is_number(), "{out}");
    assert_eq!(&still["pre_stop_hook"], hook, "{out}");
}

/// The seeds' silent 137: a bash wrapper with a TERM trap waits for its
/// foreground job, which never got the SIGTERM. Before the grace deadline
/// vigil says so, naming the shell and its job, and how to fix it; with
/// `-g` the job gets the signal too and the stop is fast.
#[test]
fn a_shell_waiting_for_its_job_is_named_with_the_fix() {
    let _cpu = timing();
    let wrapper = "trap 'echo got TERM' TERM; sleep 1000; echo after";
    for pid1 in [true, false] {
        let dir = TempDir::new("wrapper");
        let v = if pid1 { Vigil::pid1() } else { Vigil::plain() };
        let run = v
            .json()
            .cwd(dir.path())
            .args(["--grace-period", "4s", "--", "bash", "-c", wrapper])
            .spawn();
        waits_for_its_job(&run);
        let (out, took) = signal_timed(run, libc::SIGTERM);
        assert_eq!(out.code(), Some(137), "{out}");
        assert_between(
            took,
            Duration::from_secs(4),
            Duration::from_secs(9),
            "vigil",
            &out,
        );
        let records = out.records();
        let still = records.one("still_running");
        assert_fields(
            still,
            json!({"signal": "SIGTERM", "after": 2, "shell": {"jobs": [{"name": "sleep 1000"}]}}),
            &out,
        );
        let shell = still["shell"]["name"].as_str().unwrap();
        assert!(shell.starts_with("bash -c trap"), "{still}");
        // The fixes, in the words users read.
        let msg = still["msg"].as_str().unwrap();
        assert!(msg.contains("`exec`") && msg.contains("-g"), "{msg}");
    }
    let dir = TempDir::new("wrapperg");
    let run = Vigil::pid1()
        .json()
        .cwd(dir.path())
        .args(["-g", "--grace-period", "4s", "--", "bash", "-c", wrapper])
        .spawn();
    waits_for_its_job(&run);
    let (out, took) = signal_timed(run, libc::SIGTERM);
    assert!(took < Duration::from_secs(2), "took {took:?}\n{out}");
    assert!(out.stdout.contains("got TERM"), "{out}");
    assert!(!out.records().has("still_running"), "{out}");
}

/// Waits until the child, a bash wrapper, has set its trap and runs its
/// foreground job, `sleep`.
fn waits_for_its_job(run: &Running) {
    let bash = run.child_pid();
    assert!(
        wait_until(TIMEOUT, || children(bash)
            .iter()
            .any(|&p| comm(p).as_deref() == Some("sleep"))),
        "the wrapper never started its job\n{}",
        run.describe()
    );
}

// ---------------------------------------------------------------------------
// --timeout
// ---------------------------------------------------------------------------

/// `--timeout`: the stop sequence as for SIGTERM, then grace and drain end
/// a background process that ignores SIGTERM; the status is 124 and the
/// report says the timeout did it. As PID 1 and not; flag and variable.
#[test]
fn timeout_stops_a_hanging_job_with_124() {
    let _cpu = timing();
    for (v, via) in [
        (Vigil::pid1(), Via::Flag),
        (Vigil::plain(), Via::Flag),
        (Vigil::plain(), Via::Env),
    ] {
        let dir = TempDir::new("timeout");
        let v = opt(v.json(), via, "--timeout", "1s").args(["--drain-timeout", "1s"]);
        let t0 = Instant::now();
        let run = spawn_sh(
            v,
            &dir,
            "(trap '' TERM; : > trapped; exec sleep 1000) & echo $! > bg; \
             while [ ! -e trapped ]; do sleep 0.01; done; exec sleep 999",
        );
        let is_pid1 = run.is_pid1();
        assert!(
            wait_for_file(&dir.join("bg"), TIMEOUT),
            "{}",
            run.describe()
        );
        let bg: i32 = read_trimmed(&dir.join("bg")).parse().unwrap();
        let (out, took) = wait_timed(run, t0);
        assert_eq!(out.code(), Some(124), "{via:?}\n{out}");
        assert_between(
            took,
            Duration::from_secs(2),
            Duration::from_secs(10),
            "vigil",
            &out,
        );
        assert_fields(
            out.records().exit(),
            json!({
                "level": "warning",
                "status": 124,
                "timeout": true,
                "stop": {"cause": "timeout", "timeout": 1},
                "drain": {"kill_cause": "drain_timeout"},
            }),
            &out,
        );
        if !is_pid1 {
            assert!(
                wait_until(TIMEOUT, || !alive(bg)),
                "the background process outlived vigil\n{out}"
            );
        }
    }
}

/// A job that stops itself (`kill -STOP $$`), run as a CI job would run it
/// (not PID 1, stdin /dev/null, stdout a pipe) and as PID 1: nothing above
/// vigil could resume it, so vigil does not stop with it, and `--timeout`
/// still ends it: SIGTERM with SIGCONT, status 124, within the timeout and
/// the grace period.
#[test]
fn timeout_ends_a_job_that_stopped_itself() {
    let _cpu = timing();
    for v in [Vigil::plain(), Vigil::pid1()] {
        let dir = TempDir::new("stopped");
        let v = v
            .json()
            .args(["--timeout", "2s", "--grace-period", "1s"])
            .stdin(std::process::Stdio::null());
        let t0 = Instant::now();
        let run = spawn_sh(v, &dir, "kill -STOP $$; echo resumed");
        let (out, took) = wait_timed(run, t0);
        assert_eq!(out.code(), Some(124), "{out}");
        assert_between(
            took,
            Duration::from_secs(2),
            Duration::from_secs(3) + Duration::from_secs(5),
            "vigil",
            &out,
        );
        assert_fields(
            out.records().one("timeout_passed"),
            json!({"level": "warning", "timeout": 2}),
            &out,
        );
    }
}

/// `--timeout` alone (no `--grace-period`) still ends a job that ignores
/// SIGTERM: the stop it starts gets docker stop's 10 s, and the report says
/// so.
#[test]
fn timeout_without_a_grace_period_still_ends_a_job_that_ignores_sigterm() {
    let _cpu = timing();
    let dir = TempDir::new("timeoutgrace");
    let v = Vigil::plain().json().args(["--timeout", "1s"]);
    let t0 = Instant::now();
    let run = spawn_sh(v, &dir, "trap '' TERM; while :; do sleep 1; done");
    let (out, took) = wait_timed(run, t0);
    assert_eq!(out.code(), Some(124), "{out}");
    assert_between(
        took,
        Duration::from_secs(11),
        Duration::from_secs(11) + Duration::from_secs(8),
        "vigil",
        &out,
    );
    let exit = out.records().exit().clone();
    assert_fields(
        &exit,
        json!({
            "level": "warning",
            "stop": {"cause": "timeout", "timeout": 1, "grace_period": 10, "sent": "SIGTERM"},
        }),
        &out,
    );
    assert!(!pids_of(&exit["grace_kills"]).is_empty(), "{exit}");
}

/// A job that ends before its timeout keeps its own status.
#[test]
fn a_job_that_ends_before_its_timeout_keeps_its_status() {
    let _cpu = timing();
    let t0 = Instant::now();
    let out = Vigil::plain()
        .args(["--timeout", "30s", "--", "sh", "-c", "exit 3"])
        .run();
    assert_eq!(out.code(), Some(3), "{out}");
    assert!(t0.elapsed() < Duration::from_secs(10), "{out}");
    let out = Vigil::pid1().args(["--timeout", "30s", "--", "true"]).run();
    assert_eq!(out.code(), Some(0), "{out}");
    assert_eq!(out.stderr, "", "{out}");
}
