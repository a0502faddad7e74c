//! How a probe went (`--probe`, `--ready-when`): where it connected, the
//! HTTP status, or why it failed, in words and as fields.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use nix::errno::Errno;

use crate::record::{Fields, Obj};
use crate::text::duration;

/// Why a name has no address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unresolved {
    /// Not in /etc/hosts, and /etc/resolv.conf names no nameserver.
    NoNameserver,
    /// The nameserver says the name does not exist (NXDOMAIN).
    NoSuchName(IpAddr),
    /// The name exists, without an IPv4 or IPv6 address.
    NoAddress(IpAddr),
    /// The nameserver failed to answer (its response code: 2 SERVFAIL, 5
    /// REFUSED, ...).
    ServerFailed(IpAddr, u8),
    /// The query could not be sent.
    Socket(Errno),
}

/// How a probe went.
pub type Outcome = Result<Healthy, Unhealthy>;

/// Where a probe connected, or tried to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Address {
    Inet(SocketAddr),
    Unix(String),
    /// A name resolved to no address at all (not said by any nameserver
    /// that vigil knows of; kept so that no path can panic).
    Unknown,
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Inet(a) => write!(f, "{a}"),
            Address::Unix(path) => f.write_str(path),
            Address::Unknown => f.write_str("no address"),
        }
    }
}

/// A probe that succeeded: where, and the HTTP status if it was a GET.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Healthy {
    pub address: Address,
    pub status: Option<(u16, String)>,
}

impl fmt::Display for Healthy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.status {
            Some((code, reason)) => {
                write!(f, "HTTP status {code}")?;
                if !reason.is_empty() {
                    write!(f, " ({reason})")?;
                }
                write!(f, " from {}", self.address)
            }
            None => write!(f, "connected to {}", self.address),
        }
    }
}

impl Fields for Healthy {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        o.field("address", self.address.to_string()).opt(
            "http_status",
            self.status.as_ref().map(|(code, _)| u32::from(*code)),
        );
    }
}

/// What an attempt was waiting for when its time was up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Waited {
    Nameserver {
        name: String,
        server: Option<IpAddr>,
    },
    Connection(Address),
    Answer(Address),
}

/// Why a probe failed: what the one line says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unhealthy {
    /// An HTTP status other than 2xx and 3xx.
    Status {
        code: u16,
        reason: String,
    },
    Refused(Address),
    /// Another error connecting (no such socket file, unreachable, ...).
    Connect {
        address: Address,
        error: Errno,
    },
    Io {
        address: Address,
        sending: bool,
        error: Errno,
    },
    /// The connection closed before a status line.
    Closed(Address),
    NotHttp {
        address: Address,
        start: String,
    },
    Unresolved {
        name: String,
        why: Unresolved,
    },
    TimedOut {
        after: Duration,
        waited: Waited,
    },
}

impl Unhealthy {
    /// The record's `reason`.
    fn word(&self) -> &'static str {
        match self {
            Unhealthy::Status { .. } => "http_status",
            Unhealthy::Refused(_) => "refused",
            Unhealthy::Connect { .. } => "connect_failed",
            Unhealthy::Io { .. } => "io_failed",
            Unhealthy::Closed(_) => "closed",
            Unhealthy::NotHttp { .. } => "not_http",
            Unhealthy::Unresolved { .. } => "unresolved",
            Unhealthy::TimedOut { .. } => "timed_out",
        }
    }

    fn address(&self) -> Option<&Address> {
        match self {
            Unhealthy::Refused(address)
            | Unhealthy::Connect { address, .. }
            | Unhealthy::Io { address, .. }
            | Unhealthy::Closed(address)
            | Unhealthy::NotHttp { address, .. }
            | Unhealthy::TimedOut {
                waited: Waited::Connection(address) | Waited::Answer(address),
                ..
            } => Some(address),
            _ => None,
        }
    }
}

/// A nameserver's response code in words.
fn rcode(code: u8) -> String {
    match code {
        1 => "FORMERR".into(),
        2 => "SERVFAIL".into(),
        4 => "NOTIMP".into(),
        5 => "REFUSED".into(),
        n => format!("response code {n}"),
    }
}

impl fmt::Display for Unresolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unresolved::NoNameserver => {
                f.write_str("it is not in /etc/hosts, and /etc/resolv.conf names no nameserver")
            }
            Unresolved::NoSuchName(server) => write!(f, "no such name (nameserver {server})"),
            Unresolved::NoAddress(server) => write!(f, "it has no address (nameserver {server})"),
            Unresolved::ServerFailed(server, code) => {
                write!(f, "nameserver {server} failed ({})", rcode(*code))
            }
            Unresolved::Socket(e) => write!(f, "cannot ask the nameserver: {}", e.desc()),
        }
    }
}

impl fmt::Display for Unhealthy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unhealthy::Status { code, reason } if reason.is_empty() => {
                write!(f, "HTTP status {code}")
            }
            Unhealthy::Status { code, reason } => write!(f, "HTTP status {code} ({reason})"),
            Unhealthy::Refused(address) => write!(f, "connection refused by {address}"),
            Unhealthy::Connect { address, error } => {
                write!(f, "cannot connect to {address}: {}", error.desc())
            }
            Unhealthy::Io {
                address,
                sending: true,
                error,
            } => write!(f, "cannot send the request to {address}: {}", error.desc()),
            Unhealthy::Io { address, error, .. } => {
                write!(f, "cannot read the answer from {address}: {}", error.desc())
            }
            Unhealthy::Closed(address) => {
                write!(f, "{address} closed the connection without an HTTP answer")
            }
            Unhealthy::NotHttp { address, start } => {
                write!(
                    f,
                    "{address} answered something that is not HTTP: \"{start}\""
                )
            }
            Unhealthy::Unresolved { name, why } => write!(f, "cannot resolve '{name}': {why}"),
            Unhealthy::TimedOut { after, waited } => {
                let after = duration(*after);
                match waited {
                    Waited::Nameserver {
                        name,
                        server: Some(server),
                    } => write!(
                        f,
                        "no answer from nameserver {server} within {after} for '{name}'"
                    ),
                    Waited::Nameserver { name, server: None } => {
                        write!(f, "no answer within {after} resolving '{name}'")
                    }
                    Waited::Connection(address) => {
                        write!(f, "timed out after {after} connecting to {address}")
                    }
                    Waited::Answer(address) => {
                        write!(f, "no HTTP answer from {address} within {after}")
                    }
                }
            }
        }
    }
}

impl Fields for Unhealthy {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        o.word("reason", self.word());
        if let Some(address) = self.address() {
            o.field("address", address.to_string());
        }
        match self {
            Unhealthy::Status { code, .. } => {
                o.field("http_status", u32::from(*code));
            }
            Unhealthy::Connect { error, .. } | Unhealthy::Io { error, .. } => {
                o.field("error", error.desc());
            }
            Unhealthy::NotHttp { start, .. } => {
                o.field("error", format!("answered \"{start}\""));
            }
            Unhealthy::Unresolved { name, why } => {
                o.field("name", name.as_str())
                    .field("error", why.to_string());
            }
            Unhealthy::TimedOut { after, waited } => {
                if let Waited::Nameserver { name, .. } = waited {
                    o.field("name", name.as_str());
                }
                o.field("probe_timeout", *after);
            }
            Unhealthy::Refused(_) | Unhealthy::Closed(_) => {}
        }
    }
}
