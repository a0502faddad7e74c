//! The container's memory cgroup: its OOM-kill counter, so that a SIGKILL
//! can be told apart (the kernel's OOM killer, or somebody's `kill -9`);
//! its limit; whether an OOM kill takes the whole group (`memory.oom.group`,
//! which the kubelet sets on cgroup v2, so that vigil dies with its child);
//! and on cgroup v2 the changes of `memory.events`, which the kernel
//! signals through inotify without being polled.
//!
//! cgroup v2 counts in `memory.events` (`max`, `oom`, `oom_kill`,
//! `oom_group_kill`), v1 in `memory.oom_control` (`oom_kill`, kernel 4.13+).
//! The counter is read when vigil exits, whatever the child's status: the
//! OOM killer may have picked a grandchild while the child itself exited 0.
//!
//! As PID 1, vigil is the first process of a container whose cgroup was
//! made for it, so the counts at start are zero by construction, and the
//! files are only found and opened at start; anywhere else (a CI wrapper,
//! a shared cgroup) vigil reads the counts at start too and reports the
//! difference.
//!
//! Finding the files is cheap in the usual layouts: vigil's cgroup comes
//! from /proc/self/cgroup, and the hierarchy is where every container
//! runtime and systemd mount it, /sys/fs/cgroup (v2) or
//! /sys/fs/cgroup/memory (v1), showing either the whole tree (a host) or
//! the container's own cgroup as its root (a container). Only when neither
//! fits does vigil read /proc/self/mountinfo, which is slow to generate.

use std::fs::File;
use std::os::unix::fs::FileExt;

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use std::path::{Path, PathBuf};

use crate::log;
use crate::log::event::Event;
use crate::log::facts::MemoryEvents;
use crate::procs::{Role, read_bytes};

/// The counts in `text`; a key that is not there counts 0.
pub fn parse_events(text: &[u8]) -> MemoryEvents {
    MemoryEvents {
        max: count(text, b"max").unwrap_or(0),
        oom: count(text, b"oom").unwrap_or(0),
        oom_kill: count(text, b"oom_kill").unwrap_or(0),
        oom_group_kill: count(text, b"oom_group_kill").unwrap_or(0),
    }
}

/// vigil's memory cgroup.
#[derive(Debug)]
pub struct Memory {
    /// `memory.events` (v2) or `memory.oom_control` (v1), open
    /// (close-on-exec, so the child never sees it).
    counter: File,
    path: PathBuf,
    v1: bool,
    /// The counts at start (0 as PID 1 of a new cgroup).
    at_start: MemoryEvents,
    /// `memory.max` (v2) or `memory.limit_in_bytes` (v1), in bytes; `None`
    /// when there is none.
    pub limit: Option<u64>,
    /// `memory.oom.group` is 1: an OOM kill takes every process of the
    /// group, vigil included.
    pub oom_group: bool,
}

impl Memory {
    /// Finds vigil's memory cgroup, and reads its counts unless vigil is
    /// PID 1; `None` without one (no /proc, no cgroupfs, an old kernel).
    pub fn find(role: Role) -> Option<Memory> {
        let (counter, path, v1) = open_counter_file()?;
        let dir = path.parent()?;
        let at_start = if role == Role::Pid1 {
            MemoryEvents::default()
        } else {
            let at_start = read_events(&counter)?;
            log::emit(&Event::OomCounter {
                path: &path,
                oom_kills: at_start.oom_kill,
            });
            at_start
        };
        let (limit_file, group_file) = if v1 {
            ("memory.limit_in_bytes", None)
        } else {
            ("memory.max", Some("memory.oom.group"))
        };
        // v1 says "no limit" with a huge number rather than `max`.
        let limit = read_text(dir.join(limit_file))
            .and_then(|text| text.trim().parse::<u64>().ok())
            .filter(|&bytes| bytes < 1 << 62);
        let oom_group = group_file
            .and_then(|name| read_text(dir.join(name)))
            .is_some_and(|text| text.trim() == "1");
        Some(Memory {
            counter,
            path,
            v1,
            at_start,
            limit,
            oom_group,
        })
    }

    /// The counts since vigil started.
    pub fn events(&self) -> MemoryEvents {
        read_events(&self.counter).map_or(MemoryEvents::default(), |now| now.since(self.at_start))
    }

    /// What tells of a change of `memory.events`: an inotify descriptor,
    /// readable when the kernel changed the file (it notifies with every
    /// count it moves). v2 only: v1's counter file is not notified.
    pub fn watch(&self) -> Option<Inotify> {
        if self.v1 {
            return None;
        }
        let inotify = Inotify::init(InitFlags::IN_CLOEXEC | InitFlags::IN_NONBLOCK).ok()?;
        inotify
            .add_watch(&self.path, AddWatchFlags::IN_MODIFY)
            .ok()?;
        Some(inotify)
    }
}

