//! Starting a process (the child, or a hook) so that it sees what it would
//! have seen without vigil.
//!
//! std's `Command` hands the parent's *current* signal mask to the child, and
//! vigil blocks everything: a child started naively would ignore SIGTERM
//! forever. The `pre_exec` closure, which std runs last before exec, puts
//! back the mask and dispositions vigil was started with.

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use crate::signals::Inherited;

/// How to start one process.
pub struct Spawn<'a> {
    pub argv: &'a [OsString],
    /// Extra environment on top of vigil's own.
    pub env: Vec<(&'static str, String)>,
    /// Make the new process group the terminal's foreground group.
    pub take_terminal: bool,
    /// Give the process /dev/null as stdin (hooks: they must not read the
    /// terminal the child owns).
    pub null_stdin: bool,
}

/// A process that could not be started.
#[derive(Debug)]
pub struct SpawnError {
    pub command: String,
    pub error: io::Error,
}

impl SpawnError {
    /// The shell's statuses: 127 when the command was not found, 126 when it
    /// was found but could not be executed.
    pub fn status(&self) -> i32 {
        match self.error.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::ENOTDIR) => 127,
            _ => 126,
        }
    }
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot run '{}': {}", self.command, self.error)
    }
}

/// Joins argv for messages, quoted as a shell would need it, on one line
/// (the exit report and the termination log hold it too).
pub fn display_command(argv: &[OsString]) -> String {
    let words: Vec<String> = argv
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    crate::logging::one_line(&shell_words::join(words))
}

/// Starts the process in a process group of its own and returns its pid.
/// The `Child` handle is dropped without waiting: vigil's own `waitpid(-1)`
/// loop reaps it.
pub fn spawn(spec: Spawn<'_>, inherited: Inherited) -> Result<i32, SpawnError> {
    let fail = |error| SpawnError {
        command: display_command(spec.argv),
        error,
    };
    let (program, args) = spec
        .argv
        .split_first()
        .ok_or_else(|| fail(io::Error::from_raw_os_error(libc::ENOENT)))?;
    let mut command = Command::new(program);
    command
        .args(args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)));
    command.process_group(0);
    if spec.null_stdin {
        command.stdin(Stdio::null());
    }
    let take_terminal = spec.take_terminal;
    // SAFETY: the closure runs in the forked child before exec, so it must be
    // async-signal-safe: it only makes raw syscalls (tcsetpgrp is an ioctl,
    // the others are rt_sigaction and rt_sigprocmask) and does not allocate.
    // While it runs every signal is still blocked, so SIGTTOU from tcsetpgrp
    // cannot stop the child.
    unsafe {
        command.pre_exec(move || {
            if take_terminal {
                // ENOTTY and ENXIO are fine: there often is no terminal.
                libc::tcsetpgrp(libc::STDIN_FILENO, libc::getpid());
            }
            inherited.restore_in_child()
        });
    }
    let child = command.spawn().map_err(fail)?;
    Ok(child.id() as i32)
}

/// Whether vigil's stdin is a terminal whose foreground group is vigil's:
/// only then does the child get the terminal (Ctrl-C and Ctrl-Z reach it).
pub fn owns_terminal() -> bool {
    // SAFETY: isatty, tcgetpgrp and getpgrp take no memory arguments.
    unsafe {
        libc::isatty(libc::STDIN_FILENO) == 1
            && libc::tcgetpgrp(libc::STDIN_FILENO) == libc::getpgrp()
    }
}

/// Hands the terminal to a process group, if vigil holds it right now.
pub fn give_terminal(pgid: i32) {
    if owns_terminal() {
        // SAFETY: tcsetpgrp takes no memory arguments. SIGTTOU is ignored
        // and blocked in vigil, so this cannot stop vigil.
        unsafe { libc::tcsetpgrp(libc::STDIN_FILENO, pgid) };
    }
}

/// Takes the terminal's foreground back for vigil's own process group, if
/// it still names the group vigil gave it to: otherwise the shell or
/// script that ran vigil would be left in the background of its own
/// terminal, unable to read from it.
pub fn reclaim_terminal(given_to: i32) {
    // SAFETY: tcgetpgrp, tcsetpgrp and getpgrp take no memory arguments.
    // SIGTTOU is blocked and ignored in vigil, so setting the foreground
    // from the background cannot stop vigil.
    unsafe {
        if libc::tcgetpgrp(libc::STDIN_FILENO) == given_to {
            libc::tcsetpgrp(libc::STDIN_FILENO, libc::getpgrp());
        }
    }
}
