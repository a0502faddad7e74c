//! Processes with odd names: a command name (`comm`) that is not UTF-8
//! (the kernel cuts `datenbank-größe-monitor` to 15 bytes, inside the
//! `ß`; a Latin-1 file name), that holds spaces and parentheses, a
//! newline, a tab, or nothing at all. None of them hides a process from
//! vigil: the drain, the grace deadline's SIGKILL and `-w` find and
//! count each one, and every name (a process's
//! title, its command line) is shown escaped, in the text lines and in
//! `--log-format json`, whose lines stay valid records. As PID 1 and not:
//! as a plain process, a process vigil does not see is one it never kills
//! and waits for forever.
//!
//! The odd programs are copies of `sleep` under odd file names (a
//! process's `comm` is the name of the file it executed), each started in
//! a session of its own so that only vigil's listing can reach it; the
//! empty name is set by a Python child with `prctl(PR_SET_NAME, "")`.

use crate::common::*;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

/// One odd program: its file name, how vigil must show it (its title
/// starts so), and whether it ignores SIGTERM (so that only a SIGKILL ends
/// it).
struct Odd {
    file: &'static [u8],
    shown: &'static str,
    ignores_term: bool,
}

const ODD: [Odd; 5] = [
    Odd {
        file: "datenbank-größe-monitor".as_bytes(),
        shown: "datenbank-größe-monitor",
        ignores_term: true,
    },
    Odd {
        file: b"caf\xe9-latin1",
        shown: "caf\\xe9-latin1",
        ignores_term: false,
    },
    Odd {
        file: b"a) S 1 2 (b",
        shown: "a) S 1 2 (b",
        ignores_term: true,
    },
    Odd {
        file: b"two\nlines",
        shown: "two\\nlines",
        ignores_term: false,
    },
    Odd {
        file: b"tab\there",
        shown: "tab\\there",
        ignores_term: true,
    },
];

/// The Python child that names itself nothing; it dies of SIGTERM.
const NAMELESS: &str = "import ctypes, signal\n\
    ctypes.CDLL(None).prctl(15, b'', 0, 0, 0)\n\
    open('named', 'w').close()\n\
    while True: signal.pause()\n";

