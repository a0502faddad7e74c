//! Running a command that is not vigil under test (a container engine, a
//! build, vigil on a fuzzed command line) with a deadline, so that a hang
//! fails the test instead of stalling the run.

use super::kill;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// Why `run_with_deadline` has no output to give.
pub enum CmdFailed {
    Spawn(std::io::Error),
    Wait(std::io::Error),
    /// Still running at the deadline (it was then SIGKILLed); what
    /// /proc/PID/stat said of it just before.
    TimedOut {
        stat: String,
    },
}

/// Runs `cmd` (stdin /dev/null, output captured) for at most `timeout`;
/// a command still running then is SIGKILLed (by its pid, which stays ours
/// until the waiting thread reaps it).
pub fn run_with_deadline(cmd: &mut Command, timeout: Duration) -> Result<Output, CmdFailed> {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(CmdFailed::Spawn)?;
    let pid = child.id() as i32;
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(out) => out.map_err(CmdFailed::Wait),
        Err(_) => {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let _ = kill(pid, libc::SIGKILL);
            let _ = rx.recv_timeout(Duration::from_secs(5));
            Err(CmdFailed::TimedOut {
                stat: stat.trim().to_string(),
            })
        }
    }
}

/// `run_with_deadline`, panicking when there is no output.
pub fn run_cmd(cmd: &mut Command, timeout: Duration) -> Output {
    let desc = format!("{cmd:?}");
    match run_with_deadline(cmd, timeout) {
        Ok(out) => out,
        Err(CmdFailed::Spawn(e)) => panic!("cannot run {desc}: {e}"),
        Err(CmdFailed::Wait(e)) => panic!("waiting for {desc}: {e}"),
        Err(CmdFailed::TimedOut { .. }) => {
            panic!("{desc} did not finish within {}", super::secs(timeout))
        }
    }
}

/// Bytes a command printed, as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
