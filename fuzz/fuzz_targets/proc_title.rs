//! A process's title, from `/proc/PID/cmdline` and its `comm`: one line,
//! cut to `TITLE_MAX` bytes before escaping.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing::{self, TITLE_MAX};

fuzz_target!(|data: &[u8]| {
    // The first byte says how long the comm is (the kernel's is at most 15
    // bytes; any length is taken); the command line follows it.
    let Some((&len, rest)) = data.split_first() else {
        return;
    };
    let (comm, cmdline) = rest.split_at(usize::from(len % 32).min(rest.len()));
    let title = fuzzing::proc_title(cmdline, comm);
    assert!(!title.chars().any(char::is_control), "{title:?}");
    // An escape is at most six characters for a byte (`\u{1b}`).
    assert!(title.len() <= 6 * TITLE_MAX, "{title:?}");
    // Printable ASCII, which needs no escape, is cut to TITLE_MAX bytes.
    let plain = |b: &u8| (0x20..0x7f).contains(b) && *b != b'\\';
    if cmdline.iter().all(|b| *b == 0 || plain(b)) && comm.iter().all(plain) {
        assert!(title.len() <= TITLE_MAX, "{title:?}");
        if cmdline.iter().all(|&b| b == 0) {
            assert_eq!(title.as_bytes(), comm);
        }
    }
});
