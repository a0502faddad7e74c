//! Reading /etc/passwd and /etc/group, and resolving a spec against them
//! by runc's `GetExecUser` rules (what gosu, and so Docker's `--user`,
//! does). vigil is static and has no NSS, so both files are read here,
//! directly, one line at a time.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::ops::ControlFlow;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use libc::{gid_t, uid_t};

use super::{Id, Identity, Ids, Spec, decimal, quote};
use crate::text::os_error;

/// The longest line read from /etc/passwd or /etc/group. A group with
/// tens of thousands of members fits many times over; the bound is there so
/// that a file that never ends a line (a link to /dev/zero) cannot take
/// vigil's memory.
pub const MAX_LINE: usize = 16 << 20;

/// The kernel's limit on supplementary groups (`NGROUPS_MAX` in
/// linux/limits.h; C libraries' own constant is often older and smaller).
pub const MAX_GROUPS: usize = 65536;

/// No entry has the name a spec gives (`what` is "user" or "group"): the
/// lookup's failure, naming the file, or saying that it does not exist.
fn unknown(what: &str, name: &[u8], file: &Path, file_exists: bool) -> String {
    let name = quote(name);
    if file_exists {
        format!("there is no {what} {name} in {}", file.display())
    } else {
        format!(
            "there is no {what} {name}: {} does not exist",
            file.display()
        )
    }
}

/// A file that exists but could not be read (not a missing file: that
/// just has no entries).
fn read_error(file: &Path, error: &io::Error) -> String {
    format!("cannot read {}: {}", file.display(), os_error(error))
}

/// Resolves a spec against the files under `root` (`/` in real use; a
/// test's directory in the unit tests), with `current` as the fallback ids.
///
/// This follows runc's `GetExecUser` step by step, so that every spec gets
/// gosu's result: first the passwd entry, then, if a group was given or an
/// entry with a name was found, one pass over /etc/group.
pub fn resolve(spec: &Spec, root: &Path, current: Ids) -> Result<Identity, String> {
    let (mut identity, name) = user(spec, root.join("etc/passwd"), current)?;
    // runc looks at /etc/group only for an explicit group or for the
    // memberships of a name it found (an entry without a name has none).
    let group = root.join("etc/group");
    match &spec.group {
        Some(wanted) => identity.gid = group_id(wanted, group)?,
        None if !name.is_empty() => identity.groups = memberships(name, &group)?,
        None => {}
    }
    Ok(identity)
}

/// The spec's user, from `passwd`: the identity without its groups, and
/// the entry's name (empty when no entry matched, which is fine for a uid
/// or for vigil's own).
fn user(spec: &Spec, passwd: PathBuf, current: Ids) -> Result<(Identity, Vec<u8>), String> {
    let identity = |uid, gid, home| Identity {
        uid,
        gid,
        groups: Vec::new(),
        home,
    };
    let (found, passwd_exists) = first(&passwd, |line| {
        let entry = PasswdEntry::parse(line)?;
        let hit = match &spec.user {
            None => entry.uid == current.uid,
            Some(Id::Number(n)) => entry.uid == *n,
            Some(Id::Name(name)) => entry.name == name.as_slice(),
        };
        hit.then(|| {
            let home = home_or_root(entry.home);
            (identity(entry.uid, entry.gid, home), entry.name.to_vec())
        })
    })?;
    match (found, &spec.user) {
        (Some(found), _) => Ok(found),
        (None, Some(Id::Name(name))) => Err(unknown("user", name, &passwd, passwd_exists)),
        (None, user) => {
            let uid = match user {
                Some(Id::Number(n)) => *n,
                _ => current.uid,
            };
            Ok((identity(uid, current.gid, OsString::from("/")), Vec::new()))
        }
    }
}

/// The gid of an explicit group, from `group`: a name must be there, a
/// number need not.
fn group_id(wanted: &Id, group: PathBuf) -> Result<gid_t, String> {
    let (gid, group_exists) = first(&group, |line| {
        let entry = GroupEntry::parse(line)?;
        let hit = match wanted {
            Id::Number(n) => entry.gid == *n,
            Id::Name(name) => entry.name == name.as_slice(),
        };
        hit.then_some(entry.gid)
    })?;
    match (gid, wanted) {
        (Some(gid), _) => Ok(gid),
        (None, Id::Number(n)) => Ok(*n),
        (None, Id::Name(name)) => Err(unknown("group", name, &group, group_exists)),
    }
}

/// The supplementary groups of the user called `name`: every group of
/// `group` that lists it, in the file's order.
fn memberships(name: Vec<u8>, group: &Path) -> Result<Vec<gid_t>, String> {
    let mut groups = Vec::new();
    scan(group, |line| {
        if let Some(entry) = GroupEntry::parse(line)
            && entry.has_member(&name)
        {
            groups.push(entry.gid);
        }
        ControlFlow::Continue(())
    })?;
    if groups.len() > MAX_GROUPS {
        return Err(format!(
            "user {} is in {} groups; the kernel allows {MAX_GROUPS}",
            quote(&name),
            groups.len()
        ));
    }
    Ok(groups)
}

