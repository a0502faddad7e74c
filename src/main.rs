//! vigil: a small, static PID 1 for containers.
//!
//! `main` stays thin: block signals, parse, set up logging, run, exit. Each
//! concern lives in its own module; the state machine is in `supervisor`.

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
        clippy::unimplemented
    )
)]

mod cgroup;
mod cli;
mod hooks;
mod logging;
mod procs;
mod reap;
mod report;
mod signals;
mod spawn;
mod supervisor;

use std::io::Write;

fn main() {
    // First of all, so that no signal sent during start-up is lost or fatal.
    let inherited = match signals::block_all() {
        Ok(inherited) => inherited,
        Err(e) => {
            logging::say(&format!("error: cannot block signals: {e}"));
            std::process::exit(1);
        }
    };
    let config = match cli::parse(std::env::args_os(), |name| std::env::var_os(name)) {
        Ok(cli::Action::Run(config)) => config,
        Ok(cli::Action::Print(text)) => {
            let _ = std::io::stdout().write_all(text.as_bytes());
            std::process::exit(0);
        }
        Err(cli::UsageError(message)) => {
            logging::say(&message);
            std::process::exit(2);
        }
    };
    logging::init(config.verbosity);
    std::process::exit(supervisor::run(config, inherited));
}