/// Puts the odd programs in `dir/odd/N` (`N` ending in `h` for one that
/// ignores SIGTERM) and returns the script that starts them all, each in
/// a session of its own, writes each pid to `pids/N` and waits until every
/// one carries its odd name. `seconds` is how long each lives.
fn odd_programs(dir: &TempDir, seconds: &str) -> String {
    let sleep = which("sleep");
    std::fs::create_dir_all(dir.join("pids")).unwrap();
    for (i, odd) in ODD.iter().enumerate() {
        let sub = dir.join(format!(
            "odd/{i}{}",
            if odd.ignores_term { "h" } else { "" }
        ));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::copy(&sleep, sub.join(OsStr::from_bytes(odd.file))).unwrap();
    }
    std::fs::write(dir.join("nameless.py"), NAMELESS).unwrap();
    format!(
        r#"
for d in odd/*; do
    for f in "$d"/*; do
        case "$d" in
        *h) (trap '' TERM; exec setsid "$f" {seconds}) & ;;
        *) setsid "$f" {seconds} & ;;
        esac
        echo $! > "pids/${{d#odd/}}"
    done
done
setsid python3 nameless.py & echo $! > pids/nameless
for p in pids/[0-9]*; do
    pid=$(cat "$p")
    while :; do
        comm=$(cat /proc/$pid/comm)
        [ "$comm" = sh ] || [ "$comm" = setsid ] || break
        sleep 0.02
    done
done
while [ ! -e named ]; do sleep 0.02; done
: > ready
"#
    )
}

/// Each odd process as the log must show it: its pid, its title (the
/// program and `seconds`, its argument), and whether it ignores SIGTERM.
fn expected(dir: &TempDir, seconds: &str) -> Vec<(i32, String, bool)> {
    let mut all: Vec<(i32, String, bool)> = ODD
        .iter()
        .enumerate()
        .map(|(i, odd)| {
            let file = format!("pids/{i}{}", if odd.ignores_term { "h" } else { "" });
            let pid = read_trimmed(&dir.join(file)).parse().unwrap();
            (pid, format!("{} {seconds}", odd.shown), odd.ignores_term)
        })
        .collect();
    let nameless = read_trimmed(&dir.join("pids/nameless")).parse().unwrap();
    all.push((nameless, "python3 nameless.py".to_string(), false));
    all
}

/// The one line of `out`'s stderr that contains `needle`.
fn line_with<'a>(out: &'a Output, needle: &str) -> &'a str {
    let found: Vec<&str> = out.stderr.lines().filter(|l| l.contains(needle)).collect();
    match found.as_slice() {
        [line] => line,
        _ => panic!("{} lines with {needle:?}\n{out}", found.len()),
    }
}

fn assert_lists(line: &str, procs: &[&(i32, String, bool)], out: &Output) {
    for (pid, shown, _) in procs {
        let entry = format!("{pid} ({shown})");
        assert!(
            line.contains(&entry),
            "{entry:?} missing from {line:?}\n{out}"
        );
    }
}

/// Waits until none of `pids` (as the test sees them) is alive; only
/// meaningful for a plain vigil, whose pids are the test's.
fn assert_all_gone(pids: &[i32], out: &Output) {
    for &pid in pids {
        assert!(
            wait_until(TIMEOUT, || !alive(pid)),
            "pid {pid} outlived vigil\n{out}"
        );
    }
}

fn modes() -> [(Vigil, bool); 2] {
    [(Vigil::pid1(), true), (Vigil::plain(), false)]
}

/// Starts vigil with `script` (the odd programs, then the child's own end)
/// and returns once they all run and carry their names; the bound of the
/// start, which forks and polls, is its own.
fn start_odd(v: Vigil, dir: &TempDir, script: &str) -> Running {
    let run = spawn_sh(v, dir, script);
    assert!(
        wait_for_file(&dir.join("ready"), TIMEOUT),
        "the odd programs never got ready\n{}",
        run.describe()
    );
    run
}

// ---------------------------------------------------------------------------
// The drain
// ---------------------------------------------------------------------------

/// The child starts the odd processes and exits: the drain's SIGTERM names
/// every one, its SIGKILL the ones that ignored it, and the report counts
/// them all.
#[test]
fn the_drain_ends_every_odd_process() {
    let _cpu = timing();
    for (v, pid1) in modes() {
        let dir = TempDir::new("oddrain");
        let script = odd_programs(&dir, "1000") + "exit 0\n";
        let run = start_odd(v.args(["-v", "--drain-timeout", "2s"]), &dir, &script);
        let started = Instant::now();
        let out = run.wait(TIMEOUT);
        let took = started.elapsed();
        no_panic(&out);
        assert_eq!(out.code(), Some(0), "pid1={pid1}\n{out}");
        let odd = expected(&dir, "1000");
        let all: Vec<&(i32, String, bool)> = odd.iter().collect();
        assert_lists(line_with(&out, "draining: SIGTERM to "), &all, &out);
        let hard: Vec<&(i32, String, bool)> = odd.iter().filter(|o| o.2).collect();
        let killed = line_with(&out, "drain timeout (2s) over: SIGKILL to ");
        assert_lists(killed, &hard, &out);
        let report = exit_report_text(&out, true);
        assert!(
            report.contains(&format!("drain: SIGTERM to {} processes", odd.len())),
            "{report}"
        );
        assert!(took < Duration::from_secs(15), "took {took:?}\n{out}");
        if !pid1 {
            let pids: Vec<i32> = odd.iter().map(|o| o.0).collect();
            assert_all_gone(&pids, &out);
        }
    }
}

// ---------------------------------------------------------------------------
// --timeout and the grace deadline
// ---------------------------------------------------------------------------

/// A stop with a grace period, and a child that ignores SIGTERM: at the
/// grace deadline every odd process is listed and killed, and vigil
/// exits instead of waiting forever for one it could not see.
#[test]
fn the_grace_deadline_kills_every_odd_process() {
    let _cpu = timing();
    for (v, pid1) in modes() {
        let dir = TempDir::new("oddgrace");
        let script = odd_programs(&dir, "1000") + "trap '' TERM\nsleep 1000\n";
        let run = start_odd(v.args(["--grace-period", "2s"]), &dir, &script);
        let started = Instant::now();
        let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
        let took = started.elapsed();
        no_panic(&out);
        assert_eq!(out.code(), Some(137), "pid1={pid1}\n{out}");
        let odd = expected(&dir, "1000");
        let all: Vec<&(i32, String, bool)> = odd.iter().collect();
        assert_lists(
            line_with(&out, "grace period (2s) over: SIGKILL to "),
            &all,
            &out,
        );
        assert!(took < Duration::from_secs(20), "took {took:?}\n{out}");
        if !pid1 {
            let pids: Vec<i32> = odd.iter().map(|o| o.0).collect();
            assert_all_gone(&pids, &out);
        }
    }
}

// ---------------------------------------------------------------------------
// -w
// ---------------------------------------------------------------------------

/// The odd processes, orphans once the child is gone, end in the drain
/// (SIGTERM, or SIGKILL for those that ignore it): `-w` warns of each one
/// reaped.
#[test]
fn w_warns_of_every_odd_orphan() {
    for (v, pid1) in modes() {
        let dir = TempDir::new("oddw");
        let script = odd_programs(&dir, "1000") + "exit 0\n";
        let run = start_odd(v.args(["-w", "--drain-timeout", "1s"]), &dir, &script);
        let out = run.wait(TIMEOUT);
        no_panic(&out);
        assert_eq!(out.code(), Some(0), "pid1={pid1}\n{out}");
        for (pid, _, _) in expected(&dir, "1000") {
            let warned = format!("vigil: warning: reaped orphaned zombie pid {pid}, ");
            assert!(
                out.stderr.lines().any(|l| l.starts_with(&warned)),
                "no {warned:?}\n{out}"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// --log-format json
// ---------------------------------------------------------------------------

/// The grace deadline's record and the exit record list every odd process
/// by pid and escaped name, and every line is a valid record of the
/// schema.
#[test]
fn json_records_stay_valid_and_name_every_odd_process() {
    for (v, pid1) in modes() {
        let dir = TempDir::new("oddjson");
        let script = odd_programs(&dir, "1000") + "trap '' TERM\nsleep 1000\n";
        let v = v.json().args(["--grace-period", "2s"]);
        let run = start_odd(v, &dir, &script);
        let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
        no_panic(&out);
        assert_eq!(out.code(), Some(137), "pid1={pid1}\n{out}");
        // Every line a record of the schema.
        let records = out.records();
        assert_eq!(records.0.len(), out.stderr.lines().count(), "{out}");
        let deadline = records.one("grace_deadline");
        let killed = deadline["killed"].as_array().unwrap();
        for (pid, shown, _) in expected(&dir, "1000") {
            let entry = json!({"pid": pid, "name": shown});
            assert!(killed.contains(&entry), "{entry} missing\n{out}");
        }
        let exit = records.exit();
        assert_eq!(exit["grace_kills"], deadline["killed"], "{out}");
    }
}
