//! Starting a process (the child, or a hook) so that it sees what it would
//! have seen without vigil, as the `--user` identity if one is given.
//!
//! vigil forks and execs by itself, not through std's `Command`: std
//! panics when the read of its internal exec-error pipe fails, and a PID 1
//! must survive any system call failing. Here each start is a plan, made
//! before the fork (`sys::exec::Plan`): the words and the environment, the
//! process group, the terminal, the mask and dispositions vigil was
//! started with (vigil blocks everything: a child started naively would
//! ignore SIGTERM forever), the user's ids, the capabilities it is to
//! hold (`--caps`). `sys::exec::spawn` runs it in
//! a new process, and `forkexec` reads how its exec went.

mod forkexec;

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use nix::errno::Errno;
use nix::unistd::{AccessFlags, Pid, getpgrp, isatty, tcgetpgrp, tcsetpgrp};

use crate::caps::{CapsFailure, Narrowing};
use crate::log;
use crate::log::event::{Event, Fact};
use crate::log::format::{Fields, Obj};
use crate::signals::Inherited;
use crate::sys::exec::{self, CStrings, Group, NotStarted, OwnPid, Plan, Step};
use crate::sys::fd::stdin;
use crate::text::os_error;
use crate::user::{Switch, SwitchFailure};
use forkexec::Outcome;

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
    /// vigil's own variables, which it read and the process must not
    /// inherit: a vigil started below would apply them again.
    pub unset: &'a [&'static str],
    /// A variable the process gets with its own pid as its value (the
    /// child under socket activation: `LISTEN_PID`, see
    /// [`socket_activated`]).
    pub own_pid: Option<&'static str>,
}

/// Socket activation's variables (sd_listen_fds(3)): the pid the
/// descriptors are for, how many there are (from 3 on), their names.
pub const LISTEN_VARIABLES: [&str; 3] = ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"];

/// Whether vigil was socket-activated: `LISTEN_PID` is vigil's own pid
/// (systemd, or podman's pid 1 in the container, gave the descriptors to
/// vigil). The child is then the sockets' owner, and sees its own pid
/// there (`Spawn::own_pid`), as under catatonit; the descriptors reach it
/// as every open descriptor of vigil's does. A `LISTEN_PID` that names
/// another process is not vigil's business and passes unchanged.
pub fn socket_activated() -> bool {
    // Read where the C library keeps the environment, without a copy:
    // every start asks.
    let value =
        crate::sys::env::entries().find_map(|entry| entry.to_bytes().strip_prefix(b"LISTEN_PID="));
    value.and_then(listen_pid) == Some(std::process::id())
}

/// The pid a `LISTEN_PID` value names, if it is one.
pub fn listen_pid(value: &[u8]) -> Option<u32> {
    std::str::from_utf8(value).ok()?.parse().ok()
}

/// A process that could not be started.
#[derive(Debug)]
pub struct SpawnError {
    /// The program, as given (argv[0]).
    pub program: String,
    pub error: io::Error,
    /// Why the `/bin/sh` fallback for a file without `#!` failed too.
    pub shell_error: Option<io::Error>,
    /// The `--user` switch or a `--caps` step failed in the forked child:
    /// nothing was executed (`error` is then the step's OS error).
    pub switch_failed: Option<SwitchFailed>,
}

/// A step of becoming who the process runs as, failed in the new process.
#[derive(Debug)]
pub enum SwitchFailed {
    User(SwitchFailure),
    Caps(CapsFailure),
}

impl SwitchFailed {
    /// The failure's words and fields: `as user "app": setuid(1000)
    /// failed: ...`, `with capabilities CAP_NET_RAW: capset failed: ...`,
    /// to follow `cannot run "PROG"`.
    fn fact(&self) -> &dyn Fact {
        match self {
            SwitchFailed::User(failure) => failure,
            SwitchFailed::Caps(failure) => failure,
        }
    }
}

impl SpawnError {
    /// `program` could not run, for `error`.
    fn new(program: &OsStr, error: io::Error) -> SpawnError {
        SpawnError {
            program: program.to_string_lossy().into_owned(),
            error,
            shell_error: None,
            switch_failed: None,
        }
    }

