//! /etc/passwd as `--user` reads it: line by line, malformed entries skipped.
#![no_main]

use std::ops::ControlFlow;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing;

/// The entries the `--user` lookups read in a whole /etc/passwd: name,
/// uid, gid, home.
fn passwd(file: &[u8]) -> Vec<(Vec<u8>, u32, u32, Vec<u8>)> {
    let mut entries = Vec::new();
    let _ = fuzzing::scan_lines(file, Path::new("/etc/passwd"), |line| {
        if let Some(e) = fuzzing::PasswdEntry::parse(line) {
            entries.push((e.name.to_vec(), e.uid, e.gid, e.home.to_vec()));
        }
        ControlFlow::Continue(())
    });
    entries
}

fuzz_target!(|data: &[u8]| {
    let entries = passwd(data);
    assert!(entries.len() <= data.split(|&b| b == b'\n').count());
    for (name, uid, gid, home) in entries {
        // `(uid_t)-1`, which the kernel's set*id calls refuse, is no id.
        assert!(uid != u32::MAX && gid != u32::MAX);
        for field in [&name, &home] {
            assert!(!field.contains(&b':') && !field.contains(&b'\n'));
        }
        // The entry, written again, reads the same.
        let line = [
            &name[..],
            b":x:",
            uid.to_string().as_bytes(),
            b":",
            gid.to_string().as_bytes(),
            b"::",
            &home,
            b":/bin/sh\n",
        ]
        .concat();
        assert_eq!(passwd(&line), [(name, uid, gid, home)]);
    }
});
