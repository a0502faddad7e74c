//! `/proc/PID/stat`: the fields after the command name, which may hold any
//! byte, are found from its last `)`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing::{self, Pid};

fuzz_target!(|data: &[u8]| {
    if let Some(stat) = fuzzing::proc_stat(Pid::from_raw(42), data) {
        assert_eq!(stat.pid, Pid::from_raw(42));
        assert_ne!(stat.state, 'Z', "a zombie is left to reaping");
        let open = data.iter().position(|&b| b == b'(').unwrap();
        let close = data.iter().rposition(|&b| b == b')').unwrap();
        assert_eq!(stat.comm, data[open + 1..close]);
        // The same process, written as the kernel writes it, reads the same.
        let mut line = b"42 (".to_vec();
        line.extend_from_slice(&stat.comm);
        let rest = format!(
            ") {} {} {} 0 0 -1 4194560 90 0\n",
            stat.state, stat.ppid, stat.pgrp
        );
        line.extend_from_slice(rest.as_bytes());
        assert_eq!(fuzzing::proc_stat(Pid::from_raw(42), &line), Some(stat));
    }
    // Any name but a NUL's is read back whole.
    let mut line = b"7 (".to_vec();
    line.extend_from_slice(data);
    line.extend_from_slice(b") S 1 7 7 0 -1 4194560 90 0 0 0 0 0 0 0 20 0 1 0 650\n");
    let stat = fuzzing::proc_stat(Pid::from_raw(7), &line).expect("a well-formed line");
    assert_eq!(
        (stat.comm.as_slice(), stat.ppid.as_raw(), stat.pgrp.as_raw()),
        (data, 1, 7)
    );
});
