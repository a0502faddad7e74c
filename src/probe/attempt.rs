//! One probe, as a non-blocking state machine: resolve the name (when it
//! takes a question to a nameserver), connect, send the request, read the
//! status line. Each step that has to wait says which descriptor and which
//! event it waits for; whoever drives it (the supervisor's loop, or
//! `--probe`'s own) polls that and calls `step`, and keeps the time.

use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::time::Duration;

use nix::errno::Errno;
use nix::poll::PollFlags;
use nix::sys::socket::{
    self, AddressFamily, MsgFlags, SockFlag, SockType, SockaddrIn, SockaddrIn6, UnixAddr, sockopt,
};

use super::http::{self, HEAD_MAX, Head};
use super::resolve::{self, Resolver, Start};
use super::url::{Endpoint, Host, Url};
use super::{Address, Healthy, Outcome, Unhealthy, Waited};

/// A probe in flight.
pub struct Attempt {
    /// The request to send once connected; `None` for a probe that only
    /// connects.
    request: Option<Vec<u8>>,
    port: u16,
    phase: Phase,
}

enum Phase {
    Resolving {
        name: String,
        resolver: Resolver,
    },
    Connecting {
        socket: OwnedFd,
        addresses: Vec<Address>,
        /// The address being connected to, in `addresses`.
        at: usize,
        /// How the first address failed, which is what a failure of all
        /// of them reports.
        failed: Option<Unhealthy>,
    },
    Sending {
        socket: OwnedFd,
        address: Address,
        sent: usize,
    },
    Receiving {
        socket: OwnedFd,
        address: Address,
        answer: Vec<u8>,
    },
}

/// Where an attempt is after a step.
pub enum Progress {
    /// It waits: poll `Attempt::waits_for`, then `step`.
    Pending(Attempt),
    Done(Outcome),
}

impl Attempt {
    /// Begins a probe of `target`: as far as it gets without waiting.
    pub fn start(target: &Url) -> Progress {
        let request = target.path.as_deref().map(|p| http::request(target, p));
        match &target.endpoint {
            Endpoint::Unix(path) => connect(request, 0, vec![Address::Unix(path.clone())], 0, None),
            Endpoint::Inet {
                host: Host::Ip(ip),
                port,
            } => connect(request, *port, addresses(&[*ip], *port), 0, None),
            Endpoint::Inet {
                host: Host::Name(name),
                port,
            } => match resolve::start(name) {
                Start::Found(ips) => connect(request, *port, addresses(&ips, *port), 0, None),
                Start::Asking(resolver) => Progress::Pending(Attempt {
                    request,
                    port: *port,
                    phase: Phase::Resolving {
                        name: name.clone(),
                        resolver,
                    },
                }),
                Start::Failed(why) => Progress::Done(Err(Unhealthy::Unresolved {
                    name: name.clone(),
                    why,
                })),
            },
        }
    }

    /// The descriptor this attempt waits on, and for what.
    pub fn waits_for(&self) -> (BorrowedFd<'_>, PollFlags) {
        match &self.phase {
            Phase::Resolving { resolver, .. } => (resolver.fd(), PollFlags::POLLIN),
            Phase::Connecting { socket, .. } | Phase::Sending { socket, .. } => {
                (socket.as_fd(), PollFlags::POLLOUT)
            }
            Phase::Receiving { socket, .. } => (socket.as_fd(), PollFlags::POLLIN),
        }
    }

    /// Goes on once the descriptor is ready (or may be: a step that finds
    /// nothing to do waits again).
    pub fn step(self) -> Progress {
        let Attempt {
            request,
            port,
            phase,
        } = self;
        match phase {
            Phase::Resolving { name, mut resolver } => match resolver.step() {
                None => Progress::Pending(Attempt {
                    request,
                    port,
                    phase: Phase::Resolving { name, resolver },
                }),
                Some(Ok(ips)) => connect(request, port, addresses(&ips, port), 0, None),
                Some(Err(why)) => Progress::Done(Err(Unhealthy::Unresolved { name, why })),
            },
            Phase::Connecting {
                socket,
                addresses,
                at,
                failed,
            } => {
                let error = match socket::getsockopt(&socket, sockopt::SocketError) {
                    Ok(0) => None,
                    Ok(errno) => Some(Errno::from_raw(errno)),
                    Err(e) => Some(e),
                };
                let address = addresses.get(at).cloned();
                match (error, address) {
                    (None, Some(address)) => connected(request, port, socket, address),
                    (Some(Errno::EINPROGRESS), _) => Progress::Pending(Attempt {
                        request,
                        port,
                        phase: Phase::Connecting {
                            socket,
                            addresses,
                            at,
                            failed,
                        },
                    }),
                    (error, address) => {
                        drop(socket);
                        let why = connect_failed(address, error.unwrap_or(Errno::EIO));
                        connect(request, port, addresses, at + 1, failed.or(Some(why)))
                    }
                }
            }
            Phase::Sending {
                socket,
                address,
                sent,
            } => send(request, port, socket, address, sent),
            Phase::Receiving {
                socket,
                address,
                answer,
            } => receive(request, port, socket, address, answer),
        }
    }

    /// What an attempt still waiting after `after` reports.
    pub fn timed_out(&self, after: Duration) -> Unhealthy {
        let waited = match &self.phase {
            Phase::Resolving { name, resolver } => Waited::Nameserver {
                name: name.clone(),
                server: resolver.server(),
            },
            Phase::Connecting { addresses, at, .. } => {
                Waited::Connection(addresses.get(*at).cloned().unwrap_or(Address::Unknown))
            }
            Phase::Sending { address, .. } | Phase::Receiving { address, .. } => {
                Waited::Answer(address.clone())
            }
        };
        Unhealthy::TimedOut { after, waited }
    }
}

