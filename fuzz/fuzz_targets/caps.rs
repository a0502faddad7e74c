//! `--caps`: capability names and lists.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match fuzzing::caps(text) {
        Ok(set) => {
            // As records list it (the form `--caps` takes), and as messages
            // name it: both read back as the same set.
            assert_eq!(fuzzing::caps(&set.list()), Ok(set), "{}", set.list());
            assert_eq!(fuzzing::caps(&set.to_string()), Ok(set), "{set}");
        }
        Err(e) => assert!(e.len() <= 2 * text.len() + 512, "{e}"),
    }
});
