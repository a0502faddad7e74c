//! `--user SPEC` gives gosu's results, checked against Debian's gosu
//! binary.
//!
//! The set-up is a small root directory per "world": busybox-static (with
//! `sh`, `id`, `grep` and `echo` links), Debian's static `gosu`, the vigil
//! under test, and a crafted `/etc/passwd` and `/etc/group` (or none). Each
//! case runs `id -u; id -g; id -G; grep ^Groups: /proc/self/status; echo
//! "$HOME"` inside it with `chroot`, HOME preset to a wrong value:
//!
//! - under `gosu SPEC`;
//! - under `vigil --user SPEC --` as PID 1 of a new PID namespace;
//! - under `vigil --user SPEC --` not as PID 1;
//! - under `VIGIL_USER=SPEC vigil --` not as PID 1.
//!
//! (`unshare --mount-proc=ROOT/proc` gives each run a /proc, which gosu
//! needs for its setuid check and the script for the kernel's group list.)
//! Compared: success or failure (and the status), and the five values: uid,
//! gid, what `id -G` prints, the supplementary groups as the kernel holds
//! them, and HOME.
//!
//! Comparing with gosu alone would let a fault both share pass, or a
//! harness that observes nothing: every case also says what gosu must give
//! (Debian 12's gosu 1.14, built with runc 1.1.5's `libcontainer/user`),
//! and gosu is held to that too. Its half runs on
//! every machine with gosu installed, so CI notices when gosu itself moves.
//!
//! Where vigil deliberately differs from gosu, the case names the
//! difference (`Difference`, each one listed in the README's "Where vigil
//! differs from gosu"), and the check is that vigil's outcome is the one
//! the difference describes; everything else must match gosu's exactly.
//!
//! `VIGIL_USER_DIFF_TABLE=1` prints every case's gosu result;
//! `VIGIL_USER_DIFF_ONLY=LABEL` runs one case (labels are `WORLD SPEC`,
//! with ` as 1000` for the runs as a non-root user).

use crate::common::*;
use std::fmt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The HOME every run starts with; gosu and vigil must replace it.
const WRONG_HOME: &str = "/wrong/home";

/// What each run prints, one value a line.
const SCRIPT: &str =
    "id -u; id -g; id -G; grep '^Groups:' /proc/self/status; echo \"${HOME-(unset)}\"";

/// The user the non-root cases run as (uid and gid; also its only group).
const USER_ID: u32 = 1000;

// ---------------------------------------------------------------------------
// Worlds: the root directories
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum World {
    /// Realistic files, plus a group of 500 members, a user in 300 groups,
    /// names that look like numbers, a numeric name, an empty home, a
    /// duplicate entry.
    Standard,
    /// Standard's /etc/passwd, no /etc/group.
    NoGroup,
    /// Standard's /etc/group, no /etc/passwd.
    NoPasswd,
    /// Neither file (an empty /etc).
    NoEtc,
    /// Comments, blank lines, malformed entries, blanks around lines and
    /// fields, a CR line end, a negative id, a huge id, a nameless entry.
    Quirks,
    /// Standard's files, with a 100 KB line in /etc/passwd (a long GECOS).
    LongPasswd,
    /// Standard's files, with a 1.3 MB line in /etc/group (110,000 members).
    LongGroup,
    /// Standard's files; gosu and vigil installed setuid root.
    Setuid,
    /// Standard's files; gosu and vigil installed setgid root.
    Setgid,
}

const WORLDS: &[World] = &[
    World::Standard,
    World::NoGroup,
    World::NoPasswd,
    World::NoEtc,
    World::Quirks,
    World::LongPasswd,
    World::LongGroup,
    World::Setuid,
    World::Setgid,
];

const STANDARD_PASSWD: &str = "\
root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
games:x:5:60:games:/usr/games:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
alice:x:1000:1000:Alice:/home/alice:/bin/sh
bob:x:1001:1001::/home/bob:/bin/sh
nohome:x:1002:1002:no home::/bin/sh
0day:x:1003:1003::/home/0day:/bin/sh
1000:x:2000:2000::/home/thousand:/bin/sh
many:x:1004:1004::/home/many:/bin/sh
dup:x:1007:1007::/home/dup1:/bin/sh
dup:x:1008:1008::/home/dup2:/bin/sh
sameuid:x:1000:1100::/home/sameuid:/bin/sh
";

