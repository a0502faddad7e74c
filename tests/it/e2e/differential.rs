//! Drop-in fidelity, checked against tini itself.
//!
//! Each case is one command line, run under `tini-static` and under vigil,
//! both as PID 1 of a new PID namespace and as a plain process (not PID 1),
//! and compared on what a user sees of the child: vigil's (tini's) exit
//! status, what the child printed on stdout, and which signals the child
//! (and, for `-g`, a grandchild in its process group) received, in order.
//! stderr is not compared: the two inits word their messages differently
//! (and vigil's exit report is its own).
//!
//! The cases are a fixed list (documented examples, exec failures, usage
//! errors, every catchable signal killing the child, parent-death signals,
//! the differences below) plus cases from a seeded random grammar over
//! tini's whole option surface: `-s -g -w -v` repeated and clustered, `-e`
//! with codes, 128+N statuses and tini's number spellings, `-p` with tini's
//! signal names, `--` or none, `TINI_SUBREAPER`, `TINI_KILL_PROCESS_GROUP`,
//! `TINI_VERBOSITY`; children that exit with a code, kill themselves with a
//! signal, fail to exec, or record the signals forwarded to them (realtime
//! ones included) and end by a forwarded signal.
//!
//! `VIGIL_DIFF_SEED=N` replays a run (the seed is printed at the start and
//! in every failure); `VIGIL_DIFF_CASES=N` sets the number of random cases
//! (default 400). `VIGIL_DIFF_THREADS=N` sets how many cases run at once
//! (default 4). `VIGIL_DIFF_ONLY=LABEL` runs only the case with that label
//! (`random #17`, say, with the seed of the run it failed in).
//!
//! Comparing with tini alone would let a fault that both share pass, or a
//! harness that observes nothing: the test also knows, from the case, the
//! signals a recording child must have seen and the status a random case
//! must end with, and checks those too.
//!
//! Where vigil deliberately differs from tini, the case names the
//! difference (`Difference`, each one listed in the README's "Where vigil
//! differs from tini" section) and the check is that the outcome differs in
//! exactly that way; everything else must match.

use crate::common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long to wait for a forwarded signal to be recorded before the next
/// one is sent (it takes milliseconds; this only bounds a miss).
const SIGNAL_WAIT: Duration = Duration::from_secs(10);
/// The same, for a signal the init is known not to forward.
const SIGNAL_WAIT_NOT_FORWARDED: Duration = Duration::from_millis(700);

fn tini_static() -> PathBuf {
    which("tini-static")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Init {
    Tini,
    Vigil,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// PID 1 of a new PID namespace (`unshare --pid --fork --mount-proc`).
    Pid1,
    /// A plain child process of the test (not PID 1).
    Plain,
}

// ---------------------------------------------------------------------------
// Signals
// ---------------------------------------------------------------------------

/// The names tini's `-p` takes (its `signal_names` table), with numbers.
const TINI_SIGNAL_NAMES: &[(&str, i32)] = &[
    ("SIGHUP", 1),
    ("SIGINT", 2),
    ("SIGQUIT", 3),
    ("SIGILL", 4),
    ("SIGTRAP", 5),
    ("SIGABRT", 6),
    ("SIGBUS", 7),
    ("SIGFPE", 8),
    ("SIGKILL", 9),
    ("SIGUSR1", 10),
    ("SIGSEGV", 11),
    ("SIGUSR2", 12),
    ("SIGPIPE", 13),
    ("SIGALRM", 14),
    ("SIGTERM", 15),
    ("SIGCHLD", 17),
    ("SIGCONT", 18),
    ("SIGSTOP", 19),
    ("SIGTSTP", 20),
    ("SIGTTIN", 21),
    ("SIGTTOU", 22),
    ("SIGURG", 23),
    ("SIGXCPU", 24),
    ("SIGXFSZ", 25),
    ("SIGVTALRM", 26),
    ("SIGPROF", 27),
    ("SIGWINCH", 28),
    ("SIGSYS", 31),
];

/// Fault signals: tini leaves them unblocked (they are for its own faults);
/// sent with kill(2), tini as PID 1 never sees them and tini not PID 1 dies
/// of them. vigil forwards them.
const FAULT_SIGNALS: &[i32] = &[4, 5, 6, 7, 8, 11, 31];
/// The numbers glibc keeps for itself and leaves out of `sigfillset`, so
/// tini-static (static glibc) does not block them.
const GLIBC_RESERVED: &[i32] = &[32, 33];
/// Signals that stop a process by default.
const STOPPING: &[i32] = &[19, 20, 21, 22];
/// Signals a process ignores by default.
const IGNORED_BY_DEFAULT: &[i32] = &[17, 18, 23, 28];

/// Signals both inits forward to the child (or its group): every one but
/// SIGKILL, SIGSTOP, SIGCHLD (kept for reaping), SIGTTIN and SIGTTOU
/// (ignored by both), and those listed above.
fn forwarded_by_both() -> Vec<i32> {
    (1..=64)
        .filter(|s| {
            ![9, 19, 17, 21, 22].contains(s)
                && !FAULT_SIGNALS.contains(s)
                && !GLIBC_RESERVED.contains(s)
        })
        .collect()
}

/// Forwarded by both, and kills a process that keeps the default action.
fn deadly_forwarded() -> Vec<i32> {
    forwarded_by_both()
        .into_iter()
        .filter(|s| !STOPPING.contains(s) && !IGNORED_BY_DEFAULT.contains(s))
        .collect()
}

/// What `sh` does with `kill -N $$` to itself: the status tini reports.
fn self_kill_status(sig: i32) -> i32 {
    if IGNORED_BY_DEFAULT.contains(&sig) {
        0
    } else {
        128 + sig
    }
}

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

/// The deliberate differences from tini. Each is listed, in these words, in
/// the README's "Where vigil differs from tini" section; `check` asserts
/// that the outcome differs in exactly the documented way.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Difference {
    /// No argument permutation: vigil stops at `--` or at the first word
    /// that is not an option, so `vigil OPTS CMD ARGS` is `tini OPTS -- CMD
    /// ARGS` (tini, like GNU getopt, takes option-like words after CMD for
    /// itself).
    NoPermutation,
    /// A command line tini rejects, vigil rejects too, but with the usage
    /// status 2 instead of tini's 1.
    UsageStatus,
    /// Spellings tini rejects (status 1) and vigil takes, meaning the same
    /// as tini's spelling in `canonical` (the whole option list): `-p TERM`,
    /// `-p 15`, `-p sigterm`, `-p` with a signal tini's table lacks, and
    /// `-e=3` / `-p=SIGTERM` (a `=` after a short option).
    MoreSpellings { canonical: Vec<String> },
    /// `-e ''`: tini reads it as 0 (which changes nothing); vigil calls an
    /// empty exit code a usage error.
    EmptyExitCode,
    /// Signals 32 and 33 and the fault signals sent with kill(2): vigil
    /// forwards them; tini-static does not block them, so as PID 1 the
    /// kernel drops them and not as PID 1 tini dies of them.
    UnblockedSignals,
    /// After the child exits, vigil drains: processes left behind get
    /// SIGTERM and SIGCONT (then SIGKILL after `--drain-timeout`), where tini
    /// exits at once (as PID 1 the kernel then SIGKILLs them; not as PID 1
    /// they live on). `--drain-timeout 0` does what tini does.
    Drain,
    /// `-h`, `-l` and `--version` print vigil's own text (status 0 in both).
    OwnText,
    /// `--version` among other arguments prints the version; tini takes it
    /// only as its sole argument (else: unknown option, status 1).
    VersionWithArgs,
    /// exec errors other than ENOENT and EACCES: tini exits 1, vigil 127 for
    /// ENOTDIR (as a shell does) and 126 for the rest.
    RareExecErrors,
}

