//! vigil's place in the CPU scheduler: the shortest time slice the kernel
//! grants, for vigil alone; every process vigil starts gets back the slice
//! vigil was started with.
//!
//! Why. Linux's fair scheduler (EEVDF, 6.6 and later) lets a task that
//! wakes up run at once only when its virtual deadline comes before the
//! running task's, and not before the running task has had its protected
//! share of its slice. A container whose application keeps its CPUs busy
//! then makes vigil wait, after a signal or a child's exit wakes it, for the
//! rest of an application thread's slice: milliseconds, for a few
//! microseconds of work (docs/benchmarks.md, "Forwarding on a busy CPU").
//! Since 6.12 a task may ask for a shorter slice (`sched_setattr`, with
//! `sched_runtime` under SCHED_OTHER), and one whose slice is shorter than
//! the running task's may preempt it at once. That is vigil's shape exactly:
//! it wakes rarely, for very little. The slice gives vigil no larger share
//! of the CPU; it makes its wake-ups prompt.
//!
//! Only vigil's own slice changes. The child and the hooks are the
//! application's, and get what vigil was given: the slice is put back in
//! each one before its exec, as the signal mask is (`spawn`).
//!
//! Nothing changes when vigil runs under another policy (SCHED_BATCH and
//! SCHED_IDLE never preempt on waking; real-time policies are someone's
//! choice), when its parent marked it reset-on-fork (the kernel then gives
//! every child the default slice anyway, and vigil leaves that as it is),
//! when the kernel refuses (a seccomp filter), or when it has no slices to
//! give (before 6.12 it reports none).

use std::mem::size_of;

/// The slice vigil asks for, in nanoseconds: the shortest the kernel grants
/// (it clamps to 0.1-100 ms). vigil's work for one wake-up takes a few
/// microseconds; the longest it does at once, reaping a burst of thousands
/// of zombies, is then preempted by its competitors every 0.1 ms, which
/// costs it nothing it needs.
const VIGIL_SLICE_NS: u64 = 100_000;

/// `struct sched_attr` as of Linux 3.14 (SCHED_ATTR_SIZE_VER0): the same
/// layout on every architecture (fixed-size fields, naturally aligned).
/// Later kernels accept this size and fill in no more than it holds.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct SchedAttr {
    size: u32,
    policy: u32,
    flags: u64,
    nice: i32,
    priority: u32,
    /// Under SCHED_OTHER since 6.12: the slice (0 when set: the default).
    runtime: u64,
    deadline: u64,
    period: u64,
}

const ATTR_SIZE: u32 = 48;
const _: () = assert!(size_of::<SchedAttr>() == ATTR_SIZE as usize);

/// SCHED_FLAG_RESET_ON_FORK: children start with the default policy,
/// priority and slice.
const RESET_ON_FORK: u64 = 0x01;

/// What a process vigil starts must get back before its exec: the slice
/// vigil was started with, when vigil changed its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Slice {
    restore: Option<SchedAttr>,
}

/// Gives vigil the short slice, if it may have one, and returns what its
/// children must get back.
///
/// Four system calls, once, at start: read the attributes, set the default
/// slice and read it back (to know whether the slice vigil was given is the
/// kernel's default, which a child should follow if the default is tuned
/// later, or one set for it, which a child should keep), then set vigil's.
pub fn shorten() -> Slice {
    let Some(given) = get() else {
        return Slice::default();
    };
    let Some(mine) = shortened(&given) else {
        return Slice::default();
    };
    let default = set(&SchedAttr { runtime: 0, ..mine })
        .then(get)
        .flatten()
        .map(|attr| attr.runtime);
    if !set(&mine) {
        // Refused: vigil keeps what it was given, and so do its children
        // without any help.
        set(&to_restore(&given, default));
        return Slice::default();
    }
    Slice {
        restore: (given.flags & RESET_ON_FORK == 0).then(|| to_restore(&given, default)),
    }
}