/// An entry's home directory, or `/` when the field is empty or missing.
/// (gosu sets HOME to the empty string then; an empty HOME sends `cd` and
/// `~` nowhere useful, so vigil gives `/`.)
fn home_or_root(home: &[u8]) -> OsString {
    if home.is_empty() {
        OsString::from("/")
    } else {
        OsString::from_vec(home.to_vec())
    }
}

/// One /etc/passwd entry: `name:password:uid:gid:gecos:home:shell`.
pub struct PasswdEntry<'a> {
    pub name: &'a [u8],
    pub uid: uid_t,
    pub gid: gid_t,
    pub home: &'a [u8],
}

impl<'a> PasswdEntry<'a> {
    /// None for a malformed entry: fewer than four fields, or a uid or gid
    /// that is not a number. (runc reads a bad number as 0, which would
    /// make `badname:x:1o00:...` root; glibc skips such a line, as vigil
    /// does.) A missing home is empty.
    pub fn parse(line: &'a [u8]) -> Option<PasswdEntry<'a>> {
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
pub struct GroupEntry<'a> {
    pub name: &'a [u8],
    pub gid: gid_t,
    pub members: &'a [u8],
}

impl<'a> GroupEntry<'a> {
    /// None for a malformed entry: fewer than three fields, or a gid that
    /// is not a number. A missing member list is empty.
    pub fn parse(line: &'a [u8]) -> Option<GroupEntry<'a>> {
        let mut fields = line.split(|&b| b == b':');
        let name = fields.next()?;
        let _password = fields.next()?;
        let gid = file_id(fields.next()?)?;
        let members = fields.next().unwrap_or_default();
        Some(GroupEntry { name, gid, members })
    }

    /// Members are compared whole and exactly, as runc compares them (a
    /// blank after a comma is part of the next name).
    pub fn has_member(&self, name: &[u8]) -> bool {
        !name.is_empty() && self.members.split(|&b| b == b',').any(|m| m == name)
    }
}

/// A uid or gid field: decimal digits (an optional `+`, leading zeros, as
/// C's and Go's number parsers take them). Not `(uid_t)-1`, which the
/// kernel's set*id calls reject.
fn file_id(field: &[u8]) -> Option<u32> {
    let value = decimal(field.strip_prefix(b"+").unwrap_or(field))?;
    u32::try_from(value).ok().filter(|&id| id != u32::MAX)
}

/// The first entry of `file` that `hit` takes (it returns what it keeps
/// of the line), and whether the file exists.
fn first<T>(
    file: &Path,
    mut hit: impl FnMut(&[u8]) -> Option<T>,
) -> Result<(Option<T>, bool), String> {
    let mut found = None;
    let exists = scan(file, |line| {
        found = hit(line);
        match found {
            Some(_) => ControlFlow::Break(()),
            None => ControlFlow::Continue(()),
        }
    })?;
    Ok((found, exists))
}

/// Calls `each` with every line of `file` that may hold an entry: trimmed
/// of blanks at both ends (a CR of a DOS line end too), neither empty nor
/// a comment (`#`), until `each` breaks. Returns whether the file exists:
/// a missing file (or a missing directory on the way) has no entries.
fn scan(file: &Path, each: impl FnMut(&[u8]) -> ControlFlow<()>) -> Result<bool, String> {
    let f = match File::open(file) {
        Ok(f) => f,
        Err(e)
            if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) =>
        {
            return Ok(false);
        }
        Err(error) => return Err(read_error(file, &error)),
    };
    scan_lines(BufReader::new(f), file, each).map(|()| true)
}

/// `scan` of what `reader` gives, `file` being where it comes from.
pub fn scan_lines(
    mut reader: impl BufRead,
    file: &Path,
    mut each: impl FnMut(&[u8]) -> ControlFlow<()>,
) -> Result<(), String> {
    let mut line = Vec::new();
    loop {
        line.clear();
        // read_until retries EINTR itself.
        let limit = (MAX_LINE as u64).saturating_add(1);
        let n = (&mut reader)
            .take(limit)
            .read_until(b'\n', &mut line)
            .map_err(|error| read_error(file, &error))?;
        if n == 0 {
            return Ok(());
        }
        // MAX_LINE bytes and the newline may come in; more is too long.
        if line.len() > MAX_LINE && !line.ends_with(b"\n") {
            return Err(format!(
                "{} has a line longer than {} MiB",
                file.display(),
                MAX_LINE >> 20
            ));
        }
        let entry = line.trim_ascii();
        if entry.is_empty() || entry.starts_with(b"#") {
            continue;
        }
        if each(entry).is_break() {
            return Ok(());
        }
    }
}
