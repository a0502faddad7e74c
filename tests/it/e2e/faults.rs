//! Every system call vigil makes fails, once: nothing hangs, panics or lies.
//!
//! strace's fault injection (`-e inject=SYSCALL:error=ERRNO:when=N`) fails
//! the Nth call of one system call with one error. Each cell of the matrix
//! is one such failure in one run of a job, as PID 1 of a fresh PID
//! namespace and as a plain process; each cell must end within a bound,
//! without a panic or an abort, with the child's status (or the one the
//! design documents for that failure), and with a report that claims
//! nothing that did not happen (where something could not be done, vigil
//! says so). The matrix (system calls x errors) is printed past libtest's
//! capture, with the failing cells named.
//!
//! How the injection reaches only vigil: the matrix attaches `strace -p`
//! to vigil's pid *after* its child has started, without `-f`. Only
//! vigil's own thread is traced, so neither the child's calls (a shell's
//! `read` and `wait4`) nor anything vigil forks can be hit, and the call
//! numbers count from the moment the child runs: the matrix is about the
//! calls vigil makes while it supervises. Which calls those are, and how
//! many of each, a baseline run of each job (traced, nothing injected)
//! says; every call it shows is either in `ERRORS`, with the errors that
//! call can really return, or in `EXCLUDED`, with the reason. (Errors a
//! call cannot return in vigil's state are left out too: ESRCH from a kill
//! of a child vigil has not reaped, ECHILD from a wait while it has
//! children, EAGAIN from getrandom's GRND_INSECURE.) Each call is failed at
//! its first, second and last invocation in the baseline. A cell whose
//! call was never made that often in its own run (strace logs no
//! `INJECTED`) was not reached, and is counted apart.
//!
//! The jobs: the child exits with a status; `docker stop` (SIGTERM from
//! outside, SIGKILL at the runtime's deadline); a drain of a process the
//! child left, which exits on SIGTERM, and of one more that ignores it; a
//! `--timeout`.
//!
//! The spawn itself is covered by its own cells: the main child's (strace
//! from vigil's first instruction, `-f`, as PID 1 through busybox's
//! `unshare`, with a static busybox child: neither makes any of the calls
//! injected, and the log shows which process each injection hit, which
//! must be vigil) and a pre-stop hook's, vigil's side (attached, as the
//! matrix) and the forked process's side before its exec (attached with
//! `-f`: vigil itself makes none of those calls after start, and the hook
//! program none after its exec).
//!
//! Each strace runs in a process group of its own, killed as a group at
//! the bound; killing strace detaches its tracee, which the harness's
//! guard then kills by pid with everything it started.

use crate::common::*;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

/// The errors each system call vigil makes can really return, as the
/// matrix fails it with them.
const ERRORS: &[(&str, &[&str])] = &[
    ("read", &["EINTR", "EAGAIN", "EIO", "ENOMEM"]),
    ("pread64", &["EINTR", "EIO"]),
    ("write", &["EINTR", "EAGAIN", "EIO", "EPIPE", "ENOSPC"]),
    ("wait4", &["EINTR"]),
    ("waitid", &["EINTR"]),
    ("kill", &["EPERM"]),
    ("open", &["EINTR", "ENOMEM", "EMFILE", "EACCES"]),
    ("openat", &["EINTR", "ENOMEM", "EMFILE", "EACCES"]),
    ("getdents64", &["ENOMEM", "ENOENT"]),
    ("lseek", &["EINVAL", "ESPIPE"]),
    ("stat", &["EACCES", "ENOMEM"]),
    ("newfstatat", &["EACCES", "ENOMEM"]),
    ("statx", &["EACCES", "ENOMEM"]),
    ("fstat", &["ENOMEM"]),
    ("rt_sigtimedwait", &["EINTR", "EAGAIN"]),
    ("poll", &["EINTR", "ENOMEM"]),
    ("ppoll", &["EINTR", "ENOMEM"]),
    ("ioctl", &["EINTR", "EIO"]),
    ("nanosleep", &["EINTR"]),
    ("clock_nanosleep", &["EINTR"]),
    ("clock_gettime", &["EINVAL"]),
    ("mmap", &["ENOMEM"]),
    ("munmap", &["ENOMEM"]),
    ("mremap", &["ENOMEM"]),
    ("brk", &["ENOMEM"]),
    // GRND_INSECURE, which std asks for, never says EAGAIN.
    ("getrandom", &["EINTR", "EINVAL", "ENOSYS", "EPERM"]),
    ("pipe2", &["EMFILE", "ENFILE"]),
    ("fork", &["EAGAIN", "ENOMEM"]),
    ("ftruncate", &["EINTR", "EIO", "EPERM"]),
];

/// Calls the matrix leaves alone, and why.
const EXCLUDED: &[(&str, &str)] = &[
    (
        "close",
        "an injected error skips the real call, and Linux always frees the descriptor",
    ),
    (
        "fcntl",
        "F_GETFD and F_SETFD on a descriptor vigil has just opened cannot fail (std's own check of a descriptor before closing it aborts the debug build on an EBADF that cannot happen)",
    ),
    ("getpid", "cannot fail"),
    ("getppid", "cannot fail"),
    ("gettid", "cannot fail"),
    ("sched_yield", "cannot fail"),
    (
        "restart_syscall",
        "the kernel's continuation of a call strace interrupted when it attached",
    ),
    (
        "rt_sigprocmask",
        "made only by the C library's fork, around it, with arguments it cannot fail on",
    ),
    ("exit_group", "ends vigil"),
];

/// Cells that cannot survive by design (docs/design.md says why), with the
/// outcome the test expects of them instead.
const BY_DESIGN: &[(&str, &str, &str)] = &[
    ("mmap", "ENOMEM", NO_MEMORY),
    ("brk", "ENOMEM", NO_MEMORY),
    ("mremap", "ENOMEM", NO_MEMORY),
];

const NO_MEMORY: &str =
    "vigil's allocations need memory: Rust aborts when the allocator gets none (docs/design.md)";

/// A failing cell whose fix lies outside this test's reach, marked so that
/// the run stays green until it is fixed: matched by mode, job, call,
/// error, and a piece of the injected call as strace logs it (`None`:
/// any).
struct Known {
    mode: Option<Mode>,
    job: Option<Job>,
    syscall: &'static str,
    errors: &'static [&'static str],
    injected: Option<&'static str>,
    why: &'static str,
}

const KNOWN_FAILURES: &[Known] = &[];

/// How long a job may take once triggered (the longest takes about 2 s).
const BOUND: Duration = Duration::from_secs(20);

/// `docker stop`'s SIGKILL, for the stop job: a vigil that cannot forward
/// the SIGTERM waits for the runtime's deadline, as documented.
const RUNTIME_DEADLINE: Duration = Duration::from_secs(3);

