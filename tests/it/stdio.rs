//! vigil's own stdin, stdout and stderr when they are hostile: closed,
//! without /dev/null, a pipe that is full and nobody reads, a pipe with no
//! reader (SIGPIPE), a reader that comes late. vigil never blocks on a log
//! line while it supervises, never dies of its own SIGPIPE nor forwards it,
//! and its final lines (the deadline warnings, the exit report) wait for
//! room about a second in all.

use crate::common::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

// ---------------------------------------------------------------------------
// A busy stderr: the final lines wait for room
// ---------------------------------------------------------------------------

/// A wrapper that runs vigil as PID 1 with its stdout and stderr on a pipe
/// that `reader` (a shell command) empties onto the test's stderr. The
/// wrapper exits with vigil's status (kept in `.status` in the working
/// directory: dash has no `pipefail`).
fn pid1_behind(reader: &str) -> Vigil {
    let script =
        format!("{{ \"$@\" 2>&1; echo $? > .status; }} | ({reader}) >&2; exit \"$(cat .status)\"");
    Vigil::wrapped(&[
        "sh",
        "-c",
        &script,
        "sh",
        "unshare",
        "--pid",
        "--fork",
        "--mount-proc",
        "--",
    ])
}

/// The child fills the stderr pipe (64 KiB, a pipe's default size) and
/// exits 3 while nobody reads yet. vigil waits for room (about a
/// second in all) instead of dropping the report.
#[test]
fn the_report_waits_for_room_in_a_full_stderr_pipe() {
    let _cpu = timing();
    let dir = TempDir::new("fullpipe");
    let v = pid1_behind("sleep 0.5; cat");
    let out = spawn_sh(v, &dir, "head -c 65536 /dev/zero >&2; exit 3").wait(TIMEOUT);
    assert_eq!(out.code(), Some(3), "{out}");
    let text = exit_report_text(&out, true);
    assert!(
        text.starts_with("child exited with code 3; exit status 3; command: sh -c "),
        "{text}"
    );
    assert!(
        out.stderr.ends_with("; orphans reaped: 0\n"),
        "the report is not whole, or not last"
    );
}

/// The `docker stop` form of the same: a child that ignores SIGTERM
/// and keeps stderr full (`yes >&2`), a 1 s grace period, and a reader that
/// only starts after the deadline. Both final lines (the grace warning and
/// the report) get through, whole, within the second vigil allows them.
#[test]
fn the_grace_warning_and_report_get_through_a_busy_stderr() {
    let _cpu = timing();
    let dir = TempDir::new("busypipe");
    let go = dir.join("go");
    let reader = format!(
        "while [ ! -e '{}' ]; do sleep 0.05; done; cat",
        go.display()
    );
    let v = pid1_behind(&reader).json().args(["--grace-period", "1s"]);
    let run = start_sh(
        v,
        &dir,
        "trap '' TERM; echo $$ > pid; : > ready; exec yes 0123456789 >&2",
    );
    // vigil is the wrapper's grandchild (sh, unshare, vigil).
    let exe = fs::canonicalize(vigil_bin()).unwrap();
    let vigil = descendants(run.outer_pid())
        .into_iter()
        .find(|&p| fs::read_link(format!("/proc/{p}/exe")).is_ok_and(|e| e == exe))
        .unwrap_or_else(|| panic!("no vigil below the wrapper\n{}", run.describe()));
    let yes = run.child_pid_of(vigil);
    assert!(
        wait_until(TIMEOUT, || blocked_on_a_full_pipe(yes)),
        "the pipe never filled up\n{}",
        run.describe()
    );
    kill(vigil, libc::SIGTERM).unwrap();
    // The reader starts once the grace deadline has passed: vigil killed
    // the child, and has its final lines to write to a full pipe.
    assert!(
        wait_until(TIMEOUT, || !alive(yes)),
        "the grace deadline never came\n{}",
        run.describe()
    );
    fs::write(&go, "").unwrap();
    let out = run.wait(TIMEOUT);
    let pid: i64 = read_trimmed(&dir.join("pid")).parse().unwrap();
    assert_eq!(out.code(), Some(137), "{}", tail(&out.stderr));
    // Both lines are whole records: each parses, the report last.
    let records = Records::of(&out.stderr);
    assert_fields(
        records.one("grace_deadline"),
        json!({"grace_period": 1, "killed": [{"pid": pid, "name": "yes 0123456789"}]}),
        tail(&out.stderr),
    );
    let exit = records.exit();
    assert_fields(
        exit,
        json!({"status": 137, "ending": {"signal": "SIGKILL", "cause": "grace_deadline"}, "stop": {"sent": "SIGTERM"}}),
        tail(&out.stderr),
    );
    // The child ended at the deadline, though vigil, waiting for room to
    // write the warning, reaped it later.
    let after = exit["stop"]["ended_after"].as_f64().unwrap();
    assert!((1.0..1.1).contains(&after), "{exit}");
    assert_eq!(records.events().last(), Some(&"exit"), "{records}");
    assert!(out.stderr.ends_with("}\n"), "{}", tail(&out.stderr));
}

