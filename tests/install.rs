//! `--install DIR`: vigil copies itself to `DIR/vigil`, and the release
//! image is then its own init container. Here: the copy itself (bytes,
//! mode, atomic replacement, what it says, the directories it cannot use,
//! no /proc); docs/kubernetes.md's two recipes, parsed as YAML, against
//! what the container tests run; and those tests: the release image
//! installing itself into a Docker volume that another image runs vigil
//! from (nginx with its SIGQUIT stop among them), and podman mounting the
//! release image itself (`--mount type=image`).

mod common;

use common::*;
use serde_json::Value as Json;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// What the init-container recipe and the Docker test run: the release
/// image's arguments, where the volume is mounted, and the command in
/// front of the application's.
const INSTALL_ARGS: [&str; 2] = ["--install", "/opt/vigil"];
const INSTALL_MOUNT: &str = "/opt/vigil";
const INSTALLED_COMMAND: [&str; 2] = ["/opt/vigil/vigil", "--"];
/// What the image-volume recipe and the podman test run.
const IMAGE_MOUNT: &str = "/.vigil";
const IMAGE_COMMAND: [&str; 2] = ["/.vigil/vigil", "--"];
/// The release image, as the recipes name it.
const RELEASE_IMAGE: &str = "REGISTRY/vigil:VERSION";

/// `sha256sum FILE`'s digest.
fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    assert!(
        out.status.success(),
        "sha256sum {}: {out:?}",
        path.display()
    );
    text(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// vigil's JSON records in `stderr`.
fn records(stderr: &str) -> Vec<Json> {
    stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Json>(l.trim()).ok())
        .collect()
}

/// The one record of `stderr`, which must be all it holds.
fn only_record(out: &Output) -> Json {
    let lines = out.stderr_lines();
    assert_eq!(lines.len(), 1, "one line expected\n{out}");
    serde_json::from_str(lines[0]).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// `vigil --log-format json --install DIR`, run as `v` says.
fn install(v: Vigil, dir: &Path) -> Output {
    v.args(["--log-format", "json", "--install"]).arg(dir).run()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

// ---------------------------------------------------------------------------
// The copy
// ---------------------------------------------------------------------------

#[test]
fn copies_itself_byte_for_byte_with_mode_0755_whatever_the_umask() {
    let dir = TempDir::new("install");
    // A umask that would leave the copy unreadable to anyone else.
    let umask = Vigil::wrapped(&["sh", "-c", "umask 077; exec \"$0\" \"$@\""]);
    let out = umask.args(["--install"]).arg(dir.path()).run();
    assert_eq!(out.status, Exit::Code(0), "{out}");
    let copy = dir.join("vigil");
    let digest = sha256(&vigil_bin());
    assert_eq!(sha256(&copy), digest);
    let meta = fs::metadata(&copy).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o755);
    let lines = out.stderr_lines();
    assert_eq!(
        lines,
        [format!(
            "vigil: installed {}: {} bytes, sha256 {digest}",
            copy.display(),
            meta.len()
        )],
        "{out}"
    );
    assert!(out.stdout.is_empty(), "{out}");
    // Nothing else left in DIR: no temporary file.
    assert_eq!(entries(dir.path()), ["vigil"]);
}

#[test]
fn the_record_says_what_was_written_and_from_what() {
    let dir = TempDir::new("install");
    let out = install(Vigil::plain(), dir.path());
    assert_eq!(out.status, Exit::Code(0), "{out}");
    let record = only_record(&out);
    assert_eq!(record["event"], "installed", "{record}");
    assert_eq!(record["level"], "info", "{record}");
    let copy = dir.join("vigil");
    assert_eq!(record["path"], copy.to_string_lossy().as_ref(), "{record}");
    assert_eq!(record["sha256"], sha256(&copy), "{record}");
    assert_eq!(
        record["bytes"],
        fs::metadata(&copy).unwrap().len(),
        "{record}"
    );
    assert_eq!(record["source"], "/proc/self/exe", "{record}");
}

#[test]
fn running_again_replaces_the_copy_by_a_rename() {
    let dir = TempDir::new("install");
    let copy = dir.join("vigil");
    fs::write(&copy, "an older vigil").unwrap();
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o600)).unwrap();
    // A reader of the old copy keeps the old file: it is replaced, not
    // written over.
    let held = fs::File::open(&copy).unwrap();
    let before = held.metadata().unwrap().ino();
    for _ in 0..2 {
        let out = install(Vigil::plain(), dir.path());
        assert_eq!(out.status, Exit::Code(0), "{out}");
    }
    assert_eq!(sha256(&copy), sha256(&vigil_bin()));
    assert_ne!(fs::metadata(&copy).unwrap().ino(), before);
    assert_eq!(
        fs::read_to_string(
            "/proc/self/fd/".to_string()
                + &{
                    use std::os::fd::AsRawFd;
                    held.as_raw_fd().to_string()
                }
        )
        .unwrap(),
        "an older vigil"
    );
    assert_eq!(entries(dir.path()), ["vigil"]);
}

/// A read-only file system mounted on `dir` for the test's life.
struct ReadOnly(PathBuf);

