//! `--user USER[:GROUP]`: whom the child and the hooks run as.
//!
//! Images put gosu (or su-exec, or setpriv) under tini to run their program
//! as a non-root user. vigil does both jobs, so a spec here means what it
//! means to gosu, which takes Docker's `--user` rules from runc's
//! `libcontainer/user` (`GetExecUser`); `tests/it/user/gosu.rs` holds vigil to
//! Debian's gosu binary. In short:
//!
//! - `USER` is a name, looked up in `/etc/passwd`, or a number (`+7` and
//!   `007` are 7, as Go's `Atoi` reads them), which is a uid whether or not
//!   an entry has it, and *never* a name: an entry named `1000` is reached
//!   by its own uid only. The first matching entry wins.
//! - `USER` alone: the entry's uid, primary gid and home, plus every
//!   `/etc/group` entry that lists the entry's name as a member. A number
//!   without an entry keeps the caller's gid, gets no supplementary group
//!   and `/` as home.
//! - `USER:GROUP`: the group (a name looked up in `/etc/group`, or a
//!   number) replaces the primary gid, and there are no supplementary
//!   groups at all.
//! - `:GROUP`: the caller's own uid (its entry, if any) with that group.
//! - `HOME` is always set: the entry's home directory, else `/`.
//!
//! vigil is static and has no NSS, so both files are read here, directly.
//! Missing files are no error (a number needs no entry); blank lines,
//! comments and malformed entries are skipped, lines may be of any length
//! (up to [`files::MAX_LINE`]), and nothing is kept in memory but the one entry or
//! the gid list being built.
//!
//! The work is split so that everything that can fail happens before the
//! fork, where vigil can still say so in one line and start nothing:
//!
//! 1. [`parse_spec`] when the command line is read: the spec's shape
//!    (a usage error when it is wrong whatever the files say);
//! 2. [`prepare`] before the fork: the lookups, and whether vigil may switch
//!    to the result at all (root, or the ids it already has);
//! 3. [`Switch::ids`] in each new process's plan: the new process sets
//!    groups, then gid, then uid, last before exec (`sys::exec`), and
//!    [`Switch::failure`] tells the parent's report which call failed.
//!
//! `files` reads the two files and resolves a spec; `switch` holds what
//! touches the kernel (capabilities, the ids the new process takes, the
//! terminal rule, the refusal to run installed setuid or setgid).
//!
//! Where vigil deliberately reads the files differently from gosu (comments,
//! malformed entries, an empty home field, very long lines), the README's
//! "Where vigil differs from gosu" says so and the differential test checks
//! exactly that difference.

mod files;
mod switch;
#[cfg(test)]
mod tests;

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use libc::{gid_t, uid_t};

use crate::log::format::{Fields, Obj};

pub use files::{GroupEntry, PasswdEntry, resolve, scan_lines};
#[cfg(test)]
pub use switch::SetIdError;
pub use switch::{Switch, SwitchFailure, refuse_setid};

/// The largest uid or gid a spec may name: runc's (and so gosu's and
/// Docker's) bound, which keeps ids positive in a signed 32-bit integer.
pub const MAX_SPEC_ID: u32 = i32::MAX as u32;

/// One half of a spec: a number, or a name to look up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Id {
    Number(u32),
    Name(Vec<u8>),
}

/// A parsed `--user` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    text: OsString,
    /// None: the part before `:` is empty (`:GROUP`), meaning the caller's
    /// own uid.
    user: Option<Id>,
    /// None: no group given (`USER` or `USER:`).
    group: Option<Id>,
}

/// Reads a `--user` value: `USER`, `USER:GROUP`, `USER:` or `:GROUP`.
///
/// A part made of an optional sign and digits is a number, however large;
/// one that is out of range is an error here (gosu 1.14 would look a
/// 20-digit number up as a name; newer ones reject it, as vigil does).
/// Everything after the first `:` is the group, so a second `:` is an error
/// rather than silently dropped, as gosu 1.14 drops it.
///
/// A value that is wrong whatever the files say (empty, a second `:`, a
/// number out of range) is a usage error, naming it and what is accepted.
pub fn parse_spec(text: &OsStr) -> Result<Spec, String> {
    let fail = |problem: &str| {
        format!(
            "invalid user {}: {problem} (accepted: USER, USER:GROUP or :GROUP, each a name or a number)",
            quote(text.as_bytes())
        )
    };
    let bytes = text.as_bytes();
    let (user, group) = match bytes.iter().position(|&b| b == b':') {
        Some(at) => (
            bytes.get(..at).unwrap_or_default(),
            bytes.get(at + 1..).unwrap_or_default(),
        ),
        None => (bytes, &[][..]),
    };
    if group.contains(&b':') {
        return Err(fail("more than one ':'"));
    }
    let part = |p: &[u8]| -> Result<Option<Id>, String> {
        if p.is_empty() {
            return Ok(None);
        }
        match spec_number(p) {
            None => Ok(Some(Id::Name(p.to_vec()))),
            Some(Some(n)) => Ok(Some(Id::Number(n))),
            Some(None) => Err(fail(&format!(
                "{} is not an id from 0 to {MAX_SPEC_ID}",
                String::from_utf8_lossy(p)
            ))),
        }
    };
    let (user, group) = (part(user)?, part(group)?);
    if user.is_none() && group.is_none() {
        return Err(fail("it is empty"));
    }
    Ok(Spec {
        text: text.to_owned(),
        user,
        group,
    })
}

