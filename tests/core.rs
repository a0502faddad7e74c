//! Issue 2: vigil core, as PID 1 of a PID namespace and as a plain process.
//! Every test runs the real binary (see tests/common/mod.rs for the harness).

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::Duration;

const SIGRT_40: i32 = 40;
const SIGRT_MAX: i32 = 64;

/// vigil running `sigrec --out REC` (plus `rec_args`), recorder ready.
struct Rec {
    run: Running,
    out: PathBuf,
    dir: TempDir,
}

fn spawn_rec(v: Vigil, vigil_args: &[&str], rec_args: &[&str]) -> Rec {
    spawn_rec_in(TempDir::new("rec"), v, vigil_args, rec_args)
}

fn spawn_rec_in(dir: TempDir, v: Vigil, vigil_args: &[&str], rec_args: &[&str]) -> Rec {
    let out = dir.join("rec");
    let run = spawn_sigrec(v.args(vigil_args), &out, rec_args);
    Rec { run, out, dir }
}

fn assert_reaches_child(r: &Rec, sigs: &[i32]) {
    for &sig in sigs {
        r.run.signal(sig);
        assert!(
            wait_for_signal(&r.out, sig, TIMEOUT),
            "signal {sig} sent to vigil did not reach the child; child recorded {:?}\n{}",
            read_signals(&r.out),
            r.run.describe()
        );
    }
    let v = r.run.vigil_pid();
    assert!(
        alive(v),
        "vigil (pid {v}) is gone after forwarding {sigs:?}\n{}",
        r.run.describe()
    );
}

// ---------------------------------------------------------------------------
// Signal forwarding, as PID 1
// ---------------------------------------------------------------------------

#[test]
fn pid1_forwards_standard_signals_to_child() {
    let r = spawn_rec(Vigil::pid1(), &[], &[]);
    // The stop signals (TERM, INT) last: they start the stop sequence.
    assert_reaches_child(
        &r,
        &[
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGUSR1,
            libc::SIGUSR2,
            libc::SIGWINCH,
            libc::SIGTERM,
            libc::SIGINT,
        ],
    );
    // A second stop signal is forwarded at once too.
    let before = read_signals(&r.out)
        .iter()
        .filter(|&&s| s == libc::SIGTERM)
        .count();
    r.run.signal(libc::SIGTERM);
    assert!(
        wait_until(TIMEOUT, || read_signals(&r.out)
            .iter()
            .filter(|&&s| s == libc::SIGTERM)
            .count()
            > before),
        "second SIGTERM not forwarded; recorded {:?}\n{}",
        read_signals(&r.out),
        r.run.describe()
    );
}

#[test]
fn pid1_forwards_realtime_signals_and_34() {
    let r = spawn_rec(Vigil::pid1(), &[], &[]);
    assert_reaches_child(&r, &[34, SIGRT_40, SIGRT_MAX]);
}

#[test]
fn pid1_forwards_libc_reserved_signals_32_33() {
    let r = spawn_rec(Vigil::pid1(), &[], &[]);
    assert_reaches_child(&r, &[32, 33]);
}

#[test]
fn pid1_does_not_forward_ttin_ttou() {
    let r = spawn_rec(Vigil::pid1(), &[], &[]);
    r.run.signal(libc::SIGTTIN);
    r.run.signal(libc::SIGTTOU);
    // Fence: a realtime signal is dequeued after every pending standard
    // signal, so once it reached the child TTIN/TTOU would have been sent.
    r.run.signal(SIGRT_40);
    assert!(
        wait_for_signal(&r.out, SIGRT_40, TIMEOUT),
        "fence signal 40 not forwarded\n{}",
        r.run.describe()
    );
    thread::sleep(QUIET);
    let got = read_signals(&r.out);
    assert!(
        !got.contains(&libc::SIGTTIN) && !got.contains(&libc::SIGTTOU),
        "SIGTTIN/SIGTTOU reached the child: recorded {got:?}"
    );
    let v = r.run.vigil_pid();
    assert!(
        matches!(state(v), Some('S') | Some('R')),
        "vigil state {:?} after TTIN/TTOU",
        state(v)
    );
}

