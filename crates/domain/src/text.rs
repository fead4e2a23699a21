//! Bounded text: every string field of the spec with a maximum length is a newtype made here, so a
//! bound is written once. Lengths count Unicode scalar values (what a person calls characters).

use crate::ValidationError;

/// Counts characters the way the bounds in the spec mean them.
pub fn char_len(s: &str) -> usize {
    s.chars().count()
}

/// Checks `s` against `max` characters; the error names `field`.
pub fn check_max(field: &str, s: &str, max: usize) -> Result<(), ValidationError> {
    let n = char_len(s);
    if n > max { Err(ValidationError::new(field, format!("longer than {max} characters"))) } else { Ok(()) }
}

/// Checks a list against `max_items` items of at most `max_each` characters each.
pub fn check_list(field: &str, items: &[String], max_items: usize, max_each: usize) -> Result<(), ValidationError> {
    if items.len() > max_items {
        return Err(ValidationError::new(field, format!("more than {max_items} items")));
    }
    for (i, item) in items.iter().enumerate() {
        check_max(&format!("{field}[{i}]"), item, max_each)?;
    }
    Ok(())
}

/// Collapses every run of whitespace to one space and trims the ends. Evidence quotes are compared
/// after this normalisation on both sides, so line breaks in HTML do not hide a verbatim quote.
pub fn normalize_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// The JSON Schema pattern of a text that is not blank: it holds a character `str::trim` keeps (one
/// that is not Unicode white space). Input schemas spell it out literally (utoipa takes only literals);
/// a test in `operations` checks that no other spelling is left.
pub const NOT_BLANK_PATTERN: &str =
    "[^\\x09-\\x0D\\x20\\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000]";

/// Declares a string newtype with a private field, a parsing constructor enforcing a maximum length,
/// `AsRef<str>` and `Display`. Empty strings are allowed unless `non_empty` is given.
#[macro_export]
macro_rules! bounded_text {
    ($(#[$m:meta])* $name:ident, $field:literal, $max:expr) => {
        $crate::bounded_text!(@impl $(#[$m])* $name, $field, $max, false);
    };
    ($(#[$m:meta])* $name:ident, $field:literal, $max:expr, non_empty) => {
        $crate::bounded_text!(@impl $(#[$m])* $name, $field, $max, true);
    };
    (@impl $(#[$m:meta])* $name:ident, $field:literal, $max:expr, $non_empty:expr) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            pub const MAX: usize = $max;
            pub const FIELD: &'static str = $field;

            pub fn parse(raw: impl Into<String>) -> Result<Self, $crate::ValidationError> {
                let raw: String = raw.into();
                $crate::text::check_max($field, &raw, $max)?;
                if $non_empty && raw.trim().is_empty() {
                    return Err($crate::ValidationError::new($field, "must not be empty"));
                }
                Ok(Self(raw))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_inner(self) -> String {
                self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl $crate::text::Bounded for $name {
            const MAX_CHARS: usize = $max;
            const REQUIRED: bool = $non_empty;
        }
    };
}

/// A text's bounds as [`bounded_text!`] declares them, for whoever describes the input (the API's
/// schema takes them from here rather than restating the numbers).
pub trait Bounded {
    const MAX_CHARS: usize;
    /// Blank text is refused.
    const REQUIRED: bool;
}

#[cfg(test)]
mod tests {

    proptest::proptest! {
        /// The pattern matches exactly the texts `trim` leaves something of.
        #[test]
        fn the_not_blank_pattern_is_trim(raw in "[ \t\r\n\u{b}\u{c}\u{1c}\u{85}\u{a0}\u{2007}\u{3000}\u{feff}\u{200b}a]{0,6}") {
            let re = regex::Regex::new(NOT_BLANK_PATTERN).unwrap();
            proptest::prop_assert_eq!(re.is_match(&raw), !raw.trim().is_empty(), "{:?}", raw);
        }
    }

    use super::*;
    use proptest::prelude::*;

    mod probes {
        #![allow(dead_code)]
        crate::bounded_text!(Probe, "probe", 3);
        crate::bounded_text!(Required, "required", 3, non_empty);
    }
    use probes::{Probe, Required};

    #[test]
    fn bound_is_inclusive_and_counts_characters() {
        assert!(Probe::parse("abc").is_ok());
        assert!(Probe::parse("ééé").is_ok(), "three characters, six bytes");
        let err = Probe::parse("abcd").unwrap_err();
        assert_eq!(err.field, "probe");
        assert_eq!(err.problem, "longer than 3 characters");
    }

    #[test]
    fn non_empty_refuses_blank() {
        assert!(Required::parse("  ").is_err());
        assert!(Probe::parse("").is_ok());
    }

    #[test]
    fn list_bounds_name_the_offending_item() {
        let items = vec!["a".to_owned(), "toolong".to_owned()];
        let err = check_list("features", &items, 20, 3).unwrap_err();
        assert_eq!(err.field, "features[1]");
        let many: Vec<String> = (0..21).map(|i| i.to_string()).collect();
        assert_eq!(check_list("features", &many, 20, 3).unwrap_err().problem, "more than 20 items");
        assert!(check_list("features", &many[..20], 20, 3).is_ok());
    }

    #[test]
    fn whitespace_normalisation_collapses_runs() {
        assert_eq!(normalize_whitespace("  a \n\t b  c "), "a b c");
    }

    proptest! {
        #[test]
        fn normalisation_is_idempotent(s in "\\PC*") {
            let once = normalize_whitespace(&s);
            prop_assert_eq!(normalize_whitespace(&once), once.clone());
            prop_assert!(!once.contains("  "));
        }

        #[test]
        fn parse_accepts_exactly_the_short_strings(s in "\\PC{0,6}") {
            prop_assert_eq!(Probe::parse(s.clone()).is_ok(), s.chars().count() <= 3);
        }
    }
}
