//! vigil's own fork + exec, with a pipe on which the forked process says
//! why it could not exec.
//!
//! std's `Command::spawn` reads its own such pipe and panics when that read
//! fails with anything but EINTR ("the CLOEXEC pipe failed"): an I/O error
//! or a shortage of memory at the wrong moment would end PID 1, and with
//! it the container. Here every failure has an answer: a call vigil makes
//! before the fork fails the spawn as vigil's own failure; a step of the
//! forked process fails it with the step's error; a read of the pipe that
//! fails is tried again, and if it keeps failing the process is taken as
//! started, since it exits with the status vigil would have given for it if
//! it did not (see [`Outcome::Unknown`]).
//!
//! Between fork and exec the forked process is a copy of vigil with one
//! thread: it may only make system calls (async-signal-safe), never
//! allocate or take a lock. Everything it needs is made before the fork
//! ([`Plan`]), and it only reads that.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::wait::waitpid;
use nix::unistd::{ForkResult, Pid};

use crate::signals::Inherited;
use crate::sys::exec::{self as sys, CStrings, Environment};
use crate::user::Switch;

/// What the forked process does, fixed before the fork.
pub struct Plan<'a> {
    /// The program, as execvp takes it: a path if it holds a slash, else a
    /// name to look for in `path`.
    pub program: &'a CStr,
    pub argv: &'a CStrings<'a>,
    /// vigil's own environment, or a copy with additions.
    pub env: Environment<'a>,
    /// The directories to search for a program named without a slash, as
    /// PATH gives them (the child's PATH).
    pub path: &'a [u8],
    /// Made the process's stdin (hooks: /dev/null).
    pub stdin: Option<BorrowedFd<'a>>,
    /// `setsid()` instead of a process group of its own.
    pub new_session: bool,
    /// Make the new group the terminal's foreground group.
    pub take_terminal: bool,
    pub inherited: Inherited,
    pub user: Option<&'a Switch>,
}

/// A step of the forked process, in the order they are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// dup2 of the new stdin.
    Stdin = 1,
    /// setpgid(0, 0), a process group of its own.
    Group = 2,
    /// setsid(), a session of its own (`--user`'s terminal rule).
    Session = 3,
    /// The signal mask and dispositions vigil was started with.
    Signals = 4,
    /// `--user`: setgroups, setgid, setuid (the error is `Switch`'s own
    /// tagged code).
    User = 5,
    /// execve, for every file the search tried.
    Exec = 6,
}

impl Step {
    fn from_code(code: u32) -> Option<Step> {
        Some(match code {
            1 => Step::Stdin,
            2 => Step::Group,
            3 => Step::Session,
            4 => Step::Signals,
            5 => Step::User,
            6 => Step::Exec,
            _ => return None,
        })
    }

    /// The call that failed, for messages.
    pub fn call(self) -> &'static str {
        match self {
            Step::Stdin => "dup2",
            Step::Group => "setpgid",
            Step::Session => "setsid",
            Step::Signals => "rt_sigaction/rt_sigprocmask",
            Step::User => "set*id",
            Step::Exec => "execve",
        }
    }
}

/// Why a process could not be started.
#[derive(Debug)]
pub enum Failure {
    /// vigil's own call before or at the fork: no process ran anything.
    Parent { call: &'static str, error: Errno },
    /// A step of the forked process failed; it has exited and been reaped.
    Child { step: Step, code: i32 },
}

/// How a spawn went, as far as vigil could learn.
#[derive(Debug)]
pub enum Outcome {
    /// The program runs (the pipe closed with exec, and nothing came).
    Started(i32),
    /// The process was made, but whether its exec succeeded could not be
    /// read (the pipe's read kept failing, or the process died in the
    /// middle of its message).
    /// It is left to run: if the exec failed, it exits with the status
    /// vigil gives for that failure (127 not found, 126 not executable, 1
    /// for a step before exec), and that is what vigil reports.
    Unknown { pid: i32, error: io::Error },
}

/// How often a read of the pipe is tried before the outcome is given up as
/// unknown. A blocking pipe's read fails only for a moment (an interrupted
/// or injected call): a read that fails this often will not succeed.
const READ_ATTEMPTS: u32 = 8;

/// Forks and execs as `plan` says.
pub fn spawn(plan: &Plan<'_>) -> Result<Outcome, Failure> {
    let (report_read, report_write) =
        nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|error| Failure::Parent {
            call: "pipe2",
            error,
        })?;
    // What the forked process runs until exec or _exit (`in_child`) only
    // makes system calls on data prepared before the fork.
    match sys::fork() {
        Err(error) => Err(Failure::Parent {
            call: "fork",
            error,
        }),
        Ok(ForkResult::Child) => in_child(plan, report_write.as_fd()),
        Ok(ForkResult::Parent { child }) => {
            // The write end must be closed here, or the read below would
            // never see the end of the pipe that exec brings.
            drop(report_write);
            outcome(report_read, child)
        }
    }
}