/// The last lines of a long output.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}

/// `path` for libc calls.
fn c_path(path: &Path) -> std::ffi::CString {
    std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap()
}

fn mkfifo(path: &Path) {
    let c = c_path(path);
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

fn open_fd(path: &Path, flags: i32) -> std::os::fd::OwnedFd {
    use std::os::fd::FromRawFd;
    let c = c_path(path);
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
    assert!(
        fd >= 0,
        "open {}: {}",
        path.display(),
        std::io::Error::last_os_error()
    );
    unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }
}

/// Fills the pipe behind `fifo` (which must have a reader) until a write
/// would block. Returns the number of bytes in it.
fn fill_fifo(fifo: &Path) -> usize {
    use std::os::fd::AsRawFd;
    let w = open_fd(fifo, libc::O_WRONLY | libc::O_NONBLOCK);
    let page = [b'#'; 4096];
    let mut total = 0;
    loop {
        let n = unsafe { libc::write(w.as_raw_fd(), page.as_ptr().cast(), page.len()) };
        if n <= 0 {
            break;
        }
        total += n as usize;
    }
    let one = [b'#'];
    while unsafe { libc::write(w.as_raw_fd(), one.as_ptr().cast(), 1) } == 1 {
        total += 1;
    }
    total
}

/// A fifo in `dir` whose pipe is full, and its read end, which the caller
/// keeps open (a writer then finds the pipe full, not broken) and reads
/// from only to make room.
fn full_fifo(dir: &TempDir) -> (PathBuf, std::os::fd::OwnedFd) {
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let reader = open_fd(&fifo, libc::O_RDONLY | libc::O_NONBLOCK);
    let filled = fill_fifo(&fifo);
    assert!(filled >= 4096, "filled only {filled} bytes");
    (fifo, reader)
}

/// vigil as PID 1 with its stderr on `fifo`.
fn pid1_stderr_to(fifo: &Path) -> Vigil {
    pid1_via_sh(&format!("exec \"$@\" 2>'{}'", fifo.display()))
}

/// stderr is a pipe that is full and that nobody reads; vigil logs at -vvv
/// through a storm: it must drop lines rather than block.
#[test]
fn stderr_on_a_full_pipe_nobody_reads() {
    let dir = TempDir::new("fullpipe");
    let (fifo, _reader) = full_fifo(&dir);
    let out = dir.join("counts");
    let v = pid1_stderr_to(&fifo).arg("-vvv");
    let run = start_counter(v, &out);
    storm_then_stop(run, &out, 3000, "a full stderr pipe");
}

