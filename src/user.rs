//! `--user USER[:GROUP]`: whom the child and the hooks run as (spec 2a).
//!
//! Images put gosu (or su-exec, or setpriv) under tini to run their program
//! as a non-root user. vigil does both jobs, so a spec here means what it
//! means to gosu, which takes Docker's `--user` rules from runc's
//! `libcontainer/user` (`GetExecUser`); `tests/user_gosu.rs` holds vigil to
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
//! (up to [`MAX_LINE`]), and nothing is kept in memory but the one entry or
//! the gid list being built.
//!
//! The work is split so that everything that can fail happens before the
//! fork, where vigil can still say so in one line and start nothing:
//!
//! 1. [`parse_spec`] when the command line is read: the spec's shape
//!    (a usage error when it is wrong whatever the files say);
//! 2. [`prepare`] before the fork: the lookups, and whether vigil may switch
//!    to the result at all (root, or the ids it already has);
//! 3. [`Switch::apply_in_child`] in the forked child, before exec: groups,
//!    then gid, then uid, as raw system calls that neither allocate nor
//!    lock.
//!
//! Where vigil deliberately reads the files differently from gosu (comments,
//! malformed entries, an empty home field, very long lines), the README's
//! "Where vigil differs from gosu" says so and the differential test checks
//! exactly that difference.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::ops::ControlFlow;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use libc::{gid_t, uid_t};

/// The largest uid or gid a spec may name: runc's (and so gosu's and
/// Docker's) bound, which keeps ids positive in a signed 32-bit integer.
pub const MAX_SPEC_ID: u32 = i32::MAX as u32;

/// The longest line read from /etc/passwd or /etc/group. A group with
/// tens of thousands of members fits many times over; the bound is there so
/// that a file that never ends a line (a link to /dev/zero) cannot take
/// vigil's memory.
pub const MAX_LINE: usize = 16 << 20;

/// The kernel's limit on supplementary groups (`NGROUPS_MAX` in
/// linux/limits.h; C libraries' own constant is often older and smaller).
pub const MAX_GROUPS: usize = 65536;

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

impl Spec {
    /// The value as given, for messages.
    pub fn text(&self) -> &OsStr {
        &self.text
    }
}

/// A `--user` value that is wrong whatever the files say: a usage error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    pub text: OsString,
    pub problem: SpecProblem,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecProblem {
    /// Nothing to switch to (`""` or `":"`).
    Empty,
    /// More than one `:`.
    ExtraColon,
    /// A number outside 0..=MAX_SPEC_ID (the text of the number).
    OutOfRange(String),
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid user {}: ", quote(self.text.as_bytes()))?;
        match &self.problem {
            SpecProblem::Empty => write!(f, "it is empty")?,
            SpecProblem::ExtraColon => write!(f, "more than one ':'")?,
            SpecProblem::OutOfRange(n) => write!(f, "{n} is not an id from 0 to {MAX_SPEC_ID}")?,
        }
        write!(
            f,
            " (accepted: USER, USER:GROUP or :GROUP, each a name or a number)"
        )
    }
}

/// Reads a `--user` value: `USER`, `USER:GROUP`, `USER:` or `:GROUP`.
///
/// A part made of an optional sign and digits is a number, however large;
/// one that is out of range is an error here (gosu 1.14 would look a
/// 20-digit number up as a name; newer ones reject it, as vigil does).
/// Everything after the first `:` is the group, so a second `:` is an error
/// rather than silently dropped, as gosu 1.14 drops it.
pub fn parse_spec(text: &OsStr) -> Result<Spec, SpecError> {
    let fail = |problem| SpecError {
        text: text.to_owned(),
        problem,
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
        return Err(fail(SpecProblem::ExtraColon));
    }
    let part = |p: &[u8]| -> Result<Option<Id>, SpecError> {
        if p.is_empty() {
            return Ok(None);
        }
        match spec_number(p) {
            None => Ok(Some(Id::Name(p.to_vec()))),
            Some(Some(n)) => Ok(Some(Id::Number(n))),
            Some(None) => Err(fail(SpecProblem::OutOfRange(
                String::from_utf8_lossy(p).into_owned(),
            ))),
        }
    };
    let (user, group) = (part(user)?, part(group)?);
    if user.is_none() && group.is_none() {
        return Err(fail(SpecProblem::Empty));
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
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value = digits.iter().fold(0u64, |v, &d| {
        v.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    });
    Some(match u32::try_from(value) {
        Ok(0) => Some(0),
        Ok(n) if !negative && n <= MAX_SPEC_ID => Some(n),
        _ => None,
    })
}

/// The ids a spec falls back on: the caller's own real uid and gid, as
/// gosu takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ids {
    pub uid: uid_t,
    pub gid: gid_t,
}

