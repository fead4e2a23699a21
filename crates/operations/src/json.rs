//! The operations' answers as compact JSON, byte for byte what `serde_json::to_writer` writes, with
//! less work a string.
//!
//! A page of 20 listings is some 400 strings, two thirds of them keys of five or six bytes. serde_json
//! writes each through its `Formatter` and `io::Write` (an opening quote, the runs between escapes,
//! a closing quote, a colon: each a write of its own) and walks the bytes one at a time with a bounds
//! check each, some 140 instructions a string; that was a sixth of the server's instructions for a
//! board page (callgrind, docs/BENCHMARKS.md, sixty-third sitting). Here a string is one reservation,
//! one scan eight bytes a step ([`any_to_escape`]) and one copy.
//!
//! Only the compact form the API sends is written. A value this does not write as serde_json would —
//! serde_json's own raw values and numbers, a map key that is not a string, an integer, a bool or a
//! unit variant (a number with a fraction among them) — is refused ([`Unsupported`]) and the caller writes the whole answer with serde_json
//! instead. Debug builds write every answer both ways and fail on any difference
//! (`Descriptor::of`), so every test that calls an operation checks this against serde_json.

use serde::ser::{self, Serialize};
use std::fmt;

/// A value this writer leaves to serde_json (see the module), or an error a `Serialize` impl raised.
#[derive(Debug)]
pub(crate) struct Unsupported(String);

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self(msg.to_string())
    }
}

/// Appends `value` to `out` as compact JSON. On an error `out` holds part of the answer: the caller
/// starts again.
pub(crate) fn write<T: ?Sized + Serialize>(out: &mut Vec<u8>, value: &T) -> Result<(), Unsupported> {
    value.serialize(&mut Writer { out })
}

/// Whether byte `b` is written escaped in a JSON string: the control bytes, `"` and `\` (as serde_json
/// does: not `/`, DEL or anything beyond ASCII).
#[inline(always)]
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Whether any of the eight bytes of `x` is written escaped ([`needs_escape`]). Each test is exact for
/// "any byte": a byte below 0x20 (`(x - 0x20…) & !x & 0x80…`), a byte equal to `"` or a backslash (a zero
/// byte after the exclusive or, `(v - 0x01…) & !v & 0x80…`). Bytes from 0x80 up meet none of them.
#[inline(always)]
fn word_needs_escape(x: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let control = x.wrapping_sub(ONES * 0x20) & !x & HIGH;
    (control | zero_byte(x ^ (ONES * u64::from(b'"'))) | zero_byte(x ^ (ONES * u64::from(b'\\')))) != 0
}

/// Whether any byte of `bytes` is written escaped, eight bytes a step. Most strings are keys of five or
/// six bytes: from four bytes up the last step reads the last eight (or four) bytes again, overlapping
/// the ones before, rather than going a byte at a time.
#[inline]
fn any_to_escape(bytes: &[u8]) -> bool {
    let n = bytes.len();
    if n >= 8 {
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"));
        let mut words = bytes.chunks_exact(8);
        if words.any(|w| word_needs_escape(u64::from_le_bytes(w.try_into().expect("eight bytes")))) {
            return true;
        }
        !n.is_multiple_of(8) && word_needs_escape(word(n - 8))
    } else if n >= 4 {
        let half = |at: usize| u64::from(u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes")));
        word_needs_escape(half(0) | half(n - 4) << 32)
    } else {
        // 0 to 3 bytes: the first, the middle and the last are all of them.
        n > 0 && (needs_escape(bytes[0]) || needs_escape(bytes[n / 2]) || needs_escape(bytes[n - 1]))
    }
}

/// Appends `s` as a JSON string.
#[inline]
fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    if any_to_escape(bytes) {
        write_escaped(out, bytes);
    } else {
        out.extend_from_slice(bytes);
    }
    out.push(b'"');
}

/// Appends the contents of a string that holds a byte to escape, escaped as serde_json escapes it.
#[cold]
fn write_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if !needs_escape(b) {
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        start = i + 1;
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            0x0C => out.extend_from_slice(b"\\f"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xF)]]),
        }
    }
    out.extend_from_slice(&bytes[start..]);
}

