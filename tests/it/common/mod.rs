//! Shared harness for vigil's integration tests.
//!
//! Start vigil as PID 1 of a fresh PID namespace (`unshare --pid --fork
//! --mount-proc`), as a plain child process, or behind any wrapper command;
//! find its host pid, signal it, wait for it with a timeout, look at /proc,
//! and kill, by pid, everything a test started when the test ends (even when
//! it panics).
//!
//! Quick tour:
//!
//! ```ignore
//! mod common;
//! use common::*;
//!
//! let dir = TempDir::new("fwd");
//! let rec = dir.join("rec");
//! let run = spawn_sigrec(Vigil::pid1(), &rec, &[]); // `-- sigrec --out REC`, ready
//! run.signal(libc::SIGUSR1);
//! assert!(wait_for_signal(&rec, libc::SIGUSR1, TIMEOUT));
//! let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT); // or run.wait(TIMEOUT)
//! ```
//!
//! By concern (every item is re-exported here, so `use common::*;` is all a
//! test file needs):
//!
//! - `vigil`: the `Vigil` builder, the `Running` vigil, a finished `Output`;
//! - `children`: the children most tests give vigil;
//! - `wrappers`: vigil as PID 1 behind a shell that sets something up first;
//! - `timing`: how long vigil took, and the checks on it;
//! - `cgroup`: a memory or pids cgroup made for one test;
//! - `engine`: Docker and podman, for the end-to-end tests;
//! - `servers`: the Debian image with real servers, and their clients;
//! - `command`: other commands, run with a deadline;
//! - `recorder`: the signal-recording test programs (`sigrec`, `sigcount`);
//! - `programs`: where vigil, the test programs and PATH commands are;
//! - `proc`: processes through /proc (state, parents, zombies, namespaces);
//! - `guard`: killing everything a test started;
//! - `wait`: bounded polling;
//! - `files`: temp dirs and small files;
//! - `log`: reading vigil's text lines;
//! - `records`: reading vigil's records (`--log-format json`), held to
//!   the schema, and asserting on their fields;
//! - `skip`: a test that cannot run here, and `VIGIL_E2E_REQUIRE`;
//! - `help`: reading `vigil --help` back;
//! - `pty`: an interactive shell on a pseudo-terminal;
//! - `rng`: seeded randomness for generated cases;
//! - `options`: vigil's option table (src/cli/options.rs itself, without
//!   the rows' effects);
//! - `capture`, `start_state`: plumbing of the above.

// A harness offers more than the tests of the moment use (a piped stdin,
// a run with a bound of its own).
#![allow(dead_code)]

// vigil's option table, the very file the binary is built from: the tests'
// flag/variable pairs and the command-line fuzz grammar are read from it,
// so an option added there is tested without another list to update.
// Each row also carries its effect on vigil's `Config`, which the tests do
// not have: the file leaves `apply!` and the type `Apply` of an effect to
// whoever includes it, and here `apply!` drops the effect unread.
macro_rules! apply {
    ($effect:expr) => {
        ()
    };
}
pub type Apply = ();
#[path = "../../../src/cli/options.rs"]
pub mod options;

// The checker of vigil's records against docs/logging-schema.json, the
// very file the unit tests use: every record a test reads is held to it.
pub mod check;

// The raw signal syscalls (and `sig_bit`) the test programs use too.
#[path = "../../programs/support/rawsig.rs"]
mod rawsig;

mod capture;
mod cgroup;
mod children;
mod command;
mod docs;
mod engine;
mod files;
mod guard;
mod help;
mod log;
mod proc;
mod programs;
mod pty;
mod recorder;
mod records;
mod rng;
mod servers;
mod skip;
mod start_state;
mod timing;
mod vigil;
mod wait;
mod wrappers;

// Everything a test needs is `common::NAME`; a test binary uses only part
// of it.
#[allow(unused_imports)]
pub use self::{
    cgroup::*,
    children::*,
    command::*,
    docs::*,
    engine::*,
    files::*,
    guard::*,
    help::*,
    log::*,
    proc::*,
    programs::*,
    pty::*,
    rawsig::{set_sigmask, sig_bit},
    recorder::*,
    records::*,
    rng::*,
    servers::*,
    skip::*,
    timing::*,
    vigil::*,
    wait::*,
    wrappers::*,
};

#[allow(unused_imports)]
pub use serde_json::{Value, json};
use std::time::Duration;

/// Generous upper bound for anything that should take well under a second
/// when vigil works (the test machines are small and busy).
pub const TIMEOUT: Duration = Duration::from_secs(30);
