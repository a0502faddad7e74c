//! Shared harness for vigil's integration tests.
//!
//! Start vigil as PID 1 of a fresh PID namespace (`unshare --pid --fork
//! --mount-proc`), as a plain child process, or behind any wrapper command;
//! find its host pid, signal it, wait for it with a timeout, look at /proc,
//! and kill, by pid, everything a test started when the test ends (even when
//! it panics).
//!
//! Quick tour:
//!
//! ```ignore
//! mod common;
//! use common::*;
//!
//! let dir = TempDir::new("fwd");
//! let rec = dir.join("rec");
//! let run = spawn_sigrec(Vigil::pid1(), &rec, &[]); // `-- sigrec --out REC`, ready
//! run.signal(libc::SIGUSR1);
//! assert!(wait_for_signal(&rec, libc::SIGUSR1, TIMEOUT));
//! let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT); // or run.wait(TIMEOUT)
//! ```
#![allow(dead_code)]

// The raw signal syscalls (and `sig_bit`) the test programs use too.
#[path = "../programs/support/rawsig.rs"]
mod rawsig;

pub use rawsig::{set_sigmask, sig_bit};
use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// Generous upper bound for anything that should take well under a second
/// when vigil works (the test machines are small and busy).
pub const TIMEOUT: Duration = Duration::from_secs(30);
/// Upper bound for a short "must NOT happen" observation window.
pub const QUIET: Duration = Duration::from_millis(500);

// ---------------------------------------------------------------------------
// Binaries
// ---------------------------------------------------------------------------

/// Path of the vigil binary cargo built for this test run.
pub fn vigil_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_vigil"))
}

/// Path of a test program built from `tests/programs/NAME.rs` (a Cargo
/// example), beside the vigil binary (target/TARGET/debug/examples/NAME).
/// `cargo test` builds examples, but `cargo test --test X` does not: when a
/// program is missing or older than one of its sources (NAME.rs and what it
/// includes from tests/programs/support/), this runs `cargo build
/// --examples` once per test binary.
pub fn example(name: &str) -> PathBuf {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let dir = vigil_bin().parent().unwrap().join("examples");
    let bin = dir.join(name);
    let src_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified());
    let stale = |bin: &Path| -> bool {
        let (Ok(built), Some(sources)) = (modified(bin), dep_info_sources(bin)) else {
            return true;
        };
        sources
            .iter()
            .any(|src| modified(src).map_or(true, |m| built < m))
    };
    let res = BUILT.get_or_init(|| {
        let any_stale = std::fs::read_dir(&src_dir)
            .map(|rd| {
                rd.flatten().any(|e| {
                    let p = e.path();
                    p.extension() == Some(OsStr::new("rs"))
                        && stale(&dir.join(p.file_stem().unwrap()))
                })
            })
            .unwrap_or(false);
        if !any_stale {
            return Ok(());
        }
        let cargo = option_env!("CARGO").unwrap_or("cargo");
        let out = Command::new(cargo)
            .args(["build", "--quiet", "--examples", "--manifest-path"])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "cargo build --examples failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    });
    if let Err(e) = res {
        panic!("{e}");
    }
    assert!(
        bin.exists(),
        "test program {} missing (is tests/programs/{name}.rs there, and in Cargo.toml?)",
        bin.display()
    );
    bin
}

/// The sources cargo built `bin` from, as the dep-info file beside it
/// (BIN.d, make syntax: `BIN: SOURCE...`) lists them; None without one.
fn dep_info_sources(bin: &Path) -> Option<Vec<PathBuf>> {
    let text = std::fs::read_to_string(bin.with_extension("d")).ok()?;
    let (_, sources) = text.lines().next()?.split_once(": ")?;
    // A space in a path is escaped with a backslash.
    let sources = sources.replace("\\ ", "\0");
    Some(
        sources
            .split_whitespace()
            .map(|s| PathBuf::from(s.replace('\0', " ")))
            .collect(),
    )
}

/// The file `sigrec --out FILE` creates once its handlers are installed
/// (`sigcount --out FILE` too, once its signalfd is set up).
pub fn ready_file(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".ready");
    PathBuf::from(s)
}

