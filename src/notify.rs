//! The service manager's notification socket (`$NOTIFY_SOCKET`, the
//! sd_notify protocol that systemd, podman's `--sdnotify=container` and
//! Quadlet's `Notify=true` read): a datagram of `KEY=VALUE` lines to a
//! Unix socket. vigil speaks it for the child only with `--ready-when`:
//! `READY=1` once the probe first succeeds, `STOPPING=1` when the
//! container begins to stop.

use std::ffi::OsString;
use std::io;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};

/// The variable that names the socket.
pub const VARIABLE: &str = "NOTIFY_SOCKET";

/// Where notifications go.
#[derive(Debug)]
pub struct Notifier {
    /// As the variable says it: a path, or `@NAME` for an abstract socket.
    pub socket: String,
    address: SocketAddr,
}

impl Notifier {
    /// The socket `$NOTIFY_SOCKET` names: `None` when it is unset or empty,
    /// an error naming it when it is no Unix socket vigil can send to (a
    /// `vsock:` address, a relative path).
    pub fn from_env(value: Option<OsString>) -> Result<Option<Notifier>, String> {
        let Some(value) = value.filter(|v| !v.is_empty()) else {
            return Ok(None);
        };
        let text = value.to_string_lossy().into_owned();
        let address = match text.strip_prefix('@') {
            Some(name) => SocketAddr::from_abstract_name(name.as_bytes()),
            None if text.starts_with('/') => SocketAddr::from_pathname(&text),
            None => {
                return Err(format!(
                    "{VARIABLE} '{text}' is not a Unix socket path (absolute, or @NAME)"
                ));
            }
        };
        let address = address.map_err(|e| {
            format!("{VARIABLE} '{text}' is not a Unix socket vigil can send to: {e}")
        })?;
        Ok(Some(Notifier {
            socket: text,
            address,
        }))
    }

    /// Sends one notification, without waiting: a service manager whose
    /// queue is full does not hold up PID 1.
    pub fn send(&self, message: &str) -> io::Result<()> {
        let socket = UnixDatagram::unbound()?;
        socket.set_nonblocking(true)?;
        loop {
            match socket.send_to_addr(message.as_bytes(), &self.address) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                done => return done.map(drop),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_names_a_path_or_an_abstract_socket() {
        assert!(Notifier::from_env(None).unwrap().is_none());
        assert!(Notifier::from_env(Some("".into())).unwrap().is_none());
        let n = Notifier::from_env(Some("/run/notify.sock".into()))
            .unwrap()
            .unwrap();
        assert_eq!(n.socket, "/run/notify.sock");
        let n = Notifier::from_env(Some("@/org/x".into())).unwrap().unwrap();
        assert_eq!(n.socket, "@/org/x");
        for bad in ["vsock:2:1234", "run/notify.sock"] {
            let e = Notifier::from_env(Some(bad.into())).unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
        let long = format!("/{}", "x".repeat(200));
        assert!(Notifier::from_env(Some(long.into())).is_err());
    }

    #[test]
    fn a_notification_is_one_datagram() {
        let dir = std::env::temp_dir().join(format!("vigil-notify-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("notify.sock");
        let _ = std::fs::remove_file(&path);
        let listener = UnixDatagram::bind(&path).unwrap();
        let n = Notifier::from_env(Some(path.clone().into()))
            .unwrap()
            .unwrap();
        n.send("READY=1\nSTATUS=ready").unwrap();
        let mut buf = [0u8; 64];
        let got = listener.recv(&mut buf).unwrap();
        assert_eq!(&buf[..got], b"READY=1\nSTATUS=ready");
        drop(listener);
        std::fs::remove_dir_all(&dir).unwrap();
        // Nobody listens any more: an error, not a hang.
        assert!(n.send("STOPPING=1").is_err());
    }
}
