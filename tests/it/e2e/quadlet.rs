//! Quadlet: docs/health.md's `.container` unit
//! (`Environment=VIGIL_EXIT_CODES=stopped=0,unhealthy=69`,
//! `Restart=on-failure`) as systemd would run it. systemd is not PID 1
//! here, so the test does what systemd would do, each step with the tool
//! systemd itself uses:
//!
//! - podman's Quadlet generator turns the unit into a service (`-dryrun`),
//!   and `systemd-analyze verify` must take that service without a word
//!   (it exits 0 even for a key it ignores, so its output is what counts);
//! - a stand-in for the service manager (`STAND_IN`, a python3 script) runs
//!   the service's `ExecStart` as systemd runs a `Type=notify` service: in
//!   a cgroup of the unit's own, which `--cgroups=split` needs, with a
//!   `NOTIFY_SOCKET` of its own, from which it takes `MAINPID=` (conmon)
//!   and `READY=1`, and as a child subreaper, so that it reaps that main
//!   process and sees its exit status as systemd would;
//! - `systemctl stop` is the service's `ExecStop` (`podman rm -f`, which
//!   stops the container with SIGTERM), then `ExecStopPost`;
//! - the main process's status is judged by systemd's rules
//!   (`systemd_result`): exit 0, a status in `SuccessExitStatus=`, or death
//!   by SIGHUP, SIGINT, SIGTERM or SIGPIPE is a success (the unit ends
//!   `inactive`), anything else a failure (`failed`), which
//!   `Restart=on-failure` restarts unless a stop was asked for.
//!
//! The unit runs the test image (`FROM scratch`, vigil and busybox, built
//! locally) with busybox httpd as the application. Its hang is a SIGSTOP
//! from the host: the kernel still takes the probe's connection, nothing
//! answers.
//!
//! The generator is the installed podman's (podman 4.4 and later ship it).
//! Debian 12's podman 4.3 has none: the test then takes the one of Debian
//! 13's podman package, fetched once with `apt-get download` through an apt
//! configuration of its own and unpacked into `/var/cache/vigil-quadlet`
//! (the host's packages are not touched). The podman that runs the
//! `ExecStart`, and that `systemd-analyze verify` looks for, is the
//! installed one: without it both tests skip.

use crate::common::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Where a generator fetched from Debian is kept.
const CACHE: &str = "/var/cache/vigil-quadlet";
/// The Debian release whose podman package has the generator.
const SUITE: &str = "trixie";
const DEBIAN: &str = "http://deb.debian.org/debian";
const KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";
/// Where podman packages put the generator.
const INSTALLED: &[&str] = &[
    "/usr/libexec/podman/quadlet",
    "/usr/lib/systemd/system-generators/podman-system-generator",
];
/// The application: busybox httpd, which logs each answer (`-vv`), so that
/// the test sees vigil's probes answered.
const APP: &str =
    r#"Exec=sh -c "echo ok >/tmp/index.html; exec busybox httpd -f -vv -p 8080 -h /tmp""#;
/// Liveness for the hang: a probe every second, two failures in a row.
const LIVENESS: &[&str] = &[
    "Environment=VIGIL_LIVE_WHEN=http://127.0.0.1:8080/",
    "Environment=VIGIL_LIVE_INTERVAL=1s",
    "Environment=VIGIL_LIVE_FAILURES=2",
];
/// How long a unit may take to start (systemd's `TimeoutStartSec` is 90s).
const START_TIMEOUT: Duration = Duration::from_secs(90);

// ---------------------------------------------------------------------------
// The tests

/// The docs' unit, and its variant of the comment (`SuccessExitStatus=143`
/// without `stopped=0`), through the generator and `systemd-analyze
/// verify`; a broken copy shows that verify would say so.
#[test]
fn quadlet_unit_of_the_docs_generates_a_valid_service() {
    const T: &str = "quadlet_unit_of_the_docs_generates_a_valid_service";
    let Some(tools) = Tools::get(T, false) else {
        return;
    };
    let dir = TempDir::new("quadlet-verify");
    let unit = docs_unit();
    let service = tools.generate(dir.path(), &unit_name(), &unit);
    let exec_start = service.one("Service", "ExecStart");
    assert!(
        exec_start.contains(" --env VIGIL_EXIT_CODES=stopped=0,unhealthy=69 "),
        "{exec_start}"
    );
    assert_eq!(service.one("Service", "Restart"), "on-failure");
    assert_eq!(service.one("Service", "Type"), "notify");
    assert!(service.all("Service", "SuccessExitStatus").is_empty());
    tools.verify(dir.path(), &service);

    let variant = success_exit_status_variant(&unit);
    let service = tools.generate(dir.path(), &unit_name(), &variant);
    assert_eq!(service.one("Service", "SuccessExitStatus"), "143");
    assert!(
        service
            .one("Service", "ExecStart")
            .contains(" --env VIGIL_EXIT_CODES=unhealthy=69 "),
        "{}",
        service.text
    );
    tools.verify(dir.path(), &service);

    let mut broken = service.clone();
    broken.text = broken.text.replace("Restart=on-failure", "Restart=on-hang");
    let said = tools.verify_output(dir.path(), &broken);
    assert!(
        said.contains("on-hang"),
        "systemd-analyze verify took Restart=on-hang without a word: {said:?}"
    );
    note(
        T,
        format!(
            "generator {}; systemd-analyze verify: both services clean",
            tools.quadlet.display()
        ),
    );
}

