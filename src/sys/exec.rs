//! Running a program in a new process: [`spawn`] forks, makes the new
//! process's steps and execs, all as a [`Plan`] made before the fork says.
//!
//! Everything the new process runs between its fork and its exec is in
//! this module, and it is only system calls: each one the C library's bare
//! wrapper (async-signal-safe, as signal-safety(7) lists them) or a raw
//! `syscall`, on memory the plan lends, of which the new process has its
//! own copy. No allocation, no lock, no std I/O, no formatting: a forked
//! copy of a process keeps only the thread that forked, and a lock any
//! other thread held then (the allocator's, stdio's) stays held in it for
//! ever. So `spawn` is sound in any process, whatever its threads: vigil
//! has one, but nothing here relies on it, and the unit tests, which run
//! in threads, call it as vigil does.
//!
//! Where nix's safe wrapper is that bare call and nothing more (no
//! allocation, no lock: `setsid`, `setpgid`, `tcsetpgrp`, `getpid`,
//! `fcntl(F_SETFD)`, `dup2_stdin`), the new process calls nix's. The rest
//! stay raw: nix's `fork` is an `unsafe fn` like the C library's, nix has
//! no `_exit`, its `execve` builds its pointer arrays on the heap, its
//! set*id calls are the C library's, which broadcast the change to every
//! thread (`sys::user`), and it wraps neither the kernel's full signal set
//! (`sys::signal`) nor the capability calls (`sys::caps`). The failure's
//! `write` is the C library's too: with a second caller here, the
//! size-optimised build stops inlining nix's `write` into the logger's,
//! whose every line pays for the call.
//!
//! The new process's steps, in order (`run_steps`), each tagged with the
//! [`Step`] that the exec-error pipe names when it fails:
//!
//! 1. its stdin replaced (hooks: /dev/null);
//! 2. a process group of its own, or a session (`--user`'s terminal rule);
//! 3. the terminal's foreground, when it is to take it;
//! 4. the signal mask and dispositions vigil was started with;
//! 5. `--caps`: the bounding set cut (it needs CAP_SETPCAP, which the
//!    switch gives up) and `PR_SET_KEEPCAPS`, so that the permitted set
//!    outlives the switch (`sys::caps::Narrow::before_switch`);
//! 6. `--user`: supplementary groups, gid, uid (each needs the privilege
//!    the next one gives up);
//! 7. `--caps`: `capset`, the ambient raise and the sets read back
//!    (`sys::caps::Narrow::after_switch`), last before exec;
//! 8. its own pid written into the environment entry that waits for it
//!    (socket activation's `LISTEN_PID`, [`OwnPid`]), which cannot fail;
//! 9. exec, trying the files a search of PATH found, as musl's `execvp`
//!    does.
//!
//! Where a new step goes: a step the new process makes as root goes
//! before the user switch, one that needs the new ids after it, and each
//! gets a `Step` of its own (its code is what the parent reads), a field
//! of `Plan` holding what it needs, prepared before the fork. A step about
//! one of several things (a capability, a set) says which in the
//! message's detail. A value known only once the new process exists goes
//! in an environment entry made before the fork with room for the longest
//! value, which the new process fills in before exec, as [`OwnPid`] does
//! for its pid.

use std::cell::UnsafeCell;
use std::ffi::{CStr, CString};
use std::marker::PhantomData;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::raw::c_char;

use libc::{gid_t, uid_t};
use nix::errno::Errno;
use nix::fcntl::{F_SETFD, FdFlag, fcntl};
use nix::unistd::{Pid, dup2_stdin, getpid, setpgid, setsid, tcsetpgrp};

use super::caps::Narrow;
use super::signal::{Disposition, set_disposition, set_mask};
pub use super::step::{Failed, MESSAGE, Step};
use super::user::{set_gid, set_groups, set_uid};

/// A NULL-terminated array of C strings, as execve takes argv and envp,
/// made before the fork: the strings are borrowed, and live as long as
/// the array.
pub struct CStrings<'a> {
    pointers: Vec<*const c_char>,
    strings: PhantomData<&'a CStr>,
}

impl<'a> CStrings<'a> {
    pub fn new(strings: impl IntoIterator<Item = &'a CStr>) -> CStrings<'a> {
        CStrings::ended(strings.into_iter().map(CStr::as_ptr).collect())
    }

    /// `pointers`, to strings that live as long as `'a`, and the NULL.
    fn ended(mut pointers: Vec<*const c_char>) -> CStrings<'a> {
        pointers.push(std::ptr::null());
        CStrings {
            pointers,
            strings: PhantomData,
        }
    }

