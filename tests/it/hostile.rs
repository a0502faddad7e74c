//! Hostile peers: probes against servers that misbehave on purpose
//! (tests/programs/hostile.py), each in one way: silent, trickling a byte
//! a second, an endless status line, endless interim answers (100, 103),
//! garbage, endless header lines, a reset, a server that never reads; and
//! a healthy one as the control. Each, over TCP and over a Unix socket
//! (`http+unix://`), is three tests:
//!
//! - `probe_*`: `vigil --probe URL --probe-timeout 1s` ends with status 1
//!   and one line within the timeout and half a second, with little memory
//!   and CPU time;
//! - `sigterm_*`: vigil as PID 1 running a child with `--ready-when URL`
//!   gets SIGTERM while the probe is in the middle of the misbehaviour:
//!   the child has it within 100 ms, and vigil exits;
//! - `ready_timeout_*`: `--ready-timeout 2s` still fires, vigil says so and
//!   stops the child, with little memory and CPU time.
//!
//! Each server runs in a network namespace of its own (`unshare --net`,
//! loopback brought up with busybox `ip`), which vigil joins
//! (`Vigil::netns`): the port is fixed, and vigil stays the test's child
//! (`probe_*`, which reads its final CPU time as a zombie) or PID 1 of a
//! PID namespace of its own, with no server among its children.

use crate::common::*;
use std::fs::{self, File};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::Duration;

/// The port the TCP servers listen on, each in its own namespace.
const PORT: u16 = 8080;

/// What a probe may take in all: its `--probe-timeout` (1 s) and half a
/// second for the rest (starting, the line, the exit).
const PROBE_MAX: Duration = Duration::from_millis(1500);

/// The hard bound on a probe that hangs.
const PROBE_HANG: Duration = Duration::from_secs(5);

/// vigil's peak resident memory, in kB, whatever a peer sends: several
/// times what vigil needs (docs/benchmarks.md, "Figures behind the tests'
/// bounds"), far below where an answer kept whole would take it.
const PEAK_KB: u64 = 16 * 1024;

/// The CPU time of a 1 s `--probe`, however fast the peer sends.
const PROBE_CPU: Duration = Duration::from_millis(300);

/// The CPU time of a `--ready-when` that probes for 2 s and then stops.
const READY_CPU: Duration = Duration::from_secs(1);

/// From the SIGTERM sent to vigil to the child's record of it.
const FORWARD_MAX: Duration = Duration::from_millis(100);

#[derive(Clone, Copy, Debug)]
enum Transport {
    Tcp,
    Unix,
}

/// `hostile.py MODE ADDRESS` in a network namespace of its own.
struct Server {
    mode: &'static str,
    child: Child,
    guard: ProcGuard,
    said: Arc<Mutex<Vec<String>>>,
    dir: TempDir,
    url: String,
}

