//! Everything the supervisor does to the world, behind one small trait: the
//! clock, waiting for signals, signals and processes, spawning. The state machine
//! only ever reaches the kernel through `System`, so its transitions can be
//! driven and checked in unit tests without forking (`tests.rs` has a fake);
//! `Os` is the real thing. The trait is used generically, never as a
//! `dyn`, so the real build pays nothing for it.

use std::io;
use std::time::{Duration, Instant};

use std::os::fd::AsFd;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::inotify::Inotify;
use nix::unistd::{Pid, getpgid, getpgrp, getpid, getppid, getsid};

use crate::caps::Narrowing;
use crate::cgroup::Memory;
use crate::log::facts::{MemoryEvents, Proc, Received, Signal, Target};
use crate::notify::Notifier;
use crate::probe::{Attempt, Outcome, Unhealthy, Url};
use crate::procs::{self, Role};
use crate::reap::{self, Next};
use crate::signals::{self, Inherited, SignalFd};
use crate::spawn::{self, Spawn, SpawnError};
use crate::user::Switch;

/// What woke the loop.
#[derive(Clone, Copy, Debug)]
pub enum Woken {
    Signal(Received),
    /// The kernel changed the memory cgroup's `memory.events`.
    Memory,
    /// The readiness probe's socket is ready for its next step.
    Probe,
}

/// A notification sent to the service manager (`$NOTIFY_SOCKET`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notified {
    /// The socket, as `$NOTIFY_SOCKET` names it.
    pub socket: String,
    /// Why it could not be sent.
    pub error: Option<String>,
}

pub trait System {
    /// The monotonic clock.
    fn now(&self) -> Instant;
    /// Waits for the next signal, a change of the memory cgroup's events
    /// when they are watched, or the readiness probe's socket while one is
    /// in flight: at most `timeout` (`Ok(None)` when it passed first), or
    /// for as long as it takes when `None`.
    fn next_event(&mut self, timeout: Option<Duration>) -> io::Result<Option<Woken>>;
    /// Sleeps: the loop's pace once signals can no longer be read.
    fn sleep(&mut self, duration: Duration);
    /// Sends one signal; whether it reached the target (a target that is
    /// gone already counts: it is not an error).
    fn send(&mut self, target: Target, signal: Signal) -> bool;
    /// Sends `signals` to every process vigil answers for, and to the
    /// `known` groups; returns the processes /proc listed.
    fn signal_all(&mut self, signals: &[Signal], known: &[Target]) -> Vec<Proc>;
    /// Whether vigil can reach every process it answers for: as PID 1
    /// always, `kill(-1)` reaching them even unlisted; otherwise only with
    /// /proc.
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
    fn spawn(&mut self, spec: Spawn<'_>) -> Result<Pid, SpawnError>;
    /// A process's name for the log and the report (a signal's sender),
    /// from /proc, if it is still there.
    fn name(&self, pid: Pid) -> Option<String>;
    /// The processes vigil answers for that still run, with their state.
    fn running(&self) -> Vec<procs::Running>;
    /// Whether vigil has a controlling terminal (whose driver may signal
    /// vigil's group: Ctrl-C after `fg`).
    fn has_terminal(&self) -> bool;
    /// vigil's parent right now.
    fn parent(&self) -> Pid;
    /// Whether a job-control shell above vigil could resume it if it
    /// stopped: vigil is not PID 1, and its parent sits in another process
    /// group of the same session (a shell that put vigil in a job of its
    /// own). A non-interactive `sh -c` shares vigil's group; a container
    /// runtime is outside the namespace.
    fn job_control_above(&self) -> bool;
    /// Job control: stop vigil itself (the child was stopped by Ctrl-Z).
    fn stop_self(&mut self);
    /// Gives the terminal to `pgid`, if vigil holds it.
    fn give_terminal(&mut self, pgid: Pid);
    /// What vigil's memory cgroup counted since vigil started.
    fn memory_events(&self) -> MemoryEvents;
    /// Begins a readiness probe of `url`: its outcome when it is over
    /// at once; otherwise its socket joins the wait (`Woken::Probe`).
    fn probe_start(&mut self, url: &Url) -> Option<Outcome>;
    /// The probe's socket is ready: its next step; its outcome when it is
    /// over.
    fn probe_step(&mut self) -> Option<Outcome>;
    /// Ends the probe in flight, if any (it ran out of time after `after`,
    /// or is no longer wanted); what it was still waiting for.
    fn probe_cancel(&mut self, after: Duration) -> Option<Unhealthy>;
    /// Sends `message` to the service manager; `None` when
    /// `$NOTIFY_SOCKET` named none.
    fn notify(&mut self, message: &str) -> Option<Notified>;
}

/// The real world.
pub struct Os {
    pub role: Role,
    pub memory: Option<Memory>,
    /// `memory.events`, watched (cgroup v2, with a termination log to
    /// keep up to date).
    pub memory_watch: Option<Inotify>,
    /// `--user` and `--caps`: the hooks run as the child does.
    pub user: Option<Switch>,
    pub caps: Option<Narrowing>,
    /// vigil's own variables, and under socket activation `LISTEN_*`,
    /// which the hooks do not inherit.
    pub unset: Vec<&'static str>,
    /// `$NOTIFY_SOCKET`, with `--ready-when`.
    pub notifier: Option<Notifier>,
    /// The readiness probe in flight.
    pub probe: Option<Attempt>,
    pub signals: SignalFd,
    pub inherited: Inherited,
}

/// How many times in a row a failed wait is tried again before it counts.
const READ_TRIES: u32 = 2;

impl Os {
    /// One wait for a signal, a memory event or the probe's socket
    /// (`System::next_event`).
    fn wait_once(&mut self, timeout: Option<Duration>) -> io::Result<Option<Woken>> {
        if self.memory_watch.is_none() && self.probe.is_none() {
            return Ok(self.signals.wait(timeout)?.map(Woken::Signal));
        }
        self.poll_once(timeout)
    }