/// Cells run at once: most of a cell is waiting (for strace to attach, for
/// a deadline), so more than the two CPUs.
const WORKERS: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Mode {
    Pid1,
    Plain,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Pid1 => "pid1",
            Mode::Plain => "plain",
        }
    }
    fn vigil(self) -> Vigil {
        match self {
            Mode::Pid1 => Vigil::pid1(),
            Mode::Plain => Vigil::plain(),
        }
    }
}

/// What vigil is given to do in one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Job {
    /// The child exits with 3 when told to.
    Exit,
    /// `docker stop`: SIGTERM from outside, which kills the child (143);
    /// SIGKILL to vigil after `RUNTIME_DEADLINE`.
    Stop,
    /// The child exits 3 and leaves a process behind that exits on SIGTERM
    /// (and records it): the drain ends as soon as it is gone.
    Drain,
    /// As `Drain`, plus a process that ignores SIGTERM: the drain's
    /// SIGKILL at `--drain-timeout` ends it.
    DrainKill,
    /// `--timeout` stops the child (status 124).
    Timeout,
    /// `Stop` with a pre-stop hook (a program that leaves a mark): the
    /// hook's spawn is what is failed.
    StopHook,
}

impl Job {
    const MATRIX: [Job; 5] = [
        Job::Exit,
        Job::Stop,
        Job::Drain,
        Job::DrainKill,
        Job::Timeout,
    ];

    fn name(self) -> &'static str {
        match self {
            Job::Exit => "exit",
            Job::Stop => "stop",
            Job::Drain => "drain",
            Job::DrainKill => "drain-kill",
            Job::Timeout => "timeout",
            Job::StopHook => "stop-hook",
        }
    }

    /// vigil's options and the child's script (run by `sh -c` in the
    /// cell's directory); the child creates `ready` once it waits.
    fn setup(self, dir: &Path) -> (Vec<String>, String) {
        let tlog = dir.join("tlog").display().to_string();
        let mut args = vec!["--termination-log".to_string(), tlog];
        let sigrec = test_program("sigrec").display().to_string();
        let leftover = format!("{sigrec} --out left.rec --exit-on 15 & echo $! > left.pid; ");
        let script = match self {
            Job::Exit => ": > ready; read x < go; exit 3".to_string(),
            Job::Stop | Job::Timeout | Job::StopHook => ": > ready; exec sleep 1000".to_string(),
            Job::Drain => {
                args.extend(["--drain-timeout".into(), "5s".into()]);
                format!("{leftover}: > ready; read x < go; exit 3")
            }
            Job::DrainKill => {
                // The drain's SIGTERM must find the trap set: `ready` comes
                // only once the subshell has set it.
                args.extend(["--drain-timeout".into(), "300ms".into()]);
                format!(
                    "{leftover}(trap '' TERM; : > ignoring; exec sleep 1000) & echo $! > ignorer.pid; \
                     until [ -e ignoring ]; do :; done; : > ready; read x < go; exit 3"
                )
            }
        };
        match self {
            Job::Timeout => args.extend([
                "--timeout".into(),
                "2s".into(),
                "--grace-period".into(),
                "1s".into(),
            ]),
            Job::StopHook => {
                let marker = test_program("marker").display().to_string();
                let mark = dir.join("hook-ran").display().to_string();
                args.extend(["--pre-stop".into(), format!("{marker} {mark} 0")]);
            }
            _ => {}
        }
        (args, script)
    }

    /// The child's ending and vigil's status, as the report begins.
    fn expected(self) -> (i32, &'static str) {
        match self {
            Job::Exit | Job::Drain | Job::DrainKill => {
                (3, "child exited with code 3; exit status 3")
            }
            Job::Stop | Job::StopHook => (
                143,
                "child was killed by SIGTERM (status 143); exit status 143",
            ),
            Job::Timeout => (124, "child was killed by SIG"),
        }
    }

    fn leaves_processes(self) -> bool {
        matches!(self, Job::Drain | Job::DrainKill)
    }
}

/// One failure in one run.
#[derive(Clone, Debug)]
struct Cell {
    mode: Mode,
    job: Job,
    syscall: &'static str,
    error: &'static str,
    /// strace's `when=`: one invocation, or a range (`N..M`).
    when: String,
    /// Trace what vigil forks too (`-f`): for the forked process's calls.
    follow: bool,
}

impl Cell {
    fn label(&self) -> String {
        format!(
            "{} {} {} {} when={}{}",
            self.mode.name(),
            self.job.name(),
            self.syscall,
            self.error,
            self.when,
            if self.follow { " -f" } else { "" }
        )
    }
}

/// What a run left to judge.
struct Run {
    out: Output,
    /// strace's log.
    log: String,
    /// The lines strace marked `(INJECTED)`.
    injected: Vec<String>,
    /// vigil's pid as a `-f` log names it.
    vigil_pid: Option<i32>,
    tlog: Option<String>,
    dir: TempDir,
    /// Leftovers still alive after vigil ended (plain mode).
    alive_after: Vec<(i32, String)>,
    /// The runtime's SIGKILL ended vigil (the stop job).
    killed_at_deadline: bool,
    /// Something kept the cell from running as it should (strace did not
    /// attach, the child was never ready).
    harness: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Verdict {
    NotReached,
    Survived,
    ByDesign(&'static str),
    Failed(String),
}

// ---------------------------------------------------------------------------
// Running a cell
// ---------------------------------------------------------------------------

/// strace attached to `pid`, in a process group of its own.
struct Strace {
    child: Child,
    log: PathBuf,
}

impl Strace {
    /// Attaches and returns once strace says it has.
    fn attach(pid: i32, log: &Path, filter: &[String], follow: bool) -> Result<Strace, String> {
        let mut cmd = Command::new("strace");
        if follow {
            cmd.arg("-f");
        }
        cmd.arg("-o")
            .arg(log)
            .args(filter)
            .arg("-p")
            .arg(pid.to_string());
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd.spawn().map_err(|e| format!("cannot run strace: {e}"))?;
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut strace = Strace {
            child,
            log: log.to_path_buf(),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut said = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) if line.contains("attached") => return Ok(strace),
                Ok(line) => said.push(line),
                Err(_) => {
                    strace.kill();
                    return Err(format!("strace did not attach to {pid}: {said:?}"));
                }
            }
        }
    }

