//! How a probe went (`--probe`, `--ready-when`): where it connected, the
//! HTTP status, or why it failed, in words and as fields.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use nix::errno::Errno;

use crate::log::format::{Fields, Obj};
use crate::text::{duration, secs};

/// How a probe went.
pub type Outcome = Result<Healthy, Unhealthy>;

/// Where a probe connected, or tried to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Address {
    Inet(SocketAddr),
    Unix(String),
    /// A file a `file:` probe looks at.
    File(String),
    /// No address to try (kept so that no path can panic).
    Unknown,
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Inet(a) => write!(f, "{a}"),
            Address::Unix(path) | Address::File(path) => f.write_str(path),
            Address::Unknown => f.write_str("no address"),
        }
    }
}

/// A probe that succeeded: where, the HTTP status if it was a GET, and a
/// heartbeat file's age if its freshness was asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Healthy {
    pub address: Address,
    pub status: Option<(u16, String)>,
    pub age: Option<Duration>,
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
            None => match (&self.address, self.age) {
                (Address::File(path), Some(age)) => {
                    write!(f, "{path} was modified {} ago", secs(age))
                }
                (Address::File(path), None) => write!(f, "{path} exists"),
                (address, _) => write!(f, "connected to {address}"),
            },
        }
    }
}

impl Fields for Healthy {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        o.field("address", self.address.to_string())
            .opt(
                "http_status",
                self.status.as_ref().map(|(code, _)| u32::from(*code)),
            )
            .opt("age", self.age);
    }
}

/// What an attempt was waiting for when its time was up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Waited {
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
    /// The answer filled all the room a probe reads (`bytes`) without a
    /// final status line.
    TooLong {
        address: Address,
        bytes: usize,
    },
    /// Neither `localhost` nor /etc/hosts names the host.
    Unresolved {
        name: String,
    },
    /// A `file:` probe's file is not there (or cannot be looked at).
    NoFile {
        path: String,
        error: Errno,
    },
    /// A heartbeat file was last modified longer ago than its `max-age`.
    Stale {
        path: String,
        age: Duration,
        max_age: Duration,
    },
    TimedOut {
        after: Duration,
        waited: Waited,
    },
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
            Unhealthy::TooLong { address, bytes } => {
                write!(
                    f,
                    "{address} sent {bytes} bytes without a final HTTP status"
                )
            }
            Unhealthy::Unresolved { name } => write!(
                f,
                "cannot resolve '{name}': not localhost and not in /etc/hosts (vigil does not ask DNS)"
            ),
            Unhealthy::NoFile { path, error } => write!(f, "{path}: {}", error.desc()),
            Unhealthy::Stale { path, age, max_age } => write!(
                f,
                "{path} was last modified {} ago, more than {} (max-age)",
                secs(*age),
                duration(*max_age)
            ),
            Unhealthy::TimedOut { after, waited } => {
                let after = duration(*after);
                match waited {
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

/// The record's `reason`, then where the probe connected or looked, then
/// what else the variant knows.
impl Fields for Unhealthy {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        match self {
            Unhealthy::Status { code, .. } => o
                .word("reason", "http_status")
                .field("http_status", u32::from(*code)),
            Unhealthy::Refused(address) => o
                .word("reason", "refused")
                .field("address", address.to_string()),
            Unhealthy::Connect { address, error } => o
                .word("reason", "connect_failed")
                .field("address", address.to_string())
                .field("error", error.desc()),
            Unhealthy::Io { address, error, .. } => o
                .word("reason", "io_failed")
                .field("address", address.to_string())
                .field("error", error.desc()),
            Unhealthy::Closed(address) => o
                .word("reason", "closed")
                .field("address", address.to_string()),
            Unhealthy::NotHttp { address, start } => o
                .word("reason", "not_http")
                .field("address", address.to_string())
                .field("error", format!("answered \"{start}\"")),
            Unhealthy::TooLong { address, .. } => o
                .word("reason", "too_long")
                .field("address", address.to_string()),
            Unhealthy::Unresolved { name } => {
                o.word("reason", "unresolved").field("name", name.as_str())
            }
            Unhealthy::NoFile { path, error } => o
                .word("reason", "no_file")
                .field("address", path.as_str())
                .field("error", error.desc()),
            Unhealthy::Stale { path, age, max_age } => o
                .word("reason", "stale")
                .field("address", path.as_str())
                .field("age", *age)
                .field("max_age", *max_age),
            Unhealthy::TimedOut {
                after,
                waited: Waited::Connection(address) | Waited::Answer(address),
            } => o
                .word("reason", "timed_out")
                .field("address", address.to_string())
                .field("probe_timeout", *after),
        };
    }
}
