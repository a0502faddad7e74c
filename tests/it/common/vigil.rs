//! Running vigil: the `Vigil` builder (as PID 1 of a new PID namespace,
//! as a plain child, or behind a wrapper), the `Running` vigil (its pids,
//! signalling it, its output so far, waiting for it with a timeout) and the
//! `Output` of a finished run.

use super::capture::Capture;
use super::start_state::{remove_vigil_env, set_signal_state};
use super::{ProcGuard, TIMEOUT};
use super::{children, comm, descendants, kill, nspid, pidns_members, sig_bit, stat};
use super::{vigil_bin, wait_until};
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

/// How vigil is started.
#[derive(Clone, Debug)]
pub enum Mode {
    /// `unshare --pid --fork --mount-proc -- VIGIL ARGS`: vigil is PID 1 of
    /// a fresh PID namespace (with its own /proc).
    Pid1,
    /// VIGIL ARGS as a plain child of the test.
    Plain,
    /// PREFIX... VIGIL ARGS: some wrapper that starts vigil as a descendant,
    /// e.g. `["sh", "-c", "\"$@\" & wait", "sh"]`.
    Wrapped(Vec<OsString>),
}

/// How a process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    /// Did not end within the timeout (it was then killed).
    Timeout,
}

/// What a finished run produced.
#[derive(Clone)]
pub struct Output {
    pub status: Exit,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn code(&self) -> Option<i32> {
        match self.status {
            Exit::Code(c) => Some(c),
            _ => None,
        }
    }
    pub fn stderr_lines(&self) -> Vec<&str> {
        self.stderr.lines().collect()
    }
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "status: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}\n---",
            self.status, self.stdout, self.stderr
        )
    }
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

enum Input {
    Null,
    Bytes(Vec<u8>),
    Stdio(Stdio),
    Piped,
}

/// Builder for one vigil run. Defaults: stdin /dev/null, stdout and stderr
/// captured, the test's environment minus VIGIL_*, TINI_* and RUST_LOG.
pub struct Vigil {
    mode: Mode,
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(OsString, Option<OsString>)>,
    cwd: Option<PathBuf>,
    stdin: Input,
    block: u64,
    ignore: u64,
    netns: Option<PathBuf>,
}

