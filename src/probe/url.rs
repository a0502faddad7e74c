//! What a probe checks, read from its URL: `http://HOST[:PORT][/PATH]` (a
//! GET), `tcp://HOST:PORT` (a connection), `unix:/PATH` (a connection to a
//! Unix socket) and `http+unix://%2FPATH[/PATH]` (a GET over a Unix
//! socket, its path percent-encoded as the host, as Python's
//! requests-unixsocket and docker-py write it). Anything else is one line
//! naming the URL and saying what is accepted.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

/// The forms a probe URL takes, for the messages that reject one.
const FORMS: &str = "use http://HOST[:PORT][/PATH], tcp://HOST:PORT, unix:/PATH, http+unix://%2FPATH[/PATH] or file:/PATH[?max-age=DUR]";

/// The longest Unix socket path the kernel takes (`sun_path`, less its
/// terminating NUL).
const SUN_PATH_MAX: usize = 107;

/// A host as the URL names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Host {
    Ip(IpAddr),
    /// A name, in lower case; a trailing dot (an absolute name, which the
    /// resolver's search domains do not extend) is kept.
    Name(String),
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
            Host::Ip(ip) => write!(f, "{ip}"),
            Host::Name(name) => f.write_str(name),
        }
    }
}

/// Where a probe connects to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    Inet {
        host: Host,
        port: u16,
    },
    /// A Unix socket: a path, or an abstract name written `@NAME`.
    Unix(String),
    /// A file that must exist, and with `max_age`, have been modified
    /// within it (a heartbeat the application touches).
    File {
        path: String,
        max_age: Option<Duration>,
    },
}

/// A probe's URL, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    /// The URL as it was given, for messages.
    pub text: String,
    pub endpoint: Endpoint,
    /// For an HTTP probe, the request's target (the path and the query);
    /// `None` for a probe that only connects.
    pub path: Option<String>,
}

impl Url {
    /// Reads a probe URL; the error names it and says what is accepted.
    pub fn parse(text: &str) -> Result<Url, String> {
        let bad = |why: String| format!("'{text}' is not a URL vigil can probe: {why}");
        // A fragment is the client's alone: never sent.
        let url = text.split('#').next().unwrap_or_default();
        let lower = url.to_ascii_lowercase();
        // `file:` and `unix:` take a path, after `//` or without it.
        let rest = url.get(5..).unwrap_or("");
        let rest = rest.strip_prefix("//").unwrap_or(rest);
        let local = match lower.get(..5) {
            Some("file:") => Some(file(rest)),
            Some("unix:") => Some(socket_path(rest).map(Endpoint::Unix)),
            _ => None,
        };
        if let Some(endpoint) = local {
            return Ok(Url {
                text: text.to_string(),
                endpoint: endpoint.map_err(bad)?,
                path: None,
            });
        }
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(bad(FORMS.to_string()));
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(at) => rest.split_at(at),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(bad(
                "user names and passwords are not supported in a probe URL".into(),
            ));
        }
        let scheme = scheme.to_ascii_lowercase();
        let (endpoint, http) = match scheme.as_str() {
            "http" => (inet(authority, Some(80)).map_err(bad)?, true),
            "tcp" => (inet(authority, None).map_err(bad)?, false),
            "http+unix" if authority.is_empty() => {
                return Err(bad(encoded_form(path)));
            }
            "http+unix" => {
                let decoded = percent_decode(authority).map_err(bad)?;
                (Endpoint::Unix(socket_path(&decoded).map_err(bad)?), true)
            }
            "https" => {
                return Err(bad(
                    "https is not supported (vigil carries no TLS): probe a plain HTTP port, or use tcp://HOST:PORT to check that the port takes connections".into(),
                ));
            }
            _ => return Err(bad(format!("unknown scheme '{scheme}': {FORMS}"))),
        };
        let path = if http {
            Some(request_target(path).map_err(bad)?)
        } else {
            if !matches!(path, "" | "/") {
                return Err(bad(format!(
                    "{scheme}:// checks a connection and takes no path ('{path}')"
                )));
            }
            None
        };
        Ok(Url {
            text: text.to_string(),
            endpoint,
            path,
        })
    }

    /// The `Host` header of an HTTP probe: the URL's host and port (the
    /// port left out when it is HTTP's own), `localhost` over a Unix socket.
    pub fn host_header(&self) -> String {
        match &self.endpoint {
            Endpoint::Inet { host, port: 80 } => host.to_string(),
            Endpoint::Inet { host, port } => format!("{host}:{port}"),
            Endpoint::Unix(_) | Endpoint::File { .. } => "localhost".to_string(),
        }
    }
}

