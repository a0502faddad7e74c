//! One harness for every container engine the end-to-end tests drive
//! (tests/it/e2e/docker.rs, tests/it/e2e/images.rs): Docker and podman.
//!
//! - `Engine`: the engine's own command line, each call bounded by a
//!   deadline, run from the repository root (the build context of the
//!   project's Dockerfiles);
//! - `TestImage`: one image per engine and test process, `FROM scratch`,
//!   made of local files only (nothing is pulled): vigil's static release
//!   build for this machine and Debian's static busybox, with the applet
//!   links the tests use;
//! - `Ctr`, `ImageGuard`: a container or an image removed when the guard is
//!   dropped, even when its test fails;
//! - skips: an engine that does not answer, or a missing static busybox, is
//!   a `skip` (a `SKIPPED:` line, or a failure with `VIGIL_E2E_REQUIRE=1`).
//!
//! Everything a run makes carries the label `vigil-e2e=RUN` (RUN: the test
//! process id), and an `atexit` handler removes what is left of it when the
//! test process ends. A run killed from outside can leave things behind;
//! this sweeps everything any run made (likewise with `podman`):
//!
//!     docker ps -aq --filter label=vigil-e2e | xargs -r docker rm -f -v
//!     docker image ls -q --filter label=vigil-e2e | xargs -r docker image rm -f
//!
//! Knobs: `VIGIL_E2E_DOCKER=0` skips the Docker tests; `VIGIL_E2E_BINARY=PATH`
//! puts that static vigil in the test image instead of building one;
//! `VIGIL_E2E_BUSYBOX=PATH` uses that static busybox instead of
//! `/usr/bin/busybox` or `/bin/busybox`.

use super::{
    CmdFailed, exit_report, flag, host_musl_target, note, run_cmd, run_with_deadline, secs, skip,
    text, wait_until_every,
};
use std::fs;
use std::io::Read;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The label key on everything the tests make.
pub const LABEL: &str = "vigil-e2e";
/// How long any single engine command may take before the test gives up.
pub const ENGINE_TIMEOUT: Duration = Duration::from_secs(180);
/// The busybox applets the test image links to `/bin/busybox`.
const APPLETS: &[&str] = &[
    "sh", "sleep", "ps", "kill", "cat", "echo", "tail", "head", "seq", "true", "false", "id",
    "touch", "ls", "mkdir", "date", "env", "test", "[", "wc", "grep", "tr",
];

/// This test process's run id: the value of its `vigil-e2e` label.
pub fn run_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| std::process::id().to_string())
}