fn standard_group() -> String {
    let mut g = String::from(
        "\
root:x:0:
daemon:x:1:
adm:x:4:alice
staff:x:50:alice,games,many
games:x:60:
users:x:100:games,alice
nogroup:x:65534:
alice:x:1000:
bob:x:1001:
0day:x:1003:0day
1000:x:2000:
thousands:x:2001:1000
",
    );
    // A group of 500 members, alice last.
    g.push_str("big:x:3000:");
    for i in 0..500 {
        g.push_str(&format!("u{i},"));
    }
    g.push_str("alice\n7up:x:3001:alice\n");
    // many is in 300 more groups.
    for i in 1..=300 {
        g.push_str(&format!("g{i}:x:{}:many\n", 5000 + i));
    }
    g
}

const QUIRKS_PASSWD: &str = "\
#root:x:0:0::/from-comment:/bin/sh
root:x:0:0:root:/root:/bin/sh

  \t
  spaced:x:1009:1009::/home/spaced:/bin/sh
badid:x:12ab:1006::/home/badid:/bin/sh
short:x:1005
neg:x:-2:-2::/home/neg:/bin/sh
crlf:x:1011:1011::/home/crlf:/bin/sh\r
#bob:x:1001:1001::/home/bob:/bin/sh
dave:x:1004:1004
plus:x:+7:007::/plus:/bin/sh
big:x:3000000000:3000000000::/big:/bin/sh
:x:1013:1013::/nameless:/bin/sh
";

const QUIRKS_GROUP: &str = "\
#wheel:x:10:spaced
badgid:x:x7:spaced
sp:x:40 :spaced
  indented:x:1200:spaced\t
crlfgrp:x:1011:crlf\r
blank:x:1300: spaced
nameless:x:1400:
";

/// (passwd, group) of a world; None: the file does not exist.
fn world_files(world: World) -> (Option<String>, Option<String>) {
    let passwd = Some(STANDARD_PASSWD.to_string());
    let group = Some(standard_group());
    match world {
        World::Standard | World::Setuid | World::Setgid => (passwd, group),
        World::NoGroup => (passwd, None),
        World::NoPasswd => (None, group),
        World::NoEtc => (None, None),
        World::Quirks => (Some(QUIRKS_PASSWD.into()), Some(QUIRKS_GROUP.into())),
        World::LongPasswd => {
            let long = format!(
                "long:x:1010:1010:{}:/home/long:/bin/sh\n",
                "a".repeat(100_000)
            );
            (Some(format!("{long}{STANDARD_PASSWD}")), group)
        }
        World::LongGroup => {
            let mut huge = String::from("huge:x:3500:");
            for i in 0..110_000 {
                huge.push_str(&format!("member{i:06},"));
            }
            huge.push_str("alice\n");
            (passwd, Some(format!("{huge}{}", standard_group())))
        }
    }
}

fn gosu_bin() -> PathBuf {
    ["/usr/sbin/gosu", "/usr/bin/gosu"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("Debian's gosu is missing: apt-get install gosu (.ci/run installs it)")
        })
}

fn busybox_bin() -> PathBuf {
    which("busybox")
}

/// The root directories, one per world, removed when the test ends (also
/// when it fails: the test owns them, no static does).
struct Lab(Vec<(World, TempDir)>);

impl Lab {
    fn new() -> Lab {
        Lab(WORLDS.iter().map(|&w| (w, make_root(w))).collect())
    }

    fn root(&self, world: World) -> &Path {
        self.0
            .iter()
            .find(|(w, _)| *w == world)
            .map(|(_, d)| d.path())
            .unwrap()
    }
}

