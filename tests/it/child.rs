//! What the child gets from vigil: a process group of its own, and
//! otherwise what it would have without vigil (the environment, the working
//! directory, stdin, the blocked and ignored signals and the scheduling vigil
//! was started with, not vigil's own).

use crate::common::*;
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

/// The child and the hooks do not inherit the `VIGIL_*` variables vigil
/// read (a vigil below would apply them again: two pre-stop hooks, two
/// writers of the termination log); tini's variables and every other one
/// pass, and the hooks get their own `VIGIL_HOOK`, `VIGIL_CHILD_PID` and
/// `VIGIL_SIGNAL`.
#[test]
fn vigils_own_variables_are_not_inherited() {
    let dir = TempDir::new("ownvars");
    let v = Vigil::pid1()
        .env("VIGIL_GRACE_PERIOD", "30s")
        .env("VIGIL_PRE_STOP", "sh -c 'env > hook_env'")
        .env("TINI_SUBREAPER", "")
        .env("PROBE_VAR", "1");
    let run = start_sh(v, &dir, "env > child_env; : > ready; exec sleep 1000");
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.code(), Some(143), "{out}");
    for (file, own) in [
        ("child_env", &[][..]),
        (
            "hook_env",
            &["VIGIL_HOOK=pre-stop", "VIGIL_SIGNAL=SIGTERM"][..],
        ),
    ] {
        let env = std::fs::read_to_string(dir.join(file)).unwrap();
        let vigils: Vec<&str> = env.lines().filter(|l| l.starts_with("VIGIL_")).collect();
        let expected: Vec<&str> = own.to_vec();
        assert_eq!(
            vigils
                .iter()
                .filter(|l| !l.starts_with("VIGIL_CHILD_PID="))
                .copied()
                .collect::<Vec<_>>(),
            expected,
            "{file}:\n{env}"
        );
        assert!(
            env.lines().any(|l| l == "TINI_SUBREAPER="),
            "{file}:\n{env}"
        );
        assert!(env.lines().any(|l| l == "PROBE_VAR=1"), "{file}:\n{env}");
    }
    // A vigil under vigil runs one pre-stop hook, not two.
    let dir = TempDir::new("nested");
    let v = Vigil::pid1().env("VIGIL_PRE_STOP", "sh -c 'echo hook >> hooks'");
    // Ready once the inner vigil has started its own child.
    let script = format!(
        "{} -- sh -c ': > ready; exec sleep 1000' & wait",
        vigil_bin().display()
    );
    let run = start_sh(v, &dir, &script);
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    no_panic(&out);
    let hooks = std::fs::read_to_string(dir.join("hooks")).unwrap_or_default();
    assert_eq!(hooks.lines().count(), 1, "hooks ran: {hooks:?}\n{out}");
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

// Scheduling. vigil leaves it as it was given, its own and the
// processes' it starts: the policy, the nice value, the slice and
// reset-on-fork are the operator's to choose (`nice`, `chrt`, the engine).

/// This test's own scheduling, which vigil inherits through unshare or
/// a wrapper and must hand on.
fn own_sched() -> Sched {
    sched(std::process::id() as i32).expect("sched_getattr of the test itself")
}

/// vigil's and its child's scheduling, with `sleep 1000` as the child.
fn sched_of_vigil_and_child(v: Vigil) -> (Sched, Sched) {
    let (run, _) = start_sleep(v);
    let vigil = sched(run.vigil_pid()).expect("vigil's sched_getattr");
    let child = sched(run.child_pid()).expect("the child's sched_getattr");
    (vigil, child)
}

/// vigil as PID 1, started through `unshare ... PREFIX...`: unshare forks
/// PREFIX, which sets the scheduling (`nice`, `chrt`) and execs vigil (a
/// fork would clear reset-on-fork).
fn pid1_under(prefix: &[&str]) -> Vigil {
    let mut wrapper = vec!["unshare", "--pid", "--fork", "--mount-proc"];
    wrapper.extend(prefix);
    Vigil::wrapped(&wrapper)
}

#[test]
fn vigil_and_the_child_keep_the_scheduling_vigil_was_given() {
    let own = own_sched();
    let (vigil, child) = sched_of_vigil_and_child(Vigil::pid1());
    assert_eq!(vigil, own, "vigil's own scheduling");
    assert_eq!(child, own, "the child's scheduling");
    let (vigil, child) = sched_of_vigil_and_child(pid1_under(&["nice", "-n", "7"]));
    let niced = Sched {
        nice: own.nice + 7,
        ..own
    };
    assert_eq!((vigil, child), (niced, niced), "under nice 7");
    let (vigil, child) = sched_of_vigil_and_child(pid1_under(&["chrt", "--batch", "0"]));
    let batch = Sched {
        policy: libc::SCHED_BATCH as u32,
        ..own
    };
    assert_eq!((vigil, child), (batch, batch), "under SCHED_BATCH");
}

/// A parent that marked vigil reset-on-fork asked for children with the
/// default scheduling: the kernel gives them that, and vigil leaves it so.
#[test]
fn reset_on_fork_is_kept_and_left_to_the_kernel() {
    let own = own_sched();
    let (vigil, child) =
        sched_of_vigil_and_child(pid1_under(&["chrt", "--reset-on-fork", "--other", "0"]));
    let given = Sched {
        reset_on_fork: true,
        ..own
    };
    assert_eq!(vigil, given, "vigil marked reset-on-fork");
    assert_eq!(child, own, "the child of a reset-on-fork vigil");
}

#[test]
fn the_hooks_get_what_vigil_was_given_too() {
    let own = own_sched();
    let dir = TempDir::new("hooksched");
    let run = Vigil::pid1()
        .cwd(dir.path())
        .args(["--post-start", "sleep 1000", "--", "sleep", "1000"])
        .spawn();
    let child = run.child_pid();
    let vigil = run.vigil_pid();
    let mut hook = None;
    assert!(
        wait_until(TIMEOUT, || {
            hook = children(vigil).into_iter().find(|&p| p != child);
            hook.is_some()
        }),
        "the post-start hook never started\n{}",
        run.describe()
    );
    let hook = hook.unwrap();
    assert_eq!(sched(hook), Some(own), "the post-start hook's scheduling");
    assert_eq!(sched(vigil), Some(own), "vigil's own scheduling");
}