#[derive(Clone, Debug)]
enum Expect {
    Same,
    Differs(Difference),
}

/// The child is `sigrec`, driven by the test: signals sent to the init one
/// at a time (each waited for), then an ending.
#[derive(Clone, Debug, Default)]
struct Rec {
    /// sigrec forks a grandchild in its process group.
    fork: bool,
    /// Signals reach the whole group (-g or TINI_KILL_PROCESS_GROUP).
    group: bool,
    signals: Vec<i32>,
    /// Sent to the init last; sigrec exits on it (`--exit-on`) or dies of it
    /// (`--skip`), as the command line says.
    end: Option<i32>,
    /// SIGKILL the grandchild before the ending (else it outlives the child).
    kill_grandchild: bool,
    /// Instead of the ending: kill the init's parent (for `-p`).
    kill_parent: bool,
    /// These inits do not forward the signals: wait less for them.
    dropped_by: &'static [Init],
    /// sigrec exits on the ending (`--exit-on`), recording it, rather than
    /// dying of it (`--skip`).
    exits_on_end: bool,
    /// The signal `-p` asks for, with `kill_parent`.
    parent_death: Option<i32>,
}

impl Rec {
    /// What the child must have recorded, when both inits forward alike:
    /// the signals sent, SIGCHLD when its forked child was killed, the
    /// ending it exits on (or the parent-death signal). An oracle of its
    /// own, so that a harness fault cannot pass as "both the same".
    fn child_must_record(&self) -> Vec<i32> {
        if self.kill_parent {
            return self.parent_death.into_iter().collect();
        }
        let mut v = self.forwarded();
        if self.fork && self.kill_grandchild {
            v.push(libc::SIGCHLD);
        }
        if self.exits_on_end {
            v.extend(self.end);
        }
        v
    }
    /// The grandchild gets the signals sent to the group (`-g`).
    fn grandchild_must_record(&self) -> Vec<i32> {
        if self.group {
            self.forwarded()
        } else {
            Vec::new()
        }
    }
    fn forwarded(&self) -> Vec<i32> {
        if self.dropped_by.is_empty() {
            self.signals.clone()
        } else {
            Vec::new()
        }
    }
}

#[derive(Clone, Debug)]
struct Case {
    label: String,
    /// Everything after the init's name (`{RUN}` stands for the run's own
    /// directory, `{FIX}` for the shared fixtures).
    argv: Vec<String>,
    env: Vec<(String, String)>,
    rec: Option<Rec>,
    /// The signal state the init starts with: these ignored, these blocked.
    ignore: Vec<i32>,
    block: Vec<i32>,
    /// The child stops itself: once it is stopped, SIGCONT goes to the init.
    cont_after_stop: bool,
    /// The status vigil must exit with, when the case knows it (an oracle
    /// besides tini).
    status: Option<i32>,
    expect: Expect,
}

impl Case {
    fn new(label: impl Into<String>, argv: &[&str]) -> Case {
        Case {
            label: label.into(),
            argv: argv.iter().map(|s| s.to_string()).collect(),
            env: Vec::new(),
            rec: None,
            ignore: Vec::new(),
            block: Vec::new(),
            cont_after_stop: false,
            status: None,
            expect: Expect::Same,
        }
    }
    /// A case whose child is `sigrec` (its words in `argv`), driven as
    /// `rec` says.
    fn recording(label: impl Into<String>, argv: Vec<String>, rec: Rec) -> Case {
        Case {
            argv,
            rec: Some(rec),
            ..Case::new(label, &[])
        }
    }
    fn ignoring(mut self, sigs: &[i32]) -> Case {
        self.ignore = sigs.to_vec();
        self
    }
    fn blocking(mut self, sigs: &[i32]) -> Case {
        self.block = sigs.to_vec();
        self
    }
    fn env(mut self, k: &str, v: &str) -> Case {
        self.env.push((k.into(), v.into()));
        self
    }
    fn differs(mut self, d: Difference) -> Case {
        self.expect = Expect::Differs(d);
        self
    }
    /// A shell line that replays the case by hand.
    fn shell_line(&self, init: &str) -> String {
        let env: Vec<String> = self
            .env
            .iter()
            .map(|(k, v)| format!("{k}={}", shell_quote(v)))
            .collect();
        let argv: Vec<String> = self.argv.iter().map(|a| shell_quote(a)).collect();
        let mut line = env.join(" ");
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(init);
        for a in argv {
            line.push(' ');
            line.push_str(&a);
        }
        if let Some(rec) = &self.rec {
            line.push_str(&format!("   # then: {rec:?}"));
        }
        if !self.ignore.is_empty() || !self.block.is_empty() {
            line.push_str(&format!(
                "   # started with {:?} ignored, {:?} blocked",
                self.ignore, self.block
            ));
        }
        line
    }
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./{}=+:,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// sigrec's command words, recording into the run's directory.
fn sigrec_words(fork: bool, end: Option<(&str, i32)>) -> Vec<String> {
    let mut w = vec![
        test_program("sigrec").display().to_string(),
        "--out".into(),
        "{RUN}/c".into(),
        "--max-secs".into(),
        "120".into(),
    ];
    if fork {
        w.extend(["--fork".into(), "{RUN}/g".into()]);
    }
    if let Some((how, sig)) = end {
        w.extend([how.to_string(), sig.to_string()]);
    }
    w
}

fn words(parts: &[&[&str]]) -> Vec<String> {
    parts
        .iter()
        .flat_map(|p| p.iter().map(|s| s.to_string()))
        .collect()
}

// ---------------------------------------------------------------------------
// Fixtures: small scripts the cases run
// ---------------------------------------------------------------------------

/// The shared fixture directory (made once per test run):
/// - `exitwith CODE...`: prints its arguments, exits CODE;
/// - `killself SIG`: prints, kills itself with SIG, prints if it survived;
/// - `noshebang ARGS...`: executable, no `#!`: prints `$0` and its
///   arguments, exits 7 (`bin/noshebang` is the same, for PATH searches);
/// - `noperm`: a script without the execute bit;
/// - `adir`: a directory.
fn fixtures() -> &'static Path {
    static DIR: OnceLock<TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = TempDir::new("diff-fixtures");
        let write = |name: &str, text: &str, mode: u32| {
            let p = d.join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        std::fs::create_dir(d.join("bin")).unwrap();
        std::fs::create_dir(d.join("adir")).unwrap();
        write(
            "exitwith",
            "#!/bin/sh\necho \"exitwith $*\"\nexit \"$1\"\n",
            0o755,
        );
        write(
            "killself",
            "#!/bin/sh\necho \"killself $1\"\nkill -$1 $$\necho \"survived $1\"\n",
            0o755,
        );
        let noshebang = "echo \"noshebang $0 $*\"\nexit 7\n";
        write("noshebang", noshebang, 0o755);
        write("bin/noshebang", noshebang, 0o755);
        write("noperm", "#!/bin/sh\nexit 0\n", 0o644);
        d
    })
    .path()
}