/// The docs' unit, started as systemd starts it: `systemctl stop` ends it
/// with exit status 0, a success (`inactive`); a hang ends it with 69, a
/// failure, which `Restart=on-failure` restarts, and the restarted unit
/// serves and stops cleanly again.
#[test]
fn quadlet_stop_is_a_success_and_a_hang_is_restarted() {
    const T: &str = "quadlet_stop_is_a_success_and_a_hang_is_restarted";
    let Some(tools) = Tools::get(T, true) else {
        return;
    };
    let Some(image) = TestImage::get(Engine::Podman, T) else {
        return;
    };
    let dir = TempDir::new("quadlet-run");
    let name = unit_name();
    let report = termination_log(&dir);
    let extra: Vec<String> = LIVENESS
        .iter()
        .map(|l| l.to_string())
        .chain([report.volume()])
        .collect();
    let unit = runnable(&docs_unit(), &image.image, &extra);
    let service = tools.generate(dir.path(), &name, &unit);
    tools.verify(dir.path(), &service);
    let success = success_statuses(&service);

    // Started, then hung: vigil's liveness probes fail, it stops the app
    // and exits 69.
    let first = Started::start(T, &dir, &name, &service);
    first.wait_serving();
    let hung = Instant::now();
    first.hang();
    let ended = first.wait_main(Duration::from_secs(60));
    let took = hung.elapsed();
    let logs = report.read();
    let (state, restarts) = systemd_result(ended, &success, false, &service);
    note(
        T,
        format!(
            "hung: the main process {ended} {} after the SIGSTOP: {state}, restarted: {restarts}",
            secs(took)
        ),
    );
    assert_eq!(ended, Ended::Code(69), "{}", first.describe());
    assert_eq!((state, restarts), ("failed", true));
    assert!(
        logs.contains("; exit status 69 (--exit-code unhealthy=69);"),
        "{logs}"
    );
    assert!(
        logs.contains("stop: unhealthy: 2 probes of http://127.0.0.1:8080/ failed in a row"),
        "{logs}"
    );
    // Two probes that time out (2s each) and the interval between them.
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(40),
        "{}",
        secs(took)
    );
    first.stop_post();

    // Restarted as Restart= does: the same ExecStart again. Then stopped.
    let second = Started::start(T, &dir, &name, &service);
    second.wait_serving();
    let stopping = Instant::now();
    second.exec_stop();
    let ended = second.wait_main(TIMEOUT);
    let took = stopping.elapsed();
    let logs = report.read();
    let (state, restarts) = systemd_result(ended, &success, true, &service);
    note(
        T,
        format!(
            "restarted, then stopped: the main process {ended} {} after ExecStop: {state}",
            secs(took)
        ),
    );
    assert_eq!(ended, Ended::Code(0), "{}", second.describe());
    assert_eq!((state, restarts), ("inactive", false));
    assert!(
        logs.contains("exit status 0 (--exit-code stopped=0)"),
        "{logs}"
    );
    assert!(took < Duration::from_secs(10), "{}", secs(took));
    second.stop_post();
}