#[test]
fn pid1_child_has_its_own_process_group() {
    let r = spawn_rec(Vigil::pid1(), &[], &[]);
    let v = r.run.vigil_pid();
    let c = r.run.child_pid();
    let cs = stat(c).expect("child stat");
    assert_eq!(
        cs.pgrp, c,
        "child (pid {c}) is not the leader of its own process group: {cs:?}"
    );
    assert_ne!(
        cs.pgrp,
        stat(v).unwrap().pgrp,
        "child shares vigil's process group"
    );
}

// ---------------------------------------------------------------------------
// -g: the child's process group
// ---------------------------------------------------------------------------

/// vigil running a recorder that forked a recording grandchild in its group.
fn spawn_group(v: Vigil, vigil_args: &[&str]) -> (Rec, PathBuf) {
    let dir = TempDir::new("grp");
    let gc_out = dir.join("grandchild");
    let r = spawn_rec_in(dir, v, vigil_args, &["--fork", gc_out.to_str().unwrap()]);
    wait_ready(&r.run, &gc_out);
    let c = r.run.child_pid();
    let gcs = children(c);
    assert_eq!(
        gcs.len(),
        1,
        "expected one grandchild under {c}\n{}",
        r.run.describe()
    );
    assert_eq!(
        stat(gcs[0]).unwrap().pgrp,
        stat(c).unwrap().pgrp,
        "grandchild not in the child's group"
    );
    (r, gc_out)
}

#[test]
fn pid1_dash_g_reaches_grandchild_in_childs_group() {
    let (r, gc) = spawn_group(Vigil::pid1(), &["-g"]);
    r.run.signal(libc::SIGUSR1);
    assert!(
        wait_for_signal(&r.out, libc::SIGUSR1, TIMEOUT),
        "child missed USR1\n{}",
        r.run.describe()
    );
    assert!(
        wait_for_signal(&gc, libc::SIGUSR1, TIMEOUT),
        "with -g the grandchild in the child's group did not get USR1; recorded {:?}\n{}",
        read_signals(&gc),
        r.run.describe()
    );
}

#[test]
fn pid1_without_g_grandchild_is_not_signalled() {
    let (r, gc) = spawn_group(Vigil::pid1(), &[]);
    r.run.signal(libc::SIGUSR1);
    assert!(
        wait_for_signal(&r.out, libc::SIGUSR1, TIMEOUT),
        "child missed USR1\n{}",
        r.run.describe()
    );
    thread::sleep(QUIET);
    assert!(
        read_signals(&gc).is_empty(),
        "without -g the grandchild got {:?}",
        read_signals(&gc)
    );
}

#[test]
fn pid1_tini_kill_process_group_set_empty_acts_like_g() {
    let (r, gc) = spawn_group(Vigil::pid1().env("TINI_KILL_PROCESS_GROUP", ""), &[]);
    r.run.signal(libc::SIGUSR2);
    assert!(
        wait_for_signal(&gc, libc::SIGUSR2, TIMEOUT),
        "TINI_KILL_PROCESS_GROUP= (empty) did not send to the group; grandchild recorded {:?}\n{}",
        read_signals(&gc),
        r.run.describe()
    );
}

// ---------------------------------------------------------------------------
// Reaping
// ---------------------------------------------------------------------------

