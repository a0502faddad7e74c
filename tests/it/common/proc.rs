//! Looking at processes through /proc: state, parent, process group,
//! signal sets, memory, children and descendants, zombies, and the members
//! of a PID namespace (by host pid).

use super::sig_bit;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Send a signal; Err carries the OS error (ESRCH when the pid is gone).
pub fn kill(pid: i32, sig: i32) -> std::io::Result<()> {
    assert!(pid > 0, "refusing kill({pid}, {sig})");
    if unsafe { libc::kill(pid, sig) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Fields of /proc/PID/stat that tests need.
#[derive(Debug, Clone)]
pub struct Stat {
    pub pid: i32,
    pub comm: String,
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    /// Foreground process group of the controlling terminal (-1: none).
    pub tpgid: i32,
    pub starttime: u64,
}

pub fn stat(pid: i32) -> Option<Stat> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    let comm = s[open + 1..close].to_string();
    let f: Vec<&str> = s[close + 2..].split_whitespace().collect();
    // f[0] = state (field 3), f[1] = ppid (4), pgrp (5), session (6),
    // tty_nr (7), tpgid (8), ... starttime (22) = f[19]
    Some(Stat {
        pid,
        comm,
        state: f.first()?.chars().next()?,
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        session: f.get(3)?.parse().ok()?,
        tpgid: f.get(5)?.parse().ok()?,
        starttime: f.get(19)?.parse().ok()?,
    })
}

/// A process's scheduling, as `sched_getattr` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sched {
    pub policy: u32,
    pub nice: i32,
    /// The time slice in nanoseconds (SCHED_OTHER and SCHED_BATCH); 0 on a
    /// kernel before 6.12, which reports none.
    pub slice_ns: u64,
    pub reset_on_fork: bool,
}

pub fn sched(pid: i32) -> Option<Sched> {
    // struct sched_attr as of Linux 3.14: size, policy (u32), flags (u64),
    // nice (i32), priority (u32), runtime, deadline, period (u64): 48 bytes.
    // The tests' own copy of the layout, read with the raw call (libc has
    // no wrapper).
    #[repr(C)]
    #[derive(Default)]
    struct Attr {
        size: u32,
        policy: u32,
        flags: u64,
        nice: i32,
        priority: u32,
        runtime: u64,
        deadline: u64,
        period: u64,
    }
    let mut a = Attr::default();
    // SAFETY: the kernel writes at most 48 bytes into `a`, which is 48 long.
    let r = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            pid,
            &mut a as *mut Attr,
            48u32,
            0u32,
        )
    };
    (r == 0).then_some(Sched {
        policy: a.policy,
        nice: a.nice,
        slice_ns: a.runtime,
        reset_on_fork: a.flags & 1 != 0,
    })
}

/// Process state letter (R, S, D, T, t, Z, ...) or None when gone.
pub fn state(pid: i32) -> Option<char> {
    stat(pid).map(|s| s.state)
}

/// Exists and is not a zombie.
pub fn alive(pid: i32) -> bool {
    matches!(state(pid), Some(c) if c != 'Z' && c != 'X')
}

/// Gone from /proc entirely (exited and reaped).
pub fn gone(pid: i32) -> bool {
    !Path::new(&format!("/proc/{pid}")).exists()
}

/// Where in the kernel `pid` sleeps (`/proc/PID/wchan`: `pipe_write` for
/// a writer blocked on a full pipe (`anon_pipe_write` on newer kernels),
/// `do_sys_poll`, ...); None when it is
/// gone.
pub fn wchan(pid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/wchan")).ok()
}

/// Whether `pid` is blocked writing to a full pipe.
pub fn blocked_on_a_full_pipe(pid: i32) -> bool {
    wchan(pid).is_some_and(|w| w.ends_with("pipe_write"))
}

pub fn comm(pid: i32) -> Option<String> {
    stat(pid).map(|s| s.comm)
}

/// Raw /proc/PID/status.
pub fn status(pid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/status")).ok()
}

/// One field of a /proc/PID/status text (value trimmed), e.g. "SigBlk".
pub fn status_text_field(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == key).then(|| v.trim().to_string())
    })
}

/// One field of /proc/PID/status, e.g. `status_field(pid, "VmHWM")` -> "1234 kB".
pub fn status_field(pid: i32, key: &str) -> Option<String> {
    status_text_field(&status(pid)?, key)
}

/// A hex signal set field (SigBlk, SigIgn, SigCgt, SigPnd, ShdPnd) as a u64
/// where bit N-1 stands for signal N.
pub fn sigset_field(pid: i32, key: &str) -> Option<u64> {
    u64::from_str_radix(&status_field(pid, key)?, 16).ok()
}

pub fn sigset_text_field(text: &str, key: &str) -> Option<u64> {
    u64::from_str_radix(&status_text_field(text, key)?, 16).ok()
}

/// Signal numbers in a sigset value.
pub fn sigs_in(set: u64) -> Vec<i32> {
    (1..=64).filter(|&s| set & sig_bit(s) != 0).collect()
}

