//! `--user` and the terminal, under a real pseudo-terminal with an
//! interactive bash (`PtyShell`), as a user at a terminal runs vigil.
//!
//! - Not PID 1, a child running as another user gets a session of its own
//!   without vigil's controlling terminal, so it cannot push input into the
//!   terminal with TIOCSTI (CVE-2016-2779): what it types would be read by
//!   the shell, as root, once vigil exits. The injector tries both ways in:
//!   its stdin (the terminal) and `/dev/tty` (open even with stdin from
//!   /dev/null), and the test then checks that the shell never ran the
//!   injected command. Ctrl-C still stops the child, through vigil.
//! - Same injector without `--user` (and with vigil's own uid): the child
//!   keeps the terminal, job control is unchanged, and on a kernel that
//!   still allows TIOCSTI (`dev.tty.legacy_tiocsti=1`) the injection is
//!   seen to work, so the check above is known to observe something.
//! - As PID 1 (`unshare --pid --fork --mount-proc`), a child running as
//!   another user keeps the terminal's foreground: Ctrl-C and Ctrl-Z reach
//!   it.
//!
//! The injector is a few lines of perl (Debian's perl-base is essential,
//! so every Debian machine has it), given the TIOCSTI request number from
//! libc.

use crate::common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Pushes `echo INJECTED-$((6*7))` into the terminal, through stdin and
/// through /dev/tty, and says how each went. The shell prints
/// `INJECTED-42` only if it runs the injected line (the terminal's echo of
/// the line itself reads `INJECTED-$((6*7))`).
const INJECTOR: &str = r#"
use strict;
my $request = $ARGV[0];
my $text = "echo INJECTED-\$((6*7))\n";
sub inject {
    my ($fh) = @_;
    for my $c (split //, $text) {
        ioctl($fh, $request, $c) or return "$!";
    }
    return "ok";
}
my $stdin = inject(\*STDIN);
my $fh;
my $tty = open($fh, "+<", "/dev/tty") ? inject($fh) : "open: $!";
print "TIOCSTI stdin: $stdin\nTIOCSTI /dev/tty: $tty\n";
"#;

/// What the shell prints when it ran the injected line.
const INJECTED: &str = "INJECTED-42";

/// Whether this kernel lets a process push input into its controlling
/// terminal at all (`dev.tty.legacy_tiocsti`, Linux 6.2 and later; before
/// that, always).
fn kernel_allows_tiocsti() -> bool {
    std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti")
        .map(|v| v.trim() == "1")
        .unwrap_or(true)
}

/// A directory anyone may read and write (the child runs as nobody).
fn open_dir(tag: &str) -> TempDir {
    let dir = TempDir::new(tag);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

fn write_injector(dir: &TempDir) -> PathBuf {
    let path = dir.join("inject.pl");
    std::fs::write(&path, INJECTOR).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    path
}

fn shell() -> PtyShell {
    let sh = PtyShell::spawn(&[]);
    assert!(
        sh.wait_output(PTY_PROMPT, TIMEOUT),
        "no prompt: {:?}",
        sh.output()
    );
    sh
}

/// Runs `line` in the shell and waits for the next prompt.
fn run_line(sh: &PtyShell, line: &str) {
    let prompts = sh.output().matches(PTY_PROMPT).count();
    sh.send(&format!("{line}\n"));
    assert!(
        sh.wait_output_count(PTY_PROMPT, prompts + 1, TIMEOUT),
        "no prompt after {line:?}: {:?}",
        sh.output()
    );
}

/// After vigil has exited: the shell reads the terminal again, and anything
/// injected into it would have run before this marker line.
fn shell_ran_injected_line(sh: &PtyShell) -> bool {
    run_line(sh, "echo MARK-$((40+2))");
    assert!(
        sh.wait_output("MARK-42", TIMEOUT),
        "the shell does not answer: {:?}",
        sh.output()
    );
    sh.output().contains(INJECTED)
}

fn quoted(p: &Path) -> String {
    format!("'{}'", p.display())
}

/// Field 7 of /proc/PID/stat: the controlling terminal (0: none).
fn tty_nr(pid: i32) -> Option<i64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = s.get(s.rfind(')')? + 2..)?;
    after.split_whitespace().nth(4)?.parse().ok()
}

