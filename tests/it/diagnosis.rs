//! Diagnosis: who sent a signal (logged at `-v` with its pid and name, or
//! "from outside this PID namespace", or "from the kernel"), and the exit
//! report: when it is shown and at what level, and what it blames for each
//! way a container ends. The report written to a file is
//! tests/it/termination_log.rs; an OOM kill, tests/it/oom.rs; a report that must
//! get through a full pipe, tests/it/stdio.rs.

use crate::common::*;

fn uid() -> u32 {
    // SAFETY: getuid has no arguments and cannot fail.
    unsafe { libc::getuid() }
}

/// Runs `script` (which writes the pid of the process that will `kill -TERM
/// 1` to `sender`) and checks that the log names that process as the
/// sender. Returns the output and the sender's pid.
fn assert_sender_named(script: &str, sender_words: &[&str]) -> (Output, String) {
    let dir = TempDir::new("provenance");
    let out = run_sh(Vigil::pid1().arg("-v").json(), &dir, script);
    let sender = read_trimmed(&dir.join("sender"));
    assert!(!sender.is_empty(), "the script wrote no sender pid\n{out}");
    let received = out.records().one("signal_received").clone();
    assert_fields(
        &received,
        json!({
            "signal": "SIGTERM",
            "sender": {
                "kind": "process",
                "pid": sender.parse::<i64>().unwrap(),
                "uid": uid(),
                "name": title(sender_words),
            }
        }),
        &out,
    );
    // vigil forwarded it: the child (a shell waiting) died of it.
    assert_eq!(out.code(), Some(143), "{out}");
    (out, sender)
}

/// The child sends SIGTERM itself. vigil names a sender after it has
/// passed the signal on, so the child, ended by it, takes half a second to
/// go: a zombie's /proc has no command line left to read.
const CHILD_SENDS: &str =
    "trap 'sleep 0.5; exit 143' TERM; echo $$ > sender; kill -TERM 1; sleep 1000 & wait";

// ---------------------------------------------------------------------------
// Who sent a signal
// ---------------------------------------------------------------------------

/// A SIGTERM sent from inside the namespace names its sender's pid: the
/// child itself, or a process further down.
#[test]
fn provenance_names_a_sender_inside_the_namespace() {
    assert_sender_named(CHILD_SENDS, &["sh", "-c", CHILD_SENDS]);
    // A grandchild sends it, and stays a shell while vigil looks (its
    // last command is not `sleep`, which the shell would exec).
    assert_sender_named(
        "sh -c 'echo $$ > sender; kill -TERM 1; sleep 1000; :' & wait",
        &["sh", "-c", "echo $$ > sender; kill -TERM 1; sleep 1000; :"],
    );
}

/// A signal sent from outside the namespace (here by the test) comes from
/// "pid 0 (outside this PID namespace)"; at default verbosity no signal is
/// logged.
#[test]
fn provenance_from_outside_the_namespace() {
    let outside = json!({"kind": "outside_namespace", "pid": 0, "uid": 0});
    let (run, _) = start_sleep(Vigil::pid1().arg("-v").json());
    // SIGWINCH: forwarded, and harmless to `sleep`.
    run.signal(libc::SIGWINCH);
    let winch = run.wait_record("signal_received", TIMEOUT, |r| r["signal"] == "SIGWINCH");
    let winch = winch.unwrap_or_else(|| panic!("{}", run.describe()));
    assert_eq!(winch["sender"], outside, "{winch}");
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    let records = out.records();
    let term: Vec<&Value> = records
        .all("signal_received")
        .into_iter()
        .filter(|r| r["signal"] == "SIGTERM")
        .collect();
    assert_eq!(term.len(), 1, "{out}");
    assert_eq!(term[0]["sender"], outside, "{out}");

    let (run, _) = start_sleep(Vigil::pid1().json());
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert!(!out.records().has("signal_received"), "{out}");
}

