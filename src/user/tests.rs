//! The user module's tests: spec shapes, gosu's matrix against crafted
//! files, the files' quirks and limits, and the switch itself in a forked
//! child (as root).

use super::files::{MAX_GROUPS, MAX_LINE};
use super::*;
use std::path::PathBuf;

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

    fn resolve(&self, spec: &str) -> Result<Identity, String> {
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
    let problem = |s: &str, why: &str| {
        let error = p(s).unwrap_err();
        assert!(error.contains(&format!(": {why}")), "{error}");
    };
    problem("", "it is empty");
    problem(":", "it is empty");
    problem("a:b:c", "more than one ':'");
    problem("::", "more than one ':'");
    problem("-1", "-1 is not an id");
    problem("1:2147483648", "2147483648 is not an id");
    problem(
        "99999999999999999999999",
        "99999999999999999999999 is not an id",
    );
    assert_eq!(
        p("a:b:c").unwrap_err(),
        r#"invalid user "a:b:c": more than one ':' (accepted: USER, USER:GROUP or :GROUP, each a name or a number)"#
    );
    assert_eq!(
        p("-1").unwrap_err(),
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
    assert!(
        nothing
            .show("1000:alice")
            .starts_with("error: there is no group")
    );

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
