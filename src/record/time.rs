//! Wall-clock instants for records, written as RFC 3339 in UTC with
//! milliseconds (`2026-12-01T18:06:20.123Z`), with integer arithmetic only
//! (no date library, no floats).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::put;

/// An instant as seconds and milliseconds since the Unix epoch. A clock set
/// before 1970 reads as the epoch; one past the year 9999 (which RFC 3339
/// cannot write) as its last millisecond.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp {
    secs: u64,
    millis: u32,
}

/// `2026-12-01T18:06:20.123Z`, for text lines.
impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut text = Vec::with_capacity(24);
        self.write_rfc3339(&mut text);
        f.write_str(std::str::from_utf8(&text).unwrap_or_default())
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
        if secs > LAST_SECOND {
            return Timestamp {
                secs: LAST_SECOND,
                millis: 999,
            };
        }
        Timestamp {
            secs,
            millis: millis.min(999),
        }
    }

    /// The instant `ago` before this one: when something the monotonic
    /// clock timed happened (a stop signal's arrival, for the exit record).
    pub fn minus(self, ago: Duration) -> Timestamp {
        let total = self.secs * 1000 + u64::from(self.millis);
        let ago = u64::try_from(ago.as_millis()).unwrap_or(u64::MAX);
        let at = total.saturating_sub(ago);
        Timestamp::from_unix(at / 1000, (at % 1000) as u32)
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, always 24 bytes.
    pub fn write_rfc3339(self, out: &mut Vec<u8>) {
        let days = self.secs / 86_400;
        let of_day = self.secs % 86_400;
        let (year, month, day) = civil_from_days(days);
        let fields: [(u64, usize); 7] = [
            (year, 4),
            (month, 2),
            (day, 2),
            (of_day / 3600, 2),
            (of_day / 60 % 60, 2),
            (of_day % 60, 2),
            (self.millis.into(), 3),
        ];
        let separators = [b'-', b'-', b'T', b':', b':', b'.', b'Z'];
        let mut text = [0u8; 24];
        let mut at = 0;
        for ((mut value, width), separator) in fields.into_iter().zip(separators) {
            for place in (at..at + width).rev() {
                if let Some(digit) = text.get_mut(place) {
                    *digit = b'0' + (value % 10) as u8;
                }
                value /= 10;
            }
            if let Some(slot) = text.get_mut(at + width) {
                *slot = separator;
            }
            at += width + 1;
        }
        put(out, &text);
    }
}

/// The proleptic Gregorian date (year, month 1-12, day 1-31) of a number
/// of days since 1970-01-01: Howard Hinnant's `civil_from_days`, for days
/// on or after the epoch. The calendar is counted in 400-year eras starting
/// on 0000-03-01, so that the leap day is the last day of each year.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // 0000-03-01 to 1970-01-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Months counted from March: 0 is March, 11 is February.
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: Timestamp) -> String {
        let mut out = Vec::new();
        t.write_rfc3339(&mut out);
        String::from_utf8(out).unwrap()
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

    /// Every day from 1970 to 2400 against a calendar counted day by day.
    #[test]
    fn every_day_against_a_counted_calendar() {
        let (mut year, mut month, mut day) = (1970u64, 1u64, 1u64);
        let leap =
            |y: u64| (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400);
        for days in 0..(431 * 366) {
            assert_eq!(civil_from_days(days), (year, month, day), "day {days}");
            let length = match month {
                2 if leap(year) => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            day += 1;
            if day > length {
                day = 1;
                month += 1;
                if month > 12 {
                    month = 1;
                    year += 1;
                }
            }
        }
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
