//! The provisional termination message: what the termination log says
//! while vigil runs, and says for good if vigil is killed before it can
//! write its exit report. That is the common case on cgroup v2 under
//! Kubernetes, where the kubelet sets `memory.oom.group`: an OOM kill
//! takes every process of the container, vigil included, and the pod would
//! show OOMKilled with an empty termination message. It says what vigil
//! knew then, and what a silent end most likely means in this container;
//! the changes of `memory.events` bring it up to date.

use std::fmt::{self, Display, Formatter};

use super::Started;
use crate::log::facts::MemoryEvents;
use crate::log::format::{Fields, Obj, Timestamp};
use crate::text::Count;

/// What the memory cgroup has counted since vigil started, and when vigil
/// saw each count move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemorySeen {
    pub events: MemoryEvents,
    /// When `max` last moved (memory reached `memory.max`).
    pub max_at: Option<Timestamp>,
    /// When the OOM killer last ran.
    pub oom_at: Option<Timestamp>,
}

impl MemorySeen {
    /// The counts are now `events`, seen at `now`.
    pub fn update(&mut self, events: MemoryEvents, now: Timestamp) {
        if events.max != self.events.max {
            self.max_at = Some(now);
        }
        if (events.oom, events.oom_kill, events.oom_group_kill)
            != (
                self.events.oom,
                self.events.oom_kill,
                self.events.oom_group_kill,
            )
        {
            self.oom_at = Some(now);
        }
        self.events = events;
    }
}

/// The facts of the provisional message: the child as it started, and
/// what the memory cgroup counted since.
#[derive(Debug)]
pub struct Provisional<'a> {
    pub(super) started: &'a Started,
    pub(super) memory: MemorySeen,
}

impl Fields for Provisional<'_> {
    fn fields<'r>(&'r self, o: &mut Obj<'_, 'r>) {
        let started = self.started;
        // What a silent end most likely was.
        let likely = if started.oom_group {
            "group_oom_kill"
        } else {
            "sigkill"
        };
        o.field("command", &started.command)
            .field("pid", started.pid)
            .field("started", started.at)
            .opt("memory_limit", started.limit)
            .field("oom_group", started.oom_group)
            .word("likely", likely);
        let seen = self.memory;
        if seen.events != MemoryEvents::default() {
            o.object_with("memory", |o| {
                o.field("max", seen.events.max)
                    .field("oom", seen.events.oom)
                    .field("oom_kill", seen.events.oom_kill)
                    .field("oom_group_kill", seen.events.oom_group_kill)
                    .opt("last_max", seen.max_at)
                    .opt("last_oom", seen.oom_at);
            });
        }
    }
}

/// `vigil ended without its report: most likely ...; command: ... (pid 7),
/// started ...; memory reached memory.max (268435456) 3 times, last at
/// ...; the OOM killer ran 1 time, last at ..., and killed 1 process`.
impl Display for Provisional<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let events = self.memory.events;
        let started = self.started;
        f.write_str("vigil ended without its exit report: ")?;
        if started.oom_group && events.oom_group_kill > 0 {
            f.write_str(
                "the kernel killed the whole container, vigil included, for memory (memory.oom.group=1)",
            )?;
        } else if started.oom_group {
            f.write_str(
                "most likely the kernel killed the whole container, vigil included, for memory (memory.oom.group=1)",
            )?;
        } else {
            f.write_str(
                "most likely vigil was killed by SIGKILL from outside (docker kill, the kubelet after the grace period, or the kernel)",
            )?;
        }
        write!(f, "; {started}, started {}", started.at)?;
        let limit = started
            .limit
            .map_or("its limit".to_string(), |l| format!("memory.max ({l})"));
        if events.max > 0 {
            write!(
                f,
                "; memory reached {limit} {}",
                Count(events.max, "time", "times")
            )?;
            if let Some(at) = self.memory.max_at {
                write!(f, ", last at {at}")?;
            }
        } else if let Some(limit) = started.limit {
            write!(f, "; memory limit {limit} bytes")?;
        }
        if events.oom > 0 || events.oom_kill > 0 {
            let ran = Count(events.oom.max(1), "time", "times");
            write!(f, "; the OOM killer ran {ran}")?;
            if let Some(at) = self.memory.oom_at {
                write!(f, ", last at {at}")?;
            }
            let killed = Count(events.oom_kill, "process", "processes");
            write!(f, ", and killed {killed}")?;
            if events.oom_group_kill > 0 {
                f.write_str(" (the whole group)")?;
            }
        }
        Ok(())
    }
}
