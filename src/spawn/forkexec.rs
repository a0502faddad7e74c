//! What vigil learns of a new process it made (`sys::exec::spawn`): from
//! the pipe on which the process says why it could not exec.
//!
//! std's `Command::spawn` reads its own such pipe and panics when that read
//! fails with anything but EINTR ("the CLOEXEC pipe failed"): an I/O error
//! or a shortage of memory at the wrong moment would end PID 1, and with
//! it the container. Here every failure has an answer: a step of the new
//! process fails the spawn with the step's error; a read of the pipe that
//! fails is tried again, and if it keeps failing the process is taken as
//! started, since it exits with the status vigil would have given for it if
//! it did not (see [`Outcome::Unknown`]).

use std::io;
use std::os::fd::AsFd;

use nix::errno::Errno;
use nix::sys::wait::waitpid;
use nix::unistd::Pid;

use crate::sys::exec::{self as sys, Failed, MESSAGE, Started};

/// How a spawn went, as far as vigil could learn.
#[derive(Debug)]
pub enum Outcome {
    /// The program runs (the pipe closed with exec, and nothing came).
    Started(Pid),
    /// A step of the new process failed; it has exited and been reaped.
    Failed(Failed),
    /// The process was made, but whether its exec succeeded could not be
    /// read (the pipe's read kept failing, or the process died in the
    /// middle of its message).
    /// It is left to run: if the exec failed, it exits with the status
    /// vigil gives for that failure (127 not found, 126 not executable, 1
    /// for a step before exec), and that is what vigil reports.
    Unknown { pid: Pid, error: io::Error },
}

/// How often a read of the pipe is tried before the outcome is given up as
/// unknown. A blocking pipe's read fails only for a moment (an interrupted
/// or injected call): a read that fails this often will not succeed.
const READ_ATTEMPTS: u32 = 8;

/// Reads what the new process said: nothing (it exec'd) or why it could
/// not.
pub fn outcome(started: Started) -> Outcome {
    let Started { pid, report } = started;
    let pid = Pid::from_raw(pid);
    let mut message = [0u8; MESSAGE];
    let mut got = 0;
    let mut failures = 0;
    let error = loop {
        let Some(free) = message.get_mut(got..) else {
            break io::Error::from(io::ErrorKind::InvalidData);
        };
        match nix::unistd::read(report.as_fd(), free) {
            Ok(0) if got == 0 => return Outcome::Started(pid),
            // A message cut short: the process died while writing it.
            Ok(0) => break io::Error::from(io::ErrorKind::UnexpectedEof),
            Ok(n) => {
                got += n;
                if got == MESSAGE {
                    reap(pid);
                    return Outcome::Failed(sys::decode(&message));
                }
            }
            Err(Errno::EINTR) => {}
            Err(e) => {
                failures += 1;
                if failures >= READ_ATTEMPTS {
                    break io::Error::from(e);
                }
            }
        }
    };
    Outcome::Unknown { pid, error }
}

/// Reaps a process that failed before exec, so that vigil's reaping loop
/// does not count it as an orphan. It has written its message and is about
/// to exit. If waiting keeps failing, the loop reaps it later.
fn reap(child: Pid) {
    for _ in 0..READ_ATTEMPTS {
        match waitpid(child, None) {
            Err(Errno::ECHILD) | Ok(_) => return,
            Err(_) => {}
        }
    }
}
