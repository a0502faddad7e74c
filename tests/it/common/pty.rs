//! A real interactive shell on a pseudo-terminal, for job control (Ctrl-Z,
//! fg, Ctrl-C) and the terminal's foreground group.

use super::capture::Capture;
use super::start_state::{remove_vigil_env, set_signal_state};
use super::{ProcGuard, Records, TIMEOUT, Value, descendants, wait_until};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// An interactive bash on a fresh pseudo-terminal (its controlling
/// terminal, job control on). Output is collected in the background.
pub struct PtyShell {
    child: Child,
    master: OwnedFd,
    out: Capture,
    guard: ProcGuard,
}

/// The prompt PtyShell sets.
pub const PTY_PROMPT: &str = "PTYPROMPT$ ";

impl PtyShell {
    pub fn spawn(extra_env: &[(&str, &str)]) -> PtyShell {
        let mut cmd = Command::new("bash");
        cmd.args(["--norc", "--noprofile", "-i"])
            .env("TERM", "dumb")
            .env("PS1", PTY_PROMPT)
            .env("HISTFILE", "/dev/null")
            .env_remove("PROMPT_COMMAND");
        Self::start(cmd, extra_env)
    }

    /// Any program in bash's place: the leader of a session whose
    /// controlling terminal is a fresh pseudo-terminal, with no shell (and
    /// so no job control) above it, as under `script`, sshd or `docker run
    /// -t` with a non-PID-1 init.
    pub fn session(program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> PtyShell {
        let mut cmd = Command::new(program);
        cmd.args(args).env("TERM", "dumb");
        Self::start(cmd, &[])
    }

    /// The program's exit status, once it exits (`None` after `timeout`).
    pub fn wait_status(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let mut status = None;
        wait_until(timeout, || {
            status = self.child.try_wait().ok().flatten();
            status.is_some()
        });
        status
    }

    fn start(mut cmd: Command, extra_env: &[(&str, &str)]) -> PtyShell {
        let pty = nix::pty::openpty(None, None).expect("openpty");
        let slave = pty.slave;
        cmd.stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave.try_clone().unwrap()));
        remove_vigil_env(&mut cmd);
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        unsafe {
            cmd.pre_exec(|| {
                set_signal_state(0, 0)?;
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("spawn bash in a pty");
        drop(slave);
        let guard = ProcGuard::new();
        guard.track(child.id() as i32);
        let reader = std::fs::File::from(pty.master.try_clone().unwrap());
        let out = Capture::start(reader);
        PtyShell {
            child,
            master: pty.master,
            out,
            guard,
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Type these bytes (use "\x1a" for Ctrl-Z, "\x03" for Ctrl-C).
    pub fn send(&self, s: &str) {
        let n = unsafe {
            libc::write(
                self.master.as_raw_fd(),
                s.as_ptr() as *const libc::c_void,
                s.len(),
            )
        };
        assert_eq!(n, s.len() as isize, "write to pty master");
    }

    /// Everything the terminal showed so far.
    pub fn output(&self) -> String {
        self.out.text()
    }

    /// Wait until the terminal output contains `needle` `n` times or more.
    pub fn wait_output_count(&self, needle: &str, n: usize, timeout: Duration) -> bool {
        wait_until(timeout, || self.out.text().matches(needle).count() >= n)
    }

    pub fn wait_output(&self, needle: &str, timeout: Duration) -> bool {
        self.wait_output_count(needle, 1, timeout)
    }

    pub fn guard(&self) -> &ProcGuard {
        &self.guard
    }

    /// The first descendant of `ancestor` that `pick` accepts, waited for
    /// (up to TIMEOUT) and killed with the shell; `what` names it when it
    /// never comes.
    pub fn find_descendant(&self, ancestor: i32, what: &str, pick: impl Fn(i32) -> bool) -> i32 {
        let mut found = 0;
        assert!(
            wait_until(TIMEOUT, || {
                found = descendants(ancestor)
                    .into_iter()
                    .find(|&p| pick(p))
                    .unwrap_or(0);
                found != 0
            }),
            "{what} did not start: {:?}",
            self.output()
        );
        self.guard.track(found);
        found
    }

    /// vigil's records in what the terminal showed.
    pub fn records(&self) -> Records {
        Records::of(&self.output())
    }

    /// Waits until the terminal shows a record of `event` for which `pick`
    /// holds.
    pub fn wait_record(
        &self,
        event: &str,
        timeout: Duration,
        pick: impl Fn(&Value) -> bool,
    ) -> bool {
        wait_until(timeout, || self.records().all(event).into_iter().any(&pick))
    }
}

/// Whether `pid` runs the vigil under test.
pub fn is_vigil(pid: i32) -> bool {
    std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|e| e == super::vigil_bin())
}

impl Drop for PtyShell {
    fn drop(&mut self) {
        self.guard.kill_all();
        let _ = self.child.wait();
    }
}
