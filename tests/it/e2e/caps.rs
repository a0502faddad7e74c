//! `--caps` in real containers, Docker and podman: a `FROM scratch` image
//! with vigil and busybox (the shared engine harness, tests/common/engine.rs),
//! started with every capability dropped but the one the server needs and
//! the two `--user` needs, under no-new-privileges, with ports below 1024
//! closed to other users than root again (Docker 20.10 and later open them
//! to everyone in a container's network namespace, so a bind to port 80
//! would prove nothing):
//!
//!     --cap-drop ALL --cap-add NET_BIND_SERVICE --cap-add SETUID
//!     --cap-add SETGID --security-opt no-new-privileges
//!     --sysctl net.ipv4.ip_unprivileged_port_start=1024
//!
//! - `--user 1000 --caps NET_BIND_SERVICE`: the child's permitted,
//!   effective, inheritable and ambient sets are exactly 0x400, and busybox
//!   httpd serves on port 80 as uid 1000. vigil lacks CAP_SETPCAP there, so
//!   the child's bounding set keeps SETUID and SETGID (0x4c0), which
//!   no-new-privileges keeps out of its reach; with SETPCAP added, the
//!   bounding set is 0x400 too. Without KILL, vigil takes uid 1000 itself
//!   once the child has started, so that `stop` still reaches the server.
//! - `--user 1000` alone: the bind fails.
//! - `--caps SYS_ADMIN`: exit 1, one line naming it, and the child never
//!   runs.
//!
//!     cargo test --test caps_engines -- --nocapture
//!
//! What each engine showed is printed as `e2e: TEST: ...` lines. When an
//! engine does not answer the test prints `SKIPPED:` and passes; with
//! `VIGIL_E2E_REQUIRE=1` (Docker) or `VIGIL_E2E_REQUIRE_PODMAN=1` a skip is
//! a failure.

use crate::common::*;
use std::time::Duration;

/// The options of every run: the least privilege above, with vigil as
/// the entrypoint.
fn locked_down() -> Vec<&'static str> {
    [super::LEAST_PRIVILEGE, &["--entrypoint", "/vigil"]].concat()
}

/// The child: its capability lines and uid, then busybox httpd on port 80
/// in the foreground, asked for a page until it answers (`served`) or dies
/// (`bind-failed`, with its error), then stopped.
const SERVE: &str = r#"grep ^Cap /proc/self/status; echo "uid $(id -u)"
echo hello > /tmp/index.html
busybox httpd -f -p 80 -h /tmp 2> /tmp/httpd.err & pid=$!
for i in $(seq 100); do
  if busybox wget -q -O - http://127.0.0.1:80/index.html 2> /dev/null; then echo served; break; fi
  if ! kill -0 $pid 2> /dev/null; then echo "bind-failed: $(cat /tmp/httpd.err)"; break; fi
  sleep 0.1
done
kill $pid 2> /dev/null; wait"#;

/// One line of the child's /proc/self/status, as printed.
fn cap(out: &str, key: &str) -> Option<String> {
    status_text_field(out, key)
}

/// The four sets a process holds (not the bounding set).
const HELD: [&str; 4] = ["CapInh", "CapPrm", "CapEff", "CapAmb"];

fn run(h: &TestImage, test: &'static str, extra: &[&str], vigil: &[&str]) -> (i32, String, String) {
    let opts = [&locked_down()[..], extra].concat();
    let mut cmd = vigil.to_vec();
    cmd.extend(["--", "sh", "-c", SERVE]);
    let (code, out, err, _) = h.run_fg(test, &opts, &cmd);
    (code, out, err)
}