/// Waits (up to TIMEOUT) until the helper recording into `out` (`sigrec` or
/// `sigcount`) has created its ready file, so that a signal sent from now on
/// is caught, not fatal; panics with `run.describe()` when it never does.
pub fn wait_ready(run: &Running, out: &Path) {
    let ready = ready_file(out);
    assert!(
        wait_for_file(&ready, TIMEOUT),
        "{} never appeared: the helper never got ready\n{}",
        ready.display(),
        run.describe()
    );
}

/// Where `name` is in the test's PATH (for wrappers that are given another
/// PATH, or that need a program by its path).
pub fn which(name: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} not found in PATH"))
}

// ---------------------------------------------------------------------------
// Polling, files, temp dirs
// ---------------------------------------------------------------------------

/// Poll `cond` every 10 ms until it is true (returns true) or `timeout`
/// passes (returns false; `cond` is evaluated one last time).
pub fn wait_until(timeout: Duration, cond: impl FnMut() -> bool) -> bool {
    wait_until_every(timeout, Duration::from_millis(10), cond)
}

/// Like `wait_until`, polling every `every` (for expensive conditions).
pub fn wait_until_every(
    timeout: Duration,
    every: Duration,
    mut cond: impl FnMut() -> bool,
) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return cond();
        }
        thread::sleep(every);
    }
}

pub fn wait_for_file(path: &Path, timeout: Duration) -> bool {
    wait_until(timeout, || path.exists())
}

/// Signal numbers recorded by `sigrec` in `path` (in the order written).
pub fn read_signals(path: &Path) -> Vec<i32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Wait until `sigrec`'s record `path` contains `sig`.
pub fn wait_for_signal(path: &Path, sig: i32, timeout: Duration) -> bool {
    wait_until(timeout, || read_signals(path).contains(&sig))
}

/// Wait until the file contains `needle`.
pub fn wait_for_text(path: &Path, needle: &str, timeout: Duration) -> bool {
    wait_until(timeout, || {
        std::fs::read_to_string(path)
            .map(|s| s.contains(needle))
            .unwrap_or(false)
    })
}

/// A file's content, trimmed ("" when it does not exist).
pub fn read_trimmed(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// A directory under the system temp dir, removed (recursively) on drop.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = std::env::temp_dir().join(format!(
            "vigil-test-{tag}-{}-{}-{nanos}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).unwrap();
        TempDir { path }
    }
    pub fn path(&self) -> &Path {
        &self.path
    }
    pub fn join(&self, p: impl AsRef<Path>) -> PathBuf {
        self.path.join(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

// ---------------------------------------------------------------------------
// /proc
// ---------------------------------------------------------------------------

/// Send a signal; Err carries the OS error (ESRCH when the pid is gone).
pub fn kill(pid: i32, sig: i32) -> std::io::Result<()> {
    assert!(pid > 0, "refusing kill({pid}, {sig})");
    if unsafe { libc::kill(pid, sig) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Fields of /proc/PID/stat that tests need.
#[derive(Debug, Clone)]
pub struct Stat {
    pub pid: i32,
    pub comm: String,
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    /// Foreground process group of the controlling terminal (-1: none).
    pub tpgid: i32,
    pub starttime: u64,
}

pub fn stat(pid: i32) -> Option<Stat> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    let comm = s[open + 1..close].to_string();
    let f: Vec<&str> = s[close + 2..].split_whitespace().collect();
    // f[0] = state (field 3), f[1] = ppid (4), pgrp (5), session (6),
    // tty_nr (7), tpgid (8), ... starttime (22) = f[19]
    Some(Stat {
        pid,
        comm,
        state: f.first()?.chars().next()?,
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        session: f.get(3)?.parse().ok()?,
        tpgid: f.get(5)?.parse().ok()?,
        starttime: f.get(19)?.parse().ok()?,
    })
}

/// Process state letter (R, S, D, T, t, Z, ...) or None when gone.
pub fn state(pid: i32) -> Option<char> {
    stat(pid).map(|s| s.state)
}

/// Exists and is not a zombie.
pub fn alive(pid: i32) -> bool {
    matches!(state(pid), Some(c) if c != 'Z' && c != 'X')
}

/// Gone from /proc entirely (exited and reaped).
pub fn gone(pid: i32) -> bool {
    !Path::new(&format!("/proc/{pid}")).exists()
}

pub fn comm(pid: i32) -> Option<String> {
    stat(pid).map(|s| s.comm)
}

/// Raw /proc/PID/status.
pub fn status(pid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/status")).ok()
}

/// One field of a /proc/PID/status text (value trimmed), e.g. "SigBlk".
pub fn status_text_field(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == key).then(|| v.trim().to_string())
    })
}