/// `/PATH[?max-age=DUR]`: a file, and how fresh it must be.
fn file(text: &str) -> Result<Endpoint, String> {
    let (path, query) = match text.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (text, None),
    };
    if !path.starts_with('/') || path.len() < 2 {
        return Err(format!(
            "'{path}' is not a file's path: it must be absolute (file:/run/ready)"
        ));
    }
    let max_age = match query.map(|q| q.split_once('=')) {
        None => None,
        Some(Some(("max-age", age))) => Some(crate::text::parse_duration(age)?),
        Some(_) => {
            return Err(format!(
                "'?{}' is not ?max-age=DUR (file:/run/heartbeat?max-age=30s)",
                query.unwrap_or_default()
            ));
        }
    };
    let path = path.to_string();
    Ok(Endpoint::File { path, max_age })
}

/// `HOST[:PORT]`: a name, an IPv4 address or an IPv6 one in brackets; the
/// port, when `default` is none, must be given.
fn inet(authority: &str, default: Option<u16>) -> Result<Endpoint, String> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (ip, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("'[{rest}' has no closing ']'"))?;
        let ip: Ipv6Addr = ip
            .parse()
            .map_err(|_| format!("'{ip}' is not an IPv6 address"))?;
        let port = match after {
            "" => None,
            _ => Some(
                after
                    .strip_prefix(':')
                    .ok_or_else(|| format!("'{after}' after the address is not ':PORT'"))?,
            ),
        };
        (Host::Ip(IpAddr::V6(ip)), port)
    } else {
        let (name, port) = match authority.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (authority, None),
        };
        if port.is_some_and(|p| p.contains(':')) {
            return Err(format!(
                "an IPv6 address goes in brackets: [{authority}]:PORT"
            ));
        }
        (host(name)?, port)
    };
    let port = match (port, default) {
        (Some(port), _) => parse_port(port)?,
        (None, Some(port)) => port,
        (None, None) => return Err("a port is needed: tcp://HOST:PORT".into()),
    };
    Ok(Endpoint::Inet { host, port })
}

/// A host that is not in brackets: an IPv4 address or a name.
fn host(text: &str) -> Result<Host, String> {
    if text.is_empty() {
        return Err("the host is missing".into());
    }
    if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return text
            .parse::<Ipv4Addr>()
            .map(|ip| Host::Ip(IpAddr::V4(ip)))
            .map_err(|_| format!("'{text}' is not an IPv4 address"));
    }
    let name = text.to_ascii_lowercase();
    let relative = name.strip_suffix('.').unwrap_or(&name);
    let label_ok = |label: &str| {
        (1..=63).contains(&label.len())
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if relative.len() > 253 || !relative.split('.').all(label_ok) {
        return Err(format!(
            "'{text}' is not a host name (letters, digits, '-' and '_', in labels of 1 to 63 separated by dots)"
        ));
    }
    Ok(Host::Name(name))
}

fn parse_port(text: &str) -> Result<u16, String> {
    match text.parse::<u16>() {
        Ok(port) if port > 0 && text.bytes().all(|b| b.is_ascii_digit()) => Ok(port),
        _ => Err(format!("'{text}' is not a port: use 1 to 65535")),
    }
}

/// What follows the host, as the request line carries it: `/` when there
/// is nothing, a leading `/` before a bare query. A request line cannot
/// hold a space or a control character, and vigil sends ASCII only.
fn request_target(path: &str) -> Result<String, String> {
    if let Some(b) = path.bytes().find(|b| !(0x21..=0x7e).contains(b)) {
        let what = if b == b' ' {
            "a space"
        } else if b.is_ascii_control() {
            "a control character"
        } else {
            "a character that is not ASCII"
        };
        return Err(format!(
            "the path holds {what}: percent-encode it (a space is %20)"
        ));
    }
    Ok(match path {
        "" => "/".to_string(),
        p if p.starts_with('?') => format!("/{p}"),
        p => p.to_string(),
    })
}

/// A Unix socket's path: absolute, or an abstract name (`@NAME`), short
/// enough for the kernel.
fn socket_path(path: &str) -> Result<String, String> {
    if !(path.starts_with('/') || path.starts_with('@')) || path.len() < 2 {
        return Err(format!(
            "'{path}' is not a socket path: it must be absolute (/run/app.sock), or @NAME for an abstract socket"
        ));
    }
    if path.len() > SUN_PATH_MAX {
        return Err(format!(
            "the socket path is {} bytes long, and the kernel takes at most {SUN_PATH_MAX}",
            path.len()
        ));
    }
    if path.contains('\0') {
        return Err("the socket path holds a NUL byte".into());
    }
    Ok(path.to_string())
}

