//! A test that cannot run here, and the switch that makes that a failure.
//!
//! A test that lacks something the machine does not have (a container
//! engine, the release in dist/, a program such as strace or tini-static,
//! a cgroup it can make) calls `skip`: a line `e2e: TEST: SKIPPED: WHY`
//! written past libtest's capture, so that it shows in every run, and the
//! test returns and passes. With `VIGIL_E2E_REQUIRE=1`, which CI sets,
//! `skip` panics instead: in CI every test runs, and a skip fails the run.
//! The `e2e` modules are the tests that need most of that (tests/README.md,
//! "The e2e tier").

use super::note;
use std::path::PathBuf;

/// The variable that turns every skip into a failure.
pub const REQUIRE: &str = "VIGIL_E2E_REQUIRE";

/// A switch from the environment: `1/true/yes/on` or `0/false/no/off/skip`
/// (empty is off); None when unset or unreadable.
pub fn flag(name: &str) -> Option<bool> {
    let v = std::env::var(name).ok()?;
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" | "skip" | "" => Some(false),
        _ => None,
    }
}

/// Whether every test must run (`VIGIL_E2E_REQUIRE=1`).
pub fn required() -> bool {
    flag(REQUIRE) == Some(true)
}

/// `test` cannot run here, because `why`: a `SKIPPED` line, or a panic
/// when every test must run.
#[track_caller]
pub fn skip(test: &str, why: &str) {
    skip_unless(test, None, why);
}

/// `skip`, that also panics when `also` (a narrower switch, such as
/// `VIGIL_E2E_REQUIRE_PODMAN`) is on.
#[track_caller]
pub fn skip_unless(test: &str, also: Option<&str>, why: &str) {
    if required() {
        panic!("{test}: cannot run, and {REQUIRE} is set: {why}");
    }
    if let Some(var) = also.filter(|&v| flag(v) == Some(true)) {
        panic!("{test}: cannot run, and {var} is set: {why}");
    }
    note(test, format!("SKIPPED: {why}"));
}

/// A program the test needs from the machine, found in PATH (or at one of
/// `paths`): its path, or None after `skip` (`package`: the Debian package
/// that has it).
pub fn need_program(test: &str, name: &str, package: &str) -> Option<PathBuf> {
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    if found.is_none() {
        skip(test, &format!("no {name} (Debian package {package})"));
    }
    found
}
