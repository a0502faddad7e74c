//! `--caps CAP[,CAP...]`: the child and the hooks hold exactly these
//! capabilities, in their permitted, effective, inheritable and ambient
//! sets, with the bounding set cut to them; with `--user` as that user,
//! without it as vigil's own user. vigil itself keeps its own: it starts
//! every hook the same way later, and signals, reaps and drains what runs
//! as another user.
//!
//! A non-root program keeps capabilities across exec only through the
//! ambient set, and the kernel raises a capability there only when it is
//! both permitted and inheritable; a uid switch from root clears the
//! ambient set and, unless told to keep it, the permitted one. So the work
//! is split as `--user`'s is, everything that can fail for a reason the
//! user can fix found before the fork:
//!
//! 1. [`parse`] when the command line is read: names, with or without
//!    `CAP_`, in any case (an unknown one is a usage error);
//! 2. [`prepare`] before the first fork: the kernel has ambient
//!    capabilities and knows each one, vigil holds each one (in its
//!    bounding and permitted sets), and vigil can cut the bounding set (it
//!    holds CAP_SETPCAP), or need not (no-new-privileges: nothing the
//!    program executes can gain what is left there);
//! 3. in the new process, before exec, as its plan says
//!    ([`Narrowing::plan`], `sys::caps::Narrow`, which `sys::exec` runs
//!    around the `--user` switch): the bounding set cut and the permitted
//!    set kept across the switch, the switch, then the three sets, the
//!    ambient raise, and the sets read back; a step that fails there comes
//!    back as [`Narrowing::failure`].

use std::fmt;

use nix::errno::Errno;

use crate::log::format::{Fields, Obj};
use crate::sys::caps::{self as sys, Narrow};
use crate::sys::exec::{Failed, Step};

/// Every capability vigil knows by name: capability N at index N, as
/// `linux/capability.h` numbers them.
const NAMES: [&str; 41] = [
    "CHOWN",
    "DAC_OVERRIDE",
    "DAC_READ_SEARCH",
    "FOWNER",
    "FSETID",
    "KILL",
    "SETGID",
    "SETUID",
    "SETPCAP",
    "LINUX_IMMUTABLE",
    "NET_BIND_SERVICE",
    "NET_BROADCAST",
    "NET_ADMIN",
    "NET_RAW",
    "IPC_LOCK",
    "IPC_OWNER",
    "SYS_MODULE",
    "SYS_RAWIO",
    "SYS_CHROOT",
    "SYS_PTRACE",
    "SYS_PACCT",
    "SYS_ADMIN",
    "SYS_BOOT",
    "SYS_NICE",
    "SYS_RESOURCE",
    "SYS_TIME",
    "SYS_TTY_CONFIG",
    "MKNOD",
    "LEASE",
    "AUDIT_WRITE",
    "AUDIT_CONTROL",
    "SETFCAP",
    "MAC_OVERRIDE",
    "MAC_ADMIN",
    "SYSLOG",
    "WAKE_ALARM",
    "BLOCK_SUSPEND",
    "AUDIT_READ",
    "PERFMON",
    "BPF",
    "CHECKPOINT_RESTORE",
];

const CAP_SETPCAP: u32 = 8;

/// A set of capabilities, bit N for capability N.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Set(u64);

impl Set {
    /// Each capability's name, without `CAP_`, lowest number first (the
    /// number, for one newer than vigil's table).
    pub fn names(self) -> impl Iterator<Item = String> {
        sys::each(self.0).map(name)
    }

    /// As `--caps` takes it: `NET_BIND_SERVICE,NET_RAW` (for records).
    pub fn list(self) -> String {
        self.names().collect::<Vec<_>>().join(",")
    }

    /// Each capability's name with `CAP_`, lowest number first.
    fn full_names(self) -> impl Iterator<Item = String> {
        self.names().map(|name| format!("CAP_{name}"))
    }
}

/// `CAP_NET_BIND_SERVICE, CAP_NET_RAW`, as the kernel's documentation
/// names them.
impl fmt::Display for Set {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.full_names().collect::<Vec<_>>().join(", "))
    }
}

/// A capability's name without `CAP_`: `NET_RAW`, or its number for one
/// newer than the table.
fn name(cap: u32) -> String {
    NAMES
        .get(cap as usize)
        .map_or_else(|| cap.to_string(), |n| n.to_string())
}