    /// Whether vigil could not start the process at all: a call of its own
    /// before the program ran failed (the pipe, /dev/null, `fork`, a step
    /// of the forked process before exec), or the fork or the exec ran out
    /// of processes or memory. At a container's process limit (the pids
    /// cgroup, `docker run --pids-limit`) this is the fork's EAGAIN.
    /// Nothing is wrong with the program then, and 126 would say there is.
    pub fn is_fork_failure(&self) -> bool {
        self.switch_failed.is_none()
            && (self.not_started().is_some()
                || matches!(self.error.raw_os_error(), Some(libc::EAGAIN | libc::ENOMEM)))
    }

    /// The call of vigil's own that failed, when that is why nothing ran.
    fn not_started(&self) -> Option<&NotStarted> {
        self.error.get_ref()?.downcast_ref::<NotStarted>()
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
        Step::Exec.status(Errno::from_raw(self.error.raw_os_error().unwrap_or(0)))
    }

    /// What vigil says of it, with `status`, its exit status: the exec
    /// failed, no process could be made (or a call of vigil's own failed
    /// before the program ran), or the `--user` switch or a `--caps` step
    /// failed in the forked child.
    pub fn event(&self, status: i32) -> Event<'_> {
        let failure = self;
        match &self.switch_failed {
            Some(SwitchFailed::User(_)) => Event::UserSwitchFailed { failure, status },
            Some(SwitchFailed::Caps(_)) => Event::CapsSwitchFailed { failure, status },
            None if self.is_fork_failure() => Event::ForkFailed { failure, status },
            None => Event::ExecFailed { failure, status },
        }
    }
}

/// `{"program": "app", "error": "No such file or directory"}`, or the
/// failed `--user` call's or `--caps` step's facts.
impl Fields for SpawnError {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        o.field("program", self.program.as_str());
        if let Some(failure) = &self.switch_failed {
            return failure.fact().fields(o);
        }
        o.field("error", os_error(&self.error))
            .opt("shell_error", self.shell_error.as_ref().map(os_error));
    }
}

impl fmt::Display for SpawnError {
    /// `cannot run "PROG": No such file or directory`: the program once, in
    /// double quotes (escaped as Rust escapes a string, so a quote or a
    /// newline in it cannot blur where it ends), then the C library's text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let program = &self.program;
        if let Some(failure) = &self.switch_failed {
            return write!(f, "cannot run {program:?} {}", failure.fact());
        }
        let error = os_error(&self.error);
        if self.is_fork_failure() {
            write!(f, "could not start {program:?}: {error}")?;
            let errno = match self.not_started() {
                Some(failed) if failed.call == FORK => Some(failed.error as i32),
                Some(_) => None,
                None => self.error.raw_os_error(),
            };
            if matches!(errno, Some(libc::EAGAIN | libc::ENOMEM)) {
                f.write_str(
                    " (no new process could be made: the container's process limit, or its memory, may be used up)",
                )?;
            }
            return Ok(());
        }
        write!(f, "cannot run {program:?}: {error}")?;
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

/// A call of vigil's own that failed before the program could run (no
/// pipe for the exec's outcome, no /dev/null, no fork, or a step of the
/// forked process before exec: its process group, its signals), as the
/// spawn's error, which `SpawnError::not_started` finds again.
fn not_started(call: &'static str, error: Errno) -> io::Error {
    io::Error::new(io::Error::from(error).kind(), NotStarted { call, error })
}

/// The call named by `NotStarted` for a failed fork.
const FORK: &str = "fork";

/// `setpgid: Operation not permitted`. A fork that ran out of processes
/// or memory is the OS's words alone, as it always was: the message around
/// it says that no process could be made.
impl fmt::Display for NotStarted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.error.desc();
        if self.call == FORK && matches!(self.error, Errno::EAGAIN | Errno::ENOMEM) {
            f.write_str(text)
        } else {
            write!(f, "{}: {text}", self.call)
        }
    }
}

impl std::error::Error for NotStarted {}

/// A file without `#!` runs with this shell, as glibc's `execvp` runs it.
const SHELL: &str = "/bin/sh";

/// The PATH musl's `execvp` searches when PATH is unset.
const DEFAULT_PATH: &str = "/usr/local/bin:/bin:/usr/bin";

