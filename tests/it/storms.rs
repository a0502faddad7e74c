//! Storms: tens of thousands of signals of mixed kinds (every realtime one
//! must arrive, and the last of each classic kind), thousands of orphans;
//! vigil keeps forwarding and reaping, its memory stays flat, and it stops
//! normally afterwards. The counts are modest so that the file runs in well
//! under a minute; `scripts/stress.sh` runs the same storms at full size.
//!
//! Programs (tests/programs/): `sigcount` (the child: counts every signal
//! it gets, with the time of the last one), `storm` (sends signals as fast
//! as it can and says when it sent the last one of each kind), `orphans`
//! (makes orphans in bursts).

use crate::common::*;
use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::Duration;

// ---------------------------------------------------------------------------
// Signal storm
// ---------------------------------------------------------------------------

/// Mixed kinds: classic ones that coalesce (HUP USR1 USR2 ALRM WINCH),
/// libc's reserved 33, and realtime ones that queue (34, 40, 64).
const KINDS: &[i32] = &[1, 10, 12, 14, 28, 33, 34, 40, 64];

/// Per storm. 9 kinds (+ SIGCHLD noise): 2000 of each.
const STORM: u64 = 20_000;

/// How much vigil's memory may grow from the first storm to the third. A
/// leak of 10 bytes or more per signal shows over 2 x STORM signals
/// (400 kB); the slack covers the peak of the backlog of queued realtime
/// signals vigil reads in one go, which varies from one storm to the next
/// (its size: docs/benchmarks.md).
const MEMORY_SLACK_KB: u64 = 384;

fn is_rt(sig: i32) -> bool {
    sig >= 32
}

fn signal_storm(v: Vigil) {
    let dir = TempDir::new("sigstorm");
    let out = dir.join("counts");
    let run = start_counter(v, &out);
    let vp = run.vigil_pid();
    // SIGCHLD from outside is noise vigil must swallow (reap nothing, forward
    // nothing).
    let mut sigs = KINDS.to_vec();
    sigs.push(libc::SIGCHLD);

    let mut rt_sent: HashMap<i32, u64> = HashMap::new();
    let mut storms = Vec::new();
    for round in 0..3 {
        let s = storm(vp, STORM, &sigs);
        assert_eq!(s.failed, 0, "kill() failed during the storm: {s:?}");
        for &k in KINDS.iter().filter(|&&k| is_rt(k)) {
            *rt_sent.entry(k).or_default() += s.by[&k].0;
        }
        // Every realtime signal queued, and the last of each classic kind,
        // must reach the child.
        let delivered = |c: &Counts| {
            KINDS.iter().all(|&k| {
                if is_rt(k) {
                    c.count(k) == rt_sent[&k]
                } else {
                    c.last(k) > s.by[&k].2
                }
            })
        };
        let ok = wait_until(TIMEOUT, || delivered(&Counts::read(&out)));
        let c = Counts::read(&out);
        assert!(
            ok,
            "round {round}: not everything arrived after the storm.\nsent {s:?}\nrealtime sent so far {rt_sent:?}\nchild counted {c:?}\n{}",
            run.describe()
        );
        assert_eq!(
            c.count(libc::SIGCHLD),
            0,
            "vigil forwarded SIGCHLD to the child"
        );
        assert!(alive(vp), "vigil died in the storm\n{}", run.describe());
        // Round 0 is the warm-up: the allocator has seen a storm; memory
        // is compared from there.
        storms.push((memory(vp), s));
    }
    let ((rss0, hwm0), _) = storms[0];
    let ((rss2, hwm2), _) = storms[2];
    eprintln!(
        "signal storm: 3 x {STORM} signals; vigil VmRSS {rss0} -> {rss2} kB, VmHWM {hwm0} -> {hwm2} kB; send rates {:?} signals/s",
        storms
            .iter()
            .map(|(_, s)| s.sent * 1_000_000_000 / s.ns.max(1))
            .collect::<Vec<_>>()
    );
    assert!(
        hwm2 <= hwm0 + MEMORY_SLACK_KB && rss2 <= rss0 + MEMORY_SLACK_KB,
        "vigil's memory grew over two more storms of {STORM} signals: VmRSS {rss0} -> {rss2} kB, VmHWM {hwm0} -> {hwm2} kB (slack {MEMORY_SLACK_KB} kB)"
    );
    // Still responsive: an ordinary signal, then a normal stop.
    assert_forwards(&run, &out, libc::SIGUSR2);
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    no_panic(&out);
    assert_eq!(out.status, Exit::Code(143), "{out}");
    assert!(
        complaints(&out.stderr).is_empty(),
        "vigil complained during the storm\n{out}"
    );
}

