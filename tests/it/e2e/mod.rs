//! The tier CI requires: tests that need what the repository does not
//! bring (a container engine, the release in dist/, the Debian mirror,
//! tini-static, strace). tests/README.md, "The e2e tier", says what each
//! needs and what a skip does.

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