    /// Kills strace's process group (strace alone), which detaches it.
    fn kill(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let pgid = self.child.id() as i32;
            // A negative pid: strace's own process group.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            let _ = self.child.wait();
        }
    }

    /// Waits for strace to end (its tracee is gone), at most a few
    /// seconds, then its log.
    fn finish(mut self) -> String {
        let ended = wait_until(Duration::from_secs(5), || {
            matches!(self.child.try_wait(), Ok(Some(_)))
        });
        if !ended {
            self.kill();
        }
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// The `-e` options of a cell: trace and inject the one call.
fn inject_filter(cell: &Cell) -> Vec<String> {
    vec![
        "-e".into(),
        format!("trace={}", cell.syscall),
        "-e".into(),
        format!(
            "inject={}:error={}:when={}",
            cell.syscall, cell.error, cell.when
        ),
    ]
}

/// Opens the child's FIFO for writing and closes it: its `read` ends.
fn release(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    wait_until(Duration::from_secs(10), || {
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(dir.join("go"))
            .is_ok()
    })
}

/// Runs `job` with strace attached (as `filter` says) once the child runs.
fn run_attached(mode: Mode, job: Job, filter: &[String], follow: bool) -> Run {
    let dir = TempDir::new("fault");
    nix::unistd::mkfifo(
        &dir.join("go"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    let (args, script) = job.setup(dir.path());
    let run = mode
        .vigil()
        .cwd(dir.path())
        .args(&args)
        .args(["--", "sh", "-c", &script])
        .spawn();
    let mut harness = None;
    let ready = wait_until(TIMEOUT, || {
        dir.join("ready").exists()
            && (!job.leaves_processes() || dir.join("left.rec.ready").exists())
    });
    if !ready {
        harness = Some(format!("the child never got ready\n{}", run.describe()));
    }
    let vigil = run.vigil_pid();
    let log = dir.join("strace.log");
    let mut strace = match harness {
        None => match Strace::attach(vigil, &log, filter, follow) {
            Ok(s) => Some(s),
            Err(e) => {
                harness = Some(e);
                None
            }
        },
        Some(_) => None,
    };
    if job == Job::Timeout && run.stderr_now().contains("--timeout") {
        harness = Some(TIMEOUT_BEFORE_ATTACH.into());
    }
    // In plain mode what vigil started outlives a vigil that died: killed
    // at the end of the cell (by pid and start time).
    let mut strays = Strays::default();
    if mode == Mode::Plain {
        strays.add(run.child_pid());
        for file in ["left.pid", "ignorer.pid"] {
            if let Ok(pid) = read_trimmed(&dir.join(file)).parse() {
                strays.add(pid);
            }
        }
    }
    match job {
        Job::Exit | Job::Drain | Job::DrainKill => {
            release(dir.path());
        }
        Job::Stop | Job::StopHook => {
            let _ = kill(vigil, libc::SIGTERM);
        }
        Job::Timeout => {}
    }
    let stop = matches!(job, Job::Stop | Job::StopHook);
    let (out, killed_at_deadline) = wait_for(
        run,
        vigil,
        strace.as_mut(),
        stop.then_some(RUNTIME_DEADLINE),
    );
    let log = strace.map(Strace::finish).unwrap_or_default();
    let mut run = finish_run(mode, job, out, log, dir, killed_at_deadline, harness);
    if follow {
        run.vigil_pid = Some(vigil);
    }
    strays.kill();
    run
}

const TIMEOUT_BEFORE_ATTACH: &str = "the timeout passed before strace attached";

/// Processes a cell started, by pid and start time, to kill when it ends.
#[derive(Default)]
struct Strays(Vec<(i32, u64)>);

impl Strays {
    fn add(&mut self, pid: i32) {
        if let Some(st) = stat(pid) {
            self.0.push((pid, st.starttime));
        }
    }
    fn kill(&self) {
        for &(pid, start) in &self.0 {
            if stat(pid).is_some_and(|st| st.starttime == start) {
                let _ = kill(pid, libc::SIGKILL);
            }
        }
    }
}

/// Whether vigil's stderr shows it on its way to an abort: a panic, or
/// Rust's allocation-error handler.
fn aborting(stderr: &str) -> bool {
    stderr.contains("panicked at")
        || stderr.contains("memory allocation of")
        || stderr.contains("fatal runtime error")
}

/// Waits for vigil to end, at most `BOUND`; with `deadline`, a runtime's
/// SIGKILL ends it then (true: it did). A vigil on its way to an abort is
/// let go by strace: as PID 1 of a namespace, musl's abort ends in a
/// SIGSEGV that the kernel lets kill the namespace's init only when it is
/// not traced (a traced one would take the same fault for ever).
fn wait_for(
    mut run: Running,
    vigil: i32,
    mut strace: Option<&mut Strace>,
    deadline: Option<Duration>,
) -> (Output, bool) {
    let limit = deadline.unwrap_or(BOUND);
    let ended = wait_until(limit, || {
        if aborting(&run.stderr_now())
            && let Some(s) = strace.take()
        {
            s.kill();
        }
        run.try_exit().is_some()
    });
    let killed = !ended && deadline.is_some();
    if killed {
        let _ = kill(vigil, libc::SIGKILL);
    }
    (run.wait(BOUND), killed)
}

fn finish_run(
    mode: Mode,
    job: Job,
    out: Output,
    log: String,
    dir: TempDir,
    killed_at_deadline: bool,
    harness: Option<String>,
) -> Run {
    let injected = log
        .lines()
        .filter(|l| l.contains("(INJECTED)"))
        .map(str::to_string)
        .collect();
    let tlog = std::fs::read_to_string(dir.join("tlog")).ok();
    let mut alive_after = Vec::new();
    if mode == Mode::Plain && job.leaves_processes() {
        for file in ["left.pid", "ignorer.pid"] {
            if let Ok(pid) = read_trimmed(&dir.join(file)).parse::<i32>() {
                // Given a moment: a process SIGKILLed just before vigil
                // exited is still being torn down.
                let gone = wait_until(Duration::from_secs(2), || {
                    state(pid).is_none_or(|s| s == 'Z')
                });
                if !gone {
                    alive_after.push((pid, comm(pid).unwrap_or_default()));
                    let _ = kill(pid, libc::SIGKILL);
                }
            }
        }
    }
    let vigil_pid = vigil_pid_in(&log);
    Run {
        out,
        log,
        injected,
        vigil_pid,
        tlog,
        dir,
        alive_after,
        killed_at_deadline,
        harness,
    }
}

/// The pid that exec'd vigil, in a `-f` log.
fn vigil_pid_in(log: &str) -> Option<i32> {
    let exe = vigil_bin().display().to_string();
    log.lines()
        .find(|l| l.contains(&format!("execve(\"{exe}\"")) && l.ends_with("= 0"))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
}

// ---------------------------------------------------------------------------
// Judging a cell
// ---------------------------------------------------------------------------

/// What a line of vigil's is about: the words before its first colon
/// (`exit report`, `drain timeout (300ms) over`).
fn line_kind(line: &str) -> Option<String> {
    let rest = line.strip_prefix("vigil: ")?;
    let rest = rest
        .strip_prefix("warning: ")
        .or_else(|| rest.strip_prefix("error: "))
        .unwrap_or(rest);
    Some(rest.split(':').next().unwrap_or(rest).to_string())
}

fn kinds(stderr: &str) -> BTreeSet<String> {
    stderr.lines().filter_map(line_kind).collect()
}

/// Whether an injected write was one to vigil's stderr that loses a line
/// for good (nowhere to say so).
fn lost_stderr_write(run: &Run, cell: &Cell) -> bool {
    cell.syscall == "write"
        && matches!(cell.error, "EIO" | "EPIPE" | "ENOSPC")
        && run.injected.iter().any(|l| l.starts_with("write(2,"))
}

fn judge(cell: &Cell, run: &Run, baseline_kinds: &BTreeSet<String>) -> Verdict {
    if let Some(why) = &run.harness {
        return Verdict::Failed(format!("harness: {why}"));
    }
    let verdict = judge_outcome(cell, run, baseline_kinds);
    if run.injected.is_empty() {
        return match verdict {
            Verdict::Survived => Verdict::NotReached,
            Verdict::Failed(why) => Verdict::Failed(format!("(nothing injected) {why}")),
            other => other,
        };
    }
    if let Some(pid) = run.vigil_pid {
        // A `-f` log: the injection must have hit vigil (or, for the
        // forked process's cells, the hook vigil forked), never the child.
        let hit: Vec<i32> = run
            .injected
            .iter()
            .filter_map(|l| l.split_whitespace().next()?.parse().ok())
            .collect();
        let want_vigil = !cell.follow || cell.job != Job::StopHook;
        if hit.iter().any(|&p| (p == pid) != want_vigil) {
            return Verdict::Failed(format!(
                "harness: the injection hit the wrong process (vigil is {pid}): {:?}",
                run.injected
            ));
        }
    }
    verdict
}

fn judge_outcome(cell: &Cell, run: &Run, baseline_kinds: &BTreeSet<String>) -> Verdict {
    let out = &run.out;
    let err = &out.stderr;
    if out.status == Exit::Timeout {
        return Verdict::Failed(format!("hang: vigil did not end within {}", secs(BOUND)));
    }
    let died = matches!(
        out.status,
        Exit::Signal(libc::SIGABRT | libc::SIGSEGV | libc::SIGBUS | libc::SIGILL | libc::SIGTRAP)
    );
    if died || err.contains("panicked") || err.contains("fatal runtime error") {
        if let Some(&(_, _, why)) = BY_DESIGN
            .iter()
            .find(|(s, e, _)| *s == cell.syscall && *e == cell.error)
        {
            // As PID 1, musl's abort ends in SIGSEGV (the namespace's init
            // ignores SIGABRT).
            let aborted = matches!(out.status, Exit::Signal(libc::SIGABRT | libc::SIGSEGV));
            if aborted && err.contains("memory allocation of") {
                return Verdict::ByDesign(why);
            }
        }
        return Verdict::Failed(format!("died ({:?}): {}", out.status, first_lines(err)));
    }
    // The fault path stops a container whose vigil cannot go on (a
    // signalfd that fails on every read); one failure must not take it.
    let fault = err
        .lines()
        .find(|l| l.starts_with("vigil: error: ") && l.ends_with(": stopping"));
    if let Some(fault) = fault.filter(|_| err.contains("vigil could not go on")) {
        return Verdict::Failed(format!(
            "one failed call made vigil stop the container as if it could not go on: {fault}"
        ));
    }
    if run.killed_at_deadline {
        // vigil forwarded nothing it could and waited for the runtime, as
        // documented for a stop signal without --grace-period; only
        // honest if it said the forward failed.
        return if err.contains("could not send SIGTERM") {
            Verdict::Survived
        } else {
            Verdict::Failed(format!(
                "waited for the runtime's SIGKILL without saying why: {}",
                first_lines(err)
            ))
        };
    }
    let (status, ending) = cell.job.expected();
    if out.status != Exit::Code(status) {
        return Verdict::Failed(format!(
            "status {:?}, expected {status}: {}",
            out.status,
            first_lines(err)
        ));
    }
    // The report, on stderr and in the termination log.
    let report = exit_report(err).map(|r| r.text.to_string());
    let tlog = run.tlog.as_deref().map(str::trim_end).unwrap_or("");
    let tlog_warned = err.contains("could not write the termination log");
    match &report {
        Some(text) => {
            if !text.starts_with(ending) {
                return Verdict::Failed(format!("the report says {text:?}"));
            }
            if tlog != text && !tlog_warned {
                return Verdict::Failed(format!(
                    "the termination log holds {tlog:?}, not the report, and vigil did not say so"
                ));
            }
        }
        None => {
            if !lost_stderr_write(run, cell) {
                return Verdict::Failed(format!("no exit report: {}", first_lines(err)));
            }
            if !tlog.starts_with(ending) && !tlog_warned {
                return Verdict::Failed(format!(
                    "the report is neither on stderr nor in the termination log ({tlog:?})"
                ));
            }
        }
    }
    let report = report.unwrap_or_else(|| tlog.to_string());
    if !report.contains(&format!("; exit status {status};")) {
        return Verdict::Failed(format!(
            "the report gives another status than {status}: {report}"
        ));
    }
    if !lost_stderr_write(run, cell) {
        let now = kinds(err);
        let lost: Vec<&String> = baseline_kinds.difference(&now).collect();
        if !lost.is_empty() {
            return Verdict::Failed(format!("lines lost: {lost:?}: {}", first_lines(err)));
        }
    }
    if err.contains("could not send SIGTERM") && report.contains("(sent SIGTERM)") {
        return Verdict::Failed(format!(
            "the report says SIGTERM was sent, and the send failed: {report}"
        ));
    }
    if cell.job.leaves_processes() {
        let unlisted = err.contains("not mounted for this PID namespace")
            || err.contains("cannot list")
            || err.contains("could not list");
        let left_signals = read_signals(&run.dir.join("left.rec"));
        if report.contains("drain: SIGTERM to") {
            if !left_signals.contains(&libc::SIGTERM) && !err.contains("could not send SIGTERM") {
                return Verdict::Failed(format!(
                    "the report says the drain sent SIGTERM, which the leftover never got: {report}"
                ));
            }
        } else if !unlisted {
            return Verdict::Failed(format!(
                "a process was left at the child's exit, and the report says no drain, nor why: {report}"
            ));
        }
        if cell.job == Job::DrainKill && !report.contains("SIGKILL") {
            return Verdict::Failed(format!(
                "the TERM-ignoring leftover's SIGKILL is not in the report: {report}"
            ));
        }
        if !run.alive_after.is_empty() && !err.contains("left running") {
            return Verdict::Failed(format!(
                "{:?} still ran after vigil exited, and vigil did not say so: {report}",
                run.alive_after
            ));
        }
    }
    if cell.job == Job::StopHook {
        let ran = run.dir.join("hook-ran").exists();
        let succeeded = report.contains("pre-stop hook succeeded");
        let failed = report.contains("pre-stop hook failed");
        // An interrupted call is made again: the hook runs.
        if cell.error == "EINTR" && !ran {
            return Verdict::Failed(format!(
                "an interrupted {} kept the hook from running: {report}",
                cell.syscall
            ));
        }
        if ran != succeeded || (!ran && !failed) {
            return Verdict::Failed(format!(
                "the hook {} ran, and the report says: {report}",
                if ran { "" } else { "never" }
            ));
        }
    }
    Verdict::Survived
}

fn first_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().take(6).collect();
    lines.join(" | ")
}

fn known(cell: &Cell, run: &Run) -> Option<&'static Known> {
    KNOWN_FAILURES.iter().find(|k| {
        k.mode.is_none_or(|m| m == cell.mode)
            && k.job.is_none_or(|j| j == cell.job)
            && k.syscall == cell.syscall
            && k.errors.contains(&cell.error)
            && k.injected
                .is_none_or(|piece| run.injected.iter().any(|l| l.contains(piece)))
    })
}

// ---------------------------------------------------------------------------
// Baselines and the cells they give
// ---------------------------------------------------------------------------

/// The system call a strace log line is about, with the pid in a `-f`
/// log; None for a line that is no call's start.
fn call_of(line: &str, follow: bool) -> Option<(Option<i32>, &str)> {
    let (pid, rest) = if follow {
        let (pid, rest) = line.split_once(char::is_whitespace)?;
        (Some(pid.parse().ok()?), rest.trim_start())
    } else {
        (None, line)
    };
    let name = rest.split('(').next()?;
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    Some((pid, name))
}

/// How many times vigil made each call in a log (without `-f`).
fn counts(log: &str) -> BTreeMap<String, u32> {
    let mut counts = BTreeMap::new();
    for line in log.lines() {
        if let Some((_, name)) = call_of(line, false) {
            *counts.entry(name.to_string()).or_default() += 1;
        }
    }
    counts
}

fn errors_of(syscall: &str) -> Option<&'static [&'static str]> {
    ERRORS.iter().find(|(s, _)| *s == syscall).map(|(_, e)| *e)
}

