//! End-to-end tests of the release artefacts in real container engines:
//!
//! - the offline image (`Dockerfile`): built from dist/ with no registry,
//!   it holds only /vigil, says its version, and another image can
//!   `COPY --from=` it and run under it;
//! - the offline route of `Dockerfile.example`, exactly as its comments
//!   give it (a local busybox image, then the build with build args);
//! - podman's `--init --init-path` with the dist binary (podman's own init
//!   is catatonit).
//!
//! They need dist/ (`bash scripts/release.sh`), Debian's busybox-static, and
//! a Docker engine or podman. What is missing is a plain `SKIPPED:` line on
//! stderr, or a failure with `VIGIL_E2E_REQUIRE=1` (CI sets it where an
//! engine answers); podman with `VIGIL_E2E_REQUIRE_PODMAN=1`. Everything they
//! make is labelled `vigil-e2e` and removed at the end (see tests/docker.rs
//! for the sweep after a killed run).
//!
//!     cargo test --test images -- --nocapture

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const LABEL: &str = "vigil-e2e";

fn note(test: &str, msg: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr().lock(), "images e2e: {test}: {msg}");
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs a command for at most `secs` (coreutils `timeout`), output captured.
fn run(program: &str, args: &[&str], secs: u64) -> Output {
    Command::new("timeout")
        .arg("-s")
        .arg("KILL")
        .arg(secs.to_string())
        .arg(program)
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Docker's name for this machine's architecture, and the dist/ binary for it.
fn host_arch() -> (&'static str, PathBuf) {
    let (docker, dist) = match std::env::consts::ARCH {
        "x86_64" => ("amd64", "x86_64"),
        "aarch64" => ("arm64", "aarch64"),
        other => panic!("no release binary for host architecture {other}"),
    };
    (docker, repo().join("dist").join(format!("vigil-{dist}")))
}

/// Why a test cannot run here: a skip line, or a failure when required.
fn skip(test: &str, require_var: &str, why: &str) {
    if std::env::var(require_var).is_ok_and(|v| v == "1") {
        panic!("{test}: cannot run ({require_var}=1): {why}");
    }
    note(test, format!("SKIPPED: {why}"));
}

fn static_busybox() -> Option<PathBuf> {
    ["/bin/busybox", "/usr/bin/busybox"]
        .iter()
        .map(PathBuf::from)
        .find(|p| {
            p.exists()
                && Command::new("file")
                    .arg("-L")
                    .arg(p)
                    .output()
                    .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("statically linked"))
        })
}

/// What the Docker tests need, or why they cannot run.
fn docker_ready() -> Result<PathBuf, String> {
    if !run("docker", &["info"], 60).status.success() {
        return Err("no Docker engine answers".into());
    }
    for arch in ["x86_64", "aarch64", "i686", "armv7", "riscv64", "s390x"] {
        if !repo().join("dist").join(format!("vigil-{arch}")).exists() {
            return Err(format!(
                "dist/vigil-{arch} missing: run `bash scripts/release.sh` (the classic builder builds every stage of Dockerfile)"
            ));
        }
    }
    static_busybox().ok_or_else(|| "no static busybox (Debian's busybox-static)".into())
}

/// Removes the images and containers a test made, even when it fails.
struct Cleanup {
    engine: &'static str,
    images: Vec<String>,
    containers: Vec<String>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for c in &self.containers {
            let _ = run(self.engine, &["rm", "-f", "-v", c], 60);
        }
        for i in &self.images {
            let _ = run(self.engine, &["image", "rm", "-f", i], 60);
        }
        // The intermediate stages the classic builder leaves behind
        // untagged (they inherit the label of the local busybox image).
        let filter = format!("label={LABEL}=images");
        let _ = run(
            self.engine,
            &["image", "prune", "-f", "--filter", &filter],
            60,
        );
    }
}

