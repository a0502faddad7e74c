//! Signals at the kernel: the full signal set, taking them one at a time,
//! who sent each one, and sending. Their names, `--rewrite` and
//! senders as facts are `facts::signal`.
//!
//! vigil blocks *every* signal the kernel has (1 to 64) and takes them with
//! `rt_sigtimedwait`. libc's `sigfillset` leaves out 32-34, which it keeps for its own
//! threads; an init built on it dies when someone sends it signal 34. So the
//! mask is a raw 64-bit word, handed to the raw syscalls in the kernel's own
//! layout for the architecture (`sys::signal`).

use std::io;
use std::os::fd::OwnedFd;
use std::time::Duration;

use nix::errno::Errno;
use nix::unistd::Pid;

use crate::log;
use crate::log::event::Event;
use crate::log::facts::signal::{Received, Sender, Signal, Target};
use crate::sys::exec;
use crate::sys::signal::{self as sys, Disposition, SignalInfo, set_disposition};

/// Every signal the kernel has, 1 to 64, as the raw calls take a set: bit
/// N-1 stands for signal N.
const ALL: u64 = !0;

/// `signal`'s bit in such a set.
fn bit(signal: i32) -> u64 {
    1 << (signal - 1)
}

/// What vigil was started with, so that its child can be given the same:
/// the mask, and the dispositions of the signals vigil changes for itself
/// (`VIGIL_DISPOSITIONS`), each as it was, default or ignored. Signals
/// vigil does not touch keep their disposition across exec anyway.
#[derive(Clone, Copy, Debug)]
pub struct Inherited(exec::Signals);

impl Inherited {
    /// What a new process puts back before its exec: the mask and the
    /// dispositions vigil was started with. This also undoes std's reset
    /// of SIGPIPE to the default: vigil has its own `main`, so Rust's
    /// runtime never touched SIGPIPE and vigil knows what its parent gave
    /// it.
    pub fn for_child(&self) -> exec::Signals {
        self.0
    }

    /// Puts back, in vigil itself, the mask and the dispositions it was
    /// started with: for `--probe`, an ordinary short-lived program that
    /// a health check's SIGTERM, or Ctrl-C, ends.
    pub fn restore(&self) -> io::Result<()> {
        for (signal, _) in VIGIL_DISPOSITIONS {
            let disposition = if self.0.ignore & bit(signal) != 0 {
                Disposition::Ignore
            } else {
                Disposition::Default
            };
            set_disposition(signal, disposition)?;
        }
        sys::set_mask(self.0.mask)?;
        Ok(())
    }
}

/// For the unit tests that start a process for real: nothing blocked, and
/// every disposition vigil changes at the default.
#[cfg(test)]
impl Inherited {
    pub fn defaults() -> Inherited {
        let all = VIGIL_DISPOSITIONS.iter();
        let default = all.fold(0, |set, &(signal, _)| set | bit(signal));
        Inherited(exec::Signals {
            default,
            ..exec::Signals::default()
        })
    }
}

/// The dispositions vigil sets for itself (see `block_all`).
const VIGIL_DISPOSITIONS: [(i32, Disposition); 4] = [
    (libc::SIGTTIN, Disposition::Ignore),
    (libc::SIGTTOU, Disposition::Ignore),
    (libc::SIGCHLD, Disposition::Default),
    (libc::SIGPIPE, Disposition::Default),
];