impl Ids {
    pub fn current() -> Ids {
        // SAFETY: getuid and getgid take no arguments and cannot fail.
        unsafe {
            Ids {
                uid: libc::getuid(),
                gid: libc::getgid(),
            }
        }
    }
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

/// A lookup that failed: the spec names something the image does not have.
#[derive(Debug)]
pub enum LookupError {
    UnknownUser {
        name: Vec<u8>,
        file: PathBuf,
        file_exists: bool,
    },
    UnknownGroup {
        name: Vec<u8>,
        file: PathBuf,
        file_exists: bool,
    },
    /// The file exists but could not be read (not a missing file: that
    /// just has no entries).
    Read {
        file: PathBuf,
        error: io::Error,
    },
    LineTooLong {
        file: PathBuf,
    },
    TooManyGroups {
        name: Vec<u8>,
        count: usize,
    },
}

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LookupError::UnknownUser {
                name,
                file,
                file_exists,
            } => unknown(f, "user", name, file, *file_exists),
            LookupError::UnknownGroup {
                name,
                file,
                file_exists,
            } => unknown(f, "group", name, file, *file_exists),
            LookupError::Read { file, error } => {
                write!(
                    f,
                    "cannot read {}: {}",
                    file.display(),
                    os_error_text(error)
                )
            }
            LookupError::LineTooLong { file } => write!(
                f,
                "{} has a line longer than {} MiB",
                file.display(),
                MAX_LINE >> 20
            ),
            LookupError::TooManyGroups { name, count } => write!(
                f,
                "user {} is in {count} groups; the kernel allows {MAX_GROUPS}",
                quote(name)
            ),
        }
    }
}

fn unknown(
    f: &mut fmt::Formatter<'_>,
    what: &str,
    name: &[u8],
    file: &Path,
    exists: bool,
) -> fmt::Result {
    if exists {
        write!(
            f,
            "there is no {what} {} in {}",
            quote(name),
            file.display()
        )
    } else {
        write!(
            f,
            "there is no {what} {}: {} does not exist",
            quote(name),
            file.display()
        )
    }
}

