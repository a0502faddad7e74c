//! Job control and the terminal, in a real interactive bash on a
//! pseudo-terminal: Ctrl-Z stops the child and vigil (the shell gets its
//! prompt back), `fg` resumes both with the child in the foreground, Ctrl-C
//! reaches the child; and vigil gives the terminal back before it exits.

mod common;

use common::*;
use std::time::Duration;

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
