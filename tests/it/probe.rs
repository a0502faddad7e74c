//! Probes and readiness, against real servers: `--probe` (HTTP, TCP, a Unix
//! socket, names from /etc/hosts, never from DNS) and `--ready-when`
//! with vigil as PID 1 and a `NOTIFY_SOCKET` the test listens on; then the
//! same in containers: a `FROM scratch` image whose `HEALTHCHECK` is
//! `vigil --probe`, and `READY=1` through podman's `--sdnotify=container`
//! and through Docker with a bind-mounted socket.
//!
//! Every server runs in a network namespace of its own (`unshare --net`,
//! loopback brought up with busybox `ip`), with a mount namespace in which
//! /etc/hosts and /etc/resolv.conf are the test's: the ports are fixed,
//! and nothing reaches the machine's network or resolver. The HTTP server
//! is busybox `httpd`; the DNS server, an HTTP server on a Unix socket, a
//! server that never answers and one that answers something other than
//! HTTP are a small python3 script (`SERVERS_PY`).
//!
//! The container tests skip (a `SKIPPED:` line) when no engine answers,
//! and fail instead with `VIGIL_E2E_REQUIRE=1` (podman:
//! `VIGIL_E2E_REQUIRE_PODMAN=1`), as tests/docker.rs and tests/images.rs do.

use crate::common::*;
use std::fs;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

/// The port busybox httpd listens on in each namespace.
pub(crate) const HTTP: u16 = 8080;

/// The servers python3 runs beside httpd, each bound before it writes
/// `servers-ready`:
/// - DNS on 127.0.0.1:53, which /etc/resolv.conf names and vigil must
///   never ask: `app.test` and `app.corp.test` are 127.0.0.1 (IPv4
///   only), `broken.test` gets SERVFAIL, `slow.test` no answer, any other
///   name NXDOMAIN;
/// - HTTP on the Unix socket `app.sock`: 200 for /healthz, 503 otherwise;
/// - 127.0.0.1:8082 takes connections and never answers;
/// - 127.0.0.1:8083 answers `SSH-2.0-test` and closes.
pub(crate) const SERVERS_PY: &str = r#"
import http.server, os, socket, socketserver, sys, threading

d = sys.argv[1]

def dns(s):
    while True:
        q, peer = s.recvfrom(512)
        i, labels = 12, []
        while q[i]:
            labels.append(q[i + 1:i + 1 + q[i]].decode())
            i += 1 + q[i]
        qtype = int.from_bytes(q[i + 1:i + 3], "big")
        question = q[12:i + 5]
        name = ".".join(labels)
        answers = b""
        count = 0
        if name in ("app.test", "app.corp.test"):
            rcode = 0
            if qtype == 1:
                answers = b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x7f\x00\x00\x01"
                count = 1
        elif name == "broken.test":
            rcode = 2
        elif name == "slow.test":
            continue
        else:
            rcode = 3
        header = q[:2] + bytes([0x81, 0x80 | rcode]) + b"\x00\x01" + count.to_bytes(2, "big") + b"\x00\x00\x00\x00"
        s.sendto(header + question + answers, peer)

class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/healthz" else 503)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass

