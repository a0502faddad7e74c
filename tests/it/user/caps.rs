//! `--caps`: the child and the hooks hold exactly the named capabilities,
//! on the real kernel.
//!
//! - The differential against util-linux's `setpriv`: every `Cap*` line
//!   of the child's /proc/self/status, its uid, gids and groups, equal what
//!   `setpriv --reuid U --regid G --init-groups --inh-caps -all,+X
//!   --ambient-caps +X --bounding-set -all,+X` gives, for several users
//!   (root, a uid without an entry, named users of a crafted /etc/passwd in
//!   a chroot, `USER:GROUP`) and capability lists (none, one, several
//!   across both 32-bit words), as PID 1 and not, by option and by
//!   variable; without `--user`, against the same `setpriv` without the
//!   ids. Groups and `HOME` also equal gosu's, as `--user` without `--caps`
//!   does (tests/user_gosu.rs). Each case also says what the sets must be,
//!   so a fault vigil and setpriv shared would not pass. And every name
//!   `setpriv --list-caps` knows is the same capability to vigil.
//! - The hooks hold the same sets as the child.
//! - Bad input: unknown or empty names are usage errors; a capability
//!   vigil does not hold, a bounding set it cannot cut, a kernel without
//!   ambient capabilities are one line and exit 1 before anything runs;
//!   a step that fails in the forked child is one line and exit 1, and the
//!   program never runs.
//! - vigil as PID 1 still forwards signals to, and drains, a child of
//!   another uid that holds capabilities.
//!
//! The container engines (Docker, podman, with `--cap-drop ALL`) are in
//! tests/caps_engines.rs.

use crate::common::*;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// What each run prints: the ids, groups and capability sets as the
/// kernel holds them, then HOME.
const SCRIPT: &str = "grep -E '^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapBnd|CapAmb):' /proc/self/status; \
     echo \"HOME: ${HOME-(unset)}\"";

/// The HOME every run starts with.
const START_HOME: &str = "/start/home";

// ---------------------------------------------------------------------------
// The root directory of the differential
// ---------------------------------------------------------------------------

/// Every named user is listed in its own primary group: `setpriv
/// --init-groups` (glibc's `initgroups`) always adds the primary gid to
/// the supplementary groups, gosu (and so vigil) adds only the groups that
/// list the user; with the primary group listing its user, both give the
/// same list.
const PASSWD: &str = "\
root:x:0:0:root:/root:/bin/sh
alice:x:1000:1000:Alice:/home/alice:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
";

const GROUP: &str = "\
root:x:0:root
wheel:x:10:root
audio:x:29:alice
staff:x:50:alice
alice:x:1000:alice
nogroup:x:65534:nobody
";

