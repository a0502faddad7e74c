//! Issue 3: the lifecycle. post-start and pre-stop hooks, `--pre-stop-sleep`,
//! the grace period, the drain, `--rewrite`, each option also through its
//! `VIGIL_*` variable, and the usage errors for bad values. vigil runs as
//! PID 1 of a fresh PID namespace (see tests/common/mod.rs) unless a test
//! says otherwise.
//!
//! Timing bounds are generous (these machines are small and busy): "at least
//! 1 s" is exact (vigil must wait), upper bounds leave seconds of slack.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Upper bound for something that should take about a second.
const ABOUT_1S_MAX: Duration = Duration::from_secs(5);
const ONE_SECOND: Duration = Duration::from_secs(1);

// ---------------------------------------------------------------------------
// Setup shared by the tests
// ---------------------------------------------------------------------------

/// How a lifecycle option is given to vigil.
#[derive(Clone, Copy, Debug)]
enum Via {
    /// `--grace-period 1s`
    Flag,
    /// `VIGIL_GRACE_PERIOD=1s`
    Env,
}

/// The variable that stands for a long option: `--grace-period` ->
/// `VIGIL_GRACE_PERIOD`.
fn var_of(flag: &str) -> String {
    format!(
        "VIGIL_{}",
        flag.trim_start_matches("--")
            .to_uppercase()
            .replace('-', "_")
    )
}

/// Adds a lifecycle option, on the command line or through its variable.
fn opt(v: Vigil, via: Via, flag: &str, value: &str) -> Vigil {
    match via {
        Via::Flag => v.arg(flag).arg(value),
        Via::Env => v.env(var_of(flag), value),
    }
}

/// A shell child for `start_sh`: records when SIGTERM reaches it (`date
/// +%s%N` into `term_at`, then exits 0), writes its pid (as the namespace
/// sees it) to `pid`, creates `ready`, and waits.
const TERM_RECORDER: &str = "trap 'date +%s%N > term_at; exit 0' TERM; \
     date +%s%N > started; echo $$ > pid; : > ready; sleep 1000 & wait";

/// Starts vigil with `sigrec --out DIR/rec ARGS...` as the child, in `dir`,
/// and waits until its handlers (and those of a `--fork` grandchild
/// recording into DIR/rec2) are in place. Returns the run and the record
/// file.
fn start_rec(v: Vigil, dir: &TempDir, rec_args: &[&str]) -> (Running, PathBuf) {
    let out = dir.join("rec");
    let run = spawn_sigrec(v.cwd(dir.path()), &out, rec_args);
    if rec_args.contains(&"--fork") {
        wait_ready(&run, &dir.join("rec2"));
    }
    (run, out)
}

/// Waits for vigil to end and returns its output and the time from `since`
/// to the moment it ended (measured before the output is collected).
fn wait_timed(mut run: Running, since: Instant) -> (Output, Duration) {
    wait_until(TIMEOUT, || run.try_exit().is_some());
    let took = since.elapsed();
    (run.wait(TIMEOUT), took)
}

/// Sends `sig` to vigil and waits for it to end: output and time taken.
fn signal_timed(run: Running, sig: i32) -> (Output, Duration) {
    let t0 = Instant::now();
    run.signal(sig);
    wait_timed(run, t0)
}

/// A `date +%s%N` timestamp written to a file, in nanoseconds.
fn stamp(path: &Path) -> u128 {
    let text = read_trimmed(path);
    text.parse()
        .unwrap_or_else(|_| panic!("{} holds no timestamp: {text:?}", path.display()))
}

/// The host pid of the process that is `ns_pid` in vigil's namespace.
fn host_pid(run: &Running, ns_pid: i32) -> Option<i32> {
    pidns_members(run.vigil_pid())
        .into_iter()
        .find(|&p| nspid(p).last() == Some(&ns_pid))
}

fn assert_between(took: Duration, min: Duration, max: Duration, what: &str, out: &Output) {
    assert!(
        took >= min && took < max,
        "{what} took {took:?}, expected between {min:?} and {max:?}\n{out}"
    );
}

// ---------------------------------------------------------------------------
// pre-stop
// ---------------------------------------------------------------------------