fn addresses(ips: &[IpAddr], port: u16) -> Vec<Address> {
    ips.iter()
        .map(|ip| Address::Inet(SocketAddr::new(*ip, port)))
        .collect()
}

/// Connects to the first of `addresses` from `at` on that takes the
/// connection (or is still making up its mind); when none does, the
/// first failure is the outcome.
fn connect(
    request: Option<Vec<u8>>,
    port: u16,
    addresses: Vec<Address>,
    mut at: usize,
    mut failed: Option<Unhealthy>,
) -> Progress {
    while let Some(address) = addresses.get(at) {
        match open(address) {
            Ok((socket, true)) => return connected(request, port, socket, address.clone()),
            Ok((socket, false)) => {
                return Progress::Pending(Attempt {
                    request,
                    port,
                    phase: Phase::Connecting {
                        socket,
                        addresses,
                        at,
                        failed,
                    },
                });
            }
            Err(e) => {
                let why = connect_failed(Some(address.clone()), e);
                failed = failed.or(Some(why));
                at += 1;
            }
        }
    }
    Progress::Done(Err(failed.unwrap_or(Unhealthy::Connect {
        address: Address::Unknown,
        error: Errno::EADDRNOTAVAIL,
    })))
}

fn connect_failed(address: Option<Address>, error: Errno) -> Unhealthy {
    let address = address.unwrap_or(Address::Unknown);
    match error {
        Errno::ECONNREFUSED => Unhealthy::Refused(address),
        error => Unhealthy::Connect { address, error },
    }
}

/// A non-blocking socket, connecting to `address`: whether it is
/// connected already (a Unix socket, or a local port that answers at
/// once).
fn open(address: &Address) -> Result<(OwnedFd, bool), Errno> {
    let family = match address {
        Address::Inet(SocketAddr::V4(_)) => AddressFamily::Inet,
        Address::Inet(SocketAddr::V6(_)) => AddressFamily::Inet6,
        Address::Unix(_) | Address::Unknown => AddressFamily::Unix,
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
        Address::Unknown => Err(Errno::EADDRNOTAVAIL),
    };
    match result {
        Ok(()) => Ok((socket, true)),
        // Interrupted, a non-blocking connect goes on by itself.
        Err(Errno::EINPROGRESS | Errno::EINTR) => Ok((socket, false)),
        Err(e) => Err(e),
    }
}

/// Connected: healthy for a connection probe; otherwise the request goes.
fn connected(request: Option<Vec<u8>>, port: u16, socket: OwnedFd, address: Address) -> Progress {
    if request.is_none() {
        return Progress::Done(Ok(Healthy {
            address,
            status: None,
        }));
    }
    send(request, port, socket, address, 0)
}

fn send(
    request: Option<Vec<u8>>,
    port: u16,
    socket: OwnedFd,
    address: Address,
    mut sent: usize,
) -> Progress {
    let bytes = request.as_deref().unwrap_or_default();
    while let Some(rest) = bytes.get(sent..).filter(|r| !r.is_empty()) {
        match socket::send(socket.as_raw_fd(), rest, MsgFlags::MSG_NOSIGNAL) {
            Ok(n) => sent += n,
            Err(Errno::EINTR) => {}
            Err(Errno::EAGAIN) => {
                return Progress::Pending(Attempt {
                    request,
                    port,
                    phase: Phase::Sending {
                        socket,
                        address,
                        sent,
                    },
                });
            }
            Err(error) => {
                return Progress::Done(Err(Unhealthy::Io {
                    address,
                    sending: true,
                    error,
                }));
            }
        }
    }
    receive(request, port, socket, address, Vec::new())
}

fn receive(
    request: Option<Vec<u8>>,
    port: u16,
    socket: OwnedFd,
    address: Address,
    mut answer: Vec<u8>,
) -> Progress {
    let mut buffer = [0u8; 512];
    loop {
        let room = HEAD_MAX.saturating_sub(answer.len()).clamp(1, buffer.len());
        let read = socket::recv(
            socket.as_raw_fd(),
            buffer.get_mut(..room).unwrap_or_default(),
            MsgFlags::empty(),
        );
        match read {
            Ok(0) => {
                let why = match http::head(&answer) {
                    Head::NotHttp(start) => Unhealthy::NotHttp { address, start },
                    _ => Unhealthy::Closed(address),
                };
                return Progress::Done(Err(why));
            }
            Ok(n) => answer.extend_from_slice(buffer.get(..n).unwrap_or_default()),
            Err(Errno::EINTR) => continue,
            Err(Errno::EAGAIN) => {
                return Progress::Pending(Attempt {
                    request,
                    port,
                    phase: Phase::Receiving {
                        socket,
                        address,
                        answer,
                    },
                });
            }
            Err(error) => {
                return Progress::Done(Err(Unhealthy::Io {
                    address,
                    sending: false,
                    error,
                }));
            }
        }
        match http::head(&answer) {
            Head::Incomplete => {}
            Head::Status(code, reason) if http::healthy(code) => {
                return Progress::Done(Ok(Healthy {
                    address,
                    status: Some((code, reason)),
                }));
            }
            Head::Status(code, reason) => {
                return Progress::Done(Err(Unhealthy::Status { code, reason }));
            }
            Head::NotHttp(start) => {
                return Progress::Done(Err(Unhealthy::NotHttp { address, start }));
            }
        }
    }
}
