//! /etc/hosts as a probe reads it: the addresses of a name, in the file's
//! order, each once; no line hides or invents one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing;

fuzz_target!(|data: &[u8]| {
    // The first byte says how long the name looked up is; the file follows.
    let Some((&len, rest)) = data.split_first() else {
        return;
    };
    let (name, file) = rest.split_at(usize::from(len % 32).min(rest.len()));
    let Ok(name) = std::str::from_utf8(name) else {
        return;
    };
    let found = fuzzing::in_hosts(file, name);
    for (i, ip) in found.iter().enumerate() {
        assert!(!found[..i].contains(ip), "{ip} twice");
    }
    assert!(found.len() <= file.split(|&b| b == b'\n').count());
    // A line naming it, appended, adds its address unless it was there.
    let line = format!("\n192.0.2.7 {name}\n");
    let more = fuzzing::in_hosts(&[file, line.as_bytes()].concat(), name);
    let whitespace = name.is_empty() || name.bytes().any(|b| b.is_ascii_whitespace() || b == b'#');
    if !whitespace {
        assert!(
            more.iter().any(|ip| ip.to_string() == "192.0.2.7"),
            "{more:?}"
        );
    }
});
