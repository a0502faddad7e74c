//! /etc/passwd as `--user` reads it: line by line, malformed entries skipped.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing;

fuzz_target!(|data: &[u8]| {
    let entries = fuzzing::passwd(data);
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
        assert_eq!(fuzzing::passwd(&line), [(name, uid, gid, home)]);
    }
});
