//! Site settings the admin changes at run time (`admin set-setting KEY VALUE`), typed and bounded.

use crate::ValidationError;
use crate::listing::CountryCode;

/// The settings every database starts with; storage seeds any that are missing.
pub const DEFAULTS: [(&str, &str); 6] = [
    ("site_name", "launchdir"),
    ("free_plan_min_weeks", "6"),
    ("free_plan_max_weeks", "8"),
    ("free_plan_weekly_capacity", "25"),
    ("paid_plan_weekly_capacity", "25"),
    ("seller_country", "IE"),
];

/// Checks a setting before it is stored: known key, value of the right type and range.
pub fn validate(key: &str, value: &str) -> Result<(), ValidationError> {
    let int = |lo: i64, hi: i64| -> Result<(), ValidationError> {
        match value.parse::<i64>() {
            Ok(v) if (lo..=hi).contains(&v) => Ok(()),
            _ => Err(ValidationError::new(key, format!("must be an integer from {lo} to {hi}"))),
        }
    };
    match key {
        "site_name" => crate::text::check_max(key, value, 100),
        "free_plan_min_weeks" | "free_plan_max_weeks" => int(1, 52),
        "free_plan_weekly_capacity" | "paid_plan_weekly_capacity" => int(1, 10_000),
        "seller_country" => CountryCode::parse_assigned(value).map(|_| ()).map_err(|e| e.named(key)),
        _ => {
            let keys: Vec<&str> = DEFAULTS.iter().map(|(k, _)| *k).collect();
            Err(ValidationError::new("key", format!("unknown setting; known: {}", keys.join(", "))))
        }
    }
}

/// The settings as the rules use them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteSettings {
    pub site_name: String,
    pub free_plan_min_weeks: i64,
    pub free_plan_max_weeks: i64,
    pub free_plan_weekly_capacity: i64,
    /// Paid launches a week holds; a full week cannot be bought.
    pub paid_plan_weekly_capacity: i64,
    pub seller_country: String,
}

impl SiteSettings {
    /// Reads settings from key/value pairs; anything missing or unreadable takes its default.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut map: std::collections::HashMap<&str, &str> = DEFAULTS.iter().copied().collect();
        for (k, v) in pairs {
            if validate(k, v).is_ok() {
                map.insert(k, v);
            }
        }
        let int = |k: &str, d: i64| map.get(k).and_then(|v| v.parse().ok()).unwrap_or(d);
        let (min, max) = (int("free_plan_min_weeks", 6), int("free_plan_max_weeks", 8));
        Self {
            site_name: map.get("site_name").copied().unwrap_or("launchdir").to_owned(),
            // A window whose ends were set the wrong way round still means the same weeks.
            free_plan_min_weeks: min.min(max),
            free_plan_max_weeks: min.max(max),
            free_plan_weekly_capacity: int("free_plan_weekly_capacity", 25),
            paid_plan_weekly_capacity: int("paid_plan_weekly_capacity", 25),
            seller_country: map.get("seller_country").copied().unwrap_or("IE").to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_read_back() {
        for (k, v) in DEFAULTS {
            validate(k, v).unwrap();
        }
        let s = SiteSettings::from_pairs([]);
        assert_eq!((s.free_plan_min_weeks, s.free_plan_max_weeks), (6, 8));
    }

    #[test]
    fn bad_settings_are_refused() {
        assert!(validate("free_plan_min_weeks", "0").is_err());
        assert!(validate("free_plan_min_weeks", "six").is_err());
        assert!(validate("seller_country", "XX").is_err());
        assert_eq!(validate("nope", "1").unwrap_err().field, "key");
        let s = SiteSettings::from_pairs([("free_plan_min_weeks", "9"), ("free_plan_max_weeks", "7")]);
        assert_eq!((s.free_plan_min_weeks, s.free_plan_max_weeks), (7, 9));
    }
}
