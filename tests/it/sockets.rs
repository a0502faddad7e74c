//! Socket activation through vigil, as through catatonit: when
//! `LISTEN_PID` is vigil's own pid, the child finds its own pid there, the
//! `LISTEN_FDS` descriptors open from 3 on, and `LISTEN_FDNAMES` as it
//! was; the hooks get none of the three. Under systemd-socket-activate
//! (which executes vigil once a connection arrives), and through podman's
//! `--init --init-path` beside its own catatonit.

use crate::common::*;
use serde_json::Value as Json;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// The child: what it finds in its environment and on descriptor 3, and
/// that it accepts a connection there. It answers the first client with
/// one JSON line, then waits for the client to go, so that the test can
/// look at its descriptors meanwhile.
pub(crate) const CHILD: &str = r#"
import json, os, socket, stat
listener = socket.socket(fileno=3)
conn, _ = listener.accept()
facts = {
    "pid": os.getpid(),
    "listen_pid": os.environ.get("LISTEN_PID"),
    "listen_fds": os.environ.get("LISTEN_FDS"),
    "listen_fdnames": os.environ.get("LISTEN_FDNAMES"),
    "fd3_is_socket": stat.S_ISSOCK(os.fstat(3).st_mode),
}
conn.sendall((json.dumps(facts) + "\n").encode())
conn.recv(1)
"#;

/// A hook that writes the socket activation variables it got to `out`.
pub(crate) fn hook(out: &Path) -> String {
    format!(
        "sh -c 'env | grep ^LISTEN_ > {0}.part; mv {0}.part {0}'",
        out.display()
    )
}

/// Connects to `socket`, as soon as it listens, and reads the child's
/// first line; the connection stays open.
pub(crate) fn connect(socket: &Path) -> (UnixStream, Json) {
    let mut stream = None;
    wait_until(TIMEOUT, || {
        stream = UnixStream::connect(socket).ok();
        stream.is_some()
    });
    let stream = stream.unwrap_or_else(|| panic!("nothing listens on {}", socket.display()));
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut line = String::new();
    BufReader::new(&stream).read_line(&mut line).unwrap();
    let facts = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    (stream, facts)
}

