//! What the child gets from vigil: a process group of its own, and
//! otherwise what it would have without vigil (the environment, the working
//! directory, stdin, and the blocked and ignored signals vigil was started
//! with, not vigil's own).

mod common;

use common::*;
use std::path::Path;

#[test]
fn pid1_child_has_its_own_process_group() {
    let dir = TempDir::new("rec");
    let (run, _) = start_rec(Vigil::pid1(), &dir, &[]);
    let v = run.vigil_pid();
    let c = run.child_pid();
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
    let block = [libc::SIGUSR1, libc::SIGWINCH, 40];
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
