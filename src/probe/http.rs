//! The little of HTTP/1.1 a probe needs: one GET, and the status line of
//! the answer. The body is never read: the status decides.

use crate::text::escape_bytes;

use super::url::Url;

/// The most of an answer that is read, interim (1xx) answers included:
/// a final status line that has not come within it never will from a
/// server worth probing, and a peer that sends more (endless interim
/// answers, an endless line) costs vigil this much memory and no more.
pub const HEAD_MAX: usize = 2048;

/// The request: `Connection: close`, so that the server does not keep the
/// connection open for more.
pub fn request(target: &Url, path: &str) -> Vec<u8> {
    format!(
        "GET {path} HTTP/1.1\r\nHost: {}\r\nUser-Agent: vigil/{}\r\nAccept: */*\r\nConnection: close\r\n\r\n",
        target.host_header(),
        env!("CARGO_PKG_VERSION")
    )
    .into_bytes()
}

/// What the bytes read so far say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Head {
    /// Not a whole status line yet.
    Incomplete,
    /// The final status: its code and reason phrase (printable ASCII only,
    /// shortened).
    Status(u16, String),
    /// Not an HTTP answer: how it starts, escaped.
    NotHttp(String),
    /// `HEAD_MAX` bytes and no final status line in them.
    TooLong,
}

/// Reads the status line of an answer, skipping interim (1xx) answers,
/// which a server may send before the final one (103 Early Hints). One
/// pass over at most `HEAD_MAX` bytes, however many interim answers they
/// hold.
pub fn head(answer: &[u8]) -> Head {
    let mut rest = answer;
    loop {
        let Some(end) = rest.iter().position(|&b| b == b'\n') else {
            if !b"HTTP/".starts_with(rest.get(..5.min(rest.len())).unwrap_or_default()) {
                return not_http(rest);
            }
            return incomplete(answer);
        };
        let line = rest.get(..end).unwrap_or_default();
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some((code, reason)) = status_line(line) else {
            return not_http(rest);
        };
        if !(100..200).contains(&code) {
            let reason: String = reason
                .iter()
                .filter(|b| (0x20..=0x7e).contains(*b))
                .take(64)
                .map(|&b| char::from(b))
                .collect();
            return Head::Status(code, reason.trim().to_string());
        }
        // An interim answer ends with an empty line; the final one follows.
        let headers = rest.get(end + 1..).unwrap_or_default();
        match blank_line_end(headers) {
            Some(after) => rest = headers.get(after..).unwrap_or_default(),
            None => return incomplete(answer),
        }
    }
}

/// `HTTP/1.x CODE REASON`: the code (100 to 599) and the reason's bytes.
fn status_line(line: &[u8]) -> Option<(u16, &[u8])> {
    let mut words = line.splitn(3, |&b| b == b' ');
    let version = words.next().unwrap_or_default();
    let code = words.next().unwrap_or_default();
    let reason = words.next().unwrap_or_default();
    let version_ok = version.starts_with(b"HTTP/1.") && version.len() == 8;
    let digits = code.len() == 3 && code.iter().all(u8::is_ascii_digit);
    let code = std::str::from_utf8(code).ok()?.parse::<u16>().ok()?;
    (digits && version_ok && (100..600).contains(&code)).then_some((code, reason))
}

/// More is needed, unless the answer has had all the room it gets.
fn incomplete(answer: &[u8]) -> Head {
    if answer.len() >= HEAD_MAX {
        Head::TooLong
    } else {
        Head::Incomplete
    }
}

/// Where the bytes after the first empty line start (the headers of an
/// interim answer end there).
fn blank_line_end(headers: &[u8]) -> Option<usize> {
    let mut at = 0;
    loop {
        let rest = headers.get(at..)?;
        let end = rest.iter().position(|&b| b == b'\n')?;
        let line = rest.get(..end)?;
        if line.is_empty() || line == b"\r" {
            return Some(at + end + 1);
        }
        at += end + 1;
    }
}

fn not_http(answer: &[u8]) -> Head {
    let start = answer.get(..32.min(answer.len())).unwrap_or_default();
    Head::NotHttp(escape_bytes(start))
}

