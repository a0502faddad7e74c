//! The command line and the environment as a whole: `cli::parse`, and the
//! lenient readers that run before it or when it fails.
//!
//! The input is words split at NUL bytes: the program's name, then its
//! arguments up to a word that is the single byte 0xff; after that, each
//! word holding a `=` is a variable, `NAME=VALUE` (fuzz/dicts/cli.dict
//! names the options and variables).
#![no_main]

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing;

/// `cli::parse`: the `Config` of a command or a probe, `None` for what
/// is only printed (help, version, license), or the usage error.
fn cli(
    args: &[OsString],
    vars: Vec<(OsString, OsString)>,
) -> Result<Option<fuzzing::Config>, String> {
    match fuzzing::cli(args, vars) {
        Ok(fuzzing::Action::Run(config) | fuzzing::Action::Probe(config)) => Ok(Some(*config)),
        Ok(fuzzing::Action::Print(_)) => Ok(None),
        Err(fuzzing::UsageError(message)) => Err(message),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut words = data.split(|&b| b == 0);
    let mut args: Vec<OsString> = Vec::new();
    for word in words.by_ref() {
        if word == [0xff] {
            break;
        }
        args.push(OsStr::from_bytes(word).to_owned());
    }
    let vars: Vec<(OsString, OsString)> = words
        .filter_map(|w| {
            let eq = w.iter().position(|&b| b == b'=')?;
            let (name, value) = (&w[..eq], &w[eq + 1..]);
            Some((
                OsStr::from_bytes(name).to_owned(),
                OsStr::from_bytes(value).to_owned(),
            ))
        })
        .collect();
    // As the process's environment has it: the last of a name counts.
    let var = |name: &str| {
        vars.iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let log_format = var("VIGIL_LOG_FORMAT");
    let termination_log = var("VIGIL_TERMINATION_LOG");
    let lenient = (
        fuzzing::probe_asked(&args),
        fuzzing::log_format_before(&args, log_format),
        fuzzing::termination_log_after(&args, termination_log),
    );
    match cli(&args, vars.clone()) {
        Ok(Some(config)) => {
            // What is read before the command line is, or when it is wrong,
            // agrees with what the command line says when it is right.
            assert_eq!(lenient.0, config.probe.is_some(), "{args:?}");
            assert_eq!(lenient.1, config.log_format, "{args:?} {vars:?}");
            if config.probe.is_none() {
                assert_eq!(lenient.2, config.termination_log, "{args:?} {vars:?}");
            }
        }
        Ok(None) => {}
        Err(e) => assert!(e.len() <= 4 * data.len() + 1024, "{e}"),
    }
});
