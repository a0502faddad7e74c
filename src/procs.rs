//! The processes vigil is responsible for, as /proc shows them: who is left
//! when the child has exited, and their names for the log.
//!
//! As PID 1 that is every other process of the namespace; otherwise it is
//! vigil's descendants (vigil is then a subreaper, so orphans below it stay
//! below it). Signalling them all uses `kill(-1)` only as PID 1.

use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::io::Read;

use crate::record::{Fields, Obj};
use crate::signals;

/// Whom vigil answers for, decided once at start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// PID 1 of its namespace: every other process in it is vigil's, and
    /// `kill(-1)` reaches exactly them.
    Pid1,
    /// Anywhere else (a CI wrapper, a container whose init is something
    /// else): vigil registers as a subreaper and answers for its
    /// descendants only, found in /proc.
    Subreaper,
}

impl Role {
    pub fn of_this_process() -> Role {
        if std::process::id() == 1 {
            Role::Pid1
        } else {
            Role::Subreaper
        }
    }
}

/// A process by pid and name, for the log and the exit report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proc {
    pub pid: i32,
    pub name: String,
}

/// `{"pid": 7, "name": "sleep"}`
impl Fields for Proc {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        o.field("pid", self.pid).field("name", &self.name);
    }
}

impl fmt::Display for Proc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.pid, self.name)
    }
}

/// Formats a list of processes as `7 (sleep), 9 (sh)`.
pub fn list(procs: &[Proc]) -> String {
    let parts: Vec<String> = procs.iter().map(Proc::to_string).collect();
    parts.join(", ")
}

