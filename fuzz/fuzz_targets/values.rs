//! The values of options and variables: durations, signals, rewrite rules,
//! stop-signal lists, exit codes, switches, verbosities, log formats, and
//! any row of the option table from any source.
#![no_main]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing::{self, Signal};

/// The signals whose name is no name to parse (`signal 32`, `SIGRTMAX
/// (SIGRTMIN+30)`).
fn named(signal: Signal) -> bool {
    !matches!(signal.0, 32 | 33 | 64)
}

fn bounded(text: &str, e: &str) {
    assert!(e.len() <= 4 * text.len() + 512, "{e}");
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    if which >= 0xc0 {
        // Any option's value, raw bytes, from any of the three sources.
        let [row, from, raw @ ..] = rest else {
            return;
        };
        let opt = &fuzzing::OPTIONS[usize::from(*row) % fuzzing::OPTIONS.len()];
        let from = [
            fuzzing::From::CommandLine,
            fuzzing::From::Vigil,
            fuzzing::From::Tini,
        ][usize::from(*from % 3)];
        if let Err(e) = fuzzing::option_value(opt.kind, OsStr::from_bytes(raw), from) {
            assert!(e.len() <= 6 * raw.len() + 512, "{e}");
        }
        return;
    }
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match which % 8 {
        0 => match fuzzing::duration(text) {
            Ok(d) => {
                assert!(d <= Duration::from_secs(365 * 24 * 3600));
                let written = fuzzing::duration_text(d);
                assert_eq!(fuzzing::duration(&written), Ok(d), "{written}");
            }
            Err(e) => bounded(text, &e),
        },
        1 => match fuzzing::signal(text) {
            Ok(n) => {
                assert!((1..=64).contains(&n.0));
                assert_eq!(fuzzing::signal(&n.0.to_string()), Ok(n));
                if named(n) {
                    assert_eq!(fuzzing::signal(&n.to_string()), Ok(n));
                }
            }
            Err(e) => bounded(text, &e),
        },
        2 => match fuzzing::Rewrites::parse_rule(text) {
            Ok((from, to)) => {
                assert!((1..=64).contains(&from.0) && to.is_none_or(|to| (1..=64).contains(&to.0)));
                let to_number = to.map_or(0, |to| to.0);
                assert_eq!(
                    fuzzing::Rewrites::parse_rule(&format!("{}:{to_number}", from.0)),
                    Ok((from, to))
                );
                if named(from) && to.is_none_or(named) {
                    let to_name = to.map_or("0".to_string(), |to| to.to_string());
                    let rule = format!("{from}:{to_name}");
                    assert_eq!(
                        fuzzing::Rewrites::parse_rule(&rule),
                        Ok((from, to)),
                        "{rule}"
                    );
                }
            }
            Err(e) => bounded(text, &e),
        },
        3 => match fuzzing::stop_signals(text) {
            Ok(list) => {
                assert!(!list.is_empty());
                for (i, n) in list.iter().enumerate() {
                    assert!((1..=64).contains(&n.0) && !list[..i].contains(n));
                }
                let numbers: Vec<String> = list.iter().map(|n| n.0.to_string()).collect();
                assert_eq!(fuzzing::stop_signals(&numbers.join(",")), Ok(list.clone()));
                if list.iter().all(|&n| named(n)) {
                    let names: Vec<String> = list.iter().map(Signal::to_string).collect();
                    assert_eq!(fuzzing::stop_signals(&names.join(", ")), Ok(list));
                }
            }
            Err(e) => bounded(text, &e),
        },
        4 => match fuzzing::exit_code(text) {
            Ok(code) => {
                assert!((0..=255).contains(&code));
                assert_eq!(fuzzing::exit_code(&code.to_string()), Ok(code));
            }
            Err(e) => bounded(text, &e),
        },
        5 => match fuzzing::switch(text) {
            Ok(on) => assert_eq!(fuzzing::switch(if on { "1" } else { "0" }), Ok(on)),
            Err(e) => bounded(text, &e),
        },
        6 => match fuzzing::verbosity(text) {
            Ok(level) => {
                assert!(level <= 4);
                assert_eq!(fuzzing::verbosity(&level.to_string()), Ok(level));
            }
            Err(e) => bounded(text, &e),
        },
        _ => match fuzzing::Format::parse(text) {
            Ok(format) => {
                let name = format!("{format:?}").to_ascii_lowercase();
                assert_eq!(fuzzing::Format::parse(&name), Ok(format));
            }
            Err(e) => bounded(text, &e),
        },
    }
});
