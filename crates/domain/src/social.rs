//! Social links and FAQs: sub-objects shared by drafts, listings, founders and categories.

use crate::text::check_max;
use crate::{ValidationError, bounded_text};
use std::collections::BTreeMap;

/// The platform keys the spec allows in a socials object.
pub const PLATFORMS: [&str; 14] = [
    "linkedin",
    "x",
    "facebook",
    "instagram",
    "tiktok",
    "youtube",
    "threads",
    "pinterest",
    "github",
    "reddit",
    "producthunt",
    "medium",
    "website",
    "custom",
];

/// A socials object: platform key → link (max 500, an http or https address). Ordered by key so
/// output is stable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Socials(BTreeMap<String, String>);

impl Socials {
    pub const MAX_LINK: usize = 500;

    /// Parses a socials object; errors name `<field>.<platform>`.
    pub fn parse(field: &str, raw: impl IntoIterator<Item = (String, String)>) -> Result<Self, ValidationError> {
        let mut map = BTreeMap::new();
        for (platform, link) in raw {
            let path = format!("{field}.{platform}");
            if !PLATFORMS.contains(&platform.as_str()) {
                return Err(ValidationError::new(
                    path,
                    format!("unknown platform; use one of {}", PLATFORMS.join(", ")),
                ));
            }
            check_max(&path, &link, Self::MAX_LINK)?;
            if !(link.starts_with("https://") || link.starts_with("http://")) {
                return Err(ValidationError::new(path, "must be an http or https link"));
            }
            map.insert(platform, link);
        }
        Ok(Self(map))
    }

    pub fn get(&self, platform: &str) -> Option<&str> {
        self.0.get(platform).map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn into_inner(self) -> BTreeMap<String, String> {
        self.0
    }
}

bounded_text!(
    /// FAQ question: required, max 300.
    FaqQuestion, "question", 300, non_empty
);
bounded_text!(
    /// FAQ answer: required, max 1500.
    FaqAnswer, "answer", 1500, non_empty
);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Faq {
    pub question: FaqQuestion,
    pub answer: FaqAnswer,
}

impl Faq {
    /// The schema allows 10 FAQs (spec, Limits 4); the description's "max 5" is advice to the
    /// writer, not a cap, so 10 is what is enforced. See docs/DECISIONS.md.
    pub const MAX_ITEMS: usize = 10;

    pub fn parse(question: String, answer: String) -> Result<Self, ValidationError> {
        Ok(Self { question: FaqQuestion::parse(question)?, answer: FaqAnswer::parse(answer)? })
    }

    /// Parses a full FAQ list (replaces all); errors name `<field>[i].question`.
    pub fn parse_list(field: &str, raw: Vec<(String, String)>) -> Result<Vec<Self>, ValidationError> {
        if raw.len() > Self::MAX_ITEMS {
            return Err(ValidationError::new(field, format!("more than {} items", Self::MAX_ITEMS)));
        }
        raw.into_iter()
            .enumerate()
            .map(|(i, (q, a))| Self::parse(q, a).map_err(|e| e.within(&format!("{field}[{i}]"))))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socials_refuse_unknown_platforms_and_long_links() {
        let ok = Socials::parse("socials", [("x".into(), "https://x.example/acme".into())]).unwrap();
        assert_eq!(ok.get("x"), Some("https://x.example/acme"));
        let e = Socials::parse("socials", [("myspace".into(), "https://a.example".into())]).unwrap_err();
        assert_eq!(e.field, "socials.myspace");
        let long = format!("https://a.example/{}", "a".repeat(500 - 18));
        assert_eq!(long.len(), 500);
        assert!(Socials::parse("s", [("github".into(), long.clone())]).is_ok());
        assert!(Socials::parse("s", [("github".into(), format!("{long}a"))]).is_err());
        assert!(Socials::parse("s", [("github".into(), "javascript:alert(1)".into())]).is_err());
    }

    #[test]
    fn faq_list_bounds() {
        let one = || ("Q?".to_owned(), "A.".to_owned());
        assert!(Faq::parse_list("faqs", vec![one(); 10]).is_ok());
        assert_eq!(Faq::parse_list("faqs", vec![one(); 11]).unwrap_err().field, "faqs");
        let e = Faq::parse_list("faqs", vec![one(), ("q".into(), "a".repeat(1501))]).unwrap_err();
        assert_eq!(e.field, "faqs[1].answer");
        assert!(Faq::parse("q".repeat(300), "a".repeat(1500)).is_ok());
        assert!(Faq::parse("q".repeat(301), "a".into()).is_err());
    }
}
