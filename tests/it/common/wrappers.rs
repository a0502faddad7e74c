//! Starting vigil as PID 1 of a new PID namespace behind a shell that first
//! arranges something: a mount, a redirection, no /proc. The shell ends with
//! `exec "$@"`, so that vigil takes its place.

use super::Vigil;

/// The wrapper `unshare OPTS -- sh -c SCRIPT sh` (vigil's path and
/// arguments follow): SCRIPT sets something up in the namespaces OPTS made
/// and ends with `exec "$@"`, so vigil is PID 1 with whatever SCRIPT
/// arranged.
pub fn unshare_sh<'a>(opts: &[&'a str], script: &'a str) -> Vec<&'a str> {
    let mut prefix = vec!["unshare"];
    prefix.extend_from_slice(opts);
    prefix.extend_from_slice(&["--", "sh", "-c", script, "sh"]);
    prefix
}

/// vigil as PID 1 of a new PID namespace (with its own /proc), started
/// through `sh -c SCRIPT` (see `unshare_sh`).
pub fn pid1_via_sh(script: &str) -> Vigil {
    Vigil::wrapped(&unshare_sh(&["--pid", "--fork", "--mount-proc"], script))
}

/// `pid1_via_sh` in a private mount namespace too, for a SCRIPT that mounts.
pub fn pid1_via_sh_with_mounts(script: &str) -> Vigil {
    Vigil::wrapped(&unshare_sh(
        &["--mount", "--pid", "--fork", "--mount-proc"],
        script,
    ))
}

/// The /proc tests' SCRIPT: vigil starts with no /proc at all.
pub const UMOUNT_PROC: &str = "umount -l /proc && exec \"$@\"";