/// The invocations a call is failed at: first, second, last.
fn points(count: u32) -> Vec<u32> {
    let mut p = vec![1, 2, count];
    p.retain(|&n| n >= 1 && n <= count);
    p.sort_unstable();
    p.dedup();
    p
}

struct Baseline {
    mode: Mode,
    job: Job,
    counts: BTreeMap<String, u32>,
    kinds: BTreeSet<String>,
}

/// One traced run of each job and mode, nothing injected: the calls vigil
/// makes while it supervises, and the lines it writes. It must pass the
/// judge as a cell would.
fn baseline(mode: Mode, job: Job) -> Result<Baseline, String> {
    let run = run_attached(mode, job, &[], false);
    let cell = Cell {
        mode,
        job,
        syscall: "none",
        error: "none",
        when: "0".into(),
        follow: false,
    };
    match judge_outcome(&cell, &run, &BTreeSet::new()) {
        Verdict::Survived if run.harness.is_none() => {}
        v => {
            return Err(format!(
                "baseline {} {}: {v:?} {:?}\n{}",
                mode.name(),
                job.name(),
                run.harness,
                run.out
            ));
        }
    }
    Ok(Baseline {
        mode,
        job,
        counts: counts(&run.log),
        kinds: kinds(&run.out.stderr),
    })
}

