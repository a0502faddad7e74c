//! `--ready-when`: probing until the first success, `READY=1` once and
//! nothing pending afterwards, `STOPPING=1`, `--ready-timeout`; and
//! `--live-when`: a probe per interval, the stop after failures in a row.

use super::*;
use crate::probe::{Address, Healthy, Outcome, Unhealthy};

const URL: &str = "http://127.0.0.1:8080/healthz";

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn refused() -> Option<Outcome> {
    Some(Err(Unhealthy::Refused(Address::Inet(
        "127.0.0.1:8080".parse().unwrap(),
    ))))
}

fn healthy() -> Option<Outcome> {
    Some(Ok(Healthy {
        address: Address::Inet("127.0.0.1:8080".parse().unwrap()),
        status: Some((200, "OK".into())),
        age: None,
    }))
}

/// A supervisor probing `URL`, with `$NOTIFY_SOCKET` set.
fn probing(args: &[&str]) -> Supervisor<Fake> {
    let mut all = vec!["--ready-when", URL];
    all.extend(args);
    let mut s = supervisor(&all);
    s.sys.notify_socket = true;
    s
}

impl Supervisor<Fake> {
    /// The wait until the next probe starts.
    fn next_probe_in(&self) -> Option<Duration> {
        self.deadlines
            .get(Deadline::Probe)
            .map(|at| at.saturating_duration_since(self.sys.clock()))
    }
}

#[test]
fn probes_back_off_from_50ms_to_the_interval() {
    let mut s = probing(&[]);
    s.sys.probe_starts = std::iter::repeat_with(refused).take(8).collect();
    let mut waits = vec![s.next_probe_in().unwrap()];
    for _ in 0..7 {
        s.next_deadline_passes();
        waits.push(s.next_probe_in().unwrap());
    }
    assert_eq!(
        waits,
        [
            ms(50),
            ms(50),
            ms(100),
            ms(200),
            ms(400),
            ms(800),
            ms(1000),
            ms(1000)
        ]
    );
    assert_eq!(s.sys.probes.len(), 7);
    assert!(s.sys.probes.iter().all(|u| u == URL));
    let mut s = probing(&["--ready-interval", "300ms"]);
    s.sys.probe_starts = std::iter::repeat_with(refused).take(5).collect();
    let mut waits = vec![s.next_probe_in().unwrap()];
    for _ in 0..4 {
        s.next_deadline_passes();
        waits.push(s.next_probe_in().unwrap());
    }
    assert_eq!(waits, [ms(50), ms(50), ms(100), ms(200), ms(300)]);
    // An interval below the first wait is the wait from the start.
    let s = probing(&["--ready-interval", "10ms"]);
    assert_eq!(s.next_probe_in(), Some(ms(10)));
}

#[test]
fn the_first_success_sends_ready_once_and_leaves_nothing_pending() {
    let mut s = probing(&[]);
    s.sys.probe_starts = [refused(), refused(), None].into();
    s.sys.probe_steps = [None, healthy()].into();
    s.next_deadline_passes();
    s.next_deadline_passes();
    assert!(s.sys.notified.is_empty());
    // The third attempt waits for its socket, which answers in two steps.
    s.next_deadline_passes();
    assert!(s.sys.probing);
    assert_eq!(
        s.next_probe_in(),
        Some(Duration::from_secs(2)),
        "the probe timeout"
    );
    s.turn();
    s.turn();
    assert_eq!(s.sys.notified.len(), 1, "{:?}", s.sys.notified);
    let ready = &s.sys.notified[0];
    assert!(
        ready.starts_with("READY=1\nSTATUS=ready after ")
            && ready.ends_with(&format!(
                ": {URL}: HTTP status 200 (OK) from 127.0.0.1:8080, at probe 3"
            )),
        "{ready}"
    );
    assert!(s.probing.is_none());
    assert_eq!(s.deadlines.next(), None, "nothing left to wake up for");
    // Idle: the loop waits without a timeout.
    s.sys.waits.clear();
    s.signal(from_outside(Signal::USR1));
    assert_eq!(s.sys.waits, [None]);
    assert_eq!(s.sys.probes.len(), 3);
    // The stop says STOPPING=1, once.
    s.signal(from_outside(Signal::TERM));
    s.signal(from_outside(Signal::TERM));
    s.ended(CHILD, killed(Signal::TERM));
    assert_eq!(s.sys.notified.len(), 2);
    assert_eq!(
        s.sys.notified[1],
        "STOPPING=1\nSTATUS=stopping: SIGTERM from pid 0 (outside this PID namespace)"
    );
}