fn make_root(world: World) -> TempDir {
    let dir = TempDir::new(&format!("user-{world:?}").to_lowercase());
    let root = dir.path();
    for d in ["bin", "etc", "proc"] {
        std::fs::create_dir(root.join(d)).unwrap();
    }
    // The root must be reachable for the non-root runs.
    for d in [root, &root.join("bin"), &root.join("etc")] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    link_or_copy(&busybox_bin(), &root.join("bin/busybox"));
    for applet in ["sh", "id", "grep", "echo", "true"] {
        std::os::unix::fs::symlink("busybox", root.join("bin").join(applet)).unwrap();
    }
    let mode = match world {
        World::Setuid => Some(0o4755),
        World::Setgid => Some(0o2755),
        _ => None,
    };
    for (from, to) in [(gosu_bin(), "gosu"), (vigil_bin(), "vigil")] {
        let to = root.join(to);
        match mode {
            // A copy of its own: the mode belongs to the inode.
            Some(mode) => {
                std::fs::copy(&from, &to).unwrap();
                std::os::unix::fs::chown(&to, Some(0), Some(0)).unwrap();
                std::fs::set_permissions(&to, std::fs::Permissions::from_mode(mode)).unwrap();
            }
            None => link_or_copy(&from, &to),
        }
    }
    let (passwd, group) = world_files(world);
    if let Some(text) = passwd {
        std::fs::write(root.join("etc/passwd"), text).unwrap();
    }
    if let Some(text) = group {
        std::fs::write(root.join("etc/group"), text).unwrap();
    }
    dir
}

fn link_or_copy(from: &Path, to: &Path) {
    if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).unwrap();
    }
}

// ---------------------------------------------------------------------------
// Running one case under one program
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Runner {
    Gosu,
    /// `vigil --user SPEC --` as PID 1 of a new PID namespace.
    VigilPid1,
    /// `vigil --user SPEC --`, not PID 1.
    VigilPlain,
    /// `VIGIL_USER=SPEC vigil --`, not PID 1.
    VigilEnv,
}

const VIGIL_RUNNERS: &[Runner] = &[Runner::VigilPid1, Runner::VigilPlain, Runner::VigilEnv];

/// What a run showed.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    /// The script ran: uid, gid, `id -G`, the kernel's group list, HOME.
    Runs(Seen),
    /// Nothing ran; the status.
    Fails(i32),
    /// Anything else (a signal, a timeout, partial output): never expected.
    Odd(String),
}

#[derive(Clone, PartialEq, Eq)]
struct Seen {
    uid: String,
    gid: String,
    /// What `id -G` printed (compared between gosu and vigil only: the oracle
    /// below holds the kernel's list instead).
    id_groups: String,
    /// The supplementary groups, from /proc/self/status (the kernel sorts
    /// them).
    groups: String,
    home: String,
}

impl fmt::Debug for Seen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "uid {} gid {} groups [{}] (id -G: {}) HOME={:?}",
            self.uid, self.gid, self.groups, self.id_groups, self.home
        )
    }
}

impl Outcome {
    /// Equal as the oracle knows them: everything but what `id -G` printed.
    fn matches(&self, want: &Outcome) -> bool {
        match (self, want) {
            (Outcome::Runs(a), Outcome::Runs(b)) => {
                (&a.uid, &a.gid, &a.groups, &a.home) == (&b.uid, &b.gid, &b.groups, &b.home)
            }
            _ => self == want,
        }
    }
}

/// One run, with its output for messages.
struct Run {
    outcome: Outcome,
    stderr: String,
    replay: String,
}

