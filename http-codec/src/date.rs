//! A cached IMF-fixdate for the `Date` response header (RFC 9110 §5.6.7).
//!
//! Formatting a date costs far more than the rest of a small response, and the value only
//! changes once per second, so the server renders it at most once per second and every
//! response copies 29 bytes. The cache never reads the clock itself: the caller refreshes it
//! from a timer or from one clock read per batch of responses.

use std::time::{SystemTime, UNIX_EPOCH};

/// Length of an IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
pub const DATE_LEN: usize = 29;

/// The latest second IMF-fixdate can show (9999-12-31T23:59:59Z); later times are clamped.
const MAX_SECS: u64 = 253_402_300_799;

/// A `Date` value rendered at most once per second.
///
/// # Examples
///
/// ```
/// use bufslab_http::DateCache;
/// let mut cache = DateCache::from_unix(784_111_777);
/// assert_eq!(cache.get(), b"Sun, 06 Nov 1994 08:49:37 GMT");
/// assert!(!cache.refresh_unix(784_111_777)); // same second: nothing re-rendered
/// assert!(cache.refresh_unix(784_111_778));
/// assert_eq!(cache.get(), b"Sun, 06 Nov 1994 08:49:38 GMT");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DateCache {
    secs: u64,
    /// `"\r\nDate: "` + date: the response encoder writes this with one copy.
    line: [u8; 8 + DATE_LEN],
}

const DATE_PREFIX: &[u8; 8] = b"\r\nDate: ";

impl DateCache {
    /// A cache showing `now`.
    #[must_use]
    pub fn new(now: SystemTime) -> DateCache {
        DateCache::from_unix(unix_secs(now))
    }

    /// A cache showing the given Unix time (seconds).
    #[must_use]
    pub fn from_unix(secs: u64) -> DateCache {
        let mut c = DateCache {
            secs: u64::MAX,
            line: [0; 8 + DATE_LEN],
        };
        c.line[..8].copy_from_slice(DATE_PREFIX);
        c.render(secs.min(MAX_SECS));
        c
    }

    /// Updates the cache to `now`; re-renders only if the second changed. Returns whether it
    /// did.
    pub fn refresh(&mut self, now: SystemTime) -> bool {
        self.refresh_unix(unix_secs(now))
    }

    /// Updates the cache to a Unix time (seconds); re-renders only if the second changed.
    pub fn refresh_unix(&mut self, secs: u64) -> bool {
        let secs = secs.min(MAX_SECS);
        if secs == self.secs {
            return false;
        }
        self.render(secs);
        true
    }

    /// The Unix second currently shown.
    #[must_use]
    pub fn unix_secs(&self) -> u64 {
        self.secs
    }

    /// The rendered IMF-fixdate.
    #[must_use]
    pub fn get(&self) -> &[u8; DATE_LEN] {
        let mut out = &[0u8; DATE_LEN];
        if let Some(d) = self.line.last_chunk::<DATE_LEN>() {
            out = d;
        }
        out
    }

    /// `"\r\nDate: <date>"`, as the response encoder writes it: a header line with the CRLF of
    /// the line before it, for a writer that puts its head together from precomputed pieces.
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_http::DateCache;
    /// let date = DateCache::from_unix(784_111_777);
    /// assert_eq!(date.line(), b"\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT");
    /// ```
    #[must_use]
    pub fn line(&self) -> &[u8; 8 + DATE_LEN] {
        &self.line
    }

    fn render(&mut self, secs: u64) {
        self.secs = secs;
        let d = format_imf_fixdate(secs);
        self.line[8..].copy_from_slice(&d);
    }
}

