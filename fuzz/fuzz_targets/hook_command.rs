//! A hook's command (`--post-start`, `--pre-stop`), split as a shell splits
//! it; and its words, shown back, read as the same words.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match fuzzing::hook_command(text) {
        Ok(words) => {
            assert!(!words.is_empty());
            let (shown, exact) = fuzzing::command_text(&words);
            assert!(!shown.contains('\n'), "{shown:?}");
            if exact {
                assert_eq!(fuzzing::hook_command(&shown), Ok(words), "{shown}");
            }
        }
        Err(e) => assert!(e.len() <= 2 * text.len() + 512, "{e}"),
    }
});
