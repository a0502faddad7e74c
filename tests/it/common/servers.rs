//! Real servers in Docker, for tests/it/e2e/servers.rs: the Debian image they run
//! in, and the clients the tests drive them with.
//!
//! - `ServerImage`: the image `tests/servers/image.sh` makes (a minbase
//!   Debian root filesystem from this machine's apt sources with postgres,
//!   nginx, redis, gunicorn, bash, tini and gosu, then the configs and the
//!   WSGI app of tests/servers/; both steps cached between runs), with this
//!   run's static vigil added on top as `/vigil`, the entrypoint, labelled
//!   `vigil-e2e=RUN` like every image the engine harness makes. Skips and
//!   `VIGIL_E2E_REQUIRE` as for tests/it/e2e/docker.rs.
//! - `http_get` and `Download`: an HTTP/1.0 client on the container's
//!   address (the test talks to the server from outside the container, so
//!   that the client is not one of the processes vigil drains at exit).
//! - `Session`: a client left running inside the container (`docker exec
//!   -i`, stdin held open), killed when dropped.

use super::{
    CmdFailed, Ctr, Engine, LABEL, NotReady, flag, note, release_vigil, run_label,
    run_with_deadline, secs, skip, text, wait_until_every,
};
use std::fs;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How long `image.sh` may take: a cold run bootstraps Debian from the
/// mirror.
const IMAGE_TIMEOUT: Duration = Duration::from_secs(1200);

/// The servers' image with this run's vigil in it.
pub struct ServerImage {
    pub engine: Engine,
    /// Its name: `vigil-e2e:servers-RUN`.
    pub image: String,
}

impl ServerImage {
    /// The image, built on first use; None after printing why the test is
    /// skipped (a panic instead when `VIGIL_E2E_REQUIRE` is on, or when
    /// the project's part of the set-up is broken).
    pub fn get(test: &str) -> Option<&'static ServerImage> {
        static CELL: OnceLock<Result<ServerImage, NotReady>> = OnceLock::new();
        match CELL.get_or_init(ServerImage::build) {
            Ok(image) => Some(image),
            Err(NotReady::Skip(why)) => {
                skip(test, why);
                None
            }
            Err(NotReady::Broken(why)) => panic!("{why}"),
        }
    }

    fn build() -> Result<ServerImage, NotReady> {
        let engine = Engine::Docker;
        if flag("VIGIL_E2E_DOCKER") == Some(false) {
            return Err(NotReady::Skip("VIGIL_E2E_DOCKER is set to off".into()));
        }
        engine.version()?;
        let vigil = release_vigil()?;
        let base = base_image()?;
        engine.clean_up_at_exit();
        let image = format!("{LABEL}:servers-{}", super::run_id());
        let dir = std::env::temp_dir().join(format!("{LABEL}-servers-{}", super::run_id()));
        let built = build_with_vigil(engine, &dir, &base, &vigil, &image);
        let _ = fs::remove_dir_all(&dir);
        built.map_err(NotReady::Broken)?;
        Ok(ServerImage { engine, image })
    }

    /// The servers' image without vigil (its entrypoint `/vigil --` names a
    /// file it does not have), for a test that brings vigil from elsewhere;
    /// None after printing why the test is skipped.
    pub fn base(test: &str) -> Option<String> {
        if flag("VIGIL_E2E_DOCKER") == Some(false) {
            skip(test, "VIGIL_E2E_DOCKER is set to off");
            return None;
        }
        match Engine::Docker.version().and_then(|_| base_image()) {
            Ok(image) => Some(image),
            Err(NotReady::Skip(why)) => {
                skip(test, &why);
                None
            }
            Err(NotReady::Broken(why)) => panic!("{why}"),
        }
    }

    /// `docker run -d` of the image: `opts` before it, `cmd` after it
    /// (the arguments of the entrypoint, `/vigil --`).
    pub fn start(&self, test: &'static str, opts: &[&str], cmd: &[&str]) -> Ctr {
        Ctr::start(self.engine, test, opts, &self.image, cmd)
    }
}