impl Server {
    /// The server of `mode`, listening; None after `skip` when python3 or
    /// busybox is missing.
    fn start(mode: &'static str, transport: Transport) -> Option<Server> {
        let test = format!("hostile {mode} over {transport:?}");
        need_program(&test, "python3", "python3")?;
        need_program(&test, "busybox", "busybox-static")?;
        let dir = TempDir::new("hostile");
        let (address, url) = match transport {
            Transport::Tcp => (
                format!("127.0.0.1:{PORT}"),
                format!("http://127.0.0.1:{PORT}/healthz"),
            ),
            Transport::Unix => {
                let sock = dir.join("http.sock").display().to_string();
                let url = format!("http+unix://{}/healthz", sock.replace('/', "%2F"));
                (sock, url)
            }
        };
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/hostile.py");
        let mut child = Command::new("unshare")
            .args(["--net", "--", "sh", "-c"])
            .arg("busybox ip link set lo up && exec \"$@\"")
            .args(["sh", "python3"])
            .arg(&script)
            .args([mode, &address])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(File::create(dir.join("stderr")).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", script.display()));
        let guard = ProcGuard::new();
        guard.track(child.id() as i32);
        let said = Arc::new(Mutex::new(Vec::new()));
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let keep = said.clone();
        thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                keep.lock().unwrap().push(line);
            }
        });
        let server = Server {
            mode,
            child,
            guard,
            said,
            dir,
            url,
        };
        assert!(
            server.wait_for("ready", TIMEOUT),
            "the {mode} server never listened\n{}",
            server.describe()
        );
        Some(server)
    }

    /// The server's network namespace, for vigil to join.
    fn netns(&self) -> PathBuf {
        PathBuf::from(format!("/proc/{}/ns/net", self.child.id()))
    }

    /// Waits until the server has said `line`.
    fn wait_for(&self, line: &str, timeout: Duration) -> bool {
        wait_until(timeout, || {
            self.said.lock().unwrap().iter().any(|l| l == line)
        })
    }

    /// What the server said and wrote on stderr, for a failure's message.
    fn describe(&self) -> String {
        format!(
            "--- the {} server said ---\n{}\n--- its stderr ---\n{}",
            self.mode,
            self.said.lock().unwrap().join("\n"),
            read_trimmed(&self.dir.join("stderr"))
        )
    }

    fn healthy(&self) -> bool {
        self.mode == "healthy"
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.guard.kill_all();
        let _ = self.child.wait();
    }
}

/// What a process used while the test watched it.
#[derive(Clone, Copy, Debug, Default)]
struct Usage {
    /// The highest VmHWM seen, in kB.
    peak_kb: u64,
    /// The last CPU time seen.
    cpu: Duration,
}

impl Usage {
    /// Reads `pid`'s figures now: its memory once it runs vigil (before
    /// its exec it is a copy of the test process, whose memory is not
    /// vigil's), its CPU time also once it is a zombie (then final).
    fn sample(&mut self, pid: i32) {
        static VIGIL: OnceLock<PathBuf> = OnceLock::new();
        let vigil = VIGIL.get_or_init(|| fs::canonicalize(vigil_bin()).unwrap_or(vigil_bin()));
        if fs::read_link(format!("/proc/{pid}/exe")).ok().as_ref() == Some(vigil)
            && let Some(kb) = vm_hwm_kb(pid)
        {
            self.peak_kb = self.peak_kb.max(kb);
        }
        if let Some(cpu) = cpu_time(pid) {
            self.cpu = cpu;
        }
    }
}

/// The bounds every run here is held to; each broken one is a line of
/// `problems`.
fn check_usage(usage: Usage, cpu_max: Duration, problems: &mut Vec<String>) {
    if usage.peak_kb >= PEAK_KB {
        problems.push(format!(
            "peak memory {} kB, at least {PEAK_KB} kB",
            usage.peak_kb
        ));
    }
    if usage.cpu >= cpu_max {
        problems.push(format!(
            "CPU time {}, at least {}",
            secs(usage.cpu),
            secs(cpu_max)
        ));
    }
}

/// Panics with every problem found, what vigil used and wrote, and what
/// the server said.
fn assert_none(problems: &[String], usage: Usage, out: &Output, server: &Server) {
    assert!(
        problems.is_empty(),
        "{} at {}:\n- {}\n(peak memory {} kB, CPU time {})\n{out}\n{}",
        server.mode,
        server.url,
        problems.join("\n- "),
        usage.peak_kb,
        secs(usage.cpu),
        server.describe()
    );
}

// ---------------------------------------------------------------------------
// --probe
// ---------------------------------------------------------------------------