/// The variant of the docs' comment: without `stopped=0` vigil exits 143
/// on `systemctl stop`, and `SuccessExitStatus=143` makes that a success.
#[test]
fn quadlet_success_exit_status_143_makes_a_stop_a_success() {
    const T: &str = "quadlet_success_exit_status_143_makes_a_stop_a_success";
    let Some(tools) = Tools::get(T, true) else {
        return;
    };
    let Some(image) = TestImage::get(Engine::Podman, T) else {
        return;
    };
    let dir = TempDir::new("quadlet-143");
    let name = unit_name();
    let report = termination_log(&dir);
    let unit = runnable(
        &success_exit_status_variant(&docs_unit()),
        &image.image,
        &[report.volume()],
    );
    let service = tools.generate(dir.path(), &name, &unit);
    let success = success_statuses(&service);
    assert_eq!(success, [143]);
    let run = Started::start(T, &dir, &name, &service);
    run.wait_serving();
    run.exec_stop();
    let ended = run.wait_main(TIMEOUT);
    let (state, restarts) = systemd_result(ended, &success, true, &service);
    note(T, format!("stopped: the main process {ended}: {state}"));
    assert_eq!(ended, Ended::Code(143), "{}", run.describe());
    assert_eq!((state, restarts), ("inactive", false));
    let said = report.read();
    assert!(
        said.starts_with("child was killed by SIGTERM (status 143); exit status 143;"),
        "{said}"
    );
    // The same status without SuccessExitStatus= is a failure.
    assert_eq!(systemd_result(ended, &[], true, &service).0, "failed");
    run.stop_post();
}

// ---------------------------------------------------------------------------
// The unit

/// The `ini` block of docs/health.md that names this file in its marker.
fn docs_unit() -> String {
    let blocks = blocks_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/health.md"));
    let mine: Vec<&Block> = blocks
        .iter()
        .filter(|b| matches!(&b.marker, Marker::Checked(what) if what.starts_with("tests/it/e2e/quadlet.rs")))
        .collect();
    assert_eq!(mine.len(), 1, "one block of docs/health.md checked here");
    let unit = mine[0].text.clone();
    for line in [
        "Environment=VIGIL_EXIT_CODES=stopped=0,unhealthy=69",
        "Restart=on-failure",
        "# SuccessExitStatus=143",
    ] {
        assert!(
            unit.lines().any(|l| l.trim() == line),
            "{line} is not in docs/health.md's unit:\n{unit}"
        );
    }
    unit
}

/// The comment's variant: `SuccessExitStatus=143`, no `stopped=0`.
fn success_exit_status_variant(unit: &str) -> String {
    unit.replace("VIGIL_EXIT_CODES=stopped=0,", "VIGIL_EXIT_CODES=")
        .replace("# SuccessExitStatus=143", "SuccessExitStatus=143")
}

/// The unit with the test's image and application, the `--ulimit`s podman
/// needs on this kind of machine (`engine.rs`), the run's label (for the
/// clean-up) and `extra` lines, all in `[Container]`.
fn runnable(unit: &str, image: &str, extra: &[String]) -> String {
    let mut out = String::new();
    for line in unit.lines() {
        if line.trim_start().starts_with("Image=") {
            // podman keeps a local build as localhost/NAME: no pull.
            out.push_str(&format!("Image=localhost/{image}\n"));
            continue;
        }
        out.push_str(line);
        out.push('\n');
        if line.trim() == "[Container]" {
            out.push_str(APP);
            out.push('\n');
            for l in [
                "Ulimit=nofile=1024:1024".to_string(),
                "Ulimit=nproc=1024:1024".to_string(),
                format!("Label={}", run_label()),
            ]
            .iter()
            .chain(extra)
            {
                out.push_str(l);
                out.push('\n');
            }
        }
    }
    assert!(out.contains(APP), "no [Container] section in:\n{unit}");
    out
}

/// A host file mounted at /dev/termination-log, where vigil writes its
/// exit report: podman removes the container (`--rm`), and its logs with
/// it, once it has ended.
struct TerminationLog(PathBuf);

fn termination_log(dir: &TempDir) -> TerminationLog {
    let path = dir.join("termination-log");
    fs::write(&path, "").unwrap();
    TerminationLog(path)
}

impl TerminationLog {
    fn volume(&self) -> String {
        format!("Volume={}:/dev/termination-log", self.0.display())
    }

    /// The report, emptied for the next run.
    fn read(&self) -> String {
        let said = fs::read_to_string(&self.0).unwrap();
        fs::write(&self.0, "").unwrap();
        said
    }
}

/// A unit name of this run's own: the container is `systemd-NAME`.
fn unit_name() -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{LABEL}-{}-quadlet-{}",
        run_id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// A generated service: its text and its `KEY=VALUE` lines by section.
#[derive(Clone)]
struct Service {
    name: String,
    text: String,
}

