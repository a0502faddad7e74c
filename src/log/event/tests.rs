//! The table against docs/logging-schema.json: the same events, and every
//! event's record, from a sample of each variant, holding exactly the
//! fields the schema lists for it.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use super::*;
use crate::log::check::Schema;
use crate::log::facts::Command;
use crate::log::facts::hook;
use crate::log::facts::stop::{EndCause, ExitCodes, Grace, NotSent, StopCause};
use crate::log::facts::{Cancel, Outcome, Sender};
use crate::log::format::{Encoder, Format, LINE_MAX, Record, Timestamp};
use crate::log::report::{Clocks, Ledger};
use crate::probe::{Address, Healthy, Unhealthy, Waited};
use crate::spawn::{SpawnError, SwitchFailed};

fn procs() -> Vec<Proc> {
    vec![
        Proc {
            pid: Pid::from_raw(7),
            name: "sleep 1000".into(),
        },
        Proc {
            pid: Pid::from_raw(9),
            name: "sh".into(),
        },
    ]
}

/// A ledger that makes an exit report with every part it can have.
fn full_ledger(now: Instant) -> Ledger {
    let mut l = Ledger::default();
    let sender = Named {
        sender: Sender::Process {
            pid: Pid::from_raw(42),
            uid: 0,
        },
        name: Some("kill".into()),
    };
    let outside = Named::bare(Sender::Process {
        pid: Pid::from_raw(0),
        uid: 0,
    });
    let killed = procs();
    let hook = hook::Record {
        kind: HookKind::PreStop,
        outcome: Outcome::Cancelled(Cancel::GraceDeadline),
        took: Duration::from_millis(1500),
    };
    let events = [
        Event::Started {
            command: &Command::new(vec!["sleep".into(), "1000".into()]),
            pid: Pid::from_raw(2),
            limit: None,
            oom_group: false,
            terminal: false,
            at: Timestamp::from_unix(0, 0),
        },
        Event::Stopping {
            cause: &StopCause::Signal {
                signal: Signal::TERM,
                sender,
            },
            signal: Signal::TERM,
            grace: Some(Grace {
                period: Duration::from_secs(10),
                by_default: false,
            }),
            at: now,
        },
        Event::SignalForwarded {
            signal: Signal::INT,
            sent: Signal::INT,
            target: Target::Process(Pid::from_raw(2)),
            sender: &outside,
            later_stop: Some(now),
        },
        Event::GraceDeadline {
            grace_period: Duration::from_secs(10),
            killed: &killed,
            listed: true,
            at: now,
        },
        Event::StopSignalNotSent {
            signal: Signal::TERM,
            why: NotSent::PreStopHook,
        },
        Event::HookEnded {
            record: &hook,
            then: AfterHook::Nothing,
        },
        Event::ChildEnded {
            pid: Pid::from_raw(2),
            ending: Ending::Killed {
                signal: Signal::KILL,
                core_dumped: false,
            },
            at: now,
        },
        Event::Draining {
            terminated: &killed,
        },
        Event::DrainKilled {
            why: DrainKill::Timeout(Duration::from_secs(2)),
            killed: &killed,
            listed: true,
        },
    ];
    for event in &events {
        l.observe(event);
    }
    l.observe(&Event::OomKilled {
        pid: Pid::from_raw(31),
        child: false,
        at: Timestamp::from_unix(1_796_148_379, 0),
    });
    for _ in 0..3 {
        l.observe(&Event::Reaped {
            pid: Pid::from_raw(9),
            ending: Ending::Exited(0),
            warn: false,
        });
    }
    l
}

/// The record `event` makes, as JSON.
fn record(event: &Event<'_>) -> Json {
    let time = Timestamp::from_unix(1_796_148_380, 123);
    let record = Record::stamped(event.level(), event.name(), event.to_string(), time, event);
    let mut line = Vec::new();
    let json = Encoder {
        format: Format::Json,
        vigil_pid: None,
    };
    json.line(&record, LINE_MAX, &mut line);
    serde_json::from_slice(&line).expect("a record is JSON")
}

/// Every key of a record's object, nested ones as `a.b` (list items
/// under `a[]`).
fn keys(value: &Json, prefix: &str, into: &mut BTreeSet<String>) {
    match value {
        Json::Object(map) => {
            for (key, value) in map {
                let path = format!("{prefix}{key}");
                into.insert(path.clone());
                keys(value, &format!("{path}."), into);
            }
        }
        Json::Array(items) => {
            for item in items {
                keys(item, &format!("{}[].", prefix.trim_end_matches('.')), into);
            }
        }
        _ => {}
    }
}