/// `vigil --probe URL --probe-timeout 1s`: status 1 and one line (0 and
/// none for the control) within `PROBE_MAX`; its memory and CPU time
/// small.
fn probe_ends(mode: &'static str, transport: Transport) {
    let _t = timing();
    let Some(server) = Server::start(mode, transport) else {
        return;
    };
    let run = Vigil::plain()
        .netns(server.netns())
        .args(["--probe-timeout", "1s", "--probe", &server.url])
        .spawn();
    let pid = run.vigil_pid();
    let mut usage = Usage::default();
    // vigil is the test's child: it stays a zombie, its CPU time final,
    // until `wait` reaps it. A zombie has no memory to read, and a probe
    // may be over in a few milliseconds: its peak is read as often as that.
    let ended = wait_until_every(PROBE_HANG, Duration::from_millis(1), || {
        usage.sample(pid);
        state(pid) == Some('Z')
    });
    let took = run.elapsed();
    usage.sample(pid);
    let out = if ended {
        run.wait(TIMEOUT)
    } else {
        run.kill_and_collect()
    };
    let mut problems = Vec::new();
    if !ended {
        problems.push(format!("still probing after {}", secs(PROBE_HANG)));
    } else if took >= PROBE_MAX {
        problems.push(format!("took {}, {} allowed", secs(took), secs(PROBE_MAX)));
    }
    let (status, lines) = if server.healthy() { (0, 0) } else { (1, 1) };
    if ended && out.status != Exit::Code(status) {
        problems.push(format!("status {:?}, not {status}", out.status));
    }
    if ended && out.stderr_lines().len() != lines {
        problems.push(format!(
            "{} lines on stderr, not {lines}",
            out.stderr_lines().len()
        ));
    }
    let said = format!("vigil: warning: {} is unhealthy: ", server.url);
    if let (1, Some(line)) = (lines, out.stderr_lines().first())
        && !line.starts_with(&said)
    {
        problems.push(format!("the line does not start {said:?}"));
    }
    if !out.stdout.is_empty() {
        problems.push("something on stdout".to_string());
    }
    check_usage(usage, PROBE_CPU, &mut problems);
    assert_none(&problems, usage, &out, &server);
}

// ---------------------------------------------------------------------------
// --ready-when: SIGTERM in the middle of a probe
// ---------------------------------------------------------------------------

/// vigil as PID 1, `--ready-when URL -- sigcount`: SIGTERM sent while the
/// probe is in the middle of the misbehaviour (for the control, once
/// ready) reaches the child within `FORWARD_MAX`, by the child's own
/// clock, and vigil exits with the child's 143.
fn sigterm_reaches_the_child(mode: &'static str, transport: Transport) {
    let _t = timing();
    let Some(server) = Server::start(mode, transport) else {
        return;
    };
    let dir = TempDir::new("hostile-term");
    let counts = dir.join("counts");
    let run = start_counter(
        Vigil::pid1()
            .netns(server.netns())
            .json()
            .args(["-v", "--ready-when", &server.url]),
        &counts,
    );
    if server.healthy() {
        run.expect_record("ready", TIMEOUT);
    } else {
        assert!(
            server.wait_for("misbehaving 1", TIMEOUT),
            "the probe never reached the server\n{}\n{}",
            run.describe(),
            server.describe()
        );
        // The wait is the point: vigil's loop has had the answer's first
        // bytes long enough to be in the middle of reading them.
        thread::sleep(Duration::from_millis(200));
    }
    let pid = run.vigil_pid();
    let mut usage = Usage::default();
    usage.sample(pid);
    let sent = monotonic_ns();
    run.signal(libc::SIGTERM);
    let got = wait_until(PROBE_HANG, || {
        Counts::read(&counts).count(libc::SIGTERM) > 0
    });
    usage.sample(pid);
    let at = Counts::read(&counts).last(libc::SIGTERM);
    let out = run.wait(PROBE_HANG);
    let mut problems = Vec::new();
    if !got {
        problems.push(format!(
            "the child had no SIGTERM {} after it was sent",
            secs(PROBE_HANG)
        ));
    } else {
        let late = Duration::from_nanos(at.saturating_sub(sent));
        if late > FORWARD_MAX {
            problems.push(format!(
                "the child had SIGTERM {} after it was sent, {} allowed",
                secs(late),
                secs(FORWARD_MAX)
            ));
        }
    }
    if out.status != Exit::Code(143) {
        problems.push(format!("status {:?}, not 143", out.status));
    }
    assert_none(&problems, usage, &out, &server);
}

