//! The probe tests that need a container engine; the rest are in `probe`.

use crate::common::*;
use crate::probe::*;
use std::fs;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

/// In a `FROM scratch` image, `HEALTHCHECK CMD ["/vigil", "--probe", URL]`
/// makes the container healthy within three intervals, unhealthy within
/// three once the page is gone, and leaves no zombie after a hundred
/// probes (a second container, probed every 100 ms).
#[test]
fn docker_healthcheck_with_vigil_probe_in_a_scratch_image() {
    const T: &str = "docker_healthcheck";
    let _t = timing();
    let Some(image) = readiness_image(Engine::Docker, T, "VIGIL_E2E_REQUIRE") else {
        return;
    };
    let interval = Duration::from_secs(1);
    let serve = [
        "/vigil",
        "--",
        "httpd",
        "-f",
        "-v",
        "-p",
        "127.0.0.1:8080",
        "-h",
        "/www",
    ];
    let ctr = Ctr::start(Engine::Docker, T, &[], &image.name, &serve);
    let healthy = wait_health(&ctr, "healthy", 3 * interval + Duration::from_secs(2));
    let health = ctr.inspect("{{json .State.Health}}");
    let healthy = healthy.unwrap_or_else(|| panic!("{T}: not healthy: {health}"));
    note(T, format!("healthy after {}", secs(healthy)));
    assert!(
        healthy <= 3 * interval,
        "{T}: healthy only after {healthy:?}: {health}"
    );
    ctr.exec(&["rm", "/www/healthz"]);
    let unhealthy = wait_health(&ctr, "unhealthy", 3 * interval + Duration::from_secs(2));
    let health = ctr.inspect("{{json .State.Health}}");
    note(T, format!("the health log: {health}"));
    let unhealthy = unhealthy.unwrap_or_else(|| panic!("{T}: not unhealthy: {health}"));
    note(
        T,
        format!("unhealthy {} after the page went", secs(unhealthy)),
    );
    assert!(
        unhealthy <= 3 * interval,
        "{T}: unhealthy only after {unhealthy:?}: {health}"
    );
    assert!(
        health.contains(r#""ExitCode":1,"Output":"vigil: warning: http://127.0.0.1:8080/healthz is unhealthy: HTTP status 404 (Not Found)\n""#),
        "{T}: {health}"
    );
    assert!(
        health.contains(r#""ExitCode":0,"Output":"""#),
        "{T}: {health}"
    );

    // A hundred probes, counted by httpd's log of each request.
    let fast = Ctr::start(
        Engine::Docker,
        T,
        &["--health-interval", "100ms", "--health-retries", "3"],
        &image.name,
        &serve,
    );
    let started = Instant::now();
    let mut probes = 0;
    wait_until_every(Duration::from_secs(120), Duration::from_millis(500), || {
        probes = fast.logs().matches("response:200").count();
        probes >= 100
    });
    let (total, zombies) = fast.processes();
    note(
        T,
        format!(
            "{probes} probes in {}: {total} processes, {zombies} zombies",
            secs(started.elapsed())
        ),
    );
    assert!(
        probes >= 100,
        "{T}: only {probes} probes\n{}",
        fast.logs_tail(20)
    );
    assert_eq!(zombies, 0, "{T}: zombies after {probes} probes");
    assert_eq!(fast.inspect("{{.State.Health.Status}}"), "healthy");
}

/// podman's `--sdnotify=container` hands the container a socket and
/// relays its datagrams to podman's own `NOTIFY_SOCKET` (after one of its
/// own, `MAINPID=`): READY=1 comes once, one interval at most after the
/// app listens; an app that never listens gets none, and
/// `--ready-timeout` stops it with the documented status.
#[test]
fn podman_sdnotify_container_gets_ready_once() {
    const T: &str = "podman_sdnotify";
    const REQUIRE: &str = "VIGIL_E2E_REQUIRE_PODMAN";
    let _t = timing();
    let Some(image) = readiness_image(Engine::Podman, T, REQUIRE) else {
        return;
    };
    let dir = TempDir::new("podman-notify");
    let notify = Notify::bind(dir.path());
    let ready = [
        "/vigil",
        "-v",
        "--ready-when",
        "http://127.0.0.1:8080/healthz",
        "--",
        "sh",
        "-c",
        "echo child NOTIFY_SOCKET=${NOTIFY_SOCKET-unset}; sleep 3; echo listening; exec httpd -f -p 127.0.0.1:8080 -h /www",
    ];
    let ctr = Ctr::new(Engine::Podman, T);
    let mut run = Command::new("podman");
    run.args(ctr.run_args("-d", &["--sdnotify=container"], &image.name, &ready))
        .env("NOTIFY_SOCKET", &notify.path);
    let started = Instant::now();
    let out = run_cmd(&mut run, ENGINE_TIMEOUT);
    assert!(
        out.status.success(),
        "{T}: podman run: {}",
        text(&out.stderr)
    );
    let got = notify.wait_for("READY=1", TIMEOUT);
    let all = notify.texts();
    note(T, format!("datagrams: {all:?}"));
    let (at, _, _) = got.unwrap_or_else(|| panic!("{T}: no READY=1 in {all:?}\n{}", ctr.logs()));
    let after = at - started;
    note(T, format!("READY=1 {} after podman run", secs(after)));
    assert!(
        after >= Duration::from_secs(3),
        "{T}: READY=1 after {after:?}"
    );
    assert!(
        all.iter().any(|t| t.starts_with("MAINPID=")),
        "{T}: {all:?}"
    );
    let logs = ctr.logs();
    assert!(logs.contains("child NOTIFY_SOCKET=unset"), "{T}: {logs}");
    let said = logs
        .lines()
        .find(|l| l.starts_with("vigil: ready after "))
        .unwrap_or_else(|| panic!("{T}: no ready line: {logs}"));
    note(T, said);
    // Once: nothing more comes in this second (the wait is the point).
    thread::sleep(Duration::from_secs(1));
    let ready_count = notify
        .texts()
        .iter()
        .filter(|t| t.contains("READY=1"))
        .count();
    assert_eq!(ready_count, 1, "{T}: {:?}", notify.texts());
    drop(ctr);

    // Never ready: no READY=1, and --ready-timeout stops it with 143 (the
    // child's death by the stop signal stands).
    let dir = TempDir::new("podman-notify");
    let notify = Notify::bind(dir.path());
    let never = [
        "/vigil",
        "--ready-when",
        "http://127.0.0.1:8080/healthz",
        "--ready-timeout",
        "2s",
        "--",
        "sleep",
        "1000",
    ];
    let ctr = Ctr::new(Engine::Podman, T);
    let mut run = Command::new("podman");
    run.args(ctr.run_args("-d", &["--sdnotify=container"], &image.name, &never))
        .env("NOTIFY_SOCKET", &notify.path);
    let out = run_cmd(&mut run, ENGINE_TIMEOUT);
    assert!(
        out.status.success(),
        "{T}: podman run: {}",
        text(&out.stderr)
    );
    let code = ctr.wait();
    let logs = ctr.logs();
    note(
        T,
        format!("never ready: exit {code}, datagrams {:?}", notify.texts()),
    );
    assert_eq!(code, 143, "{T}: {logs}");
    assert!(
        logs.contains("not ready after 2s (--ready-timeout)"),
        "{T}: {logs}"
    );
    assert!(
        !notify.texts().iter().any(|t| t.contains("READY=1")),
        "{T}: {:?}",
        notify.texts()
    );
}

/// The same contract with Docker, which has no `--sdnotify`: the host's
/// socket bind-mounted into the container, `NOTIFY_SOCKET` set with `-e`.
#[test]
fn docker_with_a_bind_mounted_notify_socket_gets_ready_once() {
    const T: &str = "docker_notify";
    let _t = timing();
    let Some(image) = readiness_image(Engine::Docker, T, "VIGIL_E2E_REQUIRE") else {
        return;
    };
    let dir = TempDir::new("docker-notify");
    let notify = Notify::bind(dir.path());
    let mount = format!("{}:/run/notify", dir.path().display());
    let opts = ["-v", &mount, "-e", "NOTIFY_SOCKET=/run/notify/notify.sock"];
    let started = Instant::now();
    let ctr = Ctr::start(
        Engine::Docker,
        T,
        &opts,
        &image.name,
        &[
            "/vigil",
            "--ready-when",
            "http://127.0.0.1:8080/healthz",
            "--",
            "sh",
            "-c",
            "echo child NOTIFY_SOCKET=${NOTIFY_SOCKET-unset}; sleep 3; exec httpd -f -p 127.0.0.1:8080 -h /www",
        ],
    );
    let got = notify.wait_for("READY=1", TIMEOUT);
    let (at, _, text) =
        got.unwrap_or_else(|| panic!("{T}: no READY=1: {:?}\n{}", notify.texts(), ctr.logs()));
    note(
        T,
        format!("READY=1 {} after docker run: {text:?}", secs(at - started)),
    );
    assert!(at - started >= Duration::from_secs(3), "{T}");
    assert!(
        ctr.logs().contains("child NOTIFY_SOCKET=unset"),
        "{T}: {}",
        ctr.logs()
    );
    ctr.stop_within(5);
    assert!(
        notify.wait_for("STOPPING=1", TIMEOUT).is_some(),
        "{T}: {:?}",
        notify.texts()
    );
    let texts = notify.texts();
    assert_eq!(texts.len(), 2, "{T}: {texts:?}");
    assert_eq!(ctr.exit_code(), 143);

    // Never ready: only STOPPING=1, and the documented status.
    let dir = TempDir::new("docker-notify");
    let notify = Notify::bind(dir.path());
    let mount = format!("{}:/run/notify", dir.path().display());
    let opts = ["-v", &mount, "-e", "NOTIFY_SOCKET=/run/notify/notify.sock"];
    let ctr = Ctr::start(
        Engine::Docker,
        T,
        &opts,
        &image.name,
        &[
            "/vigil",
            "--ready-when",
            "tcp://127.0.0.1:8080",
            "--ready-timeout",
            "2s",
            "--",
            "sh",
            "-c",
            "trap 'exit 0' TERM; sleep 1000 & wait",
        ],
    );
    assert_eq!(ctr.wait(), 1, "{T}: {}", ctr.logs());
    let texts = notify.texts();
    assert!(
        texts.len() == 1
            && texts[0].starts_with(
                "STOPPING=1\nSTATUS=stopping: not ready after 2s (--ready-timeout; the last probe: "
            ),
        "{T}: {texts:?}"
    );
}

/// A `FROM scratch` image of vigil and busybox, with a page to serve and
/// a `HEALTHCHECK` that is `vigil --probe`: every second, two failures in
/// a row are unhealthy. Built once per engine and test process; `None`
/// after saying why the test is skipped.
pub(crate) fn readiness_image(engine: Engine, test: &str, require: &str) -> Option<ImageGuard> {
    if engine == Engine::Docker && flag("VIGIL_E2E_DOCKER") == Some(false) {
        skip_unless(test, Some(require), "VIGIL_E2E_DOCKER is set to off");
        return None;
    }
    if let Err(NotReady::Skip(why) | NotReady::Broken(why)) = engine.version() {
        skip_unless(test, Some(require), &why);
        return None;
    }
    let busybox = match find_busybox() {
        Ok(b) => b,
        Err(NotReady::Skip(why) | NotReady::Broken(why)) => {
            skip_unless(test, Some(require), &why);
            return None;
        }
    };
    let vigil = match release_vigil() {
        Ok(v) => v,
        Err(NotReady::Skip(why) | NotReady::Broken(why)) => panic!("{test}: {why}"),
    };
    let dir = TempDir::new("ready-image");
    let root = dir.join("rootfs");
    busybox_bin(&root, &busybox, IMAGE_APPLETS).unwrap();
    fs::create_dir_all(root.join("www")).unwrap();
    fs::write(root.join("www/healthz"), "ok\n").unwrap();
    fs::copy(&vigil, root.join("vigil")).unwrap();
    fs::write(
        dir.join("Dockerfile"),
        format!(
            "FROM scratch\n\
             COPY rootfs/ /\n\
             LABEL {}\n\
             ENV PATH=/bin\n\
             HEALTHCHECK --interval=1s --timeout=3s --retries=2 CMD [\"/vigil\", \"--probe\", \"http://127.0.0.1:8080/healthz\"]\n",
            run_label()
        ),
    )
    .unwrap();
    let image = ImageGuard::new(engine, format!("{LABEL}-ready:run-{}-{test}", run_id()));
    let out = engine.cmd(&[
        "build",
        "-q",
        "-t",
        &image.name,
        &dir.path().display().to_string(),
    ]);
    assert!(
        out.status.success(),
        "{test}: building the image failed:\n{}",
        text(&out.stderr)
    );
    Some(image)
}

/// The applets the readiness image links to busybox.
pub(crate) const IMAGE_APPLETS: &[&str] = &["sh", "sleep", "httpd", "rm", "ps", "mkdir", "echo"];

/// Polls `inspect` until the health status is `status`; how long it took.
pub(crate) fn wait_health(ctr: &Ctr, status: &str, timeout: Duration) -> Option<Duration> {
    let started = Instant::now();
    wait_until_every(timeout, Duration::from_millis(50), || {
        ctr.inspect("{{.State.Health.Status}}") == status
    })
    .then(|| started.elapsed())
}