fn cells_of(b: &Baseline, unclassified: &mut BTreeSet<String>) -> Vec<Cell> {
    let mut cells = Vec::new();
    for (syscall, &count) in &b.counts {
        let Some(errors) = errors_of(syscall) else {
            if !EXCLUDED.iter().any(|(s, _)| s == syscall) {
                unclassified.insert(syscall.clone());
            }
            continue;
        };
        let syscall = ERRORS.iter().find(|(s, _)| s == syscall).unwrap().0;
        for &error in errors {
            for n in points(count) {
                cells.push(Cell {
                    mode: b.mode,
                    job: b.job,
                    syscall,
                    error,
                    when: n.to_string(),
                    follow: false,
                });
            }
        }
    }
    cells
}

// ---------------------------------------------------------------------------
// Running many cells
// ---------------------------------------------------------------------------

struct CellResult {
    cell: Cell,
    verdict: Verdict,
    known: Option<&'static str>,
    evidence: String,
}

fn run_cell(cell: &Cell, kinds: &BTreeSet<String>) -> CellResult {
    // A cell whose timeout passed before strace attached (a busy machine)
    // did not run as meant: it runs again.
    let mut attempts = 0;
    let run = loop {
        attempts += 1;
        let run = run_attached(cell.mode, cell.job, &inject_filter(cell), cell.follow);
        if run.harness.as_deref() != Some(TIMEOUT_BEFORE_ATTACH) || attempts == 3 {
            break run;
        }
    };
    let verdict = judge(cell, &run, kinds);
    let known = match &verdict {
        Verdict::Failed(_) => known(cell, &run).map(|k| k.why),
        _ => None,
    };
    CellResult {
        cell: cell.clone(),
        evidence: format!("injected: {:?}\n{}", run.injected, run.out),
        verdict,
        known,
    }
}