/// Starts the process in a process group of its own and returns its pid.
/// vigil's own `waitpid(-1)` loop reaps it.
///
/// With `user` (`--user`, for the child and the hooks alike), it runs as
/// that identity with its HOME, and, when the terminal rule says so
/// ([`Switch::new_session`]), in a session of its own: a process group of
/// its own too, so signals to its group reach it as before. With `caps`
/// (`--caps`), it holds exactly those capabilities.
///
/// An executable file without `#!` (execve fails with ENOEXEC) is run as
/// `/bin/sh FILE ARGS...`, as glibc's `execvp` does, and with it tini,
/// dumb-init and catatonit. vigil's exec follows musl's `execvp`, which
/// does not, on every build, so vigil does it here.
pub fn spawn(
    spec: Spawn<'_>,
    inherited: Inherited,
    user: Option<&Switch>,
    caps: Option<&Narrowing>,
) -> Result<Pid, SpawnError> {
    let Some((program, args)) = spec.argv.split_first() else {
        let error = io::Error::from_raw_os_error(libc::ENOENT);
        return Err(SpawnError::new(OsStr::new(""), error));
    };
    let start =
        |program: &OsStr, args: &[OsString]| start(&spec, program, args, inherited, user, caps);
    let e = match start(program, args) {
        Err(e) if e.switch_failed.is_none() && e.error.raw_os_error() == Some(libc::ENOEXEC) => e,
        result => return result,
    };
    let path = std::env::var_os("PATH");
    let script = script_path(program, path.as_deref()).unwrap_or_else(|| program.clone());
    let mut shell_args = vec![script];
    shell_args.extend(args.iter().cloned());
    match start(OsStr::new(SHELL), &shell_args) {
        Ok(pid) => Ok(pid),
        // vigil could not start the shell, or the switch failed before
        // its exec: that is the story, not the file's format.
        Err(shell) if shell.switch_failed.is_some() || shell.not_started().is_some() => {
            Err(SpawnError {
                program: e.program,
                ..shell
            })
        }
        Err(shell) => Err(SpawnError {
            shell_error: Some(shell.error),
            ..e
        }),
    }
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
        let candidate = OsString::from_vec(in_dir(dir, program.as_bytes()));
        is_executable_file(Path::new(&candidate)).then_some(candidate)
    })
}

/// The file `name` in the directory `dir` of a PATH, an empty entry being
/// the working directory, as execvp reads it.
fn in_dir(dir: &[u8], name: &[u8]) -> Vec<u8> {
    match dir {
        b"" => name.to_vec(),
        _ => [dir, b"/", name].concat(),
    }
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

/// One fork + exec of `program ARGS...`, argv[0] being `program`, in the
/// environment vigil has plus `spec.env` (and `--user`'s HOME): the plan,
/// made before the fork, then the run.
fn start(
    spec: &Spawn<'_>,
    program: &OsStr,
    args: &[OsString],
    inherited: Inherited,
    user: Option<&Switch>,
    caps: Option<&Narrowing>,
) -> Result<Pid, SpawnError> {
    let fail = |error| SpawnError::new(program, error);
    let program_c = c_string(program.as_bytes()).map_err(fail)?;
    let words = args
        .iter()
        .map(|arg| c_string(arg.as_bytes()))
        .collect::<io::Result<Vec<CString>>>()
        .map_err(fail)?;
    let argv = CStrings::new(
        std::iter::once(program_c.as_c_str()).chain(words.iter().map(CString::as_c_str)),
    );
    let own_pid = match spec.own_pid {
        Some(name) => Some(OwnPid::new(name).ok_or_else(|| {
            fail(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no room for the variable's name",
            ))
        })?),
        None => None,
    };
    let extra = variables(spec, user);
    let environment = with_variables(&extra, spec.unset).map_err(fail)?;
    let entries = environment.iter().map(CString::as_c_str);
    let envp = match &own_pid {
        Some(own) => CStrings::with_own_pid(entries, own),
        None => CStrings::new(entries),
    };
    let null = spec.null_stdin.then(open_null).transpose().map_err(fail)?;
    let group = if user.is_some_and(Switch::new_session) {
        Group::Session
    } else {
        Group::Own
    };
    let mut candidates = Vec::new();
    let plan = Plan {
        program: exec_program(&program_c, &search_path(&extra), &mut candidates).map_err(fail)?,
        argv: &argv,
        env: &envp,
        stdin: null.as_ref().map(File::as_fd),
        group,
        // Never hand the terminal to a process in another session.
        terminal: (spec.take_terminal && group == Group::Own)
            .then(stdin)
            .flatten(),
        signals: inherited.for_child(),
        user: user.and_then(Switch::ids),
        caps: caps.map(Narrowing::plan),
        own_pid: own_pid.as_ref(),
    };
    run(&plan, program, user, caps)
}

