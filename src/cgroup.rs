//! The container's OOM-kill counter, so that a SIGKILL can be told apart:
//! the kernel's OOM killer, or somebody's `kill -9`.
//!
//! cgroup v2 counts in `memory.events` (`oom_kill N`), v1 in
//! `memory.oom_control` (`oom_kill N`, kernel 4.13+). vigil finds its own
//! memory cgroup from /proc/self/cgroup and where that hierarchy is mounted
//! from /proc/self/mountinfo, and compares the counter with its value at
//! start when a process dies of SIGKILL.
//!
//! As PID 1, vigil is the first process of a container whose cgroup was
//! made for it, so the count at start is zero by construction and the
//! lookup waits until a SIGKILL makes it worth doing: it costs about as much
//! as all the rest of vigil's start-up (mountinfo is slow to generate).
//! Anywhere else (a CI wrapper, a shared cgroup) vigil reads the counter at
//! start.

use std::path::{Path, PathBuf};

use crate::procs::read_text;

/// The counter file of vigil's memory cgroup and its value at start.
#[derive(Debug)]
pub struct OomCounter {
    file: PathBuf,
    at_start: u64,
}

impl OomCounter {
    /// Finds the counter and counts from its value now; `None` when there is
    /// no memory cgroup to read (no /proc, no cgroupfs mounted, an old kernel).
    pub fn open() -> Option<OomCounter> {
        let file = find_counter_file()?;
        let at_start = read_oom_kills(&file)?;
        log::debug!("OOM kills so far in {}: {at_start}", file.display());
        Some(OomCounter { file, at_start })
    }

    /// Finds the counter of a cgroup that was new when vigil started (vigil
    /// is its PID 1): every kill it counts happened since.
    pub fn open_from_zero() -> Option<OomCounter> {
        Some(OomCounter {
            file: find_counter_file()?,
            at_start: 0,
        })
    }

    /// How many OOM kills happened in the cgroup since vigil started.
    pub fn kills_since_start(&self) -> u64 {
        read_oom_kills(&self.file).map_or(0, |now| now.saturating_sub(self.at_start))
    }
}

fn find_counter_file() -> Option<PathBuf> {
    let cgroups = read_text("/proc/self/cgroup")?;
    let mountinfo = read_text("/proc/self/mountinfo")?;
    counter_file(&cgroups, &mountinfo)
}

fn read_oom_kills(file: &Path) -> Option<u64> {
    let text = read_text(file)?;
    text.lines()
        .find_map(|line| line.strip_prefix("oom_kill "))
        .and_then(|n| n.trim().parse().ok())
}

/// Works out the counter file from the texts of /proc/self/cgroup and
/// /proc/self/mountinfo. v1's memory hierarchy wins when both exist, since
/// that is where a v1 or hybrid host enforces limits.
fn counter_file(cgroups: &str, mountinfo: &str) -> Option<PathBuf> {
    let mut v1 = None;
    let mut v2 = None;
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if controllers.split(',').any(|c| c == "memory") {
            v1 = Some(path.to_string());
        } else if controllers.is_empty() {
            v2 = Some(path.to_string());
        }
    }
    if let Some(path) = v1 {
        let (root, mount) = find_mount(mountinfo, |fstype, options| {
            fstype == "cgroup" && options.split(',').any(|o| o == "memory")
        })?;
        return Some(join_cgroup(&mount, &root, &path).join("memory.oom_control"));
    }
    let path = v2?;
    let (root, mount) = find_mount(mountinfo, |fstype, _| fstype == "cgroup2")?;
    Some(join_cgroup(&mount, &root, &path).join("memory.events"))
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

/// The directory of cgroup `path` under a mount that shows the hierarchy
/// from `root` (a container usually sees its own cgroup as the mount root).
fn join_cgroup(mount: &str, root: &str, path: &str) -> PathBuf {
    let relative = if root == "/" {
        path
    } else {
        path.strip_prefix(root).unwrap_or(path)
    };
    Path::new(mount).join(relative.trim_start_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn v1_inside_a_container() {
        let cgroups = "12:memory:/docker/abc\n11:cpu,cpuacct:/docker/abc\n0::/\n";
        let mountinfo =
            "100 90 0:40 /docker/abc /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory\n";
        assert_eq!(
            counter_file(cgroups, mountinfo).unwrap(),
            PathBuf::from("/sys/fs/cgroup/memory/memory.oom_control")
        );
    }

    #[test]
    fn v1_on_the_host() {
        let cgroups = "4:memory:/user.slice/test\n";
        let mountinfo = "30 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
        assert_eq!(
            counter_file(cgroups, mountinfo).unwrap(),
            PathBuf::from("/sys/fs/cgroup/memory/user.slice/test/memory.oom_control")
        );
    }

    #[test]
    fn v2_with_cgroup_namespace() {
        let cgroups = "0::/\n";
        let mountinfo = "50 40 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            counter_file(cgroups, mountinfo).unwrap(),
            PathBuf::from("/sys/fs/cgroup/memory.events")
        );
    }

    #[test]
    fn reads_the_counter() {
        let dir = std::env::temp_dir().join(format!("vigil-oom-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("memory.events");
        fs::write(&file, "low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n").unwrap();
        assert_eq!(read_oom_kills(&file), Some(2));
        fs::remove_dir_all(&dir).unwrap();
    }
}