impl ReadOnly {
    fn mount(dir: &Path) -> ReadOnly {
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs"])
            .arg(dir)
            .status()
            .unwrap();
        assert!(
            status.success(),
            "mount a read-only tmpfs on {}",
            dir.display()
        );
        ReadOnly(dir.to_path_buf())
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_directory_it_cannot_use_is_one_line_and_exit_1() {
    let dir = TempDir::new("install");
    let read_only = dir.join("read-only");
    fs::create_dir(&read_only).unwrap();
    let _mounted = ReadOnly::mount(&read_only);
    let file = dir.join("a-file");
    fs::write(&file, "").unwrap();
    let taken = dir.join("taken");
    fs::create_dir_all(taken.join("vigil")).unwrap();
    for (target, step, error) in [
        (
            dir.join("missing"),
            "creating a file there",
            "No such file or directory",
        ),
        (
            read_only.clone(),
            "creating a file there",
            "Read-only file system",
        ),
        (file.clone(), "creating a file there", "Not a directory"),
        (taken.clone(), "renaming it to", "Is a directory"),
    ] {
        let out = install(Vigil::plain(), &target);
        assert_eq!(out.status, Exit::Code(1), "{}: {out}", target.display());
        let record = only_record(&out);
        assert_eq!(record["event"], "install_failed", "{record}");
        assert_eq!(record["dir"], target.to_string_lossy().as_ref(), "{record}");
        assert_eq!(record["step"], step, "{record}");
        assert_eq!(record["error"], error, "{record}");
        assert_eq!(record["status"], 1, "{record}");
    }
    // The failed rename left no temporary file behind.
    assert_eq!(entries(&taken), ["vigil"]);
    // In text, the one line names the directory.
    let out = Vigil::plain()
        .args(["--install"])
        .arg(dir.join("missing"))
        .run();
    assert_eq!(
        out.stderr_lines(),
        [format!(
            "vigil: error: cannot install vigil in {}: creating a file there: No such file or directory",
            dir.join("missing").display()
        )],
        "{out}"
    );
}

#[test]
fn without_proc_it_copies_the_file_it_was_executed_by() {
    let dir = TempDir::new("install");
    // A mount namespace of its own, whose /proc is gone.
    let no_proc = Vigil::wrapped(&[
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        "umount -l /proc && exec \"$0\" \"$@\"",
    ]);
    let out = install(no_proc, dir.path());
    assert_eq!(out.status, Exit::Code(0), "{out}");
    let record = only_record(&out);
    assert_eq!(
        record["source"],
        vigil_bin().to_string_lossy().as_ref(),
        "{record}"
    );
    assert_eq!(sha256(&dir.join("vigil")), sha256(&vigil_bin()));
}

#[test]
fn the_termination_log_gets_the_line() {
    let dir = TempDir::new("install");
    let log = dir.join("termination-log");
    let out = Vigil::plain()
        .env("VIGIL_TERMINATION_LOG", &log)
        .args(["--install"])
        .arg(dir.path())
        .run();
    assert_eq!(out.status, Exit::Code(0), "{out}");
    let written = fs::read_to_string(&log).unwrap();
    assert!(written.starts_with("installed "), "{written:?}");
    let missing = dir.join("missing");
    let out = Vigil::plain()
        .env("VIGIL_TERMINATION_LOG", &log)
        .args(["--install"])
        .arg(&missing)
        .run();
    assert_eq!(out.status, Exit::Code(1), "{out}");
    let written = fs::read_to_string(&log).unwrap();
    assert!(
        written.starts_with("cannot install vigil in "),
        "{written:?}"
    );
}

#[test]
fn a_command_after_it_is_a_usage_error() {
    let dir = TempDir::new("install");
    let out = Vigil::plain()
        .args(["--install"])
        .arg(dir.path())
        .args(["--", "true"])
        .run();
    let line = usage_error_line(&out, "--install DIR -- true");
    assert!(line.contains("--install runs no command"), "{line}");
    assert_eq!(entries(dir.path()), Vec::<String>::new());
}

// ---------------------------------------------------------------------------
// The Kubernetes recipes
// ---------------------------------------------------------------------------

/// Every YAML document of every ```yaml block of a doc, parsed by a real
/// YAML parser (Python's yaml, Debian's python3-yaml) and handed over as
/// JSON.
fn yaml_documents(doc: &str) -> Vec<Json> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(doc);
    let script = r#"
import json, re, sys
import yaml
text = open(sys.argv[1]).read()
blocks = re.findall(r"^```yaml\n(.*?)^```", text, re.S | re.M)
print(json.dumps([d for b in blocks for d in yaml.safe_load_all(b)]))
"#;
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(&path)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "parsing the YAML of {doc} (python3-yaml installed?): {}",
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn strings(value: &Json) -> Vec<&str> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap_or_else(|| panic!("not a string: {v}")))
        .collect()
}