/// The socket's inode, as /proc shows a descriptor of it: `socket:[N]`.
pub(crate) fn link(pid: i32, fd: i32) -> String {
    fs::read_link(format!("/proc/{pid}/fd/{fd}"))
        .map(|l| l.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[test]
pub(crate) fn under_systemd_socket_activate_the_child_owns_the_socket() {
    let dir = TempDir::new("activate");
    let socket = dir.join("web.sock");
    let hook_env = dir.join("hook.env");
    let child = dir.join("child.py");
    fs::write(&child, CHILD).unwrap();
    // systemd-socket-activate listens, and executes vigil (same pid) with
    // the socket on descriptor 3 once a connection arrives.
    let run = Vigil::wrapped(&[
        "systemd-socket-activate".to_string(),
        "-l".to_string(),
        socket.display().to_string(),
        "--fdname=web".to_string(),
    ])
    .args(["--post-start", &hook(&hook_env), "--", "python3"])
    .arg(&child)
    .spawn();
    let (mut client, facts) = connect(&socket);
    let vigil = run.outer_pid();
    assert_eq!(
        fs::read_link(format!("/proc/{vigil}/exe")).unwrap(),
        fs::canonicalize(vigil_bin()).unwrap()
    );
    let pid = facts["pid"].as_i64().unwrap() as i32;
    assert_eq!(facts["listen_pid"], pid.to_string(), "{facts}");
    assert_eq!(facts["listen_fds"], "1", "{facts}");
    assert_eq!(facts["listen_fdnames"], "web", "{facts}");
    assert_eq!(facts["fd3_is_socket"], true, "{facts}");
    assert_eq!(stat(pid).map(|s| s.ppid), Some(vigil), "{}", run.describe());
    // The child's descriptor 3 is the very socket vigil was given, and
    // none of vigil's own descriptors is another file on it.
    let socket_link = link(vigil, 3);
    assert!(socket_link.starts_with("socket:["), "{socket_link}");
    assert_eq!(link(pid, 3), socket_link);
    // The hook is no owner of the socket: no LISTEN_* at all.
    assert!(wait_for_file(&hook_env, TIMEOUT), "{}", run.describe());
    assert_eq!(fs::read_to_string(&hook_env).unwrap(), "");
    client.write_all(b"x").unwrap();
    drop(client);
    let out = run.wait(TIMEOUT);
    assert_eq!(out.status, Exit::Code(0), "{out}");
}

/// A descriptor vigil opens for itself lands above the ones it was given:
/// they are open when vigil starts, so the kernel never hands their numbers
/// out again while they are.
#[test]
pub(crate) fn vigils_own_descriptors_stay_above_the_sockets() {
    let dir = TempDir::new("activate");
    let socket = dir.join("two.sock");
    let child = dir.join("child.py");
    fs::write(&child, CHILD).unwrap();
    // Two sockets: systemd-socket-activate's -l twice gives 3 and 4.
    let run = Vigil::wrapped(&[
        "systemd-socket-activate".to_string(),
        "-l".to_string(),
        socket.display().to_string(),
        "-l".to_string(),
        dir.join("second.sock").display().to_string(),
    ])
    .args(["--", "python3"])
    .arg(&child)
    .spawn();
    let (mut client, facts) = connect(&socket);
    assert_eq!(facts["listen_fds"], "2", "{facts}");
    let vigil = run.outer_pid();
    let pid = facts["pid"].as_i64().unwrap() as i32;
    for fd in [3, 4] {
        let given = link(vigil, fd);
        assert!(given.starts_with("socket:["), "fd {fd}: {given}");
        assert_eq!(link(pid, fd), given, "fd {fd}");
    }
    // vigil's signalfd, and the rest of its own, from 5 on.
    let own: Vec<String> = fs::read_dir(format!("/proc/{vigil}/fd"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let signalfd = own
        .iter()
        .find(|fd| link(vigil, fd.parse().unwrap()).contains("signalfd"))
        .expect("vigil's signalfd");
    assert!(signalfd.parse::<i32>().unwrap() >= 5, "{own:?}");
    client.write_all(b"x").unwrap();
    drop(client);
    let out = run.wait(TIMEOUT);
    assert_eq!(out.status, Exit::Code(0), "{out}");
}

#[test]
pub(crate) fn a_listen_pid_of_another_process_passes_unchanged() {
    let dir = TempDir::new("activate");
    let hook_env = dir.join("hook.env");
    let child_env = dir.join("child.env");
    // Not vigil's pid (vigil here is no PID 1): the variables are someone
    // else's, and vigil leaves them alone for the child and the hooks.
    let out = Vigil::plain()
        .env("LISTEN_PID", "1")
        .env("LISTEN_FDS", "1")
        .env("LISTEN_FDNAMES", "web")
        .args(["--post-start", &hook(&hook_env), "--", "sh", "-c"])
        .arg(format!(
            "env | grep ^LISTEN_ | sort > {}; sleep 0.5",
            child_env.display()
        ))
        .run();
    assert_eq!(out.status, Exit::Code(0), "{out}");
    let expected = "LISTEN_FDNAMES=web\nLISTEN_FDS=1\nLISTEN_PID=1\n";
    assert_eq!(fs::read_to_string(&child_env).unwrap(), expected);
    assert!(wait_for_file(&hook_env, TIMEOUT));
    let mut hook: Vec<String> = fs::read_to_string(&hook_env)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    hook.sort();
    assert_eq!(hook.join("\n") + "\n", expected);
}

#[test]
pub(crate) fn without_listen_variables_the_child_gets_none() {
    let dir = TempDir::new("activate");
    let child_env = dir.join("child.env");
    let out = Vigil::plain()
        .env_remove("LISTEN_PID")
        .env_remove("LISTEN_FDS")
        .env_remove("LISTEN_FDNAMES")
        .args(["--", "sh", "-c"])
        .arg(format!("env > {}", child_env.display()))
        .run();
    assert_eq!(out.status, Exit::Code(0), "{out}");
    let env = fs::read_to_string(&child_env).unwrap();
    assert!(!env.contains("LISTEN_"), "{env}");
}

// ---------------------------------------------------------------------------
// podman's --init, beside catatonit
// ---------------------------------------------------------------------------

/// What the container's command finds, in words the test reads.
pub(crate) const IN_CONTAINER: &str = "echo \"pid=$$ listen_pid=$LISTEN_PID fds=$LISTEN_FDS names=$LISTEN_FDNAMES\"; ls -l /proc/$$/fd/3; cat /proc/1/cmdline; echo";

/// The facts `IN_CONTAINER` printed: pid, listen_pid, fds, names.
pub(crate) fn facts(out: &str) -> Vec<(String, String)> {
    let line = out
        .lines()
        .find(|l| l.starts_with("pid="))
        .unwrap_or_else(|| panic!("{out}"));
    line.split(' ')
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
