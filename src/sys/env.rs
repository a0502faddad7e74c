//! What the C library hands vigil at start: the arguments of its C `main`,
//! and the environment (`environ`), read as it is, bytes and order.
//!
//! std's `env::vars_os` copies the environment and leaves out entries
//! without `=`; vigil passes its environment on to its child as it got it,
//! so it reads the C library's own array.
//!
//! The array and its strings are lent out for as long as the process runs
//! (`&'static CStr`), which is sound because nothing in vigil changes its
//! environment, and the compiler holds the code to that: every way to
//! change it (`std::env::set_var` and `remove_var`, unsafe since edition
//! 2024; the C library's `setenv`, `unsetenv`, `putenv`, `clearenv`; a
//! write through `environ`) is unsafe, lib.rs denies unsafe code outside
//! `sys`, and nothing in `sys` makes any of them (a unit test below holds
//! it to that). The C library replaces or frees the array and its strings
//! only in those calls. The environments of the processes vigil starts
//! are copies (`spawn`).

use std::ffi::CStr;
use std::os::raw::c_char;

unsafe extern "C" {
    /// The C library's NULL-terminated array of `NAME=VALUE` strings.
    static environ: *const *const c_char;
}

/// The program's entry point, called by the C library's start-up code
/// (src/main.rs says why vigil has its own): hands the arguments to `run`.
#[cfg(not(any(test, fuzzing)))]
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

/// vigil's environment, each entry as the C library has it (normally
/// `NAME=VALUE`), in its order. The entries live as long as the process:
/// nothing changes the environment (see the module's documentation), so
/// the C library never replaces or frees them.
pub fn entries() -> impl Iterator<Item = &'static CStr> {
    // SAFETY: reads the pointer itself, which nothing changes (see the
    // module's documentation): it stays what it was at start.
    let mut next: *const *const c_char = unsafe { environ };
    std::iter::from_fn(move || {
        // SAFETY: `next` is null (no environment at all) or points into
        // the NULL-terminated `environ` array, at or before its end, which
        // stays as it is (nothing changes the environment).
        let text = *unsafe { next.as_ref() }?;
        if text.is_null() {
            return None;
        }
        // SAFETY: this entry was not the NULL end, so the next one exists.
        next = unsafe { next.add(1) };
        // SAFETY: each entry is a NUL-terminated string that lives, unchanged,
        // as long as the process.
        Some(unsafe { CStr::from_ptr(text) })
    })
}

/// The path vigil's own program was executed by (`AT_EXECFN`, which the
/// kernel puts among the process's start-up values): the file `execve`
/// opened, found without /proc. `None` when the kernel gave none.
pub fn exec_path() -> Option<&'static CStr> {
    // SAFETY: getauxval reads the auxiliary vector the C library kept at
    // start, and takes an integer.
    let at = unsafe { libc::getauxval(libc::AT_EXECFN) };
    let text = at as *const c_char;
    if text.is_null() {
        return None;
    }
    // SAFETY: AT_EXECFN points to a NUL-terminated string the kernel wrote
    // on the process's initial stack, above anything the program uses, so
    // it lives, unchanged, as long as the process.
    Some(unsafe { CStr::from_ptr(text) })
}

#[cfg(test)]
mod tests {
    /// Nothing in `sys`, the one module where unsafe code is allowed,
    /// changes the environment, which `entries` lends out for ever: no
    /// line of its code (comments aside) names a call that would. (The
    /// names are put together here, so that this code does not name them
    /// itself.)
    #[test]
    fn nothing_in_sys_changes_the_environment() {
        let calls = [
            ["set", "_var"],
            ["remove", "_var"],
            ["set", "env"],
            ["unset", "env"],
            ["put", "env"],
            ["clear", "env"],
            ["environ", " ="],
        ]
        .map(|parts| parts.concat());
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sys");
        let mut files = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            files += 1;
            let code = text.lines().filter(|l| !l.trim_start().starts_with("//"));
            for line in code {
                for call in &calls {
                    assert!(!line.contains(call.as_str()), "{}: {line}", path.display());
                }
            }
        }
        assert!(files >= 8, "only {files} files in {}", dir.display());
    }
}
