//! The steps a new process makes between its fork and its exec, and how
//! one of them failed: what the exec-error pipe carries (`exec.rs` makes
//! the steps; `caps.rs` and `user.rs` some of them).

use nix::errno::Errno;

/// A step of the new process, in the order they are made; its code is
/// what the exec-error pipe carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// dup2 of the new stdin.
    Stdin = 1,
    /// setpgid(0, 0), a process group of its own.
    Group = 2,
    /// setsid(), a session of its own (`--user`'s terminal rule).
    Session = 3,
    /// The signal mask and dispositions vigil was started with.
    Signals = 4,
    /// `--caps`: `prctl(PR_CAPBSET_DROP)`, one capability (the detail).
    Bounding = 5,
    /// `--caps`: `prctl(PR_SET_KEEPCAPS)`.
    KeepCaps = 6,
    /// `--user`: setgroups.
    Groups = 7,
    /// `--user`: setgid.
    Gid = 8,
    /// `--user`: setuid.
    Uid = 9,
    /// `--caps`: capset.
    Capset = 10,
    /// `--caps`: `prctl(PR_CAP_AMBIENT_RAISE)`, one capability (the
    /// detail).
    Ambient = 11,
    /// `--caps`: the sets read back before exec are not the ones given
    /// (the detail says which capability, in which set), or could not be
    /// read (the error).
    CapsCheck = 12,
    /// execve, for every file the search tried.
    Exec = 13,
}

impl Step {
    const ALL: [Step; 13] = [
        Step::Stdin,
        Step::Group,
        Step::Session,
        Step::Signals,
        Step::Bounding,
        Step::KeepCaps,
        Step::Groups,
        Step::Gid,
        Step::Uid,
        Step::Capset,
        Step::Ambient,
        Step::CapsCheck,
        Step::Exec,
    ];

    pub(super) fn from_code(code: u32) -> Option<Step> {
        Step::ALL.into_iter().find(|step| *step as u32 == code)
    }

    /// The call that failed, as messages and records name it: a `prctl`
    /// by its option, the read-back of the capability sets as `verify`.
    pub fn call(self) -> &'static str {
        match self {
            Step::Stdin => "dup2",
            Step::Group => "setpgid",
            Step::Session => "setsid",
            Step::Signals => "rt_sigaction/rt_sigprocmask",
            Step::Bounding => "PR_CAPBSET_DROP",
            Step::KeepCaps => "PR_SET_KEEPCAPS",
            Step::Capset => "capset",
            Step::Ambient => "PR_CAP_AMBIENT_RAISE",
            Step::CapsCheck => "verify",
            Step::Groups => "setgroups",
            Step::Gid => "setgid",
            Step::Uid => "setuid",
            Step::Exec => "execve",
        }
    }

    /// The status the new process exits with when this step fails with
    /// `errno`, which is the one vigil gives for that failure: the shell's
    /// 127 (not found) and 126 (cannot be executed) for the exec, 1 for
    /// any step before it.
    pub fn status(self, errno: Errno) -> i32 {
        match (self, errno) {
            (Step::Exec, Errno::ENOENT | Errno::ENOTDIR) => 127,
            (Step::Exec, _) => 126,
            _ => 1,
        }
    }
}

/// A step of the new process that failed: the step, its error, and what
/// it was about when that is one of several things (a capability, a set:
/// the step's own code, `sys::caps`), else 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failed {
    pub step: Step,
    pub errno: Errno,
    pub detail: u32,
}

impl Failed {
    pub(super) fn at(step: Step) -> impl Fn(Errno) -> Failed {
        move |errno| Failed {
            step,
            errno,
            detail: 0,
        }
    }
}

/// The message's size: the step's code, the error and the detail, each 4
/// bytes in the machine's order (both ends are the same program). A pipe
/// takes it in one piece, as it is shorter than PIPE_BUF.
pub const MESSAGE: usize = 12;
