//! vigil: a small, static PID 1 for containers.
//!
//! `run` stays thin: block signals, parse, set up logging, run, exit. Each
//! concern lives in its own module; the state machine is in `supervisor`.
//! The program is this library, so that the fuzz targets (fuzz/) can
//! reach its parsers; src/main.rs only links it into the `vigil` binary,
//! whose C `main` is in `sys::env` (main.rs says why).
// Raw pointers and raw system calls live in `sys` alone, behind safe functions.
#![deny(unsafe_code)]
// A PID 1 that panics takes the container with it: no path a user can reach
// may unwrap, index out of bounds or panic.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented,
        clippy::too_many_lines
    )
)]

mod caps;
mod cgroup;
mod cli;
#[doc(hidden)]
pub mod fuzzing;
mod hooks;
mod install;
mod log;
mod notify;
mod probe;
mod procs;
mod reap;
mod signals;
mod spawn;
mod supervisor;
#[allow(unsafe_code)]
mod sys;
mod text;
mod user;

use std::ffi::OsString;
use std::io::Write;
use std::os::raw::c_int;

use log::event::Event;

/// The program, from its arguments (argv, the program's name first) to
/// its exit status: called by the C `main` (`sys::env`).
#[cfg_attr(any(test, fuzzing), allow(dead_code))]
fn run(args: Vec<OsString>) -> c_int {
    // First of all, so that no signal sent during start-up is lost or fatal.
    let inherited = match signals::block_all() {
        Ok(inherited) => inherited,
        Err(e) => {
            let error = text::os_error(&e);
            early_error(
                &args,
                None,
                Event::StartFailed {
                    what: "block signals",
                    error: &error,
                    status: 1,
                },
            );
            return 1;
        }
    };
    // Before vigil opens anything: none of its files may take the number
    // of a standard descriptor it was started without.
    sys::fd::settle_standard();
    if let Some(program) = args.first() {
        procs::name_self(program);
    }
    // Installed setuid or setgid, vigil would run anything as anyone for
    // whoever can start it: refuse before reading a word of its input.
    if let Err(e) = user::refuse_setid() {
        let refused = Event::SetidRefused {
            refusal: &e,
            status: 1,
        };
        early_error(&args, None, refused);
        return 1;
    }
    let config = match cli::parse(&args, cli::own_variables()) {
        Ok(cli::Action::Run(config)) => *config,
        Ok(cli::Action::Probe(config)) => return probe(&config, inherited),
        Ok(cli::Action::Print(text)) => {
            let _ = std::io::stdout().write_all(text.as_bytes());
            let _ = std::io::stdout().flush();
            return 0;
        }
        // A probe's mistake exits 1, never 2, which Docker's HEALTHCHECK
        // reserves; and the termination log is the container's vigil's.
        Err(cli::UsageError(message)) => {
            let probing = cli::probe_asked(&args);
            let status = if probing { 1 } else { 2 };
            let var = || std::env::var_os("VIGIL_TERMINATION_LOG");
            let termination_log = (!probing)
                .then(|| cli::termination_log_after(&args, var()))
                .flatten();
            let usage = Event::UsageError {
                message: &message,
                status,
            };
            early_error(&args, termination_log.as_deref(), usage);
            return status;
        }
    };
    // A pause has no command to report on: it writes no termination log.
    let termination_log = (!config.pause)
        .then(|| config.termination_log.clone())
        .flatten();
    log::init(log::Logger::new(
        config.verbosity,
        config.log_format,
        procs::under_vigil(),
        termination_log,
    ));
    for warning in &config.warnings {
        log::emit(&Event::UnknownVariable {
            variable: &warning.name,
            meant: warning.meant,
        });
    }
    if let Some(dir) = &config.install {
        return install::run(dir);
    }
    if config.pause {
        return supervisor::pause(&config);
    }
    supervisor::run(config, inherited)
}

/// `--probe`: one check, as an ordinary short-lived program: the signals
/// vigil blocked for supervising are put back as they came (so that a
/// health check's SIGTERM or SIGKILL, or Ctrl-C, ends it), and no
/// termination log is written.
fn probe(config: &cli::Config, inherited: signals::Inherited) -> c_int {
    let _ = inherited.restore();
    log::init(log::Logger::new(
        config.verbosity,
        config.log_format,
        None,
        None,
    ));
    let Some(url) = &config.probe else {
        return 1;
    };
    probe::run(url, config.probe_timeout)
}

/// An error before logging is set up, in the format the command line or
/// `VIGIL_LOG_FORMAT` asks for (read leniently: text when that is what is
/// wrong), also written to `termination_log`.
fn early_error(args: &[OsString], termination_log: Option<&std::path::Path>, event: Event<'_>) {
    let format = cli::log_format_before(args, std::env::var_os("VIGIL_LOG_FORMAT"));
    log::early(format, termination_log, event);
}