/// One field of /proc/PID/status, e.g. `status_field(pid, "VmHWM")` -> "1234 kB".
pub fn status_field(pid: i32, key: &str) -> Option<String> {
    status_text_field(&status(pid)?, key)
}

/// A hex signal set field (SigBlk, SigIgn, SigCgt, SigPnd, ShdPnd) as a u64
/// where bit N-1 stands for signal N.
pub fn sigset_field(pid: i32, key: &str) -> Option<u64> {
    u64::from_str_radix(&status_field(pid, key)?, 16).ok()
}

pub fn sigset_text_field(text: &str, key: &str) -> Option<u64> {
    u64::from_str_radix(&status_text_field(text, key)?, 16).ok()
}

/// Signal numbers in a sigset value.
pub fn sigs_in(set: u64) -> Vec<i32> {
    (1..=64).filter(|&s| set & sig_bit(s) != 0).collect()
}

/// Peak resident set size in kB.
pub fn vm_hwm_kb(pid: i32) -> Option<u64> {
    status_field(pid, "VmHWM")?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// (voluntary, nonvoluntary) context switches summed over all threads.
pub fn ctxt_switches(pid: i32) -> Option<(u64, u64)> {
    let mut vol = 0;
    let mut nonvol = 0;
    for e in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let text = std::fs::read_to_string(e.path().join("status")).ok()?;
        vol += status_text_field(&text, "voluntary_ctxt_switches")?
            .parse::<u64>()
            .ok()?;
        nonvol += status_text_field(&text, "nonvoluntary_ctxt_switches")?
            .parse::<u64>()
            .ok()?;
    }
    Some((vol, nonvol))
}

/// Direct children, from /proc/PID/task/*/children.
pub fn children(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for e in rd.flatten() {
            if let Ok(s) = std::fs::read_to_string(e.path().join("children")) {
                out.extend(s.split_whitespace().filter_map(|w| w.parse::<i32>().ok()));
            }
        }
    }
    out
}

/// Every process on the machine as (pid, ppid, state).
pub fn process_table() -> Vec<(i32, i32, char)> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            if let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) {
                if let Some(st) = stat(pid) {
                    out.push((pid, st.ppid, st.state));
                }
            }
        }
    }
    out
}

/// All descendants of `pid` (not `pid` itself), by parent links.
pub fn descendants(pid: i32) -> Vec<i32> {
    descendants_in(&process_table(), &[pid])
}

fn descendants_in(table: &[(i32, i32, char)], roots: &[i32]) -> Vec<i32> {
    let mut kids: HashMap<i32, Vec<i32>> = HashMap::new();
    for &(p, pp, _) in table {
        kids.entry(pp).or_default().push(p);
    }
    let mut out = Vec::new();
    let mut seen: HashSet<i32> = roots.iter().copied().collect();
    let mut stack: Vec<i32> = roots.to_vec();
    while let Some(p) = stack.pop() {
        if let Some(ks) = kids.get(&p) {
            for &k in ks {
                if seen.insert(k) {
                    out.push(k);
                    stack.push(k);
                }
            }
        }
    }
    out
}

/// The pids among `pids` that are zombies now.
pub fn zombies_among(pids: &[i32]) -> Vec<i32> {
    pids.iter()
        .copied()
        .filter(|&p| state(p) == Some('Z'))
        .collect()
}

