//! The tier CI requires: tests that need what the repository does not
//! bring (a container engine, the release in dist/, the Debian mirror,
//! tini-static, strace). tests/README.md, "The e2e tier", says what each
//! needs and what a skip does.

/// Docker's least privilege for a server on port 80 as another user:
/// every capability dropped but NET_BIND_SERVICE, SETUID and SETGID,
/// no-new-privileges, and ports below 1024 closed to other users again
/// (Docker 20.10 and later open them to everyone).
const LEAST_PRIVILEGE: &[&str] = &[
    "--cap-drop",
    "ALL",
    "--cap-add",
    "NET_BIND_SERVICE",
    "--cap-add",
    "SETUID",
    "--cap-add",
    "SETGID",
    "--security-opt",
    "no-new-privileges",
    "--sysctl",
    "net.ipv4.ip_unprivileged_port_start=1024",
];

mod caps;
mod differential;
mod docker;
mod docs;
mod faults;
mod images;
mod install;
mod live;
mod pause;
mod probe;
mod quadlet;
mod servers;
mod sockets;