#[test]
fn the_table_lists_the_schemas_events() {
    let schema = Schema::load();
    let table: BTreeSet<&str> = Event::NAMES.iter().copied().collect();
    let documented: BTreeSet<String> = schema.events().into_iter().collect();
    let documented: BTreeSet<&str> = documented.iter().map(String::as_str).collect();
    assert_eq!(table, documented, "the table and the schema differ");
    assert_eq!(table.len(), Event::NAMES.len(), "a name twice in the table");
}

/// One sample of each event, its fields at their fullest, checked against
/// the schema: every record it makes passes, and together they write
/// every field the schema lists for the event.
#[test]
fn every_event_writes_what_the_schema_says() {
    let schema = Schema::load();
    let now = Instant::now();
    let clocks = Clocks {
        wall: Timestamp::from_unix(1_796_148_380, 123),
        now,
    };
    let ledger = full_ledger(now);
    let mut codes = ExitCodes::default();
    codes.add((EndCause::Grace, 137));
    let exit = ledger.exit(&codes, &[], 1).expect("the child ended");
    let command = Command::new(vec!["app".into()]);
    let mut started = Ledger::default();
    started.observe(&Event::Started {
        command: &command,
        pid: Pid::from_raw(7),
        limit: Some(1 << 30),
        oom_group: true,
        terminal: false,
        at: clocks.wall,
    });
    started.observe(&Event::MemoryEventsSeen {
        events: MemoryEvents {
            max: 1,
            oom: 1,
            oom_kill: 1,
            oom_group_kill: 0,
        },
        at: clocks.wall,
    });
    let provisional = started.provisional().expect("the child started");
    let setid = crate::user::SetIdError::Setuid {
        real: 1000,
        effective: 0,
    };
    let exec = SpawnError {
        program: "app".into(),
        error: io::Error::from_raw_os_error(libc::ENOEXEC),
        shell_error: Some(io::Error::from_raw_os_error(libc::ENOENT)),
        switch_failed: None,
    };
    let fork = SpawnError {
        program: "app".into(),
        error: io::Error::from_raw_os_error(libc::EAGAIN),
        shell_error: None,
        switch_failed: None,
    };
    let spec = crate::user::parse_spec("0:0".as_ref()).expect("a spec");
    let switch = crate::user::prepare(&spec, false).expect("root may be root");
    let switch_failure = switch
        .failure(crate::sys::exec::Step::Uid, nix::errno::Errno::EPERM)
        .expect("a switch failure");
    let switched = SpawnError {
        program: "app".into(),
        error: io::Error::from_raw_os_error(libc::EPERM),
        shell_error: None,
        switch_failed: Some(SwitchFailed::User(switch_failure)),
    };
    let caps = crate::caps::parse("net_raw,chown").expect("a list");
    let narrowing = crate::caps::Narrowing::sample(caps, 1 << 6 | 1 << 7);
    let caps_failure = |step, errno, cap, which| SpawnError {
        program: "app".into(),
        error: io::Error::from_raw_os_error(libc::EPERM),
        shell_error: None,
        switch_failed: Some(SwitchFailed::Caps(
            narrowing
                .failure(crate::sys::exec::Failed {
                    step,
                    errno,
                    detail: crate::sys::caps::detail(cap, which),
                })
                .expect("a caps failure"),
        )),
    };
    // PR_CAPBSET_DROP of CAP_SETUID failed; CAP_CHOWN not in the ambient
    // set after it was raised.
    use crate::sys::exec::Step;
    let capbset = caps_failure(Step::Bounding, nix::errno::Errno::EPERM, Some(7), None);
    let verify = caps_failure(
        Step::CapsCheck,
        nix::errno::Errno::UnknownErrno,
        Some(0),
        Some(crate::sys::caps::Which::Ambient),
    );
    let not_held = crate::caps::Refused {
        caps,
        why: crate::caps::CapsError::NotHeld {
            caps: crate::caps::parse("net_raw").expect("a name"),
            not_in_bounding: crate::caps::parse("net_raw").expect("a name"),
            uid: 0,
        },
    };
    let unreadable = crate::caps::Refused {
        caps,
        why: crate::caps::CapsError::Unreadable(nix::errno::Errno::EPERM),
    };
    let lookup = crate::user::UserError::NotPrivileged {
        spec: "app".into(),
        wanted: crate::user::Ids {
            uid: 1000,
            gid: 1000,
        },
        current: crate::user::Ids { uid: 1, gid: 1 },
    };
    let unknown = crate::user::UserError::Lookup {
        spec: "app".into(),
        error: r#"there is no user "app" in /etc/passwd"#.into(),
    };
    let argv: Vec<OsString> = vec!["app".into(), "--port".into(), "80".into()];
    let named = Named {
        sender: Sender::Process {
            pid: Pid::from_raw(42),
            uid: 0,
        },
        name: Some("kill".into()),
    };
    let hook_record = hook::Record {
        kind: HookKind::PreStop,
        outcome: Outcome::Ended(Ending::Exited(3)),
        took: Duration::from_millis(20),
    };
    let could_not = hook::Record {
        kind: HookKind::PostStart,
        outcome: Outcome::CouldNotRun("cannot run \"x\": No such file or directory".into()),
        took: Duration::ZERO,
    };
    let running = vec![Running {
        pid: Pid::from_raw(7),
        name: "bash run.sh".into(),
        state: 'S',
    }];
    let shell = Shell {
        pid: Pid::from_raw(7),
        name: "bash run.sh".into(),
        jobs: running.clone(),
    };
    let left = procs();
    let path = Path::new("/dev/termination-log");
    let address = || Address::Inet("127.0.0.1:8080".parse().expect("an address"));
    let healthy = Healthy {
        address: address(),
        status: Some((200, "OK".into())),
        age: None,
    };
    let status = Unhealthy::Status {
        code: 503,
        reason: "Service Unavailable".into(),
    };
    let failed = Unhealthy::Connect {
        address: address(),
        error: nix::errno::Errno::ENOENT,
    };
    let unresolved = Unhealthy::Unresolved { name: "db".into() };
    let no_file = Unhealthy::NoFile {
        path: "/run/ready".into(),
        error: nix::errno::Errno::ENOENT,
    };
    let stale = Unhealthy::Stale {
        path: "/run/heartbeat".into(),
        age: Duration::from_secs(45),
        max_age: Duration::from_secs(30),
    };
    let fresh = Healthy {
        address: Address::File("/run/heartbeat".into()),
        status: None,
        age: Some(Duration::from_millis(1500)),
    };
    let too_long = Unhealthy::TooLong {
        address: address(),
        bytes: 2048,
    };
    let timed_out = Unhealthy::TimedOut {
        after: Duration::from_secs(2),
        waited: Waited::Answer(address()),
    };
    let url = "http://127.0.0.1:8080/healthz";
    let install_failed = crate::install::Failure {
        dir: Path::new("/opt/vigil"),
        failed: crate::install::Failed {
            step: "writing",
            path: Some("/opt/vigil/.vigil.install-1-0".into()),
            error: std::io::Error::from_raw_os_error(libc::ENOSPC),
        },
    };
    let install_failed_here = crate::install::Failure {
        dir: Path::new("/opt/vigil"),
        failed: crate::install::Failed {
            step: "creating a file there",
            path: None,
            error: std::io::Error::from_raw_os_error(libc::EROFS),
        },
    };
    let samples = [
        Event::Exit {
            report: &exit.at(clocks),
            level: Level::Warning,
        },
        Event::UsageError {
            message: "'10x' is not a duration",
            status: 2,
        },
        Event::StartFailed {
            what: "block signals",
            error: "Invalid argument",
            status: 1,
        },
        Event::SetidRefused {
            refusal: &setid,
            status: 1,
        },
        Event::ExecFailed {
            failure: &exec,
            status: 126,
        },
        Event::ForkFailed {
            failure: &fork,
            status: 1,
        },
        Event::UserSwitchFailed {
            failure: &switched,
            status: 1,
        },
        Event::CapsSwitchFailed {
            failure: &capbset,
            status: 1,
        },
        Event::CapsSwitchFailed {
            failure: &verify,
            status: 1,
        },
        Event::CapsFailed {
            error: &not_held,
            status: 1,
        },
        Event::CapsFailed {
            error: &unreadable,
            status: 1,
        },
        Event::ExecUnconfirmed {
            program: "app".as_ref(),
            pid: Pid::from_raw(7),
            error: "Interrupted system call",
        },
        Event::UserFailed {
            error: &lookup,
            status: 1,
        },
        Event::UserFailed {
            error: &unknown,
            status: 1,
        },
        Event::TerminationLogFailed {
            path,
            error: "Read-only file system",
            unread: false,
        },
        Event::TerminationLogSkipped { path },
        Event::Provisional {
            message: &provisional,
        },
        Event::UnknownVariable {
            variable: "VIGIL_TIMOUT",
            meant: Some("VIGIL_TIMEOUT"),
        },
        Event::SubreaperFailed {
            error: "Invalid argument",
        },
        Event::ParentDeathSignalFailed {
            signal: Signal::TERM,
            error: "Invalid argument",
        },
        Event::HookUnrunnable {
            hook: HookKind::PreStop,
            program: "curl".as_ref(),
            error: "not found in PATH",
        },
        Event::CannotSignalUser {
            uid: 1000,
            error: "Operation not permitted",
        },
        Event::FollowingUser { uid: 1000 },
        Event::PostStartTimeoutUnused {},
        Event::RunningAs { user: &switch },
        Event::Capabilities { caps: &narrowing },
        Event::Started {
            command: &Command::new(argv.clone()),
            pid: Pid::from_raw(7),
            limit: Some(1 << 30),
            oom_group: true,
            terminal: false,
            at: clocks.wall,
        },
        Event::OomGroup {
            memory_limit: Some(1 << 30),
        },
        Event::OomCounter {
            path: Path::new("/sys/fs/cgroup/memory.events"),
            oom_kills: 0,
        },
        Event::HookStarted {
            hook: HookKind::PostStart,
            pid: Pid::from_raw(8),
        },
        Event::HookEnded {
            record: &hook_record,
            then: AfterHook::GoOnWithStop,
        },
        Event::HookEnded {
            record: &could_not,
            then: AfterHook::Stop(Signal::QUIT),
        },
        Event::PostStartTimedOut {
            pid: Pid::from_raw(8),
            timeout: Duration::from_secs(3),
        },
        Event::PreStopTimedOut {
            pid: Pid::from_raw(9),
            timeout: Duration::from_secs(5),
        },
        Event::SignalReceived {
            signal: Signal::TERM,
            sender: &named,
        },
        Event::SignalForwarded {
            signal: Signal::TERM,
            sent: Signal::QUIT,
            target: Target::Group(Pid::from_raw(7)),
            sender: &named,
            later_stop: None,
        },
        Event::SignalDropped {
            signal: Signal::USR1,
        },
        Event::SignalNotForwarded {
            signal: Signal::HUP,
        },
        Event::StopSignalIgnored {
            signal: Signal::INT,
        },
        Event::SendFailed {
            signal: Signal::TERM,
            target: Target::Process(Pid::from_raw(7)),
            error: "Operation not permitted",
        },
        Event::Stopping {
            cause: &StopCause::Signal {
                signal: Signal::TERM,
                sender: named.clone(),
            },
            signal: Signal::TERM,
            grace: Some(Grace {
                period: Duration::from_secs(10),
                by_default: false,
            }),
            at: now,
        },
        Event::StopSignalNotSent {
            signal: Signal::TERM,
            why: NotSent::Rewritten,
        },
        Event::TimeoutPassed {
            timeout: Duration::from_secs(60),
            signal: Signal::TERM,
        },
        Event::Fault {
            error: "cannot read signals: Bad file descriptor",
        },
        Event::PreStopSleep {
            sleep: Duration::from_secs(2),
            signal: Signal::TERM,
        },
        Event::StillRunning {
            signal: Signal::TERM,
            after: Duration::from_secs(5),
            child: Pid::from_raw(7),
            running: &running,
            pre_stop_hook: Some(Pid::from_raw(9)),
            waits_for_hook: true,
            shell: Some(&shell),
        },
        Event::WaitpidFailed {
            error: "Invalid argument",
        },
        Event::Reaped {
            pid: Pid::from_raw(55),
            ending: Ending::Exited(0),
            warn: true,
        },
        Event::ChildEnded {
            pid: Pid::from_raw(7),
            ending: Ending::Killed {
                signal: Signal(libc::SIGSEGV),
                core_dumped: true,
            },
            at: now,
        },
        Event::ChildStopped {
            pid: Pid::from_raw(7),
            signal: Signal::TSTP,
            action: StopAction::Continue,
        },
        Event::Draining { terminated: &left },
        Event::ProcUnlisted {},
        Event::CannotReachAll {},
        Event::GraceDeadline {
            grace_period: Duration::from_secs(10),
            killed: &left,
            listed: true,
            at: now,
        },
        Event::DrainKilled {
            why: DrainKill::Timeout(Duration::from_secs(2)),
            killed: &left,
            listed: true,
        },
        Event::DrainKilled {
            why: DrainKill::StopSignal(Signal::TERM),
            killed: &left,
            listed: false,
        },
        Event::SurvivedSigkill {
            left: &left,
            after: Duration::from_secs(5),
        },
        Event::MemoryEventsSeen {
            events: MemoryEvents {
                max: 2,
                oom: 1,
                oom_kill: 1,
                oom_group_kill: 0,
            },
            at: clocks.wall,
        },
        Event::OomKilled {
            pid: Pid::from_raw(7),
            child: true,
            at: clocks.wall,
        },
        Event::ProbeHealthy {
            url,
            healthy: &healthy,
            took: Duration::from_millis(3),
        },
        Event::ProbeUnhealthy { url, why: &status },
        Event::ProbeUnhealthy { url, why: &failed },
        Event::ProbeUnhealthy {
            url,
            why: &unresolved,
        },
        Event::ProbeUnhealthy {
            url,
            why: &timed_out,
        },
        Event::ProbeUnhealthy {
            url,
            why: &too_long,
        },
        Event::ProbeUnhealthy { url, why: &no_file },
        Event::ProbeUnhealthy { url, why: &stale },
        Event::NotReady {
            url,
            why: &stale,
            next: Duration::from_millis(100),
        },
        Event::LiveProbeFailed {
            url,
            why: &stale,
            failed: 1,
            failures: 3,
            next: Duration::from_secs(10),
        },
        Event::ReadyTimeoutPassed {
            timeout: Duration::from_secs(30),
            url,
            probes: 33,
            last: Some(&stale),
            signal: Signal::TERM,
        },
        Event::ProbeHealthy {
            url,
            healthy: &fresh,
            took: Duration::from_millis(1),
        },
        Event::Ready {
            url,
            after: Duration::from_millis(3204),
            healthy: &fresh,
            probes: 7,
            notified: None,
        },
        Event::Unhealthy {
            url,
            failed: &[&stale, &no_file],
            signal: Signal::TERM,
        },
        Event::NotReady {
            url,
            why: &status,
            next: Duration::from_millis(100),
        },
        Event::NotReady {
            url,
            why: &failed,
            next: Duration::from_millis(100),
        },
        Event::NotReady {
            url,
            why: &unresolved,
            next: Duration::from_millis(100),
        },
        Event::NotReady {
            url,
            why: &timed_out,
            next: Duration::from_millis(100),
        },
        Event::Ready {
            url,
            after: Duration::from_millis(3204),
            healthy: &healthy,
            probes: 7,
            notified: Some("/run/notify/notify.sock"),
        },
        Event::LiveProbeFailed {
            url,
            why: &timed_out,
            failed: 1,
            failures: 3,
            next: Duration::from_secs(10),
        },
        Event::LiveProbeFailed {
            url,
            why: &status,
            failed: 2,
            failures: 3,
            next: Duration::from_secs(10),
        },
        Event::LiveProbeFailed {
            url,
            why: &failed,
            failed: 1,
            failures: 3,
            next: Duration::from_secs(10),
        },
        Event::LiveProbeFailed {
            url,
            why: &unresolved,
            failed: 1,
            failures: 3,
            next: Duration::from_secs(10),
        },
        Event::Unhealthy {
            url,
            failed: &[&timed_out, &status, &failed, &unresolved],
            signal: Signal::TERM,
        },
        Event::ReadyTimeoutPassed {
            timeout: Duration::from_secs(30),
            url,
            probes: 33,
            last: Some(&status),
            signal: Signal::TERM,
        },
        Event::ReadyTimeoutPassed {
            timeout: Duration::from_secs(30),
            url,
            probes: 33,
            last: Some(&failed),
            signal: Signal::TERM,
        },
        Event::ReadyTimeoutPassed {
            timeout: Duration::from_secs(30),
            url,
            probes: 33,
            last: Some(&unresolved),
            signal: Signal::TERM,
        },
        Event::ReadyTimeoutPassed {
            timeout: Duration::from_secs(30),
            url,
            probes: 33,
            last: Some(&timed_out),
            signal: Signal::TERM,
        },
        Event::NotifyFailed {
            socket: "/run/notify/notify.sock",
            message: "READY=1",
            error: "Connection refused",
        },
        Event::NotifySocketUnusable {
            error: "NOTIFY_SOCKET 'vsock:2:9' is not a Unix socket path (absolute, or @NAME)",
        },
        Event::ReadyTimeoutUnused {},
        Event::Installed {
            path: Path::new("/opt/vigil/vigil"),
            bytes: 812_344,
            sha256: "283f41967889fb86b10503393a9d1360bfbb33c65a8269c57f4a11ef025c9e00",
            source: Path::new("/proc/self/exe"),
        },
        Event::InstallFailed {
            failure: &install_failed,
            status: 1,
        },
        Event::InstallFailed {
            failure: &install_failed_here,
            status: 1,
        },
        Event::Pausing {
            stop_signals: &[Signal::TERM, Signal::INT, Signal::QUIT],
        },
        Event::PauseEnded {
            signal: Signal::TERM,
            sender: &named,
            orphans_reaped: 3,
            status: 0,
        },
    ];
    let mut written: BTreeSet<(String, String)> = BTreeSet::new();
    for event in &samples {
        let record = record(event);
        schema
            .check_json(&record)
            .unwrap_or_else(|e| panic!("{}: {e}\n{record}", event.name()));
        let mut fields = BTreeSet::new();
        keys(&record, "", &mut fields);
        for field in fields {
            written.insert((event.name().to_string(), field));
        }
    }
    for name in Event::NAMES {
        for (field, _, _) in schema.fields_of("events", name) {
            assert!(
                written.contains(&(name.to_string(), field.clone())),
                "no sample of {name} writes {field}, which the schema lists"
            );
        }
    }
}

