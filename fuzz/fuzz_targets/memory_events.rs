//! The memory cgroup's counter files (`memory.events`, `memory.oom_control`),
//! and finding them from /proc/self/cgroup and /proc/self/mountinfo.
#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing;

/// `memory.events` or `memory.oom_control`: the counts, and the
/// `oom_kill` count that says whether the kernel counts at all.
fn memory_events(text: &[u8]) -> (fuzzing::MemoryEvents, Option<u64>) {
    (
        fuzzing::parse_events(text),
        fuzzing::count(text, b"oom_kill"),
    )
}

/// The counter file, from /proc/self/cgroup and /proc/self/mountinfo.
fn counter_file(cgroups: &str, mountinfo: &str) -> Option<PathBuf> {
    let (path, v1) = fuzzing::own_cgroup(cgroups)?;
    fuzzing::counter_file(&path, v1, mountinfo)
}

fuzz_target!(|data: &[u8]| {
    let (events, oom_kill) = memory_events(data);
    assert_eq!(events.oom_kill, oom_kill.unwrap_or(0));
    // The counts, written as the kernel writes them, read the same; a
    // first `oom_kill` line is the one that counts.
    let text = format!(
        "low 0\nhigh 0\nmax {}\noom {}\noom_kill {}\noom_group_kill {}\n",
        events.max, events.oom, events.oom_kill, events.oom_group_kill
    );
    assert_eq!(
        memory_events(text.as_bytes()),
        (events, Some(events.oom_kill))
    );
    let first = [format!("oom_kill {}\n", events.max).as_bytes(), data].concat();
    assert_eq!(memory_events(&first).1, Some(events.max));

    // /proc/self/cgroup, a NUL, then /proc/self/mountinfo.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (cgroups, mountinfo) = text.split_once('\0').unwrap_or((text, ""));
    if let Some(file) = counter_file(cgroups, mountinfo) {
        let name = file.file_name().and_then(|n| n.to_str());
        assert!(
            matches!(name, Some("memory.events" | "memory.oom_control")),
            "{file:?}"
        );
    }
});
