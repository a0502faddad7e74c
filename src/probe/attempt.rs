//! One probe, as a non-blocking state machine: connect, send the request,
//! read the status line. Each stage that has to wait says which descriptor
//! and which event it waits for; whoever drives it (the supervisor's loop,
//! or `--probe`'s own) polls that, calls `step` again, and keeps the time.
//!
//! No peer can hold the one who drives it: a step reads at most one buffer
//! and returns, and an answer is read up to `HEAD_MAX` bytes in all, so
//! that a server that floods, trickles or never stops sending interim
//! answers costs a bounded amount of memory and a bounded amount of work
//! per wake-up, and the deadlines are looked at between steps.

use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::time::{Duration, SystemTime};

use nix::errno::Errno;
use nix::poll::PollFlags;
use nix::sys::socket::{
    self, AddressFamily, MsgFlags, SockFlag, SockType, SockaddrIn, SockaddrIn6, UnixAddr, sockopt,
};

use super::hosts;
use super::http::{self, HEAD_MAX, Head};
use super::url::{Endpoint, Host, Url};
use super::{Address, Healthy, Outcome, Unhealthy, Waited};

/// Where an attempt is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Nothing done yet.
    Begin,
    /// The next address in `addresses` is to be tried.
    Connect,
    /// `socket` is connecting to `addresses[at]`.
    Connecting,
    /// `socket` is connected, the request partly sent (`sent`).
    Sending,
    /// The request is sent; `answer` holds what came back so far.
    Receiving,
}

/// A probe in flight.
pub struct Attempt {
    endpoint: Endpoint,
    /// The request to send once connected; `None` for a probe that only
    /// connects.
    request: Option<Vec<u8>>,
    stage: Stage,
    addresses: Vec<Address>,
    /// The address being tried, in `addresses`.
    at: usize,
    /// How the first address failed, which is what a failure of all of
    /// them reports.
    failed: Option<Unhealthy>,
    socket: Option<OwnedFd>,
    sent: usize,
    answer: Vec<u8>,
}

impl Attempt {
    /// A probe of `url`, not begun: `step` begins it.
    pub fn new(url: &Url) -> Attempt {
        Attempt {
            endpoint: url.endpoint.clone(),
            request: url.path.as_deref().map(|p| http::request(url, p)),
            stage: Stage::Begin,
            addresses: Vec::new(),
            at: 0,
            failed: None,
            socket: None,
            sent: 0,
            answer: Vec::new(),
        }
    }

    /// The descriptor this attempt waits on, and for what; `None` before
    /// it began or once it is over.
    pub fn waits_for(&self) -> Option<(BorrowedFd<'_>, PollFlags)> {
        let events = match self.stage {
            Stage::Receiving => PollFlags::POLLIN,
            Stage::Connecting | Stage::Sending => PollFlags::POLLOUT,
            Stage::Begin | Stage::Connect => return None,
        };
        Some((self.socket.as_ref()?.as_fd(), events))
    }

    /// Goes as far as it can without waiting: the outcome once the probe
    /// is over, `None` while it waits for its descriptor (`waits_for`).
    pub fn step(&mut self) -> Option<Outcome> {
        let outcome = self.advance();
        if outcome.is_some() {
            // Over: the socket is closed now, not when dropped.
            self.socket = None;
        }
        outcome
    }

    fn advance(&mut self) -> Option<Outcome> {
        loop {
            match self.stage {
                Stage::Begin => {
                    if let Some(outcome) = self.begin() {
                        return Some(outcome);
                    }
                }
                Stage::Connect => {
                    if let Some(outcome) = self.connect() {
                        return Some(outcome);
                    }
                    if self.stage == Stage::Connecting {
                        return None;
                    }
                }
                Stage::Connecting => {
                    let socket = self.socket.as_ref()?;
                    match socket::getsockopt(socket, sockopt::SocketError) {
                        Ok(0) => {
                            if let Some(outcome) = self.connected() {
                                return Some(outcome);
                            }
                        }
                        Ok(errno) if Errno::from_raw(errno) == Errno::EINPROGRESS => return None,
                        Ok(errno) => self.next_address(Errno::from_raw(errno)),
                        Err(e) => self.next_address(e),
                    }
                }
                Stage::Sending => return self.send(),
                Stage::Receiving => return self.receive(),
            }
        }
    }

