//! The install tests that need a container engine; the rest are in `install`.

use crate::common::*;
use crate::install::*;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[test]
fn docker_release_image_installs_itself_for_another_image() {
    const T: &str = "docker_install";
    let Some((release, dist)) = docker_release_image(T) else {
        return;
    };
    let Some(other) = TestImage::get(Engine::Docker, T) else {
        return;
    };
    let volume = Volume::new(T);
    let mount = format!("{}:{INSTALL_MOUNT}", volume.name);
    // The init container: the release image's entrypoint with the
    // recipe's args.
    let (code, _, err, _) = Ctr::run_fg(
        Engine::Docker,
        T,
        &["-v", &mount, "-e", "VIGIL_LOG_FORMAT=json"],
        &release.name,
        &INSTALL_ARGS,
    );
    let record = installed_record(code, &err);
    let released = sha256(&dist);
    assert_eq!(record["sha256"], released, "{record}");
    assert_eq!(sha256(&volume.path().join("vigil")), released);
    // The application's container: vigil from the volume, read-only, in
    // front of the command.
    let ro = format!("{mount}:ro");
    let run = |cmd: &str| {
        let argv: Vec<&str> = INSTALLED_COMMAND[1..]
            .iter()
            .copied()
            .chain(["/bin/sh", "-c", cmd])
            .collect();
        Ctr::run_fg(
            Engine::Docker,
            T,
            &["-v", &ro, "--entrypoint", INSTALLED_COMMAND[0]],
            &other.image,
            &argv,
        )
    };
    let (code, out, err, _) = run("cat /proc/1/cmdline; exit 3");
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        out.starts_with("/opt/vigil/vigil\0--\0/bin/sh\0"),
        "PID 1: {out:?}{err}"
    );
    // Read-only: the application cannot change the vigil it runs under.
    let (code, out, err, _) = run("echo x > /opt/vigil/vigil");
    assert_ne!(code, 0, "{out}{err}");
    // Installed again over the copy, as a restarted pod does.
    let (code, _, err, _) = Ctr::run_fg(
        Engine::Docker,
        T,
        &["-v", &mount, "-e", "VIGIL_LOG_FORMAT=json"],
        &release.name,
        &INSTALL_ARGS,
    );
    assert_eq!(installed_record(code, &err)["sha256"], released);
    // A read-only volume: one line, exit 1.
    let (code, out, err, _) = Ctr::run_fg(
        Engine::Docker,
        T,
        &["-v", &ro],
        &release.name,
        &INSTALL_ARGS,
    );
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("vigil: error: cannot install vigil in /opt/vigil: creating a file there: Read-only file system"),
        "{err}"
    );
}