// ---------------------------------------------------------------------------
// Running one case under one init
// ---------------------------------------------------------------------------

/// What a user sees of the child.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Observed {
    status: Exit,
    stdout: String,
    /// Signals the child recorded (sigrec children only).
    child: Vec<i32>,
    /// Signals the grandchild recorded.
    grandchild: Vec<i32>,
}

fn observe(init: Init, place: Place, case: &Case, argv: &[String]) -> Observed {
    let dir = TempDir::new("diff");
    let run_dir = dir.path().display().to_string();
    let fix = fixtures().display().to_string();
    let subst = |s: &str| s.replace("{RUN}", &run_dir).replace("{FIX}", &fix);
    let argv: Vec<String> = argv.iter().map(|a| subst(a)).collect();
    let rec = case.rec.clone();
    let kill_parent = rec.as_ref().is_some_and(|r| r.kill_parent);
    let mode = match (place, kill_parent) {
        (Place::Pid1, _) => Mode::Pid1,
        (Place::Plain, false) => Mode::Plain,
        // A parent the test can kill without killing itself.
        (Place::Plain, true) => Mode::Wrapped(
            ["sh", "-c", "\"$@\" & wait", "sh"]
                .iter()
                .map(Into::into)
                .collect(),
        ),
    };
    let program = match init {
        Init::Tini => tini_static(),
        Init::Vigil => vigil_bin(),
    };
    let mut v = Vigil::new(mode)
        .program(program)
        .args(&argv)
        .cwd(dir.path());
    for (k, val) in &case.env {
        v = v.env(k, subst(val));
    }
    let mut run = v
        .ignore_signals(&case.ignore)
        .block_signals(&case.block)
        .spawn();
    let (c, g) = (dir.join("c"), dir.join("g"));
    // What may outlive the init, by pid and start time (a pid reused by
    // then is never hit).
    let leftovers = ProcGuard::new();
    if let Some(rec) = &rec {
        let ready = wait_until(TIMEOUT, || {
            (ready_file(&c).exists() && (!rec.fork || ready_file(&g).exists()))
                || run.try_exit().is_some()
        });
        assert!(ready, "sigrec never got ready\n{}", run.describe());
        if run.try_exit().is_none() {
            let wait = if rec.dropped_by.contains(&init) {
                SIGNAL_WAIT_NOT_FORWARDED
            } else {
                SIGNAL_WAIT
            };
            drive(&run, rec, wait, &c, &g, &leftovers);
        }
    }
    if case.cont_after_stop {
        // The init may be gone already: vigil continues a child that the
        // terminal's signals stopped when nothing above it could (no
        // job-control shell here), so that child has finished by now.
        let mut init = None;
        let stopped = wait_until(TIMEOUT, || {
            init = init.or_else(|| run.vigil_pid_now());
            run.try_exit().is_some()
                || init.is_some_and(|i| children(i).iter().any(|&p| state(p) == Some('T')))
        });
        assert!(stopped, "the child never stopped\n{}", run.describe());
        // As a shell's `fg` would: SIGCONT, and again whenever the init is
        // found stopped (vigil not PID 1 may stop itself when its child
        // stops, and may do so just after a SIGCONT).
        if let Some(init) = init {
            let _ = kill(init, libc::SIGCONT);
            wait_until(TIMEOUT, || {
                if state(init) == Some('T') {
                    let _ = kill(init, libc::SIGCONT);
                }
                run.try_exit().is_some()
            });
        }
    }
    // The init's end first; then what outlived it (tini killed by a
    // signal, tini not PID 1 leaving a grandchild behind, both re-parented
    // away from the test's reach) is ended by pid, so that it does not hold
    // the output pipes open.
    wait_until(TIMEOUT, || run.try_exit().is_some());
    let (child, grandchild) = (read_signals(&c), read_signals(&g));
    leftovers.kill_all();
    let out = run.wait(TIMEOUT);
    Observed {
        status: out.status,
        // The run's directory differs from run to run.
        stdout: match init {
            Init::Tini => without_tini_log(&out.stdout),
            Init::Vigil => out.stdout,
        }
        .replace(&run_dir, "{RUN}"),
        child,
        grandchild,
    }
}