/// `vigil-e2e=RUN`, for `--label` and `LABEL` lines.
pub fn run_label() -> String {
    format!("{LABEL}={}", run_id())
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

// ---------------------------------------------------------------------------
// The engines

/// A container engine, driven through its command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Docker,
    Podman,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Docker => "docker",
            Engine::Podman => "podman",
        }
    }

    fn command<S: AsRef<str>>(self, args: &[S]) -> Command {
        let mut cmd = Command::new(self.name());
        cmd.args(args.iter().map(AsRef::as_ref)).current_dir(repo());
        cmd
    }

    /// Runs `ENGINE ARGS...` (at most ENGINE_TIMEOUT); its output, whatever
    /// its status.
    pub fn cmd<S: AsRef<str>>(self, args: &[S]) -> Output {
        self.cmd_within(args, ENGINE_TIMEOUT)
    }

    /// `cmd` with a deadline of its own (an image build).
    pub fn cmd_within<S: AsRef<str>>(self, args: &[S], timeout: Duration) -> Output {
        run_cmd(&mut self.command(args), timeout)
    }

    /// Runs `ENGINE ARGS...`, panics with its output unless it succeeds;
    /// returns its stdout.
    pub fn ok<S: AsRef<str>>(self, args: &[S]) -> String {
        let out = self.cmd(args);
        if !out.status.success() {
            let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
            panic!(
                "{} {} failed ({}):\n{}{}",
                self.name(),
                args.join(" "),
                out.status,
                text(&out.stdout),
                text(&out.stderr)
            );
        }
        text(&out.stdout)
    }

    /// Runs `ENGINE ARGS...` for a drop guard or a clean-up: no output, and
    /// a failure is ignored.
    pub fn quiet(self, args: &[&str]) {
        let _ = self
            .command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }

    /// The engine's version when it answers, else why the tests skip.
    pub fn version(self) -> Result<String, NotReady> {
        let format = match self {
            Engine::Docker => "{{.ServerVersion}}",
            Engine::Podman => "{{.Version.Version}}",
        };
        let name = self.name();
        let out = run_with_deadline(
            &mut self.command(&["info", "--format", format]),
            Duration::from_secs(30),
        )
        .map_err(|failed| {
            NotReady::Skip(match failed {
                CmdFailed::Spawn(e) => format!("no {name} client: cannot run `{name} info`: {e}"),
                CmdFailed::Wait(e) => format!("`{name} info` failed: {e}"),
                CmdFailed::TimedOut { .. } => format!("`{name} info` did not answer within 30s"),
            })
        })?;
        let version = text(&out.stdout).trim().to_string();
        if !out.status.success() || version.is_empty() {
            let err = text(&out.stderr);
            let err = err
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no output");
            return Err(NotReady::Skip(format!(
                "no {name} engine answers (`{name} info`: {err})"
            )));
        }
        Ok(version)
    }

    /// Options every `run` gets. podman on this kind of machine: the OCI
    /// runtime cannot raise resource limits (no CAP_SYS_RESOURCE), and
    /// podman asks for RLIMIT_NOFILE and RLIMIT_NPROC of 1048576 by
    /// default; explicit lower `--ulimit`s avoid it.
    fn run_defaults(self) -> &'static [&'static str] {
        match self {
            Engine::Docker => &[],
            Engine::Podman => &[
                "--ulimit",
                "nofile=1024:1024",
                "--ulimit",
                "nproc=1024:1024",
            ],
        }
    }

    /// Removes what this run left in the engine when the test process ends.
    pub fn clean_up_at_exit(self) {
        static REGISTERED: Once = Once::new();
        REGISTERED.call_once(|| {
            unsafe extern "C" {
                fn atexit(cb: extern "C" fn()) -> std::os::raw::c_int;
            }
            // SAFETY: registering a plain extern "C" fn with libc's atexit.
            unsafe { atexit(sweep_at_exit) };
        });
        let mut used = USED.lock().unwrap_or_else(|e| e.into_inner());
        if !used.contains(&self) {
            used.push(self);
        }
    }

    /// Removes this run's containers and images (those labelled
    /// `vigil-e2e=RUN`), intermediate build stages included.
    fn sweep(self) {
        let filter = format!("label={}", run_label());
        let ids = |args: &[&str]| -> Vec<String> {
            self.command(args)
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .output()
                .map(|o| text(&o.stdout))
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_string)
                .collect()
        };
        let containers = ids(&["ps", "-aq", "--filter", &filter]);
        if !containers.is_empty() {
            let mut args = vec!["rm", "-f", "-v"];
            args.extend(containers.iter().map(String::as_str));
            self.quiet(&args);
        }
        let mut images = ids(&["image", "ls", "-q", "--filter", &filter]);
        images.sort();
        images.dedup();
        if !images.is_empty() {
            let mut args = vec!["image", "rm", "-f"];
            args.extend(images.iter().map(String::as_str));
            self.quiet(&args);
        }
        // Untagged stages the classic builder leaves behind inherit the
        // label of a labelled base image.
        self.quiet(&["image", "prune", "-f", "--filter", &filter]);
    }
}

static USED: Mutex<Vec<Engine>> = Mutex::new(Vec::new());

extern "C" fn sweep_at_exit() {
    let used = USED.lock().map(|u| u.clone()).unwrap_or_default();
    for engine in used {
        engine.sweep();
    }
}

// ---------------------------------------------------------------------------
// Skipping