fn run(lab: &Lab, case: &Case, runner: Runner) -> Run {
    let root = lab.root(case.world);
    let mut prefix: Vec<String> = vec![which("unshare").display().to_string()];
    if runner == Runner::VigilPid1 {
        prefix.extend(["--pid".into(), "--fork".into()]);
    }
    prefix.push(format!("--mount-proc={}/proc", root.display()));
    prefix.push(which("chroot").display().to_string());
    if case.as_user {
        // `+`: numbers, not names, which chroot would look up in the new
        // root (where the entry named 1000 has uid 2000).
        prefix.push(format!("--userspec=+{USER_ID}:+{USER_ID}"));
        prefix.push(format!("--groups=+{USER_ID}"));
    }
    prefix.push(root.display().to_string());
    // `--user=SPEC`: a spec that starts with `-` (`-0`) is a value only in
    // that form, where the next word would be taken for an option.
    let user = format!("--user={}", case.spec);
    let (program, mut args): (&str, Vec<&str>) = match runner {
        Runner::Gosu => ("/gosu", vec![case.spec.as_str()]),
        Runner::VigilPid1 | Runner::VigilPlain => ("/vigil", vec![user.as_str(), "--"]),
        Runner::VigilEnv => ("/vigil", vec!["--"]),
    };
    args.extend(["/bin/sh", "-c", SCRIPT]);
    let mut v = Vigil::wrapped(&prefix)
        .program(program)
        .args(&args)
        .env("HOME", WRONG_HOME)
        .env("PATH", "/bin");
    let mut replay = format!("HOME={WRONG_HOME} PATH=/bin ");
    if runner == Runner::VigilEnv {
        v = v.env("VIGIL_USER", &case.spec);
        replay.push_str(&format!("VIGIL_USER={} ", quote(&case.spec)));
    }
    let words: Vec<String> = prefix
        .iter()
        .map(String::as_str)
        .chain([program])
        .chain(args.iter().copied())
        .map(quote)
        .collect();
    replay.push_str(&words.join(" "));
    let out = v.run();
    Run {
        outcome: outcome(&out),
        stderr: out.stderr.clone(),
        replay,
    }
}

fn outcome(out: &Output) -> Outcome {
    let lines: Vec<&str> = out.stdout.lines().collect();
    match (out.status, lines.as_slice()) {
        (Exit::Code(0), [uid, gid, id_groups, groups, home]) => Outcome::Runs(Seen {
            uid: uid.to_string(),
            gid: gid.to_string(),
            id_groups: id_groups.to_string(),
            groups: groups
                .strip_prefix("Groups:")
                .unwrap_or(groups)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            home: home.to_string(),
        }),
        (Exit::Code(code), []) if code != 0 => Outcome::Fails(code),
        _ => Outcome::Odd(format!("{out}")),
    }
}

fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=+:,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

/// The deliberate differences from gosu. Each is listed, in these words, in
/// the README's "Where vigil differs from gosu"; `check_shape` asserts that
/// the outcomes differ in exactly the documented way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Difference {
    /// An empty home field gives `HOME=/`; gosu sets HOME to the empty
    /// string.
    EmptyHome,
    /// `#` starts a comment in /etc/passwd, as for glibc; gosu reads such a
    /// line as an entry (`#root:x:0:0::/x:/bin/sh` ahead of root's entry is
    /// the one `gosu 0` finds, and `#bob` is a user).
    Comments,
    /// Malformed entries are skipped, as by glibc: a uid or gid that is not
    /// a number, or missing fields. gosu reads a bad or missing number as 0
    /// (`badid:x:12ab:...` runs as root, a group `bad:x:x7:alice` gives
    /// alice group 0) and `-2` as uid 4294967294.
    MalformedEntries,
    /// Long lines are read (up to 16 MiB, both files); a line of 64 KiB or
    /// more in /etc/passwd makes gosu fail for every spec ("bufio.Scanner:
    /// token too long").
    LongLines,
    /// A number out of 0-2147483647 is a usage error, status 2, before
    /// anything is read; gosu exits 1.
    UsageStatus,
    /// A second `:` is a usage error (status 2); gosu 1.14 ignores
    /// everything from it on (`root:root:x` is `root:root`; newer gosu
    /// fails).
    ExtraColon,
    /// An empty spec (`''`, `:`) is a usage error (status 2), as every empty
    /// value on vigil's command line is, while an empty `VIGIL_USER` counts
    /// as unset; `gosu ''` means the caller's own user.
    EmptySpec,
    /// Not root, vigil's own ids are accepted (the child keeps vigil's
    /// groups: without CAP_SETGID they cannot change); gosu fails on its
    /// setgroups whenever it is not root.
    NotRootSameIds,
    /// A setuid vigil started by root runs: vigil refuses when its real and
    /// effective ids differ (started by another user, as gosu refuses), but
    /// root gains nothing from the bit; gosu looks at its file's mode.
    SetuidRunByRoot,
}

#[derive(Clone, Debug)]
enum Expect {
    Same,
    Differs(Difference, Outcome),
}

