//! The processes vigil is responsible for, as /proc shows them: who is left
//! when the child has exited, and their names for the log.
//!
//! As PID 1 that is every other process of the namespace; otherwise it is
//! vigil's descendants (vigil is then a subreaper, so orphans below it stay
//! below it). Signalling them all uses `kill(-1)` only as PID 1.

use std::collections::HashSet;
use std::fs;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::OnceLock;

use nix::errno::Errno;
use nix::fcntl::{OFlag, open};
use nix::sys::stat::Mode;
use nix::unistd::Pid;

use crate::log::facts::{Proc, Signal, Target};
use crate::signals;
use crate::sys::fd::numbered;

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

/// Reads a small kernel-made file (/proc, cgroupfs) as bytes. These report
/// a size of 0, so `fs::read` would start with a 32-byte read and grow from
/// there: they are read a page at a time instead, into a buffer on the
/// stack, and only the content's own length is allocated. A longer file (a
/// host's mountinfo) is read on into a growing buffer.
///
/// It lives here, with the files of /proc it was made for: what counts as
/// gone (ENOENT, ESRCH) and what is tried again are /proc's rules, where a
/// missing file is a process that ended. `cgroup`, a floor above, reads
/// its few files (/proc/self/cgroup, mountinfo, cgroupfs) with it rather
/// than with a second reader of the same kind of file.
pub fn read_bytes(path: impl AsRef<std::path::Path>) -> Option<Vec<u8>> {
    let path = path.as_ref();
    // A failure that says nothing of the file (short of memory or of
    // descriptors, an I/O error) is tried again, twice at most: it would
    // otherwise be taken for a process that is gone, or a /proc that is
    // not vigil's.
    (0..3).find_map(|_| match read_once(path) {
        Ok(bytes) => Some(Some(bytes)),
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ESRCH)) => Some(None),
        Err(_) => None,
    })?
}