/// Runs tests/servers/image.sh: the cached image's name. Exit status 2
/// means the machine lacks a tool (a skip); any other failure is the
/// project's.
fn base_image() -> Result<String, NotReady> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/image.sh");
    let started = Instant::now();
    let out =
        run_with_deadline(Command::new("bash").arg(&script), IMAGE_TIMEOUT).map_err(|failed| {
            NotReady::Broken(match failed {
                CmdFailed::Spawn(e) => format!("cannot run {}: {e}", script.display()),
                CmdFailed::Wait(e) => format!("waiting for {}: {e}", script.display()),
                CmdFailed::TimedOut { .. } => format!(
                    "{} did not finish within {}",
                    script.display(),
                    secs(IMAGE_TIMEOUT)
                ),
            })
        })?;
    let log = text(&out.stderr);
    match out.status.code() {
        Some(0) => {}
        Some(2) => return Err(NotReady::Skip(log.trim().to_string())),
        _ => {
            return Err(NotReady::Broken(format!(
                "{} failed ({}):\n{log}",
                script.display(),
                out.status
            )));
        }
    }
    let image = text(&out.stdout).trim().to_string();
    for line in log.lines() {
        note("setup", line);
    }
    note(
        "setup",
        format!(
            "servers' image {image} ready in {}",
            secs(started.elapsed())
        ),
    );
    Ok(image)
}

/// `FROM base`, `COPY vigil /vigil`, labelled for this run's clean-up.
fn build_with_vigil(
    engine: Engine,
    dir: &Path,
    base: &str,
    vigil: &Path,
    image: &str,
) -> Result<(), String> {
    let e = |what: &str, err: io::Error| format!("preparing the build context ({what}): {err}");
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir).map_err(|x| e("directory", x))?;
    fs::copy(vigil, dir.join("vigil")).map_err(|x| e("vigil", x))?;
    fs::write(
        dir.join("Dockerfile"),
        format!("FROM {base}\nCOPY vigil /vigil\n"),
    )
    .map_err(|x| e("Dockerfile", x))?;
    let started = Instant::now();
    let label = run_label();
    let out = engine.cmd(&[
        "build",
        "-q",
        "--label",
        &label,
        "-t",
        image,
        &dir.to_string_lossy(),
    ]);
    if !out.status.success() {
        return Err(format!(
            "{} build of the servers' test image failed:\n{}",
            engine.name(),
            text(&out.stderr)
        ));
    }
    note(
        "setup",
        format!(
            "built image {image} (vigil on {base}) in {}",
            secs(started.elapsed())
        ),
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// Talking to the servers

/// The container's address on the engine's default bridge network.
pub fn address(ctr: &Ctr) -> String {
    let ip = ctr.inspect("{{.NetworkSettings.IPAddress}}");
    assert!(
        !ip.is_empty(),
        "{}: container {} has no address on the bridge network",
        ctr.test,
        ctr.name
    );
    ip
}

/// An HTTP response, as far as it came.
#[derive(Debug)]
pub struct HttpResponse {
    /// The status line's code (0 when the response ended before it).
    pub status: u16,
    /// The header lines, as sent.
    pub headers: String,
    /// The body as received: shorter than `Content-Length` when the server
    /// closed the connection before it was done.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The `Content-Length` the server announced.
    pub fn content_length(&self) -> Option<usize> {
        self.headers.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
    }

    /// The whole body came: as many bytes as announced.
    pub fn complete(&self) -> bool {
        self.status != 0 && self.content_length() == Some(self.body.len())
    }

    pub fn body_text(&self) -> String {
        text(&self.body)
    }
}

/// `GET PATH` on HOST:PORT (HTTP/1.0, so the server closes the connection
/// after the response), for at most `timeout`; `received` counts the bytes
/// as they arrive. A connection the server ends early gives what came.
fn get(
    host: &str,
    port: u16,
    path: &str,
    timeout: Duration,
    received: &AtomicUsize,
) -> io::Result<HttpResponse> {
    let deadline = Instant::now() + timeout;
    let mut conn = TcpStream::connect((host, port))?;
    conn.set_read_timeout(Some(Duration::from_millis(200)))?;
    write!(conn, "GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n")?;
    let mut data = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        match conn.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                data.extend_from_slice(&buf[..n]);
                received.fetch_add(n, Ordering::SeqCst);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // A reset after the server's end: keep what came.
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => break,
            Err(e) => return Err(e),
        }
        if Instant::now() > deadline {
            let _ = conn.shutdown(Shutdown::Both);
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "GET {path}: no end of the response within {} ({} bytes came)",
                    secs(timeout),
                    data.len()
                ),
            ));
        }
    }
    let split = data.windows(4).position(|w| w == b"\r\n\r\n");
    let Some(at) = split else {
        return Ok(HttpResponse {
            status: 0,
            headers: text(&data),
            body: Vec::new(),
        });
    };
    let head = text(&data[..at]);
    let status = head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    Ok(HttpResponse {
        status,
        headers: head,
        body: data[at + 4..].to_vec(),
    })
}