/// Reads a small kernel-made file (/proc, cgroupfs) as bytes. These report
/// a size of 0, so `fs::read` would start with a 32-byte read and grow from
/// there: they are read a page at a time instead, into a buffer on the
/// stack, and only the content's own length is allocated. A longer file (a
/// host's mountinfo) is read on into a growing buffer.
pub fn read_bytes(path: impl AsRef<std::path::Path>) -> Option<Vec<u8>> {
    let mut file = fs::File::open(path).ok()?;
    let mut page = [0u8; 4096];
    let mut len = 0;
    loop {
        let free = page.get_mut(len..)?;
        if free.is_empty() {
            let mut bytes = Vec::with_capacity(2 * page.len());
            bytes.extend_from_slice(&page);
            file.read_to_end(&mut bytes).ok()?;
            return Some(bytes);
        }
        match file.read(free) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(page.get(..len)?.to_vec())
}

/// `read_bytes` for a file that is text by construction (a cgroup path, a
/// counter): `None` when it is not UTF-8.
pub fn read_text(path: impl AsRef<std::path::Path>) -> Option<String> {
    String::from_utf8(read_bytes(path)?).ok()
}

/// A process's name for the log, if it still exists: its command name
/// (`comm`), unless that says nothing (see `telling_name`). Whatever bytes
/// the name holds, it comes back escaped (`text::escape_bytes`).
pub fn name(pid: i32) -> Option<String> {
    let mut comm = read_bytes(format!("/proc/{pid}/comm"))?;
    // The kernel ends the file with a newline; one inside the name stays.
    if comm.last() == Some(&b'\n') {
        comm.pop();
    }
    Some(telling_name(pid, &comm))
}

/// `comm`, or when that says nothing a name from the command line. `exe`
/// is what a program re-executed through /proc/self/exe is called (busybox
/// starts applets that way when they are not linked into PATH): its first
/// word is the applet. `busybox` run as `busybox APPLET ...`: its second
/// word is. Only then is the command line read.
fn telling_name(pid: i32, comm: &[u8]) -> String {
    let word = match comm {
        b"exe" => 0,
        b"busybox" => 1,
        _ => return crate::text::escape_bytes(comm),
    };
    let program = read_bytes(format!("/proc/{pid}/cmdline")).and_then(|cmdline| {
        let arg = cmdline.split(|&b| b == 0).nth(word)?;
        let base = arg.rsplit(|&b| b == b'/').next()?;
        (!base.is_empty()).then(|| crate::text::escape_bytes(base))
    });
    program.unwrap_or_else(|| crate::text::escape_bytes(comm))
}

/// vigil's pid when it runs under another vigil, for its log lines to say
/// (`vigil[PID]:`, `vigil_pid`): an image whose entrypoint is vigil, run
/// with `docker run --init` and vigil as the engine's init, writes two
/// vigils' lines to one log. Exactly then: the parent calls itself `vigil`
/// (`comm`), which every vigil does, whatever its file is called
/// (`name_self`), and Docker's own `docker-init` (tini) does not. PID 1 has
/// no vigil above it and reads nothing.
pub fn under_vigil() -> Option<u32> {
    let me = std::process::id();
    if me == 1 {
        return None;
    }
    // SAFETY: getppid takes no arguments and cannot fail.
    let parent = unsafe { libc::getppid() };
    let comm = (parent > 0).then(|| read_bytes(format!("/proc/{parent}/comm")))??;
    (comm.strip_suffix(b"\n") == Some(VIGIL.as_bytes())).then_some(me)
}

/// What every vigil calls itself.
const VIGIL: &str = "vigil";

/// Makes vigil's command name (`comm`, what `ps` and /proc show) `vigil`,
/// whatever its file is called: installed as `docker-init`, `tini` or
/// `init`, it is still told apart from the real tini by a vigil below it
/// (`under_vigil`). `program` is argv[0]; nothing is done when its name
/// says `vigil` already.
pub fn name_self(program: &std::ffi::OsStr) {
    let base = std::path::Path::new(program)
        .file_name()
        .unwrap_or_default();
    if base == std::ffi::OsStr::new(VIGIL) {
        return;
    }
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16
    // bytes, which the literal is.
    unsafe { libc::prctl(libc::PR_SET_NAME, c"vigil".as_ptr(), 0, 0, 0) };
}

/// Whether /proc is mounted and belongs to vigil's own PID namespace. Under
/// `unshare --pid` without `--mount-proc`, /proc still shows the host's
/// processes, and acting on it would mean acting on strangers.
pub fn available() -> bool {
    let Some(stat) = read_bytes("/proc/self/stat") else {
        return false;
    };
    let pid = stat.split(|&b| b == b' ').next().unwrap_or_default();
    pid == std::process::id().to_string().as_bytes()
}

/// Name and parent pid from `/proc/PID/stat`, `None` for a zombie (it is
/// dead already; only reaping is left to do) and for a kernel thread. The
/// name sits in parentheses and may itself hold any byte but NUL (spaces,
/// parentheses, newlines, bytes that are not UTF-8), so the fields after
/// it are found from the last `)`.
fn stat(pid: i32) -> Option<(String, i32)> {
    parse_stat(pid, &read_bytes(format!("/proc/{pid}/stat"))?)
}

/// The kernel's `PF_KTHREAD` task flag (include/linux/sched.h), shown in
/// the ninth field of `/proc/PID/stat`.
const PF_KTHREAD: u64 = 0x0020_0000;

/// As the init of a whole machine (not of a container: a PID namespace
/// shows no kernel threads), /proc lists the kernel's own threads beside
/// the processes. They are never leftovers: `kill(-1)`
/// does not reach them, they never exit, and listing them would make the
/// drain wait for them and the report name them. The flag is what tells
/// them apart: the kernel sets it on every kernel thread, kthreadd
/// included, and nothing in user space can set or clear it. A parent pid
/// of 2 would not do: kthreadd itself has 0, pid 2 is kthreadd only in the
/// first PID namespace, and a program the kernel starts (a user-mode
/// helper such as modprobe, or a core-dump pipe) is kthreadd's child too
/// but an ordinary process once it has exec'd, one to drain like any other.
/// An empty command line would not do either: zombies have one too.
fn parse_stat(pid: i32, stat: &[u8]) -> Option<(String, i32)> {
    let open = stat.iter().position(|&b| b == b'(')?;
    let close = stat.iter().rposition(|&b| b == b')')?;
    let comm = stat.get(open + 1..close)?;
    // Everything after the name is ASCII digits, letters and spaces.
    let rest = std::str::from_utf8(stat.get(close + 1..)?).ok()?;
    let mut rest = rest.split_whitespace();
    if rest.next()? == "Z" {
        return None;
    }
    let ppid = rest.next()?.parse().ok()?;
    // pgrp, session, tty_nr and tpgid come before the flags.
    let flags: u64 = rest.nth(4)?.parse().ok()?;
    if flags & PF_KTHREAD != 0 {
        return None;
    }
    Some((telling_name(pid, comm), ppid))
}

/// Every pid in /proc.
fn all_pids() -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// The processes vigil is answerable for, itself excluded. Empty when /proc
/// cannot be trusted (see `available`).
pub fn others(role: Role) -> Vec<Proc> {
    if !available() {
        return Vec::new();
    }
    let me = std::process::id() as i32;
    let table: Vec<(i32, String, i32)> = all_pids()
        .into_iter()
        .filter(|&pid| pid != me)
        .filter_map(|pid| stat(pid).map(|(name, ppid)| (pid, name, ppid)))
        .collect();
    if role == Role::Pid1 {
        return table
            .into_iter()
            .map(|(pid, name, _)| Proc { pid, name })
            .collect();
    }
    // Descendants: grow the set from vigil outwards until it stops growing.
    let mut found = HashSet::from([me]);
    let mut result = Vec::new();
    let mut grew = true;
    while grew {
        grew = false;
        for (pid, name, ppid) in &table {
            if found.contains(ppid) && !found.contains(pid) {
                found.insert(*pid);
                result.push(Proc {
                    pid: *pid,
                    name: name.clone(),
                });
                grew = true;
            }
        }
    }
    result
}

/// Sends `signals`, in order, to every process vigil is answerable for and
/// returns the ones /proc listed. As PID 1 this is `kill(-1)`, which the
/// kernel applies to the whole namespace even without /proc; otherwise each
/// descendant is signalled by pid, plus the `known` groups (child, hooks) so
/// that at least those are reached when /proc is missing.
pub fn signal_all(role: Role, signals: &[i32], known: &[signals::Target]) -> Vec<Proc> {
    let procs = others(role);
    for &signal in signals {
        if role == Role::Pid1 {
            // SAFETY: kill has no memory arguments. As PID 1, -1 means every
            // other process of this namespace; anywhere else it would reach
            // every process the user may signal on the machine, which is why
            // only `Role::Pid1` gets here.
            unsafe { libc::kill(-1, signal) };
        } else {
            for target in known {
                signals::send(*target, signal);
            }
            for p in &procs {
                signals::send(signals::Target::Process(p.pid), signal);
            }
        }
    }
    procs
}

/// Whether vigil can find every process it answers for: as PID 1 `kill(-1)`
/// reaches them all even unlisted; otherwise it needs /proc.
pub fn can_reach_all(role: Role) -> bool {
    role == Role::Pid1 || available()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_bytes_reads_short_and_long_files_whole() {
        let dir = std::env::temp_dir().join(format!("vigil-read-text-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Shorter than the stack page, exactly one page, and longer: the
        // last goes on into a growing buffer.
        for len in [0, 17, 4095, 4096, 4097, 10_000] {
            let text: String = (0..len)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            let path = dir.join(format!("f{len}"));
            std::fs::write(&path, &text).unwrap();
            assert_eq!(
                read_text(&path).as_deref(),
                Some(text.as_str()),
                "{len} bytes"
            );
        }
        std::fs::write(dir.join("bad"), b"caf\xe9").unwrap();
        assert_eq!(read_text(dir.join("bad")), None, "not UTF-8");
        assert_eq!(read_bytes(dir.join("bad")), Some(b"caf\xe9".to_vec()));
        assert_eq!(read_text(dir.join("missing")), None);
        // A kernel-made file, which says its size is 0.
        let stat = read_text("/proc/self/stat").unwrap();
        assert!(
            stat.starts_with(&format!("{} (", std::process::id())),
            "{stat}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reads_own_stat() {
        assert!(available());
        let me = std::process::id() as i32;
        let (name, ppid) = stat(me).unwrap();
        assert!(!name.is_empty());
        assert!(ppid > 0);
    }

    /// As the init of a whole machine, /proc shows the kernel's threads
    /// too (here as a machine's /proc/2/stat and /proc/7/stat have them):
    /// they are nobody's to drain.
    #[test]
    fn kernel_threads_are_no_leftovers() {
        let kthreadd = b"2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 24";
        let worker = b"7 (kworker/0:0-rcu_gp) I 2 0 0 0 -1 69238880 0 0 0 0 0 0 0 0 0 -20 1";
        assert_eq!(parse_stat(2, kthreadd), None);
        assert_eq!(parse_stat(7, worker), None);
        let sleep = b"255 (sleep) S 1 255 78 0 -1 4194560 90 0 0 0 0 0 0 0 20 0 1 0 650";
        assert_eq!(parse_stat(255, sleep), Some(("sleep".to_string(), 1)));
    }

    /// A name may hold any byte but NUL: none of them hides the process.
    #[test]
    fn odd_names_are_read_and_escaped() {
        let cases: [(&[u8], &str); 5] = [
            (b"datenbank-gr\xc3\xb6\xc3", "datenbank-gr\u{f6}\\xc3"),
            (b"a) S 1 2 (b", "a) S 1 2 (b"),
            (b"two\nlines", "two\\nlines"),
            (b"with space", "with space"),
            (b"", ""),
        ];
        for (comm, shown) in cases {
            let mut line = b"42 (".to_vec();
            line.extend_from_slice(comm);
            line.extend_from_slice(b") S 7 42 42 0 -1 4194560 90 0 0 0 0 0 0 0 20 0 1 0 650\n");
            assert_eq!(
                parse_stat(42, &line),
                Some((shown.to_string(), 7)),
                "{}",
                String::from_utf8_lossy(comm)
            );
        }
    }

    /// The same on this machine's own /proc, where the tests do not run in
    /// a PID namespace of their own (where they do, there is nothing to see).
    #[test]
    fn lists_no_kernel_thread() {
        let listed = others(Role::Pid1);
        assert!(
            !listed.iter().any(|p| p.pid == 2 && p.name == "kthreadd"),
            "{listed:?}"
        );
    }

    #[test]
    fn finds_a_descendant() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let found = others(Role::Subreaper);
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            found.iter().any(|p| p.pid == pid && p.name == "sleep"),
            "{found:?}"
        );
    }
}
