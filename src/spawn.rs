//! Starting a process (the child, or a hook) so that it sees what it would
//! have seen without vigil, as the `--user` identity if one is given.
//!
//! std's `Command` hands the parent's *current* signal mask to the child, and
//! vigil blocks everything: a child started naively would ignore SIGTERM
//! forever. The `pre_exec` closure, which std runs last before exec, puts
//! back the mask and dispositions vigil was started with, and the scheduler
//! slice (`sched`), then switches user (groups, gid, uid: last, since the
//! steps before may need root).

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use nix::unistd::AccessFlags;

use crate::record::Record;
use crate::sched::Slice;
use crate::signals::Inherited;
use crate::text::os_error;
use crate::user::{Switch, SwitchFailure};

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
    /// The program, as given (argv[0]).
    pub program: String,
    pub error: io::Error,
    /// Why the `/bin/sh` fallback for a file without `#!` failed too.
    pub shell_error: Option<io::Error>,
    /// The `--user` switch failed in the forked child: nothing was
    /// executed (`error` is then the switch's OS error).
    pub switch_failed: Option<SwitchFailure>,
}

impl SpawnError {
    /// Whether the process could not even be made: `fork` (or the exec
    /// after it) ran out of processes or memory. At a container's process
    /// limit (the pids cgroup, `docker run --pids-limit`) this is EAGAIN.
    /// Nothing is wrong with the program then, and 126 would say there is.
    pub fn is_fork_failure(&self) -> bool {
        self.switch_failed.is_none()
            && matches!(self.error.raw_os_error(), Some(libc::EAGAIN | libc::ENOMEM))
    }

    /// vigil's status when the child could not be started: 1 when vigil
    /// itself failed before the child ran (no process could be made, as
    /// tini, dumb-init and catatonit say; or the user switch failed), else
    /// the shell's statuses: 127 when the command was not found, 126 when
    /// it was found but could not be executed.
    pub fn status(&self) -> i32 {
        if self.is_fork_failure() || self.switch_failed.is_some() {
            return 1;
        }
        match self.error.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::ENOTDIR) => 127,
            _ => 126,
        }
    }
}

impl SpawnError {
    /// The record's event: the exec failed (`exec_failed`), no process
    /// could be made (`fork_failed`), or the `--user` switch failed in the
    /// forked child (`user_switch_failed`).
    pub fn event(&self) -> &'static str {
        if self.switch_failed.is_some() {
            "user_switch_failed"
        } else if self.is_fork_failure() {
            "fork_failed"
        } else {
            "exec_failed"
        }
    }

    /// The facts for the record of `event` (the status is the caller's).
    pub fn fields<'a>(&'a self, r: Record<'a>) -> Record<'a> {
        let r = r.field("program", self.program.as_str());
        if let Some(failure) = &self.switch_failed {
            return failure.fields(r);
        }
        r.field("error", os_error(&self.error))
            .opt("shell_error", self.shell_error.as_ref().map(os_error))
    }
}

impl fmt::Display for SpawnError {
    /// `cannot run "PROG": No such file or directory`: the program once, in
    /// double quotes (escaped as Rust escapes a string, so a quote or a
    /// newline in it cannot blur where it ends), then the C library's text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(failure) = &self.switch_failed {
            return write!(f, "cannot run {:?} {failure}", self.program);
        }
        if self.is_fork_failure() {
            return write!(
                f,
                "could not start {:?}: {} (no new process could be made: the container's process limit, or its memory, may be used up)",
                self.program,
                os_error(&self.error)
            );
        }
        write!(
            f,
            "cannot run {:?}: {}",
            self.program,
            os_error(&self.error)
        )?;
        if let Some(e) = &self.shell_error {
            write!(
                f,
                " (a file without #! runs with {SHELL}, which failed: {})",
                os_error(e)
            )?;
        }
        Ok(())
    }
}

/// The shell glibc's `execvp` runs a file without `#!` with.
const SHELL: &str = "/bin/sh";

/// The PATH musl's `execvp` searches when PATH is unset.
const DEFAULT_PATH: &str = "/usr/local/bin:/bin:/usr/bin";

/// Joins argv for messages, quoted only where a shell would need it, on
/// one line (the exit report and the termination log hold it too), and
/// whether it is exactly the words' bytes as a shell reads them (nothing
/// replaced or escaped).
pub fn display_command_exact(argv: &[OsString]) -> (String, bool) {
    let mut joined = Vec::new();
    crate::text::shell_join(argv, &mut joined);
    match String::from_utf8(joined) {
        Ok(text) => {
            let shown = crate::text::one_line(&text);
            let exact = shown.len() == text.len();
            (shown, exact)
        }
        Err(e) => (
            crate::text::one_line(&String::from_utf8_lossy(e.as_bytes())),
            false,
        ),
    }
}