/// Appends `,` unless this is the first member of its array or object.
#[inline(always)]
fn separate(out: &mut Vec<u8>, first: &mut bool) {
    if *first {
        *first = false;
    } else {
        out.push(b',');
    }
}

/// Appends a struct's key and its colon: `"key":`.
#[inline]
fn write_key(out: &mut Vec<u8>, key: &str) {
    write_str(out, key);
    out.push(b':');
}

/// A struct whose fields are not a JSON object in serde_json's hands (its raw values and numbers):
/// left to it.
fn serde_json_token(name: &str) -> bool {
    name.starts_with("$serde_json::")
}

/// `serialize_i8` to `serialize_u128`, each `$body` with the serializer as `$w` and the value as `$v`.
macro_rules! integers {
    (|$w:ident, $v:ident| $body:expr) => {
        integers!(@each |$w, $v| $body; serialize_i8 i8, serialize_i16 i16, serialize_i32 i32, serialize_i64 i64,
            serialize_i128 i128, serialize_u8 u8, serialize_u16 u16, serialize_u32 u32, serialize_u64 u64,
            serialize_u128 u128);
    };
    (@each |$w:ident, $v:ident| $body:expr; $($method:ident $ty:ty),*) => {$(
        fn $method(self, $v: $ty) -> Result<(), Unsupported> {
            let $w = self;
            $body
        }
    )*};
}

struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl Writer<'_> {
    #[inline]
    fn integer<I: itoa::Integer>(&mut self, n: I) {
        self.out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }

    /// A number with a fraction, written by serde_json itself: how to print one (the shortest form that
    /// reads back the same, `1e+21`, `null` for what JSON cannot hold) is its formatter's to choose,
    /// and the answers hold few of them.
    fn float<F: Serialize>(&mut self, v: F) -> Result<(), Unsupported> {
        serde_json::to_writer(&mut *self.out, &v).map_err(|e| Unsupported(e.to_string()))
    }

    /// `{"variant":` for a variant with content, closed by the compound's end.
    fn open_variant(&mut self, variant: &str) {
        self.out.push(b'{');
        write_key(self.out, variant);
    }
}

/// An array or object being written: its closing bytes (`]`, `}`, or `]}` / `}}` for a variant) and
/// whether the next member is its first.
struct Compound<'w, 'a> {
    w: &'w mut Writer<'a>,
    first: bool,
    close: &'static [u8],
}

impl<'w, 'a> Compound<'w, 'a> {
    fn open(w: &'w mut Writer<'a>, open: u8, close: &'static [u8]) -> Self {
        w.out.push(open);
        Self { w, first: true, close }
    }

    #[inline]
    fn element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Unsupported> {
        separate(self.w.out, &mut self.first);
        value.serialize(&mut *self.w)
    }

    #[inline]
    fn field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<(), Unsupported> {
        separate(self.w.out, &mut self.first);
        write_key(self.w.out, key);
        value.serialize(&mut *self.w)
    }

    fn close(self) -> Result<(), Unsupported> {
        self.w.out.extend_from_slice(self.close);
        Ok(())
    }
}