/// The same pipe, full but for one page, and a log line longer than a page
/// (the exit report of a command with a long argument): a blocking write of
/// more than PIPE_BUF bytes waits for room that never comes.
#[test]
fn stderr_pipe_with_one_free_page_and_a_long_log_line() {
    let dir = TempDir::new("longline");
    let (fifo, reader) = full_fifo(&dir);
    // Make room for exactly one page.
    {
        use std::os::fd::AsRawFd;
        let mut buf = [0u8; 4096];
        let n = unsafe { libc::read(reader.as_raw_fd(), buf.as_mut_ptr().cast(), 4096) };
        assert_eq!(n, 4096);
    }
    let long_arg = "a".repeat(20_000);
    // exit 3 is unexpected: the exit report is a warning, logged by default.
    let v = pid1_stderr_to(&fifo).args(["--", "sh", "-c", "sleep 0.2; exit 3", &long_arg]);
    let run = v.spawn();
    let o = run.wait(Duration::from_secs(10));
    assert_eq!(
        o.status,
        Exit::Code(3),
        "vigil did not exit after its child did: it blocked writing a long log line to a pipe with room for one page only\n{o}"
    );
}

/// The final lines wait for room about a second *in all*, not a second
/// each: on a full pipe that nobody reads, the grace warning
/// waits out the second and the exit report does not start another, so
/// vigil exits about 1 s after its 1 s grace deadline.
#[test]
fn final_lines_wait_about_a_second_in_all_on_a_full_pipe() {
    let _cpu = timing();
    let dir = TempDir::new("patience");
    let (fifo, _reader) = full_fifo(&dir);
    let ready = dir.join("ready");
    let child = format!("trap '' TERM; : > '{}'; exec sleep 1000", ready.display());
    let v = pid1_stderr_to(&fifo).args(["--grace-period", "1s", "--", "sh", "-c", &child]);
    let run = v.spawn();
    assert!(
        wait_until(TIMEOUT, || ready.exists()),
        "the child never got ready\n{}",
        run.describe()
    );
    let (out, took) = timed_stop(run);
    no_panic(&out);
    assert_eq!(out.status, Exit::Code(137), "{out}");
    assert!(
        took >= Duration::from_millis(1900) && took < Duration::from_millis(2800),
        "stop took {took:?}: a 1 s grace period, then about 1 s for the final lines in all"
    );
}

// ---------------------------------------------------------------------------
// A reader that gives up soon after vigil exits
// ---------------------------------------------------------------------------

