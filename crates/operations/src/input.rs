//! Turning raw inputs into typed ones: query strings coerced by the input schema, then serde with the
//! failing field's path, so every 400 names its field.

use crate::OpError;
use domain::ValidationError;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Deserializes an input object; an error names the field (`page`, `fields.name`, `answers[3].answer`).
pub fn parse_input<T: DeserializeOwned>(mut value: Value) -> Result<T, OpError> {
    integral_floats_as_integers(&mut value);
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // The path ends with the offending key, an unknown one included; "." is the whole input. A missing
        // field is reported at its parent, so its name is taken from the message.
        let parent = if path == "." || path.is_empty() { None } else { Some(path) };
        let missing = inner.strip_prefix("missing field `").and_then(|r| r.split('`').next());
        let field = match (parent, missing) {
            (Some(p), Some(m)) => format!("{p}.{m}"),
            (None, Some(m)) => m.to_owned(),
            (Some(p), None) => p,
            (None, None) => "body".to_owned(),
        };
        let problem = simplify(&inner);
        OpError::from(ValidationError::new(field, problem))
    })
}

/// JSON Schema counts `2004.0` as an integer, and so do we: a whole number written with a fraction
/// becomes an integer before serde, which would refuse it for an `i64`. Fields that take fractions
/// accept integers, so nothing else changes.
fn integral_floats_as_integers(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && *f >= i64::MIN as f64 && *f < i64::MAX as f64) {
                *v = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_as_integers),
        Value::Object(map) => map.values_mut().for_each(integral_floats_as_integers),
        _ => {}
    }
}

/// serde's messages, minus the line/column noise a JSON value never has.
fn simplify(msg: &str) -> String {
    let msg = msg.split(" at line ").next().unwrap_or(msg);
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        let name = rest.split('`').next().unwrap_or_default();
        return format!("unknown field {name:?}; this operation does not accept it");
    }
    if msg.starts_with("missing field `") {
        return "is required".to_owned();
    }
    if let Some(rest) = msg.strip_prefix("unknown variant `") {
        let (got, expected) = rest.split_once("`, expected ").unwrap_or((rest, ""));
        return format!("{got:?} is not allowed; expected {}", expected.replace('`', ""));
    }
    msg.to_owned()
}

/// Refuses a JSON array where the schema asks for an object: serde would read `[a, b]` as a struct's
/// fields by position, which the document does not allow. Walks properties and array items; the error
/// names the field (`seo`, `founders[2]`).
pub fn objects_are_objects(schema: &Value, value: &Value, path: &str) -> Result<(), ValidationError> {
    // The schema itself, or its `oneOf` / `anyOf` branches (an optional object is `oneOf [object, null]`).
    let branches: Vec<&Value> = match schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array) {
        Some(bs) => bs.iter().collect(),
        None => vec![schema],
    };
    let is = |b: &Value, ty: &str| match b.get("type") {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == ty),
        _ => ty == "object" && b.get("properties").is_some(),
    };
    let object = branches.iter().copied().find(|b| is(b, "object"));
    let array = branches.iter().copied().find(|b| is(b, "array"));
    let name = |p: &str| if p.is_empty() { "body".to_owned() } else { p.to_owned() };
    match value {
        Value::Array(_) if object.is_some() && array.is_none() => {
            Err(ValidationError::new(name(path), "must be a JSON object"))
        }
        Value::Array(items) => match array.and_then(|a| a.get("items")) {
            Some(item) => {
                items.iter().enumerate().try_for_each(|(i, v)| objects_are_objects(item, v, &format!("{path}[{i}]")))
            }
            None => Ok(()),
        },
        Value::Object(map) => {
            let Some(props) = object.and_then(|o| o.get("properties")).and_then(Value::as_object) else {
                return Ok(());
            };
            map.iter().try_for_each(|(k, v)| match props.get(k) {
                Some(p) => objects_are_objects(p, v, &if path.is_empty() { k.clone() } else { format!("{path}.{k}") }),
                None => Ok(()),
            })
        }
        _ => Ok(()),
    }
}

/// Builds an input object from string pairs (path and query parameters), converting each value to the
/// type its property declares in `schema` (integer, number, boolean; otherwise string). Names the
/// schema does not know are passed through, so the strict input type refuses them by name.
pub fn coerce_strings<'a>(
    schema: &Value,
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<Value, OpError> {
    let props = schema.get("properties").and_then(Value::as_object);
    let mut out = Map::new();
    for (name, raw) in pairs {
        let ty = props.and_then(|p| p.get(name)).map(declared_type).unwrap_or("string");
        let v = match ty {
            "integer" => {
                raw.parse::<i64>().map(Value::from).map_err(|_| ValidationError::new(name, "must be an integer"))?
            }
            "number" => raw
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| ValidationError::new(name, "must be a number"))?,
            "boolean" => match raw {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => return Err(ValidationError::new(name, "must be true or false").into()),
            },
            _ => Value::String(raw.to_owned()),
        };
        if out.insert(name.to_owned(), v).is_some() {
            return Err(ValidationError::new(name, "given more than once").into());
        }
    }
    Ok(Value::Object(out))
}