    /// An environment: `strings`, with `own`'s entry in the place of the
    /// one of the same name (which the caller put there for it), or at
    /// the end when there is none.
    pub fn with_own_pid(
        strings: impl IntoIterator<Item = &'a CStr>,
        own: &'a OwnPid,
    ) -> CStrings<'a> {
        let mut placed = false;
        let mut pointers = Vec::new();
        for string in strings {
            let ours = !placed && own.names(string);
            placed |= ours;
            pointers.push(if ours { own.as_ptr() } else { string.as_ptr() });
        }
        if !placed {
            pointers.push(own.as_ptr());
        }
        CStrings::ended(pointers)
    }
}

/// The longest `NAME=PID` entry an [`OwnPid`] holds, its NUL included.
const OWN_PID_ENTRY: usize = 64;

/// The environment entry `NAME=PID` that gives the new process its own
/// pid (socket activation's `LISTEN_PID`), which only the new process
/// knows. It is made before the fork, `NAME=` and room for the longest
/// pid, and the new process writes its pid into its own copy (`getpid`,
/// the digits by hand, no allocation) as its last step before exec. The
/// environment array points at it, not at a copy (`CStrings::with_own_pid`).
pub struct OwnPid {
    /// Written in the new process through a shared reference: no Rust
    /// reference to the bytes exists while it writes (the environment
    /// array holds a raw pointer), and the parent's copy is never written.
    entry: UnsafeCell<[u8; OWN_PID_ENTRY]>,
    /// Where the pid goes: after `NAME=`.
    at: usize,
}

impl OwnPid {
    /// The entry for the variable `name`; None when the name is too long
    /// for the entry or holds `=` or a NUL.
    pub fn new(name: &str) -> Option<OwnPid> {
        let name = name.as_bytes();
        // The name, `=`, the longest pid (a u64 in decimal) and the NUL.
        let fits = name.len() + 1 + 20 < OWN_PID_ENTRY;
        if !fits || name.is_empty() || name.contains(&b'=') || name.contains(&0) {
            return None;
        }
        let mut entry = [0u8; OWN_PID_ENTRY];
        entry.get_mut(..name.len())?.copy_from_slice(name);
        *entry.get_mut(name.len())? = b'=';
        Some(OwnPid {
            entry: UnsafeCell::new(entry),
            at: name.len() + 1,
        })
    }

    fn as_ptr(&self) -> *const c_char {
        self.entry.get().cast()
    }

    /// Whether `string` is an entry of the same variable (`NAME=...`).
    fn names(&self, string: &CStr) -> bool {
        // SAFETY: only the new process writes the entry (`fill`), and this
        // runs in the parent, before the fork.
        let entry = unsafe { &*self.entry.get() };
        entry
            .get(..self.at)
            .is_some_and(|head| string.to_bytes().starts_with(head))
    }

    /// In the new process: writes `pid` after `NAME=`, then the NUL.
    fn fill(&self, pid: libc::pid_t) {
        let mut n = u64::try_from(pid).unwrap_or(0);
        let len = n.checked_ilog10().unwrap_or(0) as usize + 1;
        let entry = self.entry.get().cast::<u8>();
        for i in (0..len).rev() {
            // SAFETY: `at + len` is at most the name, `=` and 20 digits,
            // which `new` made sure leave room for the NUL in the entry;
            // the new process writes its own copy, and no reference to the
            // bytes is alive (see `entry`).
            unsafe { entry.add(self.at + i).write(b'0' + (n % 10) as u8) };
            n /= 10;
        }
        // SAFETY: as above, one past the last digit.
        unsafe { entry.add(self.at + len).write(0) };
    }
}

/// Where the new process stands among process groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// `setpgid(0, 0)`: a process group of its own, in vigil's session.
    Own,
    /// `setsid()`: a session of its own, without a controlling terminal
    /// (and so a process group of its own too).
    Session,
}

/// The signal state the new process puts back before its exec: the mask
/// vigil was started with, and the dispositions vigil changed for itself
/// as they were. Bit N-1 stands for signal N.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Signals {
    pub mask: u64,
    /// Set back to the default action.
    pub default: u64,
    /// Set back to ignored.
    pub ignore: u64,
}

/// The user the new process becomes (`--user`): its ids.
#[derive(Clone, Copy, Debug)]
pub struct User<'a> {
    pub groups: &'a [gid_t],
    pub gid: gid_t,
    pub uid: uid_t,
}

