//! The container images the project ships, end to end in real engines:
//!
//! - the offline image (`Dockerfile`): built from dist/ with no registry,
//!   it holds only /vigil, says its version, and another image can
//!   `COPY --from=` it and run under it;
//! - `Dockerfile.example`: its `ENV` lines are settings vigil accepts (no
//!   engine needed), its final stage runs as written, and its offline
//!   route works exactly as its comments give it (a local busybox image,
//!   then the build with build args);
//! - podman's `--init --init-path` with the dist binary (podman's own init
//!   is catatonit).
//!
//! The engines are driven through the shared harness (tests/it/common/engine.rs,
//! which also says how a killed run is swept up). Most of these tests need
//! dist/ (`bash scripts/release.sh`), Debian's busybox-static, and a Docker
//! engine or podman; what is missing is a plain `SKIPPED:` line on stderr,
//! or a failure with `VIGIL_E2E_REQUIRE=1` (CI sets it where an engine
//! answers), for podman with `VIGIL_E2E_REQUIRE_PODMAN=1`.
//!
//!     cargo test --test it e2e::images -- --nocapture

use crate::common::*;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

const DOCKER: Engine = Engine::Docker;
const PODMAN: Engine = Engine::Podman;

/// The tests that build images take turns: their builds share the
/// builder's cache, and one test's clean-up (its images removed with their
/// untagged parents) could take a cached layer from under another's build.
fn one_build_at_a_time() -> MutexGuard<'static, ()> {
    static BUILDS: Mutex<()> = Mutex::new(());
    BUILDS.lock().unwrap_or_else(|e| e.into_inner())
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A command's status and output, for a failure message.
fn show(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    )
}

/// A command's stdout, trimmed.
fn stdout(o: &Output) -> String {
    text(&o.stdout).trim().to_string()
}

/// `sh -c SCRIPT` in the repository, at most ENGINE_TIMEOUT.
fn sh(script: &str) -> Output {
    run_cmd(
        Command::new("sh").args(["-c", script]).current_dir(repo()),
        ENGINE_TIMEOUT,
    )
}

/// A local busybox image made as Dockerfile.example's comments say:
/// bin/busybox and the applets its `app` stage uses, imported from a tar.
fn import_busybox(engine: Engine, busybox: &Path, image: &str, extra: &[&str]) {
    let dir = TempDir::new("images-busybox");
    let applets: Vec<&str> = ["sh", "mkdir", "cp", "echo"]
        .iter()
        .chain(extra)
        .copied()
        .collect();
    busybox_bin(&dir.join("bb"), busybox, &applets).unwrap();
    let out = sh(&format!(
        "tar -C '{}' -c . | {} import --change 'LABEL {}' - {image}",
        dir.join("bb").display(),
        engine.name(),
        run_label()
    ));
    assert!(
        out.status.success(),
        "{} import: {}",
        engine.name(),
        show(&out)
    );
}

// ---------------------------------------------------------------------------
// The offline image (Dockerfile)
// ---------------------------------------------------------------------------

