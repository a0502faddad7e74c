//! The docs' examples that need a container engine, run as written
//! (tests/it/docs.rs has the markers and what needs no engine;
//! CONTRIBUTING.md, "Examples in the docs", says how to add one):
//!
//! - `run: dockerfile`: the block is built (a fragment on top of the image
//!   with vigil and the app) and run until the app listens (and, with a
//!   `HEALTHCHECK`, is healthy), then stopped: exit 143, the app's death by
//!   the forwarded SIGTERM (`run: dockerfile pause`: vigil -P, exit 0);
//! - `run: docker`: the block is run by bash, Docker and podman commands
//!   alike, with the placeholders below; it exits 0, or prints what the
//!   block marked `output: NAME` shows;
//! - the outputs the prose describes (`probe-lines`, `probe-healthy`).
//!
//! Nothing is pulled. The images are made here from this run's static
//! release build, Debian's static busybox and the docs' `/app`
//! (tests/programs/app.c, built with `gcc -static`), and the placeholders
//! stand for them:
//!
//! | in the docs | what runs |
//! |---|---|
//! | `IMAGE` | an application image without vigil: busybox and `/app`, its command `sh -c 'echo IMAGE ran its command'` (`IMAGE=IMAGE_WITH_VIGIL` in the marker: the one below) |
//! | `IMAGE_WITH_VIGIL` | that image with `/vigil` as its `ENTRYPOINT ["/vigil", "--"]`, its `CMD ["/app", "--listen", ":8080"]` |
//! | `REGISTRY/vigil:VERSION` | the release image's local twin: `FROM scratch`, `/vigil` alone, `ENTRYPOINT ["/vigil"]` |
//! | `--from=vigil`, `--from=app` | the same release image; the application image |
//! | `vigil-x86_64` in a Dockerfile's build context | this run's static release build |
//! | `/usr/local/bin/vigil`, `/usr/bin/vigil` | this run's static release build |
//! | `CTR` | a container of the run's own (`CTR=exited-json`: one that ran `sh -c 'exit 3'` with `VIGIL_LOG_FORMAT=json`), and `ID` its id |
//! | `original command`, `CMD...` | `sh -c 'echo the original command ran'` |
//!
//!     cargo test --test it e2e::docs -- --nocapture

use crate::common::*;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const DOCKER: Engine = Engine::Docker;

/// The images of one engine, made once per test process.
struct Images {
    /// `IMAGE`: busybox and /app, no vigil.
    app: String,
    /// `IMAGE_WITH_VIGIL`.
    with_vigil: String,
    /// `REGISTRY/vigil:VERSION`.
    release: String,
    /// The static /app, for build contexts.
    app_bin: PathBuf,
    vigil: PathBuf,
}

/// The engine's images, or None after a skip.
fn images(engine: Engine, test: &str) -> Option<&'static Images> {
    static DOCKER_IMAGES: OnceLock<Result<Images, NotReady>> = OnceLock::new();
    static PODMAN_IMAGES: OnceLock<Result<Images, NotReady>> = OnceLock::new();
    let cell = match engine {
        Engine::Docker => &DOCKER_IMAGES,
        Engine::Podman => &PODMAN_IMAGES,
    };
    match cell.get_or_init(|| build_images(engine)) {
        Ok(i) => Some(i),
        Err(NotReady::Skip(why)) => {
            skip(test, why);
            None
        }
        Err(NotReady::Broken(why)) => panic!("{why}"),
    }
}

/// The docs' `/app`, built static once.
fn app_binary() -> Result<PathBuf, NotReady> {
    static APP: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    APP.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/app.c");
        let out = std::env::temp_dir().join(format!("vigil-docs-app-{}", run_id()));
        let built = Command::new("gcc")
            .args(["-static", "-O2", "-o"])
            .arg(&out)
            .arg(&src)
            .output()
            .map_err(|e| format!("cannot run gcc (Debian packages gcc, libc6-dev): {e}"))?;
        if !built.status.success() {
            return Err(format!("gcc -static app.c:\n{}", text(&built.stderr)));
        }
        Ok(out)
    })
    .clone()
    .map_err(NotReady::Skip)
}