class UnixHttp(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    def get_request(self):
        conn, _ = self.socket.accept()
        return conn, ("local", 0)

def silent(s):
    held = []
    while True:
        held.append(s.accept()[0])

def banner(s):
    while True:
        c, _ = s.accept()
        c.sendall(b"SSH-2.0-test\r\n")
        c.close()

def tcp(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(16)
    return s

udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", 53))
sock = os.path.join(d, "app.sock")
if os.path.exists(sock):
    os.unlink(sock)
unix = UnixHttp(sock, Health)
workers = [(dns, udp), (silent, tcp(8082)), (banner, tcp(8083))]
for fn, s in workers:
    threading.Thread(target=fn, args=(s,), daemon=True).start()
threading.Thread(target=unix.serve_forever, daemon=True).start()
open(os.path.join(d, "servers-ready"), "w").close()
threading.Event().wait()
"#;

/// A directory with what the servers serve and the namespace's own
/// /etc/hosts and /etc/resolv.conf.
pub(crate) struct World {
    pub(crate) dir: TempDir,
}

impl World {
    pub(crate) fn new() -> World {
        let dir = TempDir::new("ready");
        fs::create_dir_all(dir.join("www")).unwrap();
        fs::write(dir.join("www/healthz"), "ok\n").unwrap();
        fs::write(dir.join("servers.py"), SERVERS_PY).unwrap();
        fs::write(
            dir.join("hosts"),
            "127.0.0.1 localhost\n::1 localhost ip6-localhost\n127.0.0.1 web.test\n",
        )
        .unwrap();
        fs::write(
            dir.join("resolv.conf"),
            "nameserver 127.0.0.1\nsearch corp.test\noptions ndots:1\n",
        )
        .unwrap();
        World { dir }
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// vigil started in a network and mount namespace of its own (PID 1
    /// of a PID namespace too, so that the servers end with it), after
    /// `setup` (shell) has run there.
    pub(crate) fn vigil(&self, setup: &str) -> Vigil {
        let script = format!(
            "busybox ip link set lo up && \
             mount --bind '{d}/hosts' /etc/hosts && \
             mount --bind '{d}/resolv.conf' /etc/resolv.conf && \
             {setup} exec \"$@\"",
            d = self.path().display()
        );
        Vigil::wrapped(&[
            "unshare",
            "--net",
            "--mount",
            "--pid",
            "--fork",
            "--mount-proc",
            "--",
            "sh",
            "-c",
            &script,
            "sh",
        ])
        .cwd(self.path())
    }

    /// vigil with every server of the world running and listening.
    pub(crate) fn with_servers(&self) -> Vigil {
        let port = format!("{HTTP:04X}");
        self.vigil(&format!(
            "rm -f servers-ready; \
             busybox httpd -f -p 127.0.0.1:{HTTP} -h www & \
             python3 servers.py . & \
             until [ -e servers-ready ] && grep -q ':{port} 00000000:0000 0A' /proc/net/tcp; do sleep 0.02; done; "
        ))
    }

    /// `vigil ARGS` (a `--probe`) with every server running.
    pub(crate) fn probe(&self, args: &[&str]) -> Output {
        self.probe_env(args, &[])
    }

    pub(crate) fn probe_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut v = self.with_servers().args(args);
        for (k, val) in env {
            v = v.env(k, val);
        }
        v.run()
    }
}

/// The one line a probe said, checked: `status`, at most one line on
/// stderr, nothing on stdout.
pub(crate) fn probed<'a>(out: &'a Output, status: i32, what: &str) -> &'a str {
    assert_eq!(out.status, Exit::Code(status), "{what}\n{out}");
    assert!(out.stdout.is_empty(), "{what}: stdout\n{out}");
    let lines = out.stderr_lines();
    assert!(lines.len() <= 1, "{what}: more than one line\n{out}");
    lines.first().copied().unwrap_or("")
}

// ---------------------------------------------------------------------------
// --probe
// ---------------------------------------------------------------------------

#[test]
pub(crate) fn probe_http_is_healthy_on_2xx_and_says_the_status_otherwise() {
    let w = World::new();
    let out = w.probe(&["--probe", "http://127.0.0.1:8080/healthz"]);
    assert_eq!(probed(&out, 0, "a page that is there"), "");
    let out = w.probe(&["-v", "--probe", "http://127.0.0.1:8080/healthz"]);
    let line = probed(&out, 0, "-v");
    assert!(
        line.starts_with("vigil: http://127.0.0.1:8080/healthz is healthy: HTTP status 200 (OK) from 127.0.0.1:8080 in "),
        "{line}"
    );
    let out = w.probe(&["--probe", "http://127.0.0.1:8080/missing"]);
    assert_eq!(
        probed(&out, 1, "a page that is not there"),
        "vigil: warning: http://127.0.0.1:8080/missing is unhealthy: HTTP status 404 (Not Found)"
    );
}