/// `-p TERM` (vigil not PID 1, under a shell that exits):
/// the SIGTERM that comes when the parent dies is reported as that, not as
/// sent by the dying parent.
#[test]
fn the_parent_death_signal_is_reported_as_that() {
    let dir = TempDir::new("pdeath");
    // The parent dies once the child runs (vigil has asked for the signal
    // by then) and the test knows vigil's pid: when the test says `go`.
    let parent = "\"$@\" & while [ ! -e go ]; do sleep 0.01; done";
    let v = Vigil::wrapped(&["sh", "-c", parent, "sh"]).args(["-v", "-p", "TERM"]);
    let run = start_sh(v.json(), &dir, ": > ready; sleep 1000 & wait");
    let vigil = run.vigil_pid();
    std::fs::write(dir.join("go"), "").unwrap();
    let out = run.wait(TIMEOUT);
    assert!(
        wait_until(TIMEOUT, || gone(vigil)),
        "vigil did not stop when its parent died"
    );
    let records = out.records();
    assert_fields(
        records.one("signal_received"),
        json!({"signal": "SIGTERM", "sender": {"kind": "parent_death"}}),
        &out,
    );
    let exit = records.exit();
    assert_fields(
        exit,
        json!({"level": "info", "stop": {"sender": {"kind": "parent_death"}, "sent": "SIGTERM"}}),
        &out,
    );
    // How the report words it.
    assert_has(
        exit["msg"].as_str().unwrap(),
        &["; stop: SIGTERM from the kernel: vigil's parent died (-p) (sent SIGTERM)"],
    );
}

/// A process whose command name (`comm`) is `exe` (how
/// busybox names an applet it re-executes through /proc/self/exe) is
/// listed by its command line, as every process is.
#[test]
fn a_process_called_exe_is_named_by_its_command_line() {
    let dir = TempDir::new("exename");
    std::os::unix::fs::symlink(which("sleep"), dir.join("exe")).unwrap();
    let script = "trap '' TERM; echo $$ > pid; : > ready; exec -a sleep ./exe 1000";
    // bash: `exec -a` sets argv[0], which dash cannot.
    let run = Vigil::pid1()
        .json()
        .cwd(dir.path())
        .args(["--grace-period", "1s", "--", "bash", "-c", script])
        .spawn();
    assert!(
        wait_for_file(&dir.join("ready"), TIMEOUT),
        "{}",
        run.describe()
    );
    let pid: i64 = read_trimmed(&dir.join("pid")).parse().unwrap();
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.code(), Some(137), "{out}");
    assert_fields(
        out.records().exit(),
        json!({"grace_kills": [{"pid": pid, "name": "sleep 1000"}]}),
        &out,
    );
}

// ---------------------------------------------------------------------------
// When the exit report shows, and at what level
// ---------------------------------------------------------------------------

/// A normal exit: the report is logged at -v (info), not at all by default.
#[test]
fn exit_report_normal_exit_only_with_v() {
    let dir = TempDir::new("reportok");
    let script = "echo $$ > pid; exit 0";
    let out = run_sh(Vigil::pid1().arg("-v"), &dir, script);
    assert_eq!(out.code(), Some(0), "{out}");
    let text = exit_report_text(&out, false);
    let pid = read_trimmed(&dir.join("pid"));
    assert_eq!(
        text,
        format!(
            "child exited with code 0; exit status 0; command: sh -c 'echo $$ > pid; exit 0' (pid {pid}); orphans reaped: 0"
        )
    );

    let out = run_sh(Vigil::pid1(), &dir, script);
    assert_eq!(out.code(), Some(0), "{out}");
    assert_eq!(out.stderr, "", "a normal exit logs nothing by default");
}

/// Exit 3 is abnormal (a warning, logged by default), unless `-e 3` says
/// it is expected.
#[test]
fn exit_report_exit_3_is_a_warning() {
    let dir = TempDir::new("report3");
    let out = run_sh(Vigil::pid1(), &dir, "echo $$ > pid; exit 3");
    assert_eq!(out.code(), Some(3), "{out}");
    let pid = read_trimmed(&dir.join("pid"));
    assert_eq!(
        exit_report_text(&out, true),
        format!(
            "child exited with code 3; exit status 3; command: sh -c 'echo $$ > pid; exit 3' (pid {pid}); orphans reaped: 0"
        )
    );

    let out = run_sh(Vigil::pid1().args(["-e", "3"]), &dir, "exit 3");
    assert_eq!(out.code(), Some(0), "{out}");
    assert_eq!(out.stderr, "", "-e 3 makes exit 3 normal\n{out}");
    let out = run_sh(Vigil::pid1().args(["-v", "-e", "3"]), &dir, "exit 3");
    assert_has(
        &exit_report_text(&out, false),
        &["child exited with code 3; exit status 0"],
    );
}