fn build_images(engine: Engine) -> Result<Images, NotReady> {
    if engine == Engine::Docker && flag("VIGIL_E2E_DOCKER") == Some(false) {
        return Err(NotReady::Skip("VIGIL_E2E_DOCKER is set to off".into()));
    }
    engine.version()?;
    let busybox = find_busybox()?;
    let vigil = release_vigil()?;
    let app_bin = app_binary()?;
    engine.clean_up_at_exit();
    let name = |what: &str| format!("{LABEL}-docs:{what}-{}", run_id());
    let images = Images {
        app: name("app"),
        with_vigil: name("vigil"),
        release: name("release"),
        app_bin,
        vigil,
    };
    let dir = TempDir::new("docs-images");
    let applets = text(
        &Command::new(&busybox)
            .arg("--list")
            .output()
            .map_err(|e| NotReady::Skip(format!("{}: {e}", busybox.display())))?
            .stdout,
    );
    let applets: Vec<&str> = applets.lines().filter(|a| *a != "busybox").collect();
    busybox_bin(&dir.join("rootfs"), &busybox, &applets).map_err(NotReady::Broken)?;
    fs::create_dir_all(dir.join("rootfs/tmp")).unwrap();
    fs::copy(&images.app_bin, dir.join("rootfs/app")).unwrap();
    fs::copy(&images.vigil, dir.join("vigil")).unwrap();
    let label = run_label();
    let files = [
        (
            &images.app,
            format!(
                "FROM scratch\nCOPY rootfs/ /\nENV PATH=/bin\nLABEL {label}\nCMD [\"sh\", \"-c\", \"echo IMAGE ran its command\"]\n"
            ),
        ),
        (
            &images.with_vigil,
            format!(
                "FROM {}\nCOPY vigil /vigil\nENTRYPOINT [\"/vigil\", \"--\"]\nCMD [\"/app\", \"--listen\", \":8080\"]\n",
                images.app
            ),
        ),
        (
            &images.release,
            format!("FROM scratch\nCOPY vigil /vigil\nLABEL {label}\nENTRYPOINT [\"/vigil\"]\n"),
        ),
    ];
    for (image, dockerfile) in files {
        fs::write(dir.join("Dockerfile"), dockerfile).unwrap();
        let out = engine.cmd_within(
            &["build", "-q", "-t", image, &dir.path().to_string_lossy()],
            BUILD_TIMEOUT,
        );
        if !out.status.success() {
            return Err(NotReady::Broken(format!(
                "{} build of {image}:\n{}",
                engine.name(),
                text(&out.stderr)
            )));
        }
    }
    Ok(images)
}

// ---------------------------------------------------------------------------
// Placeholders
// ---------------------------------------------------------------------------

