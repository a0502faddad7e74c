//! Host names to addresses, without NSS (vigil is static): `localhost`,
//! then `/etc/hosts`, then a DNS query over UDP to the nameservers of
//! `/etc/resolv.conf`, with its search domains and `ndots`. The query is a
//! non-blocking socket, like the rest of a probe, so that it can wait in
//! the supervisor's loop.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

pub use crate::facts::probe::Unresolved;
use crate::procs::read_text;
use nix::errno::Errno;
use nix::sys::socket::{
    self, AddressFamily, MsgFlags, SockFlag, SockType, SockaddrIn, SockaddrIn6, SockaddrLike,
    SockaddrStorage,
};

/// What `localhost` is, whatever /etc/hosts says (RFC 6761): IPv4 first,
/// which more servers listen on.
const LOOPBACK: [IpAddr; 2] = [
    IpAddr::V4(Ipv4Addr::LOCALHOST),
    IpAddr::V6(Ipv6Addr::LOCALHOST),
];

const HOSTS: &str = "/etc/hosts";
const RESOLV_CONF: &str = "/etc/resolv.conf";

/// The record types asked for: IPv4 first, IPv6 when a name has none.
const A: u16 = 1;
const AAAA: u16 = 28;

/// The most nameservers and search domains read, as the C libraries do.
const SERVERS_MAX: usize = 3;
const SEARCH_MAX: usize = 6;

/// How a lookup begins.
pub enum Start {
    Found(Vec<IpAddr>),
    Asking(Resolver),
    Failed(Unresolved),
}

/// Looks `name` up in what needs no waiting, and asks the nameservers
/// otherwise.
pub fn start(name: &str) -> Start {
    let relative = name.strip_suffix('.').unwrap_or(name);
    if relative == "localhost" || relative.ends_with(".localhost") {
        return Start::Found(LOOPBACK.to_vec());
    }
    let hosts = read_text(HOSTS).unwrap_or_default();
    let found = in_hosts(&hosts, relative);
    if !found.is_empty() {
        return Start::Found(found);
    }
    let conf = Conf::parse(&read_text(RESOLV_CONF).unwrap_or_default());
    match Resolver::new(&conf, name) {
        Ok(resolver) => Start::Asking(resolver),
        Err(why) => Start::Failed(why),
    }
}

/// The addresses /etc/hosts gives `name`, in the file's order.
fn in_hosts(hosts: &str, name: &str) -> Vec<IpAddr> {
    let mut found = Vec::new();
    for line in hosts.lines() {
        let line = line.split('#').next().unwrap_or_default();
        let mut words = line.split_whitespace();
        // An address with a zone (fe80::1%eth0) does not parse: skipped.
        let Some(Ok(ip)) = words.next().map(str::parse::<IpAddr>) else {
            continue;
        };
        if words.any(|w| w.eq_ignore_ascii_case(name)) && !found.contains(&ip) {
            found.push(ip);
        }
    }
    found
}

/// What /etc/resolv.conf says.
#[derive(Debug, Default, PartialEq, Eq)]
struct Conf {
    servers: Vec<IpAddr>,
    search: Vec<String>,
    ndots: usize,
}

impl Conf {
    fn parse(text: &str) -> Conf {
        let mut conf = Conf {
            ndots: 1,
            ..Conf::default()
        };
        for line in text.lines() {
            let mut words = line.split_whitespace();
            match words.next() {
                Some("nameserver") => {
                    if let Some(Ok(ip)) = words.next().map(str::parse::<IpAddr>)
                        && conf.servers.len() < SERVERS_MAX
                    {
                        conf.servers.push(ip);
                    }
                }
                // The last of `search` and `domain` counts.
                Some("search") | Some("domain") => {
                    conf.search = words
                        .take(SEARCH_MAX)
                        .map(|d| d.trim_end_matches('.').to_ascii_lowercase())
                        .filter(|d| !d.is_empty())
                        .collect();
                }
                Some("options") => {
                    for option in words {
                        if let Some(Ok(n)) = option.strip_prefix("ndots:").map(str::parse::<usize>)
                        {
                            conf.ndots = n.min(15);
                        }
                    }
                }
                _ => {}
            }
        }
        conf
    }

    /// The names to ask for, in turn: an absolute name (a trailing dot)
    /// alone; a name with fewer dots than `ndots` with each search domain
    /// first, then as it is; any other as it is first.
    fn candidates(&self, name: &str) -> Vec<String> {
        if let Some(absolute) = name.strip_suffix('.') {
            return vec![absolute.to_string()];
        }
        let searched = self.search.iter().map(|d| format!("{name}.{d}"));
        if name.matches('.').count() >= self.ndots {
            std::iter::once(name.to_string()).chain(searched).collect()
        } else {
            searched.chain(std::iter::once(name.to_string())).collect()
        }
    }
}