/// Whether a status is healthy: 2xx and 3xx, as Docker's and Kubernetes'
/// HTTP checks count it (a redirect is not followed).
pub fn healthy(code: u16) -> bool {
    (200..400).contains(&code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, reason: &str) -> Head {
        Head::Status(code, reason.to_string())
    }

    #[test]
    fn the_request_is_one_get_that_closes() {
        let t = Url::parse("http://127.0.0.1:8080/healthz?x=1").unwrap();
        let r = String::from_utf8(request(&t, t.path.as_deref().unwrap())).unwrap();
        assert!(
            r.starts_with("GET /healthz?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"),
            "{r}"
        );
        assert!(r.contains("\r\nConnection: close\r\n"), "{r}");
        assert!(r.ends_with("\r\n\r\n"), "{r}");
    }

    #[test]
    fn status_lines() {
        for (answer, expected) in [
            (
                &b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"[..],
                status(200, "OK"),
            ),
            (
                b"HTTP/1.0 503 Service Unavailable\r\n",
                status(503, "Service Unavailable"),
            ),
            (b"HTTP/1.1 204\r\n", status(204, "")),
            (b"HTTP/1.1 301 Moved\n", status(301, "Moved")),
            (
                b"HTTP/1.1 404 Not\x1b[31m Found\r\n",
                status(404, "Not[31m Found"),
            ),
            (
                b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\n",
                status(200, "OK"),
            ),
            (
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 500 Oops\r\n",
                status(500, "Oops"),
            ),
        ] {
            assert_eq!(
                head(answer),
                expected,
                "{:?}",
                String::from_utf8_lossy(answer)
            );
        }
    }

    #[test]
    fn incomplete_answers_wait_for_more() {
        for answer in [
            &b""[..],
            b"H",
            b"HTTP/1.1",
            b"HTTP/1.1 200 OK",
            b"HTTP/1.1 100 Continue\r\n",
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 2",
        ] {
            assert_eq!(
                head(answer),
                Head::Incomplete,
                "{:?}",
                String::from_utf8_lossy(answer)
            );
        }
    }

    #[test]
    fn what_is_not_http_says_how_it_starts() {
        for (answer, start) in [
            (&b"SSH-2.0-OpenSSH_9.2\r\n"[..], "SSH-2.0-OpenSSH_9.2\\r\\n"),
            (b"+OK redis\r\n", "+OK redis\\r\\n"),
            (b"\x16\x03\x01\xff", "\\u{16}\\u{3}\\u{1}\\xff"),
            (b"HTTP/2 200\r\n", "HTTP/2 200\\r\\n"),
            (b"HTTP/1.1 20 OK\r\n", "HTTP/1.1 20 OK\\r\\n"),
            (b"HTTP/1.1 0200 OK\r\n", "HTTP/1.1 0200 OK\\r\\n"),
            (b"HTTP/1.1 600 What\r\n", "HTTP/1.1 600 What\\r\\n"),
        ] {
            assert_eq!(head(answer), Head::NotHttp(start.to_string()));
        }
    }

    /// However the room is filled, a full answer without a final status
    /// is over: an endless line, endless interim answers, endless headers.
    #[test]
    fn a_full_answer_without_a_final_status_is_too_long() {
        let mut line = b"HTTP/1.1 200 ".to_vec();
        line.resize(HEAD_MAX, b'x');
        let interim = b"HTTP/1.1 100 Continue\r\n\r\n".repeat(HEAD_MAX / 20);
        let early = b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n".repeat(HEAD_MAX / 40);
        let mut headers = b"HTTP/1.1 100 Continue\r\n".to_vec();
        while headers.len() < HEAD_MAX {
            headers.extend_from_slice(b"X-Pad: yes\r\n");
        }
        for answer in [line, interim, early, headers] {
            assert!(answer.len() >= HEAD_MAX);
            assert_eq!(
                head(&answer[..HEAD_MAX]),
                Head::TooLong,
                "{:?}",
                String::from_utf8_lossy(&answer[..64])
            );
        }
    }

    #[test]
    fn two_and_three_hundreds_are_healthy() {
        assert!(healthy(200) && healthy(204) && healthy(302) && healthy(399));
        assert!(!healthy(199) && !healthy(400) && !healthy(404) && !healthy(503));
    }
}