#[test]
fn not_pid1_a_child_as_another_user_cannot_push_input_into_the_terminal() {
    let dir = open_dir("tiocsti");
    let injector = write_injector(&dir);
    let sh = shell();
    let perl = which("perl");
    for stdin in ["", " < /dev/null"] {
        run_line(
            &sh,
            &format!(
                "{} --user nobody -- {} {} {}{stdin}",
                quoted(&vigil_bin()),
                quoted(&perl),
                quoted(&injector),
                libc::TIOCSTI
            ),
        );
    }
    let out = sh.output();
    // Through stdin: the terminal is not the child's controlling terminal
    // any more (EPERM), or stdin is /dev/null (ENOTTY). Through /dev/tty:
    // the child has no controlling terminal (ENXIO).
    assert_eq!(
        out.matches("TIOCSTI stdin: Operation not permitted")
            .count(),
        1,
        "{out:?}"
    );
    assert_eq!(
        out.matches("TIOCSTI stdin: Inappropriate ioctl for device")
            .count(),
        1,
        "{out:?}"
    );
    assert_eq!(
        out.matches("TIOCSTI /dev/tty: open: No such device or address")
            .count(),
        2,
        "{out:?}"
    );
    assert!(!out.contains("TIOCSTI stdin: ok") && !out.contains("/dev/tty: ok"));
    assert!(
        !shell_ran_injected_line(&sh),
        "the shell ran a line the child pushed into the terminal: {:?}",
        sh.output()
    );
}

/// The control: the same injector as vigil's own user, with and without
/// `--user`. Nothing changes for it (it is no other user), and where the
/// kernel still allows TIOCSTI the shell is seen to run the injected line:
/// the test above would notice an injection.
#[test]
fn not_pid1_the_same_user_keeps_the_terminal_and_the_injection_is_observable() {
    if !kernel_allows_tiocsti() {
        return skip(
            "not_pid1_the_same_user_keeps_the_terminal_and_the_injection_is_observable",
            "dev.tty.legacy_tiocsti=0: this kernel refuses TIOCSTI, so the injection cannot \
             be shown to work here",
        );
    }
    let dir = open_dir("tiocsti-control");
    let injector = write_injector(&dir);
    let perl = which("perl");
    for user in ["", "--user 0 "] {
        let sh = shell();
        run_line(
            &sh,
            &format!(
                "{} {user}-- {} {} {}",
                quoted(&vigil_bin()),
                quoted(&perl),
                quoted(&injector),
                libc::TIOCSTI
            ),
        );
        let out = sh.output();
        assert!(
            out.contains("TIOCSTI stdin: ok") && out.contains("TIOCSTI /dev/tty: ok"),
            "{user:?}: {out:?}"
        );
        assert!(
            shell_ran_injected_line(&sh),
            "{user:?}: the injection did not reach the shell: {:?}",
            sh.output()
        );
    }
}

/// Not PID 1, another user: the child is in a session of its own without
/// a controlling terminal, vigil keeps the terminal's foreground, and
/// Ctrl-C reaches the child through vigil (sent on to the child's group).
#[test]
fn not_pid1_another_user_runs_without_the_terminal_and_ctrl_c_still_stops_it() {
    let sh = shell();
    let bash = sh.pid();
    sh.send(&format!(
        "{} --user nobody -- sleep 1000\n",
        quoted(&vigil_bin())
    ));
    let vigil = sh.find_descendant(bash, "vigil", is_vigil);
    let child = sh.find_descendant(vigil, "the child", |p| {
        comm(p).as_deref() == Some("sleep")
            && status_field(p, "Uid").is_some_and(|u| u.starts_with("65534"))
    });
    let (v, c) = (stat(vigil).unwrap(), stat(child).unwrap());
    assert_eq!(
        c.session, child,
        "the child leads a session of its own: {c:?}"
    );
    assert_eq!(c.pgrp, child, "{c:?}");
    assert_eq!(c.tpgid, -1, "the child has no controlling terminal: {c:?}");
    assert_eq!(tty_nr(child), Some(0));
    assert_ne!(tty_nr(vigil), Some(0), "vigil keeps its terminal");
    assert_eq!(v.tpgid, v.pgrp, "vigil's group keeps the foreground: {v:?}");

    let prompts = sh.output().matches(PTY_PROMPT).count();
    sh.send("\x03"); // Ctrl-C: to vigil's group, forwarded to the child
    assert!(
        wait_until(TIMEOUT, || gone(child) && gone(vigil)),
        "after Ctrl-C: child {:?}, vigil {:?}: {:?}",
        state(child),
        state(vigil),
        sh.output()
    );
    assert!(
        sh.wait_output_count(PTY_PROMPT, prompts + 1, TIMEOUT),
        "no prompt after Ctrl-C: {:?}",
        sh.output()
    );
    run_line(&sh, "echo status=$?");
    assert!(sh.output().contains("status=130"), "{:?}", sh.output());
}

