//! Everything the supervisor does to the world, behind one small trait: the
//! clock, the signalfd, signals and processes, spawning. The state machine
//! only ever reaches the kernel through `System`, so its transitions can be
//! driven and checked in unit tests without forking (`tests.rs` has a fake);
//! `Os` is the real thing. The trait is used generically, never as a
//! `dyn`, so the real build pays nothing for it.

use std::io;
use std::time::{Duration, Instant};

use crate::cgroup::OomCounter;
use crate::procs::{self, Proc, Role};
use crate::reap::{self, Next};
use crate::sched::Slice;
use crate::signals::{self, Inherited, Received, SignalFd, Target};
use crate::spawn::{self, Spawn, SpawnError};
use crate::user::Switch;

pub trait System {
    /// The monotonic clock.
    fn now(&self) -> Instant;
    /// Waits for the next signal: at most `timeout` (`Ok(None)` when it
    /// passed first), or for as long as it takes when `None`.
    fn next_signal(&mut self, timeout: Option<Duration>) -> io::Result<Option<Received>>;
    /// Sleeps: the loop's pace once signals can no longer be read.
    fn sleep(&mut self, duration: Duration);
    /// Sends one signal (a target that is gone already is not an error).
    fn send(&mut self, target: Target, signal: i32);
    /// Sends `signals` to every process vigil answers for, and to the
    /// `known` groups; returns the processes /proc listed.
    fn signal_all(&mut self, signals: &[i32], known: &[Target]) -> Vec<Proc>;
    /// Whether vigil can reach every process it answers for (as PID 1
    /// always; otherwise only with /proc).
    fn can_reach_all(&self) -> bool;
    /// Whether /proc of vigil's own PID namespace can be read.
    fn procs_listed(&self) -> bool;
    /// The next child that changed state, without blocking.
    fn reap(&mut self) -> Next;
    /// Whether vigil has any child left, without reaping it.
    fn any_children(&mut self) -> bool;
    /// Whether /proc lists any process vigil answers for: as PID 1, also
    /// those that are no children of vigil's (`docker exec`).
    fn others_left(&self) -> bool;
    /// Starts a process (a hook); its pid.
    fn spawn(&mut self, spec: Spawn<'_>) -> Result<i32, SpawnError>;
    /// A process's name for the log and the report (a signal's sender),
    /// from /proc, if it is still there.
    fn name(&self, pid: u32) -> Option<String>;
    /// The processes vigil answers for that still run, with their state.
    fn running(&self) -> Vec<procs::Running>;
    /// Whether vigil has a controlling terminal (whose driver may signal
    /// vigil's group: Ctrl-C after `fg`).
    fn has_terminal(&self) -> bool;
    /// vigil's parent right now.
    fn parent(&self) -> i32;
    /// Whether a job-control shell above vigil could resume it if it
    /// stopped: vigil is not PID 1, and its parent sits in another process
    /// group of the same session (a shell that put vigil in a job of its
    /// own). A non-interactive `sh -c` shares vigil's group; a container
    /// runtime is outside the namespace.
    fn job_control_above(&self) -> bool;
    /// Job control: stop vigil itself (the child was stopped by Ctrl-Z).
    fn stop_self(&mut self);
    /// Gives the terminal to `pgid`, if vigil holds it.
    fn give_terminal(&mut self, pgid: i32);
    /// Takes the terminal back from `given_to` at exit, if it still has it.
    fn reclaim_terminal(&mut self, given_to: i32);
    /// OOM kills in vigil's memory cgroup since vigil started.
    fn oom_kills(&self) -> u64;
    /// At exit: lets whoever reads vigil's output pipes catch up.
    fn let_readers_catch_up(&mut self);
}

/// The real world.
pub struct Os {
    pub role: Role,
    pub signals: SignalFd,
    pub inherited: Inherited,
    /// The scheduler slice the child and the hooks get back.
    pub slice: Slice,
    pub oom: OomCounter,
    /// `--user`: the hooks run as the child does.
    pub user: Option<Switch>,
}

impl System for Os {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn next_signal(&mut self, timeout: Option<Duration>) -> io::Result<Option<Received>> {
        self.signals.wait(timeout)
    }

    fn sleep(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }

    fn send(&mut self, target: Target, signal: i32) {
        signals::send(target, signal);
    }

    fn signal_all(&mut self, signals: &[i32], known: &[Target]) -> Vec<Proc> {
        procs::signal_all(self.role, signals, known)
    }

    fn can_reach_all(&self) -> bool {
        procs::can_reach_all(self.role)
    }

    fn procs_listed(&self) -> bool {
        procs::available()
    }

    fn reap(&mut self) -> Next {
        reap::next()
    }

    fn any_children(&mut self) -> bool {
        reap::any_children()
    }

    fn others_left(&self) -> bool {
        procs::others_left(self.role)
    }

    fn spawn(&mut self, spec: Spawn<'_>) -> Result<i32, SpawnError> {
        spawn::spawn(spec, self.inherited, self.slice, self.user.as_ref())
    }

    fn name(&self, pid: u32) -> Option<String> {
        procs::name(pid as i32)
    }

    fn running(&self) -> Vec<procs::Running> {
        procs::running(self.role)
    }

    fn has_terminal(&self) -> bool {
        spawn::has_terminal()
    }

    fn parent(&self) -> i32 {
        // SAFETY: getppid takes no arguments and cannot fail.
        unsafe { libc::getppid() }
    }

    fn job_control_above(&self) -> bool {
        if self.role == Role::Pid1 {
            return false;
        }
        // SAFETY: getppid, getpgrp, getpgid and getsid take integers only.
        unsafe {
            let parent = libc::getppid();
            let group = libc::getpgid(parent);
            group > 0 && group != libc::getpgrp() && libc::getsid(parent) == libc::getsid(0)
        }
    }

    fn stop_self(&mut self) {
        // SAFETY: kill and getpid take no memory arguments. SIGSTOP cannot be
        // blocked: vigil stops here and goes on when continued.
        unsafe { libc::kill(libc::getpid(), libc::SIGSTOP) };
    }

    fn give_terminal(&mut self, pgid: i32) {
        spawn::give_terminal(pgid);
    }

    fn reclaim_terminal(&mut self, given_to: i32) {
        spawn::reclaim_terminal(given_to);
    }

    fn oom_kills(&self) -> u64 {
        self.oom.kills_since_start()
    }

    fn let_readers_catch_up(&mut self) {
        crate::logging::let_readers_catch_up();
    }
}
