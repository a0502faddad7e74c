//! Job control and the terminal, in a real interactive bash on a
//! pseudo-terminal: Ctrl-Z stops the child and vigil (the shell gets its
//! prompt back), `fg` resumes both with the child in the foreground, Ctrl-C
//! reaches the child; and vigil gives the terminal back before it exits.

use crate::common::*;
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
        "sh -c '{} -- true; echo vigil-done; read x; echo \"got:$x\"'\n",
        vigil_bin().display()
    ));
    // Typed once vigil has come and gone (before, bash would read it).
    assert!(sh.wait_output("vigil-done\r\n", TIMEOUT), "{}", sh.output());
    sh.send("hello\n");
    assert!(
        sh.wait_output("got:hello", Duration::from_secs(10)),
        "the script could not read the terminal after vigil exited\n{}",
        sh.output()
    );
}

// ---------------------------------------------------------------------------
// Ctrl-Z with nobody above vigil to resume it
// ---------------------------------------------------------------------------

/// A child that says `tick` five times a second: whether it runs shows in
/// the terminal.
const TICKER: &str = "while :; do echo tick; sleep 0.2; done";

/// Whether the ticks go on: two more come.
fn ticking(sh: &PtyShell) -> bool {
    let before = sh.output().matches("tick\r\n").count();
    sh.wait_output_count("tick\r\n", before + 2, TIMEOUT)
}

/// A fixed wait after a tick, so that Ctrl-Z finds the ticker's shell
/// waiting for its `sleep`: right after `echo tick` the shell vforks the
/// next `sleep`, and a Ctrl-Z then stops the new process before its exec
/// while the shell waits for that exec, where no stop reaches it. Its
/// parent, vigil, then hears of no stop at all (docs/design.md, "Ctrl-Z
/// during a vfork"); no init can undo a stop it is not told of.
fn between_ticks() {
    std::thread::sleep(Duration::from_millis(60));
}

/// Waits until vigil (at `-v`, in JSON) says its child was stopped and
/// that it continued it: Ctrl-Z has been undone.
fn wait_continued(sh: &PtyShell) {
    assert!(
        sh.wait_record("child_stopped", TIMEOUT, |r| r["action"] == "continue"),
        "vigil never continued its child: {:?}",
        sh.output()
    );
}

/// As PID 1 (a container's init, `docker run -it`), there is no
/// job-control shell above vigil that could `fg` the child: Ctrl-Z is
/// undone at once, and Ctrl-C then ends the child (130), as under
/// catatonit and dumb-init. Under tini the child stayed stopped and the
/// terminal was frozen.
#[test]
fn ctrl_z_cannot_freeze_vigil_as_pid1() {
    let sh = PtyShell::spawn(&[]);
    assert!(sh.wait_output(PTY_PROMPT, TIMEOUT), "{:?}", sh.output());
    sh.send(&format!(
        "unshare --pid --fork --mount-proc '{}' -v --log-format json -- sh -c '{TICKER}'; echo status=$?\n",
        vigil_bin().display()
    ));
    // Ticks of the child's own: the command line's echo and the started
    // record hold the word too, and a Ctrl-Z typed before the child holds
    // the terminal would stop vigil's launcher instead.
    assert!(
        sh.wait_output_count("tick\r\n", 3, TIMEOUT),
        "{:?}",
        sh.output()
    );
    between_ticks();
    sh.send("\x1a");
    wait_continued(&sh);
    assert!(ticking(&sh), "Ctrl-Z froze the child: {:?}", sh.output());
    sh.send("\x03");
    assert!(
        sh.wait_output("status=130", TIMEOUT),
        "Ctrl-C did not end it: {:?}",
        sh.output()
    );
}

/// vigil as the leader of a terminal's session (`script`, sshd, a
/// container's `-t` under another init): nobody above it could resume it,
/// so it never stops itself. Ctrl-Z is undone; a job that stops itself with
/// SIGSTOP stays stopped, and `--timeout` still ends both, with 124.
#[test]
fn ctrl_z_without_a_job_control_shell_never_freezes_the_timeout() {
    for (child, ctrl_z) in [(TICKER, true), ("echo tick; kill -STOP $$", false)] {
        let vigil = vigil_bin();
        let mut sh = PtyShell::session(
            &vigil,
            &[
                "-v",
                "--log-format",
                "json",
                "--timeout",
                "3s",
                "--grace-period",
                "1s",
                "--",
                "sh",
                "-c",
                child,
            ],
        );
        sh.guard().track(sh.pid());
        assert!(sh.wait_output("tick\r\n", TIMEOUT), "{:?}", sh.output());
        if ctrl_z {
            between_ticks();
            sh.send("\x1a");
            wait_continued(&sh);
            assert!(ticking(&sh), "Ctrl-Z froze the child: {:?}", sh.output());
        }
        let status = sh.wait_status(Duration::from_secs(15));
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(124),
            "{child}: {:?}",
            sh.output()
        );
    }
}