/// A DNS lookup in flight: one UDP socket, one question at a time (the
/// same to each nameserver), IPv4 first, IPv6 when a name has no IPv4
/// address, then the next candidate name.
pub struct Resolver {
    /// The name as the URL gives it.
    name: String,
    socket: OwnedFd,
    servers: Vec<SocketAddr>,
    names: Vec<String>,
    at: usize,
    qtype: u16,
    id: u16,
    /// Why the names asked so far had no address: the most telling reason.
    failed: Option<Unresolved>,
}

impl Resolver {
    fn new(conf: &Conf, name: &str) -> Result<Resolver, Unresolved> {
        let Some(first) = conf.servers.first() else {
            return Err(Unresolved::NoNameserver);
        };
        // One socket of one family: the nameservers of the first one's.
        let servers: Vec<SocketAddr> = conf
            .servers
            .iter()
            .filter(|ip| ip.is_ipv4() == first.is_ipv4())
            .map(|ip| SocketAddr::new(*ip, 53))
            .collect();
        let family = if first.is_ipv4() {
            AddressFamily::Inet
        } else {
            AddressFamily::Inet6
        };
        let socket = socket::socket(
            family,
            SockType::Datagram,
            SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
            None,
        )
        .map_err(Unresolved::Socket)?;
        let mut resolver = Resolver {
            name: name.to_string(),
            socket,
            servers,
            names: conf.candidates(name),
            at: 0,
            qtype: A,
            id: 0,
            failed: None,
        };
        resolver.ask()?;
        Ok(resolver)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.socket.as_fd()
    }

    /// The nameserver asked (the first one), for messages.
    pub fn server(&self) -> Option<IpAddr> {
        self.servers.first().map(SocketAddr::ip)
    }

    /// Sends the current question to every nameserver; an error only when
    /// none could be sent to.
    fn ask(&mut self) -> Result<(), Unresolved> {
        self.id = random_id();
        let name = self.names.get(self.at).map_or("", String::as_str);
        let packet = query(self.id, name, self.qtype);
        let mut error = None;
        let mut sent = false;
        for server in &self.servers {
            let result = match server {
                SocketAddr::V4(a) => send_to(&self.socket, &packet, &SockaddrIn::from(*a)),
                SocketAddr::V6(a) => send_to(&self.socket, &packet, &SockaddrIn6::from(*a)),
            };
            match result {
                Ok(()) => sent = true,
                Err(e) => error = Some(e),
            }
        }
        match (sent, error) {
            (false, Some(e)) => Err(Unresolved::Socket(e)),
            _ => Ok(()),
        }
    }

    /// Reads what the nameservers answered: the addresses once they are
    /// known, the reason once every name has been asked for in vain, `None`
    /// while the answer is still to come.
    pub fn step(&mut self) -> Option<Result<Vec<IpAddr>, Unresolved>> {
        let mut buffer = [0u8; 1500];
        loop {
            let (n, from) =
                match socket::recvfrom::<SockaddrStorage>(self.socket.as_raw_fd(), &mut buffer) {
                    Ok(got) => got,
                    Err(Errno::EINTR) => continue,
                    Err(Errno::EAGAIN) => return None,
                    Err(e) => return Some(Err(Unresolved::Socket(e))),
                };
            let from = from.and_then(|from| socket_addr(&from));
            let Some(server) = from.filter(|f| self.servers.contains(f)).map(|f| f.ip()) else {
                continue;
            };
            let Some(answer) = answer(buffer.get(..n).unwrap_or_default(), self.id, self.qtype)
            else {
                continue;
            };
            let why = match answer {
                Answer::Addresses(found) => return Some(Ok(found)),
                Answer::NoSuchName => Unresolved::NoSuchName(server),
                Answer::NoAddress => Unresolved::NoAddress(server),
                Answer::Failed(rcode) => Unresolved::ServerFailed(server, rcode),
            };
            if let Err(e) = self.next(why) {
                return Some(Err(e));
            }
        }
    }

    /// The current question had no address: ask the next one, if any.
    fn next(&mut self, why: Unresolved) -> Result<(), Unresolved> {
        let no_such_name = matches!(why, Unresolved::NoSuchName(_));
        // A server failure says more than "no such name", which says more
        // than "no address".
        let rank = |u: &Unresolved| match u {
            Unresolved::ServerFailed(..) => 2,
            Unresolved::NoAddress(_) => 1,
            _ => 0,
        };
        if self.failed.as_ref().is_none_or(|f| rank(&why) >= rank(f)) {
            self.failed = Some(why);
        }
        if self.qtype == A && !no_such_name {
            self.qtype = AAAA;
        } else {
            self.at += 1;
            self.qtype = A;
            if self.at >= self.names.len() {
                return Err(self.failed.take().unwrap_or(Unresolved::NoNameserver));
            }
        }
        self.ask()
    }
}