/// The number of a capability's name: `NET_RAW`, `CAP_NET_RAW`,
/// `cap_net_raw`.
fn number(word: &str) -> Option<u32> {
    let upper = word.to_ascii_uppercase();
    let name = upper.strip_prefix("CAP_").unwrap_or(&upper);
    NAMES.iter().position(|n| *n == name).map(|n| n as u32)
}

/// Reads a `--caps` value: names separated by commas (blanks around them
/// are fine), each once or more. An unknown name, an empty one, or no
/// name at all is an error naming it (a usage error).
pub fn parse(text: &str) -> Result<Set, String> {
    const ACCEPTED: &str = "use capability names as capabilities(7) gives them, with or without \
                            CAP_, in any case, separated by commas (NET_BIND_SERVICE,cap_net_raw)";
    if text.trim().is_empty() {
        return Err(format!("'{text}' names no capability: {ACCEPTED}"));
    }
    let several = text.contains(',');
    let mut set = 0;
    for word in text.split(',').map(str::trim) {
        let Some(cap) = number(word) else {
            let why = if word.is_empty() {
                "an empty name".to_string()
            } else {
                format!("'{word}' is not a capability")
            };
            return Err(if several {
                format!("in '{text}': {why}: {ACCEPTED}")
            } else {
                format!("{why}: {ACCEPTED}")
            });
        };
        set |= 1 << cap;
    }
    Ok(Set(set))
}

/// What the spawn path needs to start a process with exactly the set,
/// all of it decided before the fork.
#[derive(Clone, Debug)]
pub struct Narrowing {
    set: Set,
    narrow: Narrow,
    /// What stays in the bounding set beyond the set (vigil could not drop
    /// it, and no-new-privileges keeps it out of reach).
    kept_in_bounding: u64,
}

/// The list vigil will not start the child with, and why.
#[derive(Debug, PartialEq, Eq)]
pub struct Refused {
    pub caps: Set,
    pub why: CapsError,
}

/// Why vigil will not start the child with the set: found before anything
/// started.
#[derive(Debug, PartialEq, Eq)]
pub enum CapsError {
    /// The kernel has no ambient capabilities (before Linux 4.3).
    NoAmbient,
    /// `SECBIT_NO_CAP_AMBIENT_RAISE` is set for vigil.
    AmbientLocked,
    /// Capabilities newer than the kernel; `last`: the highest it knows.
    UnknownToKernel { caps: Set, last: u32 },
    /// Capabilities vigil does not hold, those of them not in its bounding
    /// set (which only whoever starts the container can grant), and
    /// vigil's uid.
    NotHeld {
        caps: Set,
        not_in_bounding: Set,
        uid: u32,
    },
    /// The bounding set holds `extra` beyond the set, vigil lacks
    /// CAP_SETPCAP to drop it, and without no-new-privileges a setuid
    /// program could gain it.
    CannotCutBounding { extra: Set },
    /// vigil could not read its own capabilities.
    Unreadable(Errno),
}