/// Resolves a spec against the files under `root` (`/` in real use; a
/// test's directory in the unit tests), with `current` as the fallback ids.
///
/// This follows runc's `GetExecUser` step by step, so that every spec gets
/// gosu's result: first the passwd entry, then, if a group was given or an
/// entry with a name was found, one pass over /etc/group.
pub fn resolve(spec: &Spec, root: &Path, current: Ids) -> Result<Identity, LookupError> {
    let passwd = root.join("etc/passwd");
    let mut found: Option<(Vec<u8>, uid_t, gid_t, Vec<u8>)> = None;
    let passwd_exists = scan(&passwd, |line| {
        let Some(entry) = PasswdEntry::parse(line) else {
            return ControlFlow::Continue(());
        };
        let hit = match &spec.user {
            None => entry.uid == current.uid,
            Some(Id::Number(n)) => entry.uid == *n,
            Some(Id::Name(name)) => entry.name == name.as_slice(),
        };
        if hit {
            found = Some((
                entry.name.to_vec(),
                entry.uid,
                entry.gid,
                entry.home.to_vec(),
            ));
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    })?;
    let (mut identity, name) = match (found, &spec.user) {
        (Some((name, uid, gid, home)), _) => (
            Identity {
                uid,
                gid,
                groups: Vec::new(),
                home: home_or_root(home),
            },
            name,
        ),
        (None, Some(Id::Name(name))) => {
            return Err(LookupError::UnknownUser {
                name: name.clone(),
                file: passwd,
                file_exists: passwd_exists,
            })
        }
        (None, user) => (
            Identity {
                uid: match user {
                    Some(Id::Number(n)) => *n,
                    _ => current.uid,
                },
                gid: current.gid,
                groups: Vec::new(),
                home: OsString::from("/"),
            },
            Vec::new(),
        ),
    };
    // runc looks at /etc/group only for an explicit group or for the
    // memberships of a name it found (an entry without a name has none).
    if spec.group.is_none() && name.is_empty() {
        return Ok(identity);
    }
    let group = root.join("etc/group");
    match &spec.group {
        Some(wanted) => {
            let mut gid = None;
            let group_exists = scan(&group, |line| {
                let Some(entry) = GroupEntry::parse(line) else {
                    return ControlFlow::Continue(());
                };
                let hit = match wanted {
                    Id::Number(n) => entry.gid == *n,
                    Id::Name(name) => entry.name == name.as_slice(),
                };
                if hit {
                    gid = Some(entry.gid);
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            })?;
            identity.gid = match (gid, wanted) {
                (Some(gid), _) => gid,
                (None, Id::Number(n)) => *n,
                (None, Id::Name(name)) => {
                    return Err(LookupError::UnknownGroup {
                        name: name.clone(),
                        file: group,
                        file_exists: group_exists,
                    })
                }
            };
        }
        None => {
            let mut groups = Vec::new();
            scan(&group, |line| {
                if let Some(entry) = GroupEntry::parse(line) {
                    if entry.has_member(&name) {
                        groups.push(entry.gid);
                    }
                }
                ControlFlow::Continue(())
            })?;
            if groups.len() > MAX_GROUPS {
                return Err(LookupError::TooManyGroups {
                    name,
                    count: groups.len(),
                });
            }
            identity.groups = groups;
        }
    }
    Ok(identity)
}

/// An entry's home directory, or `/` when the field is empty or missing.
/// (gosu sets HOME to the empty string then; an empty HOME sends `cd` and
/// `~` nowhere useful, and the contract says "the entry's home, or /".)
fn home_or_root(home: Vec<u8>) -> OsString {
    if home.is_empty() {
        OsString::from("/")
    } else {
        OsString::from_vec(home)
    }
}

/// One /etc/passwd entry: `name:password:uid:gid:gecos:home:shell`.
struct PasswdEntry<'a> {
    name: &'a [u8],
    uid: uid_t,
    gid: gid_t,
    home: &'a [u8],
}

impl<'a> PasswdEntry<'a> {
    /// None for a malformed entry: fewer than four fields, or a uid or gid
    /// that is not a number. (runc reads a bad number as 0, which would
    /// make `badname:x:1o00:...` root; glibc skips such a line, as vigil
    /// does.) A missing home is empty.
    fn parse(line: &'a [u8]) -> Option<PasswdEntry<'a>> {
        let mut fields = line.split(|&b| b == b':');
        let name = fields.next()?;
        let _password = fields.next()?;
        let uid = file_id(fields.next()?)?;
        let gid = file_id(fields.next()?)?;
        let _gecos = fields.next();
        let home = fields.next().unwrap_or_default();
        Some(PasswdEntry {
            name,
            uid,
            gid,
            home,
        })
    }
}

/// One /etc/group entry: `name:password:gid:member,member,...`.
struct GroupEntry<'a> {
    name: &'a [u8],
    gid: gid_t,
    members: &'a [u8],
}

impl<'a> GroupEntry<'a> {
    /// None for a malformed entry: fewer than three fields, or a gid that
    /// is not a number. A missing member list is empty.
    fn parse(line: &'a [u8]) -> Option<GroupEntry<'a>> {
        let mut fields = line.split(|&b| b == b':');
        let name = fields.next()?;
        let _password = fields.next()?;
        let gid = file_id(fields.next()?)?;
        let members = fields.next().unwrap_or_default();
        Some(GroupEntry { name, gid, members })
    }

    /// Members are compared whole and exactly, as runc compares them (a
    /// blank after a comma is part of the next name).
    fn has_member(&self, name: &[u8]) -> bool {
        !name.is_empty() && self.members.split(|&b| b == b',').any(|m| m == name)
    }
}

/// A uid or gid field: decimal digits (an optional `+`, leading zeros, as
/// C's and Go's number parsers take them). Not `(uid_t)-1`, which the
/// kernel's set*id calls reject.
fn file_id(field: &[u8]) -> Option<u32> {
    let digits = field.strip_prefix(b"+").unwrap_or(field);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value = digits.iter().try_fold(0u32, |v, &d| {
        v.checked_mul(10)?.checked_add(u32::from(d - b'0'))
    })?;
    (value != u32::MAX).then_some(value)
}

/// Calls `each` with every line of `file` that may hold an entry: trimmed
/// of blanks at both ends (a CR of a DOS line end too), neither empty nor
/// a comment (`#`), until `each` breaks. Returns whether the file exists:
/// a missing file (or a missing directory on the way) has no entries.
fn scan(file: &Path, mut each: impl FnMut(&[u8]) -> ControlFlow<()>) -> Result<bool, LookupError> {
    let read_error = |error| LookupError::Read {
        file: file.to_path_buf(),
        error,
    };
    let f = match File::open(file) {
        Ok(f) => f,
        Err(e)
            if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) =>
        {
            return Ok(false)
        }
        Err(e) => return Err(read_error(e)),
    };
    let mut reader = BufReader::new(f);
    let mut line = Vec::new();
    loop {
        line.clear();
        // read_until retries EINTR itself.
        let limit = (MAX_LINE as u64).saturating_add(1);
        let n = (&mut reader)
            .take(limit)
            .read_until(b'\n', &mut line)
            .map_err(read_error)?;
        if n == 0 {
            return Ok(true);
        }
        // MAX_LINE bytes and the newline may come in; more is too long.
        if line.len() > MAX_LINE && !line.ends_with(b"\n") {
            return Err(LookupError::LineTooLong {
                file: file.to_path_buf(),
            });
        }
        let entry = line.trim_ascii();
        if entry.is_empty() || entry.starts_with(b"#") {
            continue;
        }
        if each(entry).is_break() {
            return Ok(true);
        }
    }
}

/// Why vigil will not run the child as the spec's identity.
#[derive(Debug)]
pub enum UserError {
    Lookup {
        spec: OsString,
        error: LookupError,
    },
    /// vigil lacks the privilege to switch, and the spec names other ids
    /// than its own.
    NotPrivileged {
        spec: OsString,
        wanted: Ids,
        current: Ids,
    },
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

/// What the spawn path needs to start a process as the spec's identity,
/// all of it computed before the fork.
#[derive(Clone, Debug)]
pub struct Switch {
    identity: Identity,
    /// False when vigil is not privileged and the spec names the ids it
    /// already has: the child then keeps vigil's ids and groups (it could
    /// not set groups without CAP_SETGID) and only HOME changes.
    change: bool,
}

/// Looks the spec up in this system's /etc/passwd and /etc/group and
/// checks that vigil may become the result. Call it once, before the first
/// fork; the `Switch` serves the child and both hooks.
pub fn prepare(spec: &Spec) -> Result<Switch, UserError> {
    let current = Ids::current();
    let identity = resolve(spec, Path::new("/"), current).map_err(|error| UserError::Lookup {
        spec: spec.text.clone(),
        error,
    })?;
    let change = needs_change(&identity, current, may_switch()).map_err(|wanted| {
        UserError::NotPrivileged {
            spec: spec.text.clone(),
            wanted,
            current,
        }
    })?;
    Ok(Switch { identity, change })
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

/// Whether vigil holds CAP_SETUID and CAP_SETGID (what setuid, setgid and
/// setgroups need), read with the raw capget call: root in a container may
/// lack them (`--cap-drop`), and a user namespace may grant them to a
/// non-zero uid. When capget itself fails, being uid 0 is the answer.
fn may_switch() -> bool {
    const CAP_SETGID: u32 = 6;
    const CAP_SETUID: u32 = 7;
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let mut header = Header {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: capget reads `header` and, for version 3, writes two `Data`
    // records (the kernel's `__user_cap_data_struct`: three u32, the same
    // on every architecture) into `data`, which has room for them.
    let r = unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) };
    if r != 0 {
        // SAFETY: geteuid takes no arguments and cannot fail.
        return unsafe { libc::geteuid() } == 0;
    }
    let [low, _] = data;
    let needed = (1 << CAP_SETUID) | (1 << CAP_SETGID);
    low.effective & needed == needed
}

// The raw set*id calls with 32-bit ids. x86 and arm also have the 16-bit
// calls of their first ABI under the plain names.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "s390x",
    target_arch = "powerpc64"
))]
use libc::{SYS_setgid as SYS_SETGID, SYS_setgroups as SYS_SETGROUPS, SYS_setuid as SYS_SETUID};
#[cfg(any(target_arch = "x86", target_arch = "arm"))]
use libc::{
    SYS_setgid32 as SYS_SETGID, SYS_setgroups32 as SYS_SETGROUPS, SYS_setuid32 as SYS_SETUID,
};
#[cfg(not(any(
    target_arch = "x86",
    target_arch = "arm",
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "s390x",
    target_arch = "powerpc64"
)))]
compile_error!(
    "which setuid/setgid/setgroups system calls take 32-bit ids has not been checked on \
     this architecture: see src/user.rs"
);

