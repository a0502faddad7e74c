//! Killing, by pid, everything a test started, when the test ends.

use super::{descendants_in, kill, process_table, stat};
use std::collections::HashSet;
use std::sync::Mutex;

/// Remembers the processes a test started (by pid and start time, so a
/// recycled pid is never hit) and, on drop or `kill_all`, SIGKILLs them and
/// all their descendants: first SIGSTOP the whole tree until it stops
/// growing (a stopped process cannot fork), then SIGKILL each pid. Never
/// uses kill(-1) or process-name matching.
#[derive(Default)]
pub struct ProcGuard {
    roots: Mutex<Vec<(i32, u64)>>,
}

impl ProcGuard {
    pub fn new() -> ProcGuard {
        ProcGuard::default()
    }

    /// Add `pid` (and, at kill time, its descendants).
    pub fn track(&self, pid: i32) {
        if let Some(st) = stat(pid) {
            let mut r = self.roots.lock().unwrap();
            if !r.iter().any(|&(p, _)| p == pid) {
                r.push((pid, st.starttime));
            }
        }
    }

    pub fn kill_all(&self) {
        let roots: Vec<i32> = self
            .roots
            .lock()
            .unwrap()
            .iter()
            .filter(|&&(p, start)| stat(p).map(|s| s.starttime) == Some(start))
            .map(|&(p, _)| p)
            .collect();
        if roots.is_empty() {
            return;
        }
        let mut victims: Vec<i32> = Vec::new();
        let mut seen: HashSet<i32> = HashSet::new();
        for _round in 0..50 {
            let t = process_table();
            let mut all = roots.clone();
            all.extend(descendants_in(&t, &roots));
            all.extend(descendants_in(&t, &victims));
            let new: Vec<i32> = all.into_iter().filter(|p| seen.insert(*p)).collect();
            if new.is_empty() {
                break;
            }
            for &p in &new {
                let _ = kill(p, libc::SIGSTOP);
            }
            victims.extend(new);
        }
        for &p in &victims {
            let _ = kill(p, libc::SIGKILL);
        }
    }
}

impl Drop for ProcGuard {
    fn drop(&mut self) {
        self.kill_all();
    }
}