/// The facts for the `caps_failed` record.
impl Fields for Refused {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        o.field("caps", self.caps.list());
        match &self.why {
            CapsError::NoAmbient => o.word("reason", "no_ambient"),
            CapsError::AmbientLocked => o.word("reason", "ambient_locked"),
            CapsError::UnknownToKernel { caps, .. } => o
                .word("reason", "unknown_to_kernel")
                .field("missing", caps.list()),
            CapsError::NotHeld { caps, .. } => {
                o.word("reason", "not_held").field("missing", caps.list())
            }
            CapsError::CannotCutBounding { extra } => o
                .word("reason", "no_setpcap")
                .field("missing", extra.list()),
            CapsError::Unreadable(e) => o.word("reason", "unreadable").field("error", e.desc()),
        };
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.why {
            CapsError::NoAmbient => write!(
                f,
                "--caps needs ambient capabilities, which this kernel does not have (Linux 4.3 \
                 or later has them)"
            ),
            CapsError::AmbientLocked => write!(
                f,
                "--caps cannot give capabilities: the securebit SECBIT_NO_CAP_AMBIENT_RAISE is \
                 set for vigil, so none can be raised in the ambient set"
            ),
            CapsError::UnknownToKernel { caps, last } => write!(
                f,
                "cannot give the child {caps}: this kernel does not know {} (its capabilities go \
                 up to {})",
                them(*caps),
                NAMES
                    .get(*last as usize)
                    .map_or_else(|| last.to_string(), |n| format!("CAP_{n}"))
            ),
            CapsError::NotHeld {
                caps,
                not_in_bounding,
                uid,
            } => {
                write!(
                    f,
                    "cannot give the child {caps}: vigil does not hold {}",
                    them(*caps)
                )?;
                if not_in_bounding.0 != 0 {
                    let names = not_in_bounding.list();
                    write!(
                        f,
                        " (not in its bounding set); grant {} to the container: docker run \
                         --cap-add {}, Kubernetes securityContext.capabilities.add: [{}]",
                        them(*not_in_bounding),
                        not_in_bounding
                            .names()
                            .collect::<Vec<_>>()
                            .join(" --cap-add "),
                        names.replace(',', ", ")
                    )
                } else if *uid != 0 {
                    write!(
                        f,
                        " (vigil runs as uid {uid}, and a process that starts as another user \
                         than root holds no capabilities); start vigil as root with them granted \
                         (and SETUID and SETGID) and give --user"
                    )
                } else {
                    write!(
                        f,
                        " (not in its permitted set): whatever started vigil took {} away",
                        them(*caps)
                    )
                }
            }
            CapsError::CannotCutBounding { extra } => write!(
                f,
                "cannot cut the child's bounding set to what --caps names: vigil lacks \
                 CAP_SETPCAP, so {} would stay there, for a setuid program to gain; grant \
                 CAP_SETPCAP (docker run --cap-add SETPCAP, Kubernetes \
                 securityContext.capabilities.add) or set no-new-privileges (docker run \
                 --security-opt no-new-privileges, Kubernetes allowPrivilegeEscalation: false)",
                shown(*extra)
            ),
            CapsError::Unreadable(e) => write!(
                f,
                "--caps: cannot read vigil's own capabilities: {}",
                e.desc()
            ),
        }
    }
}

/// A set in a message: its names, or for many of them the count and the
/// first few (the record's field lists them all).
fn shown(set: Set) -> String {
    const MANY: usize = 4;
    let count = set.0.count_ones() as usize;
    if count <= MANY {
        return set.to_string();
    }
    let first: Vec<String> = set.full_names().take(MANY - 1).collect();
    format!("{count} capabilities ({}, ...)", first.join(", "))
}

/// "it" or "them", for a set of one or more.
fn them(set: Set) -> &'static str {
    if set.0.count_ones() == 1 {
        "it"
    } else {
        "them"
    }
}

/// Checks that vigil can give the set to the processes it starts, and
/// decides how. Call it once, before the first fork; the `Narrowing`
/// serves the child and both hooks. `user`: whether `--user` is given, whose
/// switch runs between the two halves of the child's steps.
pub fn prepare(set: Set, user: bool) -> Result<Narrowing, Refused> {
    check(set, user).map_err(|why| Refused { caps: set, why })
}

fn check(set: Set, user: bool) -> Result<Narrowing, CapsError> {
    match sys::ambient_has(0) {
        Ok(_) => {}
        Err(Errno::EINVAL) => return Err(CapsError::NoAmbient),
        Err(e) => return Err(CapsError::Unreadable(e)),
    }
    let securebits = sys::securebits().map_err(CapsError::Unreadable)?;
    if securebits & sys::SECBIT_NO_CAP_AMBIENT_RAISE != 0 {
        return Err(CapsError::AmbientLocked);
    }
    let (bounding, last) = sys::bounding().map_err(CapsError::Unreadable)?;
    // Those above `last`; none when the kernel knows all 64.
    let unknown = set.0 & u64::MAX.checked_shl(last + 1).unwrap_or(0);
    if unknown != 0 {
        return Err(CapsError::UnknownToKernel {
            caps: Set(unknown),
            last,
        });
    }
    let own = sys::get().map_err(CapsError::Unreadable)?;
    let missing = set.0 & !(bounding & own.permitted);
    if missing != 0 {
        return Err(CapsError::NotHeld {
            caps: Set(missing),
            not_in_bounding: Set(set.0 & !bounding),
            uid: nix::unistd::getuid().as_raw(),
        });
    }
    let extra = bounding & !set.0;
    let may_drop = own.effective & 1 << CAP_SETPCAP != 0;
    if extra != 0 && !may_drop && !nix::sys::prctl::get_no_new_privs().unwrap_or(false) {
        return Err(CapsError::CannotCutBounding { extra: Set(extra) });
    }
    let (drop_bounding, kept_in_bounding) = if may_drop { (extra, 0) } else { (0, extra) };
    Ok(Narrowing {
        set,
        narrow: Narrow {
            keep: set.0,
            drop_bounding,
            switching: user,
        },
        kept_in_bounding,
    })
}

