//! Launch weeks: Monday to Sunday, in UTC. A week is named by its Monday; any date snaps to the Monday
//! of its week, and `this`, `next`, `last` are read against the clock's today.

use crate::ValidationError;
use chrono::{DateTime, Datelike, Days, NaiveDate, NaiveTime, Utc};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LaunchWeek(NaiveDate);

impl LaunchWeek {
    /// What [`LaunchWeek::parse`] accepts, as a regular expression (for the API's schema).
    pub const PARAM_PATTERN: &'static str = "^(this|next|last|[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01]))$";

    /// The longest week parameter the spec allows (`YYYY-MM-DD`).
    pub const MAX_PARAM_LEN: usize = 10;

    /// How far ahead the calendar reaches, in weeks from this one: the furthest week it shows and the
    /// furthest a launch can be bought for.
    pub const MAX_WEEKS_AHEAD: i64 = 52;

    /// The week that contains `date`.
    pub fn containing(date: NaiveDate) -> Self {
        let back = u64::from(date.weekday().num_days_from_monday());
        Self(date.checked_sub_days(Days::new(back)).unwrap_or(date))
    }

    /// The week that contains the instant `now` (UTC).
    pub fn of(now: DateTime<Utc>) -> Self {
        Self::containing(now.date_naive())
    }

    /// Reads a week parameter: `this`, `next`, `last` or a `YYYY-MM-DD` date snapped to its Monday.
    /// `field` names the parameter in the error (`week`).
    pub fn parse(raw: &str, today: NaiveDate, field: &str) -> Result<Self, ValidationError> {
        if raw.chars().count() > Self::MAX_PARAM_LEN {
            return Err(ValidationError::new(field, "longer than 10 characters"));
        }
        let this = Self::containing(today);
        match raw {
            "this" => Ok(this),
            "next" => Ok(this.plus_weeks(1)),
            "last" => Ok(this.plus_weeks(-1)),
            other => NaiveDate::parse_from_str(other, "%Y-%m-%d")
                .ok()
                .filter(|_| other.len() == 10)
                .map(Self::containing)
                .ok_or_else(|| ValidationError::new(field, "must be this, next, last or a date YYYY-MM-DD")),
        }
    }

    pub fn monday(self) -> NaiveDate {
        self.0
    }

    pub fn sunday(self) -> NaiveDate {
        self.0.checked_add_days(Days::new(6)).unwrap_or(self.0)
    }

    /// The week `n` weeks later (negative: earlier). Saturates at the calendar's ends.
    #[must_use]
    pub fn plus_weeks(self, n: i64) -> Self {
        let days = Days::new(n.unsigned_abs().saturating_mul(7));
        let d = if n >= 0 { self.0.checked_add_days(days) } else { self.0.checked_sub_days(days) };
        Self(d.unwrap_or(self.0))
    }

    /// Whole weeks from `self` to `other` (positive when `other` is later).
    pub fn weeks_until(self, other: Self) -> i64 {
        (other.0 - self.0).num_days() / 7
    }

    /// Monday 00:00:00 UTC: the instant the week begins and its launches go live.
    pub fn starts_at(self) -> DateTime<Utc> {
        self.0.and_time(NaiveTime::MIN).and_utc()
    }

    /// The instant the next week begins (the end of this one, exclusive).
    pub fn ends_at(self) -> DateTime<Utc> {
        self.plus_weeks(1).starts_at()
    }

    pub fn contains(self, instant: DateTime<Utc>) -> bool {
        instant >= self.starts_at() && instant < self.ends_at()
    }
}