impl Switch {
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The child's HOME (gosu replaces whatever HOME vigil had).
    pub fn home(&self) -> &OsStr {
        &self.identity.home
    }

    /// Whether the child's ids change (false: vigil is not privileged and
    /// the spec named its own ids).
    pub fn changes_ids(&self) -> bool {
        self.change
    }

    /// Becomes the identity: supplementary groups, then gid, then uid (each
    /// step needs the privilege the next one gives up).
    ///
    /// For the forked child only, between fork and exec (a `pre_exec`
    /// closure; it may run after the others there): it makes raw system
    /// calls and nothing else, so it is async-signal-safe, allocates
    /// nothing and takes no lock. The C library's wrappers are avoided on
    /// purpose: musl's and glibc's `setuid` broadcast to every thread of
    /// the process with signals, which has no business in a forked child
    /// and which a raw call, affecting the calling thread alone (the only
    /// one there is), does not need. As root, setuid sets the real,
    /// effective and saved uid and the kernel drops the capabilities;
    /// setgid sets all three gids.
    ///
    /// On failure (EPERM: the privilege went missing; EINVAL: an id that
    /// the user namespace does not map) it returns the OS error, which std
    /// passes to the parent as the spawn's error.
    pub fn apply_in_child(&self) -> io::Result<()> {
        if !self.change {
            return Ok(());
        }
        let groups = &self.identity.groups;
        // SAFETY: setgroups reads `groups.len()` gids from the vector's
        // buffer, which lives (unchanged) as long as `self`; setgid and
        // setuid take plain integers. None of them touches other memory.
        unsafe {
            // The ids go as full-width arguments; the kernel reads 32 bits.
            if libc::syscall(SYS_SETGROUPS, groups.len(), groups.as_ptr()) != 0
                || libc::syscall(SYS_SETGID, self.identity.gid as libc::c_long) != 0
                || libc::syscall(SYS_SETUID, self.identity.uid as libc::c_long) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// vigil installed setuid or setgid: its real and effective ids differ.
#[derive(Debug, PartialEq, Eq)]
pub enum SetIdError {
    Setuid { real: uid_t, effective: uid_t },
    Setgid { real: gid_t, effective: gid_t },
}

impl fmt::Display for SetIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, ids, real, effective, chmod) = match *self {
            SetIdError::Setuid { real, effective } => ("setuid", "uid", real, effective, "u-s"),
            SetIdError::Setgid { real, effective } => ("setgid", "gid", real, effective, "g-s"),
        };
        write!(
            f,
            "vigil is installed {what} (real {ids} {real}, effective {ids} {effective}), which \
             would let anyone who can start it run anything as any user; it refuses to run \
             (chmod {chmod})"
        )
    }
}

/// Refuses a setuid or setgid vigil, as gosu refuses to run so installed:
/// `--user` (and the hooks) would then run anything as anyone for whoever
/// can start vigil. Recognised by real and effective ids that differ,
/// which is what such an install gives an unprivileged caller (a root
/// caller gains nothing from it). Call it first thing, before the command
/// line is read.
pub fn refuse_setid() -> Result<(), SetIdError> {
    // SAFETY: these take no arguments and cannot fail.
    let (ruid, euid, rgid, egid) = unsafe {
        (
            libc::getuid(),
            libc::geteuid(),
            libc::getgid(),
            libc::getegid(),
        )
    };
    check_setid(ruid, euid, rgid, egid)
}

fn check_setid(ruid: uid_t, euid: uid_t, rgid: gid_t, egid: gid_t) -> Result<(), SetIdError> {
    if ruid != euid {
        Err(SetIdError::Setuid {
            real: ruid,
            effective: euid,
        })
    } else if rgid != egid {
        Err(SetIdError::Setgid {
            real: rgid,
            effective: egid,
        })
    } else {
        Ok(())
    }
}

/// A name or value in double quotes, escaped as Rust escapes a string (so
/// a quote or a control byte cannot blur where it ends; invalid UTF-8
/// shows as U+FFFD).
fn quote(bytes: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(bytes))
}