// ---------------------------------------------------------------------------
// --ready-when: --ready-timeout
// ---------------------------------------------------------------------------

/// vigil as PID 1, `--ready-when URL --ready-timeout 2s -- sleep 1000`:
/// the ready timeout passes, vigil says so (`ready_timeout_passed`) and
/// stops the child (143), within a generous bound, with little memory and
/// CPU time. The control is ready instead, and is still running once the
/// ready timeout is past.
fn ready_timeout_fires(mode: &'static str, transport: Transport) {
    let Some(server) = Server::start(mode, transport) else {
        return;
    };
    let mut run = Vigil::pid1()
        .netns(server.netns())
        .json()
        .args(["-v", "--ready-when", &server.url, "--ready-timeout", "2s"])
        .args(["--", "sleep", "1000"])
        .spawn();
    let pid = run.vigil_pid();
    let mut usage = Usage::default();
    if server.healthy() {
        run.expect_record("ready", TIMEOUT);
        // The wait is the point: the ready timeout passes, and nothing
        // must come of it.
        let past = Duration::from_secs(3).saturating_sub(run.elapsed());
        thread::sleep(past);
        usage.sample(pid);
        let records = run.records_now();
        let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
        let mut problems = Vec::new();
        if records.has("ready_timeout_passed") {
            problems.push("the ready timeout fired after ready".to_string());
        }
        if out.status != Exit::Code(143) {
            problems.push(format!("status {:?}, not 143", out.status));
        }
        check_usage(usage, READY_CPU, &mut problems);
        return assert_none(&problems, usage, &out, &server);
    }
    let bound = Duration::from_secs(10);
    let ended = wait_until(bound, || {
        usage.sample(pid);
        run.try_exit().is_some()
    });
    let took = run.elapsed();
    let out = run.wait(Duration::ZERO);
    let mut problems = Vec::new();
    if !ended {
        problems.push(format!("still running after {}", secs(bound)));
    } else if took < Duration::from_secs(2) {
        problems.push(format!(
            "ended after {}, before the ready timeout",
            secs(took)
        ));
    }
    let records = Records::of(&out.stderr);
    if !records.has("ready_timeout_passed") {
        problems.push("no ready_timeout_passed record".to_string());
    }
    if records.has("ready") {
        problems.push("a ready record".to_string());
    }
    if ended && out.status != Exit::Code(143) {
        problems.push(format!("status {:?}, not 143", out.status));
    }
    if ended && !records.has("exit") {
        problems.push("no exit record".to_string());
    } else if ended && records.exit()["stop"]["cause"] != "not_ready" {
        problems.push("the exit record's stop.cause is not not_ready".to_string());
    }
    check_usage(usage, READY_CPU, &mut problems);
    assert_none(&problems, usage, &out, &server);
}

/// For each misbehaviour, a module of six tests: the three checks over TCP
/// and over a Unix socket.
macro_rules! hostile {
    ($($module:ident: $mode:literal,)*) => {$(
        mod $module {
            use super::*;

            #[test]
            fn probe_over_tcp() {
                probe_ends($mode, Transport::Tcp);
            }

            #[test]
            fn probe_over_unix() {
                probe_ends($mode, Transport::Unix);
            }

            #[test]
            fn sigterm_over_tcp() {
                sigterm_reaches_the_child($mode, Transport::Tcp);
            }

            #[test]
            fn sigterm_over_unix() {
                sigterm_reaches_the_child($mode, Transport::Unix);
            }

            #[test]
            fn ready_timeout_over_tcp() {
                ready_timeout_fires($mode, Transport::Tcp);
            }

            #[test]
            fn ready_timeout_over_unix() {
                ready_timeout_fires($mode, Transport::Unix);
            }
        }
    )*};
}

hostile! {
    healthy: "healthy",
    silence: "silence",
    trickle: "trickle",
    endless_status: "endless-status",
    interim_100: "interim-100",
    interim_103: "interim-103",
    garbage: "garbage",
    flood_headers: "flood-headers",
    reset: "reset",
    no_read: "no-read",
}