#[derive(Clone, Debug)]
struct Case {
    world: World,
    spec: String,
    /// Run as uid and gid 1000 (groups: 1000) instead of root.
    as_user: bool,
    /// What gosu gives (Debian 12's gosu 1.14).
    gosu: Outcome,
    expect: Expect,
    /// A word vigil's error line must contain (what it names).
    names: Option<&'static str>,
}

impl Case {
    fn label(&self) -> String {
        let mut l = format!("{:?} {}", self.world, quote(&self.spec));
        if self.as_user {
            l.push_str(&format!(" as {USER_ID}"));
        }
        l
    }
}

/// The spec's result when the script runs.
fn runs(uid: u32, gid: u32, groups: &[u32], home: &str) -> Outcome {
    let mut sorted = groups.to_vec();
    sorted.sort_unstable();
    Outcome::Runs(Seen {
        uid: uid.to_string(),
        gid: gid.to_string(),
        id_groups: String::new(),
        groups: sorted
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(" "),
        home: home.into(),
    })
}

const FAILS: Outcome = Outcome::Fails(1);

struct Cases(Vec<Case>);

impl Cases {
    fn add(&mut self, world: World, spec: &str, gosu: Outcome) -> &mut Case {
        self.0.push(Case {
            world,
            spec: spec.into(),
            as_user: false,
            gosu,
            expect: Expect::Same,
            names: None,
        });
        self.0.last_mut().unwrap()
    }
}

impl Case {
    fn differs(&mut self, d: Difference, vigil: Outcome) -> &mut Case {
        self.expect = Expect::Differs(d, vigil);
        self
    }
    fn names(&mut self, word: &'static str) -> &mut Case {
        self.names = Some(word);
        self
    }
    fn as_user(&mut self) -> &mut Case {
        self.as_user = true;
        self
    }
}