/// What the new process executes, as musl's `execvp` finds it (the search
/// itself is made before the fork, `spawn::program`).
#[derive(Clone, Copy, Debug)]
pub enum Program<'a> {
    /// A name with a slash: executed as it is, its error the answer.
    Path(&'a CStr),
    /// The files a name without a slash may be, one per directory of PATH,
    /// tried in turn: the search goes on past a file that is not there
    /// (ENOENT, ENOTDIR) or may not be executed (EACCES, the answer if
    /// nothing else is found), and stops at any other error, which is the
    /// answer; ENOENT when none is left.
    Search(&'a [CString]),
    /// Nothing to try (an empty name is ENOENT, one longer than NAME_MAX
    /// ENAMETOOLONG): the exec step fails with this.
    Fails(Errno),
}

/// Everything the new process does, fixed before the fork.
pub struct Plan<'a> {
    pub program: Program<'a>,
    pub argv: &'a CStrings<'a>,
    /// A copy of vigil's own environment, with additions and removals.
    pub env: &'a CStrings<'a>,
    /// Made the process's stdin (hooks: /dev/null).
    pub stdin: Option<BorrowedFd<'a>>,
    pub group: Group,
    /// A terminal whose foreground the new process group takes (vigil's
    /// stdin, when it gives its child the terminal).
    pub terminal: Option<BorrowedFd<'a>>,
    pub signals: Signals,
    /// `--user`: the ids to take, last before exec.
    pub user: Option<User<'a>>,
    /// `--caps`: the capabilities to hold, around the ids' switch.
    pub caps: Option<Narrow>,
    /// The entry of `env` that the new process fills in with its own pid.
    pub own_pid: Option<&'a OwnPid>,
}

/// A new process, as far as the fork goes: it runs its steps and execs,
/// or exits with the status its failed step gives after writing a
/// [`MESSAGE`] on the write end of `report`. The read end is here: it
/// comes to its end without a message when the exec succeeded (the write
/// end is close-on-exec), and vigil holds no other copy of the write end.
#[derive(Debug)]
pub struct Started {
    pub pid: i32,
    pub report: OwnedFd,
}

/// A call of vigil's own that failed before the program could run, and
/// its error: here `pipe2` or `fork`, no new process made; `spawn` says
/// a step of the new process before exec the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotStarted {
    pub call: &'static str,
    pub error: Errno,
}

/// Runs `plan` in a new process.
pub fn spawn(plan: &Plan<'_>) -> Result<Started, NotStarted> {
    let (report_read, report_write) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|error| NotStarted {
            call: "pipe2",
            error,
        })?;
    // SAFETY: the new process runs `in_child` alone, which makes only
    // async-signal-safe system calls on memory prepared before the fork
    // (see the module's documentation) and ends in exec or _exit; so it is
    // sound whatever the threads of the calling process held at the fork.
    match unsafe { libc::fork() } {
        -1 => Err(NotStarted {
            call: "fork",
            error: Errno::last(),
        }),
        0 => in_child(plan, report_write.as_fd()),
        pid => {
            // The write end must be closed here, or the read end would
            // never see the end of the pipe that exec brings.
            drop(report_write);
            Ok(Started {
                pid,
                report: report_read,
            })
        }
    }
}

/// What a failed new process wrote. Both ends are the same program, so
/// the step is always one of `Step`'s; any other would be read as exec's.
pub fn decode(message: &[u8; MESSAGE]) -> Failed {
    let [s0, s1, s2, s3, e0, e1, e2, e3, d0, d1, d2, d3] = *message;
    Failed {
        step: Step::from_code(u32::from_ne_bytes([s0, s1, s2, s3])).unwrap_or(Step::Exec),
        errno: Errno::from_raw(i32::from_ne_bytes([e0, e1, e2, e3])),
        detail: u32::from_ne_bytes([d0, d1, d2, d3]),
    }
}

fn encode(failed: Failed) -> [u8; MESSAGE] {
    let [s0, s1, s2, s3] = (failed.step as u32).to_ne_bytes();
    let [e0, e1, e2, e3] = (failed.errno as i32).to_ne_bytes();
    let [d0, d1, d2, d3] = failed.detail.to_ne_bytes();
    [s0, s1, s2, s3, e0, e1, e2, e3, d0, d1, d2, d3]
}

/// The new process: each step, then exec; on a failure, the message to
/// the parent on `report` and `_exit` with the status of that failure.
fn in_child(plan: &Plan<'_>, report: BorrowedFd<'_>) -> ! {
    let failed = match run_steps(plan) {
        Err(failed) => failed,
        Ok(()) => Failed::at(Step::Exec)(exec(plan)),
    };
    let message = encode(failed);
    // If the message cannot be written, the exit status still says what
    // happened.
    loop {
        // SAFETY: write reads MESSAGE bytes from `message`, which is live;
        // `report` is the pipe's write end, open in this process.
        let written = unsafe { libc::write(report.as_raw_fd(), message.as_ptr().cast(), MESSAGE) };
        if written >= 0 || Errno::last() != Errno::EINTR {
            break;
        }
    }
    // SAFETY: _exit takes an integer and ends the process at once, without
    // running exit handlers or flushing the stdio buffers the fork copied.
    unsafe { libc::_exit(failed.step.status(failed.errno)) }
}

