//! `--user USER[:GROUP]`: its shape, before any file is read.
#![no_main]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing;

fuzz_target!(|data: &[u8]| {
    match fuzzing::user_spec(OsStr::from_bytes(data)).map_err(|e| e.to_string()) {
        Ok(_) => {
            let colons = data.iter().filter(|&&b| b == b':').count();
            assert!(colons <= 1 && !data.is_empty() && data != b":");
        }
        Err(e) => {
            assert!(e.starts_with("invalid user "), "{e}");
            // Each byte quoted is at most six characters (`\u{1b}`), and the
            // number out of range is a part of the spec.
            assert!(e.len() <= 12 * data.len() + 256, "{e}");
        }
    }
});