/// `text` with each placeholder replaced, in one pass (what replaces one
/// is not read again); a placeholder made of letters counts only as a
/// whole word.
fn substitute(text: &str, table: &[(&str, String)]) -> String {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    let mut out = String::new();
    let mut i = 0;
    'scan: while i < text.len() {
        let before = text[..i].chars().next_back();
        for (from, to) in table {
            if !text[i..].starts_with(from) {
                continue;
            }
            let after = text[i + from.len()..].chars().next();
            let alpha = from.starts_with(|c: char| c.is_ascii_alphabetic());
            if alpha && (word(before) || word(after)) {
                continue;
            }
            out.push_str(to);
            i += from.len();
            continue 'scan;
        }
        let ch = text[i..].chars().next().unwrap();
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

#[test]
fn placeholders_are_replaced_once_and_as_words() {
    let table = [
        ("IMAGE_WITH_VIGIL", "v".to_string()),
        ("IMAGE", "a".to_string()),
        (
            "original command",
            "sh -c 'echo original command'".to_string(),
        ),
    ];
    assert_eq!(
        substitute(
            "run IMAGE_WITH_VIGIL; IMAGES IMAGE -- original command",
            &table
        ),
        "run v; IMAGES a -- sh -c 'echo original command'"
    );
}

/// The placeholders of a `run: docker` block (the module's table).
fn placeholders(
    images: &Images,
    block: &Block,
    ctr: &str,
    ctr_id: &str,
    block_label: &str,
) -> Vec<(&'static str, String)> {
    let vigil = images.vigil.to_string_lossy().into_owned();
    let image = match block.arg("IMAGE") {
        Some("IMAGE_WITH_VIGIL") => images.with_vigil.clone(),
        Some(other) => panic!("{block}: IMAGE={other}: only IMAGE=IMAGE_WITH_VIGIL"),
        None => images.app.clone(),
    };
    let labels = format!("--label {} --label {block_label}", run_label());
    let original = "sh -c 'echo the original command ran'".to_string();
    vec![
        ("REGISTRY/vigil:VERSION", images.release.clone()),
        ("REGISTRY/vigil:0.1.0", images.release.clone()),
        ("IMAGE_WITH_VIGIL", images.with_vigil.clone()),
        ("IMAGE", image),
        ("CTR", ctr.to_string()),
        ("ID", ctr_id.to_string()),
        ("/usr/local/bin/vigil", vigil.clone()),
        ("/usr/bin/vigil", vigil),
        ("original command", original.clone()),
        ("CMD...", original),
        ("docker run", format!("docker run {labels}")),
        (
            "podman run",
            format!("podman run {labels} --ulimit nofile=1024:1024 --ulimit nproc=1024:1024"),
        ),
    ]
}

// ---------------------------------------------------------------------------
// `run: docker` blocks
// ---------------------------------------------------------------------------

/// A block's containers, removed when it is done.
struct BlockRun {
    label: String,
    engines: Vec<Engine>,
}

impl Drop for BlockRun {
    fn drop(&mut self) {
        for e in &self.engines {
            let ids = e.cmd(&["ps", "-aq", "--filter", &format!("label={}", self.label)]);
            for id in text(&ids.stdout).split_whitespace() {
                e.quiet(&["rm", "-f", "-v", id]);
            }
        }
    }
}

/// What the block needs, ready: the images of the engines it names, the
/// `CTR` it reads; the bash that runs it (stderr into stdout), and the
/// guard of its containers.
fn prepare(test: &str, block: &Block, n: usize) -> Option<(Command, BlockRun)> {
    let docker = images(DOCKER, test)?;
    let engines = if block.text.contains("podman ") {
        images(Engine::Podman, test)?;
        vec![DOCKER, Engine::Podman]
    } else {
        vec![DOCKER]
    };
    let guard = BlockRun {
        label: format!("{LABEL}-docs={}-{n}", run_id()),
        engines,
    };
    let ctr = format!("{LABEL}-{}-docs-{n}", run_id());
    let mut ctr_id = String::new();
    if let Some(fixture) = block.arg("CTR") {
        assert_eq!(
            fixture, "exited-json",
            "{block}: CTR={fixture}: no such fixture"
        );
        let out = DOCKER.cmd(&[
            "run",
            "--name",
            &ctr,
            "--label",
            &run_label(),
            "--label",
            &guard.label,
            "-e",
            "VIGIL_LOG_FORMAT=json",
            &docker.with_vigil,
            "sh",
            "-c",
            "exit 3",
        ]);
        assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
        ctr_id = DOCKER
            .ok(&["inspect", "-f", "{{.Id}}", &ctr])
            .trim()
            .to_string();
    }
    let script = substitute(
        &block.text,
        &placeholders(docker, block, &ctr, &ctr_id, &guard.label),
    );
    let mut bash = Command::new("bash");
    bash.arg("-c").arg(format!("exec 2>&1\n{script}"));
    without_vigil_settings(&mut bash);
    Some((bash, guard))
}

/// Every `run: docker` block but the readiness one (below) runs as
/// written: one with an output prints what its output block shows, the
/// others exit 0.
#[test]
fn docker_examples_run() {
    const T: &str = "docker_examples_run";
    let blocks: Vec<Block> = run_blocks("docker")
        .into_iter()
        .filter(|b| run_name(b) != Some("ready"))
        .collect();
    let mut failed = Vec::new();
    for (n, b) in blocks.iter().enumerate() {
        let Some((mut bash, _guard)) = prepare(T, b, n) else {
            return;
        };
        let started = Instant::now();
        let out = run_cmd(&mut bash, Duration::from_secs(120));
        let printed = text(&out.stdout);
        note(
            T,
            format!(
                "{b}: {} in {}:\n{printed}",
                out.status,
                secs(started.elapsed())
            ),
        );
        let wrong = match run_name(b) {
            Some(name) => output_differs(&output_block(name), &printed),
            None => (!out.status.success()).then(|| format!("{b}: {}:\n{printed}", out.status)),
        };
        failed.extend(wrong);
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// health.md's readiness example for Docker, in a unit's place: the test
/// binds the `NOTIFY_SOCKET`, runs the block, waits for `READY=1`, and
/// finds one vigil in the container, not a vigil under the image's own.
#[test]
fn docker_readiness_example_says_ready_with_one_vigil() {
    const T: &str = "docker_readiness_example_says_ready_with_one_vigil";
    let blocks: Vec<Block> = run_blocks("docker")
        .into_iter()
        .filter(|b| run_name(b) == Some("ready"))
        .collect();
    assert_eq!(blocks.len(), 1, "one `run: docker ready` block");
    let b = &blocks[0];
    let Some((mut bash, guard)) = prepare(T, b, 900) else {
        return;
    };
    let dir = TempDir::new("docs-notify");
    let notify = crate::probe::Notify::bind(dir.path());
    let log = dir.join("out");
    let mut child = KillOnDrop(
        bash.env("NOTIFY_SOCKET", &notify.path)
            .stdin(Stdio::null())
            .stdout(fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let printed = || fs::read_to_string(&log).unwrap_or_default();
    let came = wait_until(Duration::from_secs(60), || !notify.texts().is_empty());
    assert!(came, "{b}: no datagram within 60s; printed:\n{}", printed());
    let got = notify.texts().swap_remove(0);
    note(T, format!("{b}: NOTIFY_SOCKET got {got:?}"));
    assert!(got.lines().any(|l| l == "READY=1"), "{b}: {got:?}");
    let ids = DOCKER.ok(&["ps", "-q", "--filter", &format!("label={}", guard.label)]);
    let id = ids
        .split_whitespace()
        .next()
        .expect("the block's container");
    let top = DOCKER.ok(&["top", id, "-o", "pid,args"]);
    let vigils = top
        .lines()
        .skip(1)
        .filter(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|w| w.ends_with("vigil"))
        })
        .count();
    assert_eq!(
        vigils, 1,
        "{b}: one vigil in the container, not a vigil under vigil:\n{top}"
    );
    DOCKER.ok(&["stop", id]);
    let ended = wait_until(TIMEOUT, || matches!(child.0.try_wait(), Ok(Some(_))));
    assert!(
        ended,
        "{b}: still running after docker stop; printed:\n{}",
        printed()
    );
    let mut s = String::new();
    let _ = fs::File::open(&log).and_then(|mut f| f.read_to_string(&mut s));
    note(T, format!("{b}: printed:\n{s}"));
}

/// The bash that runs a block in the background, killed if the test
/// fails before it ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

// ---------------------------------------------------------------------------
// `run: dockerfile` blocks
// ---------------------------------------------------------------------------

/// A block as a Dockerfile: its stand-ins for the images it copies from,
/// on top of the image with vigil and the app when it is a fragment.
fn dockerfile(images: &Images, block: &Block) -> String {
    let table = [
        (
            "--from=REGISTRY/vigil:VERSION ",
            format!("--from={} ", images.release),
        ),
        (
            "--from=REGISTRY/vigil:0.1.0 ",
            format!("--from={} ", images.release),
        ),
        ("--from=vigil ", format!("--from={} ", images.release)),
        ("--from=app ", format!("--from={} ", images.app)),
    ];
    let body = substitute(&block.text, &table);
    let whole = body
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .is_some_and(|l| l.to_ascii_uppercase().starts_with("FROM "));
    let head = if whole {
        String::new()
    } else {
        format!("FROM {}\n", images.with_vigil)
    };
    format!("{head}{body}LABEL {}\n", run_label())
}

/// Every `run: dockerfile` block builds, and its container runs the app
/// (healthy, with a `HEALTHCHECK`) and stops on `docker stop` as the
/// app's death by the forwarded SIGTERM (a pause image: exit 0).
#[test]
fn dockerfile_examples_build_and_run() {
    const T: &str = "dockerfile_examples_build_and_run";
    for (n, b) in run_blocks("dockerfile").iter().enumerate() {
        let Some(images) = images(DOCKER, T) else {
            return;
        };
        let dir = TempDir::new("docs-dockerfile");
        fs::copy(&images.app_bin, dir.join("app")).unwrap();
        fs::copy(&images.vigil, dir.join("vigil-x86_64")).unwrap();
        let file = dockerfile(images, b);
        fs::write(dir.join("Dockerfile"), &file).unwrap();
        let image = ImageGuard::new(DOCKER, format!("{LABEL}-docs:block-{n}-{}", run_id()));
        let out = DOCKER.cmd_within(
            &[
                "build",
                "-q",
                "-t",
                &image.name,
                &dir.path().to_string_lossy(),
            ],
            BUILD_TIMEOUT,
        );
        assert!(
            out.status.success(),
            "{b}: docker build of\n{file}\n{}",
            text(&out.stderr)
        );
        let health = b.text.contains("HEALTHCHECK");
        let cmd = DOCKER.ok(&[
            "image",
            "inspect",
            "-f",
            "{{json .Config.Cmd}}",
            &image.name,
        ]);
        let pause = b.has_word("pause");
        let mut opts = vec![];
        if health {
            // The one change: a health check every second, not every 10 or 30.
            opts.extend(["--health-interval", "1s"]);
        }
        let app: &[&str] = if cmd.trim() == "null" && !pause {
            &["/app", "--listen", ":8080"]
        } else {
            &[]
        };
        let ctr = Ctr::start(DOCKER, T, &opts, &image.name, app);
        if pause {
            let up = wait_until(TIMEOUT, || ctr.inspect("{{.State.Status}}") == "running");
            assert!(up, "{b}: not running:\n{}", ctr.logs());
        } else {
            ctr.wait_log("app: listening on", TIMEOUT);
        }
        if health {
            let healthy = wait_until(TIMEOUT, || {
                ctr.inspect("{{.State.Health.Status}}") == "healthy"
            });
            assert!(
                healthy,
                "{b}: not healthy: {}",
                ctr.inspect("{{json .State.Health}}")
            );
        }
        ctr.stop_within(20);
        let code = ctr.exit_code();
        let logs = ctr.logs();
        note(T, format!("{b}: exit {code}; logs:\n{logs}"));
        assert_eq!(code, if pause { 0 } else { 143 }, "{b}:\n{file}\n{logs}");
    }
}

// ---------------------------------------------------------------------------
// Outputs the prose describes
// ---------------------------------------------------------------------------

/// `sh -c SCRIPT` in the image with vigil (vigil not its PID 1): what
/// it wrote to stderr.
fn in_container(test: &str, script: &str) -> Option<String> {
    let images = images(DOCKER, test)?;
    let wait_for = "up() { until /vigil --probe tcp://127.0.0.1:$1 2>/dev/null; do :; done; }\n";
    let (_, _, err, _) = Ctr::run_fg(
        DOCKER,
        "docs-probe",
        &["--entrypoint", "sh"],
        &images.with_vigil,
        &["-c", &format!("{wait_for}{script}")],
    );
    Some(err)
}

/// health.md's unhealthy lines: a server answering 503, then none, a
/// silent one, a name not in /etc/hosts, a missing socket.
#[test]
fn probe_lines_are_what_vigil_prints() {
    let Some(err) = in_container(
        "probe_lines_are_what_vigil_prints",
        "/app --listen 127.0.0.1:8080 --status 503 >/dev/null & up 8080\n\
         /vigil --probe http://127.0.0.1:8080/healthz\n\
         kill $!; wait\n\
         /vigil --probe http://127.0.0.1:8080/healthz\n\
         /app --listen 127.0.0.1:8082 --silent >/dev/null & up 8082\n\
         /vigil --probe http://127.0.0.1:8082/\n\
         /vigil --probe http://db:5432/\n\
         /vigil --probe unix:/run/app.sock\n",
    ) else {
        return;
    };
    assert_output(&output_block("probe-lines"), &err);
}

/// health.md's healthy line at `-v`.
#[test]
fn probe_healthy_line_is_what_vigil_prints() {
    let Some(err) = in_container(
        "probe_healthy_line_is_what_vigil_prints",
        "/app --listen 127.0.0.1:8080 >/dev/null & up 8080\n\
         /vigil -v --probe http://127.0.0.1:8080/healthz\n",
    ) else {
        return;
    };
    assert_output(&output_block("probe-healthy"), &err);
}
