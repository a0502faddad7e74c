//! `--install DIR`: vigil copies itself to `DIR/vigil`, and the release
//! image is then its own init container. Here: the copy itself (bytes,
//! mode, atomic replacement, what it says, the directories it cannot use,
//! no /proc); docs/kubernetes.md's two recipes, parsed as YAML, against
//! what the container tests run; and those tests: the release image
//! installing itself into a Docker volume that another image runs vigil
//! from (nginx with its SIGQUIT stop among them), and podman mounting the
//! release image itself (`--mount type=image`).

use crate::common::*;
use serde_json::Value as Json;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the init-container recipe and the Docker test run: the release
/// image's arguments, where the volume is mounted, and the command in
/// front of the application's.
pub(crate) const INSTALL_ARGS: [&str; 2] = ["--install", "/opt/vigil"];
pub(crate) const INSTALL_MOUNT: &str = "/opt/vigil";
pub(crate) const INSTALLED_COMMAND: [&str; 2] = ["/opt/vigil/vigil", "--"];
/// What the image-volume recipe and the podman test run.
pub(crate) const IMAGE_MOUNT: &str = "/.vigil";
pub(crate) const IMAGE_COMMAND: [&str; 2] = ["/.vigil/vigil", "--"];
/// The release image, as the recipes name it.
pub(crate) const RELEASE_IMAGE: &str = "REGISTRY/vigil:VERSION";

/// `sha256sum FILE`'s digest.
pub(crate) fn sha256(path: &Path) -> String {
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

/// The one record of `stderr`, which must be all it holds.
pub(crate) fn only_record(out: &Output) -> Json {
    let lines = out.stderr_lines();
    assert_eq!(lines.len(), 1, "one line expected\n{out}");
    serde_json::from_str(lines[0]).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// `vigil --log-format json --install DIR`, run as `v` says.
pub(crate) fn install(v: Vigil, dir: &Path) -> Output {
    v.args(["--log-format", "json", "--install"]).arg(dir).run()
}

pub(crate) fn entries(dir: &Path) -> Vec<String> {
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
pub(crate) fn copies_itself_byte_for_byte_with_mode_0755_whatever_the_umask() {
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
pub(crate) fn the_record_says_what_was_written_and_from_what() {
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
pub(crate) fn running_again_replaces_the_copy_by_a_rename() {
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
pub(crate) struct ReadOnly(PathBuf);

impl ReadOnly {
    pub(crate) fn mount(dir: &Path) -> ReadOnly {
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
pub(crate) fn a_directory_it_cannot_use_is_one_line_and_exit_1() {
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
pub(crate) fn without_proc_it_copies_the_file_it_was_executed_by() {
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
pub(crate) fn the_termination_log_gets_the_line() {
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
pub(crate) fn a_command_after_it_is_a_usage_error() {
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
pub(crate) fn yaml_documents(doc: &str) -> Vec<Json> {
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

pub(crate) fn strings(value: &Json) -> Vec<&str> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap_or_else(|| panic!("not a string: {v}")))
        .collect()
}

/// The app container of a recipe: its command's head, its mount of the
/// `vigil` volume, and its variables, which must all be vigil's options'.
pub(crate) fn check_app(recipe: &Json, command: [&str; 2], mount: &str) {
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
    let known: Vec<&str> = crate::common::options::OPTIONS
        .iter()
        .filter_map(|o| o.env)
        .collect();
    for var in app["env"].as_array().into_iter().flatten() {
        let name = var["name"].as_str().unwrap();
        assert!(known.contains(&name), "{name} is no variable of vigil's");
    }
}

#[test]
pub(crate) fn the_kubernetes_recipes_run_what_the_tests_run() {
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