#[test]
pub(crate) fn probe_tcp_and_unix_connections() {
    let w = World::new();
    let sock = w.path().join("app.sock");
    let http_unix = format!(
        "http+unix://{}",
        sock.display().to_string().replace('/', "%2F")
    );
    for (url, status, said) in [
        ("tcp://127.0.0.1:8080".to_string(), 0, String::new()),
        (
            "tcp://127.0.0.1:8081".to_string(),
            1,
            "vigil: warning: tcp://127.0.0.1:8081 is unhealthy: connection refused by 127.0.0.1:8081"
                .to_string(),
        ),
        (format!("unix:{}", sock.display()), 0, String::new()),
        (format!("{http_unix}/healthz"), 0, String::new()),
        (
            format!("{http_unix}/sick"),
            1,
            format!("vigil: warning: {http_unix}/sick is unhealthy: HTTP status 503 (Service Unavailable)"),
        ),
        (
            format!("unix:{}/none.sock", w.path().display()),
            1,
            format!(
                "vigil: warning: unix:{d}/none.sock is unhealthy: cannot connect to {d}/none.sock: No such file or directory",
                d = w.path().display()
            ),
        ),
    ] {
        let out = w.probe(&["--probe", &url]);
        assert_eq!(probed(&out, status, &url), said, "{url}");
    }
}

#[test]
pub(crate) fn probe_names_from_localhost_and_hosts_never_dns() {
    let w = World::new();
    for url in [
        "http://localhost:8080/healthz",
        // /etc/hosts
        "http://web.test:8080/healthz",
    ] {
        let out = w.probe(&["-v", "--probe", url]);
        let line = probed(&out, 0, url);
        assert!(line.contains("from 127.0.0.1:8080"), "{url}: {line}");
    }
    // The namespace's nameserver knows app.test (also as `app` with the
    // search domain); vigil does not ask it.
    for (url, name) in [
        ("http://app.test:8080/healthz", "app.test"),
        ("http://app:8080/healthz", "app"),
        ("http://nosuch.test:8080/", "nosuch.test"),
    ] {
        let out = w.probe(&["--probe", url]);
        assert_eq!(
            probed(&out, 1, url),
            format!(
                "vigil: warning: {url} is unhealthy: cannot resolve '{name}': not localhost and not in /etc/hosts (vigil does not ask DNS)"
            )
        );
    }
}

/// httpd listens on 127.0.0.1 only: `localhost` is tried as 127.0.0.1 first,
/// and an IPv6 literal is refused (or cannot be reached where the namespace
/// has no IPv6).
#[test]
pub(crate) fn probe_an_ipv6_literal() {
    let w = World::new();
    let out = w.probe(&["--probe", "http://[::1]:8080/healthz"]);
    let line = probed(&out, 1, "[::1]");
    assert!(
        line.starts_with("vigil: warning: http://[::1]:8080/healthz is unhealthy: ")
            && line.contains("[::1]:8080"),
        "{line}"
    );
}

#[test]
pub(crate) fn probe_timeouts_say_what_was_waited_for() {
    let w = World::new();
    let url = "http://127.0.0.1:8082/";
    let said = "no HTTP answer from 127.0.0.1:8082 within 500ms";
    let started = Instant::now();
    let out = w.probe(&["--probe-timeout", "500ms", "--probe", url]);
    assert_eq!(
        probed(&out, 1, url),
        format!("vigil: warning: {url} is unhealthy: {said}")
    );
    assert!(started.elapsed() >= Duration::from_millis(500), "{url}");
    // The variable sets it as well.
    let out = w.probe_env(&["--probe", url], &[("VIGIL_PROBE_TIMEOUT", "300ms")]);
    assert!(
        probed(&out, 1, url).ends_with(&said.replace("500ms", "300ms")),
        "{url}\n{out}"
    );
    let out = w.probe(&["--probe", "http://127.0.0.1:8083/"]);
    assert_eq!(
        probed(&out, 1, "a banner"),
        "vigil: warning: http://127.0.0.1:8083/ is unhealthy: 127.0.0.1:8083 answered something that is not HTTP: \"SSH-2.0-test\\r\\n\""
    );
}