impl Service {
    fn all(&self, section: &str, key: &str) -> Vec<String> {
        let mut current = "";
        let mut found = Vec::new();
        for line in self.text.lines().map(str::trim) {
            if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                current = s;
            } else if current == section
                && let Some((k, v)) = line.split_once('=')
                && k.trim() == key
            {
                found.push(v.trim().to_string());
            }
        }
        found
    }

    fn one(&self, section: &str, key: &str) -> String {
        let all = self.all(section, key);
        assert_eq!(all.len(), 1, "{key}= in [{section}]:\n{}", self.text);
        all[0].clone()
    }

    /// A command line of the service (`ExecStart=`...) as systemd runs it:
    /// its specifiers expanded (`%t` the test's runtime directory), its
    /// prefix (`-`: a failure is ignored) dropped, split into words.
    fn command(&self, key: &str, runtime: &Path) -> Vec<String> {
        let line = self.one("Service", key);
        let line = line.trim_start_matches(['-', '@', '+', '!', ':']);
        split_words(&self.expand(line, runtime))
    }

    fn expand(&self, text: &str, runtime: &Path) -> String {
        let mut out = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('t') => out.push_str(&runtime.to_string_lossy()),
                Some('N') => out.push_str(&self.name),
                Some('n') => out.push_str(&format!("{}.service", self.name)),
                Some('%') => out.push('%'),
                other => panic!("a specifier the test does not know: %{other:?} in {text}"),
            }
        }
        out
    }
}

/// Words of a command line, split as systemd splits them: at blanks,
/// with single or double quotes around a word, backslash escapes.
fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&first) = chars.peek() else {
            return words;
        };
        let mut word = String::new();
        if first == '"' || first == '\'' {
            chars.next();
            loop {
                match chars.next() {
                    Some(c) if c == first => break,
                    Some('\\') => word.extend(chars.next()),
                    Some(c) => word.push(c),
                    None => panic!("unterminated quote in {line}"),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    word.extend(chars.next());
                } else {
                    word.push(c);
                }
            }
        }
        words.push(word);
    }
}

#[test]
fn split_words_takes_quotes_and_escapes_as_systemd_does() {
    assert_eq!(
        split_words(r#"/usr/bin/podman run -d img sh -c "echo \"a b\"; exec x"  'c d' e\ f"#),
        [
            "/usr/bin/podman",
            "run",
            "-d",
            "img",
            "sh",
            "-c",
            r#"echo "a b"; exec x"#,
            "c d",
            "e f"
        ]
    );
}

/// The statuses `SuccessExitStatus=` adds to 0.
fn success_statuses(service: &Service) -> Vec<i32> {
    service
        .all("Service", "SuccessExitStatus")
        .iter()
        .flat_map(|v| v.split_whitespace().map(|s| s.parse::<i32>().unwrap()))
        .collect()
}

// ---------------------------------------------------------------------------
// systemd's judgement

/// How the main process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ended {
    Code(i32),
    Signal(i32),
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ended::Code(c) => write!(f, "exited with {c}"),
            Ended::Signal(s) => write!(f, "was killed by signal {s}"),
        }
    }
}

/// What systemd makes of a service whose main process ended so: the unit's
/// state after it, and whether `Restart=` starts it again. A clean end
/// (systemd's "success" result): exit 0, a status of `SuccessExitStatus=`,
/// or SIGHUP, SIGINT, SIGTERM, SIGPIPE; `Restart=on-failure` restarts any
/// other, unless the end came of a stop that was asked for (`stopping`).
fn systemd_result(
    ended: Ended,
    success: &[i32],
    stopping: bool,
    service: &Service,
) -> (&'static str, bool) {
    let clean = match ended {
        Ended::Code(c) => c == 0 || success.contains(&c),
        Ended::Signal(s) => [libc::SIGHUP, libc::SIGINT, libc::SIGTERM, libc::SIGPIPE].contains(&s),
    };
    let restart = service.all("Service", "Restart");
    let restarts = !stopping
        && match restart.last().map(String::as_str) {
            Some("always") => true,
            Some("on-failure") => !clean,
            None | Some("no") => false,
            Some(other) => panic!("Restart={other}: not judged here"),
        };
    (if clean { "inactive" } else { "failed" }, restarts)
}

#[test]
fn systemd_result_follows_systemds_rules() {
    let service = Service {
        name: "x".into(),
        text: "[Service]\nRestart=on-failure\n".into(),
    };
    let judge = |e, s: &[i32], stopping| systemd_result(e, s, stopping, &service);
    assert_eq!(judge(Ended::Code(0), &[], true), ("inactive", false));
    assert_eq!(judge(Ended::Code(143), &[], true), ("failed", false));
    assert_eq!(judge(Ended::Code(143), &[143], true), ("inactive", false));
    assert_eq!(judge(Ended::Code(69), &[143], false), ("failed", true));
    assert_eq!(
        judge(Ended::Signal(libc::SIGTERM), &[], false),
        ("inactive", false)
    );
    assert_eq!(
        judge(Ended::Signal(libc::SIGKILL), &[], false),
        ("failed", true)
    );
}