/// Why an end-to-end test cannot run.
#[derive(Debug)]
pub enum NotReady {
    /// The environment cannot run these tests: skip (or fail when required).
    Skip(String),
    /// Something the project is responsible for is broken: fail.
    Broken(String),
}

// ---------------------------------------------------------------------------
// What goes into an image

/// True when the ELF file has no PT_INTERP program header (statically linked).
pub fn is_static_elf(path: &Path) -> Result<bool, String> {
    let f = fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut buf = Vec::new();
    f.take(1 << 20)
        .read_to_end(&mut buf)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if buf.len() < 64 || &buf[..4] != b"\x7fELF" || buf[4] != 2 || buf[5] != 1 {
        return Err(format!(
            "{} is not a 64-bit little-endian ELF file",
            path.display()
        ));
    }
    let u16_at = |o: usize| u16::from_le_bytes([buf[o], buf[o + 1]]) as usize;
    let u32_at = |o: usize| u32::from_le_bytes(buf[o..o + 4].try_into().unwrap());
    let phoff = u64::from_le_bytes(buf[32..40].try_into().unwrap()) as usize;
    let (phentsize, phnum) = (u16_at(54), u16_at(56));
    for i in 0..phnum {
        let o = phoff + i * phentsize;
        if o + 4 > buf.len() {
            return Err(format!("{}: program headers out of range", path.display()));
        }
        if u32_at(o) == 3 {
            return Ok(false); // PT_INTERP
        }
    }
    Ok(true)
}

/// Debian's static busybox (or `VIGIL_E2E_BUSYBOX`): a `FROM scratch`
/// image's shell and tools.
pub fn find_busybox() -> Result<PathBuf, NotReady> {
    let candidates: Vec<PathBuf> = match std::env::var_os("VIGIL_E2E_BUSYBOX") {
        Some(p) => vec![p.into()],
        None => vec!["/usr/bin/busybox".into(), "/bin/busybox".into()],
    };
    for p in &candidates {
        if p.exists() {
            return match is_static_elf(p) {
                Ok(true) => Ok(p.clone()),
                Ok(false) => Err(NotReady::Skip(format!(
                    "{} is dynamically linked; install Debian's busybox-static (or set VIGIL_E2E_BUSYBOX)",
                    p.display()
                ))),
                Err(e) => Err(NotReady::Skip(e)),
            };
        }
    }
    Err(NotReady::Skip(
        "no static busybox at /usr/bin/busybox or /bin/busybox; install Debian's busybox-static (or set VIGIL_E2E_BUSYBOX)"
            .into(),
    ))
}

/// `DIR/bin/busybox` and, beside it, a link to it for each of `applets`.
pub fn busybox_bin(dir: &Path, busybox: &Path, applets: &[&str]) -> Result<(), String> {
    let e = |what: &str, err: std::io::Error| format!("{} ({what}): {err}", dir.display());
    let bin = dir.join("bin");
    fs::create_dir_all(&bin).map_err(|x| e("bin", x))?;
    fs::copy(busybox, bin.join("busybox")).map_err(|x| e("busybox", x))?;
    for applet in applets {
        symlink("busybox", bin.join(applet)).map_err(|x| e(applet, x))?;
    }
    Ok(())
}

/// vigil's static release build for this machine (`VIGIL_E2E_BINARY`, or
/// built here once with `cargo build --release --target ARCH-unknown-linux-musl`).
pub fn release_vigil() -> Result<PathBuf, NotReady> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let path = match std::env::var_os("VIGIL_E2E_BINARY") {
        Some(p) => PathBuf::from(p),
        None => BUILT
            .get_or_init(|| {
                let target = host_musl_target();
                let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
                let started = Instant::now();
                let out = run_cmd(
                    Command::new(cargo).current_dir(repo()).args([
                        "build",
                        "--release",
                        "--target",
                        &target,
                    ]),
                    Duration::from_secs(900),
                );
                if !out.status.success() {
                    return Err(format!(
                        "cargo build --release --target {target} failed:\n{}",
                        text(&out.stderr)
                    ));
                }
                note(
                    "setup",
                    format!("release musl build ready in {}", secs(started.elapsed())),
                );
                let dir = std::env::var_os("CARGO_TARGET_DIR")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| repo().join("target"));
                Ok(dir.join(target).join("release/vigil"))
            })
            .clone()
            .map_err(NotReady::Broken)?,
    };
    match is_static_elf(&path) {
        Ok(true) => Ok(path),
        Ok(false) => Err(NotReady::Broken(format!(
            "{} is not statically linked",
            path.display()
        ))),
        Err(e) => Err(NotReady::Broken(e)),
    }
}