/// Where cgroupfs is mounted in the usual layouts: the v1 memory hierarchy
/// and the v2 unified one.
const V1_MOUNT: &str = "/sys/fs/cgroup/memory";
const V2_MOUNT: &str = "/sys/fs/cgroup";

/// Finds and opens the counter file. Each usual place is tried by opening
/// it, not by looking first: a lookup that fails costs the same as a test
/// for existence, and one that works needs no second one.
fn open_counter_file() -> Option<(File, PathBuf, bool)> {
    let cgroups = read_text("/proc/self/cgroup")?;
    let (path, v1) = own_cgroup(&cgroups)?;
    let mount = if v1 { V1_MOUNT } else { V2_MOUNT };
    let open = |path: PathBuf| File::open(&path).ok().map(|f| (f, path, v1));
    // The whole tree is mounted: vigil's cgroup is at its path.
    if let Some(found) = open(cgroup_file(mount, "/", &path, v1)) {
        return Some(found);
    }
    // The container's own cgroup is the mount's root (then the path above
    // does not exist): make sure by finding vigil in it.
    if holds_this_process(Path::new(mount))
        && let Some(found) = open(cgroup_file(mount, "/", "/", v1))
    {
        return Some(found);
    }
    let mountinfo = read_text("/proc/self/mountinfo")?;
    open(counter_file(&path, v1, &mountinfo)?)
}

/// vigil's memory cgroup path from /proc/self/cgroup, and whether it is v1's
/// (which wins when both exist, since that is where a v1 or hybrid host
/// enforces limits).
pub fn own_cgroup(cgroups: &str) -> Option<(String, bool)> {
    let mut v2 = None;
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if controllers.split(',').any(|c| c == "memory") {
            return Some((path.to_string(), true));
        } else if controllers.is_empty() {
            v2 = Some((path.to_string(), false));
        }
    }
    v2
}

/// A file that is text by construction (a cgroup's path, a limit, a list
/// of pids), read with `procs::read_bytes`: `None` when it is not UTF-8.
fn read_text(path: impl AsRef<Path>) -> Option<String> {
    String::from_utf8(read_bytes(path)?).ok()
}

/// Whether the cgroup directory lists vigil among its processes.
fn holds_this_process(dir: &Path) -> bool {
    let me = std::process::id().to_string();
    read_text(dir.join("cgroup.procs")).is_some_and(|procs| procs.lines().any(|p| p == me))
}

/// Reads the counts from the start of the open file (`pread`: the kernel
/// makes the text afresh for each read from offset 0).
fn read_events(file: &File) -> Option<MemoryEvents> {
    // The kernel makes the whole text in one read when the buffer can hold
    // it, and these files are under a hundred bytes: one read is all of it.
    let mut buffer = [0u8; 512];
    let len = file.read_at(&mut buffer, 0).ok()?;
    let text = buffer.get(..len)?;
    // A counter file without `oom_kill` is of a kernel too old to count.
    count(text, b"oom_kill")?;
    Some(parse_events(text))
}

/// The number on the `KEY N` line of a counter file's text (v1's
/// `oom_kill_disable` line is another key than `oom_kill`).
pub fn count(text: &[u8], key: &[u8]) -> Option<u64> {
    let value = text
        .split(|&b| b == b'\n')
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(b" "))?;
    let len = value.iter().take_while(|b| b.is_ascii_digit()).count();
    let digits = value.get(..len)?;
    // Digits alone: a number too large for u64 is no count either.
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// Works out the counter file of vigil's cgroup (`path`, in v1's memory
/// hierarchy or in v2's, as `own_cgroup` found it) from the text of
/// /proc/self/mountinfo, for layouts other than the usual ones.
pub fn counter_file(path: &str, v1: bool, mountinfo: &str) -> Option<PathBuf> {
    let (root, mount) = if v1 {
        find_mount(mountinfo, |fstype, options| {
            fstype == "cgroup" && options.split(',').any(|o| o == "memory")
        })?
    } else {
        find_mount(mountinfo, |fstype, _| fstype == "cgroup2")?
    };
    Some(cgroup_file(&mount, &root, path, v1))
}

