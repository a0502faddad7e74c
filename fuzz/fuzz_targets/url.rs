//! A probe URL (`--probe`, `--ready-when`): read, or refused with one line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match fuzzing::Url::parse(text) {
        Ok(url) => {
            // Messages name the URL as it was given.
            assert_eq!(url.text, text);
            // An HTTP probe's request (its Host header and target) says the
            // same URL again.
            if text.to_ascii_lowercase().starts_with("http://") {
                let path = url.path.clone().expect("an HTTP probe has a path");
                let again = format!("http://{}{path}", url.host_header());
                let reread = fuzzing::Url::parse(&again).expect(&again);
                assert_eq!((&reread.endpoint, &reread.path), (&url.endpoint, &url.path));
            }
        }
        Err(e) => {
            assert!(e.starts_with(&format!("'{text}' is not a URL vigil can probe: ")));
            // The URL as given, and for an http+unix URL written the curl
            // way, the URL to write instead, whose every byte may take three
            // (`%2F`, `%25`).
            assert!(e.len() <= 4 * text.len() + 512, "{e}");
        }
    }
});