// ---------------------------------------------------------------------------
// The tools

struct Tools {
    quadlet: PathBuf,
    analyze: PathBuf,
}

impl Tools {
    /// The generator and systemd-analyze, and with `run` python3 and an
    /// answering podman; None after a skip.
    fn get(test: &str, run: bool) -> Option<Tools> {
        let analyze = need_program(test, "systemd-analyze", "systemd")?;
        // verify wants the program of the service's ExecStart installed.
        need_program(test, "podman", "podman")?;
        if run {
            need_program(test, "python3", "python3")?;
            if let Err(NotReady::Skip(why) | NotReady::Broken(why)) = Engine::Podman.version() {
                skip_unless(
                    test,
                    Some("VIGIL_E2E_REQUIRE_PODMAN"),
                    &format!("{why} (Debian's podman)"),
                );
                return None;
            }
        }
        match quadlet() {
            Ok(quadlet) => Some(Tools { quadlet, analyze }),
            Err(why) => {
                skip(test, &why);
                None
            }
        }
    }

    /// The service the generator makes of `unit` (NAME.container), in dry
    /// run; it must say nothing of an error.
    fn generate(&self, dir: &Path, name: &str, unit: &str) -> Service {
        let units = dir.join(format!("units-{name}"));
        fs::create_dir_all(&units).unwrap();
        fs::write(units.join(format!("{name}.container")), unit).unwrap();
        let out = run_cmd(
            Command::new(&self.quadlet)
                .args(["-dryrun", "-no-kmsg-log"])
                .env("QUADLET_UNIT_DIRS", &units),
            TIMEOUT,
        );
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(
            out.status.success(),
            "quadlet: {}\n{stdout}{stderr}",
            out.status
        );
        assert!(
            !stderr.to_lowercase().contains("error"),
            "quadlet:\n{stderr}"
        );
        let head = format!("---{name}.service---\n");
        let Some((_, service)) = stdout.split_once(&head) else {
            panic!("quadlet made no {name}.service:\n{stdout}{stderr}");
        };
        Service {
            name: name.to_string(),
            text: service.to_string(),
        }
    }

    /// What `systemd-analyze verify` says of the service: nothing, or why.
    fn verify_output(&self, dir: &Path, service: &Service) -> String {
        let path = dir.join(format!("{}.service", service.name));
        fs::write(&path, &service.text).unwrap();
        let out = run_cmd(
            Command::new(&self.analyze).arg("verify").arg(&path),
            TIMEOUT,
        );
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        if out.status.success() {
            said
        } else {
            format!("exit {}: {said}", out.status)
        }
    }

    fn verify(&self, dir: &Path, service: &Service) {
        let said = self.verify_output(dir, service);
        assert!(
            said.trim().is_empty(),
            "systemd-analyze verify:\n{said}\nof:\n{}",
            service.text
        );
    }
}

/// The generator: the installed podman's, or Debian's, fetched once.
fn quadlet() -> Result<PathBuf, String> {
    if let Some(p) = INSTALLED.iter().map(PathBuf::from).find(|p| p.is_file()) {
        return Ok(p);
    }
    static FETCHED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FETCHED.get_or_init(fetch_quadlet).clone()
}

