//! Becoming the spec's identity: whether vigil may (capabilities), the
//! forked child's set*id calls, what a failure of those looks like to the
//! parent, the terminal rule, and the refusal to run installed setuid.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::os::unix::ffi::OsStrExt;

use libc::{gid_t, uid_t};
use nix::errno::Errno;

use super::{Identity, Ids, quote};
use crate::log::format::{Fields, Obj};
use crate::sys::caps::Narrow;
use crate::sys::exec::{self, Step};
use crate::text::os_error;

/// What the spawn path needs to start a process as the spec's identity,
/// all of it computed before the fork.
#[derive(Clone, Debug)]
pub struct Switch {
    /// The spec as given, for messages.
    spec: OsString,
    identity: Identity,
    /// False when vigil is not privileged and the spec names the ids it
    /// already has: the child then keeps vigil's ids and groups (it could
    /// not set groups without CAP_SETGID) and only HOME changes.
    change: bool,
    /// The terminal rule: start each process in a session of its own,
    /// without vigil's controlling terminal.
    new_session: bool,
    /// vigil takes the identity itself once the child has started
    /// (`follow`).
    follows: bool,
}

/// Whether vigil holds CAP_SETUID and CAP_SETGID (what setuid, setgid and
/// setgroups need): root in a container may lack them (`--cap-drop`), and
/// a user namespace may grant them to a non-zero uid.
pub(super) fn may_switch() -> bool {
    const CAP_SETGID: u32 = 6;
    const CAP_SETUID: u32 = 7;
    has_capabilities(1 << CAP_SETUID | 1 << CAP_SETGID)
}

/// Whether all of `caps` (bit N for capability N) are in vigil's
/// effective set. When capget itself fails, being uid 0 is the answer.
fn has_capabilities(caps: u64) -> bool {
    match crate::sys::caps::get() {
        Ok(sets) => sets.effective & caps == caps,
        Err(_) => nix::unistd::geteuid().is_root(),
    }
}

impl Switch {
    /// `current`: vigil's own ids; `pid1`: whether vigil is PID 1 of its
    /// PID namespace. Decides the terminal rule once, here, before any
    /// fork.
    pub(super) fn new(
        spec: OsString,
        identity: Identity,
        change: bool,
        current: Ids,
        pid1: bool,
    ) -> Switch {
        const CAP_KILL: u32 = 5;
        // Whether the processes vigil starts run as another uid than its own.
        let other = change && identity.uid != current.uid;
        let new_session = other && !pid1 && has_controlling_terminal();
        Switch {
            spec,
            identity,
            change,
            new_session,
            // Without CAP_KILL vigil cannot signal a process of another
            // uid: no forwarding, and neither the grace period nor the
            // drain can end the child (`--cap-drop KILL`; Kubernetes'
            // `drop: [ALL]` with only SETUID and SETGID added back).
            follows: other && !has_capabilities(1 << CAP_KILL),
        }
    }

    /// Whether vigil must take this identity itself to signal its child:
    /// as root without CAP_KILL it may not signal another uid, so that
    /// nothing would reach the child, and neither the grace period nor the
    /// drain could end it. As the child's uid it may (the least-privilege
    /// container: `--cap-drop ALL` with SETUID and SETGID added back).
    pub fn follows(&self) -> bool {
        self.follows
    }

    /// vigil becomes this identity, once its child and the post-start hook
    /// have started: the child's own steps (`caps` around the ids, the
    /// groups, gid, uid), made in vigil's one thread. The processes it
    /// starts from then on (the pre-stop hook) are what vigil is, and
    /// switch nothing. The uid and the error when a step fails. Only for a
    /// switch that `follows`, which changes the ids: `ids` has them.
    pub fn follow(&mut self, caps: Option<Narrow>) -> Result<u32, (u32, Errno)> {
        let uid = self.identity.uid;
        exec::switch_user(self.ids(), caps).map_err(|failed| (uid, failed.errno))?;
        self.change = false;
        Ok(uid)
    }

    /// The child's HOME (gosu replaces whatever HOME vigil had).
    pub fn home(&self) -> &OsStr {
        &self.identity.home
    }

    /// The terminal rule (TIOCSTI, CVE-2016-2779): whether each
    /// process started as this identity must get a session of its own,
    /// without vigil's controlling terminal, and must not be given the
    /// terminal's foreground.
    ///
    /// A process may push input into its *controlling* terminal with the
    /// TIOCSTI ioctl (where `dev.tty.legacy_tiocsti` still allows it, as on
    /// most kernels before 6.2 and many after): whatever it types is read
    /// after vigil exits by the shell that started vigil, as that shell's
    /// user. So when vigil is not PID 1, has a controlling terminal and the
    /// child runs as another uid, the child calls setsid() before exec: a
    /// new session has no controlling terminal, and the one it had cannot
    /// be taken back by an unprivileged process (TIOCSCTTY refuses a
    /// terminal that is another session's). It still reads and writes the
    /// terminal through the descriptors it inherits; Ctrl-C and Ctrl-Z then
    /// go to vigil's group, and vigil forwards them (a forwarded SIGTSTP is
    /// discarded by the kernel for a group without a parent in its session,
    /// so Ctrl-Z does nothing then).
    ///
    /// Checked: vigil's *controlling terminal*, found by opening /dev/tty,
    /// not whether stdin is a terminal: a child whose stdin is /dev/null
    /// can still open /dev/tty. Whether vigil's parent shares it cannot
    /// always be seen (the parent may be outside vigil's PID namespace), so
    /// any controlling terminal counts as shared. As PID 1 vigil keeps job
    /// control: that is a container's own terminal, which nobody reads
    /// after the container ends. The same uid (root as root with other
    /// groups, or ids vigil could not change) is no other user.
    pub fn new_session(&self) -> bool {
        self.new_session
    }