impl<'w, 'a> ser::Serializer for &'w mut Writer<'a> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = Compound<'w, 'a>;
    type SerializeTuple = Compound<'w, 'a>;
    type SerializeTupleStruct = Compound<'w, 'a>;
    type SerializeTupleVariant = Compound<'w, 'a>;
    type SerializeMap = Compound<'w, 'a>;
    type SerializeStruct = Compound<'w, 'a>;
    type SerializeStructVariant = Compound<'w, 'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Unsupported> {
        self.out.extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    integers!(|w, v| {
        w.integer(v);
        Ok(())
    });
    fn serialize_f32(self, v: f32) -> Result<(), Unsupported> {
        self.float(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Unsupported> {
        self.float(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Unsupported> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Unsupported> {
        write_str(self.out, v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Unsupported> {
        let mut seq = Compound::open(self, b'[', b"]");
        for b in v {
            seq.element(b)?;
        }
        seq.close()
    }
    fn serialize_none(self) -> Result<(), Unsupported> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Unsupported> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Unsupported> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Unsupported> {
        write_str(self.out, variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Unsupported> {
        self.open_variant(variant);
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'w, 'a>, Unsupported> {
        Ok(Compound::open(self, b'[', b"]"))
    }
    fn serialize_tuple(self, _len: usize) -> Result<Compound<'w, 'a>, Unsupported> {
        Ok(Compound::open(self, b'[', b"]"))
    }
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Compound<'w, 'a>, Unsupported> {
        Ok(Compound::open(self, b'[', b"]"))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'w, 'a>, Unsupported> {
        self.open_variant(variant);
        Ok(Compound::open(self, b'[', b"]}"))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'w, 'a>, Unsupported> {
        Ok(Compound::open(self, b'{', b"}"))
    }
    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Compound<'w, 'a>, Unsupported> {
        if serde_json_token(name) {
            return Err(Unsupported(format!("{name} is serde_json's own")));
        }
        Ok(Compound::open(self, b'{', b"}"))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'w, 'a>, Unsupported> {
        self.open_variant(variant);
        Ok(Compound::open(self, b'{', b"}}"))
    }
}

/// The serde traits of an array's members (`$method` is what serde calls adding one).
macro_rules! elements {
    ($($trait:ident :: $method:ident),*) => {$(
        impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = Unsupported;
            fn $method<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Unsupported> {
                self.element(value)
            }
            fn end(self) -> Result<(), Unsupported> {
                self.close()
            }
        }
    )*};
}
elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// The serde traits of a struct's fields.
macro_rules! fields {
    ($($trait:ident),*) => {$(
        impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = Unsupported;
            fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<(), Unsupported> {
                self.field(key, value)
            }
            fn end(self) -> Result<(), Unsupported> {
                self.close()
            }
        }
    )*};
}
fields!(SerializeStruct, SerializeStructVariant);

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Unsupported> {
        separate(self.w.out, &mut self.first);
        key.serialize(KeyWriter { out: self.w.out })
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.w.out.push(b':');
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.close()
    }
}

/// A map's key: a string, or a number or bool written as one, as serde_json writes keys; any other
/// kind is [`Unsupported`] (serde_json refuses most of them, and says how).
struct KeyWriter<'a> {
    out: &'a mut Vec<u8>,
}

impl KeyWriter<'_> {
    fn quoted(self, text: &str) -> Result<(), Unsupported> {
        write_str(self.out, text);
        Ok(())
    }
}

fn not_a_key<T>(kind: &str) -> Result<T, Unsupported> {
    Err(Unsupported(format!("a map key that is {kind}")))
}

impl ser::Serializer for KeyWriter<'_> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = ser::Impossible<(), Unsupported>;
    type SerializeTuple = ser::Impossible<(), Unsupported>;
    type SerializeTupleStruct = ser::Impossible<(), Unsupported>;
    type SerializeTupleVariant = ser::Impossible<(), Unsupported>;
    type SerializeMap = ser::Impossible<(), Unsupported>;
    type SerializeStruct = ser::Impossible<(), Unsupported>;
    type SerializeStructVariant = ser::Impossible<(), Unsupported>;

    fn serialize_str(self, v: &str) -> Result<(), Unsupported> {
        self.quoted(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Unsupported> {
        self.quoted(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_bool(self, v: bool) -> Result<(), Unsupported> {
        self.quoted(if v { "true" } else { "false" })
    }
    integers!(|w, v| w.quoted(itoa::Buffer::new().format(v)));
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Unsupported> {
        self.quoted(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_f32(self, _v: f32) -> Result<(), Unsupported> {
        not_a_key("a number with a fraction")
    }
    fn serialize_f64(self, _v: f64) -> Result<(), Unsupported> {
        not_a_key("a number with a fraction")
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<(), Unsupported> {
        not_a_key("bytes")
    }
    fn serialize_none(self) -> Result<(), Unsupported> {
        not_a_key("none")
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Unsupported> {
        not_a_key("a unit")
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Unsupported> {
        not_a_key("a unit struct")
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Unsupported> {
        not_a_key("a variant with content")
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Unsupported> {
        not_a_key("a sequence")
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Unsupported> {
        not_a_key("a tuple")
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Unsupported> {
        not_a_key("a tuple struct")
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Unsupported> {
        not_a_key("a variant with content")
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Unsupported> {
        not_a_key("a map")
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct, Unsupported> {
        not_a_key("a struct")
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Unsupported> {
        not_a_key("a variant with content")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use std::collections::BTreeMap;

    /// `value` written here, which must be what serde_json writes.
    fn same<T: Serialize + ?Sized>(value: &T) -> String {
        let mut ours = Vec::new();
        write(&mut ours, value).expect("written");
        let theirs = serde_json::to_vec(value).expect("serde_json writes it");
        assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&theirs));
        String::from_utf8(ours).expect("UTF-8")
    }

    /// The word-at-a-time scan against the byte-at-a-time definition: every byte (all 256) at every
    /// position of every length up to 40, among plain bytes and among bytes from 0x80 up.
    #[test]
    fn the_scan_finds_every_byte_to_escape_wherever_it_is() {
        for len in 0..40 {
            for fill in [b'a', b'~', 0x80, 0xff, b'!', b'#', b'[', b']'] {
                let plain = vec![fill; len];
                assert!(!any_to_escape(&plain), "{len} × {fill:#x}");
                for at in 0..len {
                    for b in 0..=255u8 {
                        let mut bytes = plain.clone();
                        bytes[at] = b;
                        assert_eq!(any_to_escape(&bytes), needs_escape(b), "{b:#x} at {at} of {len} × {fill:#x}");
                    }
                }
            }
        }
    }

    #[test]
    fn every_byte_a_string_can_hold_is_written_as_serde_json_writes_it() {
        // Each ASCII byte alone, at the start, in the middle and at the end of a longer string, so both
        // the scan and the escaping path see it at every position.
        for b in 0u8..0x80 {
            let c = char::from(b).to_string();
            same(&c);
            same(&format!("{c}a long run of plain text that the scan takes many bytes at a time"));
            same(&format!("before {c} after"));
            same(&format!("a long run of plain text that the scan takes many bytes at a time{c}"));
        }
        assert_eq!(same("\u{1f}\"\\\n\t\r\u{8}\u{c}\u{0}/"), r#""\u001f\"\\\n\t\r\b\f\u0000/""#);
        same("");
        same("é, 日本語, emoji 🚀, U+2028 \u{2028}, DEL \u{7f}");
        same(&"x".repeat(1000));
        same(&format!("{}\"{}", "y".repeat(500), "z".repeat(37)));
    }

    /// Any JSON value serde_json can hold: nested arrays and objects of any strings, integers, floats,
    /// bools and nulls.
    fn any_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            any::<f64>().prop_map(serde_json::Value::from),
            any::<String>().prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..8).prop_map(serde_json::Value::Array),
                proptest::collection::vec((any::<String>(), inner), 0..8)
                    .prop_map(|members| serde_json::Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Any string, of any characters (escapes, controls, quotes, anything beyond ASCII), and any
        /// value serde_json can hold, come out as serde_json writes them.
        #[test]
        fn any_string_or_value_is_written_as_serde_json_writes_it(text in ".*", bytes in proptest::collection::vec(0u8..0x80, 0..64), value in any_value()) {
            same(&text);
            same(&String::from_utf8(bytes).expect("ASCII"));
            same(&value);
        }
    }

    #[derive(Serialize)]
    #[serde(rename_all = "kebab-case")]
    enum Kind {
        Unit,
        Newtype(i64),
        Tuple(u8, String),
        Struct { a: Option<bool>, b: Vec<f64> },
    }

    #[derive(Serialize)]
    struct Unit;

    #[derive(Serialize)]
    struct Wrapper(String);

    #[derive(Serialize)]
    struct Inner {
        #[serde(rename = "with \"quote\"")]
        quoted: u32,
        plain: &'static str,
    }

    #[derive(Serialize)]
    struct Page {
        id: i64,
        name: String,
        score: f64,
        small: f32,
        missing: Option<String>,
        present: Option<&'static str>,
        kinds: Vec<Kind>,
        empty: Vec<u8>,
        bytes: serde_bytes_like::Bytes,
        unit: Unit,
        unit_value: (),
        wrapper: Wrapper,
        tuple: (i8, u16, char),
        #[serde(flatten)]
        inner: Inner,
        map: BTreeMap<String, i32>,
        by_number: BTreeMap<u64, bool>,
        by_bool: BTreeMap<bool, ()>,
        by_variant: BTreeMap<&'static str, Kind>,
        value: serde_json::Value,
        big: (i128, u128),
        shown: Shown,
    }

    /// A type written with `collect_str`, as chrono writes its times.
    struct Shown;
    impl Serialize for Shown {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(&format_args!("2026-12-06T16:{}:00Z \"{}\"", 59, '\n'))
        }
    }

    /// A type written with `serialize_bytes` (serde_json writes an array of numbers).
    mod serde_bytes_like {
        pub struct Bytes(pub Vec<u8>);
        impl serde::Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&self.0)
            }
        }
    }

    #[test]
    fn every_shape_serde_can_describe_is_written_as_serde_json_writes_it() {
        let page = Page {
            id: -9_223_372_036_854_775_808,
            name: "Larkhub \"beta\"\n".into(),
            score: 0.1 + 0.2,
            small: 1.5e-7,
            missing: None,
            present: Some("yes"),
            kinds: vec![
                Kind::Unit,
                Kind::Newtype(42),
                Kind::Tuple(7, "seven".into()),
                Kind::Struct {
                    a: None,
                    b: vec![1.0, -0.0, 1e21, 1e-7, f64::NAN, f64::INFINITY, 123_456.789, 5e-324, f64::MAX],
                },
                Kind::Struct { a: Some(false), b: vec![] },
            ],
            empty: vec![],
            bytes: serde_bytes_like::Bytes(vec![0, 1, 255]),
            unit: Unit,
            unit_value: (),
            wrapper: Wrapper("wrapped".into()),
            tuple: (-1, 65_535, '"'),
            inner: Inner { quoted: 1, plain: "p" },
            map: [("b".to_owned(), 2), ("a\tkey".to_owned(), -1)].into_iter().collect(),
            by_number: [(0, true), (u64::MAX, false)].into_iter().collect(),
            by_bool: [(true, ()), (false, ())].into_iter().collect(),
            by_variant: [("k", Kind::Unit)].into_iter().collect(),
            value: serde_json::json!({"z": [1, 2.5, null, true, "s"], "a": {"nested": {}}, "e": []}),
            big: (i128::MIN, u128::MAX),
            shown: Shown,
        };
        let written = same(&page);
        assert!(
            written.contains(r#""kinds":["unit",{"newtype":42},{"tuple":[7,"seven"]},{"struct":{"a":null"#),
            "{written}"
        );
        same(&Vec::<Page>::new());
        same(&vec![Some(1u8), None]);
        same(&f32::NAN);
    }

    #[test]
    fn what_serde_json_writes_its_own_way_is_left_to_it() {
        // What serde_json's `RawValue` (its `raw_value` feature, on in the server's build) writes.
        struct Raw;
        impl Serialize for Raw {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeStruct;
                let mut st = s.serialize_struct("$serde_json::private::RawValue", 1)?;
                st.serialize_field("$serde_json::private::RawValue", "{ \"as\" : \"written\" }")?;
                st.end()
            }
        }
        assert!(write(&mut Vec::new(), &vec![Raw]).is_err(), "a raw value is serde_json's");
        let tuple_keys: BTreeMap<String, BTreeMap<(u8, u8), u8>> =
            [("k".to_owned(), [((1, 2), 3)].into_iter().collect())].into_iter().collect();
        assert!(write(&mut Vec::new(), &tuple_keys).is_err(), "a key that is a tuple");
        let optional_key: BTreeMap<Option<&str>, u8> = [(Some("k"), 1)].into_iter().collect();
        same(&optional_key);
        fn refuse<S: serde::Serializer>(_: &u8, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("refused"))
        }
        #[derive(Serialize)]
        struct WithFailing {
            #[serde(serialize_with = "refuse")]
            f: u8,
        }
        let e = write(&mut Vec::new(), &WithFailing { f: 1 }).expect_err("the impl's error");
        assert_eq!(e.to_string(), "refused");
    }
}
