//! The sockets tests that need a container engine; the rest are in `sockets`.

use crate::common::*;
use crate::sockets::*;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};

#[test]
fn podman_init_path_passes_the_socket_as_catatonit_does() {
    const T: &str = "socket_activation_podman";
    const REQUIRE: &str = "VIGIL_E2E_REQUIRE_PODMAN";
    if let Err(NotReady::Skip(why) | NotReady::Broken(why)) = Engine::Podman.version() {
        return skip_unless(T, Some(REQUIRE), &format!("{why} (Debian's podman)"));
    }
    let Some(image) = TestImage::get(Engine::Podman, T) else {
        return;
    };
    let catatonit = Path::new("/usr/bin/catatonit");
    if !catatonit.exists() {
        return skip_unless(
            T,
            Some(REQUIRE),
            "no /usr/bin/catatonit (Debian's catatonit)",
        );
    }
    let dir = TempDir::new("activate-podman");
    for init in [image.vigil.as_path(), catatonit] {
        let out = podman_activated(init, &image.image, &dir);
        note(
            T,
            format!("{}: {}", init.display(), out.lines().next().unwrap_or("")),
        );
        let facts = facts(&out);
        let get = |k: &str| {
            facts
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
                .unwrap_or("")
        };
        assert_eq!(get("listen_pid"), get("pid"), "{}:\n{out}", init.display());
        assert_ne!(
            get("pid"),
            "1",
            "{}: the init is PID 1\n{out}",
            init.display()
        );
        assert_eq!(get("fds"), "1", "{}:\n{out}", init.display());
        assert_eq!(get("names"), "web", "{}:\n{out}", init.display());
        assert!(out.contains("/run/podman-init\0--\0/bin/sh"), "{out}");
    }
}

/// `systemd-socket-activate -l SOCKET podman run --init --init-path INIT`:
/// podman passes the socket and the variables into the container, where
/// INIT is PID 1 and the command its child. The container's output.
pub(crate) fn podman_activated(init: &Path, image: &str, dir: &TempDir) -> String {
    let socket = dir.join(format!(
        "{}.sock",
        init.file_name().unwrap().to_string_lossy()
    ));
    let ctr = Ctr::new(Engine::Podman, "socket_activation_podman");
    let mut args = vec![
        "-l".to_string(),
        socket.display().to_string(),
        "--fdname=web".to_string(),
        "podman".to_string(),
    ];
    args.extend(ctr.run_args(
        "--rm",
        &[
            "--init",
            "--init-path",
            &init.to_string_lossy(),
            "--entrypoint",
            "/bin/sh",
        ],
        image,
        &["-c", IN_CONTAINER],
    ));
    let mut activator = Command::new("systemd-socket-activate")
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("systemd-socket-activate");
    let guard = ProcGuard::new();
    guard.track(activator.id() as i32);
    let mut client = None;
    wait_until(TIMEOUT, || {
        client = UnixStream::connect(&socket).ok();
        client.is_some()
    });
    assert!(client.is_some(), "nothing listens on {}", socket.display());
    // The socket's inode as the activator (now podman) holds it.
    let mut held = String::new();
    wait_until(TIMEOUT, || {
        held = link(activator.id() as i32, 3);
        !held.is_empty()
    });
    let ended = wait_until(ENGINE_TIMEOUT, || {
        matches!(activator.try_wait(), Ok(Some(_)))
    });
    assert!(ended, "podman run did not end");
    let mut out = String::new();
    std::io::Read::read_to_string(activator.stdout.as_mut().unwrap(), &mut out).unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(activator.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(
        out.contains(&held) && held.starts_with("socket:["),
        "the container's fd 3 is not the socket {held}:\n{out}{err}"
    );
    out
}