/// Death by the SIGTERM vigil forwarded (what `docker
/// stop` does): the report says who sent it and when. It is the expected
/// answer, so no warning, but it is shown at the default verbosity: "exit
/// 143, who sent SIGTERM?" is answered in `docker logs` without `-v`. A
/// lower verbosity (`TINI_VERBOSITY=0`) hides it.
#[test]
fn exit_report_after_a_stop_is_shown_by_default() {
    let (run, pid) = start_sleep(Vigil::pid1());
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.code(), Some(143), "{out}");
    eprintln!("exit report after a stop:\n{}", exit_line(&out));
    let text = exit_report_text(&out, false);
    assert!(
        text.starts_with(&format!(
            "child was killed by SIGTERM (status 143); exit status 143; command: sleep 1000 (pid {pid}); stop: SIGTERM from pid 0 (outside this PID namespace) (sent SIGTERM), child ended 0."
        )),
        "{text}"
    );
    assert!(text.ends_with(" later; orphans reaped: 0"), "{text}");
    assert_eq!(out.stderr_lines().len(), 1, "{out}");

    let (run, _) = start_sleep(Vigil::pid1().env("TINI_VERBOSITY", "0"));
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.code(), Some(143), "{out}");
    assert_eq!(out.stderr, "", "verbosity 0 hides the report\n{out}");
}

/// `vigil -- yes | head -1`. The child dies of SIGPIPE
/// (141), as it would without vigil, and vigil says nothing about it by
/// default (nor do bash, tini, dumb-init or catatonit); at `-v` the report
/// is there.
#[test]
fn a_sigpipe_death_is_reported_only_at_v() {
    let v = Vigil::wrapped(&["sh", "-c", "\"$@\" | head -1; exit \"$?\"", "sh"]);
    let out = v.args(["--", "yes"]).run();
    assert_eq!(out.stdout, "y\n", "{out}");
    assert_eq!(out.stderr, "", "{out}");
    let v = Vigil::wrapped(&["sh", "-c", "\"$@\" | head -1", "sh"]);
    let out = v.args(["-v", "--", "yes"]).run();
    assert_has(
        &exit_report_text(&out, false),
        &["child was killed by SIGPIPE (status 141); exit status 141; command: yes (pid "],
    );
}

/// A shell that was the child says the same thing as a status: its `yes`
/// died of SIGPIPE and the shell exits 141. As quiet as the death itself.
#[test]
fn a_shell_exiting_141_after_a_sigpipe_is_as_quiet() {
    let v = Vigil::wrapped(&["sh", "-c", "\"$@\" | head -1", "sh"]);
    let out = v.args(["--", "sh", "-c", "yes; exit $?"]).run();
    assert_eq!(out.stdout, "y\n", "{out}");
    assert_eq!(out.stderr, "", "{out}");
    let v = Vigil::wrapped(&["sh", "-c", "\"$@\" | head -1", "sh"]);
    let out = v.args(["-v", "--", "sh", "-c", "yes; exit $?"]).run();
    assert_has(
        &exit_report_text(&out, false),
        &["child exited with code 141; exit status 141; "],
    );
}

/// Ctrl-C in a terminal kills the child (it holds the
/// terminal's foreground) with SIGINT: status 130, and no report by
/// default, as a shell reports none; at `-v` it says it was Ctrl-C.
#[test]
fn ctrl_c_is_reported_only_at_v() {
    for (flags, report_shown) in [("", false), ("-v ", true)] {
        let sh = PtyShell::spawn(&[]);
        assert!(sh.wait_output(PTY_PROMPT, TIMEOUT), "{}", sh.output());
        sh.send(&format!(
            "{} {flags}-- sleep 1000; echo status=$?\n",
            vigil_bin().display()
        ));
        let vigil = sh.find_descendant(sh.pid(), "vigil", is_vigil);
        holds_the_terminal(&sh, vigil);
        sh.send("\x03");
        assert!(sh.wait_output("status=130", TIMEOUT), "{}", sh.output());
        let output = sh.output();
        assert_eq!(output.contains("exit report"), report_shown, "{output}");
        if report_shown {
            assert!(
                output.contains("vigil: exit report: child was killed by SIGINT (status 130), from the terminal (Ctrl-C); exit status 130; command: sleep 1000"),
                "{output}"
            );
        }
    }
}

