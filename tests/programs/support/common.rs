//! What the test programs share: dying with a message, reading
//! `--option value` arguments, signal numbers, the clock.
//!
//! Each helper includes this file (`#[path = "support/common.rs"] mod
//! common;`; Cargo.toml lists the programs, not support/) and names
//! itself with a crate-level `const PROG: &str`, which starts its messages.
#![allow(dead_code)]

/// Prints `PROG: msg` on stderr and exits 99, the status that says the
/// helper itself failed (not what it was testing).
pub fn die(msg: &str) -> ! {
    eprintln!("{}: {msg}", crate::PROG);
    std::process::exit(99)
}

/// The words after argv[0], one at a time. `value`, `number` and `parse`
/// take the word that follows an option; when it is missing or does not
/// parse, the helper dies.
pub struct Args(std::vec::IntoIter<String>);

impl Args {
    /// From `argv`, argv[0] first.
    pub fn new(argv: Vec<String>) -> Args {
        let mut words = argv.into_iter();
        words.next();
        Args(words)
    }

    /// From the process's command line.
    pub fn from_env() -> Args {
        Args::new(std::env::args().collect())
    }

    /// The value of option `opt`.
    pub fn value(&mut self, opt: &str) -> String {
        self.0
            .next()
            .unwrap_or_else(|| die(&format!("{opt} needs a value")))
    }

    /// The value of option `opt`, as a number (else: `bad number VALUE`).
    pub fn number<T: std::str::FromStr>(&mut self, opt: &str) -> T {
        let s = self.value(opt);
        s.parse()
            .unwrap_or_else(|_| die(&format!("bad number {s}")))
    }

    /// The value of option `opt`, parsed (else: `bad OPT`).
    pub fn parse<T: std::str::FromStr>(&mut self, opt: &str) -> T {
        self.value(opt)
            .parse()
            .unwrap_or_else(|_| die(&format!("bad {opt}")))
    }
}

impl Iterator for Args {
    type Item = String;
    fn next(&mut self) -> Option<String> {
        self.0.next()
    }
}

/// Dies of an argument no option of the helper's matches.
pub fn unknown(arg: &str) -> ! {
    die(&format!("unknown argument {arg}"))
}

/// A signal number, 1 to 64.
pub fn parse_signal(s: &str) -> Option<i32> {
    s.parse().ok().filter(|n| (1..=64).contains(n))
}

/// CLOCK_MONOTONIC in nanoseconds: `storm` stamps the last signal it sent of
/// each kind with it, `sigcount` the last one that arrived, so that the two
/// can be compared.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