/// Runs `jobs` on `WORKERS` threads, in the order given.
fn in_parallel<T: Send + 'static, R: Send + 'static>(
    jobs: Vec<T>,
    work: impl Fn(&T) -> R + Send + Sync + 'static,
) -> Vec<R> {
    let queue = Arc::new(Mutex::new(
        jobs.into_iter().enumerate().collect::<VecDeque<_>>(),
    ));
    let work = Arc::new(work);
    let (tx, rx) = mpsc::channel();
    let handles: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (queue, work, tx) = (queue.clone(), work.clone(), tx.clone());
            thread::spawn(move || {
                loop {
                    let Some((i, job)) = queue.lock().unwrap().pop_front() else {
                        break;
                    };
                    let _ = tx.send((i, work(&job)));
                }
            })
        })
        .collect();
    drop(tx);
    let mut results: Vec<(usize, R)> = rx.iter().collect();
    for h in handles {
        h.join().unwrap();
    }
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Prints the matrix of one mode: per call and error, cells survived (or
/// ended as designed) out of cells run, and names every failing cell.
fn print_matrix(title: &str, results: &[&CellResult]) {
    let mut table: BTreeMap<&str, BTreeMap<&str, (u32, u32)>> = BTreeMap::new();
    let mut columns: Vec<&str> = Vec::new();
    let (mut ok, mut run, mut unreached, mut by_design) = (0, 0, 0, 0);
    for r in results {
        if r.verdict == Verdict::NotReached {
            unreached += 1;
            continue;
        }
        run += 1;
        let good = matches!(r.verdict, Verdict::Survived | Verdict::ByDesign(_));
        if good {
            ok += 1;
        }
        if matches!(r.verdict, Verdict::ByDesign(_)) {
            by_design += 1;
        }
        if !columns.contains(&r.cell.error) {
            columns.push(r.cell.error);
        }
        let e = table
            .entry(r.cell.syscall)
            .or_default()
            .entry(r.cell.error)
            .or_default();
        e.1 += 1;
        if good {
            e.0 += 1;
        }
    }
    say_uncaptured(&format!(
        "faults: {title}: {ok}/{run} cells survived ({by_design} of them ended as designed), {unreached} not reached"
    ));
    let mut header = format!("faults:   {:<16}", "call");
    for c in &columns {
        header.push_str(&format!("{c:>9}"));
    }
    say_uncaptured(&header);
    for (syscall, row) in &table {
        let mut line = format!("faults:   {syscall:<16}");
        for c in &columns {
            match row.get(c) {
                Some((ok, n)) => line.push_str(&format!("{:>9}", format!("{ok}/{n}"))),
                None => line.push_str(&format!("{:>9}", "-")),
            }
        }
        say_uncaptured(&line);
    }
    for r in results {
        match (&r.verdict, r.known) {
            (Verdict::Failed(why), None) => {
                say_uncaptured(&format!("faults:   FAILED {}: {why}", r.cell.label()))
            }
            (Verdict::Failed(why), Some(known)) => say_uncaptured(&format!(
                "faults:   known failure {}: {why} [{known}]",
                r.cell.label()
            )),
            (Verdict::ByDesign(why), _) => {
                say_uncaptured(&format!("faults:   by design {}: {why}", r.cell.label()))
            }
            _ => {}
        }
    }
}

/// `VIGIL_FAULTS_ONLY=TEXT`: only the cells whose label contains TEXT
/// (`pid1 drain kill`), each printed with what it produced.
fn only() -> Option<String> {
    std::env::var("VIGIL_FAULTS_ONLY")
        .ok()
        .filter(|s| !s.is_empty())
}

fn show_chosen(results: &[CellResult]) {
    if only().is_some() {
        for r in results {
            say_uncaptured(&format!(
                "faults: {}: {:?}\n{}",
                r.cell.label(),
                r.verdict,
                r.evidence
            ));
        }
    }
}

/// The failures no one has marked, with their evidence.
fn unmarked_failures(results: &[CellResult]) -> Vec<String> {
    results
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Failed(_)) && r.known.is_none())
        .map(|r| format!("{}: {:?}\n{}", r.cell.label(), r.verdict, r.evidence))
        .collect()
}

// ---------------------------------------------------------------------------
// The matrix
// ---------------------------------------------------------------------------

/// Every call vigil makes while it supervises, failed once at its first,
/// second and last invocation, in every job, as PID 1 and not.
#[test]
fn every_call_vigil_makes_fails_once() {
    let _cpu = heavy();
    if need_program("every_call_vigil_makes_fails_once", "strace", "strace").is_none() {
        return;
    }
    let started = Instant::now();
    let pairs: Vec<(Mode, Job)> = [Mode::Pid1, Mode::Plain]
        .into_iter()
        .flat_map(|m| Job::MATRIX.into_iter().map(move |j| (m, j)))
        .collect();
    let baselines: Vec<Result<Baseline, String>> =
        in_parallel(pairs, |&(mode, job)| baseline(mode, job));
    let mut unclassified = BTreeSet::new();
    let mut cells = Vec::new();
    let mut kinds_of = BTreeMap::new();
    for b in &baselines {
        let b = b.as_ref().unwrap_or_else(|e| panic!("{e}"));
        cells.extend(cells_of(b, &mut unclassified));
        kinds_of.insert((b.mode, b.job), b.kinds.clone());
    }
    assert!(
        unclassified.is_empty(),
        "vigil makes calls the matrix does not know: {unclassified:?} (add each to ERRORS, with the errors it can return, or to EXCLUDED, with the reason)"
    );
    if let Some(only) = only() {
        cells.retain(|c| c.label().contains(&only));
    }
    let kinds_of = Arc::new(kinds_of);
    let results = in_parallel(cells, move |cell| {
        run_cell(cell, &kinds_of[&(cell.mode, cell.job)])
    });
    show_and_check(&results, "", "the matrix", started);
}

