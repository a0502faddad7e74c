//! What the C library hands vigil at start: the arguments of its C `main`,
//! and the environment (`environ`), read as it is, bytes and order.
//!
//! std's `env::vars_os` copies the environment and leaves out entries
//! without `=`; vigil passes its environment on to its child as it got it,
//! so it reads the C library's own array.

use std::ffi::CStr;
use std::os::raw::c_char;

unsafe extern "C" {
    /// The C library's NULL-terminated array of `NAME=VALUE` strings.
    static environ: *const *const c_char;
}

/// The program's entry point, called by the C library's start-up code
/// (main.rs says why vigil has its own): hands the arguments to `run`.
#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(argc: libc::c_int, argv: *const *const c_char) -> libc::c_int {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    let count = usize::try_from(argc).unwrap_or(0);
    let args: Vec<OsString> = (0..count)
        .map(|i| {
            // SAFETY: the C runtime passes `argc` pointers in `argv`, each a
            // NUL-terminated string that lives as long as the process.
            let arg = unsafe { CStr::from_ptr(*argv.add(i)) };
            OsString::from_vec(arg.to_bytes().to_vec())
        })
        .collect();
    crate::run(args)
}

/// The C library's `environ`, for execve.
pub(super) fn own_environment() -> *const *const c_char {
    // SAFETY: reads the pointer itself. vigil never changes its own
    // environment (see the module `sys`), so it stays what it was at start.
    unsafe { environ }
}

/// vigil's environment, each entry as the C library has it (normally
/// `NAME=VALUE`), in its order.
pub fn entries() -> Entries {
    Entries {
        next: own_environment(),
    }
}

/// An iterator over the environment's entries (`entries`).
pub struct Entries {
    next: *const *const c_char,
}

impl Iterator for Entries {
    /// The entries live as long as the process: vigil never changes its
    /// environment, so the C library never replaces or frees them.
    type Item = &'static CStr;

    fn next(&mut self) -> Option<&'static CStr> {
        // SAFETY: `next` is null (no environment at all) or points into
        // the NULL-terminated `environ` array, at or before its end, which
        // stays as it is (vigil never changes its environment).
        let text = *unsafe { self.next.as_ref() }?;
        if text.is_null() {
            return None;
        }
        // SAFETY: this entry was not the NULL end, so the next one exists.
        self.next = unsafe { self.next.add(1) };
        // SAFETY: each entry is a NUL-terminated string that lives, unchanged,
        // as long as the process.
        Some(unsafe { CStr::from_ptr(text) })
    }
}