/// Not PID 1 with vigil's own uid (`--user 0` as root): nothing changes,
/// the child gets the terminal's foreground, Ctrl-Z stops it and vigil,
/// `fg` resumes both, Ctrl-C ends it.
#[test]
fn not_pid1_the_same_uid_keeps_job_control() {
    let sh = shell();
    let bash = sh.pid();
    sh.send(&format!(
        "{} --user 0 -- sleep 1000\n",
        quoted(&vigil_bin())
    ));
    let vigil = sh.find_descendant(bash, "vigil", is_vigil);
    let child = sh.find_descendant(vigil, "the child", |p| comm(p).as_deref() == Some("sleep"));
    let fg_is_child =
        || stat(child).is_some_and(|s| s.pgrp == child && s.tpgid == child && s.session != child);
    assert!(wait_until(TIMEOUT, fg_is_child), "{:?}", stat(child));
    sh.send("\x1a"); // Ctrl-Z
    assert!(
        wait_until(TIMEOUT, || state(child) == Some('T')
            && state(vigil) == Some('T')),
        "after Ctrl-Z: child {:?}, vigil {:?}: {:?}",
        state(child),
        state(vigil),
        sh.output()
    );
    assert!(sh.wait_output("Stopped", TIMEOUT), "{:?}", sh.output());
    sh.send("fg\n");
    let running = |p| matches!(state(p), Some('S') | Some('R'));
    assert!(
        wait_until(TIMEOUT, || running(child)
            && running(vigil)
            && fg_is_child()),
        "after fg: child {:?}, vigil {:?}",
        stat(child),
        stat(vigil)
    );
    sh.send("\x03");
    assert!(
        wait_until(TIMEOUT, || gone(child) && gone(vigil)),
        "after Ctrl-C: {:?}",
        sh.output()
    );
}

/// As PID 1 (a container's own terminal), a child running as another user
/// gets the terminal's foreground: Ctrl-Z and Ctrl-C reach it, not vigil.
#[test]
fn pid1_another_user_gets_ctrl_c_and_ctrl_z() {
    let dir = open_dir("pid1-tty");
    let rec = dir.join("rec");
    let sh = shell();
    let bash = sh.pid();
    sh.send(&format!(
        "{} --pid --fork --mount-proc {} -v --log-format json --user nobody -- {} --out {} --exit-on 2\n",
        quoted(&which("unshare")),
        quoted(&vigil_bin()),
        quoted(&test_program("sigrec")),
        quoted(&rec)
    ));
    let vigil = sh.find_descendant(bash, "vigil", is_vigil);
    let child = sh.find_descendant(vigil, "the child", |p| comm(p).as_deref() == Some("sigrec"));
    assert!(
        wait_for_file(&ready_file(&rec), TIMEOUT),
        "sigrec never got ready: {:?}",
        sh.output()
    );
    assert_eq!(
        status_field(child, "Uid")
            .as_deref()
            .and_then(|u| u.split_whitespace().next()),
        Some("65534")
    );
    let (v, c) = (stat(vigil).unwrap(), stat(child).unwrap());
    assert_eq!(c.session, v.session, "same session as vigil: {c:?} {v:?}");
    assert!(
        wait_until(TIMEOUT, || stat(child).is_some_and(|s| s.tpgid == s.pgrp)),
        "the child's group never got the foreground: {:?}",
        stat(child)
    );
    sh.send("\x1a"); // Ctrl-Z
    assert!(
        wait_for_signal(&rec, libc::SIGTSTP, TIMEOUT),
        "Ctrl-Z did not reach the child: {:?} {:?}",
        read_signals(&rec),
        sh.output()
    );
    let prompts = sh.output().matches(PTY_PROMPT).count();
    sh.send("\x03"); // Ctrl-C: sigrec exits 0 on SIGINT
    assert!(
        wait_for_signal(&rec, libc::SIGINT, TIMEOUT),
        "Ctrl-C did not reach the child: {:?} {:?}",
        read_signals(&rec),
        sh.output()
    );
    assert!(
        wait_until(TIMEOUT, || gone(vigil)),
        "vigil did not exit: {:?}",
        sh.output()
    );
    assert!(
        sh.wait_output_count(PTY_PROMPT, prompts + 1, TIMEOUT),
        "no prompt: {:?}",
        sh.output()
    );
    // vigil itself got neither (-v would say): they went to the child's
    // group only.
    let records = Records::of(&sh.output());
    assert!(records.has("started"), "{records}");
    let received = records.all("signal_received");
    assert!(
        !received
            .iter()
            .any(|r| r["signal"] == "SIGINT" || r["signal"] == "SIGTSTP"),
        "{records}"
    );
    run_line(&sh, "echo status=$?");
    assert!(sh.output().contains("status=0"), "{:?}", sh.output());
}

