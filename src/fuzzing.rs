//! Every parser of input from outside vigil (its command line and
//! environment, /proc, /etc, cgroupfs), one function each, for the fuzz
//! targets in fuzz/: the modules stay private to the crate, and this is
//! the one door into them. Each function calls the parser vigil itself
//! uses; vigil never calls these.

use std::ffi::{OsStr, OsString};
use std::ops::ControlFlow;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::caps;
use crate::cgroup;
use crate::cli::options::OPTIONS;
use crate::cli::values::{self, Value};
use crate::cli::{self, Action, Config, UsageError};
use crate::log::facts::MemoryEvents;
use crate::log::facts::signal::{self, Rewrites};
use crate::log::format::Format;
use crate::probe::Url;
use crate::procs::{self, Stat};
use crate::spawn;
use crate::text;
use crate::user::{self, GroupEntry, PasswdEntry};

pub const TITLE_MAX: usize = procs::TITLE_MAX;

pub fn url(text: &str) -> Result<Url, String> {
    Url::parse(text)
}

pub fn proc_stat(pid: i32, stat: &[u8]) -> Option<Stat> {
    procs::parse_stat(pid, stat)
}

pub fn proc_title(cmdline: &[u8], comm: &[u8]) -> String {
    procs::title_of(cmdline, comm)
}

/// The entries the `--user` lookups read in a whole /etc/passwd: name,
/// uid, gid, home.
pub fn passwd(file: &[u8]) -> Vec<(Vec<u8>, u32, u32, Vec<u8>)> {
    let mut entries = Vec::new();
    let _ = user::scan_lines(file, Path::new("/etc/passwd"), |line| {
        if let Some(e) = PasswdEntry::parse(line) {
            entries.push((e.name.to_vec(), e.uid, e.gid, e.home.to_vec()));
        }
        ControlFlow::Continue(())
    });
    entries
}

/// The entries read in a whole /etc/group: name, gid, members, and
/// whether `member` is one of them.
pub fn group(file: &[u8], member: &[u8]) -> Vec<(Vec<u8>, u32, Vec<u8>, bool)> {
    let mut entries = Vec::new();
    let _ = user::scan_lines(file, Path::new("/etc/group"), |line| {
        if let Some(e) = GroupEntry::parse(line) {
            let has = e.has_member(member);
            entries.push((e.name.to_vec(), e.gid, e.members.to_vec(), has));
        }
        ControlFlow::Continue(())
    });
    entries
}

/// `memory.events` or `memory.oom_control`: the counts, and the
/// `oom_kill` count that says whether the kernel counts at all.
pub fn memory_events(text: &[u8]) -> (MemoryEvents, Option<u64>) {
    (cgroup::parse_events(text), cgroup::count(text, b"oom_kill"))
}

/// The counter file, from /proc/self/cgroup and /proc/self/mountinfo.
pub fn counter_file(cgroups: &str, mountinfo: &str) -> Option<PathBuf> {
    let (path, v1) = cgroup::own_cgroup(cgroups)?;
    cgroup::counter_file(&path, v1, mountinfo)
}

pub fn duration(text: &str) -> Result<Duration, String> {
    text::parse_duration(text)
}

/// A duration as vigil writes one that was chosen.
pub fn duration_text(duration: Duration) -> String {
    text::duration(duration)
}

pub fn signal(text: &str) -> Result<i32, String> {
    signal::parse(text)
}

pub fn signal_name(signal: i32) -> String {
    signal::name(signal).into_owned()
}

pub fn rewrite_rule(text: &str) -> Result<(i32, i32), String> {
    Rewrites::parse_rule(text)
}

pub fn stop_signals(text: &str) -> Result<Vec<i32>, String> {
    values::parse_stop_signals(text)
}

pub fn exit_code(text: &str) -> Result<i32, String> {
    values::parse_exit_code(text)
}

pub fn switch(text: &str) -> Result<bool, String> {
    values::parse_bool(text)
}

pub fn verbosity(text: &str) -> Result<u8, String> {
    values::parse_verbosity(text)
}

pub fn log_format(text: &str) -> Result<Format, String> {
    Format::parse(text)
}

/// The value of the option table's row `row` (any number: it wraps), as
/// read from the command line (`from` 0), a `VIGIL_*` variable (1) or a
/// `TINI_*` one (2).
pub fn option_value(row: usize, raw: &[u8], from: u8) -> Option<Result<Value, String>> {
    let opt = OPTIONS.get(row % OPTIONS.len())?;
    let from = [
        values::From::CommandLine,
        values::From::Vigil,
        values::From::Tini,
    ]
    .get(usize::from(from % 3))?;
    Some(values::read(opt.kind, OsStr::from_bytes(raw), *from))
}

pub fn caps(text: &str) -> Result<caps::Set, String> {
    caps::parse(text)
}

pub fn hook_command(text: &str) -> Result<Vec<OsString>, String> {
    text::parse_command(text)
}

/// Words as messages show a command, and whether that is exactly the
/// words' bytes as a shell reads them.
pub fn command_text(words: &[OsString]) -> (String, bool) {
    text::display_command_exact(words)
}

pub fn user_spec(text: &[u8]) -> Result<user::Spec, String> {
    user::parse_spec(OsStr::from_bytes(text)).map_err(|e| e.to_string())
}

pub fn listen_pid(value: &[u8]) -> Option<u32> {
    spawn::listen_pid(value)
}

/// `cli::parse`: the `Config` of a command or a probe, `None` for what
/// is only printed (help, version, license), or the usage error.
pub fn cli(args: &[OsString], vars: Vec<(OsString, OsString)>) -> Result<Option<Config>, String> {
    match cli::parse(args, vars) {
        Ok(Action::Run(config) | Action::Probe(config)) => Ok(Some(*config)),
        Ok(Action::Print(_)) => Ok(None),
        Err(UsageError(message)) => Err(message),
    }
}

/// What is read of a command line before (or without) `cli::parse`:
/// whether it asks for a probe, its log format, its termination log.
pub fn cli_lenient(
    args: &[OsString],
    log_format: Option<OsString>,
    termination_log: Option<OsString>,
) -> (bool, Format, Option<PathBuf>) {
    (
        cli::probe_asked(args),
        cli::log_format_before(args, log_format),
        cli::termination_log_after(args, termination_log),
    )
}
