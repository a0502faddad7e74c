//! vigil's integration tests: one test crate, a module per subject, so
//! that the shared harness (`common`) is built once. tests/README.md says
//! what each module covers, how to run one, and where a new test goes.
//!
//! `e2e` is the tier that needs what the repository does not bring: a
//! container engine, the release in dist/, the Debian mirror, tini-static,
//! strace. Where that is missing its tests say `SKIPPED` and pass, unless
//! `VIGIL_E2E_REQUIRE=1` (CI) makes every skip a failure.

mod common;

mod arch;
mod child;
mod cli;
mod cli_fuzz;
mod diagnosis;
mod docs;
mod drain;
mod e2e;
mod exit_status;
mod hostile;
mod install;
mod layers;
mod lifecycle;
mod log_format;
mod man;
mod odd_names;
mod oom;
mod options;
mod pause;
mod probe;
mod reaping;
mod restricted;
mod signals;
mod sockets;
mod stdio;
mod storms;
mod terminal;
mod termination_log;
mod user;
