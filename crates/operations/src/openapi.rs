//! The OpenAPI 3.1 document, generated from the operation descriptors: the same schemas the inputs
//! are parsed with, so the document cannot promise a bound the service does not enforce.

use crate::Descriptor;
use serde_json::{Map, Value, json};

/// The error body of CONTRACT.md.
fn error_schema() -> Value {
    json!({
        "type": "object",
        "required": ["error"],
        "properties": {"error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string", "description": "snake_case error code"},
                "message": {"type": "string", "description": "for a person"},
                "details": {"type": "array", "items": {
                    "type": "object",
                    "required": ["field", "problem"],
                    "properties": {"field": {"type": "string"}, "problem": {"type": "string"}}
                }}
            }
        }}
    })
}

fn error_response(description: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

/// A parameter's schema: the property's, without `null` (an absent parameter is how "none" is said).
fn parameter_schema(prop: &Value) -> Value {
    let mut p = prop.clone();
    if let Some(obj) = p.as_object_mut() {
        obj.remove("description");
        if let Some(Value::Array(types)) = obj.get("type") {
            let non_null: Vec<Value> = types.iter().filter(|t| t.as_str() != Some("null")).cloned().collect();
            if non_null.len() == 1 {
                obj.insert("type".into(), non_null[0].clone());
            }
        }
        if let Some(Value::Array(alts)) = obj.get("oneOf").cloned() {
            let rest: Vec<Value> =
                alts.into_iter().filter(|a| a.get("type").and_then(Value::as_str) != Some("null")).collect();
            if rest.len() == 1 {
                let default = obj.remove("default");
                p = rest[0].clone();
                if let (Some(d), Some(o)) = (default, p.as_object_mut()) {
                    o.insert("default".into(), d);
                }
            }
        }
    }
    p
}

fn operation(op: &Descriptor) -> Value {
    let props = op.input_schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let required: Vec<&str> = op
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let path_params = op.path_params();
    let mut parameters = Vec::new();
    let mut body_props = Map::new();
    let mut body_required = Vec::new();
    for (name, prop) in &props {
        let is_path = path_params.contains(&name.as_str());
        if is_path || op.method.takes_query() {
            let mut param = json!({
                "name": name,
                "in": if is_path { "path" } else { "query" },
                "required": is_path || required.contains(&name.as_str()),
                "schema": parameter_schema(prop),
            });
            if let Some(d) = prop.get("description") {
                param["description"] = d.clone();
            }
            parameters.push(param);
        } else {
            body_props.insert(name.clone(), prop.clone());
            if required.contains(&name.as_str()) {
                body_required.push(Value::String(name.clone()));
            }
        }
    }
    if op.idempotency_key {
        parameters.push(json!({
            "name": "Idempotency-Key",
            "in": "header",
            "required": false,
            "description": "Makes a retry safe: the first response to this key is replayed (with Idempotent-Replayed: true) \
                for 24 hours; the key with a different request is a 422, a retry while the first runs a 409.",
            "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x21-\\x7E]+$"},
        }));
    }
    let mut responses = Map::new();
    responses.insert(
        op.status.to_string(),
        json!({"description": "success", "content": {"application/json": {"schema": op.output_schema}}}),
    );
    responses.insert("400".into(), error_response("invalid request; details name each offending field"));
    if op.scope.is_some() {
        responses.insert("401".into(), error_response("not signed in, or the credential is invalid"));
        responses.insert("403".into(), error_response("the credential lacks the operation's scope"));
    } else {
        responses.insert("401".into(), error_response("the credential sent is invalid (anonymous calls are welcome)"));
    }
    if op.not_found {
        responses.insert("404".into(), error_response("not found, or not the caller's"));
    }
    match (op.read_only, op.idempotency_key) {
        (false, true) => {
            responses.insert(
                "409".into(),
                error_response("the record's state does not allow this now (the message names it), or a request with this Idempotency-Key is still running"),
            );
        }
        (false, false) => {
            responses.insert(
                "409".into(),
                error_response("the record's state does not allow this now (the message names it)"),
            );
        }
        (true, true) => {
            responses.insert("409".into(), error_response("a request with this Idempotency-Key is still running"));
        }
        (true, false) => {}
    }
    if op.idempotency_key {
        responses.insert("422".into(), error_response("this Idempotency-Key was used with a different request"));
    }
    // Any request may carry a body, and every body is bounded, whether the operation reads one or not.
    responses.insert(
        "408".into(),
        error_response("a body that did not arrive within the server's deadline after the request's head (30 s unless configured); the connection closes"),
    );
    responses.insert("413".into(), error_response("a body over 1 MiB (1 048 576 bytes); the connection closes"));
    responses.insert(
        "415".into(),
        error_response(if op.method.takes_query() {
            "a body sent in a Content-Encoding other than identity"
        } else {
            "a body sent with a Content-Type other than application/json, or in a Content-Encoding other than identity"
        }),
    );
    responses.insert(
        "429".into(),
        error_response("rate limited, or a quota of the caller's is spent (crawls, emails); see Retry-After"),
    );
    responses.insert(
        "503".into(),
        error_response("the service is starting, or cannot reach its database just now; retry after Retry-After"),
    );
    let security = match op.scope {
        None => json!([{}, {"bearerAuth": []}]),
        Some(s) => json!([{"bearerAuth": [s.as_str()]}]),
    };
    let mut o = json!({
        "operationId": op.id,
        "summary": op.summary,
        "description": op.description,
        "parameters": parameters,
        "responses": responses,
        "security": security,
    });
    if !op.method.takes_query() && !body_props.is_empty() {
        let mut body = json!({
            "type": "object",
            "properties": body_props,
            "required": body_required,
            "additionalProperties": false,
        });
        // Rules between body fields (see Operation::refine_input_schema) apply to the body as they are.
        for rule in ["if", "then", "else", "allOf", "anyOf", "oneOf"] {
            if let Some(r) = op.input_schema.get(rule) {
                body[rule] = r.clone();
            }
        }
        o["requestBody"] = json!({
            "required": !body_required.is_empty(),
            "content": {"application/json": {"schema": body}}
        });
    }
    o
}