#[test]
fn pid1_reaps_10000_orphans_and_leaves_no_zombie() {
    let dir = TempDir::new("orphans");
    let done = dir.join("done");
    let run = Vigil::pid1()
        .args(["-w", "--"])
        .arg(test_program("orphans"))
        .args([
            "--count",
            "10000",
            "--burst",
            "200",
            "--hold-ms",
            "600000",
            "--done",
        ])
        .arg(&done)
        .spawn();
    assert!(
        wait_for_file(&done, Duration::from_secs(180)),
        "the orphan maker did not finish\n{}",
        run.describe()
    );
    let v = run.vigil_pid();
    let mut last = (0, 0);
    let clean = wait_until_every(Duration::from_secs(120), Duration::from_millis(100), || {
        let m = pidns_members(v);
        last = (m.len(), zombies_among(&m).len());
        last == (2, 0)
    });
    assert!(
        clean,
        "orphans not all reaped: {} processes left in the namespace, {} of them zombies (want vigil + maker, no zombie)",
        last.0, last.1
    );
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.status, Exit::Code(143), "{out}");
    let warned = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("vigil: warning") && !l.contains("exit report"))
        .count();
    assert_eq!(
        warned,
        10000,
        "-w should warn once per orphan reaped; first lines:\n{}",
        &out.stderr[..out.stderr.len().min(2000)]
    );
}

// ---------------------------------------------------------------------------
// Exit status
// ---------------------------------------------------------------------------

fn run_sh(vigil_args: &[&str], script: &str) -> Output {
    Vigil::pid1()
        .args(vigil_args)
        .args(["--", "sh", "-c", script])
        .run()
}

#[test]
fn pid1_exit_status_is_childs_code() {
    for code in [0, 1, 3, 255] {
        let out = run_sh(&[], &format!("exit {code}"));
        assert_eq!(out.status, Exit::Code(code), "child exited {code}\n{out}");
    }
}

#[test]
fn pid1_exit_status_128_plus_signal() {
    for (sig, want) in [("TERM", 143), ("KILL", 137), ("SEGV", 139)] {
        let out = run_sh(&[], &format!("kill -{sig} $$"));
        assert_eq!(
            out.status,
            Exit::Code(want),
            "child killed by SIG{sig}\n{out}"
        );
    }
}

#[test]
fn pid1_dash_e_maps_listed_codes_to_zero() {
    let out = run_sh(&["-e", "3"], "exit 3");
    assert_eq!(out.status, Exit::Code(0), "-e 3 with exit 3\n{out}");
    let out = run_sh(&["-e", "3"], "exit 4");
    assert_eq!(out.status, Exit::Code(4), "-e 3 with exit 4\n{out}");
    let out = run_sh(&["-e", "3", "-e", "4"], "exit 4");
    assert_eq!(out.status, Exit::Code(0), "-e 3 -e 4 with exit 4\n{out}");
}

/// As in tini, `-e` applies to the final status, so 128+N for a death by
/// signal N is listed like any code.
#[test]
fn pid1_dash_e_maps_a_signal_death_status_too() {
    let out = run_sh(&["-e", "143"], "kill -TERM $$");
    assert_eq!(
        out.status,
        Exit::Code(0),
        "-e 143, killed by SIGTERM\n{out}"
    );
    let out = run_sh(&["-e", "143"], "kill -KILL $$");
    assert_eq!(
        out.status,
        Exit::Code(137),
        "-e 143, killed by SIGKILL\n{out}"
    );
}

fn assert_exec_failure(cmd: &str, want_code: i32, os_error: &str) {
    let out = Vigil::pid1().args(["--", cmd]).run();
    assert_eq!(out.status, Exit::Code(want_code), "running {cmd:?}\n{out}");
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains("cannot run"))
        .unwrap_or_else(|| panic!("no 'cannot run' line for {cmd:?}\n{out}"));
    assert!(line.starts_with("vigil: "), "{line}");
    assert!(
        line.contains(&format!("cannot run {cmd:?}: ")),
        "message does not name {cmd:?}: {line}"
    );
    assert!(
        line.contains(os_error),
        "message lacks {os_error:?}: {line}"
    );
}

#[test]
fn pid1_exec_not_found_is_127() {
    assert_exec_failure(
        "/nonexistent/vigil-test-command",
        127,
        "No such file or directory",
    );
    assert_exec_failure(
        "vigil-test-no-such-command-in-path",
        127,
        "No such file or directory",
    );
    assert_exec_failure("/etc/passwd/not-a-dir", 127, "Not a directory");
}