fn scenario(engine: Engine, test: &'static str) {
    let Some(h) = TestImage::get(engine, test) else {
        return;
    };
    let name = engine.name();

    // The named capability, held as uid 1000: httpd serves on port 80.
    let (code, out, err) = run(
        h,
        test,
        &[],
        &["-v", "--user", "1000", "--caps", "NET_BIND_SERVICE"],
    );
    let lines: Vec<String> = ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"]
        .iter()
        .map(|k| format!("{k} {}", cap(&out, k).unwrap_or_default()))
        .collect();
    note(
        test,
        format!(
            "{name} --user 1000 --caps NET_BIND_SERVICE: exit {code}; {}; {}",
            lines.join(", "),
            out.lines().last().unwrap_or_default()
        ),
    );
    assert_eq!(code, 0, "{out}{err}");
    for key in HELD {
        assert_eq!(
            cap(&out, key).as_deref(),
            Some("0000000000000400"),
            "{key}: {out}{err}"
        );
    }
    // No CAP_SETPCAP to cut SETUID and SETGID from the bounding set; no-new-
    // privileges keeps them out of reach.
    assert_eq!(
        cap(&out, "CapBnd").as_deref(),
        Some("00000000000004c0"),
        "{out}{err}"
    );
    assert!(out.contains("uid 1000\n"), "{out}{err}");
    assert!(out.contains("hello\nserved"), "{out}{err}");
    // vigil itself lacks CAP_KILL here: it takes the child's uid, so that
    // it can still signal it, and says so at -v; nothing is left unsignalled.
    assert!(
        err.contains("vigil lacks CAP_KILL: it takes the child's uid 1000 too"),
        "{err}"
    );
    assert!(!err.contains("cannot signal"), "{err}");

    // With CAP_SETPCAP the bounding set is cut to the one capability too.
    let (code, out, err) = run(
        h,
        test,
        &["--cap-add", "SETPCAP"],
        &["--user", "1000", "--caps", "cap_net_bind_service"],
    );
    note(
        test,
        format!(
            "{name} with SETPCAP added: exit {code}; CapBnd {}, CapAmb {}",
            cap(&out, "CapBnd").unwrap_or_default(),
            cap(&out, "CapAmb").unwrap_or_default()
        ),
    );
    assert_eq!(code, 0, "{out}{err}");
    for key in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        assert_eq!(
            cap(&out, key).as_deref(),
            Some("0000000000000400"),
            "{key}: {out}{err}"
        );
    }
    assert!(out.contains("served"), "{out}{err}");

    // Without --caps, uid 1000 holds nothing, and the bind fails.
    let (code, out, err) = run(h, test, &[], &["--user", "1000"]);
    note(
        test,
        format!(
            "{name} --user 1000 alone: exit {code}; CapEff {}; {}",
            cap(&out, "CapEff").unwrap_or_default(),
            out.lines().last().unwrap_or_default()
        ),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        cap(&out, "CapEff").as_deref(),
        Some("0000000000000000"),
        "{out}"
    );
    assert!(
        out.contains("bind-failed") && out.contains("Permission denied"),
        "{out}{err}"
    );

    // The trap the sysctl avoids: where the engine leaves ports below 1024
    // open to every user (Docker 20.10 and later set the start to 0), uid
    // 1000 binds port 80 without any capability, and the bind proves
    // nothing.
    let opts: Vec<&str> = locked_down()
        .into_iter()
        .filter(|o| *o != "--sysctl" && !o.starts_with("net.ipv4"))
        .collect();
    let script = format!("cat /proc/sys/net/ipv4/ip_unprivileged_port_start; {SERVE}");
    let (code, out, err, _) = h.run_fg(test, &opts, &["--user", "1000", "--", "sh", "-c", &script]);
    let start: u32 = out
        .lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(1024);
    note(
        test,
        format!(
            "{name} without the sysctl: ip_unprivileged_port_start={start}; --user 1000 alone: {}",
            out.lines().last().unwrap_or_default()
        ),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.contains("served"), start <= 80, "{out}{err}");

    // A capability the container was not granted: one line, exit 1, the
    // child never runs.
    let (code, out, err) = run(h, test, &[], &["--user", "1000", "--caps", "SYS_ADMIN"]);
    note(
        test,
        format!("{name} --caps SYS_ADMIN: exit {code}: {}", err.trim()),
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(!out.contains("Cap"), "the child ran: {out}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with(
            "vigil: error: cannot give the child CAP_SYS_ADMIN: vigil does not hold it"
        ) && lines[0].contains("--cap-add SYS_ADMIN"),
        "{err}"
    );
}

/// With KILL and SETPCAP added too (the recipe's full set), vigil as PID 1
/// forwards `stop`'s SIGTERM to the server, which runs as uid 1000 with
/// its capability, and reports.
fn stop_reaches_the_server(engine: Engine, test: &'static str) {
    let Some(h) = TestImage::get(engine, test) else {
        return;
    };
    let opts = [
        &locked_down()[..],
        &["--cap-add", "KILL", "--cap-add", "SETPCAP"],
    ]
    .concat();
    let ctr = h.start(
        test,
        &opts,
        &[
            "--user",
            "1000",
            "--caps",
            "NET_BIND_SERVICE",
            "--",
            "sh",
            "-c",
            "echo hello > /tmp/index.html; echo serving; exec busybox httpd -f -p 80 -h /tmp",
        ],
    );
    ctr.wait_log("serving", Duration::from_secs(30));
    let got = wait_until(Duration::from_secs(30), || {
        ctr.fetch("http://127.0.0.1:80/index.html").status.success()
    });
    assert!(got, "httpd never answered: {}", ctr.logs());
    let took = ctr.stop_within(10);
    let code = ctr.exit_code();
    let logs = ctr.logs();
    note(
        test,
        format!("{} stop: exit {code} after {}", engine.name(), secs(took)),
    );
    assert_eq!(code, 143, "{logs}");
    assert!(
        took < Duration::from_secs(5),
        "stop took {}: {logs}",
        secs(took)
    );
    assert!(
        must_report(test, &logs).contains("exit status 143"),
        "{logs}"
    );
    assert!(!logs.contains("lacks CAP_KILL"), "{logs}");
}

/// podman, or why not (a skip, or a failure with VIGIL_E2E_REQUIRE_PODMAN).
pub(crate) fn podman_answers(test: &str) -> bool {
    match Engine::Podman.version() {
        Ok(_) => true,
        Err(NotReady::Skip(why) | NotReady::Broken(why)) => {
            skip_unless(
                test,
                Some("VIGIL_E2E_REQUIRE_PODMAN"),
                &format!("{why} (Debian's podman)"),
            );
            false
        }
    }
}

#[test]
fn docker_caps_net_bind_service_as_uid_1000() {
    scenario(Engine::Docker, "docker_caps");
}

#[test]
fn docker_stop_reaches_a_narrowed_server() {
    stop_reaches_the_server(Engine::Docker, "docker_caps_stop");
}

#[test]
fn podman_caps_net_bind_service_as_uid_1000() {
    const T: &str = "podman_caps";
    if podman_answers(T) {
        scenario(Engine::Podman, T);
    }
}

#[test]
fn podman_stop_reaches_a_narrowed_server() {
    const T: &str = "podman_caps_stop";
    if podman_answers(T) {
        stop_reaches_the_server(Engine::Podman, T);
    }
}