fn cases() -> Vec<Case> {
    use Difference::*;
    use World::*;
    let mut c = Cases(Vec::new());
    let root = || runs(0, 0, &[], "/root");
    let alice_groups = [4, 50, 100, 3000, 3001];
    let alice = || runs(1000, 1000, &alice_groups, "/home/alice");

    // gosu's own matrix (its Dockerfile.test), on these files.
    for spec in [
        "0",
        "0:0",
        "root",
        "0:root",
        "root:0",
        "root:root",
        "0:",
        "-0",
    ] {
        c.add(Standard, spec, root());
    }
    for spec in ["1000", "alice", "alice:", "+1000", "01000"] {
        c.add(Standard, spec, alice());
    }
    c.add(Standard, "0:1000", runs(0, 1000, &[], "/root"));
    c.add(Standard, "root:1000", runs(0, 1000, &[], "/root"));
    c.add(Standard, "1000:1000", runs(1000, 1000, &[], "/home/alice"));
    c.add(Standard, "1000:root", runs(1000, 0, &[], "/home/alice"));
    c.add(Standard, "1000:daemon", runs(1000, 1, &[], "/home/alice"));
    c.add(Standard, "games", runs(5, 60, &[50, 100], "/usr/games"));
    c.add(Standard, "games:daemon", runs(5, 1, &[], "/usr/games"));
    c.add(Standard, ":0", root());
    c.add(Standard, ":users", runs(0, 100, &[], "/root"));
    c.add(Standard, ":4242", runs(0, 4242, &[], "/root"));
    // USER:GROUP: exactly that group, no supplementary ones.
    c.add(Standard, "alice:users", runs(1000, 100, &[], "/home/alice"));
    c.add(Standard, "alice:100", runs(1000, 100, &[], "/home/alice"));
    c.add(Standard, "alice:4242", runs(1000, 4242, &[], "/home/alice"));
    c.add(Standard, "alice:7up", runs(1000, 3001, &[], "/home/alice"));
    // A numeric group is a gid even when a group is named so (1000 is).
    c.add(Standard, "alice:1000", runs(1000, 1000, &[], "/home/alice"));
    c.add(Standard, "alice:2000", runs(1000, 2000, &[], "/home/alice"));
    // Numbers without an entry: the caller's gid, no groups, HOME=/.
    c.add(Standard, "4242", runs(4242, 0, &[], "/"));
    c.add(Standard, "4242:4242", runs(4242, 4242, &[], "/"));
    c.add(Standard, "4242:alice", runs(4242, 1000, &[], "/"));
    c.add(Standard, "007", runs(7, 0, &[], "/"));
    c.add(Standard, "2147483647", runs(2147483647, 0, &[], "/"));
    // Names that look like numbers; a number that is a name (`1000`,
    // uid 2000) is reached by its uid only.
    c.add(Standard, "0day", runs(1003, 1003, &[1003], "/home/0day"));
    c.add(
        Standard,
        "2000",
        runs(2000, 2000, &[2001], "/home/thousand"),
    );
    c.add(Standard, "bob", runs(1001, 1001, &[], "/home/bob"));
    c.add(Standard, "nobody", runs(65534, 65534, &[], "/nonexistent"));
    // The first matching entry wins.
    c.add(Standard, "dup", runs(1007, 1007, &[], "/home/dup1"));
    c.add(Standard, "1008", runs(1008, 1008, &[], "/home/dup2"));
    c.add(Standard, "sameuid", runs(1000, 1100, &[], "/home/sameuid"));
    // A user in 301 groups.
    let many: Vec<u32> = std::iter::once(50).chain(5001..=5300).collect();
    c.add(Standard, "many", runs(1004, 1004, &many, "/home/many"));
    c.add(Standard, "nohome", runs(1002, 1002, &[], ""))
        .differs(EmptyHome, runs(1002, 1002, &[], "/"));
    // Unknown users and groups: one line naming them, nothing runs.
    c.add(Standard, "nosuch", FAILS).names("nosuch");
    c.add(Standard, "nosuch:root", FAILS).names("nosuch");
    c.add(Standard, "Alice", FAILS).names("Alice");
    c.add(Standard, "thousand", FAILS).names("thousand");
    c.add(Standard, "alice:nosuch", FAILS).names("nosuch");
    c.add(Standard, "4242:nosuch", FAILS).names("nosuch");
    c.add(Standard, ":nosuch", FAILS).names("nosuch");
    c.add(Standard, "alice:Users", FAILS).names("Users");
    // Wrong whatever the files say.
    for spec in ["-1", "2147483648", "99999999999999999999", "1:-5"] {
        c.add(Standard, spec, FAILS)
            .differs(UsageStatus, Outcome::Fails(2))
            .names(spec.trim_start_matches("1:"));
    }
    c.add(Standard, "root:root:extra", root())
        .differs(ExtraColon, Outcome::Fails(2));
    c.add(
        Standard,
        "alice:users:",
        runs(1000, 100, &[], "/home/alice"),
    )
    .differs(ExtraColon, Outcome::Fails(2));
    c.add(Standard, "", root())
        .differs(EmptySpec, Outcome::Fails(2));
    c.add(Standard, ":", root())
        .differs(EmptySpec, Outcome::Fails(2));

    // Missing files.
    c.add(NoGroup, "alice", runs(1000, 1000, &[], "/home/alice"));
    c.add(NoGroup, "many", runs(1004, 1004, &[], "/home/many"));
    c.add(NoGroup, "alice:100", runs(1000, 100, &[], "/home/alice"));
    c.add(NoGroup, "0", root());
    c.add(NoGroup, "alice:users", FAILS).names("users");
    c.add(NoPasswd, "0", runs(0, 0, &[], "/"));
    c.add(NoPasswd, "4242", runs(4242, 0, &[], "/"));
    c.add(NoPasswd, "1000:users", runs(1000, 100, &[], "/"));
    c.add(NoPasswd, ":users", runs(0, 100, &[], "/"));
    c.add(NoPasswd, "alice", FAILS).names("alice");
    c.add(NoPasswd, "0day", FAILS).names("0day");
    c.add(NoEtc, "0", runs(0, 0, &[], "/"));
    c.add(NoEtc, "1000:1000", runs(1000, 1000, &[], "/"));
    c.add(NoEtc, "alice", FAILS).names("alice");
    c.add(NoEtc, "1000:alice", FAILS).names("alice");

    // Comments, blanks and malformed entries.
    c.add(Quirks, "0", runs(0, 0, &[], "/from-comment"))
        .differs(Comments, root());
    c.add(Quirks, "#bob", runs(1001, 1001, &[], "/home/bob"))
        .differs(Comments, FAILS)
        .names("#bob");
    c.add(
        Quirks,
        "spaced",
        runs(1009, 1009, &[0, 0, 1200], "/home/spaced"),
    )
    .differs(MalformedEntries, runs(1009, 1009, &[1200], "/home/spaced"));
    c.add(
        Quirks,
        "spaced:indented",
        runs(1009, 1200, &[], "/home/spaced"),
    );
    c.add(Quirks, "spaced:badgid", runs(1009, 0, &[], "/home/spaced"))
        .differs(MalformedEntries, FAILS)
        .names("badgid");
    c.add(Quirks, "badid", runs(0, 1006, &[], "/home/badid"))
        .differs(MalformedEntries, FAILS)
        .names("badid");
    c.add(Quirks, "short", runs(1005, 0, &[], ""))
        .differs(MalformedEntries, FAILS)
        .names("short");
    c.add(
        Quirks,
        "neg",
        runs(4294967294, 4294967294, &[], "/home/neg"),
    )
    .differs(MalformedEntries, FAILS)
    .names("neg");
    c.add(Quirks, "crlf", runs(1011, 1011, &[1011], "/home/crlf"));
    c.add(Quirks, "dave", runs(1004, 1004, &[], ""))
        .differs(EmptyHome, runs(1004, 1004, &[], "/"));
    c.add(Quirks, "plus", runs(7, 7, &[], "/plus"));
    c.add(Quirks, "big", runs(3000000000, 3000000000, &[], "/big"));
    c.add(Quirks, "1013", runs(1013, 1013, &[], "/nameless"));

    // Long lines.
    c.add(
        LongGroup,
        "alice",
        runs(1000, 1000, &[3500, 4, 50, 100, 3000, 3001], "/home/alice"),
    );
    c.add(
        LongGroup,
        "alice:huge",
        runs(1000, 3500, &[], "/home/alice"),
    );
    c.add(LongPasswd, "alice", FAILS)
        .differs(LongLines, alice());
    c.add(LongPasswd, "0", FAILS).differs(LongLines, root());
    c.add(LongPasswd, "4242", FAILS)
        .differs(LongLines, runs(4242, 0, &[], "/"));
    c.add(LongPasswd, "long", FAILS)
        .differs(LongLines, runs(1010, 1010, &[], "/home/long"));

    // Not root: vigil's own ids only.
    let me = || runs(USER_ID, USER_ID, &[USER_ID], "/home/alice");
    for spec in ["alice", "1000", "1000:1000", "alice:alice"] {
        c.add(Standard, spec, FAILS)
            .as_user()
            .differs(NotRootSameIds, me());
    }
    for spec in ["0", "bob", "alice:users", "sameuid", "4242"] {
        c.add(Standard, spec, FAILS).as_user().names("without root");
    }
    c.add(Standard, "nosuch", FAILS).as_user().names("nosuch");

    // Installed setuid or setgid.
    c.add(Setuid, "alice", FAILS).as_user().names("setuid");
    c.add(Setuid, "0", FAILS).as_user().names("setuid");
    c.add(Setuid, "alice", FAILS)
        .differs(SetuidRunByRoot, alice());
    c.add(Setgid, "alice", FAILS).as_user().names("setgid");
    c.add(Setgid, "alice", alice());
    c.0
}