// ---------------------------------------------------------------------------
// The release in dist/ (`bash scripts/release.sh`)

/// How long building one of the project's images may take.
pub const BUILD_TIMEOUT: Duration = Duration::from_secs(600);

/// Docker's name for this machine's architecture, and the dist/ binary for it.
pub fn host_arch() -> (&'static str, PathBuf) {
    let (docker, dist) = match std::env::consts::ARCH {
        "x86_64" => ("amd64", "x86_64"),
        "aarch64" => ("arm64", "aarch64"),
        other => panic!("no release binary for host architecture {other}"),
    };
    (docker, repo().join("dist").join(format!("vigil-{dist}")))
}

/// What the Docker tests of the dist/ images need, or why they cannot run.
pub fn docker_ready() -> Result<PathBuf, String> {
    Engine::Docker.version().map_err(|why| match why {
        NotReady::Skip(why) | NotReady::Broken(why) => why,
    })?;
    for arch in ["x86_64", "aarch64", "i686", "armv7", "riscv64", "s390x"] {
        if !repo().join("dist").join(format!("vigil-{arch}")).exists() {
            return Err(format!(
                "dist/vigil-{arch} missing: run `bash scripts/release.sh` (the classic builder builds every stage of Dockerfile)"
            ));
        }
    }
    static_busybox()
}

/// Debian's static busybox, or why there is none.
pub fn static_busybox() -> Result<PathBuf, String> {
    find_busybox().map_err(|why| match why {
        NotReady::Skip(why) | NotReady::Broken(why) => why,
    })
}

/// `docker build` of the repository's `Dockerfile`: the image of dist/'s
/// binary for this machine, labelled for clean-up. Without the builder's
/// cache: tests in other files build the same image at the same time, and
/// one's clean-up (its image removed with its untagged parents) could take
/// a cached layer from under another's build ("unknown parent image ID").
pub fn build_dist_image(image: &str) -> Output {
    let (docker_arch, _) = host_arch();
    Engine::Docker.cmd_within(
        &[
            "build",
            "-q",
            "--no-cache",
            "--label",
            &run_label(),
            "--build-arg",
            &format!("TARGETARCH={docker_arch}"),
            "-t",
            image,
            ".",
        ],
        BUILD_TIMEOUT,
    )
}

// ---------------------------------------------------------------------------
// The test image

/// The image the tests run in one engine: `FROM scratch`, `/vigil` (the
/// static release build), busybox in `/bin`, `ENTRYPOINT ["/vigil", "--"]`.
pub struct TestImage {
    pub engine: Engine,
    /// Its name: `vigil-e2e:run-RUN`.
    pub image: String,
    /// The vigil in it, and the busybox.
    pub vigil: PathBuf,
    pub busybox: PathBuf,
}