    /// `wait_once` with other descriptors to watch than the signals'. Not
    /// inlined: the optimiser would work out this poll's timeout on every
    /// signal-only wait too.
    #[inline(never)]
    fn poll_once(&mut self, timeout: Option<Duration>) -> io::Result<Option<Woken>> {
        // Rounded up, so that a deadline is never polled for a little early
        // over and over.
        let wait = match timeout {
            None => PollTimeout::NONE,
            Some(t) => {
                PollTimeout::try_from(t.as_micros().div_ceil(1000)).unwrap_or(PollTimeout::MAX)
            }
        };
        let (signal, memory, probe) = {
            // The signalfd, then those of the others that are there (the
            // unused places hold the signalfd again and are not polled).
            let signals = || PollFd::new(self.signals.as_fd(), PollFlags::POLLIN);
            let mut fds = [signals(), signals(), signals()];
            let mut n = 1;
            let others = [
                self.memory_watch
                    .as_ref()
                    .map(|w| (w.as_fd(), PollFlags::POLLIN)),
                self.probe.as_ref().and_then(Attempt::waits_for),
            ];
            for (fd, events) in others.into_iter().flatten() {
                if let Some(slot) = fds.get_mut(n) {
                    *slot = PollFd::new(fd, events);
                    n += 1;
                }
            }
            let fds = fds.get_mut(..n).unwrap_or_default();
            match poll(fds, wait) {
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => return Ok(None),
                Err(e) => return Err(e.into()),
            }
            let ready = |i: usize| {
                fds.get(i)
                    .and_then(PollFd::revents)
                    .is_some_and(|r| !r.is_empty())
            };
            let memory_at = usize::from(self.memory_watch.is_some());
            (
                ready(0),
                self.memory_watch.is_some() && ready(memory_at),
                self.probe.is_some() && ready(memory_at + 1),
            )
        };
        if signal {
            // Pending: taken without waiting.
            return Ok(self.signals.wait(Some(Duration::ZERO))?.map(Woken::Signal));
        }
        if probe {
            return Ok(Some(Woken::Probe));
        }
        let Some(watch) = self.memory_watch.as_ref().filter(|_| memory) else {
            return Ok(None);
        };
        // Each change is an event; what changed is read from the file. One
        // read per wake-up, as for every descriptor of the loop: changes
        // that keep coming wake it again, after a look at the signals. A
        // watch that fails to be read (the cgroup was removed) is dropped,
        // rather than woken for again and again.
        if let Err(e) = watch.read_events()
            && e != nix::errno::Errno::EAGAIN
        {
            self.memory_watch = None;
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
        // wait that fails every time does, in the supervisor.
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

    fn send(&mut self, target: Target, signal: Signal) -> bool {
        signals::send(target, signal)
    }

    fn signal_all(&mut self, signals: &[Signal], known: &[Target]) -> Vec<Proc> {
        procs::signal_all(self.role, signals, known)
    }

    fn can_reach_all(&self) -> bool {
        self.role == Role::Pid1 || procs::available()
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

    fn spawn(&mut self, spec: Spawn<'_>) -> Result<Pid, SpawnError> {
        let spec = Spawn {
            unset: &self.unset,
            ..spec
        };
        spawn::spawn(spec, self.inherited, self.user.as_ref(), self.caps.as_ref())
    }

    fn name(&self, pid: Pid) -> Option<String> {
        procs::name(pid)
    }

    fn running(&self) -> Vec<procs::Running> {
        procs::running(self.role)
    }

    fn has_terminal(&self) -> bool {
        spawn::has_terminal()
    }

    fn parent(&self) -> Pid {
        getppid()
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

    fn give_terminal(&mut self, pgid: Pid) {
        spawn::give_terminal(pgid);
    }

    fn memory_events(&self) -> MemoryEvents {
        self.memory
            .as_ref()
            .map_or(MemoryEvents::default(), Memory::events)
    }

    fn probe_start(&mut self, url: &Url) -> Option<Outcome> {
        self.probe = Some(Attempt::new(url));
        self.probe_step()
    }

    fn probe_step(&mut self) -> Option<Outcome> {
        let outcome = self.probe.as_mut()?.step();
        if outcome.is_some() {
            self.probe = None;
        }
        outcome
    }

    fn probe_cancel(&mut self, after: Duration) -> Option<Unhealthy> {
        self.probe.take().map(|attempt| attempt.timed_out(after))
    }

    fn notify(&mut self, message: &str) -> Option<Notified> {
        let notifier = self.notifier.as_ref()?;
        Some(Notified {
            socket: notifier.socket.clone(),
            error: notifier
                .send(message)
                .err()
                .map(|e| crate::text::os_error(&e)),
        })
    }
}