    /// The ids a new process takes, for its plan (`sys::exec::Plan`):
    /// supplementary groups, then gid, then uid, each set last before
    /// exec (each step needs the privilege the next one gives up). As root,
    /// setuid sets the real, effective and saved uid and the kernel drops
    /// the capabilities; setgid sets all three gids. None when the ids do
    /// not change.
    pub fn ids(&self) -> Option<exec::User<'_>> {
        let id = &self.identity;
        self.change.then_some(exec::User {
            groups: &id.groups,
            gid: id.gid,
            uid: id.uid,
        })
    }

    /// What a new process's failed `step` means, read in the parent: a
    /// failure of the switch (EPERM: the privilege went missing; EINVAL:
    /// an id that the user namespace does not map), for the steps that
    /// set the ids; none for another step.
    pub fn failure(&self, step: Step, errno: Errno) -> Option<SwitchFailure> {
        let ours = matches!(step, Step::Groups | Step::Gid | Step::Uid);
        ours.then(|| SwitchFailure {
            spec: self.spec.clone(),
            step,
            uid: self.identity.uid,
            gid: self.identity.gid,
            groups: self.identity.groups.len(),
            error: io::Error::from(errno),
        })
    }
}

/// The facts of the `running_as` record.
impl Fields for Switch {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        let id = &self.identity;
        o.field("user", self.spec.as_os_str())
            .field("changed", self.change);
        if self.change {
            o.field("uid", id.uid)
                .field("gid", id.gid)
                .field("groups", id.groups.len());
        }
        o.field("home", id.home.as_os_str())
            .field("new_session", self.new_session);
    }
}

impl fmt::Display for Switch {
    /// For the log at start: `user "app": uid 1000, gid 1000, 2
    /// supplementary groups, HOME=/home/app`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = &self.identity;
        write!(f, "user {}: ", quote(self.spec.as_bytes()))?;
        if !self.change {
            write!(f, "vigil's own ids, kept (no privilege to set groups), ")?;
        } else {
            write!(f, "uid {}, gid {}, ", id.uid, id.gid)?;
            match id.groups.len() {
                1 => write!(f, "1 supplementary group, ")?,
                n => write!(f, "{n} supplementary groups, ")?,
            }
        }
        write!(f, "HOME={}", quote(id.home.as_bytes()))?;
        if self.new_session {
            write!(f, "; in a session of its own, without vigil's terminal")?;
        }
        Ok(())
    }
}

/// A switch that failed in the child, after the fork: nothing was
/// executed. (Rare: `prepare` checked the privilege. EINVAL is an id the
/// user namespace does not map, as in a rootless container; EPERM a
/// security module or a seccomp filter.)
#[derive(Debug)]
pub struct SwitchFailure {
    spec: OsString,
    /// `Groups`, `Gid` or `Uid`.
    pub step: Step,
    uid: uid_t,
    gid: gid_t,
    groups: usize,
    pub error: io::Error,
}

/// The facts of the `user_switch_failed` record.
impl Fields for SwitchFailure {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        o.field("user", self.spec.as_os_str())
            .word("call", self.step.call())
            .field("error", os_error(&self.error));
    }
}

impl fmt::Display for SwitchFailure {
    /// `as user "app": setuid(1000) failed: Invalid argument`, to follow
    /// `cannot run "PROG"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "as user {}: ", quote(self.spec.as_bytes()))?;
        match self.step {
            Step::Groups => write!(f, "setgroups ({} groups)", self.groups)?,
            Step::Gid => write!(f, "setgid({})", self.gid)?,
            // Uid, the switch's last step.
            _ => write!(f, "setuid({})", self.uid)?,
        }
        write!(f, " failed: {}", os_error(&self.error))?;
        if self.error.raw_os_error() == Some(libc::EINVAL) && self.step != Step::Groups {
            write!(f, " (an id this user namespace does not map?)")?;
        }
        Ok(())
    }
}

/// Whether vigil has a controlling terminal. A failure that cannot tell
/// (no /dev/tty in the image) counts as a terminal: the rule then errs on
/// the safe side, and a new session without a terminal changes nothing
/// the child can see.
fn has_controlling_terminal() -> bool {
    crate::sys::fd::controlling_terminal() != Err(Errno::ENXIO)
}