#[test]
fn a_probe_that_does_not_answer_in_time_is_a_failure() {
    let mut s = probing(&["--probe-timeout", "300ms"]);
    s.sys.probe_starts = [None, healthy()].into();
    s.next_deadline_passes();
    assert!(s.sys.probing);
    assert_eq!(s.next_probe_in(), Some(ms(300)));
    s.next_deadline_passes();
    assert!(!s.sys.probing, "the socket is closed");
    assert_eq!(s.sys.probes_cancelled, 1);
    assert_eq!(s.next_probe_in(), Some(ms(50)));
    assert!(matches!(
        s.probing.as_ref().and_then(|p| p.last()),
        Some(Unhealthy::TimedOut { .. })
    ));
    s.next_deadline_passes();
    assert_eq!(s.sys.notified.len(), 1);
    // The attempt that timed out is counted once, not again when it ends.
    assert!(
        s.sys.notified[0].ends_with(", at probe 2"),
        "{}",
        s.sys.notified[0]
    );
    assert!(s.probing.is_none());
}

#[test]
fn not_ready_by_the_ready_timeout_stops_and_never_exits_0() {
    for (ending, status) in [(exited(0), 1), (killed(Signal::TERM), 143), (exited(3), 3)] {
        let mut s = probing(&["--ready-timeout", "3s", "-e", "0"]);
        s.sys.probe_starts = std::iter::repeat_with(refused).take(100).collect();
        s.passes(Deadline::ReadyTimeout);
        assert_eq!(s.stop_cause(), Some("not_ready"));
        assert_eq!(s.sent_to_child(), [Signal::TERM]);
        assert_eq!(s.deadlines.get(Deadline::Probe), None, "no more probing");
        let grace = s.ledger.grace().unwrap();
        assert_eq!(
            (grace.period, grace.by_default),
            (Duration::from_secs(10), true)
        );
        assert_eq!(
            s.sys.notified,
            [
                "STOPPING=1\nSTATUS=stopping: not ready after 3s (--ready-timeout; the last probe: connection refused by 127.0.0.1:8080)"
            ]
        );
        let Some(crate::log::report::Stop {
            cause: StopCause::NotReady { timeout, last },
            ..
        }) = s.ledger.stop()
        else {
            panic!("{:?}", s.ledger.stop());
        };
        assert_eq!(*timeout, Duration::from_secs(3));
        assert_eq!(
            last.as_deref(),
            Some("connection refused by 127.0.0.1:8080")
        );
        s.ended(CHILD, ending);
        assert_eq!(s.exit_status(), Some(status), "{ending:?}");
    }
}

#[test]
fn the_ready_timeout_is_over_once_ready() {
    let mut s = probing(&["--ready-timeout", "3s"]);
    s.sys.probe_starts = [healthy()].into();
    s.next_deadline_passes();
    assert_eq!(s.deadlines.get(Deadline::ReadyTimeout), None);
    assert_eq!(s.state, State::Running);
}

#[test]
fn a_stop_or_the_childs_end_ends_the_probing() {
    let mut s = probing(&["--ready-timeout", "1m"]);
    s.sys.probe_starts = [None].into();
    s.next_deadline_passes();
    assert!(s.sys.probing);
    s.signal(from_outside(Signal::INT));
    assert!(!s.sys.probing && s.sys.probes_cancelled == 1);
    assert_eq!(s.deadlines.get(Deadline::Probe), None);
    assert_eq!(s.deadlines.get(Deadline::ReadyTimeout), None);
    assert_eq!(
        s.sys.notified,
        ["STOPPING=1\nSTATUS=stopping: SIGINT from pid 0 (outside this PID namespace)"]
    );
    let mut s = probing(&[]);
    s.ended(CHILD, exited(0));
    assert_eq!(
        s.sys.notified,
        ["STOPPING=1\nSTATUS=stopping: the child exited"]
    );
    assert_eq!(s.exit_status(), Some(0));
    assert!(s.sys.probes.is_empty());
}

#[test]
fn without_ready_when_the_service_manager_is_the_childs() {
    let mut s = supervisor(&["--timeout", "5s"]);
    s.sys.notify_socket = true;
    assert_eq!(s.deadlines.get(Deadline::Probe), None);
    s.passes(Deadline::Timeout);
    s.ended(CHILD, killed(Signal::TERM));
    assert!(s.sys.notified.is_empty());
    assert!(s.sys.probes.is_empty());
}

#[test]
fn a_notification_that_fails_is_a_warning_and_changes_nothing_else() {
    use crate::log::capture;
    use crate::log::format::{Format, Timestamp};
    capture::start(Format::Text, 1, Timestamp::from_unix(0, 0));
    let mut s = probing(&[]);
    s.sys.notify_error = Some("Connection refused".into());
    s.sys.probe_starts = [healthy()].into();
    s.next_deadline_passes();
    assert!(s.probing.is_none());
    assert_eq!(
        capture::take(),
        ["vigil: warning: cannot send READY=1 to /run/notify/notify.sock: Connection refused\n"]
    );
}

