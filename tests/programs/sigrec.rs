//! Test program: a signal recorder.
//!
//! Writes one line (the signal number) per received signal to `--out FILE`
//! (or `$SIGREC_OUT`), with a raw `write(2)` from the handler, so every line
//! is on disk as soon as the handler ran. Handlers are installed with the
//! raw `rt_sigaction` syscall for every catchable signal 1..=64, including
//! 32-34 that glibc's `sigaction` refuses. After the handlers are in place
//! it creates `FILE.ready`.
//!
//! Options:
//!   --out FILE       where to record (default $SIGREC_OUT; none: no recording)
//!   --report DIR     first thing at start-up, write DIR/status (a copy of
//!                    /proc/self/status), DIR/cwd, DIR/env (K=V lines), DIR/args
//!   --read-stdin     with --report: read stdin to EOF into DIR/stdin
//!   --once           exit 0 right after the report (installs nothing)
//!   --fork FILE2     fork a grandchild in the same process group that records
//!                    into FILE2 (and creates FILE2.ready) the same way
//!   --exit-on SIG    exit 0 right after recording SIG (repeatable)
//!   --skip SIG       leave SIG's disposition alone (repeatable)
//!   --max-secs N     exit 0 after N seconds whatever happens (default 300)
//!
//! Built with `#![no_main]` so that Rust's runtime does not touch the signal
//! state before we report it (std would ignore SIGPIPE and install SIGSEGV
//! and SIGBUS handlers).
#![no_main]

#[path = "support/common.rs"]
mod common;
#[path = "support/rawsig.rs"]
mod rawsig;

use common::{Args, die, parse_signal, unknown};
use rawsig::{KSigaction, rt_sigaction, sig_bit};
use std::io::Read;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::time::Duration;

const PROG: &str = "sigrec";

static OUT_FD: AtomicI32 = AtomicI32::new(-1);
static EXIT_ON: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    let mut buf = [0u8; 8];
    let mut i = buf.len() - 1;
    buf[i] = b'\n';
    let mut n = sig as u32;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let fd = OUT_FD.load(Ordering::Relaxed);
    if fd >= 0 {
        unsafe { libc::write(fd, buf[i..].as_ptr() as *const libc::c_void, buf.len() - i) };
    }
    if (1..=64).contains(&sig) && EXIT_ON.load(Ordering::Relaxed) & sig_bit(sig) != 0 {
        unsafe { libc::_exit(0) };
    }
}

fn install_handlers(skip: u64) {
    // Let glibc install one handler so that we learn its signal-return
    // trampoline (sa_restorer), then reuse it for raw installs.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut());
    }
    let mut template = KSigaction::default();
    let _ = rt_sigaction(libc::SIGUSR1, None, Some(&mut template));
    let act = KSigaction {
        handler: on_signal as *const () as usize,
        flags: template.flags,
        restorer: template.restorer,
        mask: 0,
    };
    for sig in 1..=64 {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP || skip & sig_bit(sig) != 0 {
            continue;
        }
        if let Err(e) = rt_sigaction(sig, Some(&act), None) {
            eprintln!("sigrec: rt_sigaction({sig}) failed: {e}");
        }
    }
    if skip & sig_bit(libc::SIGUSR1) != 0 {
        unsafe { libc::signal(libc::SIGUSR1, libc::SIG_DFL) };
    }
}

fn open_out(path: &str) {
    use std::os::unix::io::IntoRawFd;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(path)
        .unwrap_or_else(|e| die(&format!("cannot open {path}: {e}")));
    let old = OUT_FD.swap(f.into_raw_fd(), Ordering::Relaxed);
    if old >= 0 {
        unsafe { libc::close(old) };
    }
}

/// The signal-set bit of signal number `s`.
fn parse_sig(s: &str) -> u64 {
    sig_bit(parse_signal(s).unwrap_or_else(|| die(&format!("bad signal number {s}"))))
}

fn report(dir: &str, read_stdin: bool, args: &[String]) {
    let d = std::path::Path::new(dir);
    let status = std::fs::read("/proc/self/status").unwrap_or_default();
    let _ = std::fs::write(d.join("status"), status);
    let cwd = std::env::current_dir()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let _ = std::fs::write(d.join("cwd"), cwd);
    let mut env = String::new();
    for (k, v) in std::env::vars_os() {
        env.push_str(&format!(
            "{}={}\n",
            k.to_string_lossy(),
            v.to_string_lossy()
        ));
    }
    let _ = std::fs::write(d.join("env"), env);
    let _ = std::fs::write(d.join("args"), args.join("\n"));
    if read_stdin {
        let mut buf = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut buf);
        let _ = std::fs::write(d.join("stdin"), buf);
    }
    let _ = std::fs::write(d.join("done"), "");
}

fn run(argv: Vec<String>) -> i32 {
    let mut out = std::env::var("SIGREC_OUT").ok();
    let mut report_dir = None;
    let mut read_stdin = false;
    let mut once = false;
    let mut fork_out = None;
    let mut exit_on = 0u64;
    let mut skip = 0u64;
    let mut max_secs = 300u64;
    let mut args = Args::new(argv.clone());
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => out = Some(args.value(&a)),
            "--report" => report_dir = Some(args.value(&a)),
            "--read-stdin" => read_stdin = true,
            "--once" => once = true,
            "--fork" => fork_out = Some(args.value(&a)),
            "--exit-on" => exit_on |= parse_sig(&args.value(&a)),
            "--skip" => skip |= parse_sig(&args.value(&a)),
            "--max-secs" => max_secs = args.parse(&a),
            _ => unknown(&a),
        }
    }
    if let Some(dir) = &report_dir {
        report(dir, read_stdin, &argv);
    }
    if once {
        return 0;
    }
    EXIT_ON.store(exit_on, Ordering::Relaxed);
    let mut ready = out.clone();
    if let Some(f2) = fork_out {
        match unsafe { libc::fork() } {
            -1 => die("fork failed"),
            0 => {
                out = Some(f2.clone());
                ready = Some(f2);
            }
            _ => {}
        }
    }
    if let Some(o) = &out {
        open_out(o);
    }
    install_handlers(skip);
    if let Some(r) = ready {
        let _ = std::fs::write(format!("{r}.ready"), format!("{}\n", std::process::id()));
    }
    // The recorder's lifetime (`--max-secs`): it ends by itself should
    // the test that started it never end it.
    std::thread::sleep(Duration::from_secs(max_secs));
    0
}

/// With `#![no_main]`, `std::env::args` is empty on musl (only glibc hands
/// argv to Rust without its runtime), so the arguments come from here.
#[unsafe(no_mangle)]
extern "C" fn main(argc: libc::c_int, argv: *const *const libc::c_char) -> libc::c_int {
    let args = (0..argc.max(0) as usize)
        .map(|i| {
            // SAFETY: the C runtime passes argc NUL-terminated strings.
            let arg = unsafe { std::ffi::CStr::from_ptr(*argv.add(i)) };
            arg.to_string_lossy().into_owned()
        })
        .collect();
    run(args)
}