/// The variables the process gets on top of vigil's own: the spawn's,
/// then `--user`'s HOME, then the place of the entry the process fills in
/// with its own pid.
fn variables<'s>(spec: &'s Spawn<'_>, user: Option<&'s Switch>) -> Vec<(&'s [u8], &'s [u8])> {
    let mut extra: Vec<(&[u8], &[u8])> = spec
        .env
        .iter()
        .map(|(name, value)| (name.as_bytes(), value.as_bytes()))
        .collect();
    if let Some(user) = user {
        extra.push((b"HOME", user.home().as_bytes()));
    }
    extra.extend(spec.own_pid.map(|name| (name.as_bytes(), &b""[..])));
    extra
}

/// Where the process's exec looks for a program named without a slash:
/// its own PATH, as execvp in it would.
fn search_path(extra: &[(&[u8], &[u8])]) -> Vec<u8> {
    match extra.iter().rev().find(|(name, _)| *name == b"PATH") {
        Some((_, value)) => value.to_vec(),
        None => std::env::var_os("PATH")
            .map(OsString::into_vec)
            .unwrap_or_else(|| DEFAULT_PATH.as_bytes().to_vec()),
    }
}

/// What the new process executes for `program`, found as musl's `execvp`
/// finds it, here, before the fork: a name with a slash is a path; any
/// other is looked for in each directory of `path` in turn (an empty entry
/// is the working directory), each candidate kept in `candidates`, which
/// the process tries in that order. A candidate longer than any path the
/// kernel takes is left out, as musl leaves it out.
fn exec_program<'c>(
    program: &'c CStr,
    path: &[u8],
    candidates: &'c mut Vec<CString>,
) -> io::Result<exec::Program<'c>> {
    let name = program.to_bytes();
    if name.is_empty() {
        return Ok(exec::Program::Fails(Errno::ENOENT));
    }
    if name.contains(&b'/') {
        return Ok(exec::Program::Path(program));
    }
    if name.len() > NAME_MAX {
        return Ok(exec::Program::Fails(Errno::ENAMETOOLONG));
    }
    for dir in path.split(|&b| b == b':') {
        let file = in_dir(dir, name);
        if file.len() < CANDIDATE_MAX {
            candidates.push(c_string(&file)?);
        }
    }
    Ok(exec::Program::Search(candidates))
}

/// The longest file name execvp takes (NAME_MAX).
const NAME_MAX: usize = 255;

/// The longest candidate of the search, its NUL included: a directory as
/// long as the longest path the kernel takes (PATH_MAX, NUL included), a
/// slash and a name.
const CANDIDATE_MAX: usize = 4096 + NAME_MAX + 2;

/// /dev/null, for a hook's stdin.
fn open_null() -> io::Result<File> {
    File::open("/dev/null").map_err(|e| {
        let error = Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO));
        not_started("open /dev/null", error)
    })
}

/// Runs `plan` and reads how it went: the pid, or why `program` did not
/// run.
fn run(
    plan: &Plan<'_>,
    program: &OsStr,
    user: Option<&Switch>,
    caps: Option<&Narrowing>,
) -> Result<Pid, SpawnError> {
    let fail = |error| SpawnError::new(program, error);
    let started = exec::spawn(plan).map_err(|e| fail(not_started(e.call, e.error)))?;
    let failed = match forkexec::outcome(started) {
        Outcome::Started(pid) => return Ok(pid),
        // The process was made, but whether it runs the program could not
        // be read: said once, as a warning. The status it ends with is the
        // one vigil would have given for a failed exec, and the report's.
        Outcome::Unknown { pid, error } => {
            let error = os_error(&error);
            log::emit(&Event::ExecUnconfirmed {
                program,
                pid,
                error: &error,
            });
            return Ok(pid);
        }
        Outcome::Failed(failed) => failed,
    };
    // The switch runs before exec: if it failed, that is the story.
    let switch_failed = user
        .and_then(|u| u.failure(failed.step, failed.errno))
        .map(SwitchFailed::User)
        .or_else(|| caps.and_then(|c| c.failure(failed).map(SwitchFailed::Caps)));
    let error = if failed.step == Step::Exec || switch_failed.is_some() {
        io::Error::from(failed.errno)
    } else {
        not_started(failed.step.call(), failed.errno)
    };
    Err(SpawnError {
        switch_failed,
        ..fail(error)
    })
}