/// Zombies among the descendants of `pid`.
pub fn zombie_descendants(pid: i32) -> Vec<i32> {
    let t = process_table();
    let d: HashSet<i32> = descendants_in(&t, &[pid]).into_iter().collect();
    t.iter()
        .filter(|(p, _, s)| *s == 'Z' && d.contains(p))
        .map(|(p, _, _)| *p)
        .collect()
}

fn pidns_of(pid: i32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/ns/pid")).ok()
}

/// Host pids of every process in the PID namespace `pid` belongs to
/// (matched by /proc/X/ns/pid, plus `pid`'s descendants, which covers
/// zombies whose namespace link can no longer be read). For vigil as PID 1
/// that is vigil itself and everything under it.
pub fn pidns_members(pid: i32) -> Vec<i32> {
    let Some(ns) = pidns_of(pid) else {
        return Vec::new();
    };
    let t = process_table();
    let mut set: HashSet<i32> = descendants_in(&t, &[pid]).into_iter().collect();
    set.insert(pid);
    for &(p, _, _) in &t {
        if !set.contains(&p) && pidns_of(p).as_ref() == Some(&ns) {
            set.insert(p);
        }
    }
    let mut v: Vec<i32> = set.into_iter().collect();
    v.sort();
    v
}

/// Zombies in the PID namespace `pid` belongs to.
pub fn zombies_in_pidns(pid: i32) -> Vec<i32> {
    zombies_among(&pidns_members(pid))
}

