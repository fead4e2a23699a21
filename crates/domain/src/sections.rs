//! A listing's sections beyond the profile: milestones, the founder story and "what's new" updates.
//! Milestones, story and media are paid-only: shown where the listing's plan or purchase unlocks them.

use crate::ids::MilestoneId;
use crate::text::check_max;
use crate::{ValidationError, bounded_text};
use chrono::{DateTime, NaiveDate, Utc};

bounded_text!(MilestoneTitle, "title", 200, non_empty);
bounded_text!(MilestoneDescription, "description", 2000);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Milestone {
    pub date: NaiveDate,
    pub title: MilestoneTitle,
    pub description: MilestoneDescription,
    /// An https link (max 500) or empty.
    pub url: String,
}

impl Milestone {
    pub const MAX_URL: usize = 500;
    /// The date's shape: `YYYY-MM-DD`.
    pub const DATE_LEN: usize = 10;

    pub fn parse(
        date: &str,
        title: String,
        description: Option<String>,
        url: Option<String>,
    ) -> Result<Self, ValidationError> {
        let date = NaiveDate::parse_from_str(date, "%Y-%m-%d")
            .ok()
            .filter(|_| date.len() == Self::DATE_LEN)
            .ok_or_else(|| ValidationError::new("date", "must be a date YYYY-MM-DD"))?;
        // Absent is "no link"; a link given must be one (an empty string is not).
        if let Some(u) = &url {
            check_max("url", u, Self::MAX_URL)?;
            if !u.starts_with("https://") {
                return Err(ValidationError::new("url", "must be an https link; leave it out for none"));
            }
        }
        let url = url.unwrap_or_default();
        Ok(Self {
            date,
            title: MilestoneTitle::parse(title)?,
            description: MilestoneDescription::parse(description.unwrap_or_default())?,
            url,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMilestone {
    pub id: MilestoneId,
    pub milestone: Milestone,
}

/// The story sections, in display order. The title is max 200 on an own listing (8000 in a draft);
/// every other section is max 8000.
pub const STORY_SECTIONS: [&str; 9] =
    ["title", "story", "why_started", "problem", "journey", "challenges", "achievements", "lessons", "whats_next"];

/// A founder story: section name → text; absent sections are empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Story {
    sections: Vec<(String, String)>,
}

impl Story {
    pub const MAX_SECTION: usize = 8000;
    pub const MAX_LISTING_TITLE: usize = 200;

    /// Parses story sections; `title_max` is 200 for an own listing and 8000 in a draft. Unknown
    /// section names are refused, naming `<field>.<name>`.
    pub fn parse(
        field: &str,
        raw: impl IntoIterator<Item = (String, String)>,
        title_max: usize,
    ) -> Result<Self, ValidationError> {
        let mut sections = Vec::new();
        for (name, text) in raw {
            let path = format!("{field}.{name}");
            if !STORY_SECTIONS.contains(&name.as_str()) {
                return Err(ValidationError::new(
                    path,
                    format!("unknown story section; use {}", STORY_SECTIONS.join(", ")),
                ));
            }
            let max = if name == "title" { title_max } else { Self::MAX_SECTION };
            check_max(&path, &text, max)?;
            sections.push((name, text));
        }
        sections.sort_by_key(|(n, _)| STORY_SECTIONS.iter().position(|s| s == n));
        Ok(Self { sections })
    }

    pub fn get(&self, name: &str) -> &str {
        self.sections.iter().find(|(n, _)| n == name).map_or("", |(_, t)| t.as_str())
    }

    pub fn sections(&self) -> impl Iterator<Item = (&str, &str)> {
        self.sections.iter().map(|(n, t)| (n.as_str(), t.as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.sections.iter().all(|(_, t)| t.trim().is_empty())
    }
}

/// A "what's new" post on a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingUpdate {
    pub title: String,
    pub body: String,
    pub posted_at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milestone_bounds() {
        assert!(Milestone::parse("2026-01-31", "Launched".into(), None, None).is_ok());
        assert_eq!(Milestone::parse("2026-02-30", "x".into(), None, None).unwrap_err().field, "date");
        assert_eq!(Milestone::parse("2026-01-01", "t".repeat(201), None, None).unwrap_err().field, "title");
        assert!(Milestone::parse("2026-01-01", "t".into(), Some("d".repeat(2000)), None).is_ok());
        assert!(Milestone::parse("2026-01-01", "t".into(), Some("d".repeat(2001)), None).is_err());
        assert!(Milestone::parse("2026-01-01", "t".into(), None, Some("http://a.example".into())).is_err());
        // A link given must be one: an empty string is not "no link" (leave it out for that).
        assert_eq!(Milestone::parse("2026-01-01", "t".into(), None, Some(String::new())).unwrap_err().field, "url");
        assert_eq!(
            Milestone::parse("2026-01-01", "t".into(), None, Some("https://a.example".into())).unwrap().url,
            "https://a.example"
        );
    }

    #[test]
    fn story_bounds_and_order() {
        let s =
            Story::parse("story", [("lessons".into(), "l".into()), ("title".into(), "t".repeat(200))], 200).unwrap();
        assert_eq!(s.sections().next().unwrap().0, "title");
        assert!(Story::parse("s", [("title".into(), "t".repeat(201))], 200).is_err());
        assert!(Story::parse("s", [("title".into(), "t".repeat(201))], 8000).is_ok());
        assert!(Story::parse("s", [("journey".into(), "j".repeat(8000))], 200).is_ok());
        assert_eq!(Story::parse("s", [("journey".into(), "j".repeat(8001))], 200).unwrap_err().field, "s.journey");
        assert_eq!(Story::parse("s", [("plot".into(), String::new())], 200).unwrap_err().field, "s.plot");
    }
}