// ---------------------------------------------------------------------------
// Checking
// ---------------------------------------------------------------------------

fn describe(who: &str, run: &Run) -> String {
    format!(
        "  {who}: {:?}\n    stderr: {:?}\n    replay: {}",
        run.outcome, run.stderr, run.replay
    )
}

/// gosu's half: its outcome is the one recorded in the case.
fn check_gosu(case: &Case, gosu: &Run) -> Result<(), String> {
    if !gosu.outcome.matches(&case.gosu) {
        return Err(format!(
            "gosu no longer gives the recorded result {:?}",
            case.gosu
        ));
    }
    if let Outcome::Fails(_) = gosu.outcome {
        let lines = gosu.stderr.lines().count();
        if lines != 1 || !gosu.stderr.starts_with("error: ") {
            return Err("gosu should fail with one error line".into());
        }
    }
    Ok(())
}

/// One vigil run against gosu's and the case's.
fn check_vigil(case: &Case, gosu: &Run, vigil: &Run) -> Result<(), String> {
    match &case.expect {
        Expect::Same => {
            if vigil.outcome != gosu.outcome {
                return Err("vigil's outcome differs from gosu's".into());
            }
        }
        Expect::Differs(d, want) => {
            if !vigil.outcome.matches(want) {
                return Err(format!("vigil should give {want:?} ({d:?})"));
            }
            check_shape(*d, &gosu.outcome, &vigil.outcome)?;
        }
    }
    if let Outcome::Fails(_) = vigil.outcome {
        let lines: Vec<&str> = vigil.stderr.lines().collect();
        if lines.len() != 1 {
            return Err("vigil should fail with exactly one line".into());
        }
        if let Some(word) = case.names
            && !lines[0].contains(word)
        {
            return Err(format!("vigil's error line should name {word:?}"));
        }
    }
    Ok(())
}

