//! Host names to addresses, without NSS (vigil is static) and without
//! DNS: `localhost`, then `/etc/hosts`. A probe's target is the container
//! itself or a sidecar in its network namespace, which Docker, podman and
//! Kubernetes all name in the container's /etc/hosts; a DNS client would
//! put a network parser in PID 1 for no recipe that needs it.

use std::fs::File;
use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::unix::fs::OpenOptionsExt;

const HOSTS: &str = "/etc/hosts";

/// The most of /etc/hosts that is read: the file is read when a probe
/// starts, inside the loop, so neither a huge file nor an endless one
/// (a FIFO, a device) may hold it. Container engines write a few lines.
pub const HOSTS_MAX: u64 = 64 * 1024;

/// What `localhost` is, whatever /etc/hosts says (RFC 6761): IPv4 first,
/// which more servers listen on.
const LOOPBACK: [IpAddr; 2] = [
    IpAddr::V4(Ipv4Addr::LOCALHOST),
    IpAddr::V6(Ipv6Addr::LOCALHOST),
];

/// The addresses of `name` (lower case; a trailing dot allowed): none
/// when neither `localhost` nor /etc/hosts knows it.
pub fn lookup(name: &str) -> Vec<IpAddr> {
    let name = name.strip_suffix('.').unwrap_or(name);
    if name == "localhost" || name.ends_with(".localhost") {
        return LOOPBACK.to_vec();
    }
    in_hosts(&read_hosts(), name)
}

/// /etc/hosts, at most `HOSTS_MAX` bytes of it, read without waiting: a
/// FIFO without a writer reads as empty rather than blocking.
fn read_hosts() -> Vec<u8> {
    let mut text = Vec::new();
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(HOSTS);
    if let Ok(file) = file {
        let _ = file.take(HOSTS_MAX).read_to_end(&mut text);
    }
    text
}

/// The addresses `hosts` gives `name`, in the file's order.
pub fn in_hosts(hosts: &[u8], name: &str) -> Vec<IpAddr> {
    let mut found = Vec::new();
    for line in hosts.split(|&b| b == b'\n') {
        let line = line.split(|&b| b == b'#').next().unwrap_or_default();
        let mut words = line
            .split(u8::is_ascii_whitespace)
            .filter(|w| !w.is_empty());
        // An address with a zone (fe80::1%eth0) does not parse: skipped.
        let ip = words
            .next()
            .and_then(|w| std::str::from_utf8(w).ok()?.parse().ok());
        let Some(ip) = ip else {
            continue;
        };
        if words.any(|w| w.eq_ignore_ascii_case(name.as_bytes())) && !found.contains(&ip) {
            found.push(ip);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn hosts_file() {
        let hosts = b"127.0.0.1\tlocalhost\n# 10.9.9.9 app\n::1 localhost ip6-localhost\n\
                     172.17.0.2 a1b2c3 App.internal app # the container\n\
                     fe80::1%eth0 app\nnonsense app\n10.0.0.7 app\n172.17.0.2 app\n\
                     10.0.0.8 \xff\xfe app\n";
        assert_eq!(
            in_hosts(hosts, "app"),
            [ip("172.17.0.2"), ip("10.0.0.7"), ip("10.0.0.8")]
        );
        assert_eq!(in_hosts(hosts, "app.internal"), [ip("172.17.0.2")]);
        assert_eq!(in_hosts(hosts, "ip6-localhost"), [ip("::1")]);
        assert!(in_hosts(hosts, "other").is_empty());
        assert!(in_hosts(b"", "app").is_empty());
    }

    #[test]
    fn localhost_needs_no_file() {
        assert_eq!(lookup("localhost"), LOOPBACK);
        assert_eq!(lookup("web.localhost."), LOOPBACK);
    }
}