/// A log reader like a container engine's: slower than a flood, and giving
/// up shortly after the process it reads from has exited (dockerd waits 2 s
/// for its copiers, then drops what is still in the pipe). The child floods
/// stderr, vigil is stopped, and at that moment the pipe is full: the report
/// comes last, behind 64 KiB. vigil waits at exit while the reader makes
/// progress, so the reader's 2 s after the exit are enough for the rest;
/// without that wait the report was what got dropped.
#[test]
fn the_report_outlasts_a_reader_that_gives_up_after_the_exit() {
    let _cpu = timing();
    use std::io::Read;
    let mut vigil = Command::new(vigil_bin())
        .args(["--", "sh", "-c", "exec yes 0123456789 >&2"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vigil");
    let guard = ProcGuard::new();
    guard.track(vigil.id() as i32);
    let mut stderr = vigil.stderr.take().expect("stderr");
    // The flood fills the pipe, then vigil is stopped.
    let mut yes = None;
    let full = wait_until(TIMEOUT, || {
        yes = yes.or_else(|| children(vigil.id() as i32).first().copied());
        yes.is_some_and(blocked_on_a_full_pipe)
    });
    assert!(full, "the flood never filled the pipe");
    kill(vigil.id() as i32, libc::SIGTERM).unwrap();
    // Read 1 KiB each 50 ms (20 KiB/s), until 2 s after vigil's exit.
    let mut read = Vec::new();
    let mut chunk = [0u8; 1024];
    let mut exited_at = None;
    loop {
        if exited_at.is_none() && vigil.try_wait().unwrap().is_some() {
            exited_at = Some(std::time::Instant::now());
        }
        if exited_at.is_some_and(|t| t.elapsed() >= Duration::from_secs(2)) {
            break;
        }
        match stderr.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => read.extend_from_slice(&chunk[..n]),
            Err(e) => panic!("reading vigil's stderr: {e}"),
        }
        // The pace of the reader (20 KiB/s, slower than the flood) is
        // what the test is about.
        std::thread::sleep(Duration::from_millis(50));
    }
    let exited = vigil.wait().unwrap();
    let text = String::from_utf8_lossy(&read);
    // The report may follow the flood's last, unfinished line.
    let report = text
        .lines()
        .find_map(|l| l.find("vigil: exit report: ").map(|at| &l[at..]));
    eprintln!(
        "read {} bytes; exit status {exited}; report: {report:?}",
        read.len()
    );
    assert_eq!(exited.code(), Some(143));
    assert!(
        report.is_some(),
        "the report was not read before the reader gave up; the last lines:\n{}",
        tail(&text)
    );
}

/// The child's last line is still in vigil's stdout pipe when vigil is
/// stopped, and the reader (an engine between two reads) does not read it
/// yet. A reader gets such a tail in one read, whenever it comes: vigil
/// exits at once rather than waiting for it, or for the half second after
/// which it takes a reader for stalled. The line is still there for the
/// reader after vigil's exit.
#[test]
fn a_short_unread_tail_does_not_hold_up_the_exit() {
    let _cpu = timing();
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let mut vigil = Command::new(vigil_bin())
        .args([
            "--",
            "sh",
            "-c",
            "echo last-line-of-the-child; exec sleep 1000",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("vigil");
    let guard = ProcGuard::new();
    guard.track(vigil.id() as i32);
    let mut stdout = vigil.stdout.take().expect("stdout");
    // Wait until the line is in the pipe, unread.
    let unread = || {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int into `n`.
        unsafe { libc::ioctl(stdout.as_raw_fd(), libc::FIONREAD, &mut n) };
        n
    };
    let waited = wait_until(Duration::from_secs(10), || unread() > 0);
    assert!(waited, "the child's line never reached the pipe");
    let sent = std::time::Instant::now();
    kill(vigil.id() as i32, libc::SIGTERM).unwrap();
    let mut status = None;
    wait_until(Duration::from_secs(10), || {
        status = vigil.try_wait().unwrap();
        status.is_some()
    });
    let took = sent.elapsed();
    let status = status.expect("vigil did not exit");
    assert_eq!(status.code(), Some(143));
    assert!(
        took < Duration::from_millis(400),
        "vigil waited {took:?} for a reader to take {} bytes it can take in one read",
        unread()
    );
    let mut text = String::new();
    stdout.read_to_string(&mut text).unwrap();
    assert_eq!(text, "last-line-of-the-child\n");
}

// ---------------------------------------------------------------------------
// A broken pipe
// ---------------------------------------------------------------------------

/// stderr is a pipe whose read end is closed: every log line raises SIGPIPE
/// (EPIPE). vigil must neither die of it nor forward it.
#[test]
fn stderr_on_a_pipe_with_no_reader() {
    let dir = TempDir::new("brokenpipe");
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    // fd 3 (read-write) lets the write-only open succeed, then goes away: no
    // reader is left.
    let f = fifo.display();
    let dir2 = TempDir::new("brokenpipe-out");
    let out = dir2.join("counts");
    let v = pid1_via_sh(&format!("exec 3<>'{f}'; exec \"$@\" 2>'{f}' 3>&-")).arg("-vvv");
    let run = start_counter(v, &out);
    // Really no reader: a non-blocking open for writing fails with ENXIO.
    let c = c_path(&fifo);
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_WRONLY | libc::O_NONBLOCK) };
    let err = std::io::Error::last_os_error();
    assert!(
        fd < 0 && err.raw_os_error() == Some(libc::ENXIO),
        "the fifo has a reader (open gave fd {fd}, {err})"
    );
    storm_then_stop(run, &out, 2000, "broken pipe");
}

/// `vigil --help | true`: stdout is a broken pipe; vigil exits 0 (it cannot
/// print), never killed by SIGPIPE.
#[test]
fn help_to_a_broken_pipe() {
    let (r, w) = nix::unistd::pipe().unwrap();
    drop(r);
    for arg in ["--help", "--version", "-l"] {
        let st = Command::new(vigil_bin())
            .arg(arg)
            .stdin(Stdio::null())
            .stdout(Stdio::from(w.try_clone().unwrap()))
            .stderr(Stdio::null())
            .status()
            .unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(st.signal(), None, "vigil {arg} died of a signal: {st:?}");
    }
}

// ---------------------------------------------------------------------------
// Closed stdio
// ---------------------------------------------------------------------------

/// With vigil's stderr (or other stdio) in a hostile state (`what` says
/// which): storms vigil with `count` signals, checks that every realtime
/// one (40, which queues) reached the counting child (vigil neither blocked
/// on a write nor died of SIGPIPE), that an ordinary signal still does, and
/// that a stop still ends with 143; the child never got a SIGPIPE (vigil's
/// own is not forwarded).
fn storm_then_stop(run: Running, out: &Path, count: u64, what: &str) {
    let vp = run.vigil_pid();
    let s = storm(vp, count, &[libc::SIGUSR1, libc::SIGHUP, 40]);
    assert!(
        wait_until(TIMEOUT, || Counts::read(out).count(40) == s.by[&40].0),
        "{what}: realtime signals lost, vigil stopped forwarding (state {:?}, wchan {:?}); sent {s:?}, counted {:?}\n{}",
        state(vp),
        std::fs::read_to_string(format!("/proc/{vp}/wchan")),
        Counts::read(out),
        run.describe()
    );
    assert_forwards(&run, out, libc::SIGUSR2);
    let o = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    no_panic(&o);
    assert_eq!(o.status, Exit::Code(143), "{what}: {o}");
    assert_eq!(
        Counts::read(out).count(libc::SIGPIPE),
        0,
        "{what}: vigil forwarded a SIGPIPE of its own to the child"
    );
}

/// Runs vigil as PID 1 with its stdio as `redirect` sets it (a sh
/// redirection applied to vigil's exec), storms it, stops it.
fn survives_stdio(redirect: &str, verbose: bool) {
    let dir = TempDir::new("stdio");
    let out = dir.join("counts");
    let mut v = pid1_via_sh(&format!("exec \"$@\" {redirect}"));
    if verbose {
        v = v.arg("-vvv");
    }
    let run = start_counter(v, &out);
    storm_then_stop(run, &out, 2000, redirect);
}

#[test]
fn stdin_closed() {
    survives_stdio("<&-", true);
}

#[test]
fn stdout_closed() {
    survives_stdio(">&-", true);
}

#[test]
fn stderr_closed() {
    survives_stdio("2>&-", true);
}

#[test]
fn all_stdio_closed() {
    survives_stdio("<&- >&- 2>&-", true);
}

/// stderr closed in a container without /dev/null (an empty tmpfs on /dev,
/// as in a bare `FROM scratch` rootfs run by a minimal runtime). Rust's
/// runtime, before `main`, reopens a closed fd 0-2 on /dev/null and aborts
/// when it cannot: as PID 1 that crash takes the container with it.
#[test]
fn stderr_closed_and_no_dev_null() {
    let o = pid1_via_sh_with_mounts("mount -t tmpfs none /dev && exec \"$@\" 2>&-")
        .args(["--", "sh", "-c", "exit 3"])
        .run();
    assert_eq!(
        o.status,
        Exit::Code(3),
        "vigil with stderr closed and no /dev/null did not run its child to the end (139 = SIGSEGV, 134 = SIGABRT)\n{o}"
    );
}

/// What a shell finds open among descriptors 0-12, without opening one
/// itself (`[ -L ]` is an lstat of the descriptor's link): the numbers,
/// on one line, written to the file named after it.
const OPEN_FDS: &str = r#"r=; for i in 0 1 2 3 4 5 6 7 8 9 10 11 12; do [ -L /proc/self/fd/$i ] && r="$r $i"; done; echo "${r# }" > "#;

/// The descriptors an init's child finds open when the init (PID 1, as
/// `redirect` leaves its stdio) runs it; the child then waits for SIGUSR1
/// and exits 5 on it. `vigil` also runs a post-start hook that records its
/// own in `hook-fds`, and its termination log, as a record, in
/// `termination-log`; its own descriptors 0-2 are checked while the child
/// waits.
fn child_fds(init: &str, redirect: &str) -> String {
    let dir = TempDir::new("closedfds");
    let script =
        format!("{OPEN_FDS}fds; trap 'exit 5' USR1; : > ready; while :; do sleep 0.05; done");
    let mut v = pid1_via_sh(&format!("exec \"$@\" {redirect}"));
    if init == "vigil" {
        v = v.args([
            "--log-format",
            "json",
            "--termination-log",
            "termination-log",
        ]);
        v = v.args(["--post-start", &format!("sh -c '{OPEN_FDS}hook-fds'")]);
    } else {
        v = v.program(which(init));
    }
    let run = start_sh(v, &dir, &script);
    if init == "vigil" {
        let vigil = run.vigil_pid();
        for fd in closed_by(redirect) {
            let link = fs::read_link(format!("/proc/{vigil}/fd/{fd}")).ok();
            assert!(
                link.is_none() || link == Some(PathBuf::from("/")),
                "{redirect}: vigil's descriptor {fd}, closed when it started, holds a file of its own: {link:?}\n{}",
                run.describe()
            );
        }
        assert!(
            wait_for_file(&dir.join("hook-fds"), TIMEOUT),
            "{redirect}: the post-start hook wrote nothing\n{}",
            run.describe()
        );
    }
    let out = run.stop_and_wait(libc::SIGUSR1, TIMEOUT);
    no_panic(&out);
    assert_eq!(out.status, Exit::Code(5), "{init} {redirect}: {out}");
    let fds = read_trimmed(&dir.join("fds"));
    if init == "vigil" {
        let record: serde_json::Value =
            serde_json::from_str(read_trimmed(&dir.join("termination-log")).as_str())
                .unwrap_or_else(|e| panic!("{redirect}: the termination log: {e}\n{out}"));
        assert_eq!(record["event"], "exit", "{redirect}: {record}");
        assert_eq!(record["status"], 5, "{redirect}: {record}");
        // The hook gets /dev/null as stdin, and otherwise what the child
        // gets.
        let mut expected: Vec<&str> = fds.split_whitespace().collect();
        if !expected.contains(&"0") {
            expected.insert(0, "0");
        }
        assert_eq!(
            read_trimmed(&dir.join("hook-fds")),
            expected.join(" "),
            "{redirect}: the hook's descriptors"
        );
    }
    fds
}

/// The standard descriptors a shell redirection closes.
fn closed_by(redirect: &str) -> Vec<i32> {
    [("<&-", 0), (" >&-", 1), ("2>&-", 2)]
        .into_iter()
        .filter(|(closing, _)| format!(" {redirect}").contains(closing))
        .map(|(_, fd)| fd)
        .collect()
}

/// vigil started with standard descriptors closed: its child finds exactly
/// the descriptors it finds under tini-static (a closed one stays closed,
/// nothing of vigil's is left open), none of vigil's own files takes the
/// number of a closed one, and vigil still forwards signals and writes its
/// report. tini with stdin closed runs no child at all (its `tcsetpgrp` of
/// descriptor 0 fails with EBADF, and it exits 1): there, what the child
/// would find is what it finds under tini with stdin open, without 0.
#[test]
fn closed_descriptors_stay_closed_for_the_child_as_under_tini() {
    for redirect in ["<&-", ">&-", "2>&-", ">&- 2>&-", "<&- >&- 2>&-"] {
        let under_vigil = child_fds("vigil", redirect);
        let tini_runs = redirect.replace("<&-", "");
        let under_tini: Vec<String> = child_fds("tini-static", tini_runs.trim())
            .split_whitespace()
            .filter(|fd| !(redirect.contains("<&-") && *fd == "0"))
            .map(String::from)
            .collect();
        assert_eq!(
            under_vigil,
            under_tini.join(" "),
            "{redirect}: the child's descriptors"
        );
        let open: Vec<i32> = under_vigil
            .split_whitespace()
            .map(|n| n.parse().unwrap())
            .collect();
        for fd in closed_by(redirect) {
            assert!(!open.contains(&fd), "{redirect}: {fd} is open: {open:?}");
        }
    }
}