/// `bytes` as a C string; a NUL inside cannot be passed to exec.
fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "a NUL byte cannot be passed to a program",
        )
    })
}

/// vigil's environment with `extra` (`NAME`, `VALUE`) set and `unset` left
/// out: a variable vigil has keeps its place with the new value, a new one
/// is added at the end, as `setenv` would do it.
fn with_variables(extra: &[(&[u8], &[u8])], unset: &[&str]) -> io::Result<Vec<CString>> {
    let entry = |(name, value): (&[u8], &[u8])| c_string(&[name, b"=", value].concat());
    // Each name once, with its last value, in the order of those values.
    let mut pending: Vec<(&[u8], &[u8])> = Vec::new();
    for &(name, value) in extra {
        pending.retain(|(n, _)| *n != name);
        pending.push((name, value));
    }
    let mut entries = Vec::new();
    for text in crate::sys::env::entries() {
        let name = text
            .to_bytes()
            .split(|&b| b == b'=')
            .next()
            .unwrap_or_default();
        if unset.iter().any(|u| u.as_bytes() == name) {
            continue;
        }
        match pending.iter().position(|(n, _)| *n == name) {
            Some(at) => entries.push(entry(pending.remove(at))?),
            // A second entry of a name given a new value is dropped: the
            // new value stands once.
            None if extra.iter().any(|(n, _)| *n == name) => {}
            None => entries.push(text.to_owned()),
        }
    }
    for variable in pending {
        entries.push(entry(variable)?);
    }
    Ok(entries)
}

/// Whether vigil's stdin is a terminal whose foreground group is vigil's:
/// only then does the child get the terminal (Ctrl-C and Ctrl-Z reach it).
pub fn owns_terminal() -> bool {
    stdin().is_some_and(|fd| isatty(fd).unwrap_or(false) && tcgetpgrp(fd) == Ok(getpgrp()))
}

/// Whether vigil has a controlling terminal: `/dev/tty` opens only then.
pub fn has_terminal() -> bool {
    crate::sys::fd::controlling_terminal().is_ok()
}

/// Hands the terminal to a process group, if vigil holds it right now.
pub fn give_terminal(pgid: Pid) {
    if let Some(terminal) = stdin().filter(|_| owns_terminal()) {
        // SIGTTOU is ignored and blocked in vigil, so this cannot stop vigil.
        let _ = tcsetpgrp(terminal, pgid);
    }
}

/// Takes the terminal's foreground back for vigil's own process group, if
/// it still names the group vigil gave it to: otherwise the shell or
/// script that ran vigil would be left in the background of its own
/// terminal, unable to read from it.
pub fn reclaim_terminal(given_to: Pid) {
    // SIGTTOU is blocked and ignored in vigil, so setting the foreground
    // from the background cannot stop vigil.
    if let Some(terminal) = stdin().filter(|&fd| tcgetpgrp(fd) == Ok(given_to)) {
        let _ = tcsetpgrp(terminal, getpgrp());
    }
}