#[test]
pub(crate) fn probe_records_carry_the_reason() {
    let w = World::new();
    for (url, reason, extra) in [
        (
            "tcp://127.0.0.1:8081",
            "refused",
            ("address", "127.0.0.1:8081"),
        ),
        (
            "http://127.0.0.1:8080/missing",
            "http_status",
            ("http_status", "404"),
        ),
        ("http://nosuch.test/", "unresolved", ("name", "nosuch.test")),
    ] {
        let out = w.probe(&["--log-format", "json", "--probe", url]);
        let line = probed(&out, 1, url);
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(record["event"], "probe_unhealthy", "{line}");
        assert_eq!(record["level"], "warning", "{line}");
        assert_eq!(record["url"], url, "{line}");
        assert_eq!(record["reason"], reason, "{line}");
        assert_eq!(
            record[extra.0].to_string().trim_matches('"'),
            extra.1,
            "{line}"
        );
    }
}

/// The probe's line is the health check's output, not vigil's log: an
/// unhealthy probe says why at every verbosity (an image's
/// `VIGIL_VERBOSITY=0`, which hides the container's exit report, reaches
/// its `HEALTHCHECK` too, and `docker inspect` would show `[1 ""]`), as a
/// warning in text and in its record; a healthy one stays silent.
#[test]
pub(crate) fn an_unhealthy_probe_says_why_at_every_verbosity() {
    let w = World::new();
    let url = "tcp://127.0.0.1:8081";
    for env in [("VIGIL_VERBOSITY", "0"), ("TINI_VERBOSITY", "0")] {
        let out = w.probe_env(&["--probe", url], &[env]);
        assert_eq!(
            probed(&out, 1, &format!("{env:?}")),
            format!("vigil: warning: {url} is unhealthy: connection refused by 127.0.0.1:8081"),
        );
        let out = w.probe_env(&["--log-format", "json", "--probe", url], &[env]);
        let line = probed(&out, 1, &format!("{env:?}, json"));
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(record["event"], "probe_unhealthy", "{line}");
        assert_eq!(record["level"], "warning", "{line}");
        let out = w.probe_env(&["--probe", "tcp://127.0.0.1:8080"], &[env]);
        assert_eq!(probed(&out, 0, &format!("{env:?}, healthy")), "");
    }
}

/// The container's variables configure the container's vigil: a probe
/// run beside it (a `HEALTHCHECK`) reads only its own, and writes no
/// termination log.
#[test]
pub(crate) fn probe_reads_only_its_own_variables() {
    let w = World::new();
    let log = w.path().join("termination-log");
    let out = w.probe_env(
        &["--probe", "http://127.0.0.1:8080/healthz"],
        &[
            ("VIGIL_READY_WHEN", "https://nowhere/"),
            ("VIGIL_GRACE_PERIOD", "not a duration"),
            ("VIGIL_TIMOUT", "1s"),
            ("VIGIL_TERMINATION_LOG", &log.display().to_string()),
            ("VIGIL_LOG_FORMAT", "json"),
        ],
    );
    assert_eq!(probed(&out, 0, "the container's variables"), "");
    let out = w.probe_env(
        &["--probe", "tcp://127.0.0.1:8081"],
        &[("VIGIL_TERMINATION_LOG", &log.display().to_string())],
    );
    probed(&out, 1, "refused");
    assert!(!log.exists(), "a probe wrote the termination log");
}

// ---------------------------------------------------------------------------
// --probe: mistakes exit 1, never 2
// ---------------------------------------------------------------------------

/// A mistake on a `--probe` command line: status 1 (Docker's HEALTHCHECK
/// reserves 2), one error line naming it, no termination log.
pub(crate) fn probe_mistake(args: &[&str], env: &[(&str, &str)], needles: &[&str]) {
    let dir = TempDir::new("probe-usage");
    let log = dir.join("termination-log");
    let mut v = Vigil::plain().args(args).env("VIGIL_TERMINATION_LOG", &log);
    for (k, val) in env {
        v = v.env(k, val);
    }
    let out = v.run();
    let what = format!("args {args:?} env {env:?}");
    assert_eq!(out.status, Exit::Code(1), "{what}\n{out}");
    let line = usage_error_in(&out.stderr).unwrap_or_else(|e| panic!("{what}: {e}\n{out}"));
    for needle in needles {
        assert!(line.contains(needle), "{what}: {needle:?} not in {line}");
    }
    assert!(!log.exists(), "{what}: the termination log was written");
}