/// Each line is what it was before the table: the words of a few events,
/// those whose text the table builds from several facts.
#[test]
fn the_words_of_composed_events() {
    let named = Named {
        sender: Sender::Process {
            pid: Pid::from_raw(42),
            uid: 0,
        },
        name: None,
    };
    let chld = Named::bare(Sender::Process {
        pid: Pid::from_raw(42),
        uid: 0,
    });
    let left = procs();
    let cases: [(Event<'_>, &str); 8] = [
        (
            Event::SignalReceived {
                signal: Signal::TERM,
                sender: &named,
            },
            "received SIGTERM from pid 42 (name unknown, uid 0)",
        ),
        (
            Event::SignalReceived {
                signal: Signal::CHLD,
                sender: &chld,
            },
            "received SIGCHLD from pid 42 (uid 0)",
        ),
        (
            Event::SignalForwarded {
                signal: Signal::TERM,
                sent: Signal::TERM,
                target: Target::Process(Pid::from_raw(7)),
                sender: &named,
                later_stop: None,
            },
            "forwarding SIGTERM to pid 7",
        ),
        (
            Event::SignalForwarded {
                signal: Signal::TERM,
                sent: Signal::QUIT,
                target: Target::Group(Pid::from_raw(7)),
                sender: &named,
                later_stop: None,
            },
            "forwarding SIGTERM as SIGQUIT to process group 7",
        ),
        (
            Event::Stopping {
                cause: &StopCause::PostStartFailed,
                signal: Signal::TERM,
                grace: None,
                at: Instant::now(),
            },
            "stopping",
        ),
        (
            Event::UnknownVariable {
                variable: "VIGIL_ZZZ",
                meant: None,
            },
            "VIGIL_ZZZ is not a vigil variable and is ignored (vigil --help lists them)",
        ),
        (
            Event::GraceDeadline {
                grace_period: Duration::from_secs(10),
                killed: &[],
                listed: true,
                at: Instant::now(),
            },
            "grace period (10s) over: SIGKILL to everything left",
        ),
        (
            Event::SurvivedSigkill {
                left: &left[..1],
                after: Duration::from_secs(5),
            },
            "7 (sleep 1000) still running 5s after SIGKILL: exiting without waiting for it",
        ),
    ];
    for (event, words) in cases {
        assert_eq!(event.to_string(), words);
    }
}