/// Finds a mount by filesystem type and super options: returns the root of
/// the hierarchy it shows and where it is mounted. Only cgroup lines are
/// split into fields: a host can have hundreds of mounts.
fn find_mount(mountinfo: &str, wanted: impl Fn(&str, &str) -> bool) -> Option<(String, String)> {
    mountinfo
        .lines()
        .filter(|line| line.contains(" - cgroup"))
        .find_map(|line| {
            // "36 35 98:0 /root /mnt rw,noatime master:1 - cgroup cgroup rw,memory"
            let (left, right) = line.split_once(" - ")?;
            let mut left = left.split(' ').skip(3);
            let (root, mount) = (left.next()?, left.next()?);
            let mut right = right.split(' ');
            let fstype = right.next()?;
            let options = right.nth(1).unwrap_or("");
            wanted(fstype, options).then(|| (unescape(root), unescape(mount)))
        })
}

/// mountinfo escapes spaces and a few other bytes as octal `\040`.
fn unescape(text: &str) -> String {
    text.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// The counter file of cgroup `path` under a mount that shows the hierarchy
/// from `root` (a container usually sees its own cgroup as the mount root):
/// `memory.oom_control` in v1's memory hierarchy, `memory.events` in v2's.
/// Made with one allocation: it runs at every start.
fn cgroup_file(mount: &str, root: &str, path: &str, v1: bool) -> PathBuf {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let relative = relative.trim_start_matches('/');
    let name = if v1 {
        "memory.oom_control"
    } else {
        "memory.events"
    };
    let mut file = PathBuf::with_capacity(mount.len() + relative.len() + name.len() + 2);
    file.push(mount);
    file.push(relative);
    file.push(name);
    file
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// `counter_file` from the two texts, as `open_counter_file` uses it.
    fn counter_file_of(cgroups: &str, mountinfo: &str) -> Option<PathBuf> {
        let (path, v1) = own_cgroup(cgroups)?;
        counter_file(&path, v1, mountinfo)
    }

    #[test]
    fn text_files_are_utf8_or_nothing() {
        let dir = std::env::temp_dir().join(format!("vigil-cgroup-text-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("good"), "max\n").unwrap();
        fs::write(dir.join("bad"), b"caf\xe9").unwrap();
        assert_eq!(read_text(dir.join("good")).as_deref(), Some("max\n"));
        assert_eq!(read_text(dir.join("bad")), None, "not UTF-8");
        assert_eq!(read_text(dir.join("missing")), None);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn v1_inside_a_container() {
        let cgroups = "12:memory:/docker/abc\n11:cpu,cpuacct:/docker/abc\n0::/\n";
        let mountinfo =
            "100 90 0:40 /docker/abc /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory\n";
        assert_eq!(
            counter_file_of(cgroups, mountinfo).unwrap(),
            PathBuf::from("/sys/fs/cgroup/memory/memory.oom_control")
        );
    }

    #[test]
    fn v1_on_the_host() {
        let cgroups = "4:memory:/user.slice/test\n";
        let mountinfo = "30 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
        assert_eq!(
            counter_file_of(cgroups, mountinfo).unwrap(),
            PathBuf::from("/sys/fs/cgroup/memory/user.slice/test/memory.oom_control")
        );
    }

    #[test]
    fn v2_with_cgroup_namespace() {
        let cgroups = "0::/\n";
        let mountinfo = "50 40 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            counter_file_of(cgroups, mountinfo).unwrap(),
            PathBuf::from("/sys/fs/cgroup/memory.events")
        );
    }

    #[test]
    fn reads_the_counter() {
        let dir = std::env::temp_dir().join(format!("vigil-oom-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("memory.events");
        fs::write(&file, "low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n").unwrap();
        let open = File::open(&file).unwrap();
        let events = read_events(&open).unwrap();
        assert_eq!((events.max, events.oom, events.oom_kill), (3, 1, 2));
        // Read again through the same descriptor: it sees what is there now.
        fs::write(&file, "low 0\nhigh 0\nmax 3\noom 1\noom_kill 5\n").unwrap();
        assert_eq!(read_events(&open).map(|e| e.oom_kill), Some(5));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn finds_each_key_s_line_only() {
        let v1 = b"oom_kill_disable 1\nunder_oom 0\noom_kill 7\n";
        assert_eq!(count(v1, b"oom_kill"), Some(7));
        let v2 = b"low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 1\n";
        assert_eq!(
            parse_events(v2),
            MemoryEvents {
                max: 12,
                oom: 3,
                oom_kill: 2,
                oom_group_kill: 1
            }
        );
        assert_eq!(
            count(b"oom_kill 18446744073709551615", b"oom_kill"),
            Some(u64::MAX)
        );
        for bad in [
            &b"oom_kill_disable 1\nunder_oom 0\n"[..],
            b"oom_kill \n",
            b"oom_kill x\n",
            b"oom_kill 18446744073709551616\n",
            b"",
        ] {
            assert_eq!(
                count(bad, b"oom_kill"),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