#[test]
pub(crate) fn probe_malformed_urls_are_one_line_and_status_1() {
    for (url, why) in [
        ("localhost:8080", "use http://HOST[:PORT][/PATH]"),
        ("https://127.0.0.1/", "https is not supported"),
        ("ftp://host/", "unknown scheme 'ftp'"),
        ("http://", "the host is missing"),
        ("http://host:0/", "'0' is not a port"),
        ("http://host:99999/", "'99999' is not a port"),
        ("http://::1:80/", "an IPv6 address goes in brackets"),
        ("http://[::1/", "has no closing ']'"),
        ("http://300.1.1.1/", "'300.1.1.1' is not an IPv4 address"),
        ("http://a..b/", "is not a host name"),
        ("http://user:pw@host/", "user names and passwords"),
        ("http://host/a b", "the path holds a space"),
        ("tcp://host", "a port is needed"),
        ("tcp://host:80/path", "takes no path"),
        ("unix:relative.sock", "not a socket path"),
        ("http+unix://%2Fa%2/", "two hex digits"),
        (
            "http+unix:///run/x.sock/healthz",
            "write http+unix://%2Frun%2Fx.sock/healthz",
        ),
    ] {
        probe_mistake(
            &["--probe", url],
            &[],
            &[
                &format!("--probe: '{url}' is not a URL vigil can probe: "),
                why,
            ],
        );
    }
}

#[test]
pub(crate) fn probe_bad_durations_and_combinations_are_one_line_and_status_1() {
    let url = "http://127.0.0.1:1/";
    probe_mistake(
        &["--probe-timeout", "0", "--probe", url],
        &[],
        &["--probe-timeout", "more than 0"],
    );
    probe_mistake(
        &["--probe-timeout", "soon", "--probe", url],
        &[],
        &["'soon' is not a duration"],
    );
    probe_mistake(
        &["--probe", url],
        &[("VIGIL_PROBE_TIMEOUT", "2x")],
        &["VIGIL_PROBE_TIMEOUT", "'2x'"],
    );
    probe_mistake(
        &["--probe", url, "sh", "-c", "true"],
        &[],
        &["runs no command", "'sh'"],
    );
    probe_mistake(&["--probe", url, "--", "true"], &[], &["runs no command"]);
    probe_mistake(
        &["--grace-period", "5s", "--probe", url],
        &[],
        &["--grace-period does not go with --probe"],
    );
    probe_mistake(
        &["--probe", url, "--ready-when", url],
        &[],
        &["--ready-when does not go with --probe"],
    );
    probe_mistake(
        &["--probe", url, "--version"],
        &[],
        &["--version does not go with --probe"],
    );
    probe_mistake(
        &["--probe", url, "--probe", url],
        &[],
        &["--probe is given twice"],
    );
    probe_mistake(&["--probe"], &[], &["--probe needs a value"]);
    probe_mistake(
        &["--bogus", "--probe", url],
        &[],
        &["unknown option '--bogus'"],
    );
    probe_mistake(&["--probe", url, "-x"], &[], &["unknown option '-x'"]);
}

// ---------------------------------------------------------------------------
// --ready-when, vigil as PID 1
// ---------------------------------------------------------------------------

/// A socket the service manager would listen on: every datagram vigil
/// sends, with when it came.
pub(crate) struct Notify {
    pub(crate) path: PathBuf,
    pub(crate) got: Arc<Mutex<Vec<(Instant, SystemTime, String)>>>,
}

impl Notify {
    pub(crate) fn bind(dir: &Path) -> Notify {
        let path = dir.join("notify.sock");
        let socket = UnixDatagram::bind(&path).unwrap();
        let got = Arc::new(Mutex::new(Vec::new()));
        let keep = got.clone();
        thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                // Interrupted (the test process stopped and continued,
                // say): the datagram is still to come.
                let n = match socket.recv(&mut buf) {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => return,
                };
                let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                keep.lock()
                    .unwrap()
                    .push((Instant::now(), SystemTime::now(), text));
            }
        });
        Notify { path, got }
    }

    pub(crate) fn all(&self) -> Vec<(Instant, SystemTime, String)> {
        self.got.lock().unwrap().clone()
    }

    pub(crate) fn texts(&self) -> Vec<String> {
        self.all().into_iter().map(|(_, _, t)| t).collect()
    }

    /// Waits for a datagram holding `line` (as one of its lines).
    pub(crate) fn wait_for(
        &self,
        line: &str,
        timeout: Duration,
    ) -> Option<(Instant, SystemTime, String)> {
        let mut found = None;
        wait_until(timeout, || {
            found = self
                .all()
                .into_iter()
                .find(|(_, _, t)| t.lines().any(|l| l == line));
            found.is_some()
        });
        found
    }
}

