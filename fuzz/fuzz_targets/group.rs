//! /etc/group as `--user` reads it, and who is a member.
#![no_main]

use std::ops::ControlFlow;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing;

/// The entries read in a whole /etc/group: name, gid, members, and
/// whether `member` is one of them.
fn group(file: &[u8], member: &[u8]) -> Vec<(Vec<u8>, u32, Vec<u8>, bool)> {
    let mut entries = Vec::new();
    let _ = fuzzing::scan_lines(file, Path::new("/etc/group"), |line| {
        if let Some(e) = fuzzing::GroupEntry::parse(line) {
            let has = e.has_member(member);
            entries.push((e.name.to_vec(), e.gid, e.members.to_vec(), has));
        }
        ControlFlow::Continue(())
    });
    entries
}

fuzz_target!(|data: &[u8]| {
    // The first byte says how long the member looked for is; the file follows.
    let Some((&len, rest)) = data.split_first() else {
        return;
    };
    let (member, file) = rest.split_at(usize::from(len % 16).min(rest.len()));
    let entries = group(file, member);
    assert!(entries.len() <= file.split(|&b| b == b'\n').count());
    for (name, gid, members, has) in entries {
        assert!(gid != u32::MAX);
        assert!(!name.contains(&b':') && !members.contains(&b':'));
        // Members are compared whole and exactly.
        let listed = !member.is_empty() && members.split(|&b| b == b',').any(|m| m == member);
        assert_eq!(has, listed);
        let line = [
            &name[..],
            b":x:",
            gid.to_string().as_bytes(),
            b":",
            &members,
            b":\n",
        ]
        .concat();
        assert_eq!(group(&line, member), [(name, gid, members, has)]);
    }
});