fn send_to(socket: &OwnedFd, packet: &[u8], to: &dyn SockaddrLike) -> Result<(), Errno> {
    loop {
        match socket::sendto(socket.as_raw_fd(), packet, to, MsgFlags::MSG_NOSIGNAL) {
            Err(Errno::EINTR) => {}
            done => return done.map(drop),
        }
    }
}

fn socket_addr(from: &SockaddrStorage) -> Option<SocketAddr> {
    if let Some(v4) = from.as_sockaddr_in() {
        return Some(SocketAddr::V4((*v4).into()));
    }
    from.as_sockaddr_in6()
        .map(|v6| SocketAddr::V6((*v6).into()))
}

/// A question's id, which an answer must repeat: from the clock's
/// nanoseconds. The answer must also come from a nameserver asked, to the
/// port the kernel picked at random for the socket; a probe's lookup needs
/// no more than that.
fn random_id() -> u16 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    (nanos ^ (nanos >> 16)) as u16
}

/// A DNS query: one question, recursion desired.
fn query(id: u16, name: &str, qtype: u16) -> Vec<u8> {
    let mut packet = Vec::with_capacity(18 + name.len());
    packet.extend(id.to_be_bytes());
    // Flags: a standard query, recursion desired; one question.
    packet.extend([0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.split('.').filter(|l| !l.is_empty()) {
        packet.push(label.len().min(63) as u8);
        packet.extend(label.bytes().take(63));
    }
    packet.push(0);
    packet.extend(qtype.to_be_bytes());
    packet.extend(1u16.to_be_bytes());
    packet
}

/// What an answer to the question `id` says.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    Addresses(Vec<IpAddr>),
    NoSuchName,
    NoAddress,
    Failed(u8),
}

/// Reads an answer; `None` when it is no answer to the question `id`.
/// The addresses of the type asked for are taken from the answer section
/// (the canonical names a recursive server puts before them are skipped);
/// a malformed record ends the reading with what was found before it.
fn answer(packet: &[u8], id: u16, qtype: u16) -> Option<Answer> {
    let u16_at = |at: usize| Some(u16::from_be_bytes([*packet.get(at)?, *packet.get(at + 1)?]));
    let flags = u16_at(2)?;
    if u16_at(0)? != id || flags & 0x8000 == 0 {
        return None;
    }
    match (flags & 0xf) as u8 {
        0 => {}
        3 => return Some(Answer::NoSuchName),
        rcode => return Some(Answer::Failed(rcode)),
    }
    let questions = u16_at(4)?;
    let answers = u16_at(6)?;
    let mut at = 12;
    for _ in 0..questions {
        at = skip_name(packet, at)? + 4;
    }
    let mut found = Vec::new();
    for _ in 0..answers {
        let Some(record) = skip_name(packet, at) else {
            break;
        };
        let (Some(rtype), Some(class), Some(len)) =
            (u16_at(record), u16_at(record + 2), u16_at(record + 8))
        else {
            break;
        };
        let start = record + 10;
        let Some(data) = packet.get(start..start + usize::from(len)) else {
            break;
        };
        if class == 1 && rtype == qtype {
            if let Ok(v4) = <[u8; 4]>::try_from(data) {
                found.push(IpAddr::from(v4));
            } else if let Ok(v6) = <[u8; 16]>::try_from(data) {
                found.push(IpAddr::from(v6));
            }
        }
        at = start + usize::from(len);
    }
    Some(if found.is_empty() {
        Answer::NoAddress
    } else {
        Answer::Addresses(found)
    })
}

/// Where the name at `at` ends: after its zero label, or after a
/// compression pointer.
fn skip_name(packet: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let len = *packet.get(at)?;
        match len & 0xc0 {
            0 if len == 0 => return Some(at + 1),
            0 => at += 1 + usize::from(len),
            0xc0 => return Some(at + 2),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn hosts_file() {
        let hosts = "127.0.0.1\tlocalhost\n# 10.9.9.9 app\n::1 localhost ip6-localhost\n\
                     172.17.0.2 a1b2c3 App.internal app # the container\n\
                     fe80::1%eth0 app\nnonsense app\n10.0.0.7 app\n172.17.0.2 app\n";
        assert_eq!(in_hosts(hosts, "app"), [ip("172.17.0.2"), ip("10.0.0.7")]);
        assert_eq!(in_hosts(hosts, "app.internal"), [ip("172.17.0.2")]);
        assert_eq!(in_hosts(hosts, "ip6-localhost"), [ip("::1")]);
        assert!(in_hosts(hosts, "other").is_empty());
        assert!(in_hosts("", "app").is_empty());
    }

    #[test]
    fn localhost_needs_no_file() {
        let Start::Found(found) = start("localhost") else {
            panic!("localhost was not found");
        };
        assert_eq!(found, LOOPBACK);
        assert!(matches!(start("web.localhost."), Start::Found(_)));
    }

    #[test]
    fn resolv_conf() {
        let conf = Conf::parse(
            "# Docker\nnameserver 127.0.0.11\nnameserver fe80::1%eth0\nnameserver ::1\n\
             search ns.svc.cluster.local svc.cluster.local. cluster.local\n\
             options edns0 ndots:5 trust-ad\nnameserver 10.0.0.1\nnameserver 10.0.0.2\n",
        );
        assert_eq!(conf.servers, [ip("127.0.0.11"), ip("::1"), ip("10.0.0.1")]);
        assert_eq!(
            conf.search,
            ["ns.svc.cluster.local", "svc.cluster.local", "cluster.local"]
        );
        assert_eq!(conf.ndots, 5);
        let empty = Conf::parse("");
        assert!(empty.servers.is_empty());
        assert_eq!(empty.ndots, 1);
        assert_eq!(Conf::parse("domain example.org\n").search, ["example.org"]);
    }

    #[test]
    fn search_domains_come_first_for_short_names() {
        let conf = Conf {
            servers: vec![],
            search: vec!["ns.svc".into(), "svc".into()],
            ndots: 2,
        };
        assert_eq!(conf.candidates("db"), ["db.ns.svc", "db.svc", "db"]);
        assert_eq!(conf.candidates("db.x"), ["db.x.ns.svc", "db.x.svc", "db.x"]);
        assert_eq!(
            conf.candidates("a.b.c"),
            ["a.b.c", "a.b.c.ns.svc", "a.b.c.svc"]
        );
        assert_eq!(conf.candidates("db."), ["db"]);
    }

    #[test]
    fn no_nameserver_is_said_at_once() {
        assert!(matches!(
            Resolver::new(&Conf::parse(""), "db"),
            Err(Unresolved::NoNameserver)
        ));
    }

    /// An answer as a recursive server gives it: the question, a CNAME,
    /// then the addresses, each name compressed.
    fn response(id: u16, rcode: u8, qtype: u16, records: &[(u16, &[u8])]) -> Vec<u8> {
        let mut p = query(id, "www.example.org", qtype);
        p[2] |= 0x80;
        p[3] = 0x80 | rcode;
        p[7] = records.len() as u8;
        for (rtype, data) in records {
            p.extend([0xc0, 12]);
            p.extend(rtype.to_be_bytes());
            p.extend([0, 1, 0, 0, 0, 60]);
            p.extend((data.len() as u16).to_be_bytes());
            p.extend(*data);
        }
        p
    }

    #[test]
    fn queries_are_one_question() {
        let q = query(0x1234, "db.svc", AAAA);
        assert_eq!(
            q,
            [
                0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 2, b'd', b'b', 3, b's', b'v', b'c', 0, 0,
                28, 0, 1
            ]
        );
    }

    #[test]
    fn answers() {
        let cname: &[u8] = &[3, b'w', b'e', b'b', 0xc0, 12];
        let a = response(
            7,
            0,
            A,
            &[(5, cname), (A, &[10, 0, 0, 7]), (A, &[10, 0, 0, 8])],
        );
        assert_eq!(
            answer(&a, 7, A),
            Some(Answer::Addresses(vec![ip("10.0.0.7"), ip("10.0.0.8")]))
        );
        assert_eq!(answer(&a, 8, A), None, "another question's id");
        let mut query_only = query(7, "x", A);
        assert_eq!(answer(&query_only, 7, A), None, "a query is no answer");
        query_only[2] |= 0x80;
        assert_eq!(answer(&query_only, 7, A), Some(Answer::NoAddress));
        let v6 = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        let aaaa = response(9, 0, AAAA, &[(AAAA, &v6)]);
        assert_eq!(
            answer(&aaaa, 9, AAAA),
            Some(Answer::Addresses(vec![ip("2001:db8::1")]))
        );
        assert_eq!(
            answer(&response(1, 3, A, &[]), 1, A),
            Some(Answer::NoSuchName)
        );
        assert_eq!(
            answer(&response(1, 2, A, &[]), 1, A),
            Some(Answer::Failed(2))
        );
        assert_eq!(
            answer(&response(1, 0, A, &[]), 1, A),
            Some(Answer::NoAddress)
        );
        // Cut in the middle of the second address: the first one stands.
        let cut = &a[..a.len() - 2];
        assert_eq!(
            answer(cut, 7, A),
            Some(Answer::Addresses(vec![ip("10.0.0.7")]))
        );
        assert_eq!(answer(&a[..5], 7, A), None);
    }
}