/// The child for the readiness tests: it writes what it sees of
/// `NOTIFY_SOCKET`, sleeps `delay` seconds, marks the moment it starts
/// listening (`listening`'s time) and becomes busybox httpd.
pub(crate) fn app_after(delay: u32) -> String {
    format!(
        "echo \"${{NOTIFY_SOCKET-unset}}\" > child-env; sleep {delay}; : > listening; \
         exec busybox httpd -f -p 127.0.0.1:{HTTP} -h www"
    )
}

#[test]
pub(crate) fn ready_once_one_interval_after_the_app_listens_then_stopping() {
    let _t = timing();
    let w = World::new();
    let notify = Notify::bind(w.path());
    let run = w
        .vigil("")
        .env("NOTIFY_SOCKET", &notify.path)
        .args([
            "-v",
            "--ready-when",
            "http://127.0.0.1:8080/healthz",
            "--post-start",
            "sh -c 'echo \"${NOTIFY_SOCKET-unset}\" > hook-env'",
            "--",
            "sh",
            "-c",
            &app_after(3),
        ])
        .spawn();
    let started = Instant::now();
    let Some((at, wall, text)) = notify.wait_for("READY=1", TIMEOUT) else {
        panic!("no READY=1: {:?}\n{}", notify.texts(), run.describe());
    };
    let listening = fs::metadata(w.path().join("listening"))
        .and_then(|m| m.modified())
        .expect("the app marks when it listens");
    let late = wall.duration_since(listening).unwrap_or_default();
    note(
        "ready_once",
        format!(
            "READY=1 {} after the start, {} after the app listened: {text:?}",
            secs(at - started),
            secs(late)
        ),
    );
    assert!(
        at - started >= Duration::from_secs(3),
        "READY=1 before the app listened"
    );
    // At most one interval (1s) after the app began to listen, with room
    // for httpd's own start on a busy machine.
    assert!(
        late <= Duration::from_millis(1500),
        "READY=1 {late:?} after the app listened"
    );
    assert!(text.starts_with("READY=1\nSTATUS=ready after "), "{text:?}");
    assert!(
        text.contains(
            ": http://127.0.0.1:8080/healthz: HTTP status 200 (OK) from 127.0.0.1:8080, at probe "
        ),
        "{text:?}"
    );
    assert!(
        run.wait_stderr("vigil: ready after ", TIMEOUT),
        "{}",
        run.describe()
    );
    // The child and the hook do not get the socket vigil answers for.
    assert_eq!(read_trimmed(&w.path().join("child-env")), "unset");
    assert!(wait_for_file(&w.path().join("hook-env"), TIMEOUT));
    assert_eq!(read_trimmed(&w.path().join("hook-env")), "unset");
    // Once: nothing more while it runs.
    thread::sleep(Duration::from_secs(2));
    assert_eq!(notify.texts().len(), 1, "{:?}", notify.texts());
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.status, Exit::Code(143), "{out}");
    let stopping = notify.wait_for("STOPPING=1", TIMEOUT);
    let texts = notify.texts();
    assert!(stopping.is_some(), "{texts:?}");
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert_eq!(
        texts[1],
        "STOPPING=1\nSTATUS=stopping: SIGTERM from pid 0 (outside this PID namespace)"
    );
}

