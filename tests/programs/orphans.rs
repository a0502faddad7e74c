//! Test program: an orphan maker.
//!
//! Creates `--count N` orphans in bursts of `--burst B`: for each burst it
//! forks an intermediate process, which forks B grandchildren and exits, so
//! the grandchildren are re-parented to the nearest reaper (PID 1 of the
//! namespace, or a child subreaper). The maker reaps its intermediates itself,
//! so only the grandchildren are orphans. Each grandchild waits until its
//! parent is gone (EOF on a pipe the intermediate held), then lives
//! `--life-ms L` more and exits 0.
//!
//! Options:
//!   --count N      orphans to create (default 10)
//!   --burst B      orphans per intermediate (default 100)
//!   --delay-ms D   pause between bursts (default 0)
//!   --life-ms L    how long each orphan lives after being orphaned (default 0)
//!   --pids FILE    append each orphan's pid (as the maker sees it), one a line
//!   --done FILE    create FILE once every orphan exists and every intermediate
//!                  has been reaped
//!   --hold-ms H    then sleep H ms (default 0) before exiting
//!   --exit CODE    exit status (default 0)

#[path = "support/common.rs"]
mod common;

use common::{Args, die, unknown};
use std::io::Write;
use std::time::Duration;

const PROG: &str = "orphans";

fn fork_retry() -> libc::pid_t {
    loop {
        let pid = unsafe { libc::fork() };
        if pid >= 0 {
            return pid;
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EAGAIN) {
            // The process limit: a moment for the reaper to free a slot
            // (nothing says when one is free, short of trying again).
            std::thread::sleep(Duration::from_millis(5));
            continue;
        }
        die(&format!("fork: {e}"));
    }
}

fn main() {
    let mut count = 10u64;
    let mut burst = 100u64;
    let mut delay_ms = 0u64;
    let mut life_ms = 0u64;
    let mut pids_file = None;
    let mut done_file = None;
    let mut hold_ms = 0u64;
    let mut code = 0i32;
    let mut args = Args::from_env();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--count" => count = args.number(&a),
            "--burst" => burst = args.number::<u64>(&a).max(1),
            "--delay-ms" => delay_ms = args.number(&a),
            "--life-ms" => life_ms = args.number(&a),
            "--pids" => pids_file = Some(args.value(&a)),
            "--done" => done_file = Some(args.value(&a)),
            "--hold-ms" => hold_ms = args.number(&a),
            "--exit" => code = args.number::<u64>(&a) as i32,
            _ => unknown(&a),
        }
    }

    let mut made = 0u64;
    while made < count {
        let n = burst.min(count - made);
        let mut fds = [0i32; 2];
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            die("pipe");
        }
        let mid = fork_retry();
        if mid == 0 {
            // Intermediate: fork n grandchildren, record their pids, exit.
            let mut pids = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let pid = fork_retry();
                if pid == 0 {
                    unsafe {
                        libc::close(fds[1]);
                        let mut b = 0u8;
                        while libc::read(fds[0], &mut b as *mut u8 as *mut libc::c_void, 1) < 0 {}
                        if life_ms > 0 {
                            let ts = libc::timespec {
                                tv_sec: (life_ms / 1000) as _,
                                tv_nsec: ((life_ms % 1000) * 1_000_000) as libc::c_long,
                            };
                            let mut rem = ts;
                            while libc::nanosleep(&ts, &mut rem) != 0 {}
                        }
                        libc::_exit(0);
                    }
                }
                pids.push(pid);
            }
            if let Some(f) = &pids_file {
                let mut s = String::new();
                for p in &pids {
                    s.push_str(&format!("{p}\n"));
                }
                let mut file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(f)
                    .unwrap();
                file.write_all(s.as_bytes()).unwrap();
            }
            unsafe { libc::_exit(0) };
        }
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
            let mut st = 0;
            while libc::waitpid(mid, &mut st, 0) < 0 {}
        }
        made += n;
        if delay_ms > 0 {
            // The pace between bursts is what `--delay-ms` asks for.
            std::thread::sleep(Duration::from_millis(delay_ms));
        }
    }
    if let Some(f) = &done_file {
        std::fs::write(f, format!("{made}\n")).unwrap();
    }
    if hold_ms > 0 {
        // Staying alive this long (`--hold-ms`) is the program's job.
        std::thread::sleep(Duration::from_millis(hold_ms));
    }
    std::process::exit(code);
}