#[test]
fn pid1_exec_not_executable_is_126() {
    let dir = TempDir::new("noexec");
    let f = dir.join("not-executable");
    std::fs::write(&f, "#!/bin/sh\nexit 0\n").unwrap();
    assert_exec_failure(f.to_str().unwrap(), 126, "Permission denied");
    assert_exec_failure(dir.path().to_str().unwrap(), 126, "Permission denied");
}

// ---------------------------------------------------------------------------
// Usage errors: exit 2, one line naming the value, the child never starts
// ---------------------------------------------------------------------------

fn assert_usage_error(args: &[&str], env: &[(&str, &str)], needle: &str) {
    let dir = TempDir::new("usage");
    let marker = dir.join("child-started");
    let mut v = Vigil::pid1().args(args).args(["--", "touch"]).arg(&marker);
    for (k, val) in env {
        v = v.env(k, val);
    }
    let out = v.run();
    let what = format!("args {args:?} env {env:?}");
    let line = usage_error_line(&out, &what);
    assert!(
        line.contains(needle),
        "{what}: line does not name {needle:?}: {line:?}"
    );
    assert!(!marker.exists(), "{what}: the child was started");
}

fn assert_usage_error_no_command(args: &[&str]) {
    let out = Vigil::pid1().args(args).run();
    usage_error_line(&out, &format!("args {args:?}"));
}

#[test]
fn usage_unknown_option() {
    assert_usage_error(&["--bogus-option"], &[], "--bogus-option");
    assert_usage_error(&["-x"], &[], "-x");
}

#[test]
fn usage_bad_dash_p_signal() {
    assert_usage_error(&["-p", "SIGFOO"], &[], "SIGFOO");
    assert_usage_error(&["-p", "65"], &[], "65");
}

#[test]
fn usage_dash_e_out_of_range() {
    assert_usage_error(&["-e", "256"], &[], "256");
    assert_usage_error(&["-e", "-1"], &[], "-1");
}

#[test]
fn usage_dash_e_not_a_number() {
    assert_usage_error(&["-e", "abc"], &[], "abc");
}

#[test]
fn usage_no_command() {
    assert_usage_error_no_command(&[]);
    assert_usage_error_no_command(&["--"]);
    assert_usage_error_no_command(&["-s", "-v"]);
}

#[test]
fn usage_malformed_vigil_subreaper() {
    assert_usage_error(&[], &[("VIGIL_SUBREAPER", "maybe")], "maybe");
}

#[test]
fn usage_malformed_vigil_kill_process_group() {
    assert_usage_error(
        &[],
        &[("VIGIL_KILL_PROCESS_GROUP", "sometimes")],
        "sometimes",
    );
}

#[test]
fn usage_malformed_vigil_verbosity() {
    assert_usage_error(&[], &[("VIGIL_VERBOSITY", "9")], "9");
    assert_usage_error(&[], &[("VIGIL_VERBOSITY", "loud")], "loud");
}

// ---------------------------------------------------------------------------
// `--` and option parsing
// ---------------------------------------------------------------------------

#[test]
fn double_dash_and_first_non_option_end_option_parsing() {
    let out = Vigil::pid1().args(["--", "sh", "-c", "exit 3"]).run();
    assert_eq!(out.status, Exit::Code(3), "vigil -- sh -c 'exit 3'\n{out}");
    let out = Vigil::pid1().args(["sh", "-c", "exit 3"]).run();
    assert_eq!(
        out.status,
        Exit::Code(3),
        "vigil sh -c 'exit 3' (no --)\n{out}"
    );
    // Options after the command belong to the command.
    let script = r#"printf '%s|' "$@""#;
    for pre in [&["--"][..], &[][..]] {
        let out = Vigil::pid1()
            .args(pre)
            .args([
                "sh",
                "-c",
                script,
                "sh",
                "-v",
                "--version",
                "-e",
                "3",
                "--",
                "-h",
            ])
            .run();
        assert_eq!(out.status, Exit::Code(0), "{pre:?}\n{out}");
        assert_eq!(
            out.stdout, "-v|--version|-e|3|--|-h|",
            "{pre:?}: arguments after the command changed\n{out}"
        );
    }
    // After `--` even an option-looking word is the command.
    let out = Vigil::pid1().args(["--", "-v"]).run();
    assert_eq!(
        out.status,
        Exit::Code(127),
        "vigil -- -v must try to run '-v'\n{out}"
    );
}

