//! Wall-clock instants for records, written as RFC 3339 in UTC with
//! milliseconds (`2026-12-01T18:06:20.123Z`) by humantime.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// An instant as milliseconds since the Unix epoch. A clock set before
/// 1970 reads as the epoch; one past the year 9999 (which RFC 3339 cannot
/// write) as its last millisecond.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp {
    millis: u64,
}

/// `2026-12-01T18:06:20.123Z`, always 24 bytes.
///
/// humantime's writer cannot fail here, and nothing of it can panic: it
/// refuses an instant before the epoch or past the year 9999, and
/// `Timestamp` holds neither (`from_unix`).
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let since = Duration::from_millis(self.millis);
        let at = UNIX_EPOCH.checked_add(since).unwrap_or(UNIX_EPOCH);
        humantime::format_rfc3339_millis(at).fmt(f)
    }
}

/// 9999-12-31T23:59:59Z: the last second RFC 3339 can write.
const LAST_SECOND: u64 = 253_402_300_799;

impl Timestamp {
    /// Now, from `CLOCK_REALTIME` (which `SystemTime` reads through the
    /// vDSO: no system call).
    pub fn now() -> Timestamp {
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Timestamp::from_unix(since.as_secs(), since.subsec_millis())
    }

    pub fn from_unix(secs: u64, millis: u32) -> Timestamp {
        let millis = secs
            .saturating_mul(1000)
            .saturating_add(u64::from(millis.min(999)));
        Timestamp {
            millis: millis.min(LAST_SECOND * 1000 + 999),
        }
    }

    /// The instant `ago` before this one: when something the monotonic
    /// clock timed happened (a stop signal's arrival, for the exit record).
    pub fn minus(self, ago: Duration) -> Timestamp {
        let ago = u64::try_from(ago.as_millis()).unwrap_or(u64::MAX);
        Timestamp {
            millis: self.millis.saturating_sub(ago),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: Timestamp) -> String {
        t.to_string()
    }

    #[test]
    fn known_instants() {
        let cases = [
            (0, 0, "1970-01-01T00:00:00.000Z"),
            (951_782_400, 1, "2000-02-29T00:00:00.001Z"),
            (951_868_799, 999, "2000-02-29T23:59:59.999Z"),
            (951_868_800, 0, "2000-03-01T00:00:00.000Z"),
            (4_107_456_000, 0, "2100-02-28T00:00:00.000Z"),
            (4_107_542_400, 0, "2100-03-01T00:00:00.000Z"),
            (1_709_164_800, 0, "2024-02-29T00:00:00.000Z"),
            (1_735_689_599, 500, "2024-12-31T23:59:59.500Z"),
            (1_796_148_380, 123, "2026-12-01T18:06:20.123Z"),
            (LAST_SECOND, 999, "9999-12-31T23:59:59.999Z"),
        ];
        for (secs, millis, expected) in cases {
            assert_eq!(text(Timestamp::from_unix(secs, millis)), expected, "{secs}");
        }
        assert_eq!(
            text(Timestamp::from_unix(u64::MAX, 0)),
            "9999-12-31T23:59:59.999Z"
        );
    }

    #[test]
    fn minus_goes_back_in_milliseconds() {
        let t = Timestamp::from_unix(1_796_148_380, 123);
        assert_eq!(
            text(t.minus(Duration::from_millis(1_124))),
            "2026-12-01T18:06:18.999Z"
        );
        assert_eq!(t.minus(Duration::from_secs(u64::MAX)), Timestamp::default());
    }

    #[test]
    fn now_is_after_this_code_was_written() {
        assert!(Timestamp::now() > Timestamp::from_unix(1_767_225_600, 0));
    }
}
