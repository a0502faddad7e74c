//! Where the binaries are: vigil as cargo built it for this run, the test
//! programs of tests/programs/ (built on demand), and commands in PATH.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// Path of the vigil binary cargo built for this test run.
pub fn vigil_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_vigil"))
}

/// Path of a test program built from `tests/programs/NAME.rs` (a Cargo
/// example), beside the vigil binary (target/TARGET/debug/examples/NAME).
/// `cargo test` builds examples, but `cargo test --test X` does not: when a
/// program is missing or older than one of its sources (NAME.rs and what it
/// includes from tests/programs/support/), this runs `cargo build
/// --examples` once per test binary.
pub fn test_program(name: &str) -> PathBuf {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let dir = vigil_bin().parent().unwrap().join("examples");
    let bin = dir.join(name);
    let src_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified());
    let stale = |bin: &Path| -> bool {
        let (Ok(built), Some(sources)) = (modified(bin), dep_info_sources(bin)) else {
            return true;
        };
        sources
            .iter()
            .any(|src| modified(src).map_or(true, |m| built < m))
    };
    let res = BUILT.get_or_init(|| {
        let any_stale = std::fs::read_dir(&src_dir)
            .map(|rd| {
                rd.flatten().any(|e| {
                    let p = e.path();
                    p.extension() == Some(OsStr::new("rs"))
                        && stale(&dir.join(p.file_stem().unwrap()))
                })
            })
            .unwrap_or(false);
        if !any_stale {
            return Ok(());
        }
        let cargo = option_env!("CARGO").unwrap_or("cargo");
        let out = Command::new(cargo)
            .args(["build", "--quiet", "--examples", "--manifest-path"])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "cargo build --examples failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    });
    if let Err(e) = res {
        panic!("{e}");
    }
    assert!(
        bin.exists(),
        "test program {} missing (is tests/programs/{name}.rs there, and in Cargo.toml?)",
        bin.display()
    );
    bin
}

/// The sources cargo built `bin` from, as the dep-info file beside it
/// (BIN.d, make syntax: `BIN: SOURCE...`) lists them; None without one.
fn dep_info_sources(bin: &Path) -> Option<Vec<PathBuf>> {
    let text = std::fs::read_to_string(bin.with_extension("d")).ok()?;
    let (_, sources) = text.lines().next()?.split_once(": ")?;
    // A space in a path is escaped with a backslash.
    let sources = sources.replace("\\ ", "\0");
    Some(
        sources
            .split_whitespace()
            .map(|s| PathBuf::from(s.replace('\0', " ")))
            .collect(),
    )
}

/// Where `name` is in the test's PATH (for wrappers that are given another
/// PATH, or that need a program by its path).
pub fn which(name: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} not found in PATH"))
}

/// This machine's static musl target (`x86_64-unknown-linux-musl`,
/// `aarch64-unknown-linux-musl`): what vigil ships as here, and what the
/// tests build for (scripts/host-target.sh). Taken from the architecture
/// the tests themselves were built for, never written out.
pub fn host_musl_target() -> String {
    format!("{}-unknown-linux-musl", std::env::consts::ARCH)
}