impl TestImage {
    /// The engine's test image, built on first use; None after printing why
    /// the test is skipped (a panic instead when `VIGIL_E2E_REQUIRE` is on,
    /// or when the project's part of the set-up is broken).
    pub fn get(engine: Engine, test: &str) -> Option<&'static TestImage> {
        static DOCKER: OnceLock<Result<TestImage, NotReady>> = OnceLock::new();
        static PODMAN: OnceLock<Result<TestImage, NotReady>> = OnceLock::new();
        let cell = match engine {
            Engine::Docker => &DOCKER,
            Engine::Podman => &PODMAN,
        };
        match cell.get_or_init(|| TestImage::build(engine)) {
            Ok(image) => Some(image),
            Err(NotReady::Skip(why)) => {
                skip(test, why);
                None
            }
            Err(NotReady::Broken(why)) => panic!("{why}"),
        }
    }

    fn build(engine: Engine) -> Result<TestImage, NotReady> {
        if engine == Engine::Docker && flag("VIGIL_E2E_DOCKER") == Some(false) {
            return Err(NotReady::Skip("VIGIL_E2E_DOCKER is set to off".into()));
        }
        engine.version()?;
        let busybox = find_busybox()?;
        let vigil = release_vigil()?;
        let image = format!("{LABEL}:run-{}", run_id());
        engine.clean_up_at_exit();
        let dir = std::env::temp_dir().join(format!("{LABEL}-{}-{}", engine.name(), run_id()));
        let built = build_test_image(engine, &dir, &vigil, &busybox, &image);
        let _ = fs::remove_dir_all(&dir);
        built.map_err(NotReady::Broken)?;
        Ok(TestImage {
            engine,
            image,
            vigil,
            busybox,
        })
    }

    /// `ENGINE run -d` of the test image, `opts` before the image, `cmd`
    /// after it.
    pub fn start(&self, test: &'static str, opts: &[&str], cmd: &[&str]) -> Ctr {
        Ctr::start(self.engine, test, opts, &self.image, cmd)
    }

    /// `ENGINE run --rm` of the test image in the foreground: (exit status,
    /// stdout, stderr, duration).
    pub fn run_fg(
        &self,
        test: &'static str,
        opts: &[&str],
        cmd: &[&str],
    ) -> (i32, String, String, Duration) {
        Ctr::run_fg(self.engine, test, opts, &self.image, cmd)
    }
}