/// After the first success nothing is pending: no socket, no deadline, so
/// vigil is never scheduled while idle. The window opens as soon as vigil
/// sleeps after READY=1 and lasts 3 s: longer than `--ready-interval` (1s)
/// and `--probe-timeout` (2s), so a probe deadline left behind would fire
/// inside it.
#[test]
pub(crate) fn idle_after_ready_is_never_woken() {
    let w = World::new();
    let notify = Notify::bind(w.path());
    let run = w
        .vigil("")
        .env("NOTIFY_SOCKET", &notify.path)
        .args([
            "--ready-when",
            "tcp://127.0.0.1:8080",
            "--ready-timeout",
            "1m",
            "--",
        ])
        .args(["sh", "-c", &app_after(1)])
        .spawn();
    let v = run.vigil_pid();
    assert!(
        notify.wait_for("READY=1", TIMEOUT).is_some(),
        "{}",
        run.describe()
    );
    // Settled: asleep, waiting, once READY=1 is out.
    assert!(
        wait_until(TIMEOUT, || state(v) == Some('S')),
        "vigil never went to sleep after READY=1: {:?}\n{}",
        state(v),
        run.describe()
    );
    let a = ctxt_switches(v).expect("vigil's status");
    // The wait is the point: readiness is over, and what follows it must
    // not wake vigil.
    thread::sleep(Duration::from_secs(3));
    let b = ctxt_switches(v).expect("vigil's status");
    assert_eq!(
        a, b,
        "vigil woke up while idle after READY=1: {a:?} then {b:?}"
    );
    // The probe's socket is gone too.
    let fds: Vec<String> = fs::read_dir(format!("/proc/{v}/fd"))
        .unwrap()
        .flatten()
        .filter_map(|e| fs::read_link(e.path()).ok())
        .map(|l| l.display().to_string())
        .collect();
    assert!(!fds.iter().any(|l| l.starts_with("socket:")), "{fds:?}");
}

#[test]
pub(crate) fn never_ready_stops_at_the_ready_timeout_and_never_exits_0() {
    let _t = timing();
    // A child that dies of the stop signal (143, which stands), and one
    // that answers it with 0 (which becomes 1).
    for (child, status) in [
        ("exec sleep 1000", 143),
        ("trap 'exit 0' TERM; sleep 1000 & wait", 1),
    ] {
        let w = World::new();
        let notify = Notify::bind(w.path());
        let started = Instant::now();
        let out = w
            .vigil("")
            .env("NOTIFY_SOCKET", &notify.path)
            .args([
                "--log-format",
                "json",
                "--ready-when",
                "http://127.0.0.1:8080/healthz",
                "--ready-timeout",
                "2s",
                "--",
                "sh",
                "-c",
                child,
            ])
            .run();
        let took = started.elapsed();
        assert_eq!(out.status, Exit::Code(status), "{child}\n{out}");
        assert!(took >= Duration::from_secs(2), "{child}: {took:?}");
        let texts = notify.texts();
        assert!(
            !texts.iter().any(|t| t.contains("READY=1")),
            "{child}: {texts:?}"
        );
        assert!(
            texts.len() == 1
                && texts[0].starts_with(
                    "STOPPING=1\nSTATUS=stopping: not ready after 2s (--ready-timeout; the last probe: "
                ),
            "{child}: {texts:?}"
        );
        let records: Vec<serde_json::Value> = out
            .stderr
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        let passed = records
            .iter()
            .find(|r| r["event"] == "ready_timeout_passed")
            .unwrap_or_else(|| panic!("{child}: no ready_timeout_passed\n{out}"));
        assert_eq!(passed["reason"], "refused", "{passed}");
        let exit = records
            .iter()
            .find(|r| r["event"] == "exit")
            .unwrap_or_else(|| panic!("{child}: no exit record\n{out}"));
        assert_eq!(exit["status"], status, "{exit}");
        assert_eq!(exit["level"], "warning", "{exit}");
        assert_eq!(exit["stop"]["cause"], "not_ready", "{exit}");
        assert_eq!(exit["stop"]["timeout"], 2, "{exit}");
        assert_eq!(
            exit["stop"]["error"], "connection refused by 127.0.0.1:8080",
            "{exit}"
        );
    }
}

/// Without `--ready-when` the socket is the child's, untouched; vigil sends
/// nothing to it.
#[test]
pub(crate) fn without_ready_when_notify_socket_passes_to_the_child() {
    let dir = TempDir::new("notify-child");
    let notify = Notify::bind(dir.path());
    let out = run_sh(
        Vigil::pid1().env("NOTIFY_SOCKET", &notify.path),
        &dir,
        "echo \"$NOTIFY_SOCKET\" > child-env; kill -TERM $$",
    );
    assert_eq!(out.status, Exit::Code(143), "{out}");
    assert_eq!(
        read_trimmed(&dir.join("child-env")),
        notify.path.display().to_string()
    );
    // vigil has exited: whatever it sent is there.
    assert!(notify.texts().is_empty(), "{:?}", notify.texts());
}