/// Waits until vigil's child, `sleep`, runs in the terminal's foreground.
fn holds_the_terminal(sh: &PtyShell, vigil: i32) -> i32 {
    let child = sh.find_descendant(vigil, "sleep", |p| comm(p).as_deref() == Some("sleep"));
    assert!(
        wait_until(TIMEOUT, || stat(child).is_some_and(|s| s.tpgid == s.pgrp)),
        "the child never got the terminal: {}",
        sh.output()
    );
    child
}

/// Two vigils in one log (an image whose entrypoint is vigil, run
/// under vigil as the engine's init): the inner one, whose parent is a
/// vigil, tags its lines with its pid.
#[test]
fn two_vigils_in_one_log_are_told_apart() {
    let inner = vigil_bin();
    let out = Vigil::pid1()
        .arg("--")
        .arg(&inner)
        .args(["--", "sh", "-c", "exit 3"])
        .run();
    assert_eq!(out.code(), Some(3), "{out}");
    let lines = out.stderr_lines();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("vigil[2]: warning: exit report: child exited with code 3; exit status 3; command: sh -c 'exit 3' (pid 3)"),
        "{out}"
    );
    assert!(
        lines[1].starts_with(
            "vigil: warning: exit report: child exited with code 3; exit status 3; command: "
        ),
        "{out}"
    );
}

/// Docker's own `--init` is tini, installed as `docker-init`: a vigil
/// under it is the only vigil in the log, and writes `vigil: `, which a
/// pipeline matching `^vigil: ` finds. (Played with Debian's tini-static
/// called `docker-init`, as PID 1 of a new namespace.)
#[test]
fn under_dockers_own_init_lines_start_vigil() {
    let dir = TempDir::new("tiniinit");
    let init = dir.join("docker-init");
    std::os::unix::fs::symlink(which("tini-static"), &init).unwrap();
    let wrapper: Vec<std::ffi::OsString> = vec![
        "unshare".into(),
        "--pid".into(),
        "--fork".into(),
        "--mount-proc".into(),
        init.into(),
        "--".into(),
    ];
    let out = Vigil::wrapped(&wrapper)
        .args(["--", "sh", "-c", "exit 3"])
        .run();
    assert_eq!(out.code(), Some(3), "{out}");
    let lines = out.stderr_lines();
    assert_eq!(lines.len(), 1, "{out}");
    assert!(
        lines[0].starts_with("vigil: warning: exit report: child exited with code 3; "),
        "{out}"
    );
}

/// A vigil installed under another name (`docker-init`, as the engine's
/// init) still calls itself `vigil`, so that the vigil below it knows
/// there are two in the log and tags its lines.
#[test]
fn a_vigil_called_docker_init_is_known_as_vigil() {
    let dir = TempDir::new("vigilinit");
    let init = dir.join("docker-init");
    std::os::unix::fs::symlink(vigil_bin(), &init).unwrap();
    let wrapper: Vec<std::ffi::OsString> = vec![
        "unshare".into(),
        "--pid".into(),
        "--fork".into(),
        "--mount-proc".into(),
        init.into(),
        "--".into(),
    ];
    let out = Vigil::wrapped(&wrapper)
        .args(["--", "sh", "-c", "exit 3"])
        .run();
    assert_eq!(out.code(), Some(3), "{out}");
    let lines = out.stderr_lines();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("vigil[2]: warning: exit report: child exited with code 3; "),
        "{out}"
    );
    assert!(
        lines[1].starts_with("vigil: warning: exit report: "),
        "{out}"
    );
}

/// The command is quoted only where a shell needs it: `dd if=/dev/zero`
/// stays as it is (`=` and `%` are plain characters after the first
/// word), `'exit 0'` is quoted.
#[test]
fn the_command_is_quoted_only_where_a_shell_needs_it() {
    let out = Vigil::pid1()
        .args([
            "-v",
            "--",
            "sh",
            "-c",
            "exit 0",
            "sh",
            "if=/dev/zero",
            "50%",
        ])
        .run();
    assert_eq!(out.code(), Some(0), "{out}");
    assert_has(
        &exit_report_text(&out, false),
        &["; command: sh -c 'exit 0' sh if=/dev/zero 50% (pid 2); "],
    );
}

// ---------------------------------------------------------------------------
// What the exit report blames
// ---------------------------------------------------------------------------