const LIVE: &str = "tcp://127.0.0.1:8080";

/// A supervisor probing `LIVE` for liveness.
fn living(args: &[&str]) -> Supervisor<Fake> {
    let mut all = vec!["--live-when", LIVE];
    all.extend(args);
    supervisor(&all)
}

#[test]
fn liveness_probes_every_interval_and_nothing_between() {
    let mut s = living(&["--live-interval", "2s", "--live-start", "5s"]);
    assert_eq!(s.next_probe_in(), Some(Duration::from_secs(5)));
    s.sys.probe_starts = std::iter::repeat_with(healthy).take(5).collect();
    for _ in 0..5 {
        s.next_deadline_passes();
        assert_eq!(s.next_probe_in(), Some(Duration::from_secs(2)));
    }
    assert_eq!(s.sys.probes.len(), 5);
    assert!(s.sys.probes.iter().all(|u| u == LIVE));
    assert_eq!(s.state, State::Running);
    // Between two probes the one deadline is the next probe's.
    assert_eq!(s.deadlines.next(), s.deadlines.get(Deadline::Probe));
}

#[test]
fn failures_in_a_row_stop_the_container_with_the_unhealthy_status() {
    let mut s = living(&["--live-failures", "3", "--live-interval", "1s"]);
    // Two failures, a success, then three failures in a row.
    s.sys.probe_starts = [
        refused(),
        refused(),
        healthy(),
        refused(),
        refused(),
        refused(),
    ]
    .into();
    for _ in 0..5 {
        s.next_deadline_passes();
        assert_eq!(s.state, State::Running);
    }
    s.next_deadline_passes();
    assert_eq!(s.stop_cause(), Some("unhealthy"));
    assert_eq!(s.sent_to_child(), [Signal::TERM]);
    assert!(s.probing.is_none(), "no probe once stopping");
    let grace = s.ledger.grace().unwrap();
    assert_eq!(
        (grace.period, grace.by_default),
        (Duration::from_secs(10), true)
    );
    s.ended(CHILD, killed(Signal::TERM));
    assert_eq!(s.exit_status(), Some(69));
}

#[test]
fn liveness_starts_one_interval_after_readiness() {
    let mut s = probing(&["--live-when", LIVE, "--live-interval", "7s"]);
    s.sys.probe_starts = [healthy()].into();
    s.next_deadline_passes();
    assert_eq!(s.sys.notified.len(), 1, "READY=1");
    assert_eq!(s.next_probe_in(), Some(Duration::from_secs(7)));
    assert!(matches!(
        s.probing.as_ref().map(|p| p.purpose),
        Some(crate::probe::Purpose::Live { failures: 3 })
    ));
}

/// Each cause's exit status: the default, and `--exit-code`'s; the
/// child's own exit code stands.
#[test]
fn each_cause_has_its_status() {
    let unhealthy = |args: &[&str], ending| {
        let mut all = vec!["--live-failures", "1"];
        all.extend(args);
        let mut s = living(&all);
        s.sys.probe_starts = [refused()].into();
        s.next_deadline_passes();
        s.ended(CHILD, ending);
        s.exit_status()
    };
    assert_eq!(unhealthy(&[], killed(Signal::TERM)), Some(69));
    assert_eq!(unhealthy(&[], exited(143)), Some(69));
    assert_eq!(unhealthy(&[], exited(0)), Some(69));
    assert_eq!(unhealthy(&[], exited(3)), Some(3), "its own code");
    assert_eq!(
        unhealthy(&["--exit-code", "unhealthy=42"], killed(Signal::TERM)),
        Some(42)
    );
    let stopped = |args: &[&str], ending| {
        let mut s = supervisor(args);
        s.signal(from_outside(Signal::TERM));
        s.ended(CHILD, ending);
        s.exit_status()
    };
    assert_eq!(stopped(&[], killed(Signal::TERM)), Some(143));
    let zero = ["--exit-code", "stopped=0"];
    assert_eq!(stopped(&zero, killed(Signal::TERM)), Some(0));
    assert_eq!(stopped(&zero, exited(143)), Some(0));
    assert_eq!(stopped(&zero, exited(3)), Some(3), "its own code");
    let timeout = |args: &[&str], ending| {
        let mut all = vec!["--timeout", "5s"];
        all.extend(args);
        let mut s = supervisor(&all);
        s.passes(Deadline::Timeout);
        s.ended(CHILD, ending);
        s.exit_status()
    };
    assert_eq!(timeout(&[], exited(3)), Some(124));
    assert_eq!(
        timeout(&["--exit-code", "timeout=9"], killed(Signal::TERM)),
        Some(9)
    );
}