#[test]
fn nginx_from_an_image_without_vigil_stops_cleanly_on_sigquit() {
    const T: &str = "docker_install_nginx";
    let Some((release, _)) = docker_release_image(T) else {
        return;
    };
    let Some(base) = ServerImage::base(T) else {
        return;
    };
    let volume = Volume::new(T);
    let mount = format!("{}:{INSTALL_MOUNT}", volume.name);
    let (code, _, err, _) = Ctr::run_fg(
        Engine::Docker,
        T,
        &["-v", &mount],
        &release.name,
        &INSTALL_ARGS,
    );
    assert_eq!(code, 0, "{err}");
    let ro = format!("{mount}:ro");
    // nginx's graceful stop is SIGQUIT: the image's STOPSIGNAL (here
    // `--stop-signal`), and vigil's stop signal too, so that vigil runs its
    // stop sequence on it.
    let mut argv = INSTALLED_COMMAND[1..].to_vec();
    argv.extend(["nginx", "-g", "daemon off;"]);
    let ctr = Ctr::start(
        Engine::Docker,
        T,
        &[
            "-v",
            &ro,
            "--entrypoint",
            INSTALLED_COMMAND[0],
            "--stop-signal",
            "SIGQUIT",
            "--stop-timeout",
            "20",
            "-e",
            "VIGIL_STOP_SIGNALS=QUIT",
            "-e",
            "VIGIL_LOG_FORMAT=json",
        ],
        &base,
        &argv,
    );
    ctr.wait_log("start worker process ", Duration::from_secs(60));
    let ip = address(&ctr);
    let answer = http_get(&ip, 80, "/", Duration::from_secs(10)).unwrap();
    assert_eq!(answer.body_text(), "version 1\n");
    let pid1 = ctr.exec(&["cat", "/proc/1/cmdline"]);
    assert!(
        pid1.starts_with("/opt/vigil/vigil\0--\0nginx\0"),
        "{pid1:?}"
    );
    let took = ctr.stop();
    let code = ctr.exit_code();
    let logs = ctr.logs();
    note(T, format!("docker stop: exit {code} after {}", secs(took)));
    assert_eq!(code, 0, "{logs}");
    assert!(
        took < Duration::from_secs(10),
        "docker stop took {took:?}\n{logs}"
    );
    assert_has(
        &logs,
        &["signal 3 (SIGQUIT) received", "gracefully shutting down"],
    );
    let records = records(&logs);
    let exit: Vec<&Json> = records.iter().filter(|r| r["event"] == "exit").collect();
    assert_eq!(exit.len(), 1, "{logs}");
    let exit = exit[0];
    assert_eq!(exit["status"], 0, "{exit}");
    assert_eq!(exit["stop"]["signal"], "SIGQUIT", "{exit}");
    assert_eq!(exit["stop"]["sent"], "SIGQUIT", "{exit}");
    assert_eq!(
        exit["stop"]["sender"]["kind"], "outside_namespace",
        "{exit}"
    );
    assert_eq!(exit["ending"]["kind"], "exited", "{exit}");
    assert_eq!(exit["ending"]["code"], 0, "{exit}");
}

#[test]
fn podman_mounts_the_release_image_and_runs_vigil_from_it() {
    const T: &str = "podman_image_mount";
    const REQUIRE: &str = "VIGIL_E2E_REQUIRE_PODMAN";
    if let Err(NotReady::Skip(why) | NotReady::Broken(why)) = Engine::Podman.version() {
        return skip_unless(T, Some(REQUIRE), &format!("{why} (Debian's podman)"));
    }
    let archive = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("dist")
        .join(format!("vigil_{}.oci.tar", env!("CARGO_PKG_VERSION")));
    if !archive.exists() {
        let why = format!("{} missing: run scripts/release.sh", archive.display());
        return skip_unless(T, Some(REQUIRE), &why);
    }
    let Some(other) = TestImage::get(Engine::Podman, T) else {
        return;
    };
    // The release image itself, from its OCI archive: this machine's
    // platform of the index.
    let release = ImageGuard::new(
        Engine::Podman,
        format!("localhost/{LABEL}:release-{}-image-mount", run_id()),
    );
    let pulled = Engine::Podman.ok(&["pull", "-q", &format!("oci-archive:{}", archive.display())]);
    Engine::Podman.ok(&["tag", pulled.trim(), &release.name]);
    Engine::Podman.quiet(&["rmi", pulled.trim()]);
    let (_, dist) = host_arch();
    let mount = format!(
        "type=image,source={},destination={IMAGE_MOUNT}",
        release.name
    );
    let opts = ["--mount", &mount, "--entrypoint", IMAGE_COMMAND[0]];
    let argv = |cmd: &'static str| -> Vec<&'static str> {
        IMAGE_COMMAND[1..]
            .iter()
            .copied()
            .chain(["/bin/sh", "-c", cmd])
            .collect()
    };
    let (code, out, err, _) = Ctr::run_fg(
        Engine::Podman,
        T,
        &opts,
        &other.image,
        &argv("cat /proc/1/cmdline; exit 3"),
    );
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        out.starts_with("/.vigil/vigil\0--\0/bin/sh\0"),
        "PID 1: {out:?}{err}"
    );
    // The mounted file is the released binary.
    let mounted = Engine::Podman.ok(&["image", "mount", &release.name]);
    let mounted = PathBuf::from(mounted.trim());
    let same = sha256(&mounted.join("vigil")) == sha256(&dist);
    Engine::Podman.quiet(&["image", "unmount", &release.name]);
    assert!(same, "the image's /vigil is not dist's binary");
    // `podman stop` runs vigil's stop sequence.
    let ctr = Ctr::start(
        Engine::Podman,
        T,
        &[
            &opts[..],
            &["-e", "VIGIL_LOG_FORMAT=json", "-e", "VIGIL_VERBOSITY=2"],
        ]
        .concat(),
        &other.image,
        &argv("sleep 100 & wait"),
    );
    // The child is up before the stop comes.
    ctr.wait_log("\"event\":\"started\"", Duration::from_secs(30));
    let took = ctr.stop_within(10);
    let code = ctr.exit_code();
    let logs = ctr.logs();
    note(T, format!("podman stop: exit {code} after {}", secs(took)));
    assert_eq!(code, 143, "{logs}");
    assert!(took < Duration::from_secs(5), "stop took {took:?}\n{logs}");
    let records = records(&logs);
    let exit: Vec<&Json> = records.iter().filter(|r| r["event"] == "exit").collect();
    assert_eq!(exit.len(), 1, "{logs}");
    assert_eq!(exit[0]["stop"]["signal"], "SIGTERM", "{logs}");
    assert_eq!(
        exit[0]["stop"]["sender"]["kind"], "outside_namespace",
        "{logs}"
    );
    assert_eq!(exit[0]["drain"]["left"], 1, "{logs}");
}