/// Starts the process in a process group of its own and returns its pid.
/// The `Child` handle is dropped without waiting: vigil's own `waitpid(-1)`
/// loop reaps it.
///
/// With `user` (`--user`, for the child and the hooks alike), it runs as
/// that identity with its HOME, and, when the terminal rule says so
/// ([`Switch::new_session`]), in a session of its own: a process group of
/// its own too, so signals to its group reach it as before.
///
/// An executable file without `#!` (execve fails with ENOEXEC) is run as
/// `/bin/sh FILE ARGS...`, as glibc's `execvp` does, and with it tini,
/// dumb-init and catatonit. musl's `execvp` does not, so vigil does it here.
/// (On a glibc build glibc has done it already; when it found no `/bin/sh`
/// it reports ENOENT, which is turned into what a musl build reports.)
pub fn spawn(
    spec: Spawn<'_>,
    inherited: Inherited,
    slice: Slice,
    user: Option<&Switch>,
) -> Result<i32, SpawnError> {
    let Some((program, args)) = spec.argv.split_first() else {
        return Err(SpawnError {
            program: String::new(),
            error: io::Error::from_raw_os_error(libc::ENOENT),
            shell_error: None,
            switch_failed: None,
        });
    };
    let fail = |error: io::Error, shell_error: Option<io::Error>| {
        // The switch runs before exec: if it failed, that is the story.
        let switch_failed = user.and_then(|u| {
            u.failure(&error)
                .or_else(|| shell_error.as_ref().and_then(|e| u.failure(e)))
        });
        match switch_failed {
            Some(failure) => SpawnError {
                program: program.to_string_lossy().into_owned(),
                error: io::Error::from_raw_os_error(failure.error.raw_os_error().unwrap_or(0)),
                shell_error: None,
                switch_failed: Some(failure),
            },
            None => SpawnError {
                program: program.to_string_lossy().into_owned(),
                error,
                shell_error,
                switch_failed: None,
            },
        }
    };
    let path = std::env::var_os("PATH");
    let start =
        |program: &OsStr, args: &[OsString]| start(&spec, program, args, inherited, slice, user);
    match start(program.as_os_str(), args) {
        Err(e) if e.raw_os_error() == Some(libc::ENOEXEC) => {
            let script = script_path(program, path.as_deref()).unwrap_or_else(|| program.clone());
            let mut shell_args = vec![script];
            shell_args.extend(args.iter().cloned());
            start(OsStr::new(SHELL), &shell_args).map_err(|shell_error| fail(e, Some(shell_error)))
        }
        // glibc's execvp tried /bin/sh itself, and found none: say what a
        // musl build says.
        Err(e)
            if e.raw_os_error() == Some(libc::ENOENT)
                && script_path(program, path.as_deref())
                    .is_some_and(|file| is_script_without_interpreter(&file)) =>
        {
            Err(fail(io::Error::from_raw_os_error(libc::ENOEXEC), Some(e)))
        }
        result => result.map_err(|e| fail(e, None)),
    }
}

/// An executable regular file that the kernel runs neither as ELF nor
/// through a `#!` line: execve gives ENOEXEC for it, and ENOENT only comes
/// from the `/bin/sh` that glibc's execvp then tries. (An ELF file whose
/// loader is missing also gives ENOENT, and stays "No such file or
/// directory", as under tini.)
fn is_script_without_interpreter(file: &OsStr) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    is_executable_file(Path::new(file))
        && std::fs::File::open(file)
            .and_then(|mut f| f.read(&mut head))
            .is_ok_and(|n| {
                let head = head.get(..n).unwrap_or_default();
                !head.starts_with(b"#!") && !head.starts_with(b"\x7fELF")
            })
}

fn is_executable_file(file: &Path) -> bool {
    file.metadata().is_ok_and(|m| m.is_file())
        && nix::unistd::access(file, AccessFlags::X_OK).is_ok()
}

/// The file `execvp(program)` executes: `program` itself when it holds a
/// slash, else the first executable regular file of that name in PATH (for
/// a file without `#!`, the one that returned ENOEXEC: the search stops
/// there, in musl as in glibc); None when PATH has none. `path` is vigil's
/// PATH, which the child inherits.
fn script_path(program: &OsStr, path: Option<&OsStr>) -> Option<OsString> {
    if program.as_bytes().contains(&b'/') {
        return Some(program.to_owned());
    }
    let path = path.unwrap_or(OsStr::new(DEFAULT_PATH));
    path.as_bytes().split(|&b| b == b':').find_map(|dir| {
        // An empty entry is the working directory, as execvp reads it.
        let mut candidate = OsStr::from_bytes(dir).to_owned();
        if !dir.is_empty() {
            candidate.push("/");
        }
        candidate.push(program);
        is_executable_file(Path::new(&candidate)).then_some(candidate)
    })
}

/// Why `program` cannot be run as things stand, if it cannot: checked at
/// start for the hooks, so that a misspelt or missing hook program is said
/// when the container starts, not when it is being stopped.
pub fn unrunnable(program: &OsStr) -> Option<String> {
    let path = std::env::var_os("PATH");
    match script_path(program, path.as_deref()) {
        Some(file) if is_executable_file(Path::new(&file)) => None,
        Some(file) if Path::new(&file).exists() => Some("it is not an executable file".into()),
        Some(_) => Some("there is no such file".into()),
        None => Some(format!(
            "it is not in PATH ({})",
            path.as_deref()
                .unwrap_or(OsStr::new(DEFAULT_PATH))
                .to_string_lossy()
        )),
    }
}