// ---------------------------------------------------------------------------
// What the child inherits
// ---------------------------------------------------------------------------

#[test]
fn pid1_child_inherits_env_cwd_and_stdin() {
    let dir = TempDir::new("inherit");
    let rep = dir.join("report");
    std::fs::create_dir(&rep).unwrap();
    let work = dir.join("work dir");
    std::fs::create_dir(&work).unwrap();
    let out = Vigil::pid1()
        .env("PROBE_VAR", "probe value=42")
        .cwd(&work)
        .stdin_bytes("line one\nline two\n")
        .arg("--")
        .arg(test_program("sigrec"))
        .arg("--report")
        .arg(&rep)
        .args(["--read-stdin", "--once"])
        .run();
    assert_eq!(out.status, Exit::Code(0), "{out}");
    let env = std::fs::read_to_string(rep.join("env")).unwrap();
    assert!(
        env.lines().any(|l| l == "PROBE_VAR=probe value=42"),
        "PROBE_VAR not inherited:\n{env}"
    );
    let cwd = std::fs::read_to_string(rep.join("cwd")).unwrap();
    assert_eq!(
        Path::new(&cwd),
        std::fs::canonicalize(&work).unwrap(),
        "cwd not inherited"
    );
    let stdin = std::fs::read_to_string(rep.join("stdin")).unwrap();
    assert_eq!(stdin, "line one\nline two\n", "stdin not inherited");
}

/// (SigBlk, SigIgn) of a `sigrec --report --once` started by `v`
/// (through vigil when `through_vigil`, else directly by unshare).
fn child_signal_state(v: Vigil, through_vigil: bool) -> (u64, u64) {
    let dir = TempDir::new("sigstate");
    let v = if through_vigil {
        v.arg("--").arg(test_program("sigrec"))
    } else {
        v.program(test_program("sigrec"))
    };
    let out = v.arg("--report").arg(dir.path()).arg("--once").run();
    assert_eq!(out.status, Exit::Code(0), "{out}");
    let st = std::fs::read_to_string(dir.join("status")).unwrap();
    (
        sigset_text_field(&st, "SigBlk").unwrap(),
        sigset_text_field(&st, "SigIgn").unwrap(),
    )
}

#[test]
fn pid1_child_starts_with_a_clean_signal_state() {
    let (base_blk, base_ign) = child_signal_state(Vigil::pid1(), false);
    assert_eq!((base_blk, base_ign), (0, 0), "harness: baseline not clean");
    let (blk, ign) = child_signal_state(Vigil::pid1(), true);
    assert_eq!(
        sigs_in(blk),
        Vec::<i32>::new(),
        "signals blocked in the child (vigil's own mask leaked?)"
    );
    assert_eq!(
        sigs_in(ign),
        Vec::<i32>::new(),
        "signals ignored in the child (vigil's own dispositions leaked?)"
    );
}

