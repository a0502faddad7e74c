//! Capabilities at the kernel: `capget` and `capset` on the version 3
//! structures (nix wraps neither), the bounding and ambient sets through
//! `prctl` (nix has no wrapper for those either), and the new process's
//! steps to hold exactly a given set ([`Narrow`], which `sys::exec` runs
//! around the uid switch).
//!
//! A set is a `u64`, bit N for capability N: the kernel's version 3
//! structures hold two 32-bit words per set, and it knows fewer than 64
//! capabilities.

use libc::{c_int, c_ulong};
use nix::errno::Errno;

use super::step::{Failed, Step};

/// `_LINUX_CAPABILITY_VERSION_3`: two `Data` records, 64 bits per set.
const VERSION_3: u32 = 0x2008_0522;

/// The kernel's `__user_cap_header_struct`.
#[repr(C)]
struct Header {
    version: u32,
    /// 0: the calling thread.
    pid: c_int,
}

/// The header of every call here: version 3, the calling thread.
fn header() -> Header {
    Header {
        version: VERSION_3,
        pid: 0,
    }
}

/// The kernel's `__user_cap_data_struct`: three u32, the same on every
/// architecture.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Data {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// A process's effective, permitted and inheritable sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sets {
    pub effective: u64,
    pub permitted: u64,
    pub inheritable: u64,
}

/// The calling thread's sets (`capget`).
pub fn get() -> Result<Sets, Errno> {
    let mut data = [Data::default(); 2];
    // SAFETY: capget reads the header (and may write its version) and,
    // for version 3, writes two `Data` records into `data`, which has room
    // for them.
    let r = unsafe { libc::syscall(libc::SYS_capget, &mut header(), data.as_mut_ptr()) };
    Errno::result(r)?;
    let [low, high] = data;
    let join = |l: u32, h: u32| u64::from(l) | u64::from(h) << 32;
    Ok(Sets {
        effective: join(low.effective, high.effective),
        permitted: join(low.permitted, high.permitted),
        inheritable: join(low.inheritable, high.inheritable),
    })
}

/// Sets the calling thread's effective, permitted and inheritable sets,
/// all three to `caps` (`capset`). No allocation, no lock: it may be
/// called in the forked child.
fn set_all(caps: u64) -> Result<(), Errno> {
    let half = |bits| Data {
        effective: bits,
        permitted: bits,
        inheritable: bits,
    };
    // The low and high 32 bits: the truncations are the split.
    let data = [half(caps as u32), half((caps >> 32) as u32)];
    // SAFETY: capset reads the header (and may write its version) and,
    // for version 3, two `Data` records from `data`; both live for the
    // call.
    let r = unsafe { libc::syscall(libc::SYS_capset, &mut header(), data.as_ptr()) };
    Errno::result(r).map(drop)
}

/// `prctl(option, arg2, arg3, 0, 0)`, its non-negative result.
fn prctl(option: c_int, arg2: c_ulong, arg3: c_ulong) -> Result<c_int, Errno> {
    let zero: c_ulong = 0;
    // SAFETY: the options used here (the bounding set, the ambient set,
    // the securebits, keep-caps) take integers only and write no memory of the
    // caller's; unused arguments are passed as 0, as the kernel requires.
    Errno::result(unsafe { libc::prctl(option, arg2, arg3, zero, zero) })
}

/// The bounding set, and the highest capability the kernel knows (the
/// first number `PR_CAPBSET_READ` refuses, less one).
pub fn bounding() -> Result<(u64, u32), Errno> {
    let mut set = 0;
    for cap in 0..64 {
        match prctl(libc::PR_CAPBSET_READ, c_ulong::from(cap), 0) {
            Ok(1) => set |= 1 << cap,
            Ok(_) => {}
            Err(Errno::EINVAL) if cap > 0 => return Ok((set, cap - 1)),
            Err(e) => return Err(e),
        }
    }
    Ok((set, 63))
}

/// Whether capability `cap` is in the ambient set; EINVAL: the kernel has
/// no ambient set (before Linux 4.3) or does not know `cap`.
pub fn ambient_has(cap: u32) -> Result<bool, Errno> {
    prctl(
        libc::PR_CAP_AMBIENT,
        libc::PR_CAP_AMBIENT_IS_SET as c_ulong,
        c_ulong::from(cap),
    )
    .map(|r| r == 1)
}

/// The securebits (`PR_GET_SECUREBITS`).
pub fn securebits() -> Result<u32, Errno> {
    prctl(libc::PR_GET_SECUREBITS, 0, 0).map(|r| r as u32)
}