/// One `fork` + `execvp` of `program ARGS...`, argv[0] being `program`.
fn start(
    spec: &Spawn<'_>,
    program: &OsStr,
    args: &[OsString],
    inherited: Inherited,
    slice: Slice,
    user: Option<&Switch>,
) -> io::Result<i32> {
    let mut command = Command::new(program);
    command
        .args(args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)));
    let new_session = user.is_some_and(Switch::new_session);
    // std makes the process group before the `pre_exec` closure runs, and
    // a group leader cannot call setsid (EPERM): a new session makes its
    // own group instead.
    if !new_session {
        command.process_group(0);
    }
    if spec.null_stdin {
        command.stdin(Stdio::null());
    }
    if let Some(user) = user {
        command.env("HOME", user.home());
    }
    // Never hand the terminal to a process in another session.
    let take_terminal = spec.take_terminal && !new_session;
    // Cloned here, in the parent: the closure must own what it reads.
    let user = user.cloned();
    // SAFETY: the closure runs in the forked child before exec, so it must be
    // async-signal-safe: it only makes raw syscalls (setsid; tcsetpgrp is an
    // ioctl; rt_sigaction and rt_sigprocmask; sched_setattr; setgroups,
    // setgid, setuid)
    // and does not allocate. While it runs every signal is still blocked
    // until restore_in_child, so SIGTTOU from tcsetpgrp cannot stop the
    // child.
    unsafe {
        command.pre_exec(move || {
            if new_session && libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            if take_terminal {
                // ENOTTY and ENXIO are fine: there often is no terminal.
                libc::tcsetpgrp(libc::STDIN_FILENO, libc::getpid());
            }
            inherited.restore_in_child()?;
            slice.restore_in_child();
            match &user {
                Some(user) => user.apply_in_child(),
                None => Ok(()),
            }
        });
    }
    let child = command.spawn()?;
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

/// Whether vigil has a controlling terminal: `/dev/tty` opens only then.
pub fn has_terminal() -> bool {
    // SAFETY: open reads the NUL-terminated path; the descriptor, if any,
    // is closed at once. O_NOCTTY: never acquire a terminal by this.
    unsafe {
        let fd = libc::open(
            c"/dev/tty".as_ptr(),
            libc::O_RDONLY | libc::O_NOCTTY | libc::O_NONBLOCK | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return false;
        }
        libc::close(fd);
    }
    true
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn display_names_the_program_once() {
        let e = SpawnError {
            program: "/no such".into(),
            error: io::Error::from_raw_os_error(libc::ENOENT),
            shell_error: None,
            switch_failed: None,
        };
        assert_eq!(
            e.to_string(),
            r#"cannot run "/no such": No such file or directory"#
        );
        assert_eq!(e.status(), 127);
        let e = SpawnError {
            program: "a\"b\nc".into(),
            error: io::Error::from_raw_os_error(libc::ENOEXEC),
            shell_error: Some(io::Error::from_raw_os_error(libc::ENOENT)),
            switch_failed: None,
        };
        assert_eq!(
            e.to_string(),
            r#"cannot run "a\"b\nc": Exec format error (a file without #! runs with /bin/sh, which failed: No such file or directory)"#
        );
        assert_eq!(e.status(), 126);
        let e = SpawnError {
            program: "sh".into(),
            error: io::Error::from_raw_os_error(libc::EAGAIN),
            shell_error: None,
            switch_failed: None,
        };
        assert!(
            e.to_string().starts_with(r#"could not start "sh": "#),
            "{e}"
        );
        assert!(
            e.to_string().contains("(no new process could be made"),
            "{e}"
        );
        assert_eq!(e.status(), 1);
    }

    #[test]
    fn script_path_is_where_execvp_finds_it() {
        assert_eq!(script_path(OsStr::new("./x"), None).unwrap(), "./x");
        assert_eq!(script_path(OsStr::new("/a/b"), None).unwrap(), "/a/b");
        assert_eq!(
            script_path(OsStr::new("no-such-tool"), Some(OsStr::new("/nonexistent"))),
            None
        );
        let dir = std::env::temp_dir().join(format!("vigil-spawn-{}", std::process::id()));
        let (first, second) = (dir.join("first"), dir.join("second"));
        std::fs::create_dir_all(first.join("tool")).unwrap(); // a directory: skipped
        std::fs::create_dir_all(&second).unwrap();
        let tool = second.join("tool");
        std::fs::write(&tool, "exit 0\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = format!("/nonexistent:{}:{}", first.display(), second.display());
        let found = script_path(OsStr::new("tool"), Some(OsStr::new(&path)));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(found.unwrap(), tool.as_os_str());
    }
}
