//! The memory cgroup's counter files (`memory.events`, `memory.oom_control`),
//! and finding them from /proc/self/cgroup and /proc/self/mountinfo.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing;

fuzz_target!(|data: &[u8]| {
    let (events, oom_kill) = fuzzing::memory_events(data);
    assert_eq!(events.oom_kill, oom_kill.unwrap_or(0));
    // The counts, written as the kernel writes them, read the same; a
    // first `oom_kill` line is the one that counts.
    let text = format!(
        "low 0\nhigh 0\nmax {}\noom {}\noom_kill {}\noom_group_kill {}\n",
        events.max, events.oom, events.oom_kill, events.oom_group_kill
    );
    assert_eq!(
        fuzzing::memory_events(text.as_bytes()),
        (events, Some(events.oom_kill))
    );
    let first = [format!("oom_kill {}\n", events.max).as_bytes(), data].concat();
    assert_eq!(fuzzing::memory_events(&first).1, Some(events.max));

    // /proc/self/cgroup, a NUL, then /proc/self/mountinfo.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (cgroups, mountinfo) = text.split_once('\0').unwrap_or((text, ""));
    if let Some(file) = fuzzing::counter_file(cgroups, mountinfo) {
        let name = file.file_name().and_then(|n| n.to_str());
        assert!(
            matches!(name, Some("memory.events" | "memory.oom_control")),
            "{file:?}"
        );
    }
});
