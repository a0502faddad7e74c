//! Tells `vigil --version` which commit it was built from and for which
//! target, so that a binary found in an image can be traced back.
//!
//! The commit is `VIGIL_COMMIT` when set (scripts/release.sh sets it, with a
//! `-modified` suffix for a tree with uncommitted changes), else git's HEAD,
//! else `unknown` (a build from a source tarball or a Docker context
//! without `.git`).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=VIGIL_COMMIT");
    let commit = std::env::var("VIGIL_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(git_head)
        .unwrap_or_else(|| "unknown".to_string());
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".to_string());
    println!("cargo:rustc-env=VIGIL_COMMIT={commit}");
    println!("cargo:rustc-env=VIGIL_TARGET={target}");
    drop_unwind_search_table();
}

/// The release binary of a musl target goes without the linker's search
/// table over the unwind tables (`--no-eh-frame-hdr`; CONTRIBUTING.md,
/// "Binary size"): with `panic = "abort"` nothing unwinds, and the table
/// serves only a panic's backtrace. Only there: test binaries unwind their
/// panics, and without the table a failing assertion aborts the whole test
/// binary ("failed to initiate panic") instead of reporting the failure.
fn drop_unwind_search_table() {
    let musl = std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|e| e == "musl");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    if musl && release {
        println!("cargo:rustc-link-arg-bins=-Wl,--no-eh-frame-hdr");
    }
}

/// HEAD's commit, and a rebuild whenever HEAD moves (a new commit, a
/// checkout): only files that exist are watched, since a missing one would
/// make cargo rerun this script on every build.
fn git_head() -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").args(args).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
    };
    let mut watched = vec![git(&["rev-parse", "--git-path", "HEAD"])?];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.extend(git(&["rev-parse", "--git-path", &branch]));
    }
    watched.extend(git(&["rev-parse", "--git-path", "packed-refs"]));
    for path in watched.iter().map(PathBuf::from).filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    git(&["rev-parse", "--short=12", "HEAD"])
}