/// The non-null type of a property schema (`["integer", "null"]` → `integer`).
fn declared_type(prop: &Value) -> &str {
    match prop.get("type") {
        Some(Value::String(t)) => t,
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or("string"),
        _ => "string",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[test]
    fn whole_numbers_with_a_fraction_are_integers() {
        #[derive(Debug, Deserialize)]
        struct In {
            year: i64,
            ratio: f64,
            list: Vec<i64>,
        }
        let got: In = parse_input(json!({"year": 2004.0, "ratio": 0.5, "list": [1.0, 2]})).unwrap();
        assert_eq!((got.year, got.ratio, got.list), (2004, 0.5, vec![1, 2]));
        let err = parse_input::<In>(json!({"year": 2004.5, "ratio": 1, "list": []})).unwrap_err();
        let OpError::Invalid(e) = err else { panic!("expected a 400, got {err:?}") };
        assert_eq!(e.0[0].field, "year");
    }

    #[test]
    fn arrays_never_stand_for_objects() {
        let schema = json!({"type": "object", "properties": {
            "seo": {"oneOf": [{"type": "object", "properties": {"title": {"type": "string"}}}, {"type": "null"}]},
            "story": {"type": ["object", "null"], "properties": {"title": {"type": "string"}}},
            "founders": {"type": "array", "items": {"type": "object", "properties": {}}},
            "tags": {"type": "array", "items": {"type": "string"}},
        }});
        assert!(
            objects_are_objects(&schema, &json!({"seo": {"title": "x"}, "tags": ["a"], "founders": [{}]}), "").is_ok()
        );
        assert_eq!(objects_are_objects(&schema, &json!({"seo": [null, null]}), "").unwrap_err().field, "seo");
        assert_eq!(objects_are_objects(&schema, &json!({"story": ["t"]}), "").unwrap_err().field, "story");
        assert!(objects_are_objects(&schema, &json!({"seo": null}), "").is_ok());
        assert_eq!(
            objects_are_objects(&schema, &json!({"founders": [{}, ["x"]]}), "").unwrap_err().field,
            "founders[1]"
        );
        assert_eq!(objects_are_objects(&schema, &json!([1]), "").unwrap_err().field, "body");
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Probe {
        page: Option<i64>,
        inner: Option<Inner>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        name: String,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Required {
        a: String,
        inner: Option<Inner>,
    }

    fn field_of(r: Result<Probe, OpError>) -> String {
        match r {
            Err(OpError::Invalid(v)) => v.0[0].field.clone(),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(field_of(parse_input(json!({"page": "x"}))), "page");
        assert_eq!(field_of(parse_input(json!({"nope": 1}))), "nope");
        assert_eq!(field_of(parse_input(json!({"inner": {"name": 1}}))), "inner.name");
        assert_eq!(field_of(parse_input(json!({"inner": {"name": "a", "extra": 1}}))), "inner.extra");
        assert!(parse_input::<Probe>(json!({"page": 3})).is_ok());
        match parse_input::<Required>(json!({})) {
            Err(OpError::Invalid(v)) => {
                assert_eq!((v.0[0].field.as_str(), v.0[0].problem.as_str()), ("a", "is required"))
            }
            other => panic!("{other:?}"),
        }
        match parse_input::<Required>(json!({"a": "x", "inner": {}})) {
            Err(OpError::Invalid(v)) => assert_eq!(v.0[0].field, "inner.name"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn query_strings_follow_the_schema() {
        let schema =
            json!({"properties": {"page": {"type": ["integer", "null"]}, "include_empty": {"type": "boolean"}}});
        let v = coerce_strings(&schema, [("page", "2"), ("include_empty", "false"), ("q", "12")]).unwrap();
        assert_eq!(v, json!({"page": 2, "include_empty": false, "q": "12"}));
        assert!(coerce_strings(&schema, [("page", "two")]).is_err());
        assert!(coerce_strings(&schema, [("include_empty", "yes")]).is_err());
        assert!(coerce_strings(&schema, [("page", "1"), ("page", "2")]).is_err());
    }
}