/// `GET PATH` on HOST:PORT, at most `timeout`.
pub fn http_get(host: &str, port: u16, path: &str, timeout: Duration) -> io::Result<HttpResponse> {
    get(host, port, path, timeout, &AtomicUsize::new(0))
}

/// A request in flight on a thread of its own: a download, a slow answer.
pub struct Download {
    received: Arc<AtomicUsize>,
    started: Instant,
    handle: JoinHandle<(io::Result<HttpResponse>, Duration)>,
}

impl Download {
    /// Starts `GET PATH` on HOST:PORT, which must end within `timeout`.
    pub fn start(host: &str, port: u16, path: &str, timeout: Duration) -> Download {
        let received = Arc::new(AtomicUsize::new(0));
        let counter = received.clone();
        let (host, path) = (host.to_string(), path.to_string());
        let started = Instant::now();
        let handle = thread::spawn(move || {
            let res = get(&host, port, &path, timeout, &counter);
            (res, started.elapsed())
        });
        Download {
            received,
            started,
            handle,
        }
    }

    /// Bytes received so far, headers included.
    pub fn received(&self) -> usize {
        self.received.load(Ordering::SeqCst)
    }

    /// How long ago it started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Waits for its end (bounded by its own timeout): the response, and
    /// how long the request took.
    pub fn finish(self) -> (io::Result<HttpResponse>, Duration) {
        self.handle.join().unwrap_or_else(|_| {
            (
                Err(io::Error::other("the client thread panicked")),
                Duration::ZERO,
            )
        })
    }
}

/// A client left running in the container (`docker exec -i CTR CMD...`),
/// its stdin held open so that it idles; killed when dropped.
pub struct Session {
    child: Child,
}

impl Session {
    pub fn start(ctr: &Ctr, cmd: &[&str]) -> Session {
        let child = Command::new(ctr.engine.name())
            .args(["exec", "-i", &ctr.name])
            .args(cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: cannot run {} exec: {e}", ctr.test, ctr.engine.name()));
        Session { child }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------
// Containers

/// Waits until `needle` shows `times` times in the container's logs (a
/// server restarted with `start_again` says "ready" once per start); the
/// logs then. Panics with them after `timeout`.
pub fn wait_log_times(ctr: &Ctr, needle: &str, times: usize, timeout: Duration) -> String {
    let mut logs = String::new();
    let found = wait_until_every(timeout, Duration::from_millis(100), || {
        logs = ctr.logs();
        logs.matches(needle).count() >= times
    });
    if !found {
        panic!(
            "{}: {needle:?} not {times} times in the logs of {} after {}; logs:\n{logs}",
            ctr.test,
            ctr.name,
            secs(timeout)
        );
    }
    logs
}

/// What `logs` holds from the `n`th (1-based) `needle` on: one start's part
/// of the logs of a container started more than once.
pub fn from_nth<'a>(logs: &'a str, needle: &str, n: usize) -> &'a str {
    match logs.match_indices(needle).nth(n - 1) {
        Some((at, _)) => &logs[at..],
        None => panic!("{needle:?} is not {n} times in:\n{logs}"),
    }
}

/// `docker stop` of several containers at once, each with its own stop
/// timeout, each timed on a thread of its own.
pub fn stop_together(ctrs: &[&Ctr]) -> Vec<Duration> {
    thread::scope(|s| {
        let stops: Vec<_> = ctrs.iter().map(|c| s.spawn(|| c.stop())).collect();
        stops
            .into_iter()
            .map(|h| h.join().expect("a docker stop thread panicked"))
            .collect()
    })
}
