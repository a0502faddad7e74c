//! `--live-when` in real containers: a hung server is stopped with the
//! unhealthy status and the engine's restart policy starts it again
//! (Docker, and podman without systemd), and what liveness costs the
//! engine next to a `HEALTHCHECK` that runs `vigil --probe` (Docker).
//!
//! The server is busybox httpd, the command of an image made on top of
//! the engine harness's `FROM scratch` test image (`live_image`), so that
//! the container runs as docs/health.md's recipe writes it:
//!
//!     docker run -d --restart on-failure \
//!         -e VIGIL_LIVE_WHEN=http://127.0.0.1:8080/healthz -e VIGIL_LIVE_INTERVAL=1s IMAGE
//!
//! A hung server is one that SIGSTOP froze from outside: the kernel still
//! completes connections to its port, and nothing answers them. (`docker
//! kill -s STOP` would reach vigil, PID 1, not the server.)
//!
//!     cargo test --test it e2e::live -- --nocapture
//!
//! `VIGIL_E2E_LIVE_COST_SECS=60` makes the cost's window a minute instead of
//! 10 s; its figures are the `e2e: live_cost: ...` lines.

use crate::common::*;
use std::fs;
use std::thread;
use std::time::{Duration, Instant, SystemTime};

/// What vigil probes: the page busybox httpd serves.
const URL: &str = "http://127.0.0.1:8080/healthz";
/// `--live-interval`.
const INTERVAL: Duration = Duration::from_secs(1);
/// vigil's default `--probe-timeout`: how long a probe of the frozen
/// server waits for an answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// `--live-failures`.
const FAILURES: u32 = 3;
/// `--grace-period`, small to keep the test quick.
const GRACE: Duration = Duration::from_secs(2);
/// What busybox httpd (`-v`) logs for each request it answered: the
/// probes, counted on the server's side.
const ANSWERED: &str = "response:200";

/// The engine's test image with busybox httpd as its command, serving
/// `/www/healthz`; with `healthcheck`, also a `HEALTHCHECK` every second
/// that runs `vigil --probe` of it.
fn live_image(h: &TestImage, test: &str, healthcheck: bool) -> ImageGuard {
    let dir = TempDir::new("live-image");
    fs::write(dir.join("healthz"), "ok\n").unwrap();
    let check = if healthcheck {
        format!(
            "HEALTHCHECK --interval=1s --timeout=3s --retries=3 CMD [\"/vigil\", \"--probe\", \"{URL}\"]\n"
        )
    } else {
        String::new()
    };
    fs::write(
        dir.join("Dockerfile"),
        format!(
            "FROM {}\n\
             COPY healthz /www/healthz\n\
             CMD [\"busybox\", \"httpd\", \"-f\", \"-v\", \"-p\", \"8080\", \"-h\", \"/www\"]\n\
             {check}",
            h.image
        ),
    )
    .unwrap();
    let tag = if healthcheck { "-healthcheck" } else { "" };
    let image = ImageGuard::new(
        h.engine,
        format!("{LABEL}-live:run-{}-{test}{tag}", run_id()),
    );
    let context = dir.path().display().to_string();
    let out = h
        .engine
        .cmd_within(&["build", "-q", "-t", &image.name, &context], BUILD_TIMEOUT);
    assert!(
        out.status.success(),
        "{test}: {} build of {}:\n{}",
        h.engine.name(),
        image.name,
        text(&out.stderr)
    );
    image
}

/// The server's host pid: vigil's one child, busybox httpd.
fn server_pid(ctr: &Ctr) -> i32 {
    let vigil = ctr.host_pid();
    let server = match children(vigil).as_slice() {
        [one] => *one,
        other => panic!("{}: vigil's children: {other:?}", ctr.test),
    };
    let cmdline = fs::read(format!("/proc/{server}/cmdline")).unwrap_or_default();
    assert!(
        String::from_utf8_lossy(&cmdline).contains("httpd"),
        "{}: vigil's child {server} is not httpd: {cmdline:?}",
        ctr.test
    );
    server
}

// ---------------------------------------------------------------------------
// A hung server restarts
// ---------------------------------------------------------------------------