/// The steps before exec, in order; the one that failed, with its error.
fn run_steps(plan: &Plan<'_>) -> Result<(), Failed> {
    let failed = Failed::at;
    if let Some(stdin) = plan.stdin {
        make_stdin(stdin).map_err(failed(Step::Stdin))?;
    }
    match plan.group {
        Group::Session => setsid().map(drop).map_err(failed(Step::Session))?,
        Group::Own => setpgid(Pid::from_raw(0), Pid::from_raw(0)).map_err(failed(Step::Group))?,
    }
    if let Some(terminal) = plan.terminal {
        // Not a step that can fail: ENOTTY and ENXIO are fine, there often
        // is no terminal. SIGTTOU, which a background group's tcsetpgrp
        // raises, is still blocked and ignored here (vigil's own state,
        // until the signals are put back below).
        let _ = tcsetpgrp(terminal, getpid());
    }
    restore_signals(plan.signals).map_err(failed(Step::Signals))?;
    switch_user(plan.user, plan.caps)?;
    if let Some(own) = plan.own_pid {
        own.fill(getpid().as_raw());
    }
    Ok(())
}

/// `--user`'s ids, with `--caps` around them: supplementary groups, gid
/// and uid (each needs the privilege the next one gives up) between the
/// two halves of the capabilities' steps. Bare system calls, for the new
/// process, or for vigil itself when it takes its child's identity
/// (`user::Switch::follow`).
pub fn switch_user(user: Option<User<'_>>, caps: Option<Narrow>) -> Result<(), Failed> {
    let failed = Failed::at;
    if let Some(caps) = caps {
        caps.before_switch()?;
    }
    if let Some(ids) = user {
        set_groups(ids.groups).map_err(failed(Step::Groups))?;
        set_gid(ids.gid).map_err(failed(Step::Gid))?;
        set_uid(ids.uid).map_err(failed(Step::Uid))?;
    }
    match caps {
        Some(caps) => caps.after_switch(),
        None => Ok(()),
    }
}

/// Makes `fd` the process's stdin. `fd` is close-on-exec; its copy on
/// descriptor 0 is not. `fd` is 0 itself only when vigil was started
/// without a stdin and could not hold its number (`sys::fd`): dup2 would
/// then do nothing and leave it close-on-exec, so the flag is cleared
/// instead.
fn make_stdin(fd: BorrowedFd<'_>) -> Result<(), Errno> {
    if fd.as_raw_fd() == libc::STDIN_FILENO {
        return fcntl(fd, F_SETFD(FdFlag::empty())).map(drop);
    }
    loop {
        match dup2_stdin(fd) {
            Err(Errno::EINTR) => {}
            done => return done,
        }
    }
}

/// Puts back the dispositions, then the mask: while they change, every
/// signal is still blocked.
fn restore_signals(signals: Signals) -> Result<(), Errno> {
    for (disposition, set) in [
        (Disposition::Default, signals.default),
        (Disposition::Ignore, signals.ignore),
    ] {
        for signal in 1..=64 {
            if set & 1 << (signal - 1) != 0 {
                set_disposition(signal, disposition)?;
            }
        }
    }
    set_mask(signals.mask).map(drop)
}

/// `execve(path, argv, env)`; returns only when it failed, with the error.
///
/// Raw, not nix's `execve`, which builds its pointer arrays on the heap.
fn execve(path: &CStr, argv: &CStrings<'_>, env: &CStrings<'_>) -> Errno {
    // SAFETY: `path` is a NUL-terminated string; argv and env are
    // NULL-terminated arrays of NUL-terminated strings (`CStrings`, whose
    // strings they borrow), all alive here. execve returns only when it
    // failed, and then changed nothing.
    unsafe { libc::execve(path.as_ptr(), argv.pointers.as_ptr(), env.pointers.as_ptr()) };
    Errno::last()
}

/// The exec step: the program's file, or each candidate of the search in
/// turn (`Program`). glibc's `execvp` runs a file without `#!` with
/// `/bin/sh` itself; this does not, on any build: the caller does it
/// (`spawn::spawn`), so both C libraries' builds behave the same. Returns
/// only on failure, with the error.
fn exec(plan: &Plan<'_>) -> Errno {
    let candidates = match plan.program {
        Program::Path(file) => return execve(file, plan.argv, plan.env),
        Program::Fails(errno) => return errno,
        Program::Search(candidates) => candidates,
    };
    let mut seen_eacces = false;
    for file in candidates {
        match execve(file, plan.argv, plan.env) {
            Errno::EACCES => seen_eacces = true,
            Errno::ENOENT | Errno::ENOTDIR => {}
            other => return other,
        }
    }
    if seen_eacces {
        Errno::EACCES
    } else {
        Errno::ENOENT
    }
}