/// A local busybox image made as Dockerfile.example's comments say:
/// bin/busybox and the applets its `app` stage uses, imported from a tar.
fn import_busybox(engine: &str, busybox: &Path, dir: &Path, image: &str, extra: &[&str]) {
    let bin = dir.join("bb/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(busybox, bin.join("busybox")).unwrap();
    for applet in ["sh", "mkdir", "cp", "echo"].iter().chain(extra) {
        std::os::unix::fs::symlink("busybox", bin.join(applet)).unwrap();
    }
    let script = format!(
        "tar -C '{}' -c . | {engine} import --change 'LABEL {LABEL}=images' - {image}",
        dir.join("bb").display()
    );
    let out = run("sh", &["-c", &script], 120);
    assert!(out.status.success(), "{engine} import: {}", text(&out));
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vigil-images-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `docker stop` of `name`; returns how long it took and the exit code.
fn stop(engine: &str, name: &str, timeout: u64) -> (Duration, String) {
    let started = Instant::now();
    let out = run(engine, &["stop", "-t", &timeout.to_string(), name], 120);
    assert!(out.status.success(), "{engine} stop: {}", text(&out));
    let took = started.elapsed();
    let code = run(
        engine,
        &["inspect", name, "--format", "{{.State.ExitCode}}"],
        60,
    );
    (took, stdout(&code))
}

#[test]
fn offline_image_from_dist() {
    const T: &str = "offline_image_from_dist";
    let busybox = match docker_ready() {
        Ok(b) => b,
        Err(why) => return skip(T, "VIGIL_E2E_REQUIRE", &why),
    };
    let run_id = std::process::id();
    let image = format!("vigil-e2e-images:dist-{run_id}");
    let user = format!("vigil-e2e-images:user-{run_id}");
    let name = format!("vigil-e2e-images-{run_id}");
    let mut cleanup = Cleanup {
        engine: "docker",
        images: vec![image.clone(), user.clone()],
        containers: vec![name.clone()],
    };
    let (docker_arch, dist_bin) = host_arch();

    // Built from the repository, as the README says, with no registry.
    let started = Instant::now();
    let out = run(
        "docker",
        &[
            "build",
            "-q",
            "--label",
            &format!("{LABEL}=images"),
            "--build-arg",
            &format!("TARGETARCH={docker_arch}"),
            "-t",
            &image,
            ".",
        ],
        600,
    );
    assert!(out.status.success(), "docker build: {}", text(&out));
    note(
        T,
        format!(
            "built {image} from dist/ in {:.1}s",
            started.elapsed().as_secs_f64()
        ),
    );

    // Only /vigil in it (docker adds its own /dev, /etc, /proc, /sys mounts
    // and /.dockerenv to every container), and it is the dist binary.
    let out = run("docker", &["create", "--name", &name, &image], 60);
    assert!(out.status.success(), "docker create: {}", text(&out));
    let listing = run(
        "sh",
        &["-c", &format!("docker export {name} | tar -t")],
        120,
    );
    let files: Vec<String> = stdout(&listing)
        .lines()
        .filter(|f| {
            !["dev/", "etc/", "proc/", "sys/", ".dockerenv"]
                .iter()
                .any(|p| f.starts_with(p))
        })
        .map(str::to_string)
        .collect();
    assert_eq!(files, ["vigil"], "{}", text(&listing));
    let exported = run(
        "sh",
        &[
            "-c",
            &format!("docker export {name} | tar -xO vigil | sha256sum"),
        ],
        120,
    );
    let local = run("sha256sum", &[&dist_bin.to_string_lossy()], 60);
    assert_eq!(
        stdout(&exported).split_whitespace().next(),
        stdout(&local).split_whitespace().next(),
        "the image's /vigil is not {}",
        dist_bin.display()
    );
    let _ = run("docker", &["rm", "-f", &name], 60);

    let out = run("docker", &["run", "--rm", &image, "--version"], 120);
    let version = stdout(&out);
    note(T, format!("docker run {image} --version: {version:?}"));
    assert!(
        version.starts_with(&format!("vigil version {}", env!("CARGO_PKG_VERSION")))
            && version.ends_with(&format!(
                "built for {}-unknown-linux-musl",
                std::env::consts::ARCH
            )),
        "{}",
        text(&out)
    );

    // Another image takes vigil from it with COPY --from=, as documented.
    let dir = temp_dir("user");
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::copy(&busybox, dir.join("bin/busybox")).unwrap();
    for applet in ["sh", "sleep"] {
        std::os::unix::fs::symlink("busybox", dir.join("bin").join(applet)).unwrap();
    }
    std::fs::write(
        dir.join("Dockerfile"),
        format!(
            "FROM scratch\nCOPY --from={image} /vigil /vigil\nCOPY bin/ /bin/\nLABEL {LABEL}=images\n\
             ENV PATH=/bin\nENTRYPOINT [\"/vigil\", \"--\"]\n"
        ),
    )
    .unwrap();
    let out = run(
        "docker",
        &["build", "-q", "-t", &user, &dir.to_string_lossy()],
        600,
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "docker build (COPY --from): {}",
        text(&out)
    );
    let out = run("docker", &["run", "--rm", &user, "sh", "-c", "exit 3"], 120);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let out = run(
        "docker",
        &[
            "run",
            "-d",
            "--name",
            &name,
            "--label",
            &format!("{LABEL}=images"),
            &user,
            "sh",
            "-c",
            "sleep 100 & wait",
        ],
        120,
    );
    assert!(out.status.success(), "docker run -d: {}", text(&out));
    std::thread::sleep(Duration::from_millis(500));
    let (took, code) = stop("docker", &name, 10);
    note(
        T,
        format!("docker stop: exit {code} after {:.2}s", took.as_secs_f64()),
    );
    assert_eq!(code, "143");
    assert!(took < Duration::from_secs(5), "stop took {took:?}");
    cleanup.containers.push(name);
}

#[test]
fn dockerfile_example_offline_route() {
    const T: &str = "dockerfile_example_offline_route";
    let busybox = match docker_ready() {
        Ok(b) => b,
        Err(why) => return skip(T, "VIGIL_E2E_REQUIRE", &why),
    };
    let run_id = std::process::id();
    let vigil = format!("vigil-e2e-images:example-vigil-{run_id}");
    let bb = format!("vigil-e2e-images:busybox-{run_id}");
    let demo = format!("vigil-e2e-images:demo-{run_id}");
    let name = format!("vigil-e2e-images-demo-{run_id}");
    let _cleanup = Cleanup {
        engine: "docker",
        images: vec![demo.clone(), bb.clone(), vigil.clone()],
        containers: vec![name.clone()],
    };
    let (docker_arch, _) = host_arch();
    let label = format!("{LABEL}=images");
    let out = run(
        "docker",
        &[
            "build",
            "-q",
            "--label",
            &label,
            "--build-arg",
            &format!("TARGETARCH={docker_arch}"),
            "-t",
            &vigil,
            ".",
        ],
        600,
    );
    assert!(out.status.success(), "docker build (vigil): {}", text(&out));
    let dir = temp_dir("busybox");
    import_busybox("docker", &busybox, &dir, &bb, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    let started = Instant::now();
    let out = run(
        "docker",
        &[
            "build",
            "-q",
            "-f",
            "Dockerfile.example",
            "--label",
            &label,
            "--build-arg",
            &format!("VIGIL_IMAGE={vigil}"),
            "--build-arg",
            &format!("BUSYBOX_IMAGE={bb}"),
            "-t",
            &demo,
            ".",
        ],
        600,
    );
    assert!(
        out.status.success(),
        "docker build -f Dockerfile.example: {}",
        text(&out)
    );
    note(
        T,
        format!(
            "Dockerfile.example built offline in {:.1}s",
            started.elapsed().as_secs_f64()
        ),
    );

    let out = run(
        "docker",
        &["run", "-d", "--name", &name, "--label", &label, &demo],
        120,
    );
    assert!(out.status.success(), "docker run: {}", text(&out));
    let mut page = String::new();
    for _ in 0..100 {
        let out = run(
            "docker",
            &[
                "exec",
                &name,
                "/bin/busybox",
                "wget",
                "-qO-",
                "http://127.0.0.1:8080/",
            ],
            60,
        );
        page = stdout(&out);
        if out.status.success() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(page, "hello from behind vigil");
    // The image's ENV: a pre-stop hook, then a 5 s pre-stop sleep, within
    // an 8 s grace period.
    let (took, code) = stop("docker", &name, 10);
    note(
        T,
        format!("docker stop: exit {code} after {:.2}s", took.as_secs_f64()),
    );
    assert_eq!(code, "143");
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(9),
        "stop took {took:?}"
    );
    let logs = run("docker", &["logs", &name], 60);
    let logs =
        String::from_utf8_lossy(&logs.stderr).to_string() + &String::from_utf8_lossy(&logs.stdout);
    assert!(
        logs.contains("vigil-demo: draining, no longer ready"),
        "{logs}"
    );
    assert!(logs.contains("exit status 143"), "{logs}");
}

/// podman on this kind of machine: the OCI runtime cannot raise resource
/// limits (no CAP_SYS_RESOURCE), and podman asks for RLIMIT_NOFILE and
/// RLIMIT_NPROC of 1048576 by default; explicit lower `--ulimit`s avoid it.
const PODMAN_ULIMITS: [&str; 4] = [
    "--ulimit",
    "nofile=1024:1024",
    "--ulimit",
    "nproc=1024:1024",
];

#[test]
fn podman_init_path() {
    const T: &str = "podman_init_path";
    const REQUIRE: &str = "VIGIL_E2E_REQUIRE_PODMAN";
    let (_, dist_bin) = host_arch();
    if !dist_bin.exists() {
        return skip(
            T,
            REQUIRE,
            &format!("{} missing: run scripts/release.sh", dist_bin.display()),
        );
    }
    let Some(busybox) = static_busybox() else {
        return skip(T, REQUIRE, "no static busybox (Debian's busybox-static)");
    };
    if Command::new("podman").arg("--version").output().is_err() {
        return skip(T, REQUIRE, "no podman (Debian's podman)");
    }
    let run_id = std::process::id();
    let image = format!("localhost/vigil-e2e-images:podman-{run_id}");
    let name = format!("vigil-e2e-images-podman-{run_id}");
    let _cleanup = Cleanup {
        engine: "podman",
        images: vec![image.clone()],
        containers: vec![name.clone()],
    };
    let dir = temp_dir("podman");
    import_busybox("podman", &busybox, &dir, &image, &["sleep", "kill", "cat"]);
    let _ = std::fs::remove_dir_all(&dir);
    let bin = dist_bin.to_string_lossy().to_string();
    let podman_run = |extra: &[&str], cmd: &[&str]| {
        let mut args = vec!["run"];
        args.extend(PODMAN_ULIMITS);
        args.extend(["--init", "--init-path", &bin]);
        args.extend(extra);
        args.push(&image);
        args.extend(cmd);
        run("podman", &args, 120)
    };

    // podman mounts the init at /run/podman-init and runs it as PID 1.
    let out = podman_run(&["--rm"], &["/bin/sh", "-c", "cat /proc/1/cmdline; exit 3"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        stdout(&out).starts_with("/run/podman-init\0--\0/bin/sh"),
        "{}",
        text(&out)
    );
    let out = podman_run(&["--rm"], &["/bin/sh", "-c", "kill -USR1 $$"]);
    assert_eq!(out.status.code(), Some(138), "{}", text(&out));

    let out = podman_run(
        &["-d", "--name", &name, "-e", "VIGIL_VERBOSITY=2"],
        &["/bin/sh", "-c", "sleep 100 & wait"],
    );
    assert!(out.status.success(), "podman run -d: {}", text(&out));
    std::thread::sleep(Duration::from_millis(500));
    let (took, code) = stop("podman", &name, 10);
    note(
        T,
        format!("podman stop: exit {code} after {:.2}s", took.as_secs_f64()),
    );
    assert_eq!(code, "143");
    assert!(took < Duration::from_secs(5), "stop took {took:?}");
    let logs = run("podman", &["logs", &name], 60);
    let logs = text(&logs);
    assert!(
        logs.contains("SIGTERM from pid 0 (outside this PID namespace)"),
        "{logs}"
    );
    assert!(logs.contains("drain: SIGTERM to 1 process"), "{logs}");
}
