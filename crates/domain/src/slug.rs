//! Slugs: the public identifier of listings, categories, founders and blog posts.
//! Grammar from the spec: `^[a-z0-9][a-z0-9-]{0,219}$`.

use crate::ValidationError;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slug(String);

impl Slug {
    pub const MAX: usize = 220;
    /// The grammar, as a regular expression for API schemas.
    pub const PATTERN: &'static str = "^[a-z0-9][a-z0-9-]{0,219}$";

    pub fn parse(raw: impl Into<String>) -> Result<Self, ValidationError> {
        let raw: String = raw.into();
        let ok = !raw.is_empty()
            && raw.len() <= Self::MAX
            && raw
                .bytes()
                .enumerate()
                .all(|(i, b)| b.is_ascii_lowercase() || b.is_ascii_digit() || (i > 0 && b == b'-'));
        if ok {
            Ok(Self(raw))
        } else if raw.len() > Self::MAX {
            Err(ValidationError::new("slug", format!("longer than {} characters", Self::MAX)))
        } else {
            Err(ValidationError::new(
                "slug",
                "must match ^[a-z0-9][a-z0-9-]{0,219}$ (lowercase letters, digits and hyphens, not starting with a hyphen)",
            ))
        }
    }

    /// Wraps a slug that storage hands back; storage only holds slugs that were parsed on the way in.
    pub fn from_db(raw: String) -> Self {
        Self(raw)
    }

    /// Makes a slug from a human name: lowercase ASCII letters and digits, other runs become one
    /// hyphen. Returns `None` when nothing usable is left (a name of only symbols).
    pub fn slugify(name: &str) -> Option<Self> {
        let mut out = String::new();
        let mut pending_dash = false;
        for c in name.chars().flat_map(char::to_lowercase) {
            let c = fold_accent(c);
            if c.is_ascii_alphanumeric() {
                if pending_dash && !out.is_empty() {
                    out.push('-');
                }
                pending_dash = false;
                out.push(c.to_ascii_lowercase());
            } else {
                pending_dash = true;
            }
            if out.len() >= Self::MAX {
                break;
            }
        }
        out.truncate(Self::MAX);
        while out.ends_with('-') {
            out.pop();
        }
        Self::parse(out).ok()
    }

    /// The slug with a numeric suffix, for de-duplicating (`acme` → `acme-2`), kept within the bound.
    #[must_use]
    pub fn with_suffix(&self, n: u32) -> Self {
        let suffix = format!("-{n}");
        let mut base = self.0.clone();
        base.truncate(Self::MAX - suffix.len());
        while base.ends_with('-') {
            base.pop();
        }
        Self(format!("{base}{suffix}"))
    }

    /// The slug's text, given up without a copy (a list's rows hand their slugs on to the answer).
    pub fn into_inner(self) -> String {
        self.0
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn fold_accent(c: char) -> char {
    match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' => 'a',
        'ç' => 'c',
        'è' | 'é' | 'ê' | 'ë' => 'e',
        'ì' | 'í' | 'î' | 'ï' => 'i',
        'ñ' => 'n',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' => 'o',
        'ù' | 'ú' | 'û' | 'ü' => 'u',
        'ý' | 'ÿ' => 'y',
        other => other,
    }
}

impl AsRef<str> for Slug {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Slug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn grammar_edges() {
        assert!(Slug::parse("a").is_ok());
        assert!(Slug::parse("0-a-").is_ok(), "a trailing hyphen is allowed by the grammar");
        assert!(Slug::parse("a".repeat(220)).is_ok());
        assert!(Slug::parse("a".repeat(221)).is_err());
        for bad in ["", "-a", "A", "a_b", "a b", "é", "a/b"] {
            assert!(Slug::parse(bad).is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn slugify_examples() {
        assert_eq!(Slug::slugify("Acme Rockets, Inc.").unwrap().as_str(), "acme-rockets-inc");
        assert_eq!(Slug::slugify("Café Ünïcode").unwrap().as_str(), "cafe-unicode");
        assert!(Slug::slugify("!!!").is_none());
    }

    #[test]
    fn suffix_stays_within_bound() {
        let long = Slug::parse("a".repeat(220)).unwrap();
        let s = long.with_suffix(12);
        assert_eq!(s.as_str().len(), 220);
        assert!(Slug::parse(s.as_str()).is_ok());
    }

    proptest! {
        #[test]
        fn slugify_always_yields_a_valid_slug(name in "\\PC{0,300}") {
            if let Some(s) = Slug::slugify(&name) {
                prop_assert!(Slug::parse(s.as_str()).is_ok());
            }
        }

        #[test]
        fn parse_matches_the_regex(s in "[a-z0-9-]{0,230}") {
            let expected = !s.is_empty() && s.len() <= 220 && !s.starts_with('-');
            prop_assert_eq!(Slug::parse(s).is_ok(), expected);
        }
    }
}