fn build_test_image(
    engine: Engine,
    dir: &Path,
    vigil: &Path,
    busybox: &Path,
    image: &str,
) -> Result<(), String> {
    let e =
        |what: &str, err: std::io::Error| format!("preparing the build context ({what}): {err}");
    let _ = fs::remove_dir_all(dir);
    let root = dir.join("rootfs");
    busybox_bin(&root, busybox, APPLETS)
        .map_err(|why| format!("preparing the build context: {why}"))?;
    fs::create_dir_all(root.join("tmp")).map_err(|x| e("tmp", x))?;
    fs::set_permissions(root.join("tmp"), fs::Permissions::from_mode(0o1777))
        .map_err(|x| e("tmp", x))?;
    fs::copy(vigil, root.join("vigil")).map_err(|x| e("vigil", x))?;
    let dockerfile = format!(
        "FROM scratch\n\
         COPY rootfs/ /\n\
         LABEL {}\n\
         ENV PATH=/bin\n\
         ENTRYPOINT [\"/vigil\", \"--\"]\n\
         CMD [\"sh\"]\n",
        run_label()
    );
    fs::write(dir.join("Dockerfile"), dockerfile).map_err(|x| e("Dockerfile", x))?;
    let started = Instant::now();
    let out = engine.cmd(&["build", "-q", "-t", image, &dir.to_string_lossy()]);
    if !out.status.success() {
        return Err(format!(
            "{} build of the test image failed:\n{}",
            engine.name(),
            text(&out.stderr)
        ));
    }
    note(
        "setup",
        format!(
            "built image {image} FROM scratch in {}",
            secs(started.elapsed())
        ),
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// Containers and images a test makes

static SERIAL: AtomicUsize = AtomicUsize::new(0);

/// A container; removed (with its anonymous volumes) when dropped.
pub struct Ctr {
    pub engine: Engine,
    pub name: String,
    pub test: &'static str,
}

impl Drop for Ctr {
    fn drop(&mut self) {
        self.engine.quiet(&["rm", "-f", "-v", &self.name]);
    }
}

impl Ctr {
    /// The guard of a container yet to be created for `test`, under a
    /// name of its own; made before `run`, so that a run that fails
    /// half-way is cleaned up too.
    pub fn new(engine: Engine, test: &'static str) -> Ctr {
        engine.clean_up_at_exit();
        let n = SERIAL.fetch_add(1, Ordering::SeqCst);
        Ctr {
            engine,
            name: format!("{LABEL}-{}-{n}-{}", run_id(), test.replace('_', "-")),
            test,
        }
    }

    /// The arguments of the `run MODE` (`-d`, `--rm`) that creates this
    /// container, labelled for clean-up: `opts` before `image`, `cmd` after
    /// it.
    pub fn run_args(&self, mode: &str, opts: &[&str], image: &str, cmd: &[&str]) -> Vec<String> {
        let label = run_label();
        let head = ["run", mode, "--name", &self.name, "--label", &label];
        let args = head
            .iter()
            .chain(self.engine.run_defaults())
            .chain(opts)
            .chain([&image])
            .chain(cmd);
        args.map(|a| a.to_string()).collect()
    }

    /// `run -d` of `image` with `opts` before the image and `cmd` after it.
    pub fn start(
        engine: Engine,
        test: &'static str,
        opts: &[&str],
        image: &str,
        cmd: &[&str],
    ) -> Ctr {
        let ctr = Ctr::new(engine, test);
        engine.ok(&ctr.run_args("-d", opts, image, cmd));
        ctr
    }

    /// `run --rm` in the foreground: (exit status, stdout, stderr, duration).
    pub fn run_fg(
        engine: Engine,
        test: &'static str,
        opts: &[&str],
        image: &str,
        cmd: &[&str],
    ) -> (i32, String, String, Duration) {
        let guard = Ctr::new(engine, test);
        let args = guard.run_args("--rm", opts, image, cmd);
        let started = Instant::now();
        let out = engine.cmd(&args);
        let took = started.elapsed();
        let code = out.status.code().unwrap_or(-1);
        (code, text(&out.stdout), text(&out.stderr), took)
    }

    /// Container output: stdout then stderr (`logs` keeps them apart).
    pub fn logs(&self) -> String {
        let out = self.engine.cmd(&["logs", &self.name]);
        format!("{}{}", text(&out.stdout), text(&out.stderr))
    }

    /// The last `n` lines of the logs.
    pub fn logs_tail(&self, n: usize) -> String {
        let out = self
            .engine
            .cmd(&["logs", "--tail", &n.to_string(), &self.name]);
        format!("{}{}", text(&out.stdout), text(&out.stderr))
    }

    /// Waits until `needle` shows in the logs; panics with the logs after `timeout`.
    pub fn wait_log(&self, needle: &str, timeout: Duration) -> Duration {
        let started = Instant::now();
        let mut logs = String::new();
        let found = wait_until_every(timeout, Duration::from_millis(50), || {
            logs = self.logs();
            logs.contains(needle)
        });
        if !found {
            panic!(
                "{}: {needle:?} not in the logs of {} after {}; logs:\n{logs}\nstate: {}",
                self.test,
                self.name,
                secs(timeout),
                self.inspect("{{.State.Status}} exit={{.State.ExitCode}}")
            );
        }
        started.elapsed()
    }

    /// Waits until vigil (logging JSON: `VIGIL_LOG_FORMAT=json`) has
    /// written a record of `event` to the logs; panics after `timeout`.
    pub fn wait_record(&self, event: &str, timeout: Duration) {
        self.wait_log(&format!("\"event\":\"{event}\""), timeout);
    }

    /// vigil's host pid (PID 1 of the container), as the engine says.
    pub fn host_pid(&self) -> i32 {
        let pid = self.inspect("{{.State.Pid}}");
        pid.parse()
            .unwrap_or_else(|_| panic!("{}: no pid for {}: {pid:?}", self.test, self.name))
    }

    /// `start` of the stopped container: the same command again, on the
    /// same filesystem and volumes.
    pub fn start_again(&self) {
        self.engine.ok(&["start", &self.name]);
    }

    /// `stop` with the container's own stop timeout; returns how long it took.
    pub fn stop(&self) -> Duration {
        let started = Instant::now();
        self.engine.ok(&["stop", &self.name]);
        started.elapsed()
    }

    /// `stop -t SECS`; returns how long it took.
    pub fn stop_within(&self, secs: u64) -> Duration {
        let started = Instant::now();
        self.engine
            .ok(&["stop", "-t", &secs.to_string(), &self.name]);
        started.elapsed()
    }

    pub fn inspect(&self, format: &str) -> String {
        let out = self.engine.cmd(&["inspect", "-f", format, &self.name]);
        text(&out.stdout).trim().to_string()
    }

    pub fn exit_code(&self) -> i32 {
        let out = self
            .engine
            .cmd(&["inspect", "-f", "{{.State.ExitCode}}", &self.name]);
        let s = text(&out.stdout);
        s.trim().parse().unwrap_or_else(|_| {
            panic!(
                "bad exit code {s:?} for {}: {}",
                self.name,
                text(&out.stderr).trim()
            )
        })
    }

    /// Waits for the container to exit; returns its exit code.
    pub fn wait(&self) -> i32 {
        let s = self.engine.ok(&["wait", &self.name]);
        s.trim()
            .parse()
            .unwrap_or_else(|_| panic!("bad `wait` output {s:?}"))
    }

    /// Runs `cmd` in the container; its stdout. Panics unless it succeeds.
    pub fn exec(&self, cmd: &[&str]) -> String {
        self.engine.ok(&self.exec_args(cmd))
    }

    /// Runs `cmd` in the container; its output, whatever its status: for a
    /// condition polled until it holds, where a failure is an answer.
    pub fn exec_output(&self, cmd: &[&str]) -> Output {
        self.engine.cmd(&self.exec_args(cmd))
    }

    /// `url` fetched from inside the container with busybox's wget: the
    /// page on stdout, whatever the status.
    pub fn fetch(&self, url: &str) -> Output {
        self.exec_output(&["busybox", "wget", "-q", "-O", "-", url])
    }

    fn exec_args<'a>(&'a self, cmd: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["exec", self.name.as_str()];
        args.extend_from_slice(cmd);
        args
    }

    pub fn kill(&self, signal: &str) {
        self.engine.ok(&["kill", "-s", signal, &self.name]);
    }

    /// Polls `processes()` every `every` until `settled(total, zombies)`
    /// or `timeout`; returns the last count.
    pub fn processes_until(
        &self,
        timeout: Duration,
        every: Duration,
        settled: impl Fn(usize, usize) -> bool,
    ) -> (usize, usize) {
        let mut counts = self.processes();
        wait_until_every(timeout, every, || {
            counts = self.processes();
            settled(counts.0, counts.1)
        });
        counts
    }

    /// (total processes, zombies) seen by `ps` run inside the container,
    /// not counting that `ps` itself. (`top` cannot be used: it lists the
    /// cgroup's tasks, and a zombie has already left its cgroup.)
    pub fn processes(&self) -> (usize, usize) {
        let out = self.exec(&["ps", "-o", "stat,comm"]);
        let mut total = 0;
        let mut zombies = 0;
        for line in out.lines().skip(1) {
            let mut words = line.split_whitespace();
            let stat = words.next().unwrap_or("");
            let comm = words.next().unwrap_or("");
            if comm == "ps" && !stat.starts_with('Z') {
                continue;
            }
            total += 1;
            if stat.starts_with('Z') {
                zombies += 1;
            }
        }
        (total, zombies)
    }
}

/// One of the engine's events about a container (`docker events`,
/// `podman events`).
#[derive(Clone, Debug)]
pub struct EngineEvent {
    /// Docker's action (`start`, `die`, `exec_start: CMD ARGS`), podman's
    /// status (`start`, `died`, `exec`).
    pub action: String,
    /// When the engine logged it.
    pub time: SystemTime,
    /// The container's exit code, on its exit (Docker's `die`, podman's
    /// `died`).
    pub exit_code: Option<i32>,
}

impl EngineEvent {
    /// An exec in the container began (`docker exec`, a `HEALTHCHECK`).
    pub fn is_exec(&self) -> bool {
        self.action.starts_with("exec_start") || self.action == "exec"
    }
}

/// The engine's events about one container as they come: `docker events`
/// (`podman events`) left running, its lines in a file. A daemon keeps
/// only its last few hundred events to answer `--since` with (Docker 256),
/// which a busy engine overwrites within seconds, so a test watches the
/// events of a window instead of asking for them afterwards. The watcher
/// is killed (by its pid) when dropped.
pub struct EventWatch {
    engine: Engine,
    test: &'static str,
    child: std::process::Child,
    file: PathBuf,
}

impl Ctr {
    /// Starts watching this container's events.
    pub fn watch_events(&self) -> EventWatch {
        let n = SERIAL.fetch_add(1, Ordering::SeqCst);
        let file = std::env::temp_dir().join(format!("{LABEL}-events-{}-{n}", run_id()));
        let out = fs::File::create(&file)
            .unwrap_or_else(|e| panic!("{}: {}: {e}", self.test, file.display()));
        let filter = format!("container={}", self.name);
        let format = match self.engine {
            Engine::Docker => {
                "{{.TimeNano}}\t{{.Action}}\t{{index .Actor.Attributes \"exitCode\"}}"
            }
            Engine::Podman => "{{.Time.UnixNano}}\t{{.Status}}\t{{.ContainerExitCode}}",
        };
        let child = self
            .engine
            .command(&["events", "--filter", &filter, "--format", format])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {} events: {e}", self.test, self.engine.name()));
        EventWatch {
            engine: self.engine,
            test: self.test,
            child,
            file,
        }
    }

    /// How many times the engine restarted the container (its restart
    /// policy).
    pub fn restart_count(&self) -> u32 {
        let n = self.inspect("{{.RestartCount}}");
        n.parse()
            .unwrap_or_else(|_| panic!("{}: no restart count for {}: {n:?}", self.test, self.name))
    }
}

impl EventWatch {
    /// The events so far, in order.
    pub fn events(&self) -> Vec<EngineEvent> {
        let out = fs::read_to_string(&self.file).unwrap_or_default();
        out.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|line| {
                let mut parts = line.splitn(3, '\t');
                let (nanos, action, code) = (parts.next(), parts.next(), parts.next());
                let nanos: u64 = nanos
                    .and_then(|n| n.trim().parse().ok())
                    .unwrap_or_else(|| {
                        panic!(
                            "{}: {} events: a line without a time: {line:?}",
                            self.test,
                            self.engine.name()
                        )
                    });
                let action = action.unwrap_or_default().to_string();
                let exits = action == "die" || action == "died";
                EngineEvent {
                    exit_code: code.filter(|_| exits).and_then(|c| c.trim().parse().ok()),
                    time: UNIX_EPOCH + Duration::from_nanos(nanos),
                    action,
                }
            })
            .collect()
    }

    /// The container's exits so far: when the engine logged each, and its
    /// exit code.
    pub fn exits(&self) -> Vec<(SystemTime, i32)> {
        self.events()
            .into_iter()
            .filter_map(|e| Some((e.time, e.exit_code?)))
            .collect()
    }
}

impl Drop for EventWatch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_file(&self.file);
    }
}

/// An image a test builds; removed when dropped.
pub struct ImageGuard {
    engine: Engine,
    pub name: String,
}

impl ImageGuard {
    pub fn new(engine: Engine, name: impl Into<String>) -> ImageGuard {
        engine.clean_up_at_exit();
        ImageGuard {
            engine,
            name: name.into(),
        }
    }
}

impl Drop for ImageGuard {
    fn drop(&mut self) {
        self.engine.quiet(&["image", "rm", "-f", &self.name]);
    }
}

/// The exit report line in a container's logs, which must hold one; noted
/// past libtest's capture too.
pub fn must_report<'a>(test: &str, logs: &'a str) -> &'a str {
    match exit_report(logs) {
        Some(r) => {
            note(test, format!("exit report: {}", r.line));
            r.line
        }
        None => panic!("{test}: no `vigil: [warning: ]exit report:` line in the logs:\n{logs}"),
    }
}