/// A Docker volume, removed when dropped.
pub(crate) struct Volume {
    pub(crate) name: String,
}

impl Volume {
    pub(crate) fn new(test: &str) -> Volume {
        let name = format!("{LABEL}-{}-{}", run_id(), test.replace('_', "-"));
        Engine::Docker.ok(&["volume", "create", "--label", &run_label(), &name]);
        Volume { name }
    }

    /// The volume's directory on this machine (Docker's local driver).
    pub(crate) fn path(&self) -> PathBuf {
        let at = Engine::Docker.ok(&["volume", "inspect", "-f", "{{.Mountpoint}}", &self.name]);
        PathBuf::from(at.trim())
    }
}

impl Drop for Volume {
    fn drop(&mut self) {
        Engine::Docker.quiet(&["volume", "rm", "-f", &self.name]);
    }
}

/// The release image in Docker, built from dist/ by the repository's
/// Dockerfile, and dist/'s binary for this machine: what a release ships.
pub(crate) fn docker_release_image(test: &'static str) -> Option<(ImageGuard, PathBuf)> {
    if let Err(why) = docker_ready() {
        skip(test, &why);
        return None;
    }
    let (_, dist) = host_arch();
    let image = ImageGuard::new(
        Engine::Docker,
        format!("{LABEL}:release-{}-{}", run_id(), test.replace('_', "-")),
    );
    let out = build_dist_image(&image.name);
    assert!(out.status.success(), "docker build: {}", text(&out.stderr));
    Some((image, dist))
}

/// The line `--install` wrote in a container: its record.
pub(crate) fn installed_record(code: i32, err: &str) -> Json {
    assert_eq!(code, 0, "{err}");
    let records = records(err);
    let installed: Vec<&Json> = records
        .iter()
        .filter(|r| r["event"] == "installed")
        .collect();
    assert_eq!(installed.len(), 1, "{err}");
    installed[0].clone()
}

/// vigil's JSON records in `stderr`.
pub(crate) fn records(stderr: &str) -> Vec<Json> {
    stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Json>(l.trim()).ok())
        .collect()
}