#[test]
fn pid1_survives_a_signal_storm() {
    let _cpu = heavy();
    signal_storm(Vigil::pid1());
}

#[test]
fn plain_survives_a_signal_storm() {
    let _cpu = heavy();
    signal_storm(Vigil::plain());
}

// ---------------------------------------------------------------------------
// Orphan storm
// ---------------------------------------------------------------------------

/// Runs `orphans ARGS` inside vigil's PID namespace (nsenter forks it there
/// with nsenter as its parent outside): the grandchildren it orphans are
/// re-parented to vigil, the namespace's init.
fn orphans_in(vigil_pid: i32, args: &[&str]) {
    let st = Command::new("nsenter")
        .arg("--target")
        .arg(vigil_pid.to_string())
        .arg("--pid")
        .arg("--")
        .arg(test_program("orphans"))
        .args(args)
        .stdin(Stdio::null())
        .status()
        .expect("run nsenter");
    assert!(st.success(), "nsenter orphans {args:?}: {st:?}");
}

#[test]
fn pid1_survives_an_orphan_storm() {
    let _cpu = heavy();
    let dir = TempDir::new("orphanstorm");
    let out = dir.join("counts");
    let run = start_counter(Vigil::pid1().arg("-v").json(), &out);
    let vp = run.vigil_pid();
    let no_zombies = |what: &str| {
        let ok = wait_until(TIMEOUT, || zombies_in_pidns(vp).is_empty());
        assert!(
            ok,
            "{what}: zombies left in vigil's namespace: {:?}\n{}",
            zombies_in_pidns(vp),
            run.describe()
        );
    };
    // Warm-up.
    orphans_in(vp, &["--count", "200", "--burst", "100"]);
    no_zombies("warm-up");
    let (rss0, hwm0) = memory(vp);
    const BURSTS: u64 = 10;
    const BURST: u64 = 400;
    for _ in 0..2 {
        orphans_in(
            vp,
            &[
                "--count",
                &(BURSTS * BURST).to_string(),
                "--burst",
                &BURST.to_string(),
            ],
        );
    }
    no_zombies("after the storm");
    let (rss1, hwm1) = memory(vp);
    eprintln!(
        "orphan storm: {} orphans; vigil VmRSS {rss0} -> {rss1} kB, VmHWM {hwm0} -> {hwm1} kB",
        2 * BURSTS * BURST
    );
    assert!(
        hwm1 <= hwm0 + MEMORY_SLACK_KB && rss1 <= rss0 + MEMORY_SLACK_KB,
        "vigil's memory grew in the orphan storm: VmRSS {rss0} -> {rss1} kB, VmHWM {hwm0} -> {hwm1} kB"
    );

    // After the storm a new orphan is still reaped: find it (by its pid in
    // the namespace) while it lives, then see it vanish, not linger as a
    // zombie.
    let pids = dir.join("late.pids");
    orphans_in(
        vp,
        &[
            "--count",
            "1",
            "--life-ms",
            "1500",
            "--pids",
            pids.to_str().unwrap(),
        ],
    );
    let ns_pid: i32 = std::fs::read_to_string(&pids)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut host = None;
    wait_until(Duration::from_secs(5), || {
        host = run.host_pid(ns_pid);
        host.is_some()
    });
    let host = host.unwrap_or_else(|| {
        panic!(
            "the late orphan (pid {ns_pid} in the namespace) was not found\n{}",
            run.describe()
        )
    });
    assert_eq!(
        stat(host).map(|s| s.ppid),
        Some(vp),
        "the late orphan was not re-parented to vigil"
    );
    assert!(
        wait_until(TIMEOUT, || gone(host)),
        "the orphan made after the storm was not reaped (state {:?})\n{}",
        state(host),
        run.describe()
    );
    let total = 200 + 2 * BURSTS * BURST + 1;
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    no_panic(&out);
    assert_eq!(out.status, Exit::Code(143), "{out}");
    assert_eq!(
        out.records().exit()["orphans_reaped"],
        total,
        "the exit report does not count {total} orphans\n{out}"
    );
}