impl Vigil {
    pub fn new(mode: Mode) -> Vigil {
        Vigil {
            mode,
            program: vigil_bin(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            stdin: Input::Null,
            block: 0,
            ignore: 0,
            netns: None,
        }
    }
    /// vigil as PID 1 of a new PID namespace.
    pub fn pid1() -> Vigil {
        Vigil::new(Mode::Pid1)
    }
    /// vigil as a plain child process (not PID 1).
    pub fn plain() -> Vigil {
        Vigil::new(Mode::Plain)
    }
    /// vigil started by a wrapper command: `PREFIX... VIGIL ARGS...`.
    pub fn wrapped<S: AsRef<OsStr>>(prefix: &[S]) -> Vigil {
        Vigil::new(Mode::Wrapped(
            prefix.iter().map(|s| s.as_ref().to_owned()).collect(),
        ))
    }
    /// Run this file instead of the built vigil (e.g. a `docker-init` link).
    pub fn program(mut self, p: impl AsRef<Path>) -> Self {
        self.program = p.as_ref().to_path_buf();
        self
    }
    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Self {
        self.args.push(a.as_ref().to_owned());
        self
    }
    pub fn args<I, S>(mut self, it: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(it.into_iter().map(|s| s.as_ref().to_owned()));
        self
    }
    pub fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> Self {
        self.env
            .push((k.as_ref().to_owned(), Some(v.as_ref().to_owned())));
        self
    }
    pub fn env_remove(mut self, k: impl AsRef<OsStr>) -> Self {
        self.env.push((k.as_ref().to_owned(), None));
        self
    }
    pub fn cwd(mut self, d: impl AsRef<Path>) -> Self {
        self.cwd = Some(d.as_ref().to_path_buf());
        self
    }
    /// Feed these bytes on stdin, then close it.
    pub fn stdin_bytes(mut self, b: impl Into<Vec<u8>>) -> Self {
        self.stdin = Input::Bytes(b.into());
        self
    }
    /// Use this as stdin (e.g. a pty slave, Stdio::inherit()).
    pub fn stdin(mut self, s: Stdio) -> Self {
        self.stdin = Input::Stdio(s);
        self
    }
    /// Keep a pipe to stdin open; get it with `Running::take_stdin`.
    pub fn stdin_piped(mut self) -> Self {
        self.stdin = Input::Piped;
        self
    }
    /// Start the outermost process (unshare / vigil / wrapper) with these
    /// signals blocked (set in pre_exec, after std's own set-up). Without
    /// block_signals/ignore_signals it starts with nothing blocked and
    /// nothing ignored, whatever the test process inherited.
    pub fn block_signals(mut self, sigs: &[i32]) -> Self {
        for &s in sigs {
            self.block |= sig_bit(s);
        }
        self
    }
    /// Start the outermost process with these signals ignored (SIG_IGN).
    pub fn ignore_signals(mut self, sigs: &[i32]) -> Self {
        for &s in sigs {
            self.ignore |= sig_bit(s);
        }
        self
    }

    /// Start the outermost process in the network namespace `ns`
    /// (`/proc/PID/ns/net` of a server the test started in a namespace of
    /// its own): the server's loopback, ports and addresses, with vigil
    /// still the test's child, PID 1 or wrapped as the mode says.
    pub fn netns(mut self, ns: impl AsRef<Path>) -> Self {
        self.netns = Some(ns.as_ref().to_path_buf());
        self
    }

    pub fn spawn(self) -> Running {
        let (mut cmd, pid1) = match &self.mode {
            Mode::Pid1 => {
                let mut c = Command::new("unshare");
                c.args(["--pid", "--fork", "--mount-proc", "--"])
                    .arg(&self.program);
                (c, true)
            }
            Mode::Plain => (Command::new(&self.program), false),
            Mode::Wrapped(prefix) => {
                let mut c = Command::new(&prefix[0]);
                c.args(&prefix[1..]).arg(&self.program);
                (c, false)
            }
        };
        cmd.args(&self.args);
        remove_vigil_env(&mut cmd);
        for (k, v) in &self.env {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        if let Some(d) = &self.cwd {
            cmd.current_dir(d);
        }
        let mut feed = None;
        match self.stdin {
            Input::Null => {
                cmd.stdin(Stdio::null());
            }
            Input::Bytes(b) => {
                cmd.stdin(Stdio::piped());
                feed = Some(b);
            }
            Input::Stdio(s) => {
                cmd.stdin(s);
            }
            Input::Piped => {
                cmd.stdin(Stdio::piped());
            }
        }
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        // Start from a known signal state whatever the test process inherited
        // (cargo's posix_spawn can leave glibc's internal signals 32/33
        // ignored): exactly `block` blocked, exactly `ignore` ignored.
        let (block, ignore) = (self.block, self.ignore);
        // Opened here, since the forked child may not allocate; close-on-exec,
        // and kept open until the spawn is done.
        let netns = self.netns.as_ref().map(|ns| {
            std::fs::File::open(ns).unwrap_or_else(|e| panic!("cannot open {}: {e}", ns.display()))
        });
        let netns_fd = netns.as_ref().map(|f| f.as_raw_fd());
        unsafe {
            cmd.pre_exec(move || {
                if let Some(fd) = netns_fd
                    && libc::setns(fd, libc::CLONE_NEWNET) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                set_signal_state(block, ignore)
            });
        }
        let started = Instant::now();
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {:?}: {e}", cmd));
        drop(netns);
        let guard = ProcGuard::new();
        guard.track(child.id() as i32);
        if let Some(b) = feed {
            let mut w = child.stdin.take().unwrap();
            thread::spawn(move || {
                let _ = w.write_all(&b);
            });
        }
        let stdout = Capture::start(child.stdout.take().unwrap());
        let stderr = Capture::start(child.stderr.take().unwrap());
        let exe = std::fs::canonicalize(&self.program).unwrap_or(self.program.clone());
        Running {
            child,
            plain: matches!(self.mode, Mode::Plain),
            pid1,
            exe,
            vigil_pid: OnceLock::new(),
            stdout,
            stderr,
            guard,
            exit: None,
            started,
        }
    }

    /// spawn + wait(TIMEOUT)
    pub fn run(self) -> Output {
        self.spawn().wait(TIMEOUT)
    }

    pub fn run_timeout(self, timeout: Duration) -> Output {
        self.spawn().wait(timeout)
    }
}

/// A started vigil. Dropping it SIGKILLs every process it started.
pub struct Running {
    child: Child,
    plain: bool,
    pid1: bool,
    exe: PathBuf,
    vigil_pid: OnceLock<i32>,
    stdout: Capture,
    stderr: Capture,
    guard: ProcGuard,
    exit: Option<Exit>,
    started: Instant,
}

impl Running {
    /// Pid of the process the test started (unshare, vigil, or the wrapper).
    pub fn outer_pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Host pid of vigil. For PID 1 and wrapped runs, waits (up to TIMEOUT)
    /// until a child of the outer process is running vigil's executable.
    pub fn vigil_pid(&self) -> i32 {
        if self.plain {
            return self.outer_pid();
        }
        *self.vigil_pid.get_or_init(|| {
            let outer = self.outer_pid();
            let mut found = None;
            wait_until(TIMEOUT, || {
                found = children(outer).into_iter().find(|&c| {
                    std::fs::read_link(format!("/proc/{c}/exe"))
                        .map(|e| e == self.exe)
                        .unwrap_or(false)
                });
                found.is_some()
            });
            let pid = found.unwrap_or_else(|| {
                panic!("vigil did not start under pid {outer}\n{}", self.describe())
            });
            self.guard.track(pid);
            pid
        })
    }

    /// Host pid of vigil if it can be found right now (it may not have
    /// started yet, or may have ended already), without waiting.
    pub fn vigil_pid_now(&self) -> Option<i32> {
        if self.plain {
            return Some(self.outer_pid());
        }
        if let Some(pid) = self.vigil_pid.get() {
            return Some(*pid);
        }
        let pid = children(self.outer_pid()).into_iter().find(|&c| {
            std::fs::read_link(format!("/proc/{c}/exe"))
                .map(|e| e == self.exe)
                .unwrap_or(false)
        })?;
        self.guard.track(pid);
        Some(*self.vigil_pid.get_or_init(|| pid))
    }

    /// vigil's first child (normally the command), waiting up to TIMEOUT.
    pub fn child_pid(&self) -> i32 {
        self.child_pid_of(self.vigil_pid())
    }

    /// The first child of `v` (a vigil the test found itself, below a
    /// wrapper), waiting up to TIMEOUT.
    pub fn child_pid_of(&self, v: i32) -> i32 {
        let mut found = None;
        wait_until(TIMEOUT, || {
            found = children(v).into_iter().min();
            found.is_some()
        });
        found.unwrap_or_else(|| panic!("vigil (pid {v}) has no child\n{}", self.describe()))
    }

    /// The host pid of the process that is `ns_pid` in vigil's namespace.
    pub fn host_pid(&self, ns_pid: i32) -> Option<i32> {
        pidns_members(self.vigil_pid())
            .into_iter()
            .find(|&p| nspid(p).last() == Some(&ns_pid))
    }

    /// Is this vigil PID 1 of its own namespace?
    pub fn is_pid1(&self) -> bool {
        self.pid1
    }

    /// Send `sig` to vigil (host pid). Panics if that fails.
    pub fn signal(&self, sig: i32) {
        let p = self.vigil_pid();
        kill(p, sig).unwrap_or_else(|e| panic!("kill({p}, {sig}): {e}\n{}", self.describe()));
    }

    /// The extra processes to kill at the end (e.g. a vigil re-parented
    /// away from its wrapper).
    pub fn guard(&self) -> &ProcGuard {
        &self.guard
    }

    pub fn take_stdin(&mut self) -> Option<std::process::ChildStdin> {
        self.child.stdin.take()
    }

    pub fn stdout_now(&self) -> String {
        self.stdout.text()
    }
    pub fn stderr_now(&self) -> String {
        self.stderr.text()
    }
    /// Wait until vigil's stderr so far contains `needle`.
    pub fn wait_stderr(&self, needle: &str, timeout: Duration) -> bool {
        wait_until(timeout, || self.stderr.text().contains(needle))
    }
    pub fn wait_stdout(&self, needle: &str, timeout: Duration) -> bool {
        wait_until(timeout, || self.stdout.text().contains(needle))
    }

    /// Time since spawn.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Has the outer process ended? (non-blocking)
    pub fn try_exit(&mut self) -> Option<Exit> {
        if self.exit.is_none()
            && let Ok(Some(st)) = self.child.try_wait()
        {
            if self.pid1 && st.code() == Some(1) {
                // let the reader catch unshare's last words (see translate)
                wait_until(Duration::from_secs(3), || {
                    self.stderr.done.load(Ordering::SeqCst)
                });
            }
            self.exit = Some(self.translate(st));
        }
        self.exit
    }

    fn translate(&self, st: ExitStatus) -> Exit {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = st.signal() {
            // unshare re-raises the signal that killed its child
            return Exit::Signal(sig);
        }
        let code = st.code().unwrap_or(-1);
        if self.pid1
            && code == 1
            && self
                .stderr
                .text()
                .contains("unshare: sigprocmask unblock failed")
        {
            // unshare cannot re-raise SIGKILL: it prints this and exits 1
            return Exit::Signal(libc::SIGKILL);
        }
        Exit::Code(code)
    }

    /// Wait for the outer process to end (at most `timeout`; then everything
    /// is killed and the status is Exit::Timeout). Returns the status and all
    /// output. In PID 1 mode the status is vigil's (unshare passes it on).
    pub fn wait(mut self, timeout: Duration) -> Output {
        let ended = wait_until(timeout, || self.try_exit().is_some());
        if !ended {
            self.guard.kill_all();
            let _ = self.child.wait();
            self.exit = Some(Exit::Timeout);
        }
        self.finish()
    }

    /// Send `sig` to vigil, then `wait(timeout)`.
    pub fn stop_and_wait(self, sig: i32, timeout: Duration) -> Output {
        self.signal(sig);
        self.wait(timeout)
    }

    /// SIGKILL everything now and return what was captured.
    pub fn kill_and_collect(mut self) -> Output {
        self.guard.kill_all();
        let _ = self.child.wait();
        self.try_exit();
        self.finish()
    }

    fn finish(mut self) -> Output {
        // Give the readers a moment to drain: processes that outlived vigil
        // may still hold the pipes, so do not wait for EOF forever.
        wait_until(Duration::from_secs(3), || {
            self.stdout.done.load(Ordering::SeqCst) && self.stderr.done.load(Ordering::SeqCst)
        });
        let mut stderr = self.stderr.text();
        if self.pid1 {
            stderr = stderr
                .lines()
                .filter(|l| !l.starts_with("unshare: sigprocmask unblock failed"))
                .map(|l| format!("{l}\n"))
                .collect();
        }
        let status = self.exit.take().unwrap_or(Exit::Timeout);
        Output {
            status,
            stdout: self.stdout.text(),
            stderr,
        }
    }

    /// A multi-line description for assertion messages.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "outer pid {} ({:?}), vigil pid {:?}, after {:.2}s\n--- stdout so far ---\n{}\n--- stderr so far ---\n{}",
            self.outer_pid(),
            comm(self.outer_pid()),
            self.vigil_pid
                .get()
                .copied()
                .or(self.plain.then(|| self.outer_pid())),
            self.started.elapsed().as_secs_f64(),
            self.stdout.text(),
            self.stderr.text()
        );
        let root = self.vigil_pid.get().copied().unwrap_or(self.outer_pid());
        s.push_str("\n--- processes ---\n");
        for p in std::iter::once(root).chain(descendants(root)) {
            if let Some(st) = stat(p) {
                s.push_str(&format!(
                    "{} ppid {} pgrp {} {} {}\n",
                    p, st.ppid, st.pgrp, st.state, st.comm
                ));
            }
        }
        s
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.guard.kill_all();
        let _ = self.child.wait();
    }
}

/// How one of vigil's own options is given to it.
#[derive(Clone, Copy, Debug)]
pub enum Via {
    /// `--grace-period 1s`
    Flag,
    /// `VIGIL_GRACE_PERIOD=1s`
    Env,
}

/// The variable that stands for a long option, as the option table says:
/// `--grace-period` -> `VIGIL_GRACE_PERIOD`.
pub fn var_of(flag: &str) -> String {
    let long = flag.trim_start_matches("--");
    super::options::OPTIONS
        .iter()
        .find(|o| o.long == Some(long))
        .and_then(|o| o.env)
        .unwrap_or_else(|| panic!("{flag} has no variable in the option table"))
        .to_string()
}

/// Adds one of vigil's own options, on the command line or through its variable.
pub fn opt(v: Vigil, via: Via, flag: &str, value: &str) -> Vigil {
    match via {
        Via::Flag => v.arg(flag).arg(value),
        Via::Env => v.env(var_of(flag), value),
    }
}