/// Debian's podman package, downloaded with an apt configuration of the
/// test's own, its generator unpacked into CACHE.
fn fetch_quadlet() -> Result<PathBuf, String> {
    let cache = Path::new(CACHE);
    let quadlet = cache.join(format!("quadlet-{SUITE}"));
    if quadlet.is_file() {
        return Ok(quadlet);
    }
    for tool in ["apt-get", "dpkg-deb", "tar"] {
        if !std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .any(|d| d.join(tool).is_file())
        {
            return Err(format!(
                "no Quadlet generator here (podman 4.4 or later has one), and no {tool} to fetch Debian's"
            ));
        }
    }
    let apt = cache.join("apt");
    for sub in ["state/lists/partial", "cache/archives/partial", "debs"] {
        fs::create_dir_all(apt.join(sub)).map_err(|e| format!("{}: {e}", apt.display()))?;
    }
    let status = apt.join("status");
    fs::write(&status, "").map_err(|e| e.to_string())?;
    let sources = apt.join("sources.list");
    fs::write(
        &sources,
        format!("deb [signed-by={KEYRING}] {DEBIAN} {SUITE} main\n"),
    )
    .map_err(|e| e.to_string())?;
    let options = [
        format!("Dir::Etc::SourceList={}", sources.display()),
        "Dir::Etc::SourceParts=/nonexistent".into(),
        format!("Dir::State={}", apt.join("state").display()),
        format!("Dir::State::status={}", status.display()),
        format!("Dir::Cache={}", apt.join("cache").display()),
        "Debug::NoLocking=1".into(),
        "APT::Sandbox::User=root".into(),
        "Acquire::Languages=none".into(),
        "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false".into(),
    ];
    let apt_get = |args: &[&str], cwd: &Path| -> Result<(), String> {
        let mut cmd = Command::new("apt-get");
        for o in &options {
            cmd.arg("-o").arg(o);
        }
        let out = run_cmd(cmd.args(args).current_dir(cwd), Duration::from_secs(600));
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "no Quadlet generator here (podman 4.4 or later has one), and apt-get {} for Debian {SUITE}'s failed: {}{}",
                args.join(" "),
                text(&out.stdout),
                text(&out.stderr)
            ))
        }
    };
    let debs = apt.join("debs");
    apt_get(&["update"], cache)?;
    apt_get(&["download", "podman"], &debs)?;
    let deb = fs::read_dir(&debs)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".deb"))
        .ok_or("apt-get download podman left no .deb")?;
    let unpack = cache.join(format!("unpack-{}", std::process::id()));
    let _ = fs::remove_dir_all(&unpack);
    fs::create_dir_all(&unpack).map_err(|e| e.to_string())?;
    let out = run_cmd(
        Command::new("sh")
            .arg("-c")
            .arg(r#"dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2" ./usr/libexec/podman/quadlet"#)
            .arg("sh")
            .arg(&deb)
            .arg(&unpack),
        Duration::from_secs(120),
    );
    if !out.status.success() {
        return Err(format!(
            "unpacking {}: {}",
            deb.display(),
            text(&out.stderr)
        ));
    }
    // A rename: a run that stops half-way leaves no half of a binary.
    fs::rename(unpack.join("usr/libexec/podman/quadlet"), &quadlet).map_err(|e| e.to_string())?;
    let _ = fs::remove_dir_all(&unpack);
    // The lists and the package are of no more use: the next fetch, if
    // any, updates the lists again.
    let _ = fs::remove_dir_all(&apt);
    note(
        "setup",
        format!(
            "Quadlet generator of {} in {}",
            deb.display(),
            quadlet.display()
        ),
    );
    Ok(quadlet)
}

// ---------------------------------------------------------------------------
// The service manager's stand-in

/// Runs ARGV (the service's ExecStart) as systemd runs a `Type=notify`
/// service's, and says what happens, one line each: `notify LINE` for what
/// comes to its NOTIFY_SOCKET, `start STATUS` when ExecStart's own process
/// has ended, `reaped PID code=N|signal=N [main]` for each process it reaps
/// (a child subreaper: conmon, daemonised, comes to it as to systemd),
/// `done` when none is left. Arguments: the cgroup.procs files to join
/// (JSON), the socket's path, ARGV (JSON).
const STAND_IN: &str = r#"
import ctypes, json, os, socket, subprocess, sys, time
procs, path, argv = json.loads(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
def say(*words):
    print(*words, flush=True)
libc = ctypes.CDLL(None, use_errno=True)
PR_SET_CHILD_SUBREAPER = 36
if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    sys.exit("prctl: " + os.strerror(ctypes.get_errno()))
for p in procs:
    with open(p, "w") as f:
        f.write(str(os.getpid()))
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(path)
sock.settimeout(0.05)
os.environ["NOTIFY_SOCKET"] = path
# ExecStart's output (podman prints the container's id) goes where
# systemd's would, apart from the manager's: to the stand-in's stderr, not
# among the lines the test reads.
start = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=sys.stderr)
main, ready = None, False
deadline = time.monotonic() + float(os.environ["STAND_IN_TIMEOUT"])
while not (ready and main) and time.monotonic() < deadline:
    try:
        for line in sock.recv(4096).decode().splitlines():
            say("notify", line)
            ready = ready or line == "READY=1"
            if line.startswith("MAINPID="):
                main = int(line[len("MAINPID="):])
    except socket.timeout:
        pass
    if start.poll() not in (None, 0):
        break
say("start", start.wait())
while True:
    try:
        pid, status = os.wait()
    except ChildProcessError:
        break
    if os.WIFEXITED(status):
        how = "code=%d" % os.WEXITSTATUS(status)
    else:
        how = "signal=%d" % os.WTERMSIG(status)
    say("reaped", pid, how, "main" if pid == main else "")
say("done")
"#;

/// A started service: the stand-in, what it says, the unit's cgroups.
struct Started {
    test: &'static str,
    stand_in: Child,
    said: PathBuf,
    runtime: PathBuf,
    service: Service,
    container: String,
    cgroups: Vec<PathBuf>,
}