/// tini writes its info, debug and trace lines (`-v`, `TINI_VERBOSITY`) to
/// stdout, vigil all of its own to stderr (a documented difference): what
/// the child printed is tini's stdout without them.
fn without_tini_log(stdout: &str) -> String {
    stdout
        .split_inclusive('\n')
        .filter(|l| {
            !["[INFO  tini (", "[DEBUG tini (", "[TRACE tini ("]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .collect()
}

/// Sends the case's signals to the init, one at a time, each waited for,
/// then ends the run as the case says.
fn drive(run: &Running, rec: &Rec, wait: Duration, c: &Path, g: &Path, leftovers: &ProcGuard) {
    let init = run.vigil_pid();
    let child = run.child_pid();
    let grandchild = if rec.fork {
        let mut found = None;
        wait_until(TIMEOUT, || {
            found = children(child).first().copied();
            found.is_some()
        });
        found
    } else {
        None
    };
    leftovers.track(child);
    if let Some(gc) = grandchild {
        leftovers.track(gc);
    }
    for (i, &sig) in rec.signals.iter().enumerate() {
        let _ = kill(init, sig);
        wait_until(wait, || read_signals(c).len() > i || !alive(init));
        if rec.group {
            wait_until(wait, || read_signals(g).len() > i || !alive(init));
        }
    }
    if rec.kill_parent {
        let _ = kill(run.outer_pid(), libc::SIGKILL);
        wait_until(TIMEOUT, || !alive(init));
        return;
    }
    if let (Some(gc), true) = (grandchild, rec.kill_grandchild) {
        // The child records the SIGCHLD this sends it before the ending
        // comes (a deadly ending arriving first would kill it unrecorded).
        let before = read_signals(c).len();
        let _ = kill(gc, libc::SIGKILL);
        wait_until(wait, || read_signals(c).len() > before || !alive(init));
    }
    if let Some(end) = rec.end
        && (kill(init, end).is_err() || !alive(init))
    {
        // The init is gone (tini killed by an unblocked signal): end
        // the child directly, so that the run ends.
        leftovers.kill_all();
    }
}

// ---------------------------------------------------------------------------
// Comparing
// ---------------------------------------------------------------------------

/// Runs a case under both inits in one place and checks the outcome.
fn check(case: &Case, place: Place) -> Result<(), String> {
    let tini = observe(Init::Tini, place, case, &case.argv);
    let vigil = observe(Init::Vigil, place, case, &case.argv);
    let status_known = case.status.map_or(Ok(()), |want| {
        ensure(
            vigil.status == Exit::Code(want),
            &format!("vigil should exit {want}"),
        )
    });
    let result = status_known.and_then(|()| match &case.expect {
        Expect::Same => case
            .rec
            .as_ref()
            .map_or(Ok(()), |rec| {
                ensure(
                    tini.child == rec.child_must_record()
                        && tini.grandchild == rec.grandchild_must_record(),
                    &format!(
                        "the signals recorded are not those sent: want {:?} and {:?}",
                        rec.child_must_record(),
                        rec.grandchild_must_record()
                    ),
                )
            })
            .and_then(|()| same(&tini, &vigil)),
        Expect::Differs(d) => check_difference(d, case, place, &tini, &vigil),
    });
    result.map_err(|why| {
        format!(
            "[{}] {place:?}: {why}\n  tini:  {tini:?}\n  vigil: {vigil:?}\n  replay: {}",
            case.label,
            case.shell_line("INIT")
        )
    })
}

fn same(tini: &Observed, vigil: &Observed) -> Result<(), String> {
    if tini == vigil {
        Ok(())
    } else {
        Err("vigil's outcome differs from tini's".into())
    }
}

/// `same`, against a tini run of another command line (the documented
/// equivalent), which the message then shows.
fn same_as(equivalent: &Observed, argv: &[String], vigil: &Observed) -> Result<(), String> {
    same(equivalent, vigil).map_err(|why| {
        format!(
            "{why} run as {}\n  that tini run: {equivalent:?}",
            argv.iter()
                .map(|a| shell_quote(a))
                .collect::<Vec<_>>()
                .join(" ")
        )
    })
}

fn ensure(cond: bool, why: &str) -> Result<(), String> {
    if cond { Ok(()) } else { Err(why.to_string()) }
}

/// The child never ran: nothing printed, nothing recorded.
fn not_run(o: &Observed) -> bool {
    o.stdout.is_empty() && o.child.is_empty() && o.grandchild.is_empty()
}

fn check_difference(
    d: &Difference,
    case: &Case,
    place: Place,
    tini: &Observed,
    vigil: &Observed,
) -> Result<(), String> {
    let tini_with = |argv: Vec<String>| observe(Init::Tini, place, case, &argv);
    match d {
        Difference::NoPermutation => {
            // The documented meaning: as if `--` stood before the command.
            let (opts, command) = split_command(&case.argv);
            let with_dashdash = [opts, vec!["--".to_string()], command].concat();
            same_as(&tini_with(with_dashdash.clone()), &with_dashdash, vigil)
        }
        Difference::UsageStatus => {
            ensure(tini.status == Exit::Code(1), "tini should reject this (1)")?;
            ensure(
                vigil.status == Exit::Code(2),
                "vigil should reject this (2)",
            )?;
            ensure(not_run(tini) && not_run(vigil), "the child ran")
        }
        Difference::MoreSpellings { canonical } => {
            ensure(
                tini.status == Exit::Code(1) && not_run(tini),
                "tini should reject this spelling",
            )?;
            let (_, command) = split_command(&case.argv);
            let canonical = [canonical.clone(), vec!["--".to_string()], command].concat();
            same_as(&tini_with(canonical.clone()), &canonical, vigil)
        }
        Difference::EmptyExitCode => {
            let (opts, command) = split_command(&case.argv);
            let without: Vec<String> = strip_empty_e(&opts);
            let without = [without, vec!["--".to_string()], command].concat();
            same_as(&tini_with(without.clone()), &without, tini)?;
            ensure(
                vigil.status == Exit::Code(2) && not_run(vigil),
                "vigil should reject -e ''",
            )
        }
        Difference::UnblockedSignals => {
            let rec = case.rec.as_ref().ok_or("needs a sigrec child")?;
            let sent: Vec<i32> = rec.signals.iter().copied().chain(rec.end).collect();
            ensure(
                vigil.child == sent,
                "vigil should forward every signal sent",
            )?;
            let sig = rec.signals.first().copied().unwrap_or(0);
            match place {
                // The kernel drops them: tini goes on as usual.
                Place::Pid1 => ensure(
                    tini.child == sent[rec.signals.len()..] && tini.status == vigil.status,
                    "tini as PID 1 should forward only the ending",
                ),
                // tini dies of the first one (and the test ends the child).
                Place::Plain => ensure(
                    tini.child.is_empty() && tini.status == Exit::Signal(sig),
                    "tini not PID 1 should die of it",
                ),
            }
        }
        Difference::Drain => {
            // `--drain-timeout 0` gives tini's behaviour exactly.
            let argv = [
                vec!["--drain-timeout".to_string(), "0".into()],
                case.argv.clone(),
            ]
            .concat();
            let undrained = observe(Init::Vigil, place, case, &argv);
            ensure(
                &undrained == tini,
                &format!("vigil --drain-timeout 0 should do what tini does: {undrained:?}"),
            )?;
            ensure(tini.status == vigil.status, "statuses differ")?;
            ensure(tini.stdout == vigil.stdout, "stdout differs")?;
            ensure(tini.child == vigil.child, "the child's signals differ")?;
            ensure(
                tini.grandchild.is_empty(),
                "tini should not signal the leftover",
            )?;
            // SIGCONT comes with the SIGTERM (a stopped leftover could not
            // act on it otherwise), in either order.
            let without_cont: Vec<i32> = vigil
                .grandchild
                .iter()
                .copied()
                .filter(|&s| s != libc::SIGCONT)
                .collect();
            ensure(
                without_cont == [libc::SIGTERM],
                "vigil should SIGTERM (and SIGCONT) the leftover",
            )
        }
        Difference::OwnText => ensure(
            tini.status == Exit::Code(0)
                && vigil.status == Exit::Code(0)
                && !tini.stdout.is_empty()
                && !vigil.stdout.is_empty()
                && tini.child.is_empty()
                && vigil.child.is_empty(),
            "both should print their text on stdout and exit 0",
        ),
        Difference::VersionWithArgs => {
            ensure(
                tini.status == Exit::Code(1) && not_run(tini),
                "tini should reject --version with other arguments",
            )?;
            ensure(
                vigil.status == Exit::Code(0) && vigil.stdout.starts_with("vigil version "),
                "vigil should print its version",
            )
        }
        Difference::RareExecErrors => {
            ensure(tini.status == Exit::Code(1), "tini should exit 1")?;
            ensure(vigil.status == Exit::Code(127), "vigil should exit 127")?;
            ensure(not_run(tini) && not_run(vigil), "nothing should run")
        }
    }
}

/// Splits argv into the init's options and the command, at `--` or at the
/// first word that is not an option (or an option's value).
fn split_command(argv: &[String]) -> (Vec<String>, Vec<String>) {
    let mut i = 0;
    while i < argv.len() {
        let a = &argv[i];
        if a == "--" {
            return (argv[..i].to_vec(), argv[i + 1..].to_vec());
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        // A cluster ending in e or p without an attached value takes the
        // next word.
        let letters = &a[1..];
        let takes_value = letters
            .find(['e', 'p'])
            .is_some_and(|at| at + 1 == letters.len());
        i += if takes_value { 2 } else { 1 };
    }
    let i = i.min(argv.len());
    (argv[..i].to_vec(), argv[i..].to_vec())
}

fn strip_empty_e(opts: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = opts.iter().peekable();
    while let Some(a) = it.next() {
        if a == "-e" && it.peek().is_some_and(|v| v.is_empty()) {
            it.next();
            continue;
        }
        out.push(a.clone());
    }
    out
}

// ---------------------------------------------------------------------------
// The fixed list
// ---------------------------------------------------------------------------

fn fixed_cases() -> Vec<Case> {
    use Difference::*;
    let mut v = vec![
        // `-e` with a signal death's status (128+N), as tini reads it.
        Case::new(
            "-e 143, killed by SIGTERM",
            &["-e", "143", "--", "sh", "-c", "kill -TERM $$"],
        ),
        Case::new("script without #!", &["--", "{FIX}/noshebang", "a", "b c"]),
        Case::new("-s -s", &["-s", "-s", "--", "true"]),
        Case::new("-g -g", &["-g", "-g", "--", "true"]),
        Case::new("-w -w", &["-w", "-w", "--", "true"]),
        // Repeats and clusters of every flag.
        Case::new(
            "-sgw -sgw -vvv",
            &["-sgw", "-sgw", "-vvv", "--", "{FIX}/exitwith", "4"],
        ),
        Case::new("-l -l", &["-l", "-l", "--", "true"]).differs(OwnText),
        Case::new(
            "-e 3 -e 3",
            &["-e", "3", "-e", "3", "--", "{FIX}/exitwith", "3"],
        ),
        Case::new("-sge3", &["-sge3", "--", "{FIX}/exitwith", "3"]),
        Case::new(
            "-p twice",
            &["-p", "SIGHUP", "-p", "SIGUSR1", "--", "{FIX}/exitwith", "5"],
        ),
        // -e with every spelling tini's strtol takes.
        Case::new("-e +3", &["-e", "+3", "--", "{FIX}/exitwith", "3"]),
        Case::new("-e ' 3'", &["-e", " 3", "--", "{FIX}/exitwith", "3"]),
        Case::new("-e 003", &["-e", "003", "--", "{FIX}/exitwith", "3"]),
        Case::new("-e -0", &["-e", "-0", "--", "{FIX}/exitwith", "0"]),
        Case::new("-e 255", &["-e", "255", "--", "{FIX}/exitwith", "255"]),
        Case::new(
            "-e 129 (SIGHUP)",
            &["-e", "129", "--", "{FIX}/killself", "1"],
        ),
        Case::new(
            "-e 192 (signal 64)",
            &["-e", "192", "--", "{FIX}/killself", "64"],
        ),
        Case::new(
            "-e 3 with exit 4",
            &["-e", "3", "--", "{FIX}/exitwith", "4"],
        ),
        // Exec failures.
        Case::new("exec: missing", &["--", "{FIX}/missing"]),
        Case::new(
            "exec: missing in PATH",
            &["--", "vigil-diff-no-such-command"],
        ),
        Case::new("exec: directory", &["--", "{FIX}/adir"]),
        Case::new("exec: no permission", &["--", "{FIX}/noperm"]),
        Case::new("exec: no #! via PATH", &["--", "noshebang", "x"])
            .env("PATH", "/nonexistent:{FIX}/bin:/usr/bin:/bin"),
        Case::new(
            "exec: -e 127, missing",
            &["-e", "127", "--", "{FIX}/missing"],
        ),
        Case::new(
            "exec: -e 126, directory",
            &["-e", "126", "--", "{FIX}/adir"],
        ),
        Case::new("exec: empty name", &["--", ""]),
        Case::new("exec: empty name, no --", &["", "x"]),
        Case::new("exec: named --", &["--", "--", "echo", "hi"]),
        Case::new("exec: named -x", &["--", "-x"]),
        Case::new("exec: named --version", &["-s", "--", "--version"]),
        Case::new("-- inside the command", &["--", "echo", "--", "a"]),
        Case::new("exec: ENOTDIR", &["--", "/etc/passwd/x"]).differs(RareExecErrors),
        // Usage errors.
        Case::new(
            "usage: unknown option",
            &["-x", "--", "{FIX}/exitwith", "0"],
        )
        .differs(UsageStatus),
        Case::new("usage: -e 256", &["-e", "256", "--", "{FIX}/exitwith", "0"])
            .differs(UsageStatus),
        Case::new("usage: -e -1", &["-e", "-1", "--", "{FIX}/exitwith", "0"]).differs(UsageStatus),
        Case::new("usage: -e abc", &["-e", "abc", "--", "{FIX}/exitwith", "0"])
            .differs(UsageStatus),
        Case::new("usage: -e '3 '", &["-e", "3 ", "--", "{FIX}/exitwith", "0"])
            .differs(UsageStatus),
        Case::new("usage: -e 0x3", &["-e", "0x3", "--", "{FIX}/exitwith", "0"])
            .differs(UsageStatus),
        Case::new(
            "usage: -p SIGFOO",
            &["-p", "SIGFOO", "--", "{FIX}/exitwith", "0"],
        )
        .differs(UsageStatus),
        Case::new("usage: -e without value", &["-s", "-e"]).differs(UsageStatus),
        Case::new("usage: no command", &[]).differs(UsageStatus),
        Case::new("usage: only --", &["--"]).differs(UsageStatus),
        Case::new("usage: only options", &["-s", "-v"]).differs(UsageStatus),
        Case::new("-e ''", &["-e", "", "--", "{FIX}/exitwith", "0"]).differs(EmptyExitCode),
        // Spellings only vigil takes.
        Case::new("-p TERM", &["-p", "TERM", "--", "{FIX}/exitwith", "1"]).differs(MoreSpellings {
            canonical: words(&[&["-p", "SIGTERM"]]),
        }),
        Case::new("-p 15", &["-p", "15", "--", "{FIX}/exitwith", "1"]).differs(MoreSpellings {
            canonical: words(&[&["-p", "SIGTERM"]]),
        }),
        Case::new(
            "-p sigterm",
            &["-p", "sigterm", "--", "{FIX}/exitwith", "1"],
        )
        .differs(MoreSpellings {
            canonical: words(&[&["-p", "SIGTERM"]]),
        }),
        Case::new("-p=SIGTERM", &["-p=SIGTERM", "--", "{FIX}/exitwith", "1"]).differs(
            MoreSpellings {
                canonical: words(&[&["-p", "SIGTERM"]]),
            },
        ),
        Case::new("-e=3", &["-e=3", "--", "{FIX}/exitwith", "3"]).differs(MoreSpellings {
            canonical: words(&[&["-e", "3"]]),
        }),
        // Help, license, version.
        Case::new("-h", &["-h"]).differs(OwnText),
        Case::new(
            "-h with a command",
            &["-s", "-h", "--", "{FIX}/exitwith", "1"],
        )
        .differs(OwnText),
        Case::new("-l", &["-l"]).differs(OwnText),
        Case::new("--version", &["--version"]).differs(OwnText),
        Case::new(
            "--version with a command",
            &["--version", "--", "{FIX}/exitwith", "1"],
        )
        .differs(VersionWithArgs),
        // Without `--`.
        Case::new("no --, plain words", &["-s", "{FIX}/exitwith", "3", "a"]),
        Case::new("no --, no options", &["{FIX}/exitwith", "3"]),
        Case::new("no --, sh -c", &["-s", "sh", "-c", "echo hi; exit 3"]).differs(NoPermutation),
        Case::new(
            "no --, -v after the command",
            &["{FIX}/exitwith", "3", "-v"],
        )
        .differs(NoPermutation),
        // tini's environment variables.
        Case::new("TINI_SUBREAPER=", &["--", "{FIX}/exitwith", "6"]).env("TINI_SUBREAPER", ""),
        Case::new("TINI_VERBOSITY=3", &["--", "{FIX}/exitwith", "6"]).env("TINI_VERBOSITY", "3"),
        Case::new("TINI_VERBOSITY=junk", &["--", "{FIX}/exitwith", "6"])
            .env("TINI_VERBOSITY", "junk"),
        // What the child sees: environment, directory, process group,
        // signal mask and ignored signals (as the init got them).
        Case::new("child: environment", &["--", "env"]).env("SOME_VAR", "a b"),
        Case::new("child: directory", &["--", "pwd"]),
        Case::new(
            "child: own process group",
            &[
                "--",
                "sh",
                "-c",
                "set -- $(cat /proc/$$/stat); echo pgrp=$(( $5 == $$ ))",
            ],
        ),
        Case::new(
            "child: signal state",
            &["--", "grep", "^Sig[BI]", "/proc/self/status"],
        ),
        Case::new(
            "child: signal state, nohup",
            &["--", "grep", "^Sig[BI]", "/proc/self/status"],
        )
        .ignoring(&[libc::SIGHUP, libc::SIGPIPE, libc::SIGUSR2]),
        Case::new(
            "child: signal state, blocked",
            &["--", "grep", "^Sig[BI]", "/proc/self/status"],
        )
        .blocking(&[libc::SIGUSR1, libc::SIGTERM, 40]),
        Case::new(
            "child: stdin",
            &["--", "sh", "-c", "read x || echo no input"],
        ),
    ];
    // A child that stops itself, continued by SIGCONT sent to the init.
    for sig in STOPPING {
        let s = sig.to_string();
        let mut c = Case::new(
            format!("stopped by signal {sig}, continued"),
            &["--", "{FIX}/killself", &s],
        );
        c.cont_after_stop = true;
        v.push(c);
    }
    // Exit codes across the range.
    for code in [0, 1, 2, 63, 125, 126, 127, 128, 129, 143, 200, 254, 255] {
        let c = code.to_string();
        v.push(Case::new(
            format!("exit {code}"),
            &["--", "{FIX}/exitwith", &c],
        ));
    }
    // Death by every catchable signal (and the default-ignored ones, which
    // the shell survives). The stopping ones would stop the child for good.
    for sig in (1..=64).filter(|s| !STOPPING.contains(s)) {
        let s = sig.to_string();
        v.push(Case::new(
            format!("killed by signal {sig}"),
            &["--", "{FIX}/killself", &s],
        ));
    }
    // Forwarding, realtime signals included, with and without -g and
    // TINI_KILL_PROCESS_GROUP.
    let rt = vec![34, 35, 40, 50, 63, 64];
    for (label, opts, env, group) in [
        ("forward", vec![], None, false),
        ("forward -g", vec!["-g"], None, true),
        ("forward TINI_KILL_PROCESS_GROUP=", vec![], Some(""), true),
        ("forward TINI_KILL_PROCESS_GROUP=0", vec![], Some("0"), true),
    ] {
        for (what, signals) in [
            (
                "standard",
                vec![1, 2, 3, 10, 12, 13, 14, 15, 18, 20, 23, 28],
            ),
            ("realtime", rt.clone()),
        ] {
            let argv = [
                words(&[&opts, &["--"]]),
                sigrec_words(true, Some(("--exit-on", libc::SIGUSR1))),
            ]
            .concat();
            let mut c = Case::recording(
                format!("{label} {what}"),
                argv,
                Rec {
                    fork: true,
                    group,
                    signals: signals.iter().copied().filter(|&s| s != 10).collect(),
                    end: Some(libc::SIGUSR1),
                    exits_on_end: true,
                    kill_grandchild: true,
                    ..Rec::default()
                },
            );
            if let Some(val) = env {
                c = c.env("TINI_KILL_PROCESS_GROUP", val);
            }
            v.push(c);
        }
    }
    // Signals neither init forwards: SIGCHLD, SIGTTIN, SIGTTOU.
    for sig in [libc::SIGCHLD, libc::SIGTTIN, libc::SIGTTOU] {
        let argv = [
            words(&[&["--"]]),
            sigrec_words(false, Some(("--exit-on", libc::SIGUSR1))),
        ]
        .concat();
        v.push(Case::recording(
            format!("not forwarded: signal {sig}"),
            argv,
            Rec {
                signals: vec![sig],
                end: Some(libc::SIGUSR1),
                exits_on_end: true,
                dropped_by: &[Init::Tini, Init::Vigil],
                ..Rec::default()
            },
        ));
    }
    // Signals tini does not block.
    for &sig in GLIBC_RESERVED.iter().chain(FAULT_SIGNALS) {
        let argv = [
            words(&[&["--"]]),
            sigrec_words(false, Some(("--exit-on", libc::SIGUSR1))),
        ]
        .concat();
        v.push(
            Case::recording(
                format!("unblocked signal {sig}"),
                argv,
                Rec {
                    signals: vec![sig],
                    end: Some(libc::SIGUSR1),
                    exits_on_end: true,
                    dropped_by: &[Init::Tini],
                    ..Rec::default()
                },
            )
            .differs(UnblockedSignals),
        );
    }
    // -p: the kernel signals the init when its parent dies.
    // The last -p counts: `-p SIGHUP -p SIGTERM` is SIGTERM.
    for (opts, sig) in [
        (vec!["-p", "SIGTERM"], libc::SIGTERM),
        (vec!["-pSIGUSR2"], libc::SIGUSR2),
        (vec!["-p", "SIGHUP", "-p", "SIGTERM"], libc::SIGTERM),
    ] {
        let argv = [
            words(&[&opts, &["--"]]),
            sigrec_words(false, Some(("--exit-on", sig))),
        ]
        .concat();
        v.push(Case::recording(
            format!("{}, parent dies", opts.join(" ")),
            argv,
            Rec {
                kill_parent: true,
                parent_death: Some(sig),
                ..Rec::default()
            },
        ));
    }
    // A grandchild left behind when the child exits (both exit on
    // SIGUSR1 and SIGTERM; only the child gets the SIGUSR1).
    v.push(
        Case::recording(
            "leftover grandchild",
            [
                words(&[&["--"]]),
                sigrec_words(true, Some(("--exit-on", libc::SIGUSR1))),
                words(&[&["--exit-on", "15"]]),
            ]
            .concat(),
            Rec {
                fork: true,
                end: Some(libc::SIGUSR1),
                ..Rec::default()
            },
        )
        .differs(Drain),
    );
    v
}

// ---------------------------------------------------------------------------
// The random grammar
// ---------------------------------------------------------------------------

/// The child of a random case, with the status it ends with and, when it
/// kills itself, the signal it uses (which it survives when the init
/// started with that signal ignored or blocked).
fn random_child(rng: &mut SplitMix64) -> (Vec<String>, Option<Rec>, i32, Option<i32>) {
    let fix = |name: &str| format!("{{FIX}}/{name}");
    match rng.below(100) {
        0..=24 => {
            let code = if rng.chance(50) {
                rng.below(256) as i32
            } else {
                rng.pick(&[0, 1, 2, 126, 127, 128, 130, 137, 143, 255])
            };
            let mut w = vec![fix("exitwith"), code.to_string()];
            for _ in 0..rng.below(3) {
                w.push(rng.pick(&["a", "b c", "", "x=y"]).to_string());
            }
            (w, None, code, None)
        }
        25..=44 => {
            let sig = rng.pick(
                &(1..=64)
                    .filter(|s| !STOPPING.contains(s))
                    .collect::<Vec<_>>(),
            );
            (
                vec![fix("killself"), sig.to_string()],
                None,
                self_kill_status(sig),
                Some(sig),
            )
        }
        45..=54 => {
            let code = rng.below(256) as i32;
            let (script, status, sig) = match rng.below(3) {
                0 => (format!("echo out; exit {code}"), code, None),
                1 => (
                    format!("printf '%s\\n' \"$0\" \"$@\"; exit {code}"),
                    code,
                    None,
                ),
                _ => {
                    let sig = rng.pick(&deadly_forwarded());
                    (format!("echo before; kill -{sig} $$"), 128 + sig, Some(sig))
                }
            };
            (
                words(&[&["sh", "-c", &script, "arg0", "arg 1"]]),
                None,
                status,
                sig,
            )
        }
        55..=61 => {
            let (w, status) = match rng.below(5) {
                0 => (vec![fix("missing")], 127),
                1 => (vec!["vigil-diff-no-such-command".into()], 127),
                2 => (vec![fix("adir")], 126),
                3 => (vec![fix("noperm")], 126),
                _ => (vec![fix("noshebang"), "q".into()], 7),
            };
            (w, None, status, None)
        }
        _ => {
            let fork = rng.chance(50);
            let dies = rng.chance(50);
            let end = if dies {
                rng.pick(&deadly_forwarded())
            } else {
                rng.pick(&forwarded_by_both())
            };
            let choices: Vec<i32> = forwarded_by_both()
                .into_iter()
                .filter(|&s| s != end)
                .collect();
            let signals: Vec<i32> = (0..rng.below(5)).map(|_| rng.pick(&choices)).collect();
            let how = if dies { "--skip" } else { "--exit-on" };
            let rec = Rec {
                fork,
                signals,
                end: Some(end),
                exits_on_end: !dies,
                kill_grandchild: true,
                ..Rec::default()
            };
            let status = if dies { 128 + end } else { 0 };
            (
                sigrec_words(fork, Some((how, end))),
                Some(rec),
                status,
                None,
            )
        }
    }
}

fn random_case(rng: &mut SplitMix64, n: usize) -> Case {
    let (command, mut rec, status, self_kill) = random_child(rng);
    let mut group = false;
    // Option groups, shuffled, then some single-letter flags clustered.
    let mut groups: Vec<Vec<String>> = Vec::new();
    for flag in ["-s", "-g", "-w"] {
        for _ in 0..rng.pick(&[0, 0, 0, 1, 1, 2]) {
            groups.push(vec![flag.to_string()]);
            group |= flag == "-g";
        }
    }
    match rng.pick(&[0, 0, 1, 2, 3]) {
        0 => {}
        1 => groups.push(vec!["-v".into()]),
        2 => groups.push(vec!["-vv".into()]),
        _ => groups.extend([vec!["-v".into()], vec!["-vv".into()]]),
    }
    for _ in 0..rng.pick(&[0, 0, 0, 1, 2]) {
        let (name, _) = rng.pick(TINI_SIGNAL_NAMES);
        groups.push(if rng.chance(30) {
            vec![format!("-p{name}")]
        } else {
            vec!["-p".into(), name.into()]
        });
    }
    let mut expected = Vec::new();
    for _ in 0..rng.pick(&[0, 0, 1, 1, 2, 3]) {
        let code = match rng.below(4) {
            0 => status,
            1 => rng.below(256) as i32,
            2 => 128 + rng.below(65) as i32,
            _ => status.saturating_add(1).min(255),
        };
        expected.push(code);
        let text = match rng.below(6) {
            0 => format!("+{code}"),
            1 => format!("00{code}"),
            _ => code.to_string(),
        };
        groups.push(if rng.chance(30) {
            vec![format!("-e{text}")]
        } else {
            vec!["-e".into(), text]
        });
    }
    for i in (1..groups.len()).rev() {
        let j = rng.below(i + 1);
        groups.swap(i, j);
    }
    let mut opts: Vec<String> = Vec::new();
    for g in groups {
        // Cluster a lone flag into the previous lone-flag word: `-s -g` ->
        // `-sg` (also in front of an attached -e/-p value: `-s -e3` -> `-se3`).
        let last_is_lone = opts
            .last()
            .is_some_and(|l| l.len() >= 2 && l[1..].chars().all(|c| "sgwv".contains(c)));
        if g.len() == 1 && last_is_lone && rng.chance(30) {
            let prev = opts.pop().unwrap_or_default();
            opts.push(format!("{prev}{}", &g[0][1..]));
        } else {
            opts.extend(g);
        }
    }
    let mut env = Vec::new();
    if rng.chance(20) {
        env.push((
            "TINI_SUBREAPER".to_string(),
            rng.pick(&["", "1"]).to_string(),
        ));
    }
    if rng.chance(20) {
        env.push((
            "TINI_KILL_PROCESS_GROUP".to_string(),
            rng.pick(&["", "1", "0"]).to_string(),
        ));
        group = true;
    }
    if rng.chance(20) {
        env.push(("TINI_VERBOSITY".to_string(), rng.below(4).to_string()));
    }
    if let Some(r) = &mut rec {
        r.group = group && r.fork;
    }
    // Now and then the init starts with signals ignored (nohup) or, for a
    // child that does not record signals, blocked: the child must inherit
    // them the same way.
    let signal_state = |rng: &mut SplitMix64| -> Vec<i32> {
        (0..1 + rng.below(3))
            .map(|_| rng.pick(&forwarded_by_both()))
            .collect()
    };
    // Not the signal a recording child is to die of: it keeps the
    // disposition it inherited, and would ignore its ending.
    let end = rec.as_ref().and_then(|r| r.end);
    let ignore: Vec<i32> = if rng.chance(10) {
        signal_state(rng)
            .into_iter()
            .filter(|&s| Some(s) != end)
            .collect()
    } else {
        Vec::new()
    };
    let block = if rec.is_none() && rng.chance(10) {
        signal_state(rng)
    } else {
        Vec::new()
    };
    let status = match self_kill {
        Some(sig) if ignore.contains(&sig) || block.contains(&sig) => 0,
        _ => status,
    };
    let dashy = command.iter().skip(1).any(|w| w.starts_with('-'));
    let dashdash = if dashy {
        rng.chance(85)
    } else {
        rng.chance(50)
    };
    let argv = if dashdash {
        [opts, vec!["--".into()], command].concat()
    } else {
        [opts, command].concat()
    };
    Case {
        label: format!("random #{n}"),
        argv,
        env,
        rec,
        ignore,
        block,
        cont_after_stop: false,
        status: Some(if expected.contains(&status) {
            0
        } else {
            status
        }),
        expect: if dashy && !dashdash {
            Expect::Differs(Difference::NoPermutation)
        } else {
            Expect::Same
        },
    }
}

// ---------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------

fn env_number(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

#[test]
fn same_command_line_same_result_as_tini() {
    let _cpu = heavy();
    if need_program(
        "same_command_line_same_result_as_tini",
        "tini-static",
        "tini",
    )
    .is_none()
    {
        return;
    }
    let seed = seed_from_env("VIGIL_DIFF_SEED");
    let random = env_number("VIGIL_DIFF_CASES", 400);
    let threads = env_number("VIGIL_DIFF_THREADS", 4).max(1);
    let mut cases = fixed_cases();
    let fixed = cases.len();
    let mut rng = SplitMix64::new(seed);
    cases.extend((0..random).map(|n| random_case(&mut rng, n)));
    if let Ok(only) = std::env::var("VIGIL_DIFF_ONLY") {
        cases.retain(|c| c.label == only);
    }
    // Build the helpers and the fixtures before the threads start.
    test_program("sigrec");
    fixtures();

    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let differences = Mutex::new(std::collections::BTreeMap::<String, usize>::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { break };
                    for place in [Place::Pid1, Place::Plain] {
                        if let Err(e) = check(case, place) {
                            failures.lock().unwrap().push(e);
                        }
                    }
                    if let Expect::Differs(d) = &case.expect {
                        let name = format!("{d:?}");
                        let name = name.split([' ', '{']).next().unwrap_or("").to_string();
                        *differences.lock().unwrap().entry(name).or_default() += 1;
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    say_uncaptured(&format!(
        "differential test against tini-static: {} cases ({fixed} fixed, {random} random from seed {seed}), each as PID 1 and not, in {:.1}s; allowed differences exercised: {:?}",
        cases.len(),
        started.elapsed().as_secs_f64(),
        differences.into_inner().unwrap()
    ));
    assert!(
        failures.is_empty(),
        "{} of {} case runs differ from tini (VIGIL_DIFF_SEED={seed} replays):\n\n{}",
        failures.len(),
        cases.len() * 2,
        failures.join("\n\n")
    );
}