/// vigil installed setuid or setgid: its real and effective ids differ.
#[derive(Debug, PartialEq, Eq)]
pub enum SetIdError {
    Setuid { real: uid_t, effective: uid_t },
    Setgid { real: gid_t, effective: gid_t },
}

/// The facts of the `setid_refused` record.
impl Fields for SetIdError {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        let (bit, real, effective) = match *self {
            SetIdError::Setuid { real, effective } => ("setuid", real, effective),
            SetIdError::Setgid { real, effective } => ("setgid", real, effective),
        };
        o.word("bit", bit)
            .field("real", real)
            .field("effective", effective);
    }
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
    use nix::unistd::{getegid, geteuid, getgid, getuid};
    check_setid(
        getuid().as_raw(),
        geteuid().as_raw(),
        getgid().as_raw(),
        getegid().as_raw(),
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    fn switch(uid: uid_t, gid: gid_t, groups: Vec<gid_t>, change: bool) -> Switch {
        let identity = Identity {
            uid,
            gid,
            groups,
            home: "/".into(),
        };
        let root = Ids { uid: 0, gid: 0 };
        Switch::new("app".into(), identity, change, root, true)
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

    /// The terminal rule's inputs other than the terminal: as PID 1, for
    /// the same uid, and for ids that do not change, there is no new
    /// session whatever the terminal.
    #[test]
    fn new_session_only_for_another_user_outside_pid1() {
        let identity = |uid| Identity {
            uid,
            gid: 5,
            groups: Vec::new(),
            home: "/".into(),
        };
        let root = Ids { uid: 0, gid: 0 };
        let new = |uid, change, pid1| {
            Switch::new("x".into(), identity(uid), change, root, pid1).new_session()
        };
        assert!(!new(1000, true, true), "PID 1 keeps job control");
        assert!(!new(0, true, false), "root as root with other groups");
        assert!(!new(1000, false, false), "ids that do not change");
        // Another user outside PID 1: a new session exactly when there is
        // a controlling terminal (the test may run with or without one).
        assert_eq!(new(1000, true, false), has_controlling_terminal());
    }

    /// The tests that switch a real process need CAP_SETUID and
    /// CAP_SETGID: root, as the whole suite runs (CONTRIBUTING.md, Set-up).
    /// Elsewhere they fail saying so: a pass would claim a check that never
    /// ran.
    fn need_root() {
        assert!(
            may_switch(),
            "this test switches a real process to other ids and needs CAP_SETUID and \
             CAP_SETGID: root, as the whole suite does (CONTRIBUTING.md, Set-up)"
        );
    }

    /// A process started as the switch says, for real: its ids and groups,
    /// as /proc shows them.
    #[test]
    fn a_spawn_takes_the_groups_gid_and_uid() {
        need_root();
        let out = std::env::temp_dir().join(format!("vigil-switch-{}", std::process::id()));
        let script = format!(
            "grep -E '^(Uid|Gid|Groups):' /proc/self/status > '{}'",
            out.display()
        );
        let status = crate::spawn::run_sh(
            &script,
            Some(&switch(4321, 4322, vec![7, 4323, 7], true)),
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        let _ = std::fs::remove_file(&out);
        assert_eq!(status, 0, "{text}");
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
        assert!(switch(4321, 4322, vec![7], false).ids().is_none());
    }

    /// A failed set*id call in the new process reaches the parent as the
    /// switch's failure, not as an exec error: EINVAL for `(uid_t)-1`,
    /// which no file can name.
    #[test]
    fn a_failed_switch_is_told_from_an_exec_error() {
        need_root();
        let e = crate::spawn::run_sh("exit 0", Some(&switch(u32::MAX, 0, Vec::new(), true)), None)
            .unwrap_err();
        let Some(crate::spawn::SwitchFailed::User(failure)) = &e.switch_failed else {
            panic!("a switch failure: {e}");
        };
        assert_eq!(failure.step, Step::Uid);
        assert_eq!(failure.error.raw_os_error(), Some(libc::EINVAL));
        assert_eq!(e.status(), 1);
        assert_eq!(
            e.to_string(),
            r#"cannot run "sh" as user "app": setuid(4294967295) failed: Invalid argument (an id this user namespace does not map?)"#
        );
    }

    #[test]
    fn failures_name_their_call() {
        let s = switch(7, 8, vec![1, 2, 3], true);
        for (step, text) in [
            (exec::Step::Groups, "setgroups (3 groups)"),
            (exec::Step::Gid, "setgid(8)"),
            (exec::Step::Uid, "setuid(7)"),
        ] {
            let f = s.failure(step, Errno::EPERM).unwrap();
            assert_eq!(
                f.to_string(),
                format!(r#"as user "app": {text} failed: Operation not permitted"#)
            );
        }
        // The other steps are no switch's.
        for step in [exec::Step::Exec, exec::Step::Group, exec::Step::Signals] {
            assert!(s.failure(step, Errno::EPERM).is_none(), "{step:?}");
        }
    }
}