/// A forwarded signal that killed the child names its sender as the `-v`
/// log does: pid, name and uid, the name read when the signal came (the
/// sender, a process in the container, is gone by the time of the report).
#[test]
fn a_forwarded_signal_names_its_sender_by_name() {
    let dir = TempDir::new("fwdname");
    // The sender stays a while: vigil reads its name after the kill, from
    // /proc, and a sender already gone has none; it stays a shell (its
    // last command is not a `sleep` the shell would exec).
    let script = "sh -c 'echo $$ > sender; kill -USR1 1; sleep 5; :' & wait; sleep 1000 & wait";
    let out = run_sh(Vigil::pid1().arg("-v"), &dir, script);
    assert_eq!(out.code(), Some(138), "{out}");
    let sender = read_trimmed(&dir.join("sender"));
    let who = format!(
        "SIGUSR1 from pid {sender} ({}, uid {})",
        title(&["sh", "-c", "echo $$ > sender; kill -USR1 1; sleep 5; :"]),
        uid()
    );
    assert!(
        out.stderr
            .lines()
            .any(|l| l == format!("vigil: received {who}")),
        "{out}"
    );
    assert_has(
        &exit_report_text(&out, true),
        &[&format!(
            "child was killed by SIGUSR1 (status 138), forwarded by vigil: {who}; exit status 138; "
        )],
    );
}

/// Ctrl-C that reaches vigil rather than the child (vigil's group holds
/// the terminal: the child runs as another user, in a session of its own)
/// is the terminal's, not "from the kernel": it goes on to the child's
/// group and starts no stop, and it is quiet, as a Ctrl-C is: the report
/// only at `-v`.
#[test]
fn a_ctrl_c_that_reaches_vigil_is_the_terminals() {
    let sh = PtyShell::spawn(&[]);
    assert!(sh.wait_output(PTY_PROMPT, TIMEOUT), "{}", sh.output());
    sh.send(&format!(
        "{} -v --log-format json --user nobody -- sleep 1000; echo status=$?\n",
        vigil_bin().display()
    ));
    // The child, in a session of its own, runs; vigil's group holds the
    // terminal.
    let vigil = sh.find_descendant(sh.pid(), "vigil", is_vigil);
    sh.find_descendant(vigil, "sleep", |p| comm(p).as_deref() == Some("sleep"));
    assert!(
        wait_until(TIMEOUT, || stat(vigil).is_some_and(|s| s.tpgid == s.pgrp)),
        "vigil's group does not hold the terminal: {}",
        sh.output()
    );
    sh.send("\x03");
    assert!(sh.wait_output("status=130", TIMEOUT), "{}", sh.output());
    the_terminals_ctrl_c(&sh);
}

/// vigil got SIGINT from the terminal, sent it on to the child's job,
/// which it killed, and started no stop of its own.
fn the_terminals_ctrl_c(sh: &PtyShell) {
    let records = sh.records();
    let received: Vec<&Value> = records.all("signal_received");
    assert!(
        received
            .iter()
            .any(|r| r["signal"] == "SIGINT" && r["sender"]["kind"] == "terminal"),
        "{records}"
    );
    assert!(
        received.iter().all(|r| r["sender"]["kind"] != "kernel"),
        "{records}"
    );
    let exit = records.exit();
    assert_fields(
        exit,
        json!({"status": 130, "ending": {"signal": "SIGINT", "cause": "terminal"}, "command": "sleep 1000"}),
        records.to_string(),
    );
    // Sent on to the child's job, as the terminal would: no stop of vigil's.
    assert!(exit.get("stop").is_none(), "{exit}");
}

