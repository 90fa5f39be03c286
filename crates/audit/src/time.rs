//! RFC 3339 times: the log writes `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, microseconds) and reads
//! any RFC 3339 time (for `--since`/`--until`), as microseconds since the Unix epoch.

use std::time::{SystemTime, UNIX_EPOCH};

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// The current time as the log writes it.
pub fn now() -> String {
    format_micros(now_micros())
}

/// Microseconds since the Unix epoch (negative before it).
pub fn now_micros() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_micros()).unwrap_or(i64::MAX),
    }
}

/// Formats microseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
pub fn format_micros(micros: i64) -> String {
    let days = micros.div_euclid(MICROS_PER_DAY);
    let rest = micros.rem_euclid(MICROS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let secs = rest / 1_000_000;
    let frac = rest % 1_000_000;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{frac:06}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Parses an RFC 3339 time (`2026-12-03T07:00:00Z`, `...T07:00:00.5+01:00`; a bare date
/// `2026-12-03` is midnight UTC) to microseconds since the epoch. `None` if it is not one.
pub fn parse_micros(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let s = text.get(from..from + len)?;
        if !s.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') || !(1..=12).contains(&mo) {
        return None;
    }
    if d < 1 || d > days_in_month(y, mo) {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    if b.len() == 10 {
        return days.checked_mul(MICROS_PER_DAY);
    }
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) || b.get(13) != Some(&b':') || b.get(16) != Some(&b':') {
        return None;
    }
    let (h, mi, s) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            if i - start < 6 {
                frac = frac * 10 + i64::from(b.get(i).copied().unwrap_or(b'0') - b'0');
            }
            i += 1;
        }
        if i == start {
            return None;
        }
        for _ in (i - start)..6 {
            frac *= 10;
        }
    }
    let offset_secs = match b.get(i) {
        Some(b'Z' | b'z') if b.len() == i + 1 => 0,
        Some(sign @ (b'+' | b'-')) if b.len() == i + 6 && b.get(i + 3) == Some(&b':') => {
            let (oh, om) = (num(i + 1, 2)?, num(i + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let off = oh * 3600 + om * 60;
            if *sign == b'+' { off } else { -off }
        }
        _ => return None,
    };
    let secs = days.checked_mul(86_400)? + h * 3600 + mi * 60 + s - offset_secs;
    secs.checked_mul(1_000_000)?.checked_add(frac)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { yoe + era * 400 + 1 } else { yoe + era * 400 }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_micros(0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(format_micros(951_782_400_000_001), "2000-02-29T00:00:00.000001Z");
        assert_eq!(format_micros(1_796_281_199_123_456), "2026-12-03T06:59:59.123456Z");
        assert_eq!(format_micros(-1), "1969-12-31T23:59:59.999999Z");
    }

    #[test]
    fn parses_what_it_formats_and_offsets() {
        for m in [0, 1, 951_782_400_000_001, 1_796_281_199_123_456, -1, 4_102_444_800_000_000] {
            assert_eq!(parse_micros(&format_micros(m)), Some(m));
        }
        assert_eq!(parse_micros("2026-12-03T07:59:59.123456+01:00"), Some(1_796_281_199_123_456));
        assert_eq!(parse_micros("2026-12-03T06:59:59.1Z"), Some(1_796_281_199_100_000));
        assert_eq!(parse_micros("1970-01-02"), Some(MICROS_PER_DAY));
    }

    #[test]
    fn rejects_what_is_not_rfc3339() {
        for bad in ["", "2026-13-01", "2026-02-30", "2026-12-03T07:00", "2026-12-03T07:00:00", "yesterday", "2026-12-03T07:00:00.Z", "2026-12-03T07:00:00+1"] {
            assert_eq!(parse_micros(bad), None, "{bad}");
        }
    }
}