fn unix_secs(t: SystemTime) -> u64 {
    // A clock before 1970 is clamped to the epoch rather than failing.
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Renders `secs` since the Unix epoch (clamped to year 9999) as an IMF-fixdate.
#[must_use]
pub fn format_imf_fixdate(secs: u64) -> [u8; DATE_LEN] {
    const DAYS: [&[u8; 3]; 7] = [b"Thu", b"Fri", b"Sat", b"Sun", b"Mon", b"Tue", b"Wed"];
    const MONTHS: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    let secs = secs.min(MAX_SECS);
    let days = secs / 86_400;
    let sod = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    // 1970-01-01 was a Thursday, DAYS[0].
    let wd = DAYS[(days % 7) as usize];
    let mon = MONTHS[(m - 1) as usize % 12];
    let (hh, mm, ss) = (sod / 3600, sod / 60 % 60, sod % 60);
    let digit = |v: u64| b'0' + (v % 10) as u8;
    [
        wd[0],
        wd[1],
        wd[2],
        b',',
        b' ',
        digit(d / 10),
        digit(d),
        b' ',
        mon[0],
        mon[1],
        mon[2],
        b' ',
        digit(y / 1000),
        digit(y / 100),
        digit(y / 10),
        digit(y),
        b' ',
        digit(hh / 10),
        digit(hh),
        b':',
        digit(mm / 10),
        digit(mm),
        b':',
        digit(ss / 10),
        digit(ss),
        b' ',
        b'G',
        b'M',
        b'T',
    ]
}

/// Days since 1970-01-01 to (year, month 1..=12, day 1..=31), proleptic Gregorian.
///
/// Howard Hinnant's `civil_from_days`, restricted to non-negative day counts: shifting the
/// epoch to 0000-03-01 puts the leap day at the end of the year, so each 400-year era has a
/// fixed shape and the month falls out of a linear formula.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097; // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March = 0
    let d = doy - (153 * mp + 2) / 5 + 1; // [1, 31]
    let m = if mp < 10 { mp + 3 } else { mp - 9 }; // [1, 12]
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 9110 §5.6.7: the example date and calendar edge cases.
    #[test]
    fn rfc9110_5_6_7_imf_fixdate_examples() {
        let cases: &[(u64, &[u8])] = &[
            (0, b"Thu, 01 Jan 1970 00:00:00 GMT"),
            (784_111_777, b"Sun, 06 Nov 1994 08:49:37 GMT"),
            (951_782_400, b"Tue, 29 Feb 2000 00:00:00 GMT"),
            (1_709_164_800, b"Thu, 29 Feb 2024 00:00:00 GMT"),
            (4_107_542_399, b"Sun, 28 Feb 2100 23:59:59 GMT"),
            (4_107_542_400, b"Mon, 01 Mar 2100 00:00:00 GMT"),
            (1_735_689_599, b"Tue, 31 Dec 2024 23:59:59 GMT"),
            (MAX_SECS, b"Fri, 31 Dec 9999 23:59:59 GMT"),
            (u64::MAX, b"Fri, 31 Dec 9999 23:59:59 GMT"),
        ];
        for &(secs, want) in cases {
            assert_eq!(&format_imf_fixdate(secs)[..], want, "{secs}");
        }
    }

    #[test]
    fn civil_from_days_matches_day_by_day_walk() {
        // Walk every day for 1000 years and check continuity of the calendar.
        let (mut y, mut m, mut d) = (1970u64, 1u64, 1u64);
        for days in 0..365_250u64 {
            assert_eq!(civil_from_days(days), (y, m, d), "day {days}");
            let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
            let mdays = [
                31,
                if leap { 29 } else { 28 },
                31,
                30,
                31,
                30,
                31,
                31,
                30,
                31,
                30,
                31,
            ];
            d += 1;
            if d > mdays[(m - 1) as usize] {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
        }
    }

    #[test]
    fn cache_renders_once_per_second() {
        let mut c = DateCache::from_unix(10);
        assert!(!c.refresh_unix(10));
        assert!(c.refresh_unix(11));
        assert_eq!(c.unix_secs(), 11);
        assert_eq!(&c.line()[..8], b"\r\nDate: ");
        assert_eq!(&c.line()[8..], &c.get()[..]);
        let now = DateCache::new(SystemTime::now());
        assert_eq!(&now.get()[26..], b"GMT");
    }
}