/// docs/health.md's recipe, with a 1 s interval, a pre-stop hook that
/// leaves a mark in the container's filesystem and a 2 s grace period:
/// the server frozen with SIGSTOP, the container exits 69 within three
/// failed probes (each its interval and its timeout) and the grace
/// period, after the hook ran; the engine restarts it, and the server
/// answers again. The exit record says why.
fn hung_server_restarts(engine: Engine, test: &'static str) {
    let Some(h) = TestImage::get(engine, test) else {
        return;
    };
    let _t = timing();
    let image = live_image(h, test, false);
    let live_when = format!("VIGIL_LIVE_WHEN={URL}");
    let ctr = Ctr::start(
        engine,
        test,
        &[
            "--restart",
            "on-failure",
            "-e",
            &live_when,
            "-e",
            "VIGIL_LIVE_INTERVAL=1s",
            "-e",
            "VIGIL_LIVE_FAILURES=3",
            "-e",
            "VIGIL_GRACE_PERIOD=2s",
            "-e",
            "VIGIL_PRE_STOP=sh -c 'echo pre-stop ran >> /tmp/marks'",
            "-e",
            "VIGIL_LOG_FORMAT=json",
        ],
        &image.name,
        &[],
    );
    let events = ctr.watch_events();
    // A probe answered: vigil probes, and the server serves.
    ctr.wait_log(ANSWERED, TIMEOUT);
    let vigil = ctr.host_pid();
    let parent = stat(vigil).map(|s| s.ppid).and_then(comm);
    let server = server_pid(&ctr);
    kill(server, libc::SIGSTOP).unwrap();
    let frozen = SystemTime::now();

    let restarted = wait_until_every(Duration::from_secs(60), Duration::from_millis(100), || {
        ctr.restart_count() >= 1
    });
    let logs = ctr.logs();
    assert!(
        restarted,
        "{test}: not restarted within 60 s of the SIGSTOP; state {}; logs:\n{logs}",
        ctr.inspect("{{.State.Status}} exit={{.State.ExitCode}}")
    );
    let mut exits = Vec::new();
    wait_until(TIMEOUT, || {
        exits = events.exits();
        !exits.is_empty()
    });
    let (died, code) = match exits.as_slice() {
        [one] => *one,
        other => panic!("{test}: the engine's exits: {other:?}\n{logs}"),
    };
    // When vigil wrote its exit record, right before it exited: the
    // engine's own time of the exit comes later, by as much as a busy
    // daemon takes to hear of it.
    let records = Records::of(&logs);
    let exit = records.exit();
    let ended = exit["time"]
        .as_str()
        .and_then(|t| humantime::parse_rfc3339(t).ok())
        .unwrap_or_else(|| panic!("{test}: the exit record's time: {exit}"));
    let took = ended.duration_since(frozen).unwrap_or_default();
    let heard = died.duration_since(ended).unwrap_or_default();
    let most = FAILURES * (INTERVAL + PROBE_TIMEOUT) + GRACE;
    // The probe in flight at the SIGSTOP began at most a timeout before
    // it; the two after it each wait an interval and a timeout.
    let least = (FAILURES - 1) * (INTERVAL + PROBE_TIMEOUT);
    note(
        test,
        format!(
            "{} (vigil's parent: {}): vigil exited {} after the SIGSTOP (bound {}), the engine logged exit {code} {} later; restart count {}",
            engine.name(),
            parent.as_deref().unwrap_or("?"),
            secs(took),
            secs(most),
            secs(heard),
            ctr.restart_count()
        ),
    );
    assert_eq!(code, 69, "{test}: {logs}");
    assert!(
        took >= least && took <= most,
        "{test}: exit {} after the SIGSTOP, not between {} and {}\n{logs}",
        secs(took),
        secs(least),
        secs(most)
    );

    // The restarted vigil probes the new server (the only client so far)...
    let answered_anew = |logs: &str| {
        logs.split_once("\"event\":\"exit\"")
            .is_some_and(|(_, after)| after.contains(ANSWERED))
    };
    let mut logs = String::new();
    let probed = wait_until_every(TIMEOUT, Duration::from_millis(100), || {
        logs = ctr.logs();
        answered_anew(&logs)
    });
    assert!(
        probed,
        "{test}: no probe answered after the restart:\n{logs}"
    );
    // ... which answers a client too.
    let mut got = String::new();
    let answers = wait_until_every(TIMEOUT, Duration::from_millis(200), || {
        let out = ctr.fetch(URL);
        got = text(&out.stdout);
        got == "ok\n"
    });
    assert!(answers, "{test}: the server does not answer: {got:?}");
    assert_eq!(ctr.restart_count(), 1, "{test}: {}", ctr.logs());
    // The pre-stop hook ran, once.
    assert_eq!(ctr.exec(&["cat", "/tmp/marks"]), "pre-stop ran\n", "{test}");

    let records = Records::of(&logs);
    let exit = records.exit();
    assert_fields(
        exit,
        json!({
            "status": 69,
            "stop": {
                "cause": "unhealthy",
                "url": URL,
                "failures": FAILURES,
                "grace_period": GRACE.as_secs(),
                "sent": "SIGTERM",
            },
            "hooks": [{"hook": "pre-stop", "outcome": "succeeded"}],
        }),
        &logs,
    );
    assert!(exit.get("status_cause").is_none(), "{exit}");
    let msg = exit["msg"].as_str().unwrap();
    assert!(
        msg.contains("; exit status 69;")
            && msg.contains(&format!(
                "stop: unhealthy: 3 probes of {URL} failed in a row: no HTTP answer from 127.0.0.1:8080 within 2s"
            )),
        "{test}: {msg}"
    );
    let unhealthy = records.one("unhealthy");
    assert_fields(
        unhealthy,
        json!({"url": URL, "failures": FAILURES, "failed": [
            {"reason": "timed_out"}, {"reason": "timed_out"}, {"reason": "timed_out"}
        ]}),
        &logs,
    );
}

