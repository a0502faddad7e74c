//! The tests run the build that ships: a static binary for this machine's
//! musl target (scripts/host-target.sh makes it cargo's default here). A
//! plain `cargo test` without that setting builds a dynamically linked
//! glibc vigil, which differs from the release in small ways; this test
//! says so instead of letting the rest pass on the wrong binary.

use crate::common::*;

#[test]
fn tests_run_the_static_musl_build() {
    let bin = vigil_bin();
    let hint = "run `bash scripts/host-target.sh` once (it makes this machine's musl target \
                cargo's default in this checkout), as .ci/run does";
    let out = std::process::Command::new("file")
        .arg("-b")
        .arg(&bin)
        .output()
        .expect("file(1) (Debian's file package)");
    let desc = String::from_utf8_lossy(&out.stdout);
    assert!(
        desc.contains("statically linked") || desc.contains("static-pie linked"),
        "{} is not static ({desc}): {hint}",
        bin.display()
    );
    let version = Vigil::plain().arg("--version").run();
    let musl = format!("built for {}", host_musl_target());
    assert!(version.stdout.contains(&musl), "{version}\n{hint}");
}
