//! Forwarding signals: every catchable one reaches the child (realtime ones
//! and libc's reserved 32-34 included), SIGTTIN and SIGTTOU do not, `-g`
//! and `TINI_KILL_PROCESS_GROUP` reach the child's whole process group,
//! `--rewrite` changes or drops a signal, `-p` delivers the parent-death
//! signal, and no signal but SIGKILL and SIGSTOP ends vigil. Between
//! signals vigil sleeps: no wake-up while idle.

use crate::common::*;
use std::path::PathBuf;
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
    let (run, out) = start_rec(v.args(vigil_args), &dir, rec_args);
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
// As PID 1
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
    // signal, so once it reached the child TTIN/TTOU would have been sent
    // and recorded.
    r.run.signal(SIGRT_40);
    assert!(
        wait_for_signal(&r.out, SIGRT_40, TIMEOUT),
        "fence signal 40 not forwarded\n{}",
        r.run.describe()
    );
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

// ---------------------------------------------------------------------------
// -g: the child's process group
// ---------------------------------------------------------------------------

/// vigil running a recorder that forked a recording grandchild in its group.
fn spawn_group(v: Vigil, vigil_args: &[&str]) -> (Rec, PathBuf, i32) {
    let dir = TempDir::new("grp");
    // start_rec waits until the grandchild recording into rec2 is ready.
    let gc_out = dir.join("rec2");
    let r = spawn_rec_in(dir, v, vigil_args, &["--fork", "rec2"]);
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
    (r, gc_out, gcs[0])
}

#[test]
fn pid1_dash_g_reaches_grandchild_in_childs_group() {
    let (r, gc, _) = spawn_group(Vigil::pid1(), &["-g"]);
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
    let (r, gc, grandchild) = spawn_group(Vigil::pid1(), &[]);
    r.run.signal(libc::SIGUSR1);
    assert!(
        wait_for_signal(&r.out, libc::SIGUSR1, TIMEOUT),
        "child missed USR1\n{}",
        r.run.describe()
    );
    // Fence: 40, sent to the grandchild directly now, comes after a USR1
    // that vigil would have sent the group.
    kill(grandchild, SIGRT_40).unwrap();
    assert!(
        wait_for_signal(&gc, SIGRT_40, TIMEOUT),
        "the grandchild never recorded 40\n{}",
        r.run.describe()
    );
    assert_eq!(
        read_signals(&gc),
        [SIGRT_40],
        "without -g the grandchild got more"
    );
}

#[test]
fn pid1_tini_kill_process_group_set_empty_acts_like_g() {
    let (r, gc, _) = spawn_group(Vigil::pid1().env("TINI_KILL_PROCESS_GROUP", ""), &[]);
    r.run.signal(libc::SIGUSR2);
    assert!(
        wait_for_signal(&gc, libc::SIGUSR2, TIMEOUT),
        "TINI_KILL_PROCESS_GROUP= (empty) did not send to the group; grandchild recorded {:?}\n{}",
        read_signals(&gc),
        r.run.describe()
    );
}

// ---------------------------------------------------------------------------
// --rewrite
// ---------------------------------------------------------------------------

/// Sends USR1, USR2 and then TERM to vigil, and checks what the child
/// (sigrec) saw: USR1 (unless `usr1_dropped`), USR2, and `term_as` instead
/// of SIGTERM.
fn check_rewrites(v: Vigil, term_as: i32, usr1_dropped: bool) {
    let _cpu = timing();
    let dir = TempDir::new("rewrite");
    let exit_on = term_as.to_string();
    let (run, rec) = start_rec(v.arg("-v").json(), &dir, &["--exit-on", &exit_on]);
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
    let records = out.records();
    let dropped: Vec<&Value> = records
        .all("signal_dropped")
        .into_iter()
        .filter(|r| r["signal"] == "SIGUSR1")
        .collect();
    assert_eq!(dropped.len(), usize::from(usr1_dropped), "{out}");
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
// Not PID 1: the parent-death signal, signals that must not end vigil
// ---------------------------------------------------------------------------

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
    // Had 32-34 killed vigil, it would have died before forwarding 64.
    wait_until(TIMEOUT, || {
        read_signals(&r.out).contains(&SIGRT_MAX) || !alive(vp)
    });
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

// ---------------------------------------------------------------------------
// Idle
// ---------------------------------------------------------------------------

#[test]
fn pid1_no_context_switch_while_idle() {
    let _cpu = timing();
    let r = spawn_rec(Vigil::pid1(), &[], &[]);
    let v = r.run.vigil_pid();
    // Idle: asleep in the kernel, waiting for a signal, once the child
    // runs.
    assert!(
        wait_until(TIMEOUT, || state(v) == Some('S')),
        "vigil never went to sleep: {:?}\n{}",
        state(v),
        r.run.describe()
    );
    let a = ctxt_switches(v).expect("vigil status");
    // Nothing may happen in these 3 s: the fixed wait is the point.
    thread::sleep(Duration::from_secs(3));
    let b = ctxt_switches(v).expect("vigil status");
    assert_eq!(
        a, b,
        "vigil woke up while idle: (voluntary, nonvoluntary) went from {a:?} to {b:?} in 3 s"
    );
}