#[test]
fn docker_restarts_a_hung_server() {
    hung_server_restarts(Engine::Docker, "docker_live_restart");
}

/// podman carries out `--restart on-failure` itself: conmon, the
/// container's monitor, runs `podman container cleanup` when the container
/// exits, which starts it again; no systemd is involved (only a restart
/// after the machine's reboot needs podman-restart.service).
#[test]
fn podman_restarts_a_hung_server_without_systemd() {
    const T: &str = "podman_live_restart";
    if super::caps::podman_answers(T) {
        note(
            T,
            format!(
                "this machine's PID 1: {}",
                comm(1).unwrap_or_else(|| "?".into())
            ),
        );
        hung_server_restarts(Engine::Podman, T);
    }
}

// ---------------------------------------------------------------------------
// What liveness costs
// ---------------------------------------------------------------------------

/// What one container did over a window, and what it cost.
struct Window {
    took: Duration,
    /// Requests the server answered (busybox httpd's log).
    probes: usize,
    /// vigil's context switches (voluntary and not).
    switches: u64,
    /// The engine's events about the container.
    events: Vec<EngineEvent>,
    /// CPU time of dockerd, containerd, the container's shim and vigil.
    cpu: Vec<(String, Option<Duration>)>,
}

impl Window {
    fn execs(&self) -> usize {
        self.events.iter().filter(|e| e.is_exec()).count()
    }

    fn cpu_text(&self) -> String {
        let each: Vec<String> = self
            .cpu
            .iter()
            .map(|(name, cpu)| match cpu {
                Some(d) => format!("{name} {} ms", d.as_millis()),
                None => format!("{name} not found"),
            })
            .collect();
        each.join(", ")
    }
}