/// Ctrl-Z, `bg`, `fg`, Ctrl-C: `fg` of a running job gives the terminal
/// to vigil's group without a signal, so the Ctrl-C reaches vigil, which
/// sends it on to the child's group. It is the terminal's, not "from the
/// kernel", and the report says Ctrl-C.
#[test]
fn ctrl_c_after_bg_and_fg_is_the_terminals() {
    let sh = PtyShell::spawn(&[]);
    assert!(sh.wait_output(PTY_PROMPT, TIMEOUT), "{}", sh.output());
    sh.send(&format!(
        "{} -v --log-format json -- sleep 1000\n",
        vigil_bin().display()
    ));
    let vigil = sh.find_descendant(sh.pid(), "vigil", is_vigil);
    holds_the_terminal(&sh, vigil);
    sh.send("\x1a"); // Ctrl-Z
    assert!(sh.wait_output("Stopped", TIMEOUT), "{}", sh.output());
    let prompts = sh.output().matches(PTY_PROMPT).count();
    sh.send("bg\n");
    assert!(
        sh.wait_output_count(PTY_PROMPT, prompts + 1, TIMEOUT),
        "{}",
        sh.output()
    );
    sh.send("fg\n");
    // `fg` gives the terminal to vigil's group.
    assert!(
        wait_until(TIMEOUT, || stat(vigil).is_some_and(|s| s.tpgid == s.pgrp)),
        "fg did not give vigil's group the terminal: {}",
        sh.output()
    );
    sh.send("\x03");
    sh.send("echo status=$?\n");
    assert!(sh.wait_output("status=130", TIMEOUT), "{}", sh.output());
    the_terminals_ctrl_c(&sh);
}

/// Why no stop signal was sent is said as it is: `--rewrite TERM:0` drops
/// it, and the grace deadline that comes later is not blamed.
#[test]
fn a_stop_signal_dropped_by_rewrite_is_said_so() {
    let _cpu = timing();
    let run = Vigil::pid1()
        .json()
        .args([
            "--rewrite",
            "TERM:0",
            "--grace-period",
            "1s",
            "--",
            "sleep",
            "1000",
        ])
        .spawn();
    run.child_pid();
    let (out, _) = signal_timed(run, libc::SIGTERM);
    assert_eq!(out.code(), Some(137), "{out}");
    assert_fields(
        out.records().exit(),
        json!({"ending": {"cause": "grace_deadline"}, "stop": {"signal": "SIGTERM", "not_sent": "rewritten"}}),
        &out,
    );
}

/// Processes are named by their titles, the command line `ps` shows, not
/// by the kernel's 15-byte command name: postgres' workers, all `postgres`
/// to the kernel, are told apart.
#[test]
fn processes_are_named_by_their_titles() {
    let dir = TempDir::new("titles");
    // Each worker has its title (and ignores SIGTERM) once it runs sleep.
    let script = "for t in checkpointer walwriter; do \
                    bash -c \"trap '' TERM; exec -a 'postgres: $t' sleep 1000\" & \
                    while [ \"$(cat /proc/$!/comm)\" != sleep ]; do sleep 0.01; done; \
                  done; exit 0";
    let out = run_sh(
        Vigil::pid1().json().args(["--drain-timeout", "1s"]),
        &dir,
        script,
    );
    assert_eq!(out.code(), Some(0), "{out}");
    let records = out.records();
    let killed = records.one("drain_killed");
    assert_eq!(killed["cause"], "drain_timeout", "{out}");
    let mut names = names_of(&killed["killed"]);
    names.sort();
    assert_eq!(
        names,
        ["postgres: checkpointer 1000", "postgres: walwriter 1000"],
        "{out}"
    );
}

/// The stop is timed from the stop signal's arrival, so a pre-stop hook's
/// duration is within the child's `ended_after`; measured durations are
/// given to the millisecond.
#[test]
fn the_stop_is_timed_from_the_signal_to_the_millisecond() {
    let _cpu = timing();
    let dir = TempDir::new("stoptime");
    let v = Vigil::pid1().json().args(["--pre-stop", "sleep 0.3"]);
    let run = start_sh(v, &dir, "trap 'exit 0' TERM; : > ready; sleep 1000 & wait");
    let (out, _) = signal_timed(run, libc::SIGTERM);
    assert_eq!(out.code(), Some(0), "{out}");
    let exit = out.records().exit().clone();
    let hook = exit["hooks"][0]["duration"].as_f64().unwrap();
    let after = exit["stop"]["ended_after"].as_f64().unwrap();
    assert!(
        hook >= 0.3 && after >= hook,
        "hook {hook}, ended_after {after}: {exit}"
    );
    let msg = exit["msg"].as_str().unwrap();
    let ms = |prefix: &str| {
        let rest = msg.split_once(prefix)?.1;
        let number = rest.split('s').next()?;
        let decimals = number.split_once('.')?.1;
        Some(decimals.len())
    };
    assert_eq!(ms("succeeded in "), Some(3), "{msg}");
    assert_eq!(ms("child ended "), Some(3), "{msg}");
}