/// An OS error's text without Rust's ` (os error N)` suffix.
fn os_error_text(error: &io::Error) -> String {
    match error.raw_os_error() {
        Some(n) => nix::errno::Errno::from_raw(n).desc().to_string(),
        None => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root directory with the given /etc/passwd and /etc/group (None:
    /// the file does not exist), removed on drop.
    struct Root(PathBuf);

    impl Root {
        fn new(passwd: Option<&[u8]>, group: Option<&[u8]>) -> Root {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static N: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "vigil-user-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(dir.join("etc")).unwrap();
            if let Some(text) = passwd {
                std::fs::write(dir.join("etc/passwd"), text).unwrap();
            }
            if let Some(text) = group {
                std::fs::write(dir.join("etc/group"), text).unwrap();
            }
            Root(dir)
        }

        fn resolve(&self, spec: &str) -> Result<Identity, LookupError> {
            let spec = parse_spec(OsStr::new(spec)).unwrap();
            resolve(&spec, &self.0, ROOT_IDS)
        }

        /// `uid gid [groups] home`, or the error's text.
        fn show(&self, spec: &str) -> String {
            match self.resolve(spec) {
                Ok(id) => format!(
                    "{} {} {:?} {}",
                    id.uid,
                    id.gid,
                    id.groups,
                    id.home.to_string_lossy()
                ),
                Err(e) => format!("error: {e}"),
            }
        }
    }

    impl Drop for Root {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const ROOT_IDS: Ids = Ids { uid: 0, gid: 0 };

    const PASSWD: &str = "\
root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
games:x:5:60:games:/usr/games:/usr/sbin/nologin
alice:x:1000:1000:Alice:/home/alice:/bin/sh
bob:x:1001:1001::/home/bob:/bin/sh
nohome:x:1002:1002:no home::/bin/sh
0day:x:1003:1003::/home/0day:/bin/sh
1000:x:2000:2000::/home/thousand:/bin/sh
dup:x:1007:1007::/home/dup1:/bin/sh
dup:x:1008:1008::/home/dup2:/bin/sh
";

    const GROUP: &str = "\
root:x:0:
daemon:x:1:
adm:x:4:alice
staff:x:50:alice,games
games:x:60:
users:x:100:games,alice
alice:x:1000:
0day:x:1003:0day
1000:x:2000:
thousands:x:2001:1000
7up:x:3001:alice
";

    fn standard() -> Root {
        Root::new(Some(PASSWD.as_bytes()), Some(GROUP.as_bytes()))
    }

    #[test]
    fn spec_shapes() {
        let p = |s: &str| parse_spec(OsStr::new(s));
        let spec = |user, group| {
            move |text: &str| Spec {
                text: text.into(),
                user,
                group,
            }
        };
        let name = |s: &str| Some(Id::Name(s.as_bytes().to_vec()));
        assert_eq!(p("alice"), Ok(spec(name("alice"), None)("alice")));
        assert_eq!(p("alice:"), Ok(spec(name("alice"), None)("alice:")));
        assert_eq!(
            p("alice:users"),
            Ok(spec(name("alice"), name("users"))("alice:users"))
        );
        assert_eq!(p(":0"), Ok(spec(None, Some(Id::Number(0)))(":0")));
        assert_eq!(
            p("1000:1000"),
            Ok(spec(Some(Id::Number(1000)), Some(Id::Number(1000)))(
                "1000:1000"
            ))
        );
        // Go's Atoi: a sign and leading zeros are a number; a digit first
        // does not make a number.
        assert_eq!(p("+1000"), Ok(spec(Some(Id::Number(1000)), None)("+1000")));
        assert_eq!(p("007"), Ok(spec(Some(Id::Number(7)), None)("007")));
        assert_eq!(p("-0"), Ok(spec(Some(Id::Number(0)), None)("-0")));
        assert_eq!(p("0day"), Ok(spec(name("0day"), None)("0day")));
        assert_eq!(p("+"), Ok(spec(name("+"), None)("+")));
        assert_eq!(p("1e3"), Ok(spec(name("1e3"), None)("1e3")));
        assert_eq!(p(" 1"), Ok(spec(name(" 1"), None)(" 1")));
        assert_eq!(
            p("2147483647"),
            Ok(spec(Some(Id::Number(MAX_SPEC_ID)), None)("2147483647"))
        );
        let problem = |s: &str| p(s).unwrap_err().problem;
        assert_eq!(problem(""), SpecProblem::Empty);
        assert_eq!(problem(":"), SpecProblem::Empty);
        assert_eq!(problem("a:b:c"), SpecProblem::ExtraColon);
        assert_eq!(problem("::"), SpecProblem::ExtraColon);
        assert_eq!(problem("-1"), SpecProblem::OutOfRange("-1".into()));
        assert_eq!(
            problem("1:2147483648"),
            SpecProblem::OutOfRange("2147483648".into())
        );
        assert_eq!(
            problem("99999999999999999999999"),
            SpecProblem::OutOfRange("99999999999999999999999".into())
        );
        assert_eq!(
            p("a:b:c").unwrap_err().to_string(),
            r#"invalid user "a:b:c": more than one ':' (accepted: USER, USER:GROUP or :GROUP, each a name or a number)"#
        );
        assert_eq!(
            p("-1").unwrap_err().to_string(),
            r#"invalid user "-1": -1 is not an id from 0 to 2147483647 (accepted: USER, USER:GROUP or :GROUP, each a name or a number)"#
        );
    }

    /// gosu's own test matrix (its Dockerfile.test) and the cases the
    /// differential test runs, against the same kind of files.
    #[test]
    fn gosu_matrix() {
        let r = standard();
        let cases = [
            ("0", "0 0 [] /root"),
            ("0:0", "0 0 [] /root"),
            ("root", "0 0 [] /root"),
            ("0:root", "0 0 [] /root"),
            ("root:0", "0 0 [] /root"),
            ("root:root", "0 0 [] /root"),
            ("0:", "0 0 [] /root"),
            // A number with an entry is that entry: memberships by its name.
            ("1000", "1000 1000 [4, 50, 100, 3001] /home/alice"),
            ("+1000", "1000 1000 [4, 50, 100, 3001] /home/alice"),
            ("alice", "1000 1000 [4, 50, 100, 3001] /home/alice"),
            ("alice:", "1000 1000 [4, 50, 100, 3001] /home/alice"),
            // An explicit group: exactly that, no supplementary groups.
            ("alice:users", "1000 100 [] /home/alice"),
            ("alice:100", "1000 100 [] /home/alice"),
            ("alice:4242", "1000 4242 [] /home/alice"),
            ("alice:7up", "1000 3001 [] /home/alice"),
            // A numeric group is a gid, even when a group is named so.
            ("alice:1000", "1000 1000 [] /home/alice"),
            ("alice:2000", "1000 2000 [] /home/alice"),
            ("0:1000", "0 1000 [] /root"),
            ("root:1000", "0 1000 [] /root"),
            ("1000:root", "1000 0 [] /home/alice"),
            ("1000:daemon", "1000 1 [] /home/alice"),
            ("games", "5 60 [50, 100] /usr/games"),
            ("games:daemon", "5 1 [] /usr/games"),
            // A number without an entry keeps the caller's gid.
            ("4242", "4242 0 [] /"),
            ("4242:4242", "4242 4242 [] /"),
            ("4242:alice", "4242 1000 [] /"),
            ("2147483647", "2147483647 0 [] /"),
            // The caller's own uid, found by number.
            (":0", "0 0 [] /root"),
            (":users", "0 100 [] /root"),
            (":4242", "0 4242 [] /root"),
            // Names that look like numbers, numbers that are names.
            ("0day", "1003 1003 [1003] /home/0day"),
            ("2000", "2000 2000 [2001] /home/thousand"),
            ("bob", "1001 1001 [] /home/bob"),
            ("dup", "1007 1007 [] /home/dup1"),
            ("1008", "1008 1008 [] /home/dup2"),
            ("nohome", "1002 1002 [] /"),
        ];
        for (spec, want) in cases {
            assert_eq!(r.show(spec), want, "spec {spec:?}");
        }
    }

    #[test]
    fn unknown_names_are_named() {
        let r = standard();
        let dir = r.0.display();
        let cases = [
            (
                "nosuch",
                format!(r#"there is no user "nosuch" in {dir}/etc/passwd"#),
            ),
            (
                "nosuch:root",
                format!(r#"there is no user "nosuch" in {dir}/etc/passwd"#),
            ),
            (
                "alice:nosuch",
                format!(r#"there is no group "nosuch" in {dir}/etc/group"#),
            ),
            (
                "4242:nosuch",
                format!(r#"there is no group "nosuch" in {dir}/etc/group"#),
            ),
            (
                ":nosuch",
                format!(r#"there is no group "nosuch" in {dir}/etc/group"#),
            ),
            // 1000 is only ever a uid; as a name it is not there.
            (
                "thousand",
                format!(r#"there is no user "thousand" in {dir}/etc/passwd"#),
            ),
            (
                "ünï\n",
                format!(r#"there is no user "ünï\n" in {dir}/etc/passwd"#),
            ),
        ];
        for (spec, want) in cases {
            assert_eq!(r.show(spec), format!("error: {want}"), "spec {spec:?}");
        }
        let e = UserError::Lookup {
            spec: "alice:nosuch".into(),
            error: r.resolve("alice:nosuch").unwrap_err(),
        };
        assert_eq!(
            e.to_string(),
            format!(
                r#"cannot run as user "alice:nosuch": there is no group "nosuch" in {dir}/etc/group"#
            )
        );
    }

    #[test]
    fn missing_files() {
        let no_group = Root::new(Some(PASSWD.as_bytes()), None);
        assert_eq!(no_group.show("alice"), "1000 1000 [] /home/alice");
        assert_eq!(no_group.show("alice:100"), "1000 100 [] /home/alice");
        assert_eq!(no_group.show("0"), "0 0 [] /root");
        let dir = no_group.0.display();
        assert_eq!(
            no_group.show("alice:users"),
            format!(r#"error: there is no group "users": {dir}/etc/group does not exist"#)
        );

        let no_passwd = Root::new(None, Some(GROUP.as_bytes()));
        assert_eq!(no_passwd.show("0"), "0 0 [] /");
        assert_eq!(no_passwd.show("4242"), "4242 0 [] /");
        assert_eq!(no_passwd.show("1000:users"), "1000 100 [] /");
        assert_eq!(no_passwd.show(":users"), "0 100 [] /");
        let dir = no_passwd.0.display();
        assert_eq!(
            no_passwd.show("alice"),
            format!(r#"error: there is no user "alice": {dir}/etc/passwd does not exist"#)
        );

        let nothing = Root::new(None, None);
        assert_eq!(nothing.show("1000:1000"), "1000 1000 [] /");
        assert!(nothing
            .show("1000:alice")
            .starts_with("error: there is no group"));

        // No /etc at all (ENOTDIR on the way counts as missing, too).
        let spec = parse_spec(OsStr::new("7:8")).unwrap();
        let id = resolve(&spec, Path::new("/nonexistent/root"), ROOT_IDS).unwrap();
        assert_eq!((id.uid, id.gid), (7, 8));
        let file_root = Root::new(None, None);
        std::fs::write(file_root.0.join("file"), "").unwrap();
        let id = resolve(&spec, &file_root.0.join("file"), ROOT_IDS).unwrap();
        assert_eq!((id.uid, id.gid), (7, 8));
    }

    #[test]
    fn unreadable_files_are_errors() {
        let r = Root::new(None, None);
        std::fs::create_dir(r.0.join("etc/passwd")).unwrap();
        let shown = r.show("4242");
        assert!(shown.ends_with("/etc/passwd: Is a directory"), "{shown}");
    }

    #[test]
    fn the_callers_ids_are_the_fallback() {
        let r = standard();
        let spec = parse_spec(OsStr::new("4242")).unwrap();
        let caller = Ids { uid: 1001, gid: 77 };
        let id = resolve(&spec, &r.0, caller).unwrap();
        assert_eq!((id.uid, id.gid, id.groups.len()), (4242, 77, 0));
        // `:GROUP` starts from the caller's own entry.
        let spec = parse_spec(OsStr::new(":users")).unwrap();
        let id = resolve(&spec, &r.0, caller).unwrap();
        assert_eq!((id.uid, id.gid), (1001, 100));
        assert_eq!(id.home, "/home/bob");
    }

    #[test]
    fn comments_blanks_and_malformed_lines_are_skipped() {
        let passwd = "\
# a comment
#root:x:0:0::/from-comment:/bin/sh

   \t
root:x:0:0:root:/root:/bin/sh
short:x:1005
badid:x:12ab:1006::/home/badid:/bin/sh
emptyuid:x::7::/e:/bin/sh
neg:x:-2:-2::/home/neg:/bin/sh
max:x:4294967295:1::/max:/bin/sh
  spaced:x:1009:1009::/home/spaced:/bin/sh  \r
crlf:x:1011:1011::/home/crlf:/bin/sh\r
dave:x:1004:1004
plus:x:+7:007::/plus:/bin/sh
big:x:3000000000:3000000000::/big:/bin/sh
 bob :x:1012:1012::/home/bob:/bin/sh
:x:1013:1013::/nameless:/bin/sh
";
        let group = "\
#wheel:x:10:spaced
badgid:x:x7:spaced
sp:x:40 :spaced
  indented:x:1200:spaced\t
crlfgrp:x:1011:crlf\r
blank:x:1300: spaced
short:x
nameless:x:1400:
";
        let r = Root::new(Some(passwd.as_bytes()), Some(group.as_bytes()));
        let cases = [
            ("0", "0 0 [] /root"),
            ("spaced", "1009 1009 [1200] /home/spaced"),
            ("spaced:indented", "1009 1200 [] /home/spaced"),
            ("crlf", "1011 1011 [1011] /home/crlf"),
            ("dave", "1004 1004 [] /"),
            ("plus", "7 7 [] /plus"),
            ("big", "3000000000 3000000000 [] /big"),
            ("bob ", "1012 1012 [] /home/bob"),
            ("1013", "1013 1013 [] /nameless"),
        ];
        for (spec, want) in cases {
            assert_eq!(r.show(spec), want, "spec {spec:?}");
        }
        for unknown in ["short", "badid", "emptyuid", "neg", "max", "#root", "bob"] {
            let shown = r.show(unknown);
            assert!(
                shown.starts_with("error: there is no user"),
                "{unknown}: {shown}"
            );
        }
        for unknown in ["spaced:#wheel", "spaced:badgid", "spaced:sp", "0:short"] {
            let shown = r.show(unknown);
            assert!(
                shown.starts_with("error: there is no group"),
                "{unknown}: {shown}"
            );
        }
    }

    #[test]
    fn long_lines_and_many_members() {
        // A group line of 1.3 MB (110,000 members, alice last), a GECOS
        // field of 100 KB: past Go's 64 KiB line limit, which makes gosu
        // fail.
        let mut group = String::from("big:x:50:");
        for i in 0..110_000 {
            group.push_str(&format!("member{i:06},"));
        }
        group.push_str("alice\nsmall:x:20:alice\n");
        // A user in 300 groups, a group of 500 members.
        for g in 0..300 {
            group.push_str(&format!("g{g}:x:{}:many\n", 5000 + g));
        }
        group.push_str("five-hundred:x:3000:");
        for i in 0..500 {
            group.push_str(&format!("u{i},"));
        }
        group.push_str("alice\n");
        let passwd = format!(
            "root:x:0:0:root:/root:/bin/sh\nlong:x:1001:1001:{}:/home/long:/bin/sh\n\
             alice:x:1000:1000::/home/alice:/bin/sh\nmany:x:1004:1004::/home/many:/bin/sh\n",
            "a".repeat(100_000)
        );
        let r = Root::new(Some(passwd.as_bytes()), Some(group.as_bytes()));
        assert_eq!(r.show("alice"), "1000 1000 [50, 20, 3000] /home/alice");
        assert_eq!(r.show("long"), "1001 1001 [] /home/long");
        let many = r.resolve("many").unwrap();
        assert_eq!(many.groups, (5000..5300).collect::<Vec<_>>());
    }

    #[test]
    fn a_line_without_end_is_bounded() {
        let r = Root::new(None, None);
        let f = std::fs::File::create(r.0.join("etc/group")).unwrap();
        f.set_len(MAX_LINE as u64 + 10).unwrap(); // NUL bytes, no newline
        let shown = r.show("0:staff");
        // A line of exactly MAX_LINE bytes (a comment) is still read past.
        let mut at_limit = vec![b'#'; MAX_LINE];
        at_limit.extend_from_slice(b"\nstaff:x:50:\n");
        let fits = Root::new(None, Some(&at_limit));
        assert_eq!(fits.show("0:staff"), "0 50 [] /");
        assert!(
            shown.ends_with("/etc/group has a line longer than 16 MiB"),
            "{shown}"
        );
    }

    #[test]
    fn too_many_groups_is_an_error_before_the_fork() {
        let mut group = String::new();
        for g in 0..=MAX_GROUPS {
            group.push_str(&format!("g{g}:x:{}:many\n", 10_000 + g));
        }
        let r = Root::new(
            Some(b"many:x:1004:1004::/home/many:/bin/sh\n"),
            Some(group.as_bytes()),
        );
        assert_eq!(
            r.show("many"),
            r#"error: user "many" is in 65537 groups; the kernel allows 65536"#
        );
    }

    #[test]
    fn bytes_that_are_not_utf8() {
        let r = Root::new(
            Some(b"caf\xe9:x:1500:1500::/home/caf\xe9:/bin/sh\n"),
            Some(b"caf\xe9s:x:1501:caf\xe9\n"),
        );
        let spec = parse_spec(OsStr::from_bytes(b"caf\xe9")).unwrap();
        let id = resolve(&spec, &r.0, ROOT_IDS).unwrap();
        assert_eq!((id.uid, id.gid, id.groups), (1500, 1500, vec![1501]));
        assert_eq!(id.home.as_bytes(), b"/home/caf\xe9");
    }

    #[test]
    fn without_privilege_only_the_current_ids() {
        let id = |uid, gid| Identity {
            uid,
            gid,
            groups: vec![4, 5],
            home: "/".into(),
        };
        let me = Ids {
            uid: 1000,
            gid: 1000,
        };
        assert_eq!(needs_change(&id(1000, 1000), me, false), Ok(false));
        assert_eq!(
            needs_change(&id(1000, 0), me, false),
            Err(Ids { uid: 1000, gid: 0 })
        );
        assert_eq!(
            needs_change(&id(0, 1000), me, false),
            Err(Ids { uid: 0, gid: 1000 })
        );
        assert_eq!(needs_change(&id(0, 0), me, true), Ok(true));
        assert_eq!(needs_change(&id(1000, 1000), me, true), Ok(true));
        let e = UserError::NotPrivileged {
            spec: "app".into(),
            wanted: Ids { uid: 0, gid: 0 },
            current: me,
        };
        assert_eq!(
            e.to_string(),
            r#"cannot run as user "app" (uid 0, gid 0): vigil runs as uid 1000, gid 1000 and cannot switch user without root (CAP_SETUID and CAP_SETGID)"#
        );
    }

    #[test]
    fn setid_installs_are_refused() {
        assert_eq!(check_setid(0, 0, 0, 0), Ok(()));
        assert_eq!(check_setid(1000, 1000, 1000, 1000), Ok(()));
        assert_eq!(
            check_setid(1000, 0, 1000, 1000),
            Err(SetIdError::Setuid {
                real: 1000,
                effective: 0
            })
        );
        assert_eq!(
            check_setid(1000, 1000, 1000, 0),
            Err(SetIdError::Setgid {
                real: 1000,
                effective: 0
            })
        );
        assert_eq!(
            check_setid(1000, 0, 1000, 1000).unwrap_err().to_string(),
            "vigil is installed setuid (real uid 1000, effective uid 0), which would let anyone \
             who can start it run anything as any user; it refuses to run (chmod u-s)"
        );
        // The test process itself is not setuid.
        assert_eq!(refuse_setid(), Ok(()));
    }

    /// The child side, for real, in a forked child (the test runs as root,
    /// as the whole suite does; skipped otherwise).
    #[test]
    fn apply_in_child_sets_groups_gid_uid() {
        use std::os::unix::process::CommandExt;
        if !may_switch() {
            eprintln!("skipped: needs root");
            return;
        }
        let switch = Switch {
            identity: Identity {
                uid: 4321,
                gid: 4322,
                groups: vec![7, 4323, 7],
                home: "/".into(),
            },
            change: true,
        };
        let child_switch = switch.clone();
        let mut command = std::process::Command::new("sh");
        command.args(["-c", "grep -E '^(Uid|Gid|Groups):' /proc/self/status"]);
        // SAFETY: apply_in_child is async-signal-safe (raw system calls).
        unsafe {
            command.pre_exec(move || child_switch.apply_in_child());
        }
        let out = command.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let fields: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().skip(1).collect())
            .collect();
        assert_eq!(
            fields,
            [
                vec!["4321"; 4],
                vec!["4322"; 4],
                vec!["7", "7", "4323"] // the kernel sorts the list
            ],
            "{text}"
        );
        // Without the privilege nothing changes (and nothing fails).
        let keep = Switch {
            change: false,
            ..switch
        };
        assert!(keep.apply_in_child().is_ok());
    }

    /// What a failed set*id call gives the spawn: the OS error, e.g.
    /// EINVAL for `(uid_t)-1`, which no file can name.
    #[test]
    fn apply_in_child_reports_the_os_error() {
        use std::os::unix::process::CommandExt;
        if !may_switch() {
            eprintln!("skipped: needs root");
            return;
        }
        let bad = Switch {
            identity: Identity {
                uid: u32::MAX,
                gid: 0,
                groups: Vec::new(),
                home: "/".into(),
            },
            change: true,
        };
        let mut command = std::process::Command::new("true");
        // SAFETY: apply_in_child is async-signal-safe (raw system calls).
        unsafe {
            command.pre_exec(move || bad.apply_in_child());
        }
        let e = command.spawn().unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    }
}