#[test]
fn offline_image_from_dist() {
    const T: &str = "offline_image_from_dist";
    let busybox = match docker_ready() {
        Ok(b) => b,
        Err(why) => return skip(T, &why),
    };
    let _builds = one_build_at_a_time();
    let run_id = run_id();
    let image = ImageGuard::new(DOCKER, format!("vigil-e2e-images:dist-{run_id}"));
    let user = ImageGuard::new(DOCKER, format!("vigil-e2e-images:user-{run_id}"));
    let (image, user) = (&image.name, &user.name);
    let (_, dist_bin) = host_arch();

    // Built from the repository, as the README says, with no registry.
    let started = Instant::now();
    let out = build_dist_image(image);
    assert!(out.status.success(), "docker build: {}", show(&out));
    note(
        T,
        format!("built {image} from dist/ in {}", secs(started.elapsed())),
    );

    // Only /vigil in it (docker adds its own /dev, /etc, /proc, /sys mounts
    // and /.dockerenv to every container), and it is the dist binary.
    let created = Ctr::new(DOCKER, T);
    let name = &created.name;
    let out = DOCKER.cmd(&["create", "--name", name, "--label", &run_label(), image]);
    assert!(out.status.success(), "docker create: {}", show(&out));
    let listing = sh(&format!("docker export {name} | tar -t"));
    let files: Vec<String> = stdout(&listing)
        .lines()
        .filter(|f| {
            !["dev/", "etc/", "proc/", "sys/", ".dockerenv"]
                .iter()
                .any(|p| f.starts_with(p))
        })
        .map(str::to_string)
        .collect();
    assert_eq!(files, ["vigil"], "{}", show(&listing));
    let exported = sh(&format!("docker export {name} | tar -xO vigil | sha256sum"));
    let local = sh(&format!("sha256sum '{}'", dist_bin.display()));
    assert_eq!(
        stdout(&exported).split_whitespace().next(),
        stdout(&local).split_whitespace().next(),
        "the image's /vigil is not {}",
        dist_bin.display()
    );
    drop(created);

    let (code, out, err, _) = Ctr::run_fg(DOCKER, T, &[], image, &["--version"]);
    let version = out.trim();
    note(T, format!("docker run {image} --version: {version:?}"));
    assert!(
        version.starts_with(&format!("vigil version {}", env!("CARGO_PKG_VERSION")))
            && version.ends_with(&format!("built for {}", host_musl_target())),
        "status {code}\n{out}{err}"
    );

    // Another image takes vigil from it with COPY --from=, as documented.
    let dir = TempDir::new("images-user");
    busybox_bin(dir.path(), &busybox, &["sh", "sleep"]).unwrap();
    fs::write(
        dir.join("Dockerfile"),
        format!(
            "FROM scratch\nCOPY --from={image} /vigil /vigil\nCOPY bin/ /bin/\nLABEL {}\n\
             ENV PATH=/bin\nENTRYPOINT [\"/vigil\", \"--\"]\n",
            run_label()
        ),
    )
    .unwrap();
    let out = DOCKER.cmd_within(
        &["build", "-q", "-t", user, &dir.path().to_string_lossy()],
        BUILD_TIMEOUT,
    );
    drop(dir);
    assert!(
        out.status.success(),
        "docker build (COPY --from): {}",
        show(&out)
    );
    let (code, out, err, _) = Ctr::run_fg(DOCKER, T, &[], user, &["sh", "-c", "exit 3"]);
    assert_eq!(code, 3, "{out}{err}");
    // Stopped once vigil runs its child.
    let ctr = Ctr::start(
        DOCKER,
        T,
        &[],
        user,
        &["sh", "-c", "echo ready; sleep 100 & wait"],
    );
    ctr.wait_log("ready", Duration::from_secs(20));
    let took = ctr.stop_within(10);
    let code = ctr.exit_code();
    note(T, format!("docker stop: exit {code} after {}", secs(took)));
    assert_eq!(code, 143);
    assert!(took < Duration::from_secs(5), "stop took {took:?}");
}

// ---------------------------------------------------------------------------
// Dockerfile.example
// ---------------------------------------------------------------------------