/// Reads what the forked process said: nothing (it exec'd) or why it
/// could not.
fn outcome(report: OwnedFd, child: Pid) -> Result<Outcome, Failure> {
    let mut message = [0u8; MESSAGE];
    let mut got = 0;
    let mut failures = 0;
    let error = loop {
        let Some(free) = message.get_mut(got..) else {
            break io::Error::from(io::ErrorKind::InvalidData);
        };
        match nix::unistd::read(report.as_fd(), free) {
            Ok(0) if got == 0 => return Ok(Outcome::Started(child.as_raw())),
            // A message cut short: the process died while writing it.
            Ok(0) => break io::Error::from(io::ErrorKind::UnexpectedEof),
            Ok(n) => {
                got += n;
                if got == MESSAGE {
                    reap(child);
                    return Err(decode(&message));
                }
            }
            Err(Errno::EINTR) => {}
            Err(e) => {
                failures += 1;
                if failures >= READ_ATTEMPTS {
                    break io::Error::from(e);
                }
            }
        }
    };
    Ok(Outcome::Unknown {
        pid: child.as_raw(),
        error,
    })
}

/// Reaps a process that failed before exec, so that vigil's reaping loop
/// does not count it as an orphan. It has written its message and is about
/// to exit. If waiting keeps failing, the loop reaps it later.
fn reap(child: Pid) {
    for _ in 0..READ_ATTEMPTS {
        match waitpid(child, None) {
            Err(Errno::ECHILD) | Ok(_) => return,
            Err(_) => {}
        }
    }
}

/// The message's size: the step, then the error code, each 4 bytes in the
/// machine's order (both ends are the same program).
const MESSAGE: usize = 8;

/// The forked process's message. Both ends are the same program, so the
/// step is always one of `Step`'s; any other would be read as exec's.
fn decode(message: &[u8; MESSAGE]) -> Failure {
    let [s0, s1, s2, s3, c0, c1, c2, c3] = *message;
    let step = Step::from_code(u32::from_ne_bytes([s0, s1, s2, s3])).unwrap_or(Step::Exec);
    let code = i32::from_ne_bytes([c0, c1, c2, c3]);
    Failure::Child { step, code }
}

/// The forked process: each step, then exec; on a failure, the message to
/// the parent and `_exit` with the status vigil gives for that failure.
fn in_child(plan: &Plan<'_>, report: BorrowedFd<'_>) -> ! {
    let (step, code) = run_steps(plan);
    let mut message = [0u8; MESSAGE];
    let (step_bytes, code_bytes) = message.split_at_mut(4);
    step_bytes.copy_from_slice(&(step as u32).to_ne_bytes());
    code_bytes.copy_from_slice(&code.to_ne_bytes());
    let status = match (step, code) {
        (Step::Exec, libc::ENOENT | libc::ENOTDIR) => 127,
        (Step::Exec, _) => 126,
        _ => 1,
    };
    // A pipe takes the message in one piece (it is shorter than PIPE_BUF).
    // If it cannot be written, the exit status still says what happened.
    while let Err(Errno::EINTR) = nix::unistd::write(report, &message) {}
    sys::exit_now(status)
}