#[test]
fn pid1_child_keeps_signals_blocked_and_ignored_by_vigils_parent() {
    let block = [libc::SIGUSR1, libc::SIGWINCH, SIGRT_40];
    let ignore = [libc::SIGHUP, libc::SIGUSR2, libc::SIGQUIT];
    let mk = || Vigil::pid1().block_signals(&block).ignore_signals(&ignore);
    let (base_blk, base_ign) = child_signal_state(mk(), false);
    // Sanity: unshare passes the state on, so the baseline is what we set.
    assert_eq!(
        sigs_in(base_blk),
        {
            let mut b = block.to_vec();
            b.sort();
            b
        },
        "harness: baseline mask"
    );
    assert_eq!(
        sigs_in(base_ign),
        {
            let mut i = ignore.to_vec();
            i.sort();
            i
        },
        "harness: baseline ignored"
    );
    let (blk, ign) = child_signal_state(mk(), true);
    assert_eq!(
        sigs_in(blk),
        sigs_in(base_blk),
        "blocked signals in the child under vigil"
    );
    assert_eq!(
        sigs_in(ign),
        sigs_in(base_ign),
        "ignored signals in the child under vigil"
    );
}

// ---------------------------------------------------------------------------
// Idle
// ---------------------------------------------------------------------------

#[test]
fn pid1_no_context_switch_while_idle() {
    let r = spawn_rec(Vigil::pid1(), &[], &[]);
    let v = r.run.vigil_pid();
    thread::sleep(Duration::from_millis(500));
    let a = ctxt_switches(v).expect("vigil status");
    thread::sleep(Duration::from_secs(3));
    let b = ctxt_switches(v).expect("vigil status");
    assert_eq!(
        a, b,
        "vigil woke up while idle: (voluntary, nonvoluntary) went from {a:?} to {b:?} in 3 s"
    );
}

// ---------------------------------------------------------------------------
// Not PID 1: subreaper, -p, reserved signals, job control
// ---------------------------------------------------------------------------

fn assert_plain_reaps_orphans(v: Vigil) {
    let dir = TempDir::new("subreaper");
    let pids = dir.join("pids");
    let done = dir.join("done");
    let run = v
        .arg("--")
        .arg(test_program("orphans"))
        .args([
            "--count",
            "20",
            "--burst",
            "5",
            "--life-ms",
            "3000",
            "--hold-ms",
            "600000",
            "--pids",
        ])
        .arg(&pids)
        .arg("--done")
        .arg(&done)
        .spawn();
    let vp = run.vigil_pid();
    assert!(
        wait_for_file(&done, TIMEOUT),
        "orphan maker did not finish\n{}",
        run.describe()
    );
    let orphans: Vec<(i32, u64)> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| {
            let p: i32 = l.parse().unwrap();
            let st =
                stat(p).unwrap_or_else(|| panic!("orphan {p} already gone (too slow a machine?)"));
            assert_eq!(
                st.ppid,
                vp,
                "orphan {p} was re-parented to {} ({:?}), not to vigil {vp}",
                st.ppid,
                comm(st.ppid)
            );
            (p, st.starttime)
        })
        .collect();
    assert_eq!(orphans.len(), 20);
    let left = |o: &[(i32, u64)]| -> Vec<(i32, char)> {
        o.iter()
            .filter_map(|&(p, t)| stat(p).filter(|s| s.starttime == t).map(|s| (p, s.state)))
            .collect()
    };
    assert!(
        wait_until(TIMEOUT, || left(&orphans).is_empty()),
        "orphans not reaped by vigil: {:?} (pid, state)",
        left(&orphans)
    );
    assert!(alive(vp), "vigil gone");
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.status, Exit::Code(143), "{out}");
}

#[test]
fn plain_dash_s_reaps_orphans() {
    assert_plain_reaps_orphans(Vigil::plain().arg("-s"));
}

#[test]
fn plain_tini_subreaper_set_empty_reaps_orphans() {
    assert_plain_reaps_orphans(Vigil::plain().env("TINI_SUBREAPER", ""));
}

#[test]
fn plain_reaps_orphans_without_subreaper_option() {
    assert_plain_reaps_orphans(Vigil::plain());
}

