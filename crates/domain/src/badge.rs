//! Badges a listing may show, and the styles they are rendered in.

use crate::ValidationError;

macro_rules! style_enum {
    ($name:ident, $field:literal, [$first:ident = $ftext:literal $(, $variant:ident = $text:literal)* $(,)?]) => {
        /// The first variant is the default.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub enum $name {
            #[default]
            $first,
            $($variant),*
        }

        impl $name {
            pub const ALL: &'static [Self] = &[Self::$first, $(Self::$variant),*];

            pub fn as_str(self) -> &'static str {
                match self {
                    Self::$first => $ftext,
                    $(Self::$variant => $text),*
                }
            }

            pub fn parse(raw: &str) -> Result<Self, ValidationError> {
                Self::ALL.iter().copied().find(|s| s.as_str() == raw).ok_or_else(|| {
                    let names: Vec<&str> = Self::ALL.iter().map(|s| s.as_str()).collect();
                    ValidationError::new($field, format!("must be one of {}", names.join(", ")))
                })
            }
        }
    };
}

style_enum!(
    BadgeShape,
    "shape",
    [Standard = "standard", Outline = "outline", Pill = "pill", Banner = "banner", Square = "square"]
);
style_enum!(BadgeMode, "mode", [Auto = "auto", Light = "light", Dark = "dark"]);
style_enum!(BadgeSize, "size", [M = "m", S = "s", L = "l"]);

/// What a badge says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BadgeKind {
    ListedOn,
    LaunchedOn,
    Featured,
    Verified,
    LaunchOfTheWeek(u8),
}

impl BadgeKind {
    pub fn key(self) -> String {
        match self {
            Self::ListedOn => "listed-on".into(),
            Self::LaunchedOn => "launched-on".into(),
            Self::Featured => "featured".into(),
            Self::Verified => "verified".into(),
            Self::LaunchOfTheWeek(n) => format!("launch-of-the-week-{n}"),
        }
    }

    pub fn parse(key: &str) -> Option<Self> {
        match key {
            "listed-on" => Some(Self::ListedOn),
            "launched-on" => Some(Self::LaunchedOn),
            "featured" => Some(Self::Featured),
            "verified" => Some(Self::Verified),
            "launch-of-the-week-1" => Some(Self::LaunchOfTheWeek(1)),
            "launch-of-the-week-2" => Some(Self::LaunchOfTheWeek(2)),
            "launch-of-the-week-3" => Some(Self::LaunchOfTheWeek(3)),
            _ => None,
        }
    }

    /// What the badge says, in words.
    pub fn title(self) -> String {
        match self {
            Self::ListedOn => "Listed on".into(),
            Self::LaunchedOn => "Launched on".into(),
            Self::Featured => "Featured on".into(),
            Self::Verified => "Verified on".into(),
            Self::LaunchOfTheWeek(n) => format!("Launch of the Week #{n} on"),
        }
    }
}

/// The badges a live listing may show: listed on; launched on once it went live; featured and
/// verified when it is; and each Launch of the Week rank it won, best rank first, once each.
pub fn earned(l: &crate::listing::Listing, awards: &[crate::award::Award]) -> Vec<BadgeKind> {
    let mut out = vec![BadgeKind::ListedOn];
    if l.lifecycle.launched_at().is_some() {
        out.push(BadgeKind::LaunchedOn);
    }
    if l.featured {
        out.push(BadgeKind::Featured);
    }
    if l.verified {
        out.push(BadgeKind::Verified);
    }
    let mut ranks: Vec<u8> = awards.iter().filter(|a| a.listing_id == l.id).map(|a| a.rank.get()).collect();
    ranks.sort_unstable();
    ranks.dedup();
    out.extend(ranks.into_iter().map(BadgeKind::LaunchOfTheWeek));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn styles_parse_and_default() {
        assert_eq!(BadgeShape::default(), BadgeShape::Standard);
        assert_eq!(BadgeShape::parse("pill").unwrap(), BadgeShape::Pill);
        assert_eq!(BadgeShape::parse("standard").unwrap(), BadgeShape::Standard);
        assert_eq!(BadgeShape::ALL.len(), 5);
        assert_eq!(BadgeMode::parse("auto").unwrap(), BadgeMode::Auto);
        assert_eq!(BadgeSize::parse("xl").unwrap_err().problem, "must be one of m, s, l");
        assert_eq!(BadgeKind::LaunchOfTheWeek(2).key(), "launch-of-the-week-2");
        for k in [
            BadgeKind::ListedOn,
            BadgeKind::LaunchedOn,
            BadgeKind::Featured,
            BadgeKind::Verified,
            BadgeKind::LaunchOfTheWeek(3),
        ] {
            assert_eq!(BadgeKind::parse(&k.key()), Some(k));
        }
        assert_eq!(BadgeKind::parse("launch-of-the-week-4"), None);
    }
}