impl Drop for Started {
    fn drop(&mut self) {
        // Child::kill sends nothing once the child was waited for: its pid
        // may be another process's by then.
        let _ = self.stand_in.kill();
        let _ = self.stand_in.wait();
        Engine::Podman.quiet(&["rm", "-f", "-v", &self.container]);
        remove_cgroups(&self.service.name);
    }
}

impl Started {
    /// ExecStart, as systemd runs it; returns once the service is started
    /// (READY=1, and the main process named).
    fn start(test: &'static str, dir: &TempDir, name: &str, service: &Service) -> Started {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let runtime = dir.join(format!("run-{n}"));
        fs::create_dir_all(&runtime).unwrap();
        let cgroups = unit_cgroups(name);
        let procs: Vec<String> = cgroups
            .iter()
            .map(|d| d.join("cgroup.procs").to_string_lossy().into_owned())
            .collect();
        let argv = service.command("ExecStart", &runtime);
        let said = dir.join(format!("stand-in-{n}.txt"));
        let mut cmd = Command::new("python3");
        cmd.arg("-c")
            .arg(STAND_IN)
            .arg(json_list(&procs))
            .arg(runtime.join("notify"))
            .arg(json_list(&argv))
            .env("STAND_IN_TIMEOUT", START_TIMEOUT.as_secs().to_string())
            .stdin(Stdio::null())
            .stdout(fs::File::create(&said).unwrap())
            .stderr(fs::File::create(dir.join(format!("stand-in-{n}.err"))).unwrap());
        for env in service.all("Service", "Environment") {
            let env = service.expand(&env, &runtime);
            let (k, v) = env.split_once('=').unwrap();
            cmd.env(k, v);
        }
        let stand_in = cmd.spawn().expect("python3");
        let started = Started {
            test,
            stand_in,
            said,
            runtime: runtime.clone(),
            service: service.clone(),
            container: format!("systemd-{name}"),
            cgroups,
        };
        let ok = wait_until_every(START_TIMEOUT, Duration::from_millis(50), || {
            started.said().lines().any(|l| l.starts_with("start "))
        });
        assert!(ok, "{}: not started within {}", test, secs(START_TIMEOUT));
        assert!(
            started.said().contains("start 0\n") && started.main_pid().is_some(),
            "{}: ExecStart: {argv:?}\n{}",
            test,
            started.describe()
        );
        assert!(
            started.said().contains("notify READY=1\n"),
            "{}",
            started.describe()
        );
        started
    }

    fn said(&self) -> String {
        fs::read_to_string(&self.said).unwrap_or_default()
    }

    fn main_pid(&self) -> Option<i32> {
        self.said()
            .lines()
            .find_map(|l| l.strip_prefix("notify MAINPID="))
            .map(|p| p.parse().unwrap())
    }

    fn describe(&self) -> String {
        let err = fs::read_to_string(self.said.with_extension("err")).unwrap_or_default();
        format!(
            "the stand-in said:\n{}{err}\nthe container's logs:\n{}",
            self.said(),
            self.logs()
        )
    }

    fn logs(&self) -> String {
        let out = Engine::Podman.cmd(&["logs", &self.container]);
        format!("{}{}", text(&out.stdout), text(&out.stderr))
    }

    /// Waits until httpd has answered vigil's probe, or, without one,
    /// is serving (it logs nothing until asked).
    fn wait_serving(&self) {
        let probed = self.service.text.contains("VIGIL_LIVE_WHEN");
        let ok = wait_until_every(TIMEOUT, Duration::from_millis(100), || {
            if !probed {
                let _ = Engine::Podman.cmd(&[
                    "exec",
                    &self.container,
                    "busybox",
                    "wget",
                    "-q",
                    "-O",
                    "/dev/null",
                    "http://127.0.0.1:8080/",
                ]);
            }
            self.logs().contains("response:200")
        });
        assert!(
            ok,
            "{}: httpd never answered\n{}",
            self.test,
            self.describe()
        );
    }

    /// SIGSTOP to httpd, vigil's child, from the host.
    fn hang(&self) {
        let vigil: i32 = Engine::Podman
            .ok(&["inspect", "-f", "{{.State.Pid}}", &self.container])
            .trim()
            .parse()
            .unwrap();
        let httpd = children(vigil);
        assert_eq!(httpd.len(), 1, "vigil's children: {httpd:?}");
        kill(httpd[0], libc::SIGSTOP).unwrap();
    }