/// The whole document; `public_url` is the service's base URL.
pub fn document(ops: &[Descriptor], public_url: &str) -> Value {
    let mut paths: Map<String, Value> = Map::new();
    let mut schemas = Map::new();
    schemas.insert("Error".into(), error_schema());
    for op in ops {
        let item = paths.entry(op.path.to_owned()).or_insert_with(|| json!({}));
        item[op.method.as_str()] = operation(op);
        for (name, s) in &op.output_components {
            schemas.insert(name.clone(), s.clone());
        }
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "launchdir API",
            "version": "1.0.0",
            "description": "A product-launch directory. Public reads need no sign-in; everything else takes an OAuth 2 \
                access token or an API key as `Authorization: Bearer …`. Votes are never cast through the API.",
        },
        "servers": [{"url": format!("{}/api/v1", public_url.trim_end_matches('/'))}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer", "description": "An API key or an OAuth 2 access token"}},
        },
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    /// `\s` and `\S` mean different sets in ECMA, Python and Rust regexes, and `str::trim` follows
    /// none of them exactly: a "not blank" text says so with the domain's explicit pattern.
    #[test]
    fn no_input_pattern_relies_on_backslash_s() {
        fn walk(v: &serde_json::Value, at: &str, bad: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(o) => {
                    if let Some(p) = o.get("pattern").and_then(|p| p.as_str())
                        && (p.contains("\\s") || p.contains("\\S"))
                    {
                        bad.push(format!("{at}: {p}"));
                    }
                    o.iter().for_each(|(k, c)| walk(c, &format!("{at}.{k}"), bad));
                }
                serde_json::Value::Array(a) => a.iter().for_each(|c| walk(c, at, bad)),
                _ => {}
            }
        }
        let mut bad = Vec::new();
        let mut blank_checks = 0;
        for op in crate::registry() {
            walk(&op.input_schema, op.id, &mut bad);
            blank_checks +=
                op.input_schema.to_string().matches(&domain::text::NOT_BLANK_PATTERN.replace('\\', "\\\\")).count();
        }
        assert!(bad.is_empty(), "{bad:?}");
        assert!(blank_checks >= 6, "the not-blank pattern is used ({blank_checks})");
    }

    /// Two Rust types with one name would share one component, and the document would describe one of
    /// them under the other's name (a draft's milestone has no id; a listing's has).
    #[test]
    fn each_component_name_is_one_schema() {
        let mut seen: BTreeMap<String, (serde_json::Value, &'static str)> = BTreeMap::new();
        let mut clashes = Vec::new();
        for op in crate::registry() {
            for (name, schema) in &op.output_components {
                match seen.get(name) {
                    Some((s, first)) if s != schema => clashes.push(format!("{name}: {first} and {}", op.id)),
                    Some(_) => {}
                    None => {
                        seen.insert(name.clone(), (schema.clone(), op.id));
                    }
                }
            }
        }
        assert!(!seen.is_empty());
        assert!(clashes.is_empty(), "component names used by different schemas: {clashes:?}");
    }
}
