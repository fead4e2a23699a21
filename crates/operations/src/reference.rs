//! The API reference as Markdown (`docs/API.md`), rendered from the OpenAPI document itself, so the
//! repository's own reference cannot drift from what the service serves at `/api/v1/openapi.json` and
//! `/api/v1/docs` (a test compares them; `LAUNCHDIR_WRITE_DOCS=1 cargo test -p operations --test
//! describe` writes it anew).

use serde_json::Value;
use std::fmt::Write;

/// A schema in a few words: its type (or types), the closed list of values, and its bounds.
fn summary(s: &Value) -> String {
    if let Some(alts) = s.get("oneOf").and_then(Value::as_array) {
        return alts.iter().map(summary).collect::<Vec<_>>().join(" or ");
    }
    let mut out = match &s["type"] {
        Value::String(t) => t.clone(),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" or "),
        _ if s.get("enum").is_some() => "one of".to_owned(),
        _ => "any".to_owned(),
    };
    if out == "array"
        && let Some(items) = s.get("items")
    {
        out = format!("array of {}", summary(items));
    }
    let mut bounds = Vec::new();
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        let names: Vec<String> =
            e.iter().map(|v| format!("`{}`", v.as_str().map_or(v.to_string(), str::to_owned))).collect();
        bounds.push(names.join(", "));
    }
    for (key, label) in [
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("minimum", "min"),
        ("maximum", "max"),
        ("minItems", "min items"),
        ("maxItems", "max items"),
        ("format", "format"),
        ("default", "default"),
    ] {
        if let Some(v) = s.get(key) {
            bounds.push(format!("{label} {}", v.as_str().map_or(v.to_string(), str::to_owned)));
        }
    }
    if bounds.is_empty() { out } else { format!("{out} ({})", bounds.join("; ")) }
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// Renders `doc` (as `openapi::document` makes it) as Markdown.
pub fn markdown(doc: &Value) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# launchdir API reference\n");
    let _ = writeln!(
        md,
        "Generated from the service's OpenAPI {} document (version {}); do not edit by hand: \
         `LAUNCHDIR_WRITE_DOCS=1 cargo test -p operations --test describe` writes it anew. A running service \
         serves the same document at `/api/v1/openapi.json` and a page at `/api/v1/docs`; lists that live in \
         the database (categories, products, interview questions) are filled in there.\n",
        doc["openapi"].as_str().unwrap_or_default(),
        doc["info"]["version"].as_str().unwrap_or_default()
    );
    let _ = writeln!(md, "{}\n", doc["info"]["description"].as_str().unwrap_or_default());
    let _ = writeln!(
        md,
        "All paths are under `/api/v1`. Every error is `{{\"error\": {{\"code\", \"message\", \"details\"}}}}`; \
         a 400's details name each offending field. Every operation is also an MCP tool of the same name at \
         `/mcp`.\n"
    );
    // Every list is sorted here: serde_json's maps iterate in insertion order or sorted depending on a
    // feature another crate of the build may turn on, and the reference must not depend on which.
    let mut ops: Vec<(&str, &str, &Value)> = Vec::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for (method, op) in item.as_object().into_iter().flatten() {
            ops.push((path.as_str(), method.as_str(), op));
        }
    }
    ops.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    let _ = writeln!(md, "| operation | method and path | sign-in |\n|---|---|---|");
    for (path, method, op) in &ops {
        let id = op["operationId"].as_str().unwrap_or_default();
        let _ = writeln!(md, "| [`{id}`](#{id}) | `{} /api/v1{path}` | {} |", method.to_uppercase(), scope(op));
    }
    for (path, method, op) in &ops {
        let id = op["operationId"].as_str().unwrap_or_default();
        let _ = writeln!(md, "\n## {id}\n");
        let _ = writeln!(md, "`{} /api/v1{path}` · {}\n", method.to_uppercase(), scope(op));
        let _ = writeln!(
            md,
            "**{}.** {}\n",
            op["summary"].as_str().unwrap_or_default(),
            op["description"].as_str().unwrap_or_default()
        );
        let params = op["parameters"].as_array().map(Vec::as_slice).unwrap_or_default();
        if !params.is_empty() {
            let _ = writeln!(md, "| parameter | in | required | type and bounds |\n|---|---|---|---|");
            for p in params {
                let _ = writeln!(
                    md,
                    "| `{}` | {} | {} | {} |",
                    p["name"].as_str().unwrap_or_default(),
                    p["in"].as_str().unwrap_or_default(),
                    if p["required"] == true { "yes" } else { "no" },
                    cell(&summary(&p["schema"]))
                );
            }
            md.push('\n');
        }
        let body = &op["requestBody"]["content"]["application/json"]["schema"];
        if let Some(props) = body["properties"].as_object() {
            let required: Vec<&str> =
                body["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            let _ = writeln!(md, "| body field | required | type and bounds |\n|---|---|---|");
            let mut props: Vec<(&String, &Value)> = props.iter().collect();
            props.sort_by(|a, b| a.0.cmp(b.0));
            for (name, s) in props {
                let _ = writeln!(
                    md,
                    "| `{name}` | {} | {} |",
                    if required.contains(&name.as_str()) { "yes" } else { "no" },
                    cell(&summary(s))
                );
                // One level down: an object's own fields, and the fields of a list's items.
                let object = s
                    .get("oneOf")
                    .and_then(Value::as_array)
                    .and_then(|a| a.iter().find(|x| x["type"] == "object"))
                    .unwrap_or(s);
                let inner = object["properties"].as_object().or_else(|| object["items"]["properties"].as_object());
                let suffix = if object["properties"].is_object() { "" } else { "[]" };
                let mut inner: Vec<(&String, &Value)> = inner.into_iter().flatten().collect();
                inner.sort_by(|a, b| a.0.cmp(b.0));
                for (sub, ss) in inner {
                    let _ = writeln!(md, "| `{name}{suffix}.{sub}` | | {} |", cell(&summary(ss)));
                }
            }
            md.push('\n');
        }
        let mut responses: Vec<String> = op["responses"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(status, r)| format!("{status} {}", r["description"].as_str().unwrap_or_default()))
            .collect();
        responses.sort();
        let _ = writeln!(md, "Responses: {}.", responses.join("; "));
    }
    md
}

fn scope(op: &Value) -> String {
    let scopes: Vec<&str> = op["security"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["bearerAuth"].as_array())
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    match scopes.as_slice() {
        [] => "public (credentials accepted)".to_owned(),
        s => format!("scope `{}`", s.join("`, `")),
    }
}
