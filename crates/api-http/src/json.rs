//! Request bodies' JSON read strictly: a key given twice in one object is refused, never resolved.
//!
//! JSON leaves a repeated name's meaning open (RFC 8259 §4: "the behavior of software that receives
//! such an object is unpredictable"); serde_json keeps the last one in a map and refuses it in a
//! struct. So `{"url": "a", "url": "b"}` was read as `b` by one reader and refused by another: the
//! REST API answered for a body nobody meant, and on `/mcp` the guard read a tool call's last `name`
//! while rmcp refused the message as "method not found". Both now refuse it, naming the key.
//!
//! The check is part of the one parse that builds the body's [`Value`]: the path to a value is kept
//! as a stack of the keys and indexes above it (each key moved in and back out, never copied), and
//! written out only when a repeat is found.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// Why a body could not be read as JSON.
#[derive(Debug)]
pub enum Unreadable {
    /// A key given twice in one object, by its path: `params.arguments.url`, an array's element by
    /// its index (`links.2.label`).
    Repeated(String),
    /// Not JSON at all; serde_json's own words (with line and column).
    Invalid(serde_json::Error),
}

/// `body` as one JSON value, or why not. The same value as `serde_json::from_slice` gives, except
/// that an object naming a key twice is [`Unreadable::Repeated`] instead of keeping its last value.
pub fn parse_strict(body: &[u8]) -> Result<Value, Unreadable> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let mut path = Vec::new();
    let mut repeated = None;
    let read = Strict { path: &mut path, repeated: &mut repeated }.deserialize(&mut de).and_then(|v| {
        de.end()?;
        Ok(v)
    });
    match (read, repeated) {
        (_, Some(key)) => Err(Unreadable::Repeated(key)),
        (Ok(v), None) => Ok(v),
        (Err(e), None) => Err(Unreadable::Invalid(e)),
    }
}

/// One step on the way down to a value.
enum Step {
    Key(String),
    Index(usize),
}

/// Reads a JSON value into a [`Value`], keeping the way to it in `path`; a repeated key is written
/// to `repeated` (its whole path) and stops the parse.
struct Strict<'a> {
    path: &'a mut Vec<Step>,
    repeated: &'a mut Option<String>,
}

impl Strict<'_> {
    fn below(&mut self) -> Strict<'_> {
        Strict { path: &mut *self.path, repeated: &mut *self.repeated }
    }

    fn written(&self, last: &str) -> String {
        let mut out = String::new();
        for step in self.path.iter() {
            match step {
                Step::Key(k) => out.push_str(k),
                Step::Index(i) => out.push_str(&i.to_string()),
            }
            out.push('.');
        }
        out.push_str(last);
        out
    }
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        loop {
            self.path.push(Step::Index(out.len()));
            let next = seq.next_element_seed(self.below())?;
            self.path.pop();
            match next {
                Some(v) => out.push(v),
                None => return Ok(Value::Array(out)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                *self.repeated = Some(self.written(&key));
                return Err(A::Error::custom("a key given twice"));
            }
            self.path.push(Step::Key(key));
            let value = map.next_value_seed(self.below())?;
            let Some(Step::Key(key)) = self.path.pop() else { unreachable!("the key pushed above") };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::{Unreadable, parse_strict};
    use serde_json::Value;

    /// The path of the first key given twice, if `body` is read that far.
    fn duplicate_key(body: &[u8]) -> Option<String> {
        match parse_strict(body) {
            Err(Unreadable::Repeated(key)) => Some(key),
            _ => None,
        }
    }

    #[test]
    fn a_key_given_twice_is_found_by_its_path() {
        let cases: [(&str, Option<&str>); 10] = [
            (r#"{"url": "a", "url": "b"}"#, Some("url")),
            (r#"{"a": {"b": 1, "c": 2, "b": 3}}"#, Some("a.b")),
            (r#"{"links": [{"x": 1}, {"y": 1}, {"label": 1, "label": 2}]}"#, Some("links.2.label")),
            (r#"[{"id": 1, "id": 2}]"#, Some("0.id")),
            (r#"{"a": [[1], [2, {"k": [0, {"z": 1, "z": 1}]}]]}"#, Some("a.1.1.k.1.z")),
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
    fn what_is_read_is_what_serde_json_reads() {
        let bodies = [
            r#"{"a": [1, -2, 3.5, 1e300, 18446744073709551615, -9223372036854775808], "b": null}"#,
            r#"{"s": "caf\u00e9 \"q\" \\", "t": true, "f": false, "o": {}, "e": []}"#,
            r#"  [ {"z": 1, "a": 2}, "x" ]  "#,
            "0",
            r#""only a string""#,
        ];
        for body in bodies {
            let want: Value = serde_json::from_slice(body.as_bytes()).expect(body);
            let got = parse_strict(body.as_bytes()).unwrap_or_else(|e| panic!("{body}: {e:?}"));
            assert_eq!(got, want, "{body}");
            // Key order is kept as sent, as serde_json keeps it.
            assert_eq!(got.to_string(), want.to_string(), "{body}");
        }
    }

    #[test]
    fn what_is_not_json_is_serde_json_s_own_error() {
        for body in [r#"{"a": "#, "", "{} {}", r#"{"a": 1,}"#, "[1 2]"] {
            let want = serde_json::from_slice::<Value>(body.as_bytes()).expect_err(body).to_string();
            match parse_strict(body.as_bytes()) {
                Err(Unreadable::Invalid(e)) => assert_eq!(e.to_string(), want, "{body}"),
                other => panic!("{body}: {other:?}"),
            }
        }
    }

    #[test]
    fn deep_nesting_stops_at_serde_json_s_limit_without_overflowing() {
        let body = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        match parse_strict(body.as_bytes()) {
            Err(Unreadable::Invalid(e)) => assert!(e.to_string().contains("recursion limit"), "{e}"),
            other => panic!("{other:?}"),
        }
    }
}