/// Prints the matrices of `results`, PID 1's and the plain run's (each
/// titled `prefix` and the mode), and how long `what` took; fails on any
/// cell that failed without a mark.
fn show_and_check(results: &[CellResult], prefix: &str, what: &str, started: Instant) {
    show_chosen(results);
    for mode in [Mode::Pid1, Mode::Plain] {
        let of_mode: Vec<&CellResult> = results.iter().filter(|r| r.cell.mode == mode).collect();
        print_matrix(&format!("{prefix}{}", mode.name()), &of_mode);
    }
    note("faults", format!("{what} took {}", secs(started.elapsed())));
    let failures = unmarked_failures(results);
    assert!(
        failures.is_empty(),
        "{} cells failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

// ---------------------------------------------------------------------------
// The spawn
// ---------------------------------------------------------------------------

/// vigil traced from its first instruction, with everything it forks
/// (`-f`), running `busybox sh -c 'exit 3'` (or `program`): a static
/// program that makes none of the calls the spawn's cells fail. As PID 1
/// through busybox's `unshare`, which strace follows too, and which makes
/// none of them either (util-linux's reads its locale files). `execve` is
/// traced beside the cell's call, to know vigil's pid in the log.
fn run_from_start(mode: Mode, filter: &[String], program: Option<&str>) -> Run {
    let dir = TempDir::new("fault-spawn");
    let log = dir.join("strace.log");
    let mut prefix: Vec<String> = vec!["strace".into(), "-f".into(), "-o".into()];
    prefix.push(log.display().to_string());
    prefix.extend(filter.iter().cloned());
    if let Some(trace) = prefix.iter_mut().find(|a| a.starts_with("trace=")) {
        trace.push_str(",execve");
    }
    prefix.push("--".into());
    let busybox = which("busybox").display().to_string();
    if mode == Mode::Pid1 {
        prefix.push(busybox.clone());
        prefix.extend(["unshare", "--pid", "--fork", "--mount-proc", "--"].map(String::from));
    }
    let tlog = dir.join("tlog").display().to_string();
    let command: Vec<&str> = match program {
        Some(p) => vec![p],
        None => vec![&busybox, "sh", "-c", "exit 3"],
    };
    let run = Vigil::wrapped(&prefix)
        .cwd(dir.path())
        .args(["--termination-log", &tlog, "--"])
        .args(&command)
        .spawn();
    let mut run_ = run;
    let ended = wait_until(BOUND, || run_.try_exit().is_some());
    let out = if ended {
        run_.wait(BOUND)
    } else {
        run_.kill_and_collect()
    };
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    finish_run(mode, Job::Exit, out, log, dir, false, None)
}

/// The number, among vigil's calls of `name` in a `-f` log, of the first
/// one for which `pick` holds (1 for the first call).
fn nth_call(log: &str, vigil: i32, name: &str, mut pick: impl FnMut(&str) -> bool) -> Option<u32> {
    let mut n = 0;
    for line in log.lines() {
        if let Some((Some(pid), call)) = call_of(line, true)
            && pid == vigil
            && call == name
        {
            n += 1;
            if pick(line) {
                return Some(n);
            }
        }
    }
    None
}

/// The call by which vigil learns how its first spawn in the log went,
/// and its number among vigil's calls of that name: the first read of the
/// pipe (or, as std's `Command` did it, the socket pair) it made for the
/// exec's errors.
/// The call's name, its number, and how strace logs its start (`read(5,`).
fn outcome_read(log: &str, vigil: i32) -> Option<(&'static str, u32, String)> {
    let pipe = log.lines().find_map(|l| {
        let (pid, call) = call_of(l, true)?;
        (pid == Some(vigil) && matches!(call, "pipe2" | "socketpair") && l.ends_with("= 0")).then(
            || {
                l.split('[')
                    .nth(1)?
                    .split(',')
                    .next()?
                    .trim()
                    .parse::<i32>()
                    .ok()
            },
        )?
    })?;
    ["read", "recvfrom"].into_iter().find_map(|name| {
        let start = format!("{name}({pipe},");
        // The first such call after the pipe was made: the descriptor's
        // number may have been a file's before (a cgroup file read at
        // start).
        let mut after_pipe = false;
        let mut n = 0;
        for line in log.lines() {
            let Some((Some(pid), call)) = call_of(line, true) else {
                continue;
            };
            if pid != vigil {
                continue;
            }
            if matches!(call, "pipe2" | "socketpair") && line.ends_with("= 0") {
                after_pipe = true;
            }
            if call == name {
                n += 1;
                if after_pipe && line.contains(&start) {
                    return Some((name, n, start));
                }
            }
        }
        None
    })
}

/// What a spawn cell must end with.
#[derive(Clone, Copy, Debug)]
enum SpawnExpect {
    /// vigil could not start the command: status 1, one error line
    /// beginning this way, and the same message in the termination log.
    NotStarted(&'static str),
    /// The command ran: its status and the report, as the exit job's.
    Ran,
    /// The outcome of the exec could not be read: a warning says so, and
    /// the status is the command's (`code`).
    Unconfirmed(i32),
}

fn judge_spawn(run: &Run, expect: SpawnExpect) -> Verdict {
    if run.injected.is_empty() {
        return Verdict::Failed(format!("nothing injected:\n{}", run.log));
    }
    let vigil = run.vigil_pid;
    let hit_vigil = run
        .injected
        .iter()
        .all(|l| l.split_whitespace().next().and_then(|p| p.parse().ok()) == vigil);
    if !hit_vigil {
        return Verdict::Failed(format!(
            "harness: the injection hit another process than vigil ({vigil:?}): {:?}",
            run.injected
        ));
    }
    let out = &run.out;
    let err = &out.stderr;
    if aborting(err) || matches!(out.status, Exit::Signal(_) | Exit::Timeout) {
        return Verdict::Failed(format!(
            "died or hung ({:?}): {}",
            out.status,
            first_lines(err)
        ));
    }
    let tlog = run.tlog.as_deref().unwrap_or("").trim_end();
    match expect {
        SpawnExpect::NotStarted(line) => {
            let lines = out.stderr_lines();
            let ok = out.status == Exit::Code(1)
                && lines.len() == 1
                && lines[0].starts_with(line)
                && lines[0].strip_prefix("vigil: error: ") == Some(tlog);
            if !ok {
                return Verdict::Failed(format!(
                    "expected status 1 and one line {line:?}, also in the termination log ({tlog:?}): {:?}: {}",
                    out.status,
                    first_lines(err)
                ));
            }
        }
        SpawnExpect::Ran | SpawnExpect::Unconfirmed(_) => {
            let code = match expect {
                SpawnExpect::Unconfirmed(code) => code,
                _ => 3,
            };
            let warned = err.contains("vigil: warning: cannot tell whether");
            let ending = format!("child exited with code {code}; exit status {code}");
            let report = exit_report(err)
                .map(|r| r.text.to_string())
                .unwrap_or_default();
            let ok = out.status == Exit::Code(code)
                && report.starts_with(&ending)
                && tlog == report
                && warned == matches!(expect, SpawnExpect::Unconfirmed(_));
            if !ok {
                return Verdict::Failed(format!(
                    "expected status {code}, the report {ending:?}{}: {:?}: {}",
                    if matches!(expect, SpawnExpect::Unconfirmed(_)) {
                        " and a warning that the exec could not be confirmed"
                    } else {
                        ", no warning"
                    },
                    out.status,
                    first_lines(err)
                ));
            }
        }
    }
    Verdict::Survived
}

/// A spawn cell: the cell, and what it must end with.
#[derive(Clone)]
struct SpawnCell {
    cell: Cell,
    expect: SpawnExpect,
    /// The command, when not `busybox sh -c 'exit 3'`.
    program: Option<&'static str>,
    /// How the one call meant must start in strace's log (`read(5,`), when
    /// its number may differ from run to run: a blocking read that strace
    /// interrupted when it attached is counted once or twice. A run whose
    /// injection hit another call is run again.
    target: Option<String>,
}

fn run_spawn_cell(c: &SpawnCell, kinds: &BTreeMap<Mode, BTreeSet<String>>) -> CellResult {
    let filter = inject_filter(&c.cell);
    let mut attempts = 0;
    let (run, verdict) = loop {
        attempts += 1;
        let run = if c.cell.job == Job::StopHook {
            run_attached(c.cell.mode, Job::StopHook, &filter, c.cell.follow)
        } else {
            run_from_start(c.cell.mode, &filter, c.program)
        };
        let on_target = c.target.as_ref().is_none_or(|start| {
            run.injected
                .first()
                .is_some_and(|l| l.contains(start.as_str()))
        });
        if !on_target {
            if attempts < 3 {
                continue;
            }
            break (run, Verdict::NotReached);
        }
        let verdict = if c.cell.job == Job::StopHook {
            judge(&c.cell, &run, &kinds[&c.cell.mode])
        } else {
            judge_spawn(&run, c.expect)
        };
        break (run, verdict);
    };
    CellResult {
        cell: c.cell.clone(),
        evidence: format!("injected: {:?}\n{}", run.injected, run.out),
        known: None,
        verdict,
    }
}

/// The spawn's cells of one mode, from a traced run of each kind of spawn.
fn spawn_cells(mode: Mode) -> Result<(Vec<SpawnCell>, BTreeSet<String>), String> {
    let cell = |job, syscall, error, when: String, follow| Cell {
        mode,
        job,
        syscall,
        error,
        when,
        follow,
    };
    let mut cells = Vec::new();
    // The main child's spawn: calls vigil makes before its child runs.
    let base = run_from_start(
        mode,
        &[
            "-e".into(),
            "trace=read,recvfrom,pipe2,socketpair,fork".into(),
        ],
        None,
    );
    let vigil = base
        .vigil_pid
        .ok_or_else(|| format!("no vigil in the baseline's log:\n{}", base.log))?;
    let (read_call, read, target) = outcome_read(&base.log, vigil)
        .ok_or_else(|| format!("no read of the exec's pipe in the baseline:\n{}", base.log))?;
    let busybox = "vigil: error: could not start \"";
    for error in ["EMFILE", "ENFILE"] {
        cells.push(SpawnCell {
            cell: cell(Job::Exit, "pipe2", error, "1".into(), true),
            expect: SpawnExpect::NotStarted(busybox),
            program: None,
            target: None,
        });
    }
    for error in ["EAGAIN", "ENOMEM"] {
        cells.push(SpawnCell {
            cell: cell(Job::Exit, "fork", error, "1".into(), true),
            expect: SpawnExpect::NotStarted(busybox),
            program: None,
            target: None,
        });
    }
    for error in ["EINTR", "EAGAIN", "EIO", "ENOMEM"] {
        cells.push(SpawnCell {
            cell: cell(Job::Exit, read_call, error, read.to_string(), true),
            expect: SpawnExpect::Ran,
            program: None,
            target: Some(target.clone()),
        });
    }
    // Every read of the pipe fails: the command runs, unconfirmed.
    let every = format!("{read}..{}", read + 7);
    cells.push(SpawnCell {
        cell: cell(Job::Exit, read_call, "EIO", every.clone(), true),
        expect: SpawnExpect::Unconfirmed(3),
        program: None,
        target: Some(target.clone()),
    });
    cells.push(SpawnCell {
        cell: cell(Job::Exit, read_call, "EIO", every, true),
        expect: SpawnExpect::Unconfirmed(127),
        program: Some("/nonexistent/program"),
        target: Some(target),
    });
    // A pre-stop hook's spawn: vigil's side, then the forked process's.
    let base = run_attached(
        mode,
        Job::StopHook,
        &[
            "-e".into(),
            "trace=open,openat,pipe2,socketpair,fork,read,recvfrom,setpgid,dup2,execve".into(),
        ],
        true,
    );
    let vigil = base.vigil_pid.unwrap();
    let base_cell = cell(Job::StopHook, "none", "none", "0".into(), false);
    if let Verdict::Failed(why) = judge_outcome(&base_cell, &base, &BTreeSet::new()) {
        return Err(format!(
            "hook baseline {}: {why}\n{}",
            mode.name(),
            base.out
        ));
    }
    let kinds = kinds(&base.out.stderr);
    for name in ["open", "openat"] {
        if let Some(n) = nth_call(&base.log, vigil, name, |l| l.contains("\"/dev/null\"")) {
            for error in ["EMFILE", "ENOMEM"] {
                cells.push(SpawnCell {
                    cell: cell(Job::StopHook, name, error, n.to_string(), false),
                    expect: SpawnExpect::Ran,
                    program: None,
                    target: Some("\"/dev/null\"".into()),
                });
            }
        }
    }
    let (read_call, read, hook_target) = outcome_read(&base.log, vigil)
        .ok_or_else(|| format!("no read of the hook's exec pipe:\n{}", base.log))?;
    let parent_side = [
        ("pipe2", &["EMFILE", "ENFILE"][..], "1".to_string(), None),
        ("fork", &["EAGAIN", "ENOMEM"][..], "1".to_string(), None),
        (
            read_call,
            &["EINTR", "EAGAIN", "EIO", "ENOMEM"][..],
            read.to_string(),
            Some(hook_target),
        ),
    ];
    for (syscall, errors, when, target) in parent_side {
        for &error in errors {
            cells.push(SpawnCell {
                cell: cell(Job::StopHook, syscall, error, when.clone(), false),
                expect: SpawnExpect::Ran,
                program: None,
                target: target.clone(),
            });
        }
    }
    // The forked process's own calls before exec, found in the baseline.
    let forked: BTreeSet<&str> = base
        .log
        .lines()
        .filter_map(|l| call_of(l, true))
        .filter(|(pid, _)| *pid != Some(vigil))
        .map(|(_, call)| call)
        .collect();
    for (syscall, errors) in [
        ("setpgid", &["EPERM"][..]),
        ("dup2", &["EINTR", "EBUSY"][..]),
        (
            "execve",
            &["EACCES", "ENOENT", "EIO", "ENOMEM", "E2BIG"][..],
        ),
    ] {
        if !forked.contains(syscall) {
            continue;
        }
        for &error in errors {
            cells.push(SpawnCell {
                cell: cell(Job::StopHook, syscall, error, "1".into(), true),
                expect: SpawnExpect::Ran,
                program: None,
                target: None,
            });
        }
    }
    Ok((cells, kinds))
}

/// The spawn's own calls fail: std's `Command::spawn` panicked on a failed
/// read of its exec-error pipe (SIGABRT, and as PID 1 the container gone);
/// vigil's own fork + exec must survive each, and say what it could not
/// do.
#[test]
fn the_spawn_survives_its_calls_failing() {
    let _cpu = heavy();
    const T: &str = "the_spawn_survives_its_calls_failing";
    if need_program(T, "strace", "strace").is_none()
        || need_program(T, "busybox", "busybox-static").is_none()
    {
        return;
    }
    let started = Instant::now();
    let mut cells = Vec::new();
    let mut kinds = BTreeMap::new();
    for mode in [Mode::Pid1, Mode::Plain] {
        let (c, k) = spawn_cells(mode).unwrap_or_else(|e| panic!("{e}"));
        cells.extend(c);
        kinds.insert(mode, k);
    }
    if let Some(only) = only() {
        cells.retain(|c| c.cell.label().contains(&only));
    }
    let kinds = Arc::new(kinds);
    let results = in_parallel(cells, move |c| run_spawn_cell(c, &kinds));
    show_and_check(&results, "the spawn, ", "the spawn's cells", started);
}
