//! Reaping: every orphan the kernel re-parents to vigil is reaped, as
//! PID 1 (here ten thousand, with `-w` warning once for each) and as a
//! child subreaper when vigil is not PID 1 (`-s`, `TINI_SUBREAPER`, or by
//! itself). Storms of orphans are in tests/it/storms.rs.

use crate::common::*;
use std::time::Duration;

#[test]
fn pid1_reaps_10000_orphans_and_leaves_no_zombie() {
    let _cpu = heavy();
    let dir = TempDir::new("orphans");
    let done = dir.join("done");
    // vigil's stderr is a file: a pipe that the test's reader, on a busy
    // machine, lets fill up would make vigil drop lines (it never blocks
    // on one), and the count is what is checked here.
    let log = dir.join("stderr");
    let to_file = "f=$1; shift; exec \"$@\" 2>\"$f\"";
    let mut prefix: Vec<std::ffi::OsString> = vec!["sh".into(), "-c".into(), to_file.into()];
    prefix.extend(["sh".into(), log.clone().into()]);
    prefix.extend(["unshare", "--pid", "--fork", "--mount-proc", "--"].map(Into::into));
    let run = Vigil::wrapped(&prefix)
        .json()
        .args(["-w", "--"])
        .arg(test_program("orphans"))
        .args([
            "--count",
            "10000",
            "--burst",
            "200",
            "--hold-ms",
            "600000",
            "--done",
        ])
        .arg(&done)
        .spawn();
    assert!(
        wait_for_file(&done, Duration::from_secs(180)),
        "the orphan maker did not finish\n{}",
        run.describe()
    );
    let v = run.vigil_pid();
    let mut last = (0, 0);
    let clean = wait_until_every(Duration::from_secs(120), Duration::from_millis(100), || {
        let m = pidns_members(v);
        last = (m.len(), zombies_among(&m).len());
        last == (2, 0)
    });
    assert!(
        clean,
        "orphans not all reaped: {} processes left in the namespace, {} of them zombies (want vigil + maker, no zombie)",
        last.0, last.1
    );
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.status, Exit::Code(143), "{out}");
    let records = Records::of(&std::fs::read_to_string(&log).unwrap());
    let warned = records
        .all("reaped")
        .iter()
        .filter(|r| r["level"] == "warning")
        .count();
    assert_eq!(
        warned,
        10000,
        "-w should warn once per orphan reaped; the first records:\n{}",
        Records(records.0[..records.0.len().min(10)].to_vec())
    );
}

// ---------------------------------------------------------------------------
// Not PID 1: a child subreaper
// ---------------------------------------------------------------------------

fn assert_plain_reaps_orphans(v: Vigil) {
    let dir = TempDir::new("subreaper");
    let pids = dir.join("pids");
    let done = dir.join("done");
    let run = v
        .arg("--")
        .arg(test_program("orphans"))
        .args([
            "--count",
            "20",
            "--burst",
            "5",
            "--life-ms",
            "3000",
            "--hold-ms",
            "600000",
            "--pids",
        ])
        .arg(&pids)
        .arg("--done")
        .arg(&done)
        .spawn();
    let vp = run.vigil_pid();
    assert!(
        wait_for_file(&done, TIMEOUT),
        "orphan maker did not finish\n{}",
        run.describe()
    );
    let orphans: Vec<(i32, u64)> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| {
            let p: i32 = l.parse().unwrap();
            let st =
                stat(p).unwrap_or_else(|| panic!("orphan {p} already gone (too slow a machine?)"));
            assert_eq!(
                st.ppid,
                vp,
                "orphan {p} was re-parented to {} ({:?}), not to vigil {vp}",
                st.ppid,
                comm(st.ppid)
            );
            (p, st.starttime)
        })
        .collect();
    assert_eq!(orphans.len(), 20);
    let left = |o: &[(i32, u64)]| -> Vec<(i32, char)> {
        o.iter()
            .filter_map(|&(p, t)| stat(p).filter(|s| s.starttime == t).map(|s| (p, s.state)))
            .collect()
    };
    assert!(
        wait_until(TIMEOUT, || left(&orphans).is_empty()),
        "orphans not reaped by vigil: {:?} (pid, state)",
        left(&orphans)
    );
    assert!(alive(vp), "vigil gone");
    let out = run.stop_and_wait(libc::SIGTERM, TIMEOUT);
    assert_eq!(out.status, Exit::Code(143), "{out}");
}

#[test]
fn plain_dash_s_reaps_orphans() {
    assert_plain_reaps_orphans(Vigil::plain().arg("-s"));
}

#[test]
fn plain_tini_subreaper_set_empty_reaps_orphans() {
    assert_plain_reaps_orphans(Vigil::plain().env("TINI_SUBREAPER", ""));
}

#[test]
fn plain_reaps_orphans_without_subreaper_option() {
    assert_plain_reaps_orphans(Vigil::plain());
}