/// Blocks every signal and sets vigil's own dispositions. Returns what vigil
/// was started with. Called first thing in `main`, so nothing sent during
/// start-up is lost or fatal.
///
/// - SIGTTIN/SIGTTOU are ignored, as tini does: vigil must never be stopped
///   by the terminal.
/// - SIGCHLD goes back to the default: if a parent left it ignored, the kernel
///   would reap children by itself and vigil would never see its child's status.
/// - SIGPIPE goes back to the default (it stays blocked, so it cannot kill
///   vigil): a SIGPIPE someone sends is then forwarded like any other signal,
///   and one raised by vigil's own write to a closed pipe is recognised by its
///   sender and dropped.
pub fn block_all() -> io::Result<Inherited> {
    // The calling thread's mask; the one it had comes back.
    let mut inherited = exec::Signals {
        mask: sys::set_mask(ALL)?,
        ..exec::Signals::default()
    };
    for (signal, disposition) in VIGIL_DISPOSITIONS {
        if set_disposition(signal, disposition)? == Disposition::Ignore {
            inherited.ignore |= bit(signal);
        } else {
            inherited.default |= bit(signal);
        }
    }
    Ok(Inherited(inherited))
}

/// Where vigil takes every signal from. All are blocked, and taken one at
/// a time with `rt_sigtimedwait`, like the C inits: each is forwarded the
/// moment it is taken, before the next is even looked at, so the last of a
/// burst does not wait for the whole burst, and a storm of queued realtime
/// signals never grows vigil's memory. The signalfd is there for `poll`,
/// when a signal must be waited for together with other descriptors.
pub struct SignalFd {
    fd: OwnedFd,
    own_pid: u32,
}

impl std::os::fd::AsFd for SignalFd {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl SignalFd {
    /// Opens a signalfd for the full set. The signals must already be
    /// blocked (see `block_all`).
    pub fn open() -> io::Result<SignalFd> {
        Ok(SignalFd {
            fd: sys::signalfd(ALL)?,
            own_pid: std::process::id(),
        })
    }

    /// Waits for one signal, for at most `timeout` when there is one (the
    /// next deadline): one system call, the cheapest way to sleep until a
    /// signal comes. `None` means the time is up (or the wait was
    /// interrupted: the caller's loop looks at its deadlines again).
    pub fn wait(&mut self, timeout: Option<Duration>) -> io::Result<Option<Received>> {
        Ok(sys::wait(ALL, timeout)?.map(|info| Received {
            signal: Signal(info.signal),
            sender: sender_of(&info, self.own_pid),
        }))
    }
}

/// Who sent a signal, from its `si_code`, `si_pid` and `si_uid`. `own_pid` is vigil's pid, asked once: a `getpid` per signal
/// would be a third system call on the forwarding path.
fn sender_of(info: &SignalInfo, own_pid: u32) -> Sender {
    // si_code <= 0 means a user-space sender: SI_USER (0), SI_QUEUE (-1),
    // SI_TKILL (-6) and the other negative codes; SI_KERNEL and the
    // positive, signal-specific codes mean the kernel.
    if info.code > 0 {
        return Sender::Kernel;
    }
    if info.pid != 0 && info.pid == own_pid {
        return Sender::Vigil;
    }
    Sender::Process {
        pid: Pid::from_raw(info.pid as i32),
        uid: info.uid,
    }
}

/// Sends a signal; whether it reached the target or the target is gone
/// already. A target that just exited (ESRCH) is fine and silent; a target
/// vigil may not signal (EPERM, e.g. after it changed user) is a warning,
/// after one more try. Neither is ever a reason to stop.
pub fn send(target: Target, signal: Signal) -> bool {
    let pid = match target {
        Target::Process(pid) => pid.as_raw(),
        Target::Group(pgid) => -pgid.as_raw(),
    };
    if pid == 0 || pid == -1 {
        // Never broadcast by accident: 0 and -1 mean "my group" and "everyone".
        return false;
    }
    // A failure other than ESRCH is tried once more.
    let mut sent = sys::kill(pid, signal.0);
    if let Err(err) = sent
        && err != Errno::ESRCH
    {
        sent = sys::kill(pid, signal.0);
    }
    match sent {
        Ok(()) | Err(Errno::ESRCH) => true,
        Err(err) => {
            log::emit(&Event::SendFailed {
                signal,
                target,
                error: err.desc(),
            });
            false
        }
    }
}