/// Watches the running container `ctr` for `window`. The wait is the
/// point: what vigil and the engine do in it is what is counted. Nothing
/// asks the engine anything inside the window (a `docker logs` there would
/// cost dockerd CPU time of its own); its events are watched as they
/// come.
fn watch(ctr: &Ctr, window: Duration) -> Window {
    ctr.wait_log(ANSWERED, TIMEOUT);
    let vigil = ctr.host_pid();
    let shim = stat(vigil).map(|s| s.ppid);
    let mut daemons: Vec<(String, Vec<i32>)> = ["dockerd", "containerd"]
        .iter()
        .map(|d| (d.to_string(), pids_named(d)))
        .collect();
    if let Some(shim) = shim {
        let name = comm(shim).unwrap_or_else(|| "shim".into());
        daemons.push((format!("{name} (the container's)"), vec![shim]));
    }
    daemons.push(("vigil".into(), vec![vigil]));
    let cpu = || -> Vec<Option<Duration>> {
        daemons
            .iter()
            .map(|(_, pids)| {
                let times: Vec<Duration> = pids.iter().filter_map(|&p| cpu_time(p)).collect();
                (!times.is_empty()).then(|| times.iter().sum())
            })
            .collect()
    };
    let switches = || {
        let (vol, nonvol) = ctxt_switches(vigil).expect("vigil's context switches");
        vol + nonvol
    };
    let answered_before = ctr.logs().matches(ANSWERED).count();
    let watch = ctr.watch_events();
    let started = Instant::now();
    let (cpu_before, switches_before) = (cpu(), switches());
    thread::sleep(window);
    let (cpu_after, switches_after) = (cpu(), switches());
    let took = started.elapsed();
    let events = watch.events();
    drop(watch);
    let probes = ctr.logs().matches(ANSWERED).count() - answered_before;
    let cpu = daemons
        .iter()
        .zip(cpu_before.iter().zip(&cpu_after))
        .map(|((name, _), (before, after))| {
            let used = before.zip(*after).map(|(b, a)| a.saturating_sub(b));
            (name.clone(), used)
        })
        .collect();
    Window {
        took,
        probes,
        switches: switches_after - switches_before,
        events,
        cpu,
    }
}

/// `--live-when` at a 1 s interval, healthy: one probe a second, counted
/// by the server, a few context switches of vigil's per probe and none
/// between, and no exec in the container (`docker events`). Beside it,
/// the same server with a `HEALTHCHECK` every second that runs `vigil
/// --probe`: one exec per check. The CPU time of dockerd, containerd, the
/// container's shim and vigil over each window is printed, not asserted
/// (other tests use the same engine meanwhile).
#[test]
fn live_when_costs_a_probe_an_interval_and_no_exec() {
    const T: &str = "live_cost";
    let Some(h) = TestImage::get(Engine::Docker, T) else {
        return;
    };
    let _t = timing();
    let seconds: u64 = std::env::var("VIGIL_E2E_LIVE_COST_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let window = Duration::from_secs(seconds);
    let live = live_image(h, T, false);
    let checked = live_image(h, T, true);
    let live_when = format!("VIGIL_LIVE_WHEN={URL}");

    let ctr = Ctr::start(
        Engine::Docker,
        T,
        &["-e", &live_when, "-e", "VIGIL_LIVE_INTERVAL=1s"],
        &live.name,
        &[],
    );
    let w = watch(&ctr, window);
    drop(ctr);
    let per_probe = w.switches as f64 / w.probes.max(1) as f64;
    note(
        T,
        format!(
            "--live-when, 1s interval, {}: {} probes; vigil {} context switches ({per_probe:.1} per probe); {} execs, events {:?}; CPU: {}",
            secs(w.took),
            w.probes,
            w.switches,
            w.execs(),
            w.events.iter().map(|e| &e.action).collect::<Vec<_>>(),
            w.cpu_text()
        ),
    );
    assert!(
        w.probes.abs_diff(seconds as usize) <= 2,
        "{T}: {} probes in {}",
        w.probes,
        secs(w.took)
    );
    assert!(
        w.switches >= w.probes as u64 && per_probe <= 6.0,
        "{T}: vigil switched {} times for {} probes",
        w.switches,
        w.probes
    );
    assert!(
        w.events.is_empty(),
        "{T}: the engine's events: {:?}",
        w.events
    );

    let ctr = Ctr::start(Engine::Docker, T, &[], &checked.name, &[]);
    let c = watch(&ctr, window);
    note(
        T,
        format!(
            "HEALTHCHECK --interval=1s of vigil --probe, {}: {} checks answered; {} execs; vigil (PID 1) {} context switches; CPU: {}",
            secs(c.took),
            c.probes,
            c.execs(),
            c.switches,
            c.cpu_text()
        ),
    );
    assert!(
        c.execs() as u64 >= seconds / 2,
        "{T}: {} execs in {}: {:?}",
        c.execs(),
        secs(c.took),
        c.events
    );
}