fn read_once(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    let mut file = fs::File::open(path)?;
    let mut page = [0u8; 4096];
    let mut len = 0;
    while let Some(free) = page.get_mut(len..).filter(|free| !free.is_empty()) {
        match file.read(free) {
            Ok(0) => return Ok(page.get(..len).unwrap_or_default().to_vec()),
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    // The page is full: the rest goes on into a growing buffer.
    let mut bytes = Vec::with_capacity(2 * page.len());
    bytes.extend_from_slice(&page);
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A process's name for the log, if it still exists: its title (`title`).
pub fn name(pid: Pid) -> Option<String> {
    let mut comm = read_bytes(format!("/proc/{pid}/comm"))?;
    // The kernel ends the file with a newline; one inside the name stays.
    if comm.last() == Some(&b'\n') {
        comm.pop();
    }
    Some(title(pid, &comm))
}

/// The longest title shown, in bytes before escaping; a longer one is cut.
pub const TITLE_MAX: usize = 64;

/// What a process is called in the log and the report: its command line,
/// which is what `ps` shows and what servers rewrite to say what each
/// process does (`postgres: checkpointer`, `nginx: worker process`), with
/// the program's directory left out (`sleep 1000` for `/bin/sleep 1000`);
/// the kernel's 15-byte `comm` when the command line is empty (a zombie, a
/// process that cleared it). Cut to `TITLE_MAX` bytes, and escaped: any
/// byte may be in it.
fn title(pid: Pid, comm: &[u8]) -> String {
    title_of(
        &read_bytes(format!("/proc/{pid}/cmdline")).unwrap_or_default(),
        comm,
    )
}

/// `title`, from the bytes of `/proc/PID/cmdline` and the process's comm.
pub fn title_of(cmdline: &[u8], comm: &[u8]) -> String {
    let mut words = cmdline.split(|&b| b == 0).filter(|w| !w.is_empty());
    let Some(first) = words.next() else {
        return crate::text::escape_bytes(comm);
    };
    // A path as the program: its base name. Not in a rewritten title
    // (`nginx: master process /usr/sbin/nginx`), whose words before the
    // last slash have spaces between them.
    let program = match first.iter().rposition(|&b| b == b'/') {
        Some(slash) if !first.get(..slash).unwrap_or_default().contains(&b' ') => {
            first.get(slash + 1..).unwrap_or(first)
        }
        _ => first,
    };
    let title = std::iter::once(program)
        .chain(words)
        .collect::<Vec<_>>()
        .join(&b' ');
    let title = title.trim_ascii_end();
    if title.len() <= TITLE_MAX {
        return crate::text::escape_bytes(title);
    }
    let cut = crate::text::char_start(title, TITLE_MAX - 3);
    crate::text::escape_bytes(title.get(..cut).unwrap_or(title)) + "..."
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
    let parent = nix::unistd::getppid().as_raw();
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
    if std::path::Path::new(program).file_name() != Some(std::ffi::OsStr::new(VIGIL)) {
        let _ = nix::sys::prctl::set_name(c"vigil");
    }
}

/// Whether /proc is mounted and belongs to vigil's own PID namespace. Under
/// `unshare --pid` without `--mount-proc`, /proc still shows the host's
/// processes, and acting on it would mean acting on strangers.
pub fn available() -> bool {
    let me = std::process::id().to_string();
    read_bytes("/proc/self/stat")
        .is_some_and(|stat| stat.split(|&b| b == b' ').next() == Some(me.as_bytes()))
}

/// A process as `/proc/PID/stat` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stat {
    pub pid: Pid,
    pub ppid: Pid,
    pub pgrp: Pid,
    /// `R`, `S`, `D`, `T`...
    pub state: char,
    pub comm: Vec<u8>,
}

/// `/proc/PID/stat`, `None` for a zombie (it is dead already; only reaping
/// is left to do) and for a kernel thread.
fn stat(pid: Pid) -> Option<Stat> {
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
/// The command name sits in parentheses and may itself hold any byte but
/// NUL (spaces, parentheses, newlines, bytes that are not UTF-8), so the
/// fields after it are found from the last `)`.
pub fn parse_stat(pid: Pid, stat: &[u8]) -> Option<Stat> {
    let open = stat.iter().position(|&b| b == b'(')?;
    let close = stat.iter().rposition(|&b| b == b')')?;
    let comm = stat.get(open + 1..close)?;
    // Everything after the name is ASCII digits, letters and spaces.
    let rest = std::str::from_utf8(stat.get(close + 1..)?).ok()?;
    let mut rest = rest.split_whitespace();
    let state = rest.next()?.chars().next()?;
    if state == 'Z' {
        return None;
    }
    let ppid = Pid::from_raw(rest.next()?.parse().ok()?);
    let pgrp = Pid::from_raw(rest.next()?.parse().ok()?);
    // session, tty_nr and tpgid come before the flags.
    let flags: u64 = rest.nth(3)?.parse().ok()?;
    if flags & PF_KTHREAD != 0 {
        return None;
    }
    Some(Stat {
        pid,
        ppid,
        pgrp,
        state,
        comm: comm.to_vec(),
    })
}

/// The directory position from which /proc's root lists its processes:
/// its own files (`cpuinfo`, `self`...) come before it. The kernel walks
/// those one by one, slowly when the walk is cold, as at vigil's exit.
const PROCESS_ENTRIES: libc::off_t = 258;

/// /proc's root, opened at start and kept, as PID 1: the drain lists it
/// at every exit, and a listing then pays neither the path's lookup nor
/// the open. Kept only when /proc is vigil's own namespace's
/// (`available`): the descriptor holds on to that procfs, whatever is
/// mounted on /proc later.
static ROOT: OnceLock<OwnedFd> = OnceLock::new();

/// Opens /proc's root and keeps it (`ROOT`), if it is vigil's own.
pub fn keep_root() {
    if available()
        && let Ok(root) = open_root()
    {
        let _ = ROOT.set(root);
    }
}

fn open_root() -> Result<OwnedFd, Errno> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    open(c"/proc", flags, Mode::empty())
}

/// Every pid in /proc but `me`, vigil's own.
fn other_pids(me: Pid) -> Vec<Pid> {
    others_listed(me, |from| match ROOT.get() {
        Some(root) => numbered(root.as_fd(), from),
        None => numbered(open_root()?.as_fd(), from),
    })
}

/// Every pid but `me` that `listing` gives from a directory position on.
/// A listing from `PROCESS_ENTRIES` that does not hold vigil itself is
/// taken for a /proc whose positions differ, and /proc is listed whole.
/// A whole listing that fails is tried again, twice at most: taken for an
/// empty one, it would leave processes out of the drain and the report.
/// One without vigil itself has failed too, though nothing said so.
fn others_listed(me: Pid, listing: impl Fn(libc::off_t) -> Result<Vec<i32>, Errno>) -> Vec<Pid> {
    let list = |from| {
        listing(from)
            .ok()
            .filter(|pids| pids.contains(&me.as_raw()))
    };
    let pids = list(PROCESS_ENTRIES)
        .or_else(|| (0..3).find_map(|_| list(0)))
        .unwrap_or_default();
    pids.into_iter()
        .map(Pid::from_raw)
        .filter(|&pid| pid != me)
        .collect()
}

/// The processes vigil is answerable for, itself excluded, as /proc
/// shows them. Empty when /proc cannot be trusted (see `available`),
/// which only a listing that holds more than vigil needs to ask.
pub fn answerable(role: Role) -> Vec<Stat> {
    let me = Pid::this();
    let others = other_pids(me);
    if others.is_empty() || !available() {
        return Vec::new();
    }
    let table: Vec<Stat> = others.into_iter().filter_map(stat).collect();
    if role == Role::Pid1 {
        return table;
    }
    // Descendants: grow the set from vigil outwards until it stops growing.
    let mut found = HashSet::from([me]);
    let mut result = Vec::new();
    let mut grew = true;
    while grew {
        grew = false;
        for entry in &table {
            if found.contains(&entry.ppid) && found.insert(entry.pid) {
                result.push(entry.clone());
                grew = true;
            }
        }
    }
    result
}

/// Whether any process vigil answers for is left that is no child of
/// vigil's: as PID 1, one that joined the namespace from outside (`docker
/// exec`); otherwise there is none (vigil, a subreaper, has no descendant
/// once it has no child). Read from /proc, which in a container with
/// nothing left lists vigil alone; not with `kill(-1, 0)`, which the
/// kernel answers by walking every process of the machine, not only the
/// namespace's (docs/design.md, "Whether anything is left").
pub fn others_left(role: Role) -> bool {
    role == Role::Pid1 && !answerable(role).is_empty()
}

/// `answerable`, each by pid and title.
pub fn others(role: Role) -> Vec<Proc> {
    answerable(role)
        .into_iter()
        .map(|s| Proc {
            pid: s.pid,
            name: title(s.pid, &s.comm),
        })
        .collect()
}

/// A process still running, for the line that says what the stop waits
/// for: by pid, title and state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Running {
    pub stat: Stat,
    pub title: String,
}

/// `answerable`, each with its title.
pub fn running(role: Role) -> Vec<Running> {
    answerable(role)
        .into_iter()
        .map(|stat| Running {
            title: title(stat.pid, &stat.comm),
            stat,
        })
        .collect()
}

/// Sends `signals`, in order, to every process vigil is answerable for and
/// returns the ones /proc listed. As PID 1 this is `kill(-1)`, which the
/// kernel applies to the whole namespace even without /proc; otherwise each
/// descendant is signalled by pid, plus the `known` groups (child, hooks) so
/// that at least those are reached when /proc is missing.
pub fn signal_all(role: Role, signals: &[Signal], known: &[Target]) -> Vec<Proc> {
    let procs = others(role);
    for &signal in signals {
        // A kill(-1) that failed is tried again, and then the processes
        // are signalled one by one, as when not PID 1: it must not leave
        // anyone unsignalled.
        let broadcast = role == Role::Pid1 && (0..2).any(|_| signal_everyone(signal));
        if !broadcast {
            for target in known {
                signals::send(*target, signal);
            }
            for p in &procs {
                signals::send(Target::Process(p.pid), signal);
            }
        }
    }
    procs
}

/// `kill(-1, signal)`, which as PID 1 reaches every other process of the
/// namespace: whether it did (ESRCH, nobody left, counts).
fn signal_everyone(signal: Signal) -> bool {
    // As PID 1, -1 means every other process of this namespace; anywhere
    // else it would reach every process the user may signal on the machine,
    // which is why only `signal_all` calls this, and only for `Role::Pid1`.
    matches!(
        crate::sys::signal::kill(-1, signal.0),
        Ok(()) | Err(nix::errno::Errno::ESRCH)
    )
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
                read_bytes(&path).as_deref(),
                Some(text.as_bytes()),
                "{len} bytes"
            );
        }
        std::fs::write(dir.join("bad"), b"caf\xe9").unwrap();
        assert_eq!(read_bytes(dir.join("bad")), Some(b"caf\xe9".to_vec()));
        assert_eq!(read_bytes(dir.join("missing")), None);
        // A kernel-made file, which says its size is 0.
        let stat = String::from_utf8(read_bytes("/proc/self/stat").unwrap()).unwrap();
        assert!(
            stat.starts_with(&format!("{} (", std::process::id())),
            "{stat}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_listing_from_the_process_entries_holds_every_process() {
        let mut children: Vec<_> = (0..3)
            .map(|_| {
                std::process::Command::new("sleep")
                    .arg("30")
                    .spawn()
                    .unwrap()
            })
            .collect();
        let listed = numbered(open_root().unwrap().as_fd(), PROCESS_ENTRIES).unwrap();
        let mut wanted: Vec<i32> = children.iter().map(|c| c.id() as i32).collect();
        wanted.push(std::process::id() as i32);
        for child in &mut children {
            child.kill().unwrap();
            child.wait().unwrap();
        }
        for pid in wanted {
            assert!(listed.contains(&pid), "{pid} not in {listed:?}");
        }
    }

    #[test]
    fn a_listing_without_vigil_is_taken_again_whole() {
        let me = Pid::from_raw(1);
        let asked = std::cell::RefCell::new(Vec::new());
        let listing = |answers: [Result<Vec<i32>, Errno>; 2]| {
            asked.borrow_mut().clear();
            let got = others_listed(me, |from| {
                asked.borrow_mut().push(from);
                answers[usize::from(from == 0)].clone()
            });
            (got, asked.borrow().clone())
        };
        let whole = Ok(vec![1, 5, 9]);
        let pids = |raw: &[i32]| raw.iter().copied().map(Pid::from_raw).collect::<Vec<_>>();
        // Positions as /proc's: the listing from the processes on is enough.
        let (got, asked_for) = listing([Ok(vec![1, 5]), whole.clone()]);
        assert_eq!((got, asked_for), (pids(&[5]), vec![PROCESS_ENTRIES]));
        // Positions of another kind (vigil missing), or no seeking at all.
        for answer in [Ok(vec![9]), Ok(vec![]), Err(Errno::EINVAL)] {
            let (got, asked_for) = listing([answer, whole.clone()]);
            assert_eq!((got, asked_for), (pids(&[5, 9]), vec![PROCESS_ENTRIES, 0]));
        }
        // A whole listing that keeps failing is tried three times.
        let (got, asked_for) = listing([Ok(vec![]), Err(Errno::EIO)]);
        assert_eq!((got, asked_for), (vec![], vec![PROCESS_ENTRIES, 0, 0, 0]));
    }

    #[test]
    fn a_listing_holds_every_numbered_entry_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("vigil-numbered-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // More records than one read of the stack buffer holds, names of
        // every length the records pad differently, and names that are no
        // numbers.
        let mut want: Vec<i32> = (1..=700).map(|i| i * 7).collect();
        for n in &want {
            std::fs::write(dir.join(n.to_string()), "").unwrap();
        }
        for other in ["abc", "12x", "-", "99999999999", &"9".repeat(200)] {
            std::fs::write(dir.join(other), "").unwrap();
        }
        std::fs::create_dir(dir.join("31")).unwrap();
        want.push(31);
        let mut got = numbered(std::fs::File::open(&dir).unwrap().as_fd(), 0).unwrap();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want);
        std::fs::remove_dir_all(&dir).unwrap();
        // Listed only if vigil was, and vigil left out.
        let others = other_pids(Pid::this());
        assert!(!others.is_empty() && !others.contains(&Pid::this()));
    }

    #[test]
    fn reads_own_stat() {
        assert!(available());
        let me = Pid::this();
        let stat = stat(me).unwrap();
        assert!(!stat.comm.is_empty());
        assert!(stat.ppid.as_raw() > 0);
        assert!(!name(me).unwrap().is_empty());
    }

    /// As the init of a whole machine, /proc shows the kernel's threads
    /// too (here as a machine's /proc/2/stat and /proc/7/stat have them):
    /// they are nobody's to drain.
    #[test]
    fn kernel_threads_are_no_leftovers() {
        let kthreadd = b"2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 24";
        let worker = b"7 (kworker/0:0-rcu_gp) I 2 0 0 0 -1 69238880 0 0 0 0 0 0 0 0 0 -20 1";
        assert_eq!(parse_stat(Pid::from_raw(2), kthreadd), None);
        assert_eq!(parse_stat(Pid::from_raw(7), worker), None);
        let sleep = b"255 (sleep) S 1 255 78 0 -1 4194560 90 0 0 0 0 0 0 0 20 0 1 0 650";
        let stat = parse_stat(Pid::from_raw(255), sleep).unwrap();
        assert_eq!(
            (stat.ppid.as_raw(), stat.pgrp.as_raw(), stat.state),
            (1, 255, 'S')
        );
        assert_eq!(stat.comm, b"sleep");
    }

    /// A name may hold any byte but NUL: none of them hides the process.
    #[test]
    fn odd_names_are_read() {
        let cases: [&[u8]; 5] = [
            b"datenbank-gr\xc3\xb6\xc3",
            b"a) S 1 2 (b",
            b"two\nlines",
            b"with space",
            b"",
        ];
        for comm in cases {
            let mut line = b"42 (".to_vec();
            line.extend_from_slice(comm);
            line.extend_from_slice(b") S 7 42 42 0 -1 4194560 90 0 0 0 0 0 0 0 20 0 1 0 650\n");
            let stat = parse_stat(Pid::from_raw(42), &line).unwrap();
            assert_eq!((stat.comm.as_slice(), stat.ppid.as_raw()), (comm, 7));
        }
    }

    /// A process's title is its command line, the program's directory left
    /// out; its comm when the command line is empty; escaped, and cut.
    #[test]
    fn titles_come_from_the_command_line() {
        let dir = std::env::temp_dir().join(format!("vigil-title-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let program = dir.join("two\nlines");
        // A link, not a copy: a copy's write descriptor, inherited by a
        // process another test forks meanwhile, would make its exec fail
        // with ETXTBSY.
        let _ = std::fs::remove_file(&program);
        std::os::unix::fs::symlink("/bin/sleep", &program).unwrap();
        // sleep adds up its arguments: forty more seconds make it long.
        let mut child = std::process::Command::new(&program)
            .arg("1000")
            .args(["1"; 40])
            .spawn()
            .unwrap();
        let pid = Pid::from_raw(child.id() as i32);
        // Until the exec is done, the command line is the test binary's,
        // then for a moment empty (the comm is there first).
        let mut title = String::new();
        for _ in 0..200 {
            title = name(pid).unwrap();
            if title.starts_with("two") && title.contains("1000") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(title.starts_with("two\\nlines 1000 1 1 1"), "{title}");
        assert!(title.ends_with("..."), "{title}");
        assert_eq!(title.len(), TITLE_MAX + 1, "one escaped newline: {title}");
    }

    /// The same on this machine's own /proc, where the tests do not run in
    /// a PID namespace of their own (where they do, there is nothing to see).
    #[test]
    fn lists_no_kernel_thread() {
        let listed = others(Role::Pid1);
        assert!(
            !listed
                .iter()
                .any(|p| p.pid.as_raw() == 2 && p.name == "kthreadd"),
            "{listed:?}"
        );
    }

    #[test]
    fn finds_a_descendant() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let pid = Pid::from_raw(child.id() as i32);
        // Between the fork and the exec the title is the test binary's,
        // then for a moment only the comm: wait for the exec to be done.
        let mut found = Vec::new();
        for _ in 0..200 {
            found = others(Role::Subreaper);
            if found.iter().any(|p| p.pid == pid && p.name == "sleep 5") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            found.iter().any(|p| p.pid == pid && p.name == "sleep 5"),
            "{found:?}"
        );
    }
}