/// What to write instead of `http+unix:///run/x.sock/healthz`, the
/// socket's path where the URL's path goes (`path` is that part): the
/// socket, up to the first segment named like one (`.sock`, `.socket`),
/// percent-encoded in the host's place, then the rest as the URL's path.
/// Where no segment is named like a socket, where the socket ends cannot
/// be told, and the form is shown in general.
fn encoded_form(path: &str) -> String {
    let (segments, query) = match path.find('?') {
        Some(at) => path.split_at(at),
        None => (path, ""),
    };
    // Where a segment ends: at each '/', and at the end.
    let ends = segments.match_indices('/').map(|(at, _)| at);
    let split = ends.chain([segments.len()]).find(|&at| {
        let segment = segments.get(..at).unwrap_or_default().rsplit('/').next();
        segment.is_some_and(|s| s.ends_with(".sock") || s.ends_with(".socket"))
    });
    let general = "the socket's path goes in the host's place, each '/' written %2F (http+unix://%2FPATH%2FTO.sock/URLPATH)";
    let Some(split) = split.filter(|_| segments.starts_with('/')) else {
        return general.to_string();
    };
    let (socket, rest) = segments.split_at(split);
    let encoded = socket.replace('%', "%25").replace('/', "%2F");
    format!(
        "the socket's path goes in the host's place, each '/' written %2F: write http+unix://{encoded}{rest}{query}"
    )
}