/// The steps between fork and exec, in order; returns the one that failed
/// and its error (exec returns only when it failed).
fn run_steps(plan: &Plan<'_>) -> (Step, i32) {
    if let Some(stdin) = plan.stdin
        && let Err(e) = make_stdin(stdin)
    {
        return (Step::Stdin, e as i32);
    }
    if plan.new_session {
        if let Err(e) = nix::unistd::setsid() {
            return (Step::Session, e as i32);
        }
    } else if let Err(e) = nix::unistd::setpgid(Pid::from_raw(0), Pid::from_raw(0)) {
        return (Step::Group, e as i32);
    }
    if plan.take_terminal {
        // ENOTTY and ENXIO are fine: there often is no terminal. SIGTTOU,
        // which a background group's tcsetpgrp raises, is still blocked
        // and ignored here (vigil's own state, until `restore_in_child`).
        let _ = nix::unistd::tcsetpgrp(crate::sys::fd::stdin(), nix::unistd::getpid());
    }
    if let Err(e) = plan.inherited.restore_in_child() {
        return (Step::Signals, e.raw_os_error().unwrap_or(libc::EINVAL));
    }
    if let Some(user) = plan.user
        && let Err(e) = user.apply_in_child()
    {
        return (Step::User, e.raw_os_error().unwrap_or(libc::EINVAL));
    }
    (Step::Exec, exec(plan) as i32)
}

/// Makes `fd` the process's stdin. `fd` is close-on-exec; its copy on
/// descriptor 0 is not. When `fd` is 0 already (vigil's stdin was closed
/// and the open took the lowest free number), dup2 would do nothing and
/// leave it close-on-exec: the flag is cleared instead.
fn make_stdin(fd: BorrowedFd<'_>) -> nix::Result<()> {
    if fd.as_raw_fd() == libc::STDIN_FILENO {
        nix::fcntl::fcntl(
            fd,
            nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
        )?;
        return Ok(());
    }
    loop {
        match nix::unistd::dup2_stdin(fd) {
            Err(Errno::EINTR) => {}
            done => return done,
        }
    }
}

/// musl's `execvp`, on memory prepared before the fork: a program named
/// with a slash is executed as it is; any other is looked for in each
/// directory of PATH in turn (an empty entry is the working directory).
/// The search goes on past a file that is not there (ENOENT, ENOTDIR) or
/// may not be executed (EACCES, reported if nothing else is found), and
/// stops at any other error, which is the answer. glibc's `execvp` runs a
/// file without `#!` with `/bin/sh` itself; this does not, on any build:
/// the caller does it (`spawn::spawn`), so both C libraries' builds behave
/// the same. Returns only on failure, with the error.
fn exec(plan: &Plan<'_>) -> Errno {
    let file = plan.program.to_bytes();
    if file.is_empty() {
        return Errno::ENOENT;
    }
    if file.contains(&b'/') {
        return sys::execve(plan.program, plan.argv, plan.env);
    }
    if file.len() > NAME_MAX {
        return Errno::ENAMETOOLONG;
    }
    let mut candidate = [0u8; CANDIDATE_MAX];
    let mut seen_eacces = false;
    for dir in plan.path.split(|&b| b == b':') {
        let slash = usize::from(!dir.is_empty());
        let len = dir.len() + slash + file.len();
        let Some(place) = candidate.get_mut(..=len) else {
            // Longer than any path the kernel takes: musl skips it too.
            continue;
        };
        let (dir_part, rest) = place.split_at_mut(dir.len());
        dir_part.copy_from_slice(dir);
        let (slash_part, rest) = rest.split_at_mut(slash);
        slash_part.fill(b'/');
        let (file_part, nul) = rest.split_at_mut(file.len());
        file_part.copy_from_slice(file);
        nul.fill(0);
        // Up to the first NUL, as the kernel reads it: the only one is the
        // last byte (PATH and the name hold none, as C strings checked
        // before the fork).
        let Ok(path) = CStr::from_bytes_until_nul(place) else {
            continue;
        };
        match sys::execve(path, plan.argv, plan.env) {
            Errno::EACCES => seen_eacces = true,
            Errno::ENOENT | Errno::ENOTDIR => {}
            other => return other,
        }
    }
    if seen_eacces {
        Errno::EACCES
    } else {
        Errno::ENOENT
    }
}

/// The longest file name execvp takes (NAME_MAX).
const NAME_MAX: usize = 255;

/// Room for a directory of PATH, a slash, the name and its NUL: what the
/// kernel takes as a path (PATH_MAX, NUL included) plus the name.
const CANDIDATE_MAX: usize = 4096 + NAME_MAX + 2;
