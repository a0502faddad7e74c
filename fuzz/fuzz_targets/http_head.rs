//! The answer to an HTTP probe, as vigil reads it: the status line after
//! any number of interim answers, in one pass over at most HEAD_MAX bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing::{self, HEAD_MAX, Head};

fuzz_target!(|data: &[u8]| {
    // The reader never holds more than HEAD_MAX bytes of an answer.
    let answer = &data[..data.len().min(HEAD_MAX)];
    match fuzzing::http_head(answer) {
        Head::Status(code, reason) => {
            assert!((200..600).contains(&code), "{code}");
            assert!(reason.len() <= 64 && reason.bytes().all(|b| (0x20..0x7f).contains(&b)));
        }
        Head::NotHttp(start) => assert!(start.len() <= 6 * 32, "{start}"),
        Head::TooLong => assert_eq!(answer.len(), HEAD_MAX),
        Head::Incomplete => {
            assert!(answer.len() < HEAD_MAX);
            // More bytes never make a final answer incomplete again: a
            // prefix that is incomplete stays so, or becomes an answer.
            let shorter = &answer[..answer.len() / 2];
            assert!(!matches!(fuzzing::http_head(shorter), Head::TooLong));
        }
    }
    // Endless interim answers fill the room and stop there.
    let interim = b"HTTP/1.1 100 Continue\r\n\r\n".repeat(HEAD_MAX / 16);
    let flood = [answer, &interim[..]].concat();
    let bounded = &flood[..HEAD_MAX];
    assert!(!matches!(fuzzing::http_head(bounded), Head::Incomplete));
});