#[test]
fn plain_dash_p_signal_reaches_child_when_vigils_parent_dies() {
    for spec in ["SIGUSR1", "USR1", "10"] {
        let r = spawn_rec(
            Vigil::wrapped(&["sh", "-c", "\"$@\" & wait", "sh"]),
            &["-p", spec],
            &[],
        );
        let vp = r.run.vigil_pid();
        assert!(
            read_signals(&r.out).is_empty(),
            "-p {spec}: signal before the parent died"
        );
        kill(r.run.outer_pid(), libc::SIGKILL).unwrap();
        assert!(
            wait_for_signal(&r.out, libc::SIGUSR1, TIMEOUT),
            "-p {spec}: child did not get USR1 after vigil's parent died; recorded {:?}; vigil state {:?}\n{}",
            read_signals(&r.out),
            state(vp),
            r.run.describe()
        );
    }
}

#[test]
fn plain_signals_32_33_34_do_not_kill_vigil() {
    let mut r = spawn_rec(Vigil::plain(), &[], &[]);
    let vp = r.run.vigil_pid();
    for sig in [32, 33, 34] {
        r.run.signal(sig);
    }
    // Fence: 64 is dequeued after 32-34.
    r.run.signal(SIGRT_MAX);
    wait_until(TIMEOUT, || {
        read_signals(&r.out).contains(&SIGRT_MAX) || !alive(vp)
    });
    thread::sleep(Duration::from_millis(100));
    assert_eq!(
        r.run.try_exit(),
        None,
        "vigil ended after signals 32-34\n{}",
        r.run.describe()
    );
    assert!(
        alive(vp),
        "vigil not alive after 32-34: state {:?}",
        state(vp)
    );
    let _ = &r.dir;
}

#[test]
fn plain_ctrl_z_and_fg_in_a_pty_stop_and_resume_vigil_and_child() {
    let sh = PtyShell::spawn(&[]);
    let bash = sh.pid();
    assert!(
        sh.wait_output(PTY_PROMPT, TIMEOUT),
        "no prompt: {:?}",
        sh.output()
    );
    let vigil = vigil_bin();
    sh.send(&format!("'{}' -- sleep 1000\n", vigil.display()));
    let mut vp = 0;
    assert!(
        wait_until(TIMEOUT, || {
            vp = children(bash)
                .into_iter()
                .find(|&c| {
                    std::fs::read_link(format!("/proc/{c}/exe"))
                        .map(|e| e == vigil)
                        .unwrap_or(false)
                })
                .unwrap_or(0);
            vp != 0
        }),
        "vigil did not start in the pty: {:?}",
        sh.output()
    );
    sh.guard().track(vp);
    let mut cp = 0;
    assert!(
        wait_until(TIMEOUT, || {
            cp = children(vp)
                .into_iter()
                .find(|&c| comm(c).as_deref() == Some("sleep"))
                .unwrap_or(0);
            cp != 0
        }),
        "vigil's child did not start: {:?}",
        sh.output()
    );
    sh.guard().track(cp);
    let fg_is_child = || {
        stat(cp)
            .map(|s| s.pgrp == cp && s.tpgid == cp)
            .unwrap_or(false)
    };
    assert!(
        wait_until(TIMEOUT, fg_is_child),
        "child's group never became the terminal's foreground group: {:?}",
        stat(cp)
    );

    sh.send("\x1a"); // Ctrl-Z
    let stopped = || state(cp) == Some('T') && state(vp) == Some('T');
    assert!(
        wait_until(TIMEOUT, stopped),
        "after Ctrl-Z: child state {:?}, vigil state {:?} (want T and T)\n{:?}",
        state(cp),
        state(vp),
        sh.output()
    );
    assert!(
        sh.wait_output("Stopped", TIMEOUT),
        "bash did not report the job stopped: {:?}",
        sh.output()
    );
    let prompts = sh.output().matches(PTY_PROMPT).count();

    sh.send("fg\n");
    let running = |p: i32| matches!(state(p), Some('S') | Some('R'));
    assert!(
        wait_until(TIMEOUT, || running(cp) && running(vp)),
        "after fg: child state {:?}, vigil state {:?} (want S/R)\n{:?}",
        state(cp),
        state(vp),
        sh.output()
    );
    assert!(
        wait_until(TIMEOUT, fg_is_child),
        "after fg the child's group is not the terminal's foreground group: {:?}",
        stat(cp)
    );

    // Ctrl-C now reaches the child, vigil exits 130 and bash prompts again.
    sh.send("\x03");
    assert!(
        sh.wait_output_count(PTY_PROMPT, prompts + 1, TIMEOUT),
        "no prompt after Ctrl-C: child {:?} vigil {:?}\n{:?}",
        state(cp),
        state(vp),
        sh.output()
    );
    sh.send("echo \"rc=$((0+$?))\"\n");
    assert!(
        sh.wait_output("rc=130", TIMEOUT),
        "vigil's status after Ctrl-C: {:?}",
        sh.output()
    );
}