/// The difference is exactly the documented one.
fn check_shape(d: Difference, gosu: &Outcome, vigil: &Outcome) -> Result<(), String> {
    use Difference::*;
    use Outcome::*;
    let ok = match (d, gosu, vigil) {
        (EmptyHome, Runs(g), Runs(v)) => {
            g.home.is_empty()
                && v.home == "/"
                && (&g.uid, &g.gid, &g.id_groups, &g.groups)
                    == (&v.uid, &v.gid, &v.id_groups, &v.groups)
        }
        (Comments | MalformedEntries, _, _) => gosu != vigil,
        (LongLines, Fails(1), Runs(_)) => true,
        (UsageStatus, Fails(1), Fails(2)) => true,
        (ExtraColon | EmptySpec, Runs(_), Fails(2)) => true,
        (NotRootSameIds, Fails(1), Runs(_)) => true,
        (SetuidRunByRoot, Fails(1), Runs(_)) => true,
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("not the documented difference {d:?}"))
    }
}

#[test]
fn user_gives_gosus_results() {
    let _cpu = heavy();
    let mut cases = cases();
    if let Ok(only) = std::env::var("VIGIL_USER_DIFF_ONLY") {
        cases.retain(|c| c.label() == only);
    }
    let lab = Lab::new();
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let table = Mutex::new(Vec::new());
    let runs = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { break };
                    let gosu = run(&lab, case, Runner::Gosu);
                    runs.fetch_add(1, Ordering::Relaxed);
                    let mut problems = Vec::new();
                    if let Err(why) = check_gosu(case, &gosu) {
                        problems.push(format!("{why}\n{}", describe("gosu", &gosu)));
                    }
                    table
                        .lock()
                        .unwrap()
                        .push((i, format!("{:<34} {:?}", case.label(), gosu.outcome)));
                    for &runner in VIGIL_RUNNERS {
                        // An empty VIGIL_USER is unset: nothing to compare.
                        if runner == Runner::VigilEnv && case.spec.is_empty() {
                            continue;
                        }
                        let vigil = run(&lab, case, runner);
                        runs.fetch_add(1, Ordering::Relaxed);
                        if let Err(why) = check_vigil(case, &gosu, &vigil) {
                            problems.push(format!(
                                "{runner:?}: {why}\n{}\n{}",
                                describe("gosu", &gosu),
                                describe("vigil", &vigil)
                            ));
                        }
                    }
                    for p in problems {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("[{}] {p}", case.label()));
                    }
                }
            });
        }
    });
    if std::env::var_os("VIGIL_USER_DIFF_TABLE").is_some() {
        let mut table = table.into_inner().unwrap();
        table.sort();
        for (_, line) in table {
            say_uncaptured(&line);
        }
    }
    let differences: std::collections::BTreeSet<String> = cases
        .iter()
        .filter_map(|c| match c.expect {
            Expect::Differs(d, _) => Some(format!("{d:?}")),
            Expect::Same => None,
        })
        .collect();
    say_uncaptured(&format!(
        "differential test against gosu: {} cases in {} worlds, {} runs (gosu, and vigil \
         as PID 1, not PID 1 and through VIGIL_USER), in {:.1}s; named differences: {:?}",
        cases.len(),
        WORLDS.len(),
        runs.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64(),
        differences
    ));
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