/// The app container of a recipe: its command's head, its mount of the
/// `vigil` volume, and its variables, which must all be vigil's options'.
fn check_app(recipe: &Json, command: [&str; 2], mount: &str) {
    let app = &recipe["spec"]["containers"][0];
    let cmd = strings(&app["command"]);
    assert_eq!(cmd[..2], command, "{app}");
    assert!(
        cmd.len() > 2,
        "the application's own command follows: {app}"
    );
    let mounts = app["volumeMounts"].as_array().unwrap();
    assert!(
        mounts
            .iter()
            .any(|m| m["name"] == "vigil" && m["mountPath"] == mount && m["readOnly"] == true),
        "{app}"
    );
    let known: Vec<&str> = common::options::OPTIONS
        .iter()
        .filter_map(|o| o.env)
        .collect();
    for var in app["env"].as_array().into_iter().flatten() {
        let name = var["name"].as_str().unwrap();
        assert!(known.contains(&name), "{name} is no variable of vigil's");
    }
}

#[test]
fn the_kubernetes_recipes_run_what_the_tests_run() {
    let docs = yaml_documents("docs/kubernetes.md");
    let with_init: Vec<&Json> = docs
        .iter()
        .filter(|d| d["spec"]["initContainers"].is_array())
        .collect();
    assert_eq!(with_init.len(), 1, "one init-container recipe");
    let recipe = with_init[0];
    let init = &recipe["spec"]["initContainers"][0];
    assert_eq!(init["image"], RELEASE_IMAGE, "{init}");
    assert!(
        init["command"].is_null(),
        "the image's own entrypoint: {init}"
    );
    assert_eq!(strings(&init["args"]), INSTALL_ARGS, "{init}");
    assert_eq!(init["volumeMounts"][0]["name"], "vigil", "{init}");
    assert_eq!(
        init["volumeMounts"][0]["mountPath"], INSTALL_MOUNT,
        "{init}"
    );
    let volume = &recipe["spec"]["volumes"][0];
    assert_eq!(volume["name"], "vigil");
    assert!(volume["emptyDir"].is_object(), "{volume}");
    check_app(recipe, INSTALLED_COMMAND, INSTALL_MOUNT);

    let with_image: Vec<&Json> = docs
        .iter()
        .filter(|d| {
            d["spec"]["volumes"]
                .as_array()
                .is_some_and(|v| v.iter().any(|v| v["image"].is_object()))
        })
        .collect();
    assert_eq!(with_image.len(), 1, "one image-volume recipe");
    let recipe = with_image[0];
    let volume = &recipe["spec"]["volumes"][0];
    assert_eq!(volume["name"], "vigil");
    assert_eq!(volume["image"]["reference"], RELEASE_IMAGE, "{volume}");
    check_app(recipe, IMAGE_COMMAND, IMAGE_MOUNT);

    // docs/docker.md gives the same with Docker's volumes and podman's
    // image mount.
    let docker_md =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/docker.md")).unwrap();
    for line in [
        format!(
            "docker run --rm -v vigil:{INSTALL_MOUNT} {RELEASE_IMAGE} {}",
            INSTALL_ARGS.join(" ")
        ),
        format!(
            "docker run -v vigil:{INSTALL_MOUNT}:ro --entrypoint {} IMAGE {} original command",
            INSTALLED_COMMAND[0], INSTALLED_COMMAND[1]
        ),
        format!(
            "podman run --mount type=image,source={RELEASE_IMAGE},destination={IMAGE_MOUNT} \\"
        ),
        format!(
            "--entrypoint {} IMAGE {} original command",
            IMAGE_COMMAND[0], IMAGE_COMMAND[1]
        ),
    ] {
        assert!(docker_md.contains(&line), "docs/docker.md lacks: {line}");
    }
}

// ---------------------------------------------------------------------------
// In containers: the release image as an init container, and as an image
// mount
// ---------------------------------------------------------------------------

/// A Docker volume, removed when dropped.
struct Volume {
    name: String,
}

impl Volume {
    fn new(test: &str) -> Volume {
        let name = format!("{LABEL}-{}-{}", run_id(), test.replace('_', "-"));
        Engine::Docker.ok(&["volume", "create", "--label", &run_label(), &name]);
        Volume { name }
    }

    /// The volume's directory on this machine (Docker's local driver).
    fn path(&self) -> PathBuf {
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
fn docker_release_image(test: &'static str) -> Option<(ImageGuard, PathBuf)> {
    if let Err(why) = docker_ready() {
        skip(test, "VIGIL_E2E_REQUIRE", &why);
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
fn installed_record(code: i32, err: &str) -> Json {
    assert_eq!(code, 0, "{err}");
    let records = records(err);
    let installed: Vec<&Json> = records
        .iter()
        .filter(|r| r["event"] == "installed")
        .collect();
    assert_eq!(installed.len(), 1, "{err}");
    installed[0].clone()
}

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
        return skip(T, REQUIRE, &format!("{why} (Debian's podman)"));
    }
    let archive = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("dist")
        .join(format!("vigil_{}.oci.tar", env!("CARGO_PKG_VERSION")));
    if !archive.exists() {
        let why = format!("{} missing: run scripts/release.sh", archive.display());
        return skip(T, REQUIRE, &why);
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