/// `--ready-timeout` without `--ready-when` (an image's `ENV` cleared by
/// `-e VIGIL_READY_WHEN=`): one warning; `--ready-interval` changes
/// nothing.
#[test]
pub(crate) fn a_ready_timeout_without_ready_when_is_a_warning() {
    let dir = TempDir::new("ready-unused");
    let out = run_sh(
        Vigil::pid1()
            .env("VIGIL_READY_WHEN", "")
            .env("VIGIL_READY_TIMEOUT", "1m")
            .args(["--ready-interval", "2s"]),
        &dir,
        "exit 0",
    );
    assert_eq!(out.status, Exit::Code(0), "{out}");
    // (The exit report may follow, when the machine's OOM killer was busy
    // in the test's cgroup meanwhile.)
    assert_eq!(
        out.stderr_lines()[..1],
        ["vigil: warning: a ready timeout is set, but no --ready-when: it has nothing to time"],
        "{out}"
    );
}

/// `NOTIFY_SOCKET` that names no Unix socket: one warning, and the
/// container runs.
#[test]
pub(crate) fn an_unusable_notify_socket_is_a_warning() {
    let dir = TempDir::new("notify-vsock");
    let out = run_sh(
        Vigil::pid1()
            .env("NOTIFY_SOCKET", "vsock:2:1234")
            .args(["--ready-when", "tcp://127.0.0.1:1"]),
        &dir,
        "exit 3",
    );
    assert_eq!(out.status, Exit::Code(3), "{out}");
    assert!(
        out.stderr.starts_with(
            "vigil: warning: NOTIFY_SOCKET 'vsock:2:1234' is not a Unix socket path (absolute, or @NAME): READY=1 and STOPPING=1 will not be sent\n"
        ),
        "{out}"
    );
}

#[test]
pub(crate) fn ready_when_mistakes_are_usage_errors() {
    for (args, env, needles) in [
        (
            &["--ready-when", "localhost:8080"][..],
            &[][..],
            &["--ready-when: 'localhost:8080' is not a URL vigil can probe"][..],
        ),
        (
            &[],
            &[("VIGIL_READY_WHEN", "https://x/")],
            &["VIGIL_READY_WHEN: 'https://x/'", "https is not supported"],
        ),
        (
            &["--ready-interval", "0"],
            &[],
            &["--ready-interval", "more than 0"],
        ),
        (
            &[],
            &[("VIGIL_READY_INTERVAL", "0ms")],
            &["VIGIL_READY_INTERVAL", "more than 0"],
        ),
        (
            &["--ready-interval", "fast"],
            &[],
            &["--ready-interval: 'fast' is not a duration"],
        ),
        (
            &["--ready-timeout", "-1s"],
            &[],
            &["--ready-timeout: '-1s' is negative"],
        ),
        (
            &["--ready-timeout=-1s"],
            &[],
            &["--ready-timeout: '-1s' is negative"],
        ),
        (
            &["--probe-timeout", "0"],
            &[],
            &["--probe-timeout", "more than 0"],
        ),
        (
            &["--ready-when", "tcp://a:1", "--ready-when", "tcp://a:2"],
            &[],
            &["--ready-when is given twice"],
        ),
    ] {
        let dir = TempDir::new("ready-usage");
        let mut v = Vigil::pid1().args(args);
        for (k, val) in env {
            v = v.env(k, val);
        }
        let out = run_sh(v, &dir, ": > started");
        let what = format!("args {args:?} env {env:?}");
        let line = usage_error_line(&out, &what);
        for needle in needles {
            assert!(line.contains(needle), "{what}: {needle:?} not in {line}");
        }
        assert!(!dir.join("started").exists(), "{what}: the child ran");
    }
}

// ---------------------------------------------------------------------------
// Containers
// ---------------------------------------------------------------------------