/// Not PID 1, another user, an interactive shell as the child: Ctrl-C
/// reaches vigil, which holds the terminal, and goes on to the child's
/// process group, so it ends the shell's foreground job (`sleep`) as it
/// would without `--user`, not just the shell. It is no stop of vigil's:
/// the shell runs on and `--timeout` still passes when its time comes.
#[test]
fn not_pid1_another_user_ctrl_c_reaches_the_child_s_job_and_stops_nothing() {
    let sh = shell();
    let bash = sh.pid();
    let prompts = sh.output().matches(PTY_PROMPT).count();
    sh.send(&format!(
        "{} -v --log-format json --timeout 8s --user nobody -- bash --norc --noprofile -i\n",
        quoted(&vigil_bin())
    ));
    let vigil = sh.find_descendant(bash, "vigil", is_vigil);
    let inner = sh.find_descendant(vigil, "the inner bash", |p| {
        comm(p).as_deref() == Some("bash")
    });
    // The inner shell (as nobody, without job control) reads its first
    // line once it has shown its prompt, the same as the outer one's.
    assert!(
        sh.wait_output_count(PTY_PROMPT, prompts + 1, TIMEOUT),
        "no prompt from the inner bash: {:?}",
        sh.output()
    );
    sh.send("sleep 1000\n");
    let job = sh.find_descendant(inner, "the inner bash's sleep", |p| {
        comm(p).as_deref() == Some("sleep")
    });
    sh.send("\x03");
    assert!(
        wait_until(TIMEOUT, || gone(job)),
        "Ctrl-C did not end the inner bash's job: {:?}",
        sh.output()
    );
    assert!(
        alive(inner) && alive(vigil),
        "after Ctrl-C: inner bash {:?}, vigil {:?}: {:?}",
        state(inner),
        state(vigil),
        sh.output()
    );
    // vigil says so once it has forwarded it, which may be after the job
    // is gone.
    let from_terminal = |r: &Records| {
        r.all("signal_received")
            .iter()
            .any(|r| r["signal"] == "SIGINT" && r["sender"]["kind"] == "terminal")
    };
    assert!(
        wait_until(TIMEOUT, || from_terminal(&Records::of(&sh.output()))),
        "vigil got the Ctrl-C: {:?}",
        sh.output()
    );
    let records = Records::of(&sh.output());
    assert!(!records.has("stopping"), "Ctrl-C started a stop: {records}");
    // The timeout still passes, and stops the shell (an interactive bash
    // ignores SIGTERM; `exit` ends it).
    assert!(
        wait_until(TIMEOUT, || Records::of(&sh.output()).has("timeout_passed")),
        "the timeout never passed: {:?}",
        sh.output()
    );
    sh.send("exit\n");
    assert!(
        wait_until(TIMEOUT, || gone(vigil)),
        "vigil did not exit: {:?}",
        sh.output()
    );
    run_line(&sh, "echo status=$?");
    assert!(sh.output().contains("status=124"), "{:?}", sh.output());
}