// ---------------------------------------------------------------------------
// --version, docker-init, -l, -h
// ---------------------------------------------------------------------------

#[test]
fn version_flag() {
    let out = Vigil::plain().arg("--version").run();
    assert_eq!(out.status, Exit::Code(0), "{out}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some(format!("vigil version {}", env!("CARGO_PKG_VERSION")).as_str()),
        "{out}"
    );
    // The second line traces the binary: the commit (HEAD when built from
    // a git checkout) and the target.
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let commit = std::env::var("VIGIL_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or(head)
        .unwrap_or_else(|| "unknown".into());
    let arch = std::env::consts::ARCH;
    let second = lines.get(1).copied().unwrap_or("");
    assert!(
        second.starts_with(&format!("commit {commit}, built for {arch}-unknown-linux-")),
        "{out}"
    );
    assert_eq!(lines.len(), 2, "{out}");
}

/// Run PATH --version, retrying while a concurrent fork elsewhere in this
/// test process still holds a write descriptor of a fresh copy (ETXTBSY).
fn version_of(path: &Path) -> std::process::Output {
    for _ in 0..100 {
        match Command::new(path).arg("--version").output() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                thread::sleep(Duration::from_millis(50))
            }
            r => return r.unwrap(),
        }
    }
    panic!("{} stayed busy", path.display());
}

#[test]
fn version_as_docker_init() {
    let want = format!("tini version {} - vigil", env!("CARGO_PKG_VERSION"));
    let dir = TempDir::new("docker-init");
    let link = dir.join("docker-init");
    std::os::unix::fs::symlink(vigil_bin(), &link).unwrap();
    let out = Vigil::plain().program(&link).arg("--version").run();
    assert_eq!(out.status, Exit::Code(0), "{out}");
    assert_eq!(
        out.stdout.trim_end(),
        want,
        "symlink named docker-init\n{out}"
    );

    let copy_dir = dir.join("copy");
    std::fs::create_dir(&copy_dir).unwrap();
    let copy = copy_dir.join("docker-init");
    std::fs::copy(vigil_bin(), &copy).unwrap();
    let out = version_of(&copy);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        want,
        "copy named docker-init"
    );
}

#[test]
fn license_flag() {
    let out = Vigil::plain().arg("-l").run();
    assert_eq!(out.status, Exit::Code(0), "{out}");
    assert!(
        out.stdout.contains("MIT"),
        "-l does not print the MIT license\n{out}"
    );
    assert!(
        out.stdout.contains("Permission is hereby granted"),
        "-l does not print the license text\n{out}"
    );
}

#[test]
fn help_flags_exit_0_on_stdout() {
    for flag in ["-h", "--help"] {
        let out = Vigil::plain().arg(flag).run();
        assert_eq!(out.status, Exit::Code(0), "{flag}\n{out}");
        assert!(
            out.stdout.to_lowercase().contains("usage"),
            "{flag}: no usage on stdout\n{out}"
        );
        for opt in ["-s", "-p", "-v", "-w", "-g", "-e", "-l"] {
            assert!(
                out.stdout.contains(opt),
                "{flag}: help does not mention {opt}\n{out}"
            );
        }
        assert!(out.stderr.is_empty(), "{flag}: unexpected stderr\n{out}");
    }
}