    /// `systemctl stop`: ExecStop.
    fn exec_stop(&self) {
        let argv = self.service.command("ExecStop", &self.runtime);
        let out = run_cmd(Command::new(&argv[0]).args(&argv[1..]), ENGINE_TIMEOUT);
        assert!(
            out.status.success(),
            "ExecStop {argv:?}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }

    /// How the main process ended, once the stand-in reaped it.
    fn wait_main(&self, timeout: Duration) -> Ended {
        let mut ended = None;
        let found = wait_until_every(timeout, Duration::from_millis(50), || {
            ended = self.said().lines().find_map(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                match words.as_slice() {
                    ["reaped", _, how, "main"] => Some(match how.split_once('=') {
                        Some(("code", n)) => Ended::Code(n.parse().unwrap()),
                        Some(("signal", n)) => Ended::Signal(n.parse().unwrap()),
                        _ => panic!("{l}"),
                    }),
                    _ => None,
                }
            });
            ended.is_some()
        });
        assert!(
            found,
            "{}: the main process still runs after {}\n{}",
            self.test,
            secs(timeout),
            self.describe()
        );
        ended.unwrap()
    }

    /// ExecStopPost (its failure ignored, as its `-` says), then the
    /// stand-in's end, once it has reaped everything.
    fn stop_post(mut self) {
        let argv = self.service.command("ExecStopPost", &self.runtime);
        let _ = run_cmd(Command::new(&argv[0]).args(&argv[1..]), ENGINE_TIMEOUT);
        let done = wait_until_every(TIMEOUT, Duration::from_millis(50), || {
            self.said().ends_with("done\n")
        });
        assert!(done, "{}: processes left\n{}", self.test, self.describe());
        let _ = self.stand_in.wait();
        let left = wait_until(TIMEOUT, || {
            self.cgroups.iter().all(|d| {
                fs::read_to_string(d.join("cgroup.procs")).is_ok_and(|p| p.trim().is_empty())
            })
        });
        assert!(left, "{}: processes left in the unit's cgroup", self.test);
    }
}

fn json_list(items: &[String]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|s| serde_json::Value::String(s.clone()).to_string())
        .collect();
    format!("[{}]", quoted.join(","))
}

// ---------------------------------------------------------------------------
// The unit's cgroups

/// The mount points of the cgroup hierarchies: the first cgroup2 one, the
/// name=systemd one (a hybrid machine's), and all of them.
fn cgroup_mounts() -> (Option<PathBuf>, Option<PathBuf>, Vec<PathBuf>) {
    let info = fs::read_to_string("/proc/self/mountinfo").unwrap();
    let (mut unified, mut named, mut all) = (None, None, Vec::new());
    for line in info.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let Some(dash) = fields.iter().position(|f| *f == "-") else {
            continue;
        };
        let (point, kind, options) = (fields[4], fields[dash + 1], fields[dash + 3]);
        match kind {
            "cgroup2" if unified.is_none() => unified = Some(PathBuf::from(point)),
            "cgroup" if options.split(',').any(|o| o == "name=systemd") && named.is_none() => {
                named = Some(PathBuf::from(point))
            }
            _ => {}
        }
        if kind == "cgroup" || kind == "cgroup2" {
            all.push(PathBuf::from(point));
        }
    }
    (unified, named, all)
}

/// The unit's own cgroup, made as systemd makes it for a service: in the
/// unified hierarchy (where podman's `--cgroups=split` looks for the
/// caller's) and, on a hybrid machine, in the name=systemd one.
fn unit_cgroups(name: &str) -> Vec<PathBuf> {
    let (unified, named, _) = cgroup_mounts();
    let Some(unified) = unified else {
        panic!(
            "no cgroup2 hierarchy mounted: podman's --cgroups=split has no cgroup of the unit's to use"
        );
    };
    let mut dirs = vec![unified.join(format!("{name}.service"))];
    dirs.extend(named.map(|n| n.join(format!("{name}.service"))));
    for d in &dirs {
        fs::create_dir_all(d).unwrap_or_else(|e| panic!("mkdir {}: {e}", d.display()));
    }
    dirs
}

/// The unit's cgroups and what podman made below them, in every
/// hierarchy, deepest first.
fn remove_cgroups(name: &str) {
    let (_, _, all) = cgroup_mounts();
    for top in all {
        let unit = top.join(format!("{name}.service"));
        let mut dirs = Vec::new();
        collect_dirs(&unit, &mut dirs);
        dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        for d in dirs {
            let _ = wait_until(Duration::from_secs(5), || {
                fs::remove_dir(&d).is_ok() || !d.exists()
            });
        }
    }
}

fn collect_dirs(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    into.push(dir.to_path_buf());
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            collect_dirs(&e.path(), into);
        }
    }
}