/// A spec part as Go's `strconv.Atoi` reads it: None when it is not a
/// number (so a name), Some(None) when it is one outside 0..=MAX_SPEC_ID.
fn spec_number(part: &[u8]) -> Option<Option<u32>> {
    let (negative, digits) = match part.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, part),
    };
    let value = decimal(digits)?;
    Some(match u32::try_from(value) {
        Ok(0) => Some(0),
        Ok(n) if !negative && n <= MAX_SPEC_ID => Some(n),
        _ => None,
    })
}

/// The value of ASCII digits, saturated at `u64::MAX`; None when there
/// are none or anything else is there.
fn decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(digits.iter().fold(0u64, |v, &d| {
        v.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    }))
}

/// The ids a spec falls back on: the caller's own real uid and gid, as
/// gosu takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ids {
    pub uid: uid_t,
    pub gid: gid_t,
}

/// Whom a spec names, fully resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub uid: uid_t,
    pub gid: gid_t,
    /// The supplementary groups, in /etc/group's order, as setgroups takes
    /// them (duplicates kept, as gosu keeps them).
    pub groups: Vec<gid_t>,
    /// The value for HOME: the entry's home directory, else `/`.
    pub home: OsString,
}

/// Why vigil will not run the child as the spec's identity.
#[derive(Debug)]
pub enum UserError {
    /// A lookup that failed: the spec names something the image does not
    /// have, or its files could not be read; `error` says which.
    Lookup { spec: OsString, error: String },
    /// vigil lacks the privilege to switch, and the spec names other ids
    /// than its own.
    NotPrivileged {
        spec: OsString,
        wanted: Ids,
        current: Ids,
    },
}

/// The facts of the `user_failed` record.
impl Fields for UserError {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        match self {
            UserError::Lookup { spec, error } => o
                .field("user", spec.as_os_str())
                .word("reason", "lookup")
                .field("error", error.as_str()),
            UserError::NotPrivileged { spec, wanted, .. } => o
                .field("user", spec.as_os_str())
                .word("reason", "not_privileged")
                .field("uid", wanted.uid)
                .field("gid", wanted.gid),
        };
    }
}

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UserError::Lookup { spec, error } => {
                write!(f, "cannot run as user {}: {error}", quote(spec.as_bytes()))
            }
            UserError::NotPrivileged {
                spec,
                wanted,
                current,
            } => write!(
                f,
                "cannot run as user {} (uid {}, gid {}): vigil runs as uid {}, gid {} and \
                 cannot switch user without root (CAP_SETUID and CAP_SETGID)",
                quote(spec.as_bytes()),
                wanted.uid,
                wanted.gid,
                current.uid,
                current.gid
            ),
        }
    }
}

/// Looks the spec up in this system's /etc/passwd and /etc/group and
/// checks that vigil may become the result. Call it once, before the first
/// fork; the `Switch` serves the child and both hooks.
///
/// `pid1`: whether vigil is PID 1 of its PID namespace, for the terminal
/// rule ([`Switch::new_session`]).
pub fn prepare(spec: &Spec, pid1: bool) -> Result<Switch, UserError> {
    let current = Ids {
        uid: nix::unistd::getuid().as_raw(),
        gid: nix::unistd::getgid().as_raw(),
    };
    let identity = resolve(spec, Path::new("/"), current).map_err(|error| UserError::Lookup {
        spec: spec.text.clone(),
        error,
    })?;
    let change = needs_change(&identity, current, switch::may_switch()).map_err(|wanted| {
        UserError::NotPrivileged {
            spec: spec.text.clone(),
            wanted,
            current,
        }
    })?;
    Ok(Switch::new(
        spec.text.clone(),
        identity,
        change,
        current,
        pid1,
    ))
}

/// With the privilege to switch, always switch (root switching to root
/// still gets the entry's groups, as under gosu). Without it, only the ids
/// vigil already has are accepted, so that an image's `VIGIL_USER=app`
/// still works when Kubernetes' `runAsUser` already made it `app`; any
/// other spec is refused with the ids it asked for.
fn needs_change(identity: &Identity, current: Ids, privileged: bool) -> Result<bool, Ids> {
    let wanted = Ids {
        uid: identity.uid,
        gid: identity.gid,
    };
    if privileged {
        Ok(true)
    } else if wanted == current {
        Ok(false)
    } else {
        Err(wanted)
    }
}

/// A name or value in double quotes, escaped as Rust escapes a string (so
/// a quote or a control byte cannot blur where it ends; invalid UTF-8
/// shows as U+FFFD).
fn quote(bytes: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(bytes))
}
