//! Socket activation's `LISTEN_PID` value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing;

fuzz_target!(|data: &[u8]| {
    if let Some(pid) = fuzzing::listen_pid(data) {
        // Only decimal digits (and a leading `+`) name a pid.
        let digits = data.strip_prefix(b"+").unwrap_or(data);
        assert!(!digits.is_empty() && digits.iter().all(u8::is_ascii_digit));
        assert_eq!(fuzzing::listen_pid(pid.to_string().as_bytes()), Some(pid));
    }
    if let Ok(bytes) = <[u8; 4]>::try_from(data) {
        let pid = u32::from_le_bytes(bytes);
        assert_eq!(fuzzing::listen_pid(pid.to_string().as_bytes()), Some(pid));
    }
});