/// `SECBIT_NO_CAP_AMBIENT_RAISE`: no capability may be raised in the
/// ambient set.
pub const SECBIT_NO_CAP_AMBIENT_RAISE: u32 = 1 << 6;

/// What the new process does to hold exactly `keep`, made before the
/// fork: plain data, read by raw system calls that neither allocate nor
/// lock, in the two halves `sys::exec` makes around the uid switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Narrow {
    /// The capabilities the program gets, in its permitted, effective,
    /// inheritable and ambient sets.
    pub keep: u64,
    /// The capabilities to drop from the bounding set (those it holds
    /// beyond `keep`, or none when vigil cannot drop them).
    pub drop_bounding: u64,
    /// A uid switch comes between the two halves: the permitted set must
    /// survive it (`PR_SET_KEEPCAPS`).
    pub switching: bool,
}

/// Which set a read-back found wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    Effective = 1,
    Permitted = 2,
    Inheritable = 3,
    Ambient = 4,
}

/// What a failed step was about, in the exec-error message's detail: the
/// capability plus one in bits 0-7 (0: none), the set a read-back found
/// wrong in bits 8-15 (0: none).
pub fn detail(cap: Option<u32>, which: Option<Which>) -> u32 {
    cap.map_or(0, |c| (c + 1) & 0xff) | which.map_or(0, |w| (w as u32) << 8)
}

/// The capability a detail names, and the set, by its name in messages
/// and records (`effective`).
pub fn parse_detail(detail: u32) -> (Option<u32>, Option<&'static str>) {
    let cap = (detail & 0xff).checked_sub(1);
    let which = match (detail >> 8) & 0xff {
        1 => Some("effective"),
        2 => Some("permitted"),
        3 => Some("inheritable"),
        4 => Some("ambient"),
        _ => None,
    };
    (cap, which)
}

/// A failed step about capability `cap`.
fn failed(step: Step, cap: Option<u32>) -> impl Fn(Errno) -> Failed {
    move |errno| Failed {
        step,
        errno,
        detail: detail(cap, None),
    }
}

/// The capabilities in `set`, lowest first.
pub fn each(set: u64) -> impl Iterator<Item = u32> {
    (0..64).filter(move |cap| set & 1 << cap != 0)
}

impl Narrow {
    /// Before the uid switch: the bounding set cut (which needs
    /// CAP_SETPCAP, which the switch gives up) and the permitted set kept
    /// across the switch.
    ///
    /// For the new process only, between fork and exec (`sys::exec`).
    pub fn before_switch(&self) -> Result<(), Failed> {
        for cap in each(self.drop_bounding) {
            prctl(libc::PR_CAPBSET_DROP, c_ulong::from(cap), 0)
                .map_err(failed(Step::Bounding, Some(cap)))?;
        }
        if self.switching {
            prctl(libc::PR_SET_KEEPCAPS, 1, 0).map_err(failed(Step::KeepCaps, None))?;
        }
        Ok(())
    }

    /// After the uid switch, last before exec: the three sets become
    /// `keep`, each of it is raised in the ambient set (the switch cleared
    /// it; the kernel raises a capability there only when it is permitted
    /// and inheritable), and the sets are read back: the program never
    /// starts with other capabilities than `keep`.
    ///
    /// For the new process only, between fork and exec (`sys::exec`).
    pub fn after_switch(&self) -> Result<(), Failed> {
        set_all(self.keep).map_err(failed(Step::Capset, None))?;
        for cap in each(self.keep) {
            prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_RAISE as c_ulong,
                c_ulong::from(cap),
            )
            .map_err(failed(Step::Ambient, Some(cap)))?;
        }
        self.check()
    }

    /// The sets as the kernel holds them now are `keep`, ambient included.
    fn check(&self) -> Result<(), Failed> {
        let wrong = |which, cap| Failed {
            step: Step::CapsCheck,
            errno: Errno::UnknownErrno,
            detail: detail(Some(cap), Some(which)),
        };
        let now = get().map_err(failed(Step::CapsCheck, None))?;
        for (which, set) in [
            (Which::Effective, now.effective),
            (Which::Permitted, now.permitted),
            (Which::Inheritable, now.inheritable),
        ] {
            if let Some(cap) = each(set ^ self.keep).next() {
                return Err(wrong(which, cap));
            }
        }
        // The ambient set is within the permitted one, so `keep` holds
        // all of it: only a missing capability can be wrong here.
        for cap in each(self.keep) {
            match ambient_has(cap) {
                Ok(true) => {}
                Ok(false) => return Err(wrong(Which::Ambient, cap)),
                Err(e) => return Err(failed(Step::CapsCheck, Some(cap))(e)),
            }
        }
        Ok(())
    }
}