/// The facts for the `capabilities` record.
impl Fields for Narrowing {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        o.field("caps", self.set.list())
            .field("bounding", Set(self.set.0 | self.kept_in_bounding).list())
            .field("bounding_cut", self.kept_in_bounding == 0);
    }
}

impl Narrowing {
    /// What the new process does to hold exactly the set, for its plan
    /// (`sys::exec::Plan`).
    pub fn plan(&self) -> Narrow {
        self.narrow
    }

    /// What a new process's failed step means, read in the parent: a
    /// failure of one of the steps the plan's `caps` made (which, about
    /// which capability, and why); none for another step.
    pub fn failure(&self, failed: Failed) -> Option<CapsFailure> {
        let ours = matches!(
            failed.step,
            Step::Bounding | Step::KeepCaps | Step::Capset | Step::Ambient | Step::CapsCheck
        );
        ours.then_some(CapsFailure {
            set: self.set,
            failed,
        })
    }
}

#[cfg(test)]
impl Narrowing {
    /// A narrowing to `set` that leaves `kept_in_bounding` in the bounding
    /// set, whatever this machine holds (for the event table's samples).
    pub fn sample(set: Set, kept_in_bounding: u64) -> Narrowing {
        Narrowing {
            set,
            narrow: Narrow {
                keep: set.0,
                drop_bounding: 0,
                switching: true,
            },
            kept_in_bounding,
        }
    }
}

/// For the log at start: `exactly CAP_NET_BIND_SERVICE (permitted,
/// effective, inheritable and ambient), the bounding set cut to it`.
impl fmt::Display for Narrowing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "exactly {} (permitted, effective, inheritable and ambient)",
            self.set
        )?;
        let kept = Set(self.kept_in_bounding);
        if kept.0 == 0 {
            write!(f, ", the bounding set cut to {}", them(self.set))
        } else {
            let pronoun = them(kept);
            write!(
                f,
                "; their bounding set also keeps {}: vigil lacks CAP_SETPCAP to drop {pronoun}, \
                 and no-new-privileges keeps {pronoun} out of reach",
                shown(kept)
            )
        }
    }
}

/// A `--caps` step that failed in the new process: nothing was executed.
#[derive(Debug)]
pub struct CapsFailure {
    set: Set,
    /// One of the steps `--caps` adds, its error, and the capability and
    /// the set it was about (`sys::caps::parse_detail`): a read-back that
    /// found a set wrong has no error.
    failed: Failed,
}

/// The facts for the `caps_switch_failed` record, beside the program.
impl Fields for CapsFailure {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        let (cap, which) = sys::parse_detail(self.failed.detail);
        let error = which.is_none().then(|| self.failed.errno.desc());
        o.field("caps", self.set.list())
            .word("call", self.failed.step.call())
            .opt("cap", cap.map(name))
            .opt("set", which)
            .opt("error", error);
    }
}

