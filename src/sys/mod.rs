//! The system calls that need `unsafe`, each behind a safe function, and
//! the kernel's structures they use: the only module where `unsafe` is
//! allowed (lib.rs denies it everywhere else).
//!
//! Whatever nix wraps safely is called through nix where it is used
//! (poll, read, write, pipe2, tcsetpgrp, getppid, prctl's
//! subreaper and name, inotify, ...). What is here is what nix cannot do
//! for an init, or offers only as an `unsafe fn` (fork), each with its
//! reason where it is made:
//!
//! - `signal`: the kernel's full 64-signal set (nix's `SigSet` is
//!   `sigfillset`, which leaves out 32-34), `rt_sigprocmask`,
//!   `rt_sigaction`, `rt_sigtimedwait` and `signalfd4` on it, and `kill` with any signal
//!   number (nix's `Signal` has no realtime signals).
//! - `process`: `waitpid` of children that a realtime signal killed, and
//!   `prctl(PR_SET_PDEATHSIG)` with a realtime signal.
//! - `exec`: running a program in a new process, as a plan made before
//!   the fork says: the fork, every step of the new process (stdin,
//!   process group or session, terminal, signals, capabilities, user),
//!   and its exec, with the search of PATH, in one function; what runs
//!   between the fork and the exec is bare system calls on the plan's
//!   memory, so it is sound whatever threads the process has; `step`:
//!   those steps, and how one failed, as the exec-error pipe carries it.
//! - `fd`: the standard descriptors, looked at once at start, the closed
//!   ones held so that no file of vigil's takes their number, the open
//!   ones borrowed; the `FIONREAD` and `TIOCOUTQ` ioctls; and whether
//!   vigil has a controlling terminal (an open of /dev/tty, through nix,
//!   which `spawn` and `user` read each their own way).
//! - `user`: the raw 32-bit `setgroups`, `setgid`, `setuid`.
//! - `caps`: `capget` and `capset` (nix wraps neither), the bounding and
//!   ambient sets and the securebits (`prctl`), and the new process's
//!   steps to hold exactly the `--caps` capabilities.
//! - `env`: the C library's `environ`, the C `main` that takes argv, and
//!   the path the program was executed by (`AT_EXECFN`).
//! - `arch`: the kernel's structures and call numbers that differ between
//!   the architectures vigil ships on, with compile-time layout checks.
//!
//! One fact about vigil makes `env` sound, and the compiler holds vigil to
//! it: nothing changes vigil's own environment (`env` says how; the
//! child's is made as a copy).

mod arch;
pub mod caps;
pub mod env;
pub mod exec;
pub mod fd;
pub mod process;
pub mod signal;
pub mod step;
pub mod user;