/// Peak resident set size in kB.
pub fn vm_hwm_kb(pid: i32) -> Option<u64> {
    status_field(pid, "VmHWM")?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The CPU time a process has used, user and system (`utime` and `stime`
/// of /proc/PID/stat, whole clock ticks); a zombie's is final. None when
/// it is gone.
pub fn cpu_time(pid: i32) -> Option<std::time::Duration> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<&str> = s.get(s.rfind(')')? + 2..)?.split_whitespace().collect();
    // utime and stime are fields 14 and 15; f[0] is field 3.
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(std::time::Duration::from_nanos(
        ticks * 1_000_000_000 / per_second,
    ))
}

/// (voluntary, nonvoluntary) context switches summed over all threads.
pub fn ctxt_switches(pid: i32) -> Option<(u64, u64)> {
    let mut vol = 0;
    let mut nonvol = 0;
    for e in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let text = std::fs::read_to_string(e.path().join("status")).ok()?;
        vol += status_text_field(&text, "voluntary_ctxt_switches")?
            .parse::<u64>()
            .ok()?;
        nonvol += status_text_field(&text, "nonvoluntary_ctxt_switches")?
            .parse::<u64>()
            .ok()?;
    }
    Some((vol, nonvol))
}

/// Direct children, from /proc/PID/task/*/children.
pub fn children(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for e in rd.flatten() {
            if let Ok(s) = std::fs::read_to_string(e.path().join("children")) {
                out.extend(s.split_whitespace().filter_map(|w| w.parse::<i32>().ok()));
            }
        }
    }
    out
}

/// Every process on the machine as (pid, ppid, state).
pub fn process_table() -> Vec<(i32, i32, char)> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            if let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok())
                && let Some(st) = stat(pid)
            {
                out.push((pid, st.ppid, st.state));
            }
        }
    }
    out
}

/// The processes on the machine whose name (`comm`) is `name`: a
/// daemon's, to read its CPU time (`dockerd`, `containerd`).
pub fn pids_named(name: &str) -> Vec<i32> {
    process_table()
        .into_iter()
        .map(|(pid, _, _)| pid)
        .filter(|&pid| comm(pid).as_deref() == Some(name))
        .collect()
}

/// All descendants of `pid` (not `pid` itself), by parent links.
pub fn descendants(pid: i32) -> Vec<i32> {
    descendants_in(&process_table(), &[pid])
}

pub(crate) fn descendants_in(table: &[(i32, i32, char)], roots: &[i32]) -> Vec<i32> {
    let mut kids: HashMap<i32, Vec<i32>> = HashMap::new();
    for &(p, pp, _) in table {
        kids.entry(pp).or_default().push(p);
    }
    let mut out = Vec::new();
    let mut seen: HashSet<i32> = roots.iter().copied().collect();
    let mut stack: Vec<i32> = roots.to_vec();
    while let Some(p) = stack.pop() {
        if let Some(ks) = kids.get(&p) {
            for &k in ks {
                if seen.insert(k) {
                    out.push(k);
                    stack.push(k);
                }
            }
        }
    }
    out
}

/// The pids among `pids` that are zombies now.
pub fn zombies_among(pids: &[i32]) -> Vec<i32> {
    pids.iter()
        .copied()
        .filter(|&p| state(p) == Some('Z'))
        .collect()
}

/// Zombies among the descendants of `pid`.
pub fn zombie_descendants(pid: i32) -> Vec<i32> {
    let t = process_table();
    let d: HashSet<i32> = descendants_in(&t, &[pid]).into_iter().collect();
    t.iter()
        .filter(|(p, _, s)| *s == 'Z' && d.contains(p))
        .map(|(p, _, _)| *p)
        .collect()
}

fn pidns_of(pid: i32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/ns/pid")).ok()
}

/// Host pids of every process in the PID namespace `pid` belongs to
/// (matched by /proc/X/ns/pid, plus `pid`'s descendants, which covers
/// zombies whose namespace link can no longer be read). For vigil as PID 1
/// that is vigil itself and everything under it.
pub fn pidns_members(pid: i32) -> Vec<i32> {
    let Some(ns) = pidns_of(pid) else {
        return Vec::new();
    };
    let t = process_table();
    let mut set: HashSet<i32> = descendants_in(&t, &[pid]).into_iter().collect();
    set.insert(pid);
    for &(p, _, _) in &t {
        if !set.contains(&p) && pidns_of(p).as_ref() == Some(&ns) {
            set.insert(p);
        }
    }
    let mut v: Vec<i32> = set.into_iter().collect();
    v.sort();
    v
}

/// Zombies in the PID namespace `pid` belongs to.
pub fn zombies_in_pidns(pid: i32) -> Vec<i32> {
    zombies_among(&pidns_members(pid))
}

/// `NSpid` of /proc/PID/status: the pid in each nested namespace, outermost first.
pub fn nspid(pid: i32) -> Vec<i32> {
    status_field(pid, "NSpid")
        .map(|v| {
            v.split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// (VmRSS, VmHWM) in kB.
pub fn memory(pid: i32) -> (u64, u64) {
    let kb = |k: &str| -> u64 {
        status_field(pid, k)
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("no {k} for pid {pid}"))
    };
    (kb("VmRSS"), kb("VmHWM"))
}