    /// The addresses of the endpoint: a Unix socket's path, an IP address,
    /// or what `localhost` and /etc/hosts give a name.
    fn begin(&mut self) -> Option<Outcome> {
        let (host, port) = match &self.endpoint {
            Endpoint::Unix(path) => {
                self.addresses = vec![Address::Unix(path.clone())];
                self.stage = Stage::Connect;
                return None;
            }
            Endpoint::File { path, max_age } => return Some(look_at(path, *max_age)),
            Endpoint::Inet { host, port } => (host, *port),
        };
        let ips = match host {
            Host::Ip(ip) => vec![*ip],
            Host::Name(name) => hosts::lookup(name),
        };
        if ips.is_empty() {
            return Some(Err(Unhealthy::Unresolved {
                name: host.to_string(),
            }));
        }
        self.addresses = ips
            .into_iter()
            .map(|ip| Address::Inet(SocketAddr::new(ip, port)))
            .collect();
        self.stage = Stage::Connect;
        None
    }

    /// Connects to `addresses[at]`: connected at once (a Unix socket, a
    /// local port), connecting, or on to the next address; when none is
    /// left, the first failure is the outcome.
    fn connect(&mut self) -> Option<Outcome> {
        let Some(address) = self.addresses.get(self.at) else {
            let why = self.failed.take().unwrap_or(Unhealthy::Connect {
                address: Address::Unknown,
                error: Errno::EADDRNOTAVAIL,
            });
            return Some(Err(why));
        };
        match open(address) {
            Ok((socket, connected)) => {
                self.socket = Some(socket);
                if connected {
                    return self.connected();
                }
                self.stage = Stage::Connecting;
                None
            }
            Err(e) => {
                self.next_address(e);
                None
            }
        }
    }

    /// `addresses[at]` failed with `error`: on to the next one.
    fn next_address(&mut self, error: Errno) {
        let address = self.address();
        let why = match error {
            Errno::ECONNREFUSED => Unhealthy::Refused(address),
            error => Unhealthy::Connect { address, error },
        };
        self.failed.get_or_insert(why);
        self.socket = None;
        self.at += 1;
        self.stage = Stage::Connect;
    }

    /// Connected: healthy for a probe that only connects; otherwise the
    /// request goes.
    fn connected(&mut self) -> Option<Outcome> {
        if self.request.is_none() {
            return Some(Ok(Healthy {
                address: self.address(),
                status: None,
                age: None,
            }));
        }
        self.stage = Stage::Sending;
        None
    }

    /// The address being tried.
    fn address(&self) -> Address {
        self.addresses
            .get(self.at)
            .cloned()
            .unwrap_or(Address::Unknown)
    }

    fn send(&mut self) -> Option<Outcome> {
        let socket = self.socket.as_ref()?.as_raw_fd();
        let request = self.request.as_deref().unwrap_or_default();
        while let Some(rest) = request.get(self.sent..).filter(|r| !r.is_empty()) {
            match socket::send(socket, rest, MsgFlags::MSG_NOSIGNAL) {
                Ok(n) => self.sent += n,
                Err(Errno::EINTR) => {}
                Err(Errno::EAGAIN) => return None,
                Err(error) => return Some(Err(self.io_failed(true, error))),
            }
        }
        self.stage = Stage::Receiving;
        self.receive()
    }

    /// Reads once, at most what is left of `HEAD_MAX`, and says what the
    /// answer says so far; `None` to be woken again for more.
    fn receive(&mut self) -> Option<Outcome> {
        let socket = self.socket.as_ref()?.as_raw_fd();
        let mut buffer = [0u8; HEAD_MAX];
        let room = HEAD_MAX.saturating_sub(self.answer.len());
        let buffer = buffer.get_mut(..room).unwrap_or_default();
        let address = self.address();
        match socket::recv(socket, buffer, MsgFlags::empty()) {
            Ok(0) => {
                return Some(Err(match http::head(&self.answer) {
                    Head::NotHttp(start) => Unhealthy::NotHttp { address, start },
                    _ => Unhealthy::Closed(address),
                }));
            }
            Ok(n) => self
                .answer
                .extend_from_slice(buffer.get(..n).unwrap_or_default()),
            Err(Errno::EINTR | Errno::EAGAIN) => return None,
            Err(error) => return Some(Err(self.io_failed(false, error))),
        }
        match http::head(&self.answer) {
            Head::Incomplete => None,
            Head::Status(code, reason) if http::healthy(code) => Some(Ok(Healthy {
                address,
                status: Some((code, reason)),
                age: None,
            })),
            Head::Status(code, reason) => Some(Err(Unhealthy::Status { code, reason })),
            Head::NotHttp(start) => Some(Err(Unhealthy::NotHttp { address, start })),
            Head::TooLong => Some(Err(Unhealthy::TooLong {
                address,
                bytes: HEAD_MAX,
            })),
        }
    }

