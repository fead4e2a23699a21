//! Request bodies' JSON read strictly: a key given twice in one object is refused, never resolved.
//!
//! JSON leaves a repeated name's meaning open (RFC 8259 §4: "the behavior of software that receives
//! such an object is unpredictable"); serde_json keeps the last one in a map and refuses it in a
//! struct. So `{"url": "a", "url": "b"}` was read as `b` by one reader and refused by another: the
//! REST API answered for a body nobody meant, and on `/mcp` the guard read a tool call's last `name`
//! while rmcp refused the message as "method not found". Both now refuse it, naming the key.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// The path of the first key given twice in one object of `body` (`params.arguments.url`, an array's
/// element by its index: `links.2.label`), or `None` when there is none or `body` is not JSON (its
/// reader says what is wrong with it then).
pub fn duplicate_key(body: &[u8]) -> Option<String> {
    let mut de = serde_json::Deserializer::from_slice(body);
    match (Walk { path: String::new() }).deserialize(&mut de) {
        Err(e) => {
            let text = e.to_string();
            text.strip_prefix(MARK).map(|rest| rest.split(" at line ").next().unwrap_or(rest).to_owned())
        }
        Ok(()) => None,
    }
}

/// How [`Walk`] marks its own error among serde_json's.
const MARK: &str = "duplicate key: ";

/// Visits a JSON value, carrying the path to it.
struct Walk {
    path: String,
}

impl Walk {
    fn child(&self, key: &str) -> Walk {
        Walk { path: if self.path.is_empty() { key.to_owned() } else { format!("{}.{key}", self.path) } }
    }
}

impl<'de> DeserializeSeed<'de> for Walk {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        while seq.next_element_seed(self.child(&i.to_string()))?.is_some() {
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let child = self.child(&key);
            if !seen.insert(key) {
                return Err(A::Error::custom(format!("{MARK}{}", child.path)));
            }
            map.next_value_seed(child)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::duplicate_key;

    #[test]
    fn a_key_given_twice_is_found_by_its_path() {
        let cases: [(&str, Option<&str>); 9] = [
            (r#"{"url": "a", "url": "b"}"#, Some("url")),
            (r#"{"a": {"b": 1, "c": 2, "b": 3}}"#, Some("a.b")),
            (r#"{"links": [{"x": 1}, {"y": 1}, {"label": 1, "label": 2}]}"#, Some("links.2.label")),
            (r#"[{"id": 1, "id": 2}]"#, Some("0.id")),
            // The same key in two objects is no repeat.
            (r#"{"a": {"k": 1}, "b": {"k": 1}, "k": [{"k": 1}, {"k": 2}]}"#, None),
            (r#"{"a": "\u0061", "b": 1}"#, None),
            // Keys are compared as decoded: "\u0061" is "a".
            (r#"{"a": 1, "\u0061": 2}"#, Some("a")),
            // Not JSON: its reader reports that.
            (r#"{"a": "#, None),
            ("", None),
        ];
        for (body, want) in cases {
            assert_eq!(duplicate_key(body.as_bytes()).as_deref(), want, "{body}");
        }
    }

    #[test]
    fn deep_nesting_stops_at_serde_json_s_limit_without_overflowing() {
        let body = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(duplicate_key(body.as_bytes()), None);
    }
}
