//! fork, and what the forked process calls to exec or to give up: made
//! on memory prepared before the fork, without allocating.

use std::ffi::CStr;
use std::marker::PhantomData;
use std::os::raw::c_char;

use nix::errno::Errno;
use nix::unistd::ForkResult;

/// Forks vigil.
pub fn fork() -> nix::Result<ForkResult> {
    // SAFETY: vigil runs one thread (see the module `sys`), so the forked
    // process is a whole copy of it, in which no lock or half-done update
    // belongs to a thread that is not there: whatever it runs is as sound
    // as it is in vigil. (What it runs, `spawn::forkexec`, keeps to system
    // calls on memory made before the fork anyway.)
    unsafe { nix::unistd::fork() }
}

/// A NULL-terminated array of C strings, as execve takes argv and envp,
/// made before the fork: the strings are borrowed, and live as long as
/// the array.
pub struct CStrings<'a> {
    pointers: Vec<*const c_char>,
    strings: PhantomData<&'a CStr>,
}

impl<'a> CStrings<'a> {
    pub fn new(strings: impl IntoIterator<Item = &'a CStr>) -> CStrings<'a> {
        let mut pointers: Vec<*const c_char> = strings.into_iter().map(CStr::as_ptr).collect();
        pointers.push(std::ptr::null());
        CStrings {
            pointers,
            strings: PhantomData,
        }
    }
}

/// The environment a program is executed with.
#[derive(Clone, Copy)]
pub enum Environment<'a> {
    /// vigil's own, as it is (`environ`).
    Own,
    Given(&'a CStrings<'a>),
}

/// `execve(path, argv, env)`; returns only when it failed, with the error.
///
/// Raw, not nix's `execve`, which builds its pointer arrays on the heap:
/// here it runs in the forked process, where vigil allocates nothing.
pub fn execve(path: &CStr, argv: &CStrings<'_>, env: Environment<'_>) -> Errno {
    let envp = match env {
        Environment::Own => super::env::own_environment(),
        Environment::Given(entries) => entries.pointers.as_ptr(),
    };
    // SAFETY: `path` is a NUL-terminated string; argv and envp are
    // NULL-terminated arrays of NUL-terminated strings (`CStrings`, whose
    // strings it borrows, or the C library's `environ`), all alive here.
    // execve returns only when it failed, and then changed nothing.
    unsafe { libc::execve(path.as_ptr(), argv.pointers.as_ptr(), envp) };
    Errno::last()
}

/// Ends the forked process at once with `status`.
///
/// Raw `_exit`: nix has none, and std's `exit` would run the C library's
/// exit handlers and flush stdio buffers, vigil's, copied by the fork.
pub fn exit_now(status: i32) -> ! {
    // SAFETY: _exit takes an integer and ends the process without running
    // anything of vigil's.
    unsafe { libc::_exit(status) }
}

/// For the unit tests, which run in threads: `command` runs `in_child`
/// between its fork and its exec.
///
/// The tests pass only closures that make raw system calls on memory made
/// before the fork (`Switch::apply_in_child`): nothing that allocates or
/// takes a lock another thread may have held at the fork.
#[cfg(test)]
pub fn pre_exec(
    command: &mut std::process::Command,
    in_child: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static,
) {
    use std::os::unix::process::CommandExt;
    // SAFETY: see above: the closures are async-signal-safe.
    unsafe {
        command.pre_exec(in_child);
    }
}