impl fmt::Display for CapsFailure {
    /// `with capabilities CAP_NET_RAW: prctl(PR_CAP_AMBIENT_RAISE,
    /// CAP_NET_RAW) failed: Operation not permitted`, to follow `cannot
    /// run "PROG"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "with capabilities {}: ", self.set)?;
        let (number, which) = sys::parse_detail(self.failed.detail);
        let cap = number.map(|n| format!("CAP_{}", name(n)));
        let error = self.failed.errno.desc();
        match (self.failed.step, cap, which) {
            (Step::CapsCheck, Some(cap), Some(set)) => {
                let given = number.is_some_and(|c| self.set.0 & 1 << c != 0);
                if given {
                    write!(f, "{cap} is not in its {set} set after it was given")
                } else {
                    write!(f, "{cap} is in its {set} set, which it was not given")
                }
            }
            (Step::CapsCheck, _, _) => write!(f, "reading its capabilities back failed: {error}"),
            (Step::Capset, _, _) => write!(f, "capset failed: {error}"),
            (Step::KeepCaps, _, _) => write!(f, "prctl(PR_SET_KEEPCAPS) failed: {error}"),
            (step, cap, _) => write!(
                f,
                "prctl({}, {}) failed: {error}",
                step.call(),
                cap.unwrap_or_default()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::caps::Which;

    const NET_BIND_SERVICE: u64 = 1 << 10;
    const NET_RAW: u64 = 1 << 13;

    #[test]
    fn names_are_the_kernels_numbers() {
        for (cap, name) in [
            (0, "CHOWN"),
            (5, "KILL"),
            (8, "SETPCAP"),
            (10, "NET_BIND_SERVICE"),
            (21, "SYS_ADMIN"),
            (24, "SYS_RESOURCE"),
            (31, "SETFCAP"),
            (37, "AUDIT_READ"),
            (40, "CHECKPOINT_RESTORE"),
        ] {
            assert_eq!(NAMES[cap], name);
            assert_eq!(number(name), Some(cap as u32));
        }
    }

    #[test]
    fn lists_take_any_spelling() {
        for text in [
            "NET_BIND_SERVICE",
            "net_bind_service",
            "CAP_NET_BIND_SERVICE",
            "cap_Net_Bind_Service",
            " NET_BIND_SERVICE ",
            "NET_BIND_SERVICE,cap_net_bind_service",
        ] {
            assert_eq!(parse(text), Ok(Set(NET_BIND_SERVICE)), "{text:?}");
        }
        assert_eq!(
            parse("net_raw, CAP_NET_BIND_SERVICE"),
            Ok(Set(NET_BIND_SERVICE | NET_RAW))
        );
        let set = parse("NET_RAW,chown").unwrap();
        assert_eq!(set.list(), "CHOWN,NET_RAW");
        assert_eq!(set.to_string(), "CAP_CHOWN, CAP_NET_RAW");
    }

    #[test]
    fn bad_lists_name_what_is_wrong() {
        for (text, says) in [
            ("", "'' names no capability"),
            (" ", "' ' names no capability"),
            ("NET_BIND", "'NET_BIND' is not a capability"),
            ("CAP_", "'CAP_' is not a capability"),
            ("10", "'10' is not a capability"),
            ("net_raw,", "in 'net_raw,': an empty name"),
            (",", "in ',': an empty name"),
            (
                "net_raw,nosuch",
                "in 'net_raw,nosuch': 'nosuch' is not a capability",
            ),
            ("CAP_CAP_NET_RAW", "'CAP_CAP_NET_RAW' is not a capability"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.starts_with(says), "{text:?}: {e}");
            assert!(e.contains("with or without CAP_"), "{e}");
        }
    }

    #[test]
    fn failures_name_their_step() {
        let narrowing = Narrowing {
            set: Set(NET_RAW),
            narrow: Narrow {
                keep: NET_RAW,
                drop_bounding: 0,
                switching: false,
            },
            kept_in_bounding: 0,
        };
        let failed = |step, errno, cap, which| Failed {
            step,
            errno,
            detail: sys::detail(cap, which),
        };
        let none = Errno::UnknownErrno;
        let cases = [
            (
                failed(Step::Bounding, Errno::EPERM, Some(7), None),
                "prctl(PR_CAPBSET_DROP, CAP_SETUID) failed: Operation not permitted",
            ),
            (
                failed(Step::KeepCaps, Errno::EPERM, None, None),
                "prctl(PR_SET_KEEPCAPS) failed: Operation not permitted",
            ),
            (
                failed(Step::Capset, Errno::EPERM, None, None),
                "capset failed: Operation not permitted",
            ),
            (
                failed(Step::Ambient, Errno::EINVAL, Some(40), None),
                "prctl(PR_CAP_AMBIENT_RAISE, CAP_CHECKPOINT_RESTORE) failed: Invalid argument",
            ),
            (
                failed(Step::CapsCheck, none, Some(13), Some(Which::Ambient)),
                "CAP_NET_RAW is not in its ambient set after it was given",
            ),
            (
                failed(Step::CapsCheck, none, Some(0), Some(Which::Effective)),
                "CAP_CHOWN is in its effective set, which it was not given",
            ),
            (
                failed(Step::CapsCheck, Errno::EPERM, None, None),
                "reading its capabilities back failed: Operation not permitted",
            ),
        ];
        for (failed, text) in cases {
            let back = narrowing.failure(failed).expect("a caps failure");
            assert_eq!(
                back.to_string(),
                format!("with capabilities CAP_NET_RAW: {text}")
            );
        }
        // Another step is not one.
        for step in [Step::Uid, Step::Signals, Step::Exec] {
            assert!(
                narrowing
                    .failure(failed(step, Errno::EPERM, None, None))
                    .is_none()
            );
        }
    }

    #[test]
    fn errors_are_one_line_naming_the_capabilities() {
        let said = |why| Refused { caps: Set(0), why }.to_string();
        let e = said(CapsError::NotHeld {
            caps: Set(1 << 21),
            not_in_bounding: Set(1 << 21),
            uid: 0,
        });
        assert_eq!(
            e.to_string(),
            "cannot give the child CAP_SYS_ADMIN: vigil does not hold it (not in its bounding \
             set); grant it to the container: docker run --cap-add SYS_ADMIN, Kubernetes \
             securityContext.capabilities.add: [SYS_ADMIN]"
        );
        let e = said(CapsError::NotHeld {
            caps: Set(NET_RAW | NET_BIND_SERVICE),
            not_in_bounding: Set(0),
            uid: 1000,
        });
        assert!(
            e.to_string().starts_with(
                "cannot give the child CAP_NET_BIND_SERVICE, CAP_NET_RAW: vigil does not hold \
                 them (vigil runs as uid 1000"
            ),
            "{e}"
        );
        let e = said(CapsError::CannotCutBounding {
            extra: Set(0xff << 20),
        });
        assert!(
            e.to_string()
                .contains("so 8 capabilities (CAP_SYS_PACCT, CAP_SYS_ADMIN, CAP_SYS_BOOT, ...)"),
            "{e}"
        );
        for e in [
            CapsError::NoAmbient,
            CapsError::AmbientLocked,
            CapsError::UnknownToKernel {
                caps: Set(1 << 40),
                last: 37,
            },
            CapsError::Unreadable(Errno::EPERM),
        ]
        .map(said)
        {
            assert!(!e.to_string().contains('\n'), "{e}");
        }
        assert_eq!(
            said(CapsError::UnknownToKernel {
                caps: Set(1 << 40),
                last: 37
            }),
            "cannot give the child CAP_CHECKPOINT_RESTORE: this kernel does not know it (its \
             capabilities go up to CAP_AUDIT_READ)"
        );
    }

    /// The tests that narrow a real process need root, as the whole suite
    /// does (CONTRIBUTING.md, Set-up). Elsewhere they fail saying so: a
    /// pass would claim a check that never ran.
    fn need_root() {
        assert!(
            nix::unistd::geteuid().is_root(),
            "this test narrows a real process's capabilities and needs root, as the whole \
             suite does (CONTRIBUTING.md, Set-up)"
        );
    }

    /// The child's steps for real, in a new process: root narrowed to one
    /// capability.
    #[test]
    fn a_spawn_holds_exactly_the_set() {
        need_root();
        let narrowing = prepare(Set(NET_BIND_SERVICE), false).unwrap_or_else(|e| panic!("{e}"));
        let out = std::env::temp_dir().join(format!("vigil-caps-{}", std::process::id()));
        let script = format!("grep ^Cap /proc/self/status > '{}'", out.display());
        let status =
            crate::spawn::run_sh(&script, None, Some(&narrowing)).unwrap_or_else(|e| panic!("{e}"));
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        let _ = std::fs::remove_file(&out);
        assert_eq!(status, 0, "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "CapInh:\t0000000000000400",
                "CapPrm:\t0000000000000400",
                "CapEff:\t0000000000000400",
                "CapBnd:\t0000000000000400",
                "CapAmb:\t0000000000000400",
            ],
            "{text}"
        );
    }

    /// A step that fails in the new process comes back through the
    /// exec-error pipe as that step, with the capability it was about:
    /// PR_CAPBSET_DROP of a capability no kernel has (63) is EINVAL.
    #[test]
    fn a_failed_step_names_its_capability() {
        need_root();
        let mut narrowing = Narrowing::sample(Set(NET_RAW), 0);
        narrowing.narrow.drop_bounding = 1 << 63;
        let e = crate::spawn::run_sh("exit 0", None, Some(&narrowing)).unwrap_err();
        assert_eq!(e.status(), 1);
        assert_eq!(
            e.to_string(),
            "cannot run \"sh\" with capabilities CAP_NET_RAW: prctl(PR_CAPBSET_DROP, CAP_63) \
             failed: Invalid argument"
        );
    }
}