/// vigil's own attributes with the short slice, or None when vigil leaves
/// them as they are: another policy than SCHED_OTHER, a kernel without
/// slices, or a slice already as short.
fn shortened(given: &SchedAttr) -> Option<SchedAttr> {
    if given.policy != libc::SCHED_OTHER as u32 {
        return None;
    }
    // A kernel that reports no slice (runtime 0, before 6.12) takes none
    // either.
    if given.runtime <= VIGIL_SLICE_NS {
        return None;
    }
    Some(SchedAttr {
        size: ATTR_SIZE,
        // Of the flags the kernel reports, only reset-on-fork is a setting
        // of a SCHED_OTHER task; the others would ask for more (clamps).
        flags: given.flags & RESET_ON_FORK,
        runtime: VIGIL_SLICE_NS,
        ..*given
    })
}

/// The attributes that give a child the slice vigil was `given`: the
/// default (runtime 0), when that is what vigil had, so that the child
/// follows the kernel's setting as it would have.
fn to_restore(given: &SchedAttr, default: Option<u64>) -> SchedAttr {
    let runtime = if default == Some(given.runtime) {
        0
    } else {
        given.runtime
    };
    SchedAttr {
        size: ATTR_SIZE,
        flags: 0,
        runtime,
        ..*given
    }
}

impl Slice {
    /// Puts back, in a freshly forked child, the slice vigil was started
    /// with. One raw system call and no allocation: runs between fork and
    /// exec. A refusal leaves the child with vigil's slice, which is no
    /// reason not to start it.
    pub fn restore_in_child(&self) {
        if let Some(attr) = &self.restore {
            set(attr);
        }
    }
}

/// The calling thread's attributes.
fn get() -> Option<SchedAttr> {
    let mut attr = SchedAttr::default();
    // SAFETY: sched_getattr writes at most ATTR_SIZE bytes (its third
    // argument) into `attr`, a live SchedAttr of exactly that size.
    let r = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            0,
            &mut attr as *mut SchedAttr,
            ATTR_SIZE,
            0u32,
        )
    };
    (r == 0).then_some(attr)
}

/// Sets the calling thread's attributes; whether the kernel took them.
fn set(attr: &SchedAttr) -> bool {
    // SAFETY: sched_setattr reads `attr.size` bytes (ATTR_SIZE) from a live
    // SchedAttr of that size; it writes nothing.
    let r = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, attr as *const SchedAttr, 0u32) };
    r == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn other(runtime: u64) -> SchedAttr {
        SchedAttr {
            size: ATTR_SIZE,
            policy: libc::SCHED_OTHER as u32,
            nice: 5,
            runtime,
            ..SchedAttr::default()
        }
    }

    #[test]
    fn a_default_slice_is_shortened_and_nice_kept() {
        let mine = shortened(&other(2_800_000)).unwrap();
        assert_eq!(mine.runtime, VIGIL_SLICE_NS);
        assert_eq!(mine.nice, 5);
        assert_eq!(mine.policy, libc::SCHED_OTHER as u32);
        assert_eq!(mine.flags, 0);
    }

    #[test]
    fn other_policies_and_short_slices_are_left_alone() {
        for policy in [
            libc::SCHED_BATCH,
            libc::SCHED_IDLE,
            libc::SCHED_FIFO,
            libc::SCHED_RR,
        ] {
            let given = SchedAttr {
                policy: policy as u32,
                ..other(2_800_000)
            };
            assert_eq!(shortened(&given), None, "policy {policy}");
        }
        assert_eq!(shortened(&other(VIGIL_SLICE_NS)), None);
        assert_eq!(shortened(&other(0)), None, "a kernel without slices");
        assert_eq!(shortened(&other(50_000)), None);
    }

    #[test]
    fn only_reset_on_fork_is_carried_over() {
        let given = SchedAttr {
            flags: RESET_ON_FORK | 0x60, // and the clamp flags
            ..other(2_800_000)
        };
        assert_eq!(shortened(&given).unwrap().flags, RESET_ON_FORK);
    }

    #[test]
    fn the_child_follows_the_default_or_keeps_a_slice_of_its_own() {
        let given = other(2_800_000);
        assert_eq!(to_restore(&given, Some(2_800_000)).runtime, 0);
        assert_eq!(to_restore(&given, Some(1_400_000)).runtime, 2_800_000);
        assert_eq!(to_restore(&given, None).runtime, 2_800_000);
        let back = to_restore(&given, Some(2_800_000));
        assert_eq!((back.nice, back.policy, back.flags), (5, given.policy, 0));
    }
}