/// `NSpid` of /proc/PID/status: the pid in each nested namespace, outermost first.
pub fn nspid(pid: i32) -> Vec<i32> {
    status_field(pid, "NSpid")
        .map(|v| {
            v.split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------
// Killing everything a test started
// ---------------------------------------------------------------------------

/// Remembers the processes a test started (by pid and start time, so a
/// recycled pid is never hit) and, on drop or `kill_all`, SIGKILLs them and
/// all their descendants: first SIGSTOP the whole tree until it stops
/// growing (a stopped process cannot fork), then SIGKILL each pid. Never
/// uses kill(-1) or process-name matching.
#[derive(Default)]
pub struct ProcGuard {
    roots: Mutex<Vec<(i32, u64)>>,
}

impl ProcGuard {
    pub fn new() -> ProcGuard {
        ProcGuard::default()
    }

    /// Add `pid` (and, at kill time, its descendants).
    pub fn track(&self, pid: i32) {
        if let Some(st) = stat(pid) {
            let mut r = self.roots.lock().unwrap();
            if !r.iter().any(|&(p, _)| p == pid) {
                r.push((pid, st.starttime));
            }
        }
    }

    pub fn kill_all(&self) {
        let roots: Vec<i32> = self
            .roots
            .lock()
            .unwrap()
            .iter()
            .filter(|&&(p, start)| stat(p).map(|s| s.starttime) == Some(start))
            .map(|&(p, _)| p)
            .collect();
        if roots.is_empty() {
            return;
        }
        let mut victims: Vec<i32> = Vec::new();
        let mut seen: HashSet<i32> = HashSet::new();
        for _round in 0..50 {
            let t = process_table();
            let mut all = roots.clone();
            all.extend(descendants_in(&t, &roots));
            all.extend(descendants_in(&t, &victims));
            let new: Vec<i32> = all.into_iter().filter(|p| seen.insert(*p)).collect();
            if new.is_empty() {
                break;
            }
            for &p in &new {
                let _ = kill(p, libc::SIGSTOP);
            }
            victims.extend(new);
        }
        for &p in &victims {
            let _ = kill(p, libc::SIGKILL);
        }
    }
}

impl Drop for ProcGuard {
    fn drop(&mut self) {
        self.kill_all();
    }
}

// ---------------------------------------------------------------------------
// Running vigil
// ---------------------------------------------------------------------------

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
        unsafe {
            cmd.pre_exec(move || set_signal_state(block, ignore));
        }
        let started = Instant::now();
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {:?}: {e}", cmd));
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

/// Keeps the variables vigil reads (VIGIL_*, TINI_*, RUST_LOG) that the
/// test process happens to have from reaching `cmd`: a test sets its own.
fn remove_vigil_env(cmd: &mut Command) {
    for (k, _) in std::env::vars_os() {
        let ks = k.to_string_lossy();
        if ks.starts_with("VIGIL_") || ks.starts_with("TINI_") || ks == "RUST_LOG" {
            cmd.env_remove(&k);
        }
    }
}

/// In a forked child (async-signal-safe, raw syscalls): block exactly
/// `block`, ignore exactly `ignore`, put every other ignored signal back to
/// SIG_DFL. Bit N-1 stands for signal N.
fn set_signal_state(block: u64, ignore: u64) -> std::io::Result<()> {
    for sig in 1..=64 {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        let mut old = rawsig::KSigaction::default();
        let _ = rawsig::rt_sigaction(sig, None, Some(&mut old));
        let want = if ignore & sig_bit(sig) != 0 {
            libc::SIG_IGN
        } else {
            libc::SIG_DFL
        };
        if old.handler == want || (old.handler != libc::SIG_IGN && want == libc::SIG_DFL) {
            continue; // handlers are reset by exec anyway
        }
        rawsig::set_disposition(sig, want)?;
    }
    set_sigmask(block)
}

/// Collects a pipe's bytes in a background thread; readable while running.
#[derive(Clone)]
struct Capture {
    buf: Arc<Mutex<Vec<u8>>>,
    done: Arc<AtomicBool>,
}

impl Capture {
    fn start(mut r: impl Read + Send + 'static) -> Capture {
        let c = Capture {
            buf: Arc::default(),
            done: Arc::default(),
        };
        let c2 = c.clone();
        thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            loop {
                match r.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => c2.buf.lock().unwrap().extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
            c2.done.store(true, Ordering::SeqCst);
        });
        c
    }
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.buf.lock().unwrap()).into_owned()
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

    /// vigil's first child (normally the command), waiting up to TIMEOUT.
    pub fn child_pid(&self) -> i32 {
        let v = self.vigil_pid();
        let mut found = None;
        wait_until(TIMEOUT, || {
            found = children(v).into_iter().min();
            found.is_some()
        });
        found.unwrap_or_else(|| panic!("vigil (pid {v}) has no child\n{}", self.describe()))
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
        if self.exit.is_none() {
            if let Ok(Some(st)) = self.child.try_wait() {
                if self.pid1 && st.code() == Some(1) {
                    // let the reader catch unshare's last words (see translate)
                    wait_until(Duration::from_secs(3), || {
                        self.stderr.done.load(Ordering::SeqCst)
                    });
                }
                self.exit = Some(self.translate(st));
            }
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
            self.vigil_pid.get().copied().or(self.plain.then(|| self.outer_pid())),
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

// ---------------------------------------------------------------------------
// Children the tests give vigil, and what a usage error looks like
// ---------------------------------------------------------------------------

/// Starts `v` (options already on it) with `sigrec --out OUT ARGS...` as
/// its command; returns once sigrec's handlers are in place.
pub fn spawn_sigrec(v: Vigil, out: &Path, rec_args: &[&str]) -> Running {
    let run = v
        .arg("--")
        .arg(example("sigrec"))
        .arg("--out")
        .arg(out)
        .args(rec_args)
        .spawn();
    wait_ready(&run, out);
    run
}

/// Starts vigil (options already on `v`) with `sh -c SCRIPT` as the child,
/// in `dir` (the working directory of vigil, the child and the hooks).
pub fn spawn_sh(v: Vigil, dir: &TempDir, script: &str) -> Running {
    v.cwd(dir.path()).args(["--", "sh", "-c", script]).spawn()
}

/// `spawn_sh`, then waits until the script has created `ready` in `dir`.
pub fn start_sh(v: Vigil, dir: &TempDir, script: &str) -> Running {
    let run = spawn_sh(v, dir, script);
    assert!(
        wait_for_file(&dir.join("ready"), TIMEOUT),
        "the child never created 'ready'\n{}",
        run.describe()
    );
    run
}

/// A shell child that ignores SIGTERM: it writes its pid to `pid`, creates
/// `ready` and becomes `sleep 1000` (which inherits the ignored SIGTERM).
pub const TERM_IGNORER: &str = "trap '' TERM; echo $$ > pid; : > ready; exec sleep 1000";

/// Checks that `out` is a usage error (`what` names the case): status 2
/// and exactly one stderr line, starting `vigil: error: ` (the level word
/// every error line carries); returns that line.
pub fn usage_error_line<'a>(out: &'a Output, what: &str) -> &'a str {
    assert_eq!(out.status, Exit::Code(2), "{what}: {out}");
    let lines = out.stderr_lines();
    assert_eq!(
        lines.len(),
        1,
        "{what}: want exactly one stderr line\n{out}"
    );
    assert!(
        lines[0].starts_with("vigil: error: "),
        "{what}: {:?}",
        lines[0]
    );
    lines[0]
}

// ---------------------------------------------------------------------------
// A real shell in a pseudo-terminal
// ---------------------------------------------------------------------------

/// An interactive bash on a fresh pseudo-terminal (its controlling
/// terminal, job control on). Output is collected in the background.
pub struct PtyShell {
    child: Child,
    master: OwnedFd,
    out: Capture,
    guard: ProcGuard,
}

/// The prompt PtyShell sets.
pub const PTY_PROMPT: &str = "PTYPROMPT$ ";

impl PtyShell {
    pub fn spawn(extra_env: &[(&str, &str)]) -> PtyShell {
        let pty = nix::pty::openpty(None, None).expect("openpty");
        let slave = pty.slave;
        let mut cmd = Command::new("bash");
        cmd.args(["--norc", "--noprofile", "-i"])
            .env("TERM", "dumb")
            .env("PS1", PTY_PROMPT)
            .env("HISTFILE", "/dev/null")
            .env_remove("PROMPT_COMMAND")
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave.try_clone().unwrap()));
        remove_vigil_env(&mut cmd);
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        unsafe {
            cmd.pre_exec(|| {
                set_signal_state(0, 0)?;
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("spawn bash in a pty");
        drop(slave);
        let guard = ProcGuard::new();
        guard.track(child.id() as i32);
        let reader = std::fs::File::from(pty.master.try_clone().unwrap());
        let out = Capture::start(reader);
        PtyShell {
            child,
            master: pty.master,
            out,
            guard,
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Type these bytes (use "\x1a" for Ctrl-Z, "\x03" for Ctrl-C).
    pub fn send(&self, s: &str) {
        let n = unsafe {
            libc::write(
                self.master.as_raw_fd(),
                s.as_ptr() as *const libc::c_void,
                s.len(),
            )
        };
        assert_eq!(n, s.len() as isize, "write to pty master");
    }

    /// Everything the terminal showed so far.
    pub fn output(&self) -> String {
        self.out.text()
    }

    /// Wait until the terminal output contains `needle` `n` times or more.
    pub fn wait_output_count(&self, needle: &str, n: usize, timeout: Duration) -> bool {
        wait_until(timeout, || self.out.text().matches(needle).count() >= n)
    }

    pub fn wait_output(&self, needle: &str, timeout: Duration) -> bool {
        self.wait_output_count(needle, 1, timeout)
    }

    pub fn guard(&self) -> &ProcGuard {
        &self.guard
    }
}

impl Drop for PtyShell {
    fn drop(&mut self) {
        self.guard.kill_all();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------
// Seeded randomness for generated test cases
// ---------------------------------------------------------------------------

/// splitmix64: a small PRNG that gives the same sequence everywhere, so a
/// printed seed replays a run of generated cases exactly.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A number in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
}

/// Writes a line to stderr past libtest's output capture (which takes only
/// what `print!` and `eprint!` write), so that it shows in CI logs of a
/// passing run too.
pub fn say_uncaptured(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The seed for a run of generated cases: `$VAR` when set (to replay a
/// run), else one from the clock. Printed either way.
pub fn seed_from_env(var: &str) -> u64 {
    let seed = match std::env::var(var) {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{var}={s:?} is not a number")),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1),
    };
    say_uncaptured(&format!("{var}={seed} (set it to replay this run)"));
    seed
}
