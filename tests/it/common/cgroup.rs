//! A cgroup made for one test, removed when dropped: a memory cgroup with a
//! limit (for an OOM kill), a pids cgroup with a maximum (for a fork bomb).
//! vigil is moved into it before it starts, so everything it runs is in it.

use super::{Vigil, kill, read_trimmed, wait_until};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A memory cgroup made for one test, as a child of the test's own memory
/// cgroup (v1 `memory` hierarchy, else v2), removed when dropped (once no
/// process is left in it).
pub struct MemCgroup {
    dir: PathBuf,
}

impl MemCgroup {
    /// Makes the cgroup, with a memory limit (and no swap) if asked. `Err`
    /// says why it cannot be done here.
    pub fn create(limit: Option<u64>) -> Result<MemCgroup, String> {
        static N: AtomicU32 = AtomicU32::new(0);
        let (parent, v1) = own_memory_cgroup()?;
        let name = format!(
            "vigil-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let dir = parent.join(name);
        fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        let cg = MemCgroup { dir };
        let (limit_file, swap_file, swap_value) = if v1 {
            (
                "memory.limit_in_bytes",
                "memory.memsw.limit_in_bytes",
                limit,
            )
        } else {
            ("memory.max", "memory.swap.max", limit.map(|_| 0))
        };
        if !cg.dir.join(limit_file).exists() {
            return Err(format!(
                "{} has no {limit_file}: the memory controller is not enabled there",
                cg.dir.display()
            ));
        }
        if let Some(bytes) = limit {
            fs::write(cg.dir.join(limit_file), bytes.to_string())
                .map_err(|e| format!("cannot set {limit_file}: {e}"))?;
            // Without swap accounting the limit alone has to do.
            if let Some(swap) = swap_value {
                let _ = fs::write(cg.dir.join(swap_file), swap.to_string());
            }
        }
        Ok(cg)
    }

    /// A wrapper that moves itself into the cgroup and then becomes
    /// `unshare --pid --fork --mount-proc -- VIGIL ...`: vigil is PID 1 of a
    /// new namespace inside the cgroup from its first instruction.
    pub fn pid1(&self) -> Vigil {
        let prefix: Vec<OsString> = vec![
            "sh".into(),
            "-c".into(),
            r#"echo $$ > "$0" && exec unshare --pid --fork --mount-proc -- "$@""#.into(),
            self.dir.join("cgroup.procs").into(),
        ];
        Vigil::wrapped(&prefix)
    }

    pub fn procs(&self) -> String {
        read_trimmed(&self.dir.join("cgroup.procs"))
    }
}

impl Drop for MemCgroup {
    fn drop(&mut self) {
        wait_until(Duration::from_secs(10), || self.procs().is_empty());
        let removed = wait_until(Duration::from_secs(10), || {
            fs::remove_dir(&self.dir).is_ok()
        });
        if !removed {
            eprintln!(
                "could not remove the test cgroup {} (processes: {})",
                self.dir.display(),
                self.procs()
            );
        }
    }
}

/// The directory of this process's memory cgroup and whether it is v1.
fn own_memory_cgroup() -> Result<(PathBuf, bool), String> {
    let cgroups = fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
    // (root of the hierarchy the mount shows, mount point) of the first
    // mount that `wanted(fstype, super options)` accepts.
    let mount = |wanted: &dyn Fn(&str, &str) -> bool| {
        mountinfo.lines().find_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let right: Vec<&str> = right.split(' ').collect();
            let (fstype, options) = (*right.first()?, *right.get(2).unwrap_or(&""));
            let (root, point) = (left.get(3)?, left.get(4)?);
            wanted(fstype, options).then(|| (root.to_string(), point.to_string()))
        })
    };
    let under = |(root, point): (String, String), path: &str| {
        let rel = path.strip_prefix(root.as_str()).unwrap_or(path);
        Path::new(&point).join(rel.trim_start_matches('/'))
    };
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = match (parts.next(), parts.next(), parts.next()) {
            (Some(a), Some(b), Some(c)) => (a, b, c),
            _ => continue,
        };
        if controllers.split(',').any(|c| c == "memory") {
            let m = mount(&|fs, opts| fs == "cgroup" && opts.split(',').any(|o| o == "memory"))
                .ok_or("the v1 memory hierarchy is not mounted")?;
            return Ok((under(m, path), true));
        }
    }
    let path = cgroups
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or("no memory cgroup (neither v1 memory nor v2)")?;
    let m = mount(&|fs, _| fs == "cgroup2").ok_or("cgroup2 is not mounted")?;
    Ok((under(m, path), false))
}

/// A cgroup v1 pids group, removed on drop (after killing what is left in it,
/// by pid).
pub struct PidsCgroup {
    pub path: PathBuf,
}

impl PidsCgroup {
    /// A child of the v1 pids hierarchy (/sys/fs/cgroup/pids), or else of
    /// the v2 root (/sys/fs/cgroup) when the pids controller can be enabled
    /// there.
    pub fn create(max: u32) -> Result<PidsCgroup, String> {
        let v1 = Path::new("/sys/fs/cgroup/pids");
        let v2 = Path::new("/sys/fs/cgroup");
        let parent = if v1.join("cgroup.procs").exists() {
            v1
        } else if v2.join("cgroup.controllers").exists() {
            let has = |file: &str| {
                std::fs::read_to_string(v2.join(file))
                    .unwrap_or_default()
                    .split_whitespace()
                    .any(|c| c == "pids")
            };
            if !has("cgroup.controllers") {
                return Err("cgroup v2 without the pids controller".into());
            }
            if !has("cgroup.subtree_control") {
                std::fs::write(v2.join("cgroup.subtree_control"), "+pids")
                    .map_err(|e| format!("cannot enable pids in {}: {e}", v2.display()))?;
            }
            v2
        } else {
            return Err("no cgroup v1 pids hierarchy and no cgroup v2".into());
        };
        let path = parent.join(format!(
            "vigil-test-pids-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos())
        ));
        std::fs::create_dir(&path).map_err(|e| format!("mkdir {}: {e}", path.display()))?;
        let cg = PidsCgroup { path };
        std::fs::write(cg.path.join("pids.max"), max.to_string())
            .map_err(|e| format!("{}/pids.max: {e}", cg.path.display()))?;
        Ok(cg)
    }
    /// vigil as PID 1 of a new namespace inside this cgroup from its first
    /// instruction (as `MemCgroup::pid1`). `unshare` stays, as the
    /// namespace's parent: it counts against the limit too.
    pub fn pid1(&self) -> Vigil {
        self.wrapper("exec unshare --pid --fork --mount-proc -- \"$@\"")
    }

    /// vigil as a plain process inside this cgroup (the only one there).
    pub fn plain(&self) -> Vigil {
        self.wrapper("exec \"$@\"")
    }

    fn wrapper(&self, then: &str) -> Vigil {
        let prefix: Vec<OsString> = vec![
            "sh".into(),
            "-c".into(),
            format!("echo $$ > \"$0\" && {then}").into(),
            self.path.join("cgroup.procs").into(),
        ];
        Vigil::wrapped(&prefix)
    }

    pub fn procs(&self) -> Vec<i32> {
        std::fs::read_to_string(self.path.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }
    pub fn max_hits(&self) -> u64 {
        std::fs::read_to_string(self.path.join("pids.events"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("max ")?.trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        wait_until(Duration::from_secs(2), || {
            let procs = self.procs();
            for &p in &procs {
                let _ = kill(p, libc::SIGKILL);
            }
            procs.is_empty()
        });
        let _ = std::fs::remove_dir(&self.path);
    }
}
