//! What the memory cgroup counted.

/// The counts of `memory.events` (v1 has `oom_kill` alone).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryEvents {
    /// Times the group's memory reached `memory.max` and reclaim began.
    pub max: u64,
    /// Times the OOM killer was invoked.
    pub oom: u64,
    /// Processes it killed.
    pub oom_kill: u64,
    /// Times it killed the whole group (`memory.oom.group`).
    pub oom_group_kill: u64,
}

impl MemoryEvents {
    /// The counts since `start`.
    pub fn since(self, start: MemoryEvents) -> MemoryEvents {
        MemoryEvents {
            max: self.max.saturating_sub(start.max),
            oom: self.oom.saturating_sub(start.oom),
            oom_kill: self.oom_kill.saturating_sub(start.oom_kill),
            oom_group_kill: self.oom_group_kill.saturating_sub(start.oom_group_kill),
        }
    }
}