/// `%2Frun%2Fapp.sock` as `/run/app.sock`.
fn percent_decode(text: &str) -> Result<String, String> {
    let mut out = Vec::with_capacity(text.len());
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        if b != b'%' {
            out.push(b);
            continue;
        }
        let hex = |b: Option<u8>| b.and_then(|b| char::from(b).to_digit(16));
        match (hex(bytes.next()), hex(bytes.next())) {
            (Some(high), Some(low)) => out.push((high * 16 + low) as u8),
            _ => {
                return Err(format!(
                    "'{text}' holds a '%' that is not followed by two hex digits"
                ));
            }
        }
    }
    String::from_utf8(out).map_err(|_| format!("'{text}' does not decode to UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inet(host: Host, port: u16) -> Endpoint {
        Endpoint::Inet { host, port }
    }

    fn ip(text: &str) -> Host {
        Host::Ip(text.parse().unwrap())
    }

    #[test]
    fn http_urls() {
        for (url, endpoint, path) in [
            (
                "http://127.0.0.1:8080/healthz",
                inet(ip("127.0.0.1"), 8080),
                "/healthz",
            ),
            (
                "http://localhost",
                inet(Host::Name("localhost".into()), 80),
                "/",
            ),
            (
                "HTTP://App.Example.:81?x=1",
                inet(Host::Name("app.example.".into()), 81),
                "/?x=1",
            ),
            (
                "http://[::1]:9000/a/b?c=d#frag",
                inet(ip("::1"), 9000),
                "/a/b?c=d",
            ),
            ("http://[::1]", inet(ip("::1"), 80), "/"),
            (
                "http://db_1:5/%20x",
                inet(Host::Name("db_1".into()), 5),
                "/%20x",
            ),
        ] {
            let t = Url::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(t.endpoint, endpoint, "{url}");
            assert_eq!(t.path.as_deref(), Some(path), "{url}");
            assert_eq!(t.text, url);
        }
    }

    #[test]
    fn connection_urls() {
        let t = Url::parse("tcp://10.0.0.1:5432").unwrap();
        assert_eq!(t.endpoint, inet(ip("10.0.0.1"), 5432));
        assert_eq!(t.path, None);
        assert_eq!(Url::parse("tcp://db:5432/").unwrap().path, None);
        for url in [
            "unix:/run/app.sock",
            "unix:///run/app.sock",
            "UNIX:/run/app.sock",
        ] {
            let t = Url::parse(url).unwrap();
            assert_eq!(t.endpoint, Endpoint::Unix("/run/app.sock".into()), "{url}");
            assert_eq!(t.path, None);
        }
        let t = Url::parse("unix:@vigil-test").unwrap();
        assert_eq!(t.endpoint, Endpoint::Unix("@vigil-test".into()));
    }

    #[test]
    fn http_over_a_unix_socket() {
        let t = Url::parse("http+unix://%2Frun%2Fapp.sock/healthz").unwrap();
        assert_eq!(t.endpoint, Endpoint::Unix("/run/app.sock".into()));
        assert_eq!(t.path.as_deref(), Some("/healthz"));
        assert_eq!(t.host_header(), "localhost");
        let t = Url::parse("http+unix://%2fa.sock").unwrap();
        assert_eq!(t.endpoint, Endpoint::Unix("/a.sock".into()));
        assert_eq!(t.path.as_deref(), Some("/"));
    }

    #[test]
    fn files_and_heartbeats() {
        for (url, path, max_age) in [
            ("file:/run/ready", "/run/ready", None),
            ("file:///run/ready", "/run/ready", None),
            (
                "FILE:/tmp/hb?max-age=30s",
                "/tmp/hb",
                Some(std::time::Duration::from_secs(30)),
            ),
        ] {
            let t = Url::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
            let file = Endpoint::File {
                path: path.into(),
                max_age,
            };
            assert_eq!((t.endpoint, t.path), (file, None), "{url}");
        }
        for (url, why) in [
            ("file:", "not a file's path"),
            ("file:run/ready", "must be absolute"),
            ("file:/tmp/hb?age=30s", "is not ?max-age=DUR"),
            ("file:/tmp/hb?max-age=soon", "'soon' is not a duration"),
        ] {
            let e = Url::parse(url).expect_err(url);
            assert!(e.contains(why), "{url}: {e}");
        }
    }

    #[test]
    fn the_host_header_names_the_port_unless_it_is_80() {
        let header = |url| Url::parse(url).unwrap().host_header();
        assert_eq!(header("http://localhost/"), "localhost");
        assert_eq!(header("http://127.0.0.1:8080/"), "127.0.0.1:8080");
        assert_eq!(header("http://[::1]:8080/"), "[::1]:8080");
    }

    #[test]
    fn malformed_urls_are_named_with_why() {
        for (url, why) in [
            ("", "use http://"),
            ("localhost:8080", "use http://"),
            ("127.0.0.1:8080/healthz", "use http://"),
            ("ftp://host/", "unknown scheme 'ftp'"),
            ("https://localhost/", "https is not supported"),
            ("http://", "the host is missing"),
            ("http://:8080/", "the host is missing"),
            ("http://host:0/", "'0' is not a port"),
            ("http://host:65536/", "'65536' is not a port"),
            ("http://host:+80/", "'+80' is not a port"),
            ("http://host:/", "'' is not a port"),
            ("http://256.1.1.1/", "'256.1.1.1' is not an IPv4 address"),
            ("http://::1:80/", "an IPv6 address goes in brackets"),
            ("http://[::1/", "has no closing ']'"),
            ("http://[::g]/", "'::g' is not an IPv6 address"),
            ("http://[::1]x/", "is not ':PORT'"),
            ("http://a..b/", "is not a host name"),
            ("http://a b/", "is not a host name"),
            ("http://user:pw@host/", "user names and passwords"),
            ("http://host/a b", "the path holds a space"),
            ("http://host/\u{e9}", "not ASCII"),
            ("http://host/a\tb", "a control character"),
            ("tcp://host", "a port is needed"),
            ("tcp://host:1/path", "takes no path"),
            ("unix:run/app.sock", "not a socket path"),
            ("unix:", "not a socket path"),
            ("http+unix://run.sock/", "not a socket path"),
            ("http+unix://%2Fa%2/", "not followed by two hex digits"),
        ] {
            let e = Url::parse(url).expect_err(url);
            assert!(
                e.starts_with(&format!("'{url}' is not a URL vigil can probe: ")),
                "{e}"
            );
            assert!(e.contains(why), "{url}: {e}");
        }
        let long = format!("unix:/{}", "x".repeat(SUN_PATH_MAX));
        assert!(Url::parse(&long).unwrap_err().contains("at most 107"));
    }

    /// `http+unix:///run/x.sock/healthz`, the socket's path where curl's
    /// habit puts it, is told the form it takes, which then works.
    #[test]
    fn a_socket_path_in_the_url_path_is_shown_encoded() {
        for (url, want) in [
            (
                "http+unix:///run/x.sock/healthz",
                "http+unix://%2Frun%2Fx.sock/healthz",
            ),
            ("http+unix:///run/x.sock", "http+unix://%2Frun%2Fx.sock"),
            (
                "http+unix:///var/run/app.socket/v1/ping?x=1",
                "http+unix://%2Fvar%2Frun%2Fapp.socket/v1/ping?x=1",
            ),
        ] {
            let e = Url::parse(url).expect_err(url);
            assert!(e.contains(&format!("write {want}")), "{url}: {e}");
            let fixed = Url::parse(want).expect(want);
            let wanted_socket = want
                .trim_start_matches("http+unix://")
                .split('/')
                .next()
                .unwrap()
                .replace("%2F", "/");
            assert_eq!(fixed.endpoint, Endpoint::Unix(wanted_socket), "{want}");
        }
        // Without a socket's name to go by, the form is shown in general.
        let e = Url::parse("http+unix:///run/app/healthz").unwrap_err();
        assert!(e.contains("http+unix://%2FPATH%2FTO.sock/URLPATH"), "{e}");
    }
}