/// For the unit tests of the child's steps: runs `sh -c SCRIPT` for real,
/// as `user` and with `caps`, and waits for it: its exit code, or why it
/// could not start.
#[cfg(test)]
pub fn run_sh(
    script: &str,
    user: Option<&Switch>,
    caps: Option<&Narrowing>,
) -> Result<i32, SpawnError> {
    let argv: Vec<OsString> = ["sh", "-c", script].map(OsString::from).into();
    let spec = Spawn {
        argv: &argv,
        env: Vec::new(),
        take_terminal: false,
        null_stdin: true,
        unset: &[],
        own_pid: None,
    };
    let inherited = Inherited::defaults();
    let pid = spawn(spec, inherited, user, caps)?;
    match nix::sys::wait::waitpid(pid, None) {
        Ok(nix::sys::wait::WaitStatus::Exited(_, code)) => Ok(code),
        other => panic!("sh -c {script:?}: {other:?}"),
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

    /// A variable vigil has keeps its place with the new value, once; a new
    /// one comes last; the rest is vigil's environment as it is.
    #[test]
    fn added_variables_replace_in_place() {
        let own: Vec<Vec<u8>> = std::env::vars_os()
            .map(|(k, v)| [k.as_bytes(), b"=", v.as_bytes()].concat())
            .collect();
        let path_at = own.iter().position(|e| e.starts_with(b"PATH="));
        let env = with_variables(&[(b"PATH", b"/x"), (b"VIGIL_TEST_NEW", b"1")], &[]).unwrap();
        let env: Vec<&[u8]> = env.iter().map(|e| e.as_bytes()).collect();
        assert_eq!(env.len(), own.len() + 1);
        assert_eq!(env.last().copied(), Some(&b"VIGIL_TEST_NEW=1"[..]));
        assert_eq!(env.iter().filter(|e| e.starts_with(b"PATH=")).count(), 1);
        if let Some(at) = path_at {
            assert_eq!(env[at], b"PATH=/x");
        }
        for (i, e) in own.iter().enumerate() {
            if Some(i) != path_at {
                assert_eq!(env[i], e.as_slice());
            }
        }
    }

    /// `own_pid`: the new process finds its own pid in the variable, a
    /// new one or one vigil has (PATH here), once; any pid fits the entry.
    #[test]
    fn own_pid_is_the_new_processs_pid() {
        let dir = std::env::temp_dir().join(format!("vigil-own-pid-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["LISTEN_PID", "PATH"] {
            let out = dir.join(name);
            let script = format!("echo \"${name} $$\" > {}", out.display());
            let argv: Vec<OsString> = ["/bin/sh", "-c", &script].map(OsString::from).into();
            let spec = Spawn {
                argv: &argv,
                env: Vec::new(),
                take_terminal: false,
                null_stdin: true,
                unset: &[],
                own_pid: Some(name),
            };
            let inherited = crate::signals::Inherited::defaults();
            let pid = spawn(spec, inherited, None, None).unwrap();
            nix::sys::wait::waitpid(pid, None).unwrap();
            let written = std::fs::read_to_string(&out).unwrap();
            assert_eq!(written, format!("{pid} {pid}\n"), "{name}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(OwnPid::new(&"X".repeat(42)).is_some());
        assert!(OwnPid::new(&"X".repeat(43)).is_none());
        assert!(OwnPid::new("A=B").is_none() && OwnPid::new("").is_none());
    }

    /// vigil's own variables are left out; others stay as they are.
    #[test]
    fn unset_variables_are_left_out() {
        let own = std::env::vars_os().count();
        let some = std::env::vars_os()
            .find_map(|(k, _)| k.into_string().ok())
            .unwrap_or_default();
        let name: &'static str = Box::leak(some.into_boxed_str());
        let env = with_variables(&[], &[name]).unwrap();
        assert_eq!(env.len(), own - 1);
        assert!(
            !env.iter()
                .any(|e| e.as_bytes().starts_with(format!("{name}=").as_bytes()))
        );
    }

    /// The files the new process tries, in the order musl's `execvp`
    /// tries them.
    #[test]
    fn exec_program_searches_as_execvp() {
        let files = |name: &CStr, path: &[u8]| {
            let mut candidates = Vec::new();
            match exec_program(name, path, &mut candidates).unwrap() {
                exec::Program::Search(found) => Ok(found
                    .iter()
                    .map(|c| c.to_string_lossy().into_owned())
                    .collect::<Vec<_>>()),
                exec::Program::Path(p) => Err(format!("path {p:?}")),
                exec::Program::Fails(e) => Err(format!("fails {e:?}")),
            }
        };
        assert_eq!(
            files(c"tool", b"/a:b::/c/"),
            Ok(vec![
                "/a/tool".into(),
                "b/tool".into(),
                "tool".into(),
                "/c//tool".into()
            ])
        );
        assert_eq!(files(c"./tool", b"/a"), Err(r#"path "./tool""#.into()));
        assert_eq!(files(c"", b"/a"), Err("fails ENOENT".into()));
        let long = CString::new("x".repeat(NAME_MAX + 1)).unwrap();
        assert_eq!(files(&long, b"/a"), Err("fails ENAMETOOLONG".into()));
        // A directory longer than any path the kernel takes is left out.
        let huge = [b"/".repeat(CANDIDATE_MAX).as_slice(), b":/a"].concat();
        assert_eq!(files(c"tool", &huge), Ok(vec!["/a/tool".into()]));
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