/// The pre-stop hook runs to completion before the child gets SIGTERM, and
/// sees VIGIL_HOOK, VIGIL_SIGNAL and VIGIL_CHILD_PID.
fn pre_stop_runs_before_sigterm(via: Via) {
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
    for (hook, why) in [
        ("sh -c 'exit 7'", "exited with code 7"),
        ("/nonexistent/pre-stop-hook", "No such file or directory"),
    ] {
        let dir = TempDir::new("prestopfail");
        let v = Vigil::pid1().args(["--pre-stop", hook]);
        let (run, rec) = start_rec(v, &dir, &["--exit-on", "15"]);
        let (out, _) = signal_timed(run, libc::SIGTERM);
        assert_eq!(out.code(), Some(0), "hook {hook}: {out}");
        assert!(
            read_signals(&rec).contains(&libc::SIGTERM),
            "hook {hook}: the child never got SIGTERM\n{out}"
        );
        let line = out
            .stderr_lines()
            .into_iter()
            .find(|l| l.contains("pre-stop hook failed"))
            .unwrap_or_else(|| panic!("hook {hook}: no failure reported\n{out}"));
        assert!(
            line.starts_with("vigil: warning: ") && line.contains(why),
            "hook {hook}: {line}"
        );
    }
}

/// `--pre-stop-sleep 1s` delays the forward by at least 1 s, with a PATH in
/// which there is no `sleep` (nor anything else): vigil waits by itself.
fn pre_stop_sleep_delays_the_forward(via: Via) {
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
        pid1.env("PATH", empty.path()).arg("-v"),
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
    assert!(
        out.stderr
            .contains("waiting 1.00s before forwarding SIGTERM"),
        "{out}"
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

// ---------------------------------------------------------------------------
// post-start
// ---------------------------------------------------------------------------

/// The post-start hook runs while the child runs: it waits for the child's
/// `ready` file (which it could never see if vigil started the child only
/// after the hook), then checks that the child is alive.
fn post_start_runs_with_the_child(via: Via) {
    let dir = TempDir::new("poststart");
    let hook =
        "sh -c 'i=0; while [ ! -e ready ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done; \
                date +%s%N > hook_at; env | grep ^VIGIL_ | sort > hook_env; \
                kill -0 $VIGIL_CHILD_PID && echo running > hook_saw'";
    let v = opt(Vigil::pid1().arg("-v"), via, "--post-start", hook);
    let run = start_sh(v, &dir, TERM_RECORDER);
    assert!(
        wait_for_file(&dir.join("hook_saw"), TIMEOUT),
        "the post-start hook did not see the child running\n{}",
        run.describe()
    );
    assert!(
        run.wait_stderr("post-start hook succeeded", TIMEOUT),
        "{}",
        run.describe()
    );
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
    assert!(
        out.stderr
            .contains("vigil: warning: post-start hook failed: exited with code 3")
            && out.stderr.contains("stopping as if SIGTERM had arrived"),
        "{out}"
    );
}

/// A post-start hook still running at `--post-start-timeout 1s` has failed:
/// after about 1 s the child gets SIGTERM and vigil exits 143.
fn hanging_post_start_times_out(via: Via) {
    let dir = TempDir::new("poststarthang");
    let v = opt(Vigil::pid1(), via, "--post-start", "sleep 1000");
    let v = opt(v, via, "--post-start-timeout", "1s");
    let t0 = Instant::now();
    let run = v.cwd(dir.path()).args(["--", "sleep", "1000"]).spawn();
    let (out, took) = wait_timed(run, t0);
    assert_eq!(out.code(), Some(143), "{out}");
    assert_between(took, ONE_SECOND, ABOUT_1S_MAX, "vigil", &out);
    assert!(
        out.stderr
            .contains("vigil: warning: post-start hook failed: timed out after 1."),
        "{out}"
    );
}

#[test]
fn hanging_post_start_fails_after_its_timeout() {
    hanging_post_start_times_out(Via::Flag);
}

#[test]
fn post_start_timeout_through_vigil_post_start_timeout() {
    hanging_post_start_times_out(Via::Env);
}

// ---------------------------------------------------------------------------
// Grace period
// ---------------------------------------------------------------------------

/// `--grace-period 1s` and a child that ignores SIGTERM: vigil SIGKILLs it
/// after 1 s, exits 137, and the log names the survivor (pid and name).
fn grace_period_kills_the_survivor(via: Via) {
    let dir = TempDir::new("grace");
    let v = opt(Vigil::pid1(), via, "--grace-period", "1s");
    let run = start_sh(v, &dir, TERM_IGNORER);
    let child = read_trimmed(&dir.join("pid"));
    let (out, took) = signal_timed(run, libc::SIGTERM);
    assert_eq!(out.code(), Some(137), "{out}");
    assert_between(took, ONE_SECOND, ABOUT_1S_MAX, "vigil", &out);
    let survivor = format!("vigil: warning: grace period (1.00s) over: SIGKILL to {child} (sleep)");
    assert!(
        out.stderr.lines().any(|l| l.starts_with(&survivor)),
        "no line starting {survivor:?}\n{out}"
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

/// The grace period also bounds a pre-stop hook that never ends.
#[test]
fn grace_period_bounds_a_pre_stop_hook_that_never_ends() {
    let dir = TempDir::new("gracehook");
    let run = Vigil::pid1()
        .cwd(dir.path())
        .args([
            "--grace-period",
            "1s",
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
    // vigil ended the hook at the deadline: it was cancelled, not failed
    // (issue 11), and the exit report says so, whichever of the hook and the
    // child vigil happens to reap first.
    assert!(!out.stderr.contains("hook failed"), "{out}");
    let report = out
        .stderr
        .lines()
        .find(|l| l.contains("exit report: "))
        .unwrap_or_else(|| panic!("no exit report\n{out}"));
    assert!(
        report.contains("; pre-stop hook cancelled at the grace deadline after 1.")
            && report.ends_with("orphans reaped: 0"),
        "the exit report misses the pre-stop hook (or counts it as an orphan): {report}\n{out}"
    );
}

// ---------------------------------------------------------------------------
// Drain
// ---------------------------------------------------------------------------
//
// The child is `sigrec --fork rec2 --exit-on 10`: it forks a grandchild that
// records every signal into rec2, and exits 0 on SIGUSR1 (which vigil
// forwards to the child only). The grandchild is then an orphan of vigil's.
// With `--exit-on 15` it exits after recording SIGTERM (a SIGTERM handler
// that writes a file); without, it survives SIGTERM.

/// Child exits on SIGUSR1 and leaves an orphan (see above).
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
    let dir = TempDir::new("drain");
    let v = Vigil::pid1().args(["-v", "--drain-timeout", "10s"]);
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
    assert!(out.stderr.contains("draining: SIGTERM to"), "{out}");
}

/// An orphan that survives SIGTERM is SIGKILLed after `--drain-timeout 1s`,
/// and nothing is left of the namespace.
fn drain_timeout_kills_the_orphan(via: Via) {
    let dir = TempDir::new("draintimeout");
    let v = opt(Vigil::pid1(), via, "--drain-timeout", "1s");
    let run = start_with_orphan(v, &dir, false);
    let orphan = orphan_pid(&dir);
    let orphan_host = host_pid(&run, orphan).expect("the orphan's host pid");
    let (out, took) = signal_timed(run, libc::SIGUSR1);
    assert_eq!(out.code(), Some(0), "{out}");
    assert_between(took, ONE_SECOND, ABOUT_1S_MAX, "vigil", &out);
    assert!(
        read_signals(&dir.join("rec2")).contains(&libc::SIGTERM),
        "the orphan did not get SIGTERM first\n{out}"
    );
    let killed =
        format!("vigil: warning: drain timeout (1.00s) over: SIGKILL to {orphan} (sigrec)");
    assert!(
        out.stderr.lines().any(|l| l.starts_with(&killed)),
        "no line starting {killed:?}\n{out}"
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
    /// Runs `sh -c SCRIPT` under vigil with `extra` options, waits until a
    /// `sleep` runs in the namespace, sends SIGTERM: output and stop time.
    fn stop(extra: &[&str], script: &str) -> (Output, Duration, TempDir) {
        let dir = TempDir::new("stoptime");
        let run = spawn_sh(Vigil::pid1().arg("-vv").args(extra), &dir, script);
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
    eprintln!("stop time of sh -c '{PLAIN}' after SIGTERM: default drain (2s) {t_drain:?}, --drain-timeout 0 {t_zero:?}");
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
    assert!(
        drained
            .stderr
            .lines()
            .any(|l| l.contains("reaped pid") && l.contains("which was killed by SIGTERM")),
        "no sleep reaped after SIGTERM in the drain\n{drained}"
    );
    assert!(
        !drained.stderr.contains("SIGKILL"),
        "the drain should not need SIGKILL\n{drained}"
    );
    assert_eq!(
        read_trimmed(&d3.join("bg_term")),
        "TERM",
        "the background shell did not get SIGTERM in the drain\n{trap_drained}"
    );
}

// ---------------------------------------------------------------------------
// --rewrite
// ---------------------------------------------------------------------------

/// Sends USR1, USR2 and then TERM to vigil, and checks what the child
/// (sigrec) saw: USR1 (unless `usr1_dropped`), USR2, and `term_as` instead
/// of SIGTERM.
fn check_rewrites(v: Vigil, term_as: i32, usr1_dropped: bool) {
    let dir = TempDir::new("rewrite");
    let exit_on = term_as.to_string();
    let (run, rec) = start_rec(v.arg("-v"), &dir, &["--exit-on", &exit_on]);
    run.signal(libc::SIGUSR1);
    run.signal(libc::SIGUSR2);
    assert!(
        wait_for_signal(&rec, libc::SIGUSR2, TIMEOUT),
        "USR2 never arrived\n{}",
        run.describe()
    );
    // vigil handles USR1 before USR2 (sent first, lower number), so by now
    // a USR1 that was not dropped would be there.
    assert_eq!(
        read_signals(&rec).contains(&libc::SIGUSR1),
        !usr1_dropped,
        "USR1 seen by the child: {:?}\n{}",
        read_signals(&rec),
        run.describe()
    );
    let (out, _) = signal_timed(run, libc::SIGTERM);
    assert_eq!(out.code(), Some(0), "{out}");
    let seen = read_signals(&rec);
    assert!(seen.contains(&term_as), "the child saw {seen:?}\n{out}");
    if term_as != libc::SIGTERM {
        assert!(
            !seen.contains(&libc::SIGTERM),
            "SIGTERM was not rewritten: the child saw {seen:?}\n{out}"
        );
    }
    if usr1_dropped {
        assert!(out.stderr.contains("dropped SIGUSR1 (--rewrite)"), "{out}");
    }
}

#[test]
fn rewrite_term_to_quit() {
    check_rewrites(
        Vigil::pid1().args(["--rewrite", "TERM:QUIT"]),
        libc::SIGQUIT,
        false,
    );
}

#[test]
fn rewrite_usr1_to_0_drops_it() {
    check_rewrites(
        Vigil::pid1().args(["--rewrite", "USR1:0"]),
        libc::SIGTERM,
        true,
    );
}

#[test]
fn rewrite_through_vigil_rewrite() {
    check_rewrites(
        Vigil::pid1().env("VIGIL_REWRITE", "SIGTERM:3,USR1:0"),
        libc::SIGQUIT,
        true,
    );
}

// ---------------------------------------------------------------------------
// Bad values
// ---------------------------------------------------------------------------

/// Every bad value exits 2 with one line on stderr naming it, and the child
/// never starts.
#[test]
fn bad_values_exit_2_and_never_start_the_child() {
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a [&'a str]);
    let cases: &[Case] = &[
        (&["--grace-period", "5x"], &[], &["'5x'"]),
        (&["--drain-timeout", "5x"], &[], &["'5x'"]),
        (&["--timeout", "later"], &[], &["'later'"]),
        (&[], &[("VIGIL_TIMEOUT", "1y")], &["VIGIL_TIMEOUT", "'1y'"]),
        (&["--pre-stop-sleep", "soon"], &[], &["'soon'"]),
        (&["--post-start-timeout=-1s"], &[], &["'-1s'"]),
        (&["--rewrite", "FOO:TERM"], &[], &["FOO:TERM"]),
        (&["--rewrite", "TERM:"], &[], &["'TERM:'"]),
        (&["--rewrite", "99:1"], &[], &["99:1"]),
        (&["--pre-stop", "sh -c 'oops"], &[], &["sh -c 'oops"]),
        (&["--pre-stop", ""], &[], &["''", "empty"]),
        (&["--post-start", "sh -c 'oops"], &[], &["sh -c 'oops"]),
        (&["--post-start", " "], &[], &["' '", "empty"]),
        (
            &[],
            &[("VIGIL_GRACE_PERIOD", "5x")],
            &["VIGIL_GRACE_PERIOD", "'5x'"],
        ),
        (
            &[],
            &[("VIGIL_DRAIN_TIMEOUT", "5x")],
            &["VIGIL_DRAIN_TIMEOUT", "'5x'"],
        ),
        (
            &[],
            &[("VIGIL_PRE_STOP_SLEEP", "soon")],
            &["VIGIL_PRE_STOP_SLEEP", "'soon'"],
        ),
        (
            &[],
            &[("VIGIL_POST_START_TIMEOUT", "1.s")],
            &["VIGIL_POST_START_TIMEOUT", "'1.s'"],
        ),
        (
            &[],
            &[("VIGIL_REWRITE", "FOO:TERM")],
            &["VIGIL_REWRITE", "FOO"],
        ),
        (
            &[],
            &[("VIGIL_REWRITE", "TERM:")],
            &["VIGIL_REWRITE", "'TERM:'"],
        ),
        (
            &[],
            &[("VIGIL_REWRITE", "HUP:HUP,99:1")],
            &["VIGIL_REWRITE", "99"],
        ),
        (
            &[],
            &[("VIGIL_PRE_STOP", "sh -c 'oops")],
            &["VIGIL_PRE_STOP", "sh -c 'oops"],
        ),
        (
            &[],
            &[("VIGIL_POST_START", "sh -c 'oops")],
            &["VIGIL_POST_START", "sh -c 'oops"],
        ),
        // Empty means unset; blank is a value, and an empty command.
        (
            &[],
            &[("VIGIL_PRE_STOP", "  ")],
            &["VIGIL_PRE_STOP", "empty"],
        ),
    ];
    for (args, vars, needles) in cases {
        let dir = TempDir::new("bad");
        let mut v = Vigil::pid1().args(*args);
        for (k, val) in *vars {
            v = v.env(k, val);
        }
        let out = spawn_sh(v, &dir, ": > started").wait(TIMEOUT);
        let what = format!("{args:?} {vars:?}");
        let line = usage_error_line(&out, &what);
        // One level word, vigil's: clap's own `error: ` is not repeated.
        assert_eq!(line.matches("error:").count(), 1, "{what}: {line}");
        for needle in *needles {
            assert!(line.contains(needle), "{what}: {needle:?} not in {line}");
        }
        assert!(
            !dir.join("started").exists(),
            "{what}: the child ran although the usage was bad"
        );
    }
}

/// An empty `VIGIL_*` variable means "not set" (so `docker run -e VAR=` can
/// switch off what an image's ENV line switched on).
#[test]
fn empty_vigil_variables_mean_unset() {
    let dir = TempDir::new("emptyvars");
    let mut v = Vigil::pid1();
    for flag in [
        "--pre-stop",
        "--post-start",
        "--post-start-timeout",
        "--pre-stop-sleep",
        "--grace-period",
        "--drain-timeout",
        "--rewrite",
        "--timeout",
    ] {
        v = opt(v, Via::Env, flag, "");
    }
    let out = spawn_sh(v, &dir, ": > started").wait(TIMEOUT);
    assert_eq!(out.code(), Some(0), "{out}");
    assert!(dir.join("started").exists(), "{out}");
    assert_eq!(out.stderr, "", "{out}");
}

/// A post-start timeout with no post-start hook has nothing to time: vigil
/// says so once and runs the child as usual (it is not a usage error, so an
/// image's `ENV VIGIL_POST_START_TIMEOUT` survives `-e VIGIL_POST_START=`).
#[test]
fn post_start_timeout_without_a_hook_warns_and_runs() {
    let out = Vigil::pid1()
        .args(["--post-start-timeout", "1s", "--", "sh", "-c", "exit 3"])
        .run();
    assert_eq!(out.code(), Some(3), "{out}");
    let warnings: Vec<&str> = out
        .stderr_lines()
        .into_iter()
        .filter(|l| l.contains("post-start timeout is set, but no post-start hook"))
        .collect();
    assert_eq!(warnings.len(), 1, "{out}");
    assert!(warnings[0].starts_with("vigil: warning: "), "{out}");
}

// ---------------------------------------------------------------------------
// Issue 12: the stop sequence's edges and --timeout
// ---------------------------------------------------------------------------

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
        let v = opt(Vigil::pid1(), via, "--post-start", hook);
        let out = spawn_sh(v, &dir, &exits_on_term(child_code)).wait(TIMEOUT);
        assert_eq!(
            out.code(),
            Some(want),
            "{via:?}, child exits {child_code} on SIGTERM\n{out}"
        );
        assert!(
            out.stderr
                .contains("post-start hook failed: exited with code 4"),
            "{out}"
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
    let v = Vigil::pid1().args(["--post-start", "sleep 1000"]);
    let out = spawn_sh(v, &dir, "sleep 0.3; exit 0").wait(TIMEOUT);
    assert_eq!(out.code(), Some(0), "{out}");
    assert!(!out.stderr.contains("failed"), "{out}");
}

/// Runs vigil with /proc hidden (a tmpfs over it, in a mount namespace of
/// its own): vigil is not PID 1 and cannot list its descendants.
fn without_proc() -> Vigil {
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
    let dir = TempDir::new("noproc");
    let v = without_proc().args(["-v", "--drain-timeout", "1s"]);
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
    assert!(!out.stderr.contains("everything left"), "{out}");
    assert!(out.stderr.contains("/proc"), "{out}");
}

/// A stop signal during the drain hurries it: what is left gets SIGKILL at
/// once, rather than at a long drain timeout. As PID 1 and not, with
/// SIGTERM and SIGINT.
#[test]
fn a_stop_signal_during_the_drain_kills_what_is_left() {
    for (v, sig) in [
        (Vigil::pid1(), libc::SIGTERM),
        (Vigil::pid1(), libc::SIGINT),
        (Vigil::plain(), libc::SIGTERM),
    ] {
        let dir = TempDir::new("drainstop");
        let v = v.args(["-v", "--drain-timeout", "60s"]);
        let run = start_with_orphan(v, &dir, false);
        let orphan = orphan_pid(&dir);
        run.signal(libc::SIGUSR1);
        assert!(
            run.wait_stderr("draining: SIGTERM to", TIMEOUT),
            "{}",
            run.describe()
        );
        let t0 = Instant::now();
        let is_pid1 = run.is_pid1();
        let orphan_host = if is_pid1 {
            host_pid(&run, orphan)
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
        assert!(out.stderr.contains("during the drain"), "{out}");
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

/// After vigil gave its child the terminal, it takes the terminal back
/// before exiting, so the script that ran it can read from it again.
#[test]
fn the_calling_script_can_read_the_terminal_afterwards() {
    let sh = PtyShell::spawn(&[]);
    assert!(sh.wait_output(PTY_PROMPT, TIMEOUT), "{}", sh.output());
    sh.send(&format!(
        "sh -c '{} -- true; read x; echo \"got:$x\"'\n",
        vigil_bin().display()
    ));
    // Let vigil come and go before typing.
    std::thread::sleep(Duration::from_millis(500));
    sh.send("hello\n");
    assert!(
        sh.wait_output("got:hello", Duration::from_secs(10)),
        "the script could not read the terminal after vigil exited\n{}",
        sh.output()
    );
}

/// `--timeout`: the stop sequence as for SIGTERM, then grace and drain end
/// a background process that ignores SIGTERM; the status is 124 and the
/// report says the timeout did it. As PID 1 and not; flag and variable.
#[test]
fn timeout_stops_a_hanging_job_with_124() {
    for (v, via) in [
        (Vigil::pid1(), Via::Flag),
        (Vigil::plain(), Via::Flag),
        (Vigil::plain(), Via::Env),
    ] {
        let dir = TempDir::new("timeout");
        let v = opt(v, via, "--timeout", "1s").args(["--drain-timeout", "1s"]);
        let t0 = Instant::now();
        let run = spawn_sh(
            v,
            &dir,
            "(trap '' TERM; exec sleep 1000) & echo $! > bg; exec sleep 999",
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
        assert!(
            out.stderr.contains("vigil: warning: exit report:")
                && out.stderr.contains("--timeout (1.00s)"),
            "{out}"
        );
        if !is_pid1 {
            assert!(
                wait_until(TIMEOUT, || !alive(bg)),
                "the background process outlived vigil\n{out}"
            );
        }
    }
}

/// A job that ends before its timeout keeps its own status.
#[test]
fn a_job_that_ends_before_its_timeout_keeps_its_status() {
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