impl fmt::Display for LaunchWeek {
    /// The Monday as `YYYY-MM-DD`, chrono's own date text, its ten characters written at once.
    /// A list's answer writes one per row: `format("%Y-%m-%d")` was 4 % of an uncached board read,
    /// and chrono's display, a character at a time (its `to_string` grown two or three times), some
    /// 475 instructions a date, 3 % of a page of the weekly board (callgrind, docs/BENCHMARKS.md).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (year, month, day) = (self.0.year(), self.0.month(), self.0.day());
        let Ok(year @ 0..=9999) = u32::try_from(year) else {
            // Beyond four digits chrono writes a sign; the calendar never gets there.
            return fmt::Display::fmt(&self.0, f);
        };
        let digit = |n: u32| b'0' + (n % 10) as u8;
        let text = [
            digit(year / 1000),
            digit(year / 100),
            digit(year / 10),
            digit(year),
            b'-',
            digit(month / 10),
            digit(month),
            b'-',
            digit(day / 10),
            digit(day),
        ];
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Weekday;
    use proptest::prelude::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn dates_snap_to_monday() {
        // 2026-11-22 is a Sunday; its week began on Monday 2026-11-16.
        assert_eq!(LaunchWeek::containing(d("2026-11-22")).monday(), d("2026-11-16"));
        assert_eq!(LaunchWeek::containing(d("2026-11-16")).monday(), d("2026-11-16"));
        assert_eq!(LaunchWeek::containing(d("2026-11-23")).monday(), d("2026-11-23"));
        assert_eq!(LaunchWeek::containing(d("2026-03-04")).to_string(), "2026-03-02");
    }

    #[test]
    fn named_weeks_are_relative_to_today() {
        let today = d("2026-11-22");
        assert_eq!(LaunchWeek::parse("this", today, "week").unwrap().monday(), d("2026-11-16"));
        assert_eq!(LaunchWeek::parse("next", today, "week").unwrap().monday(), d("2026-11-23"));
        assert_eq!(LaunchWeek::parse("last", today, "week").unwrap().monday(), d("2026-11-09"));
        assert_eq!(LaunchWeek::parse("2026-01-01", today, "week").unwrap().monday(), d("2025-12-29"));
    }

    #[test]
    fn bad_week_parameters_name_the_field() {
        let today = d("2026-11-22");
        for bad in ["", "now", "2026-13-01", "2026-1-1", "2026-11-221", "thisweek!!!"] {
            let e = LaunchWeek::parse(bad, today, "week").unwrap_err();
            assert_eq!(e.field, "week", "{bad:?}");
        }
    }

    #[test]
    fn week_bounds_in_utc() {
        let w = LaunchWeek::containing(d("2026-11-18"));
        assert_eq!(w.sunday(), d("2026-11-22"));
        assert!(w.contains(w.starts_at()));
        assert!(!w.contains(w.ends_at()));
        assert_eq!(w.weeks_until(w.plus_weeks(7)), 7);
    }

    proptest! {
        #[test]
        fn every_date_snaps_to_a_monday_within_six_days(days in 0i64..200_000) {
            let date = d("1900-01-01") + chrono::Duration::days(days);
            let w = LaunchWeek::containing(date);
            prop_assert_eq!(w.monday().weekday(), Weekday::Mon);
            prop_assert!(w.monday() <= date && date <= w.sunday());
        }

        #[test]
        fn a_week_is_written_as_chrono_writes_its_monday(days in -40_000i64..3_700_000) {
            let w = LaunchWeek::containing(d("0000-01-01") + chrono::Duration::days(days));
            prop_assert_eq!(w.to_string(), w.monday().to_string());
        }
    }

    #[test]
    fn weeks_at_the_ends_of_four_digit_years_are_written_as_chrono_writes_them() {
        for date in ["0000-01-03", "0001-01-01", "0999-12-30", "1970-01-05", "9999-12-27", "2026-11-30"] {
            let w = LaunchWeek::containing(d(date));
            assert_eq!(w.to_string(), w.monday().to_string(), "{date}");
            assert_eq!(w.to_string().len(), 10, "{date}");
        }
        assert_eq!(LaunchWeek::containing(d("2026-12-04")).to_string(), "2026-11-30");
        // Beyond four digits (chrono writes a sign) the text is chrono's own.
        for date in [NaiveDate::from_ymd_opt(-1, 6, 1), NaiveDate::from_ymd_opt(10_000, 6, 1)] {
            let w = LaunchWeek::containing(date.unwrap());
            assert_eq!(w.to_string(), w.monday().to_string());
            assert!(w.to_string().starts_with(['-', '+']), "{w}");
        }
    }
}