    fn io_failed(&self, sending: bool, error: Errno) -> Unhealthy {
        Unhealthy::Io {
            address: self.address(),
            sending,
            error,
        }
    }

    /// What an attempt still waiting after `after` reports.
    pub fn timed_out(&self, after: Duration) -> Unhealthy {
        let waited = match self.stage {
            Stage::Sending | Stage::Receiving => Waited::Answer(self.address()),
            _ => Waited::Connection(self.address()),
        };
        Unhealthy::TimedOut { after, waited }
    }
}

/// A non-blocking socket, connecting to `address`: whether it is
/// connected already (a Unix socket, or a local port that answers at
/// once).
fn open(address: &Address) -> Result<(OwnedFd, bool), Errno> {
    let family = match address {
        Address::Inet(SocketAddr::V4(_)) => AddressFamily::Inet,
        Address::Inet(SocketAddr::V6(_)) => AddressFamily::Inet6,
        Address::Unix(_) | Address::File(_) | Address::Unknown => AddressFamily::Unix,
    };
    let socket = socket::socket(
        family,
        SockType::Stream,
        SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    let fd = socket.as_raw_fd();
    let result = match address {
        Address::Inet(SocketAddr::V4(a)) => socket::connect(fd, &SockaddrIn::from(*a)),
        Address::Inet(SocketAddr::V6(a)) => socket::connect(fd, &SockaddrIn6::from(*a)),
        Address::Unix(path) => {
            let to = match path.strip_prefix('@') {
                Some(name) => UnixAddr::new_abstract(name.as_bytes())?,
                None => UnixAddr::new(path.as_str())?,
            };
            socket::connect(fd, &to)
        }
        Address::File(_) | Address::Unknown => Err(Errno::EADDRNOTAVAIL),
    };
    match result {
        Ok(()) => Ok((socket, true)),
        // Interrupted, a non-blocking connect goes on by itself.
        Err(Errno::EINPROGRESS | Errno::EINTR) => Ok((socket, false)),
        Err(e) => Err(e),
    }
}

/// A `file:` probe: `path` exists, and with `max_age`, was modified within
/// it. One `stat`, which needs no waiting; a modification time ahead of
/// the clock counts as just now.
fn look_at(path: &str, max_age: Option<Duration>) -> Outcome {
    let modified = match std::fs::metadata(path) {
        Ok(meta) => meta.modified().ok(),
        Err(e) => {
            let error = Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO));
            let path = path.to_string();
            return Err(Unhealthy::NoFile { path, error });
        }
    };
    let age = max_age.map(|_| {
        modified
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .unwrap_or_default()
    });
    match (age, max_age) {
        (Some(age), Some(max_age)) if age > max_age => Err(Unhealthy::Stale {
            path: path.to_string(),
            age,
            max_age,
        }),
        _ => Ok(Healthy {
            address: Address::File(path.to_string()),
            status: None,
            age,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_exists_or_is_fresh_enough() {
        let dir = std::env::temp_dir().join(format!("vigil-file-probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("hb");
        std::fs::write(&file, "").unwrap();
        let path = file.to_str().unwrap();
        let healthy = look_at(path, None).unwrap();
        assert_eq!(healthy.to_string(), format!("{path} exists"));
        let fresh = look_at(path, Some(Duration::from_secs(60))).unwrap();
        assert!(fresh.age.is_some_and(|age| age < Duration::from_secs(60)));
        let old = SystemTime::now() - Duration::from_secs(120);
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let stale = look_at(path, Some(Duration::from_secs(60))).unwrap_err();
        assert!(matches!(stale, Unhealthy::Stale { .. }), "{stale}");
        assert!(
            stale.to_string().contains("more than 60s (max-age)"),
            "{stale}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
        let missing = look_at(path, None).unwrap_err();
        assert_eq!(
            missing.to_string(),
            format!("{path}: No such file or directory")
        );
    }
}
