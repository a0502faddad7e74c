//! The `vigil` binary: the program is the library (src/lib.rs).
//!
//! vigil brings its own C `main` (in the library's `sys::env`) rather than
//! Rust's runtime start-up, for two reasons a PID 1 cares about: Rust's
//! start-up sets SIGPIPE to ignored before any user code runs, which would
//! hide from vigil (and so from its child) what its parent had; and it
//! aborts the process when a standard descriptor is closed and /dev/null
//! cannot be opened, which as PID 1 would take the container down.

#![no_main]

use vigil_init as _;