/// The ENV lines of Dockerfile.example name only variables vigil reads, with
/// values vigil accepts; the final stage is FROM scratch with vigil as
/// ENTRYPOINT.
#[test]
fn dockerfile_example_is_consistent() {
    let path = repo().join("Dockerfile.example");
    let src = fs::read_to_string(&path).expect("Dockerfile.example");
    // Join continuation lines, drop comments.
    let mut lines = Vec::new();
    let mut cur = String::new();
    for line in src.lines() {
        let t = line.trim();
        if t.starts_with('#') || (t.is_empty() && cur.is_empty()) {
            continue;
        }
        if let Some(body) = t.strip_suffix('\\') {
            cur.push_str(body);
            cur.push(' ');
        } else {
            cur.push_str(t);
            lines.push(std::mem::take(&mut cur));
        }
    }
    let froms: Vec<&String> = lines
        .iter()
        .filter(|l| l.to_uppercase().starts_with("FROM "))
        .collect();
    assert!(froms.len() >= 2, "expected a multi-stage build");
    let last = froms.last().unwrap();
    assert!(
        last.split_whitespace().nth(1) == Some("scratch"),
        "final stage: {last}"
    );
    let final_stage_at = lines
        .iter()
        .rposition(|l| l.to_uppercase().starts_with("FROM "))
        .unwrap();
    let final_stage = &lines[final_stage_at..];
    assert!(
        final_stage
            .iter()
            .any(|l| l == r#"ENTRYPOINT ["/vigil", "--"]"#),
        "the final stage needs ENTRYPOINT [\"/vigil\", \"--\"]"
    );

    // ENV KEY=VALUE pairs (values double-quoted or bare).
    let mut env: Vec<(String, String)> = Vec::new();
    for l in final_stage.iter().filter(|l| l.starts_with("ENV ")) {
        let mut rest = l[4..].trim();
        while !rest.is_empty() {
            let eq = rest
                .find('=')
                .unwrap_or_else(|| panic!("ENV without '=': {l}"));
            let key = rest[..eq].trim().to_string();
            rest = &rest[eq + 1..];
            let value;
            if let Some(r) = rest.strip_prefix('"') {
                let end = r
                    .find('"')
                    .unwrap_or_else(|| panic!("unterminated quote: {l}"));
                value = r[..end].to_string();
                rest = r[end + 1..].trim_start();
            } else {
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                value = rest[..end].to_string();
                rest = rest[end..].trim_start();
            }
            env.push((key, value));
        }
    }
    let known = [
        "VIGIL_REWRITE",
        "VIGIL_POST_START",
        "VIGIL_POST_START_TIMEOUT",
        "VIGIL_PRE_STOP",
        "VIGIL_PRE_STOP_SLEEP",
        "VIGIL_GRACE_PERIOD",
        "VIGIL_DRAIN_TIMEOUT",
        "VIGIL_TERMINATION_LOG",
        "VIGIL_SUBREAPER",
        "VIGIL_KILL_PROCESS_GROUP",
        "VIGIL_VERBOSITY",
    ];
    let vigil_env: Vec<&(String, String)> = env
        .iter()
        .filter(|(k, _)| k.starts_with("VIGIL_"))
        .collect();
    for want in [
        "VIGIL_GRACE_PERIOD",
        "VIGIL_PRE_STOP",
        "VIGIL_DRAIN_TIMEOUT",
    ] {
        assert!(
            vigil_env.iter().any(|(k, _)| k == want),
            "Dockerfile.example should show {want}"
        );
    }
    for (k, _) in &vigil_env {
        assert!(
            known.contains(&k.as_str()),
            "Dockerfile.example sets {k}, which vigil does not read"
        );
    }
    // vigil accepts the values: it starts `true` with them and exits 0.
    let mut cmd = Command::new(vigil_bin());
    for (k, v) in &vigil_env {
        cmd.env(k, v);
    }
    cmd.env_remove("VIGIL_TERMINATION_LOG").args(["--", "true"]);
    let out = run_cmd(&mut cmd, Duration::from_secs(30));
    assert!(
        out.status.success(),
        "vigil rejects the Dockerfile.example settings {vigil_env:?}: {}",
        text(&out.stderr)
    );
}

/// Dockerfile.example's final stage, built as written on this engine: its
/// two build stages (which need the network) are replaced by local files of
/// the same content, a static vigil and a static busybox. The demo server
/// runs as user 65534, and `docker stop` goes through the pre-stop hook and
/// the 5 s pre-stop sleep, well within the 8 s grace period.
#[test]
fn dockerfile_example_final_stage_runs() {
    const T: &str = "dockerfile_example";
    let Some(h) = TestImage::get(DOCKER, T) else {
        return;
    };
    let _builds = one_build_at_a_time();
    let _cpu = timing();
    let example =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Dockerfile.example"))
            .expect("Dockerfile.example");
    let lines: Vec<&str> = example.lines().collect();
    let last_from = lines
        .iter()
        .rposition(|l| l.trim_start().to_uppercase().starts_with("FROM "))
        .expect("a FROM line");
    let final_stage = lines[last_from..].join("\n");
    for from in [
        "COPY --from=vigil /vigil /vigil",
        "COPY --from=app /rootfs/ /",
    ] {
        assert!(
            final_stage.contains(from),
            "the final stage no longer has {from:?}; update this test"
        );
    }

    let dir = std::env::temp_dir().join(format!("{LABEL}-{}-example", run_id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("rootfs/bin")).unwrap();
    fs::create_dir_all(dir.join("rootfs/www")).unwrap();
    fs::copy(&h.vigil, dir.join("vigil")).unwrap();
    fs::copy(&h.busybox, dir.join("rootfs/bin/busybox")).unwrap();
    fs::write(
        dir.join("rootfs/www/index.html"),
        "hello from behind vigil\n",
    )
    .unwrap();
    let label = run_label();
    let dockerfile = format!(
        "FROM scratch AS vigil\nLABEL {label}\nCOPY vigil /vigil\n\
         FROM scratch AS app\nLABEL {label}\nCOPY rootfs /rootfs\n\
         {final_stage}\n"
    );
    fs::write(dir.join("Dockerfile"), dockerfile).unwrap();
    let image = ImageGuard::new(DOCKER, format!("{LABEL}:example-{}", run_id()));
    let built = DOCKER.cmd(&[
        "build",
        "-q",
        "--label",
        &label,
        "-t",
        &image.name,
        &dir.to_string_lossy(),
    ]);
    let _ = fs::remove_dir_all(&dir);
    assert!(
        built.status.success(),
        "docker build: {}",
        text(&built.stderr)
    );

    let ctr = Ctr::start(DOCKER, T, &[], &image.name, &[]);
    let mut last = None;
    let answered = wait_until_every(TIMEOUT, Duration::from_millis(100), || {
        let out = ctr.exec_output(&[
            "/bin/busybox",
            "wget",
            "-q",
            "-O-",
            "http://127.0.0.1:8080/",
        ]);
        let ok = out.status.success();
        last = Some(out);
        ok
    });
    let out = last.expect("one try at least");
    if !answered {
        panic!(
            "the demo server never answered: {}\nlogs:\n{}",
            text(&out.stderr),
            ctr.logs()
        );
    }
    let page = text(&out.stdout);
    let user = ctr.inspect("{{.Config.User}}");
    let took = ctr.stop();
    let code = ctr.exit_code();
    let logs = ctr.logs();
    note(
        T,
        format!(
            "demo server answered {:?} as user {user}; docker stop took {} (pre-stop sleep 5s, grace 8s), exit {code}",
            page.trim(),
            secs(took)
        ),
    );
    assert!(page.contains("hello from behind vigil"));
    assert!(
        logs.contains("vigil-demo: draining"),
        "the pre-stop hook's output is missing:\n{logs}"
    );
    assert_eq!(code, 143, "logs:\n{logs}");
    assert!(
        took >= Duration::from_millis(4900),
        "stop took only {}: no pre-stop sleep?",
        secs(took)
    );
    assert!(
        took < Duration::from_secs(8),
        "stop took {}: past the grace period",
        secs(took)
    );
    must_report(T, &logs);
}

#[test]
fn dockerfile_example_offline_route() {
    const T: &str = "dockerfile_example_offline_route";
    let busybox = match docker_ready() {
        Ok(b) => b,
        Err(why) => return skip(T, &why),
    };
    let _builds = one_build_at_a_time();
    let run_id = run_id();
    let demo = ImageGuard::new(DOCKER, format!("vigil-e2e-images:demo-{run_id}"));
    let bb = ImageGuard::new(DOCKER, format!("vigil-e2e-images:busybox-{run_id}"));
    let vigil = ImageGuard::new(DOCKER, format!("vigil-e2e-images:example-vigil-{run_id}"));
    let (demo, bb, vigil) = (&demo.name, &bb.name, &vigil.name);
    let out = build_dist_image(vigil);
    assert!(out.status.success(), "docker build (vigil): {}", show(&out));
    import_busybox(DOCKER, &busybox, bb, &[]);
    let started = Instant::now();
    let out = DOCKER.cmd_within(
        &[
            "build",
            "-q",
            "-f",
            "Dockerfile.example",
            "--label",
            &run_label(),
            "--build-arg",
            &format!("VIGIL_IMAGE={vigil}"),
            "--build-arg",
            &format!("BUSYBOX_IMAGE={bb}"),
            "-t",
            demo,
            ".",
        ],
        BUILD_TIMEOUT,
    );
    assert!(
        out.status.success(),
        "docker build -f Dockerfile.example: {}",
        show(&out)
    );
    note(
        T,
        format!(
            "Dockerfile.example built offline in {}",
            secs(started.elapsed())
        ),
    );

    let ctr = Ctr::start(DOCKER, T, &[], demo, &[]);
    let mut page = String::new();
    wait_until_every(TIMEOUT, Duration::from_millis(200), || {
        let out = ctr.exec_output(&["/bin/busybox", "wget", "-qO-", "http://127.0.0.1:8080/"]);
        page = stdout(&out);
        out.status.success()
    });
    assert_eq!(page, "hello from behind vigil");
    // The image's ENV: a pre-stop hook, then a 5 s pre-stop sleep, within
    // an 8 s grace period.
    let took = ctr.stop_within(10);
    let code = ctr.exit_code();
    note(T, format!("docker stop: exit {code} after {}", secs(took)));
    assert_eq!(code, 143);
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(9),
        "stop took {took:?}"
    );
    let logs = ctr.logs();
    assert!(
        logs.contains("vigil-demo: draining, no longer ready"),
        "{logs}"
    );
    assert!(logs.contains("exit status 143"), "{logs}");
}

// ---------------------------------------------------------------------------
// podman's --init-path
// ---------------------------------------------------------------------------

#[test]
fn podman_init_path() {
    const T: &str = "podman_init_path";
    const REQUIRE: Option<&str> = Some("VIGIL_E2E_REQUIRE_PODMAN");
    let (_, dist_bin) = host_arch();
    if !dist_bin.exists() {
        return skip_unless(
            T,
            REQUIRE,
            &format!("{} missing: run scripts/release.sh", dist_bin.display()),
        );
    }
    let busybox = match static_busybox() {
        Ok(b) => b,
        Err(why) => return skip_unless(T, REQUIRE, &why),
    };
    if let Err(NotReady::Skip(why) | NotReady::Broken(why)) = PODMAN.version() {
        return skip_unless(T, REQUIRE, &format!("{why} (Debian's podman)"));
    }
    let image = ImageGuard::new(
        PODMAN,
        format!("localhost/vigil-e2e-images:podman-{}", run_id()),
    );
    let image = &image.name;
    import_busybox(PODMAN, &busybox, image, &["sleep", "kill", "cat"]);
    let bin = dist_bin.to_string_lossy().to_string();
    let init = ["--init", "--init-path", &bin];

    // podman mounts the init at /run/podman-init and runs it as PID 1.
    let (code, out, err, _) = Ctr::run_fg(
        PODMAN,
        T,
        &init,
        image,
        &["/bin/sh", "-c", "cat /proc/1/cmdline; exit 3"],
    );
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        out.trim().starts_with("/run/podman-init\0--\0/bin/sh"),
        "{out}{err}"
    );
    let (code, out, err, _) =
        Ctr::run_fg(PODMAN, T, &init, image, &["/bin/sh", "-c", "kill -USR1 $$"]);
    assert_eq!(code, 138, "{out}{err}");

    // Stopped once vigil runs its child (its line computed, so that the
    // command in vigil's records does not hold it).
    let ctr = Ctr::start(
        PODMAN,
        T,
        &[
            &init[..],
            &["-e", "VIGIL_VERBOSITY=2", "-e", "VIGIL_LOG_FORMAT=json"],
        ]
        .concat(),
        image,
        &["/bin/sh", "-c", "echo ready $((1)); sleep 100 & wait"],
    );
    ctr.wait_log("ready 1", Duration::from_secs(20));
    let took = ctr.stop_within(10);
    let code = ctr.exit_code();
    note(T, format!("podman stop: exit {code} after {}", secs(took)));
    assert_eq!(code, 143);
    assert!(took < Duration::from_secs(5), "stop took {took:?}");
    let logs = ctr.logs();
    let records = Records::of(&logs);
    assert_fields(
        records.exit(),
        json!({"stop": {"signal": "SIGTERM", "sender": {"kind": "outside_namespace", "pid": 0}}, "drain": {"left": 1}}),
        &logs,
    );
}
