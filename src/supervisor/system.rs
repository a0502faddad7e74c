//! Everything the supervisor does to the world, behind one small trait: the
//! clock, the signalfd, signals and processes, spawning. The state machine
//! only ever reaches the kernel through `System`, so its transitions can be
//! driven and checked in unit tests without forking (`tests.rs` has a fake);
//! `Os` is the real thing. The trait is used generically, never as a
//! `dyn`, so the real build pays nothing for it.

use std::io;
use std::time::{Duration, Instant};

use std::os::fd::AsFd;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::inotify::Inotify;
use nix::unistd::{getpgid, getpgrp, getpid, getppid, getsid};

use crate::caps::Narrowing;
use crate::cgroup::Memory;
use crate::facts::MemoryEvents;
use crate::facts::{Proc, Received};
use crate::procs::{self, Role};
use crate::reap::{self, Next};
use crate::signals::{self, Inherited, SignalFd, Target};
use crate::spawn::{self, Spawn, SpawnError};
use crate::user::Switch;

/// What woke the loop.
#[derive(Clone, Copy, Debug)]
pub enum Woken {
    Signal(Received),
    /// The kernel changed the memory cgroup's `memory.events`.
    Memory,
}

pub trait System {
    /// The monotonic clock.
    fn now(&self) -> Instant;
    /// Waits for the next signal, or a change of the memory cgroup's
    /// events when they are watched: at most `timeout` (`Ok(None)` when it
    /// passed first), or for as long as it takes when `None`.
    fn next_event(&mut self, timeout: Option<Duration>) -> io::Result<Option<Woken>>;
    /// Sleeps: the loop's pace once signals can no longer be read.
    fn sleep(&mut self, duration: Duration);
    /// Sends one signal; whether it reached the target (a target that is
    /// gone already counts: it is not an error).
    fn send(&mut self, target: Target, signal: i32) -> bool;
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
    /// What vigil's memory cgroup counted since vigil started.
    fn memory_events(&self) -> MemoryEvents;
    /// At exit: lets whoever reads vigil's output pipes catch up.
    fn let_readers_catch_up(&mut self);
}

/// The real world.
pub struct Os {
    pub role: Role,
    pub signals: SignalFd,
    pub inherited: Inherited,
    pub memory: Option<Memory>,
    /// `memory.events`, watched (cgroup v2, with a termination log to
    /// keep up to date).
    pub memory_watch: Option<Inotify>,
    /// `--user` and `--caps`: the hooks run as the child does.
    pub user: Option<Switch>,
    pub caps: Option<Narrowing>,
    /// vigil's own variables, which the hooks do not inherit.
    pub unset: Vec<&'static str>,
}

/// How many times in a row a failed wait is tried again before it counts.
const READ_TRIES: u32 = 2;

impl Os {
    /// One wait for a signal or a memory event (`System::next_event`).
    fn wait_once(&mut self, timeout: Option<Duration>) -> io::Result<Option<Woken>> {
        let Some(watch) = &self.memory_watch else {
            return Ok(self.signals.wait(timeout)?.map(Woken::Signal));
        };
        // Rounded up, so that a deadline is never polled for a little early
        // over and over.
        let wait = match timeout {
            None => PollTimeout::NONE,
            Some(t) => {
                PollTimeout::try_from(t.as_micros().div_ceil(1000)).unwrap_or(PollTimeout::MAX)
            }
        };
        let mut fds = [
            PollFd::new(self.signals.as_fd(), PollFlags::POLLIN),
            PollFd::new(watch.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, wait) {
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
        let ready = |fd: &PollFd| fd.revents().is_some_and(|r| !r.is_empty());
        let [signal, memory] = &fds;
        let (signal, memory) = (ready(signal), ready(memory));
        if signal {
            // Readable: the read does not block.
            return Ok(self.signals.wait(None)?.map(Woken::Signal));
        }
        if !memory {
            return Ok(None);
        }
        // Each change is an event; what changed is read from the file. A
        // watch that fails to be read (the cgroup was removed) is dropped,
        // rather than woken for again and again.
        loop {
            match watch.read_events() {
                Ok(events) if !events.is_empty() => continue,
                Ok(_) | Err(nix::errno::Errno::EAGAIN) => break,
                Err(_) => {
                    self.memory_watch = None;
                    break;
                }
            }
        }
        Ok(Some(Woken::Memory))
    }
}

impl System for Os {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn next_event(&mut self, timeout: Option<Duration>) -> io::Result<Option<Woken>> {
        // A failure is tried again before it counts: one failed read (a
        // fault the kernel reports once) must not stop the container; a
        // signalfd that fails every time does, in the supervisor.
        let mut tries = 0;
        loop {
            match self.wait_once(timeout) {
                Err(_) if tries < READ_TRIES => tries += 1,
                done => return done,
            }
        }
    }

    fn sleep(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }

    fn send(&mut self, target: Target, signal: i32) -> bool {
        signals::send(target, signal)
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
        let spec = Spawn {
            unset: &self.unset,
            ..spec
        };
        spawn::spawn(spec, self.inherited, self.user.as_ref(), self.caps.as_ref())
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
        getppid().as_raw()
    }

    fn job_control_above(&self) -> bool {
        if self.role == Role::Pid1 {
            return false;
        }
        let parent = getppid();
        let session = |pid| getsid(pid).ok();
        getpgid(Some(parent)).is_ok_and(|group| group.as_raw() > 0 && group != getpgrp())
            && session(Some(parent)) == session(None)
    }

    fn stop_self(&mut self) {
        // SIGSTOP cannot be blocked: vigil stops here and goes on when
        // continued.
        let _ = nix::sys::signal::kill(getpid(), nix::sys::signal::Signal::SIGSTOP);
    }

    fn give_terminal(&mut self, pgid: i32) {
        spawn::give_terminal(pgid);
    }

    fn reclaim_terminal(&mut self, given_to: i32) {
        spawn::reclaim_terminal(given_to);
    }

    fn memory_events(&self) -> MemoryEvents {
        self.memory
            .as_ref()
            .map_or(MemoryEvents::default(), Memory::events)
    }

    fn let_readers_catch_up(&mut self) {
        crate::logging::let_readers_catch_up();
    }
}