/// A root directory with busybox (`sh`, `grep`, `echo`), Debian's static
/// gosu, setpriv with the shared libraries `ldd` names, vigil, and the
/// files above.
fn make_root() -> TempDir {
    let dir = TempDir::new("caps-root");
    let root = dir.path();
    for d in ["bin", "etc", "proc"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
    busybox_bin(root, &which("busybox"), &["sh", "grep", "echo", "cat"]).unwrap();
    let gosu = ["/usr/sbin/gosu", "/usr/bin/gosu"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .expect("Debian's gosu is missing: apt-get install gosu (.ci/run installs it)");
    std::fs::copy(&gosu, root.join("gosu")).unwrap();
    std::fs::copy(vigil_bin(), root.join("vigil")).unwrap();
    let setpriv = which("setpriv");
    std::fs::copy(&setpriv, root.join("bin/setpriv")).unwrap();
    for lib in shared_libraries(&setpriv) {
        let to = root.join(lib.strip_prefix("/").unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&lib, &to).unwrap();
    }
    std::fs::write(root.join("etc/passwd"), PASSWD).unwrap();
    std::fs::write(root.join("etc/group"), GROUP).unwrap();
    dir
}

/// The files `ldd` says a program loads (the libraries and the loader).
fn shared_libraries(program: &Path) -> Vec<PathBuf> {
    let out = run_cmd(
        std::process::Command::new("ldd").arg(program),
        std::time::Duration::from_secs(30),
    );
    text(&out.stdout)
        .lines()
        .filter_map(|line| {
            let path = match line.split_once("=>") {
                Some((_, after)) => after.split_whitespace().next()?,
                None => line.split_whitespace().next()?,
            };
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Running one case
// ---------------------------------------------------------------------------

/// What a run showed: each status line's value (blanks collapsed), and
/// HOME.
type Seen = BTreeMap<String, String>;

fn seen(out: &Output) -> Result<Seen, String> {
    if out.status != Exit::Code(0) {
        return Err(format!("failed: {out}"));
    }
    let mut lines = BTreeMap::new();
    for line in out.stdout.lines() {
        let (key, value) = line
            .split_once(':')
            .ok_or_else(|| format!("odd line {line:?}: {out}"))?;
        let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
        lines.insert(key.to_string(), value);
    }
    if lines.len() != 9 {
        return Err(format!("expected 9 lines: {out}"));
    }
    Ok(lines)
}

/// How the case's program is started in the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Runner {
    Setpriv,
    Gosu,
    /// `vigil --user U --caps X --` as PID 1 of a new PID namespace.
    VigilPid1,
    /// The same, not PID 1.
    VigilPlain,
    /// `VIGIL_USER=U VIGIL_CAPS=X vigil --`, not PID 1.
    VigilEnv,
}

const VIGILS: [Runner; 3] = [Runner::VigilPid1, Runner::VigilPlain, Runner::VigilEnv];

/// A user: the `--user` spec (gosu's too), and the ids setpriv is given
/// for it.
#[derive(Clone, Copy, Debug)]
struct User {
    spec: &'static str,
    setpriv: &'static [&'static str],
    /// The uid, for the expected sets.
    uid: u32,
}

const USERS: &[User] = &[
    User {
        spec: "root",
        setpriv: &["--reuid", "0", "--regid", "0", "--init-groups"],
        uid: 0,
    },
    User {
        spec: "alice",
        setpriv: &["--reuid", "1000", "--regid", "1000", "--init-groups"],
        uid: 1000,
    },
    User {
        spec: "nobody",
        setpriv: &["--reuid", "65534", "--regid", "65534", "--init-groups"],
        uid: 65534,
    },
    // A uid without an entry keeps vigil's gid and gets no groups, as
    // under gosu; setpriv has no entry to init the groups from.
    User {
        spec: "4321",
        setpriv: &["--reuid", "4321", "--regid", "0", "--clear-groups"],
        uid: 4321,
    },
    // USER:GROUP: exactly that group, no supplementary ones.
    User {
        spec: "alice:staff",
        setpriv: &["--reuid", "1000", "--regid", "50", "--clear-groups"],
        uid: 1000,
    },
];

/// A capability list: as vigil is given it (spelt in the ways it takes),
/// as setpriv is, and the bits.
#[derive(Clone, Copy, Debug)]
struct Caps {
    vigil: &'static str,
    setpriv: &'static [&'static str],
    mask: u64,
}

const CAP_LISTS: &[Option<Caps>] = &[
    None,
    Some(Caps {
        vigil: "NET_BIND_SERVICE",
        setpriv: &["net_bind_service"],
        mask: 1 << 10,
    }),
    // Across both 32-bit words of the kernel's structures.
    Some(Caps {
        vigil: "CAP_CHOWN,net_raw, Sys_Time,AUDIT_READ,cap_bpf",
        setpriv: &["chown", "net_raw", "sys_time", "audit_read", "bpf"],
        mask: 1 | 1 << 13 | 1 << 25 | 1 << 37 | 1 << 39,
    }),
];

/// The root's mount of /proc and chroot, as PID 1 of a new PID namespace
/// or not, then the program.
fn in_root(root: &Path, pid1: bool) -> Vec<String> {
    let mut prefix = vec![which("unshare").display().to_string()];
    if pid1 {
        prefix.extend(["--pid".into(), "--fork".into()]);
    }
    prefix.push(format!("--mount-proc={}/proc", root.display()));
    prefix.push(which("chroot").display().to_string());
    prefix.push(root.display().to_string());
    prefix
}

fn run(root: &Path, runner: Runner, user: Option<&User>, caps: Option<&Caps>) -> Output {
    let script = ["/bin/sh", "-c", SCRIPT];
    let prefix = in_root(root, runner == Runner::VigilPid1);
    let v = Vigil::wrapped(&prefix)
        .env("HOME", START_HOME)
        .env("PATH", "/bin");
    let v = match runner {
        Runner::Setpriv => {
            let mut args: Vec<String> = Vec::new();
            if let Some(user) = user {
                args.extend(user.setpriv.iter().map(|s| s.to_string()));
            }
            if let Some(caps) = caps {
                let plus: Vec<String> = caps.setpriv.iter().map(|c| format!("+{c}")).collect();
                let all = format!("-all,{}", plus.join(","));
                args.extend(["--inh-caps".into(), all.clone()]);
                args.extend(["--ambient-caps".into(), plus.join(",")]);
                args.extend(["--bounding-set".into(), all]);
            }
            v.program("/bin/setpriv").args(&args).args(script)
        }
        Runner::Gosu => v
            .program("/gosu")
            .arg(user.expect("gosu needs a user").spec)
            .args(script),
        Runner::VigilPid1 | Runner::VigilPlain => {
            let mut v = v.program("/vigil");
            if let Some(user) = user {
                v = v.arg(format!("--user={}", user.spec));
            }
            if let Some(caps) = caps {
                v = v.arg(format!("--caps={}", caps.vigil));
            }
            v.arg("--").args(script)
        }
        Runner::VigilEnv => {
            let mut v = v.program("/vigil");
            if let Some(user) = user {
                v = v.env("VIGIL_USER", user.spec);
            }
            if let Some(caps) = caps {
                v = v.env("VIGIL_CAPS", caps.vigil);
            }
            v.arg("--").args(script)
        }
    };
    v.run()
}

/// The lines of `a` and `b` named in `keys` that differ.
fn differences(a: &Seen, b: &Seen, keys: &[&str]) -> Vec<String> {
    keys.iter()
        .filter(|k| a.get(**k) != b.get(**k))
        .map(|k| format!("{k}: {:?} against {:?}", a.get(*k), b.get(*k)))
        .collect()
}

const CAP_KEYS: [&str; 5] = ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"];
const ID_KEYS: [&str; 3] = ["Uid", "Gid", "Groups"];

/// The host's bounding set, which a run without `--caps` keeps.
fn own_bounding() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status_text_field(&status, "CapBnd").unwrap()
}

/// What the capability lines must be, whatever setpriv says.
fn expected_caps(user: Option<&User>, caps: Option<&Caps>) -> Vec<(&'static str, String)> {
    let hex = |mask: u64| format!("{mask:016x}");
    match caps {
        Some(caps) => CAP_KEYS.iter().map(|k| (*k, hex(caps.mask))).collect(),
        // `--user` alone: the uid switch drops everything (root keeps
        // everything), the bounding set is left as it is.
        None => {
            let bounding = own_bounding();
            let held = if user.is_some_and(|u| u.uid == 0) {
                bounding.clone()
            } else {
                hex(0)
            };
            vec![
                ("CapInh", hex(0)),
                ("CapPrm", held.clone()),
                ("CapEff", held),
                ("CapBnd", bounding),
                ("CapAmb", hex(0)),
            ]
        }
    }
}

#[test]
fn the_sets_ids_and_groups_are_setprivs_and_home_is_gosus() {
    let root = make_root();
    let mut cases: Vec<(Option<&User>, Option<&Caps>)> = Vec::new();
    for user in USERS {
        for caps in CAP_LISTS {
            cases.push((Some(user), caps.as_ref()));
        }
    }
    // Without --user: vigil's own user (root) with exactly the list.
    for caps in CAP_LISTS.iter().flatten() {
        cases.push((None, Some(caps)));
    }
    let mut failures = Vec::new();
    let mut runs = 0;
    for &(user, caps) in &cases {
        let label = format!(
            "--user {} --caps {}",
            user.map_or("(none)", |u| u.spec),
            caps.map_or("(none)", |c| c.vigil)
        );
        let reference = seen(&run(root.path(), Runner::Setpriv, user, caps));
        runs += 1;
        let reference = match reference {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{label}: setpriv {e}"));
                continue;
            }
        };
        // setpriv itself is held to what the sets must be.
        for (key, want) in expected_caps(user, caps) {
            if reference.get(key) != Some(&want) {
                failures.push(format!(
                    "{label}: setpriv gives {key} {:?}, not {want}",
                    reference.get(key)
                ));
            }
        }
        let gosu = match user {
            Some(_) => {
                runs += 1;
                match seen(&run(root.path(), Runner::Gosu, user, None)) {
                    Ok(g) => Some(g),
                    Err(e) => {
                        failures.push(format!("{label}: gosu {e}"));
                        continue;
                    }
                }
            }
            None => None,
        };
        for runner in VIGILS {
            runs += 1;
            let out = run(root.path(), runner, user, caps);
            let got = match seen(&out) {
                Ok(got) => got,
                Err(e) => {
                    failures.push(format!("{label} {runner:?}: {e}"));
                    continue;
                }
            };
            let mut wrong = differences(&got, &reference, &CAP_KEYS);
            wrong.extend(differences(&got, &reference, &ID_KEYS));
            match &gosu {
                Some(gosu) => wrong.extend(differences(&got, gosu, &["Groups", "HOME"])),
                // vigil's own user: HOME as it was, as under setpriv.
                None => wrong.extend(differences(&got, &reference, &["HOME"])),
            }
            if !wrong.is_empty() {
                failures.push(format!("{label} {runner:?}: {}\n{out}", wrong.join("; ")));
            }
        }
    }
    say_uncaptured(&format!(
        "caps: {} cases, {runs} runs against setpriv and gosu",
        cases.len()
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every capability `setpriv --list-caps` names (util-linux's table, not
/// vigil's) is the same capability under vigil: the child's effective set
/// is setpriv's for it, or, for one this machine does not grant, vigil
/// refuses it.
#[test]
fn every_name_setpriv_knows_is_the_same_capability() {
    let list = run_cmd(
        std::process::Command::new("setpriv").arg("--list-caps"),
        std::time::Duration::from_secs(30),
    );
    let names: Vec<String> = text(&list.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect();
    assert!(names.len() >= 38, "setpriv --list-caps: {names:?}");
    let effective = |out: &Output| {
        out.stdout
            .lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .map(|v| v.trim().to_string())
    };
    let bounding = u64::from_str_radix(&own_bounding(), 16).unwrap();
    for (number, name) in names.iter().enumerate() {
        let vigil = Vigil::plain()
            .args(["--caps", &name.to_uppercase(), "--", "grep", "^CapEff:"])
            .arg("/proc/self/status")
            .run();
        if bounding & 1 << number == 0 {
            assert_eq!(vigil.status, Exit::Code(1), "{name}: {vigil}");
            let want = format!("CAP_{}", name.to_uppercase());
            assert!(vigil.stderr.contains(&want), "{name}: {vigil}");
            continue;
        }
        let setpriv = std::process::Command::new("setpriv")
            .args(["--inh-caps", &format!("-all,+{name}")])
            .args(["--ambient-caps", &format!("+{name}")])
            .args(["--bounding-set", &format!("-all,+{name}")])
            .args(["grep", "^CapEff:", "/proc/self/status"])
            .output()
            .unwrap();
        let setpriv = Output {
            status: Exit::Code(setpriv.status.code().unwrap_or(-1)),
            stdout: text(&setpriv.stdout),
            stderr: text(&setpriv.stderr),
        };
        assert_eq!(vigil.status, Exit::Code(0), "{name}: {vigil}");
        assert_eq!(
            effective(&vigil),
            Some(format!("{:016x}", 1u64 << number)),
            "{name}: vigil {vigil}"
        );
        assert_eq!(effective(&vigil), effective(&setpriv), "{name}: {setpriv}");
    }
}

// ---------------------------------------------------------------------------
// The hooks
// ---------------------------------------------------------------------------

/// A directory anyone may read and write.
fn open_dir(tag: &str) -> TempDir {
    let dir = TempDir::new(tag);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

/// The child, the post-start hook and the pre-stop hook each write their
/// uid and capability lines: all the same, as the user and without it.
#[test]
fn the_hooks_hold_the_same_sets_as_the_child() {
    const WHO: &str = "{ id -u; grep ^Cap /proc/self/status; }";
    for user in [Some("nobody"), None] {
        for v in [Vigil::plain(), Vigil::pid1()] {
            let dir = open_dir("caps-hooks");
            // Written whole, then renamed: the test reads a file as soon
            // as it exists.
            let hook = |name: &str| format!("sh -c '{WHO} > {name}.tmp; mv {name}.tmp {name}'");
            let mut v = v.args(["--caps", "NET_BIND_SERVICE,net_raw"]);
            if let Some(user) = user {
                v = v.args(["--user", user]);
            }
            let run = start_sh(
                v.args(["--post-start", &hook("post")])
                    .args(["--pre-stop", &hook("pre")]),
                &dir,
                &format!("{WHO} > child; : > ready; exec sleep 1000"),
            );
            assert!(
                wait_for_file(&dir.join("post"), TIMEOUT),
                "{}",
                run.describe()
            );
            let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
            assert_eq!(out.status, Exit::Code(143), "{out}");
            let child = read_trimmed(&dir.join("child"));
            let uid = if user.is_some() { "65534" } else { "0" };
            let mask = format!("{:016x}", 1u64 << 10 | 1 << 13);
            let want: Vec<String> = std::iter::once(uid.to_string())
                .chain(CAP_KEYS.iter().map(|k| format!("{k}:\t{mask}")))
                .collect();
            assert_eq!(child.lines().collect::<Vec<_>>(), want, "{out}");
            for hook in ["post", "pre"] {
                assert_eq!(read_trimmed(&dir.join(hook)), child, "{hook}: {out}");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Bad input
// ---------------------------------------------------------------------------

#[test]
fn unknown_and_empty_names_are_usage_errors() {
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a [&'a str]);
    let cases: &[Case] = &[
        (&["--caps", "NET_BIND"], &[], &["--caps", "'NET_BIND'"]),
        (&["--caps", "net_raw,sys_nothing"], &[], &["'sys_nothing'"]),
        (&["--caps", "CAP_"], &[], &["'CAP_'"]),
        (&["--caps", ""], &[], &["names no capability"]),
        (&["--caps", ","], &[], &["an empty name"]),
        (&["--caps", "net_raw,"], &[], &["an empty name"]),
        (&["--caps=-net_raw"], &[], &["'-net_raw'"]),
        (&["--caps", "-net_raw"], &[], &["--caps needs a value"]),
        (
            &["--caps", "net_raw", "--caps", "chown"],
            &[],
            &["given twice"],
        ),
        (
            &[],
            &[("VIGIL_CAPS", "NET_BIND")],
            &["VIGIL_CAPS", "'NET_BIND'"],
        ),
        (
            &[],
            &[("VIGIL_CAPS", " , ")],
            &["VIGIL_CAPS", "an empty name"],
        ),
    ];
    for pid1 in [false, true] {
        for (args, env, needles) in cases {
            let dir = TempDir::new("caps-usage");
            let v = if pid1 { Vigil::pid1() } else { Vigil::plain() };
            let mut v = v.cwd(dir.path()).args(*args);
            for (k, val) in *env {
                v = v.env(k, val);
            }
            let out = v
                .args(["--post-start", "touch hook", "--", "touch", "child"])
                .run();
            let line = usage_error_line(&out, &format!("{args:?} {env:?}"));
            for needle in *needles {
                assert!(line.contains(needle), "{args:?} {env:?}: {line}");
            }
            assert!(!dir.join("child").exists() && !dir.join("hook").exists());
        }
    }
}

/// An empty `VIGIL_CAPS` counts as unset, as every empty `VIGIL_*`: the
/// child keeps what vigil has.
#[test]
fn an_empty_vigil_caps_is_unset() {
    let out = Vigil::plain()
        .env("VIGIL_CAPS", "")
        .args(["--", "grep", "^CapBnd:", "/proc/self/status"])
        .run();
    assert_eq!(out.status, Exit::Code(0), "{out}");
    assert_eq!(
        out.stdout.trim(),
        format!("CapBnd:\t{}", own_bounding()),
        "{out}"
    );
}

/// The one error line of a run that started nothing, the termination log
/// holding the same words, and no child or hook.
fn assert_refused(out: &Output, dir: &TempDir, log: &Path, starts: &str, names: &[&str]) {
    assert_eq!(out.status, Exit::Code(1), "{out}");
    let lines = out.stderr_lines();
    assert_eq!(lines.len(), 1, "one line: {out}");
    assert!(lines[0].starts_with(starts), "{out}");
    for name in names {
        assert!(lines[0].contains(name), "{name}: {out}");
    }
    assert!(
        !dir.join("child").exists() && !dir.join("hook").exists(),
        "something ran: {out}"
    );
    assert_eq!(
        std::fs::read_to_string(log).unwrap_or_default().trim_end(),
        lines[0].trim_start_matches("vigil: error: "),
        "the termination log says why"
    );
}

/// `v` with a termination log in `dir`, a post-start hook and a child that
/// each leave a file, were they ever run.
fn refused_run(v: Vigil, dir: &TempDir, caps: &str) -> (Output, PathBuf) {
    let log = dir.join("termination-log");
    let out = v
        .cwd(dir.path())
        .args(["--caps", caps, "--termination-log"])
        .arg(&log)
        .args(["--post-start", "touch hook", "--", "touch", "child"])
        .run();
    (out, log)
}

/// A capability vigil does not hold (dropped from its bounding set, as
/// `docker run --cap-drop` does): one line that names it and where to
/// grant it, exit 1, nothing runs.
#[test]
fn a_capability_vigil_lacks_starts_nothing_and_says_where_to_grant_it() {
    let drop_admin = ["setpriv", "--bounding-set", "-sys_admin,-net_admin"];
    for pid1 in [false, true] {
        // unshare first: it needs CAP_SYS_ADMIN; setpriv execs vigil,
        // which so becomes PID 1.
        let mut prefix: Vec<&str> = Vec::new();
        if pid1 {
            prefix.extend(["unshare", "--pid", "--fork", "--mount-proc"]);
        }
        prefix.extend(drop_admin);
        for user in [None, Some("nobody")] {
            let dir = open_dir("caps-lacks");
            let mut v = Vigil::wrapped(&prefix);
            if let Some(user) = user {
                v = v.args(["--user", user]);
            }
            let (out, log) = refused_run(v, &dir, "net_raw,SYS_ADMIN,net_admin");
            assert_refused(
                &out,
                &dir,
                &log,
                "vigil: error: cannot give the child CAP_NET_ADMIN, CAP_SYS_ADMIN: vigil does \
                 not hold them (not in its bounding set)",
                &[
                    "--cap-add NET_ADMIN --cap-add SYS_ADMIN",
                    "capabilities.add",
                ],
            );
        }
    }
    // Started as another user than root, vigil holds no capability.
    let dir = open_dir("caps-not-root");
    let v = Vigil::wrapped(&[
        "setpriv",
        "--reuid",
        "65534",
        "--regid",
        "65534",
        "--clear-groups",
    ]);
    let (out, log) = refused_run(v, &dir, "NET_BIND_SERVICE");
    assert_refused(
        &out,
        &dir,
        &log,
        "vigil: error: cannot give the child CAP_NET_BIND_SERVICE: vigil does not hold it",
        &["vigil runs as uid 65534", "start vigil as root"],
    );
}

/// Without CAP_SETPCAP vigil cannot cut the child's bounding set: unless
/// no-new-privileges keeps what stays there out of reach, that is one
/// line naming the way out and exit 1; with it, the child runs with
/// exactly the list, and the log says what the bounding set keeps.
#[test]
fn a_bounding_set_vigil_cannot_cut_needs_no_new_privileges() {
    let without_setpcap = [
        "setpriv",
        "--bounding-set",
        "-all,+setuid,+setgid,+kill,+net_raw",
        "--inh-caps",
        "-all",
    ];
    let dir = open_dir("caps-setpcap");
    let v = Vigil::wrapped(&without_setpcap).args(["--user", "nobody"]);
    let (out, log) = refused_run(v, &dir, "net_raw");
    assert_refused(
        &out,
        &dir,
        &log,
        "vigil: error: cannot cut the child's bounding set to what --caps names: vigil lacks \
         CAP_SETPCAP, so CAP_KILL, CAP_SETGID, CAP_SETUID would stay there",
        &["--cap-add SETPCAP", "no-new-privileges"],
    );

    // As root too: exec would give root its whole bounding set, but under
    // no-new-privileges no more than it held before exec.
    let nnp = [&without_setpcap[..], &["--no-new-privs"]].concat();
    for user in [Some("nobody"), None] {
        let mut v = Vigil::wrapped(&nnp).args(["-v", "--log-format", "json"]);
        if let Some(user) = user {
            v = v.args(["--user", user]);
        }
        let out = v
            .args(["--caps", "net_raw", "--", "grep", "^Cap"])
            .arg("/proc/self/status")
            .run();
        no_setpcap_but_nnp(&out);
    }
}

/// The sets and the `capabilities` record of a run without CAP_SETPCAP,
/// under no-new-privileges, with `--caps net_raw`.
fn no_setpcap_but_nnp(out: &Output) {
    assert_eq!(out.status, Exit::Code(0), "{out}");
    let held = format!("{:016x}", 1u64 << 13);
    let bounding = format!("{:016x}", 1u64 << 5 | 1 << 6 | 1 << 7 | 1 << 13);
    for (key, want) in [
        ("CapInh", &held),
        ("CapPrm", &held),
        ("CapEff", &held),
        ("CapBnd", &bounding),
        ("CapAmb", &held),
    ] {
        assert_eq!(
            status_text_field(&out.stdout, key).as_ref(),
            Some(want),
            "{key}: {out}"
        );
    }
    let record = out
        .stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|r| r["event"] == "capabilities")
        .unwrap_or_else(|| panic!("no capabilities record: {out}"));
    assert_eq!(record["caps"], "NET_RAW", "{record}");
    assert_eq!(record["bounding"], "KILL,SETGID,SETUID,NET_RAW", "{record}");
    assert_eq!(record["bounding_cut"], false, "{record}");
}

/// A kernel without ambient capabilities (before 4.3) refuses the probe
/// with EINVAL; strace makes this one do so (vigil's first prctl is that
/// probe).
#[test]
fn a_kernel_without_ambient_capabilities_is_one_line() {
    let dir = open_dir("caps-no-ambient");
    let v = Vigil::wrapped(&[
        "strace",
        "-o",
        "/dev/null",
        "-e",
        "trace=prctl",
        "-e",
        "inject=prctl:error=EINVAL:when=1",
    ]);
    let (out, log) = refused_run(v, &dir, "NET_BIND_SERVICE");
    assert_refused(
        &out,
        &dir,
        &log,
        "vigil: error: --caps needs ambient capabilities, which this kernel does not have",
        &["4.3"],
    );
}

/// A step that fails in the forked child (here capset, which strace makes
/// fail there: vigil itself never calls it) is one line naming the step,
/// exit 1, and the program never runs; for the child and for a hook.
#[test]
fn a_step_that_fails_in_the_child_is_reported_and_nothing_runs() {
    let dir = open_dir("caps-child-fails");
    let log = dir.join("termination-log");
    let out = Vigil::wrapped(&[
        "strace",
        "-f",
        "-o",
        "/dev/null",
        "-e",
        "trace=capset",
        "-e",
        "inject=capset:error=EPERM",
    ])
    .cwd(dir.path())
    .args(["--user", "nobody", "--caps", "net_raw", "--termination-log"])
    .arg(&log)
    .args(["--", "touch", "child"])
    .run();
    assert_eq!(out.status, Exit::Code(1), "{out}");
    let want = "vigil: error: cannot run \"touch\" with capabilities CAP_NET_RAW: capset \
                failed: Operation not permitted";
    assert_eq!(out.stderr_lines(), [want], "{out}");
    assert!(!dir.join("child").exists(), "the child ran: {out}");
    assert_eq!(
        read_trimmed(&log),
        want.trim_start_matches("vigil: error: "),
        "{out}"
    );
    // The same in json: the step and the list as fields.
    let out = Vigil::wrapped(&[
        "strace",
        "-f",
        "-o",
        "/dev/null",
        "-e",
        "trace=capset",
        "-e",
        "inject=capset:error=EPERM",
    ])
    .cwd(dir.path())
    .args(["--log-format", "json", "--caps", "net_raw,chown"])
    .args(["--", "touch", "child"])
    .run();
    assert_eq!(out.status, Exit::Code(1), "{out}");
    assert!(!dir.join("child").exists(), "the child ran: {out}");
    let lines = out.stderr_lines();
    assert_eq!(lines.len(), 1, "{out}");
    let record: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    for (key, want) in [
        ("event", "caps_switch_failed"),
        ("program", "touch"),
        ("caps", "CHOWN,NET_RAW"),
        ("call", "capset"),
        ("error", "Operation not permitted"),
    ] {
        assert_eq!(record[key], want, "{key}: {out}");
    }
    assert_eq!(record["status"], 1, "{out}");
}

// ---------------------------------------------------------------------------
// vigil as PID 1 with a narrowed child
// ---------------------------------------------------------------------------

/// vigil keeps its own capabilities: it forwards signals to a child that
/// runs as another uid with capabilities (to its group with -g), the stop
/// ends it, and the drain ends what it left behind.
#[test]
fn signals_and_the_drain_reach_a_narrowed_child_of_another_uid() {
    for v in [Vigil::plain(), Vigil::pid1().arg("-g")] {
        let dir = open_dir("caps-signals");
        let rec = dir.join("rec");
        let run = spawn_sigrec(
            v.args(["--user", "nobody", "--caps", "NET_BIND_SERVICE"]),
            &rec,
            &["--exit-on", "15"],
        );
        let child = run.child_pid();
        assert_eq!(
            status_field(child, "CapAmb").as_deref(),
            Some("0000000000000400"),
            "{}",
            run.describe()
        );
        run.signal(libc::SIGUSR1);
        assert!(
            wait_for_signal(&rec, libc::SIGUSR1, TIMEOUT),
            "{}",
            run.describe()
        );
        let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
        assert_eq!(out.status, Exit::Code(0), "{out}");
        assert!(read_signals(&rec).contains(&libc::SIGTERM), "{out}");
        assert!(!out.stderr.contains("could not send"), "{out}");
    }
    let dir = open_dir("caps-drain");
    let out = Vigil::pid1()
        .cwd(dir.path())
        .args(["-v", "--user", "nobody", "--caps", "NET_BIND_SERVICE"])
        .args(["--", "sh", "-c", "sleep 1000 & echo $! > left"])
        .run();
    assert_eq!(out.status, Exit::Code(0), "{out}");
    assert!(out.stderr.contains("drain: SIGTERM to 1 process"), "{out}");
    assert!(exit_report(&out.stderr).is_some(), "{out}");
}
