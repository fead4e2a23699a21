//! The operation descriptions themselves: ids, methods, paths and scopes as our operation table lists them, input
//! schemas self-contained and strict, and bounds that match the domain's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;

/// One row of `fixtures/reference/operations.tsv`: the operation table this repository implements.
struct Row {
    id: String,
    method: String,
    path: String,
    scope: Option<String>,
    idempotency_key: bool,
}

fn table() -> Vec<Row> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/reference/operations.tsv");
    let text = std::fs::read_to_string(path).expect("fixtures/reference/operations.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            assert_eq!(c.len(), 5, "five columns: {l}");
            Row {
                id: c[0].to_owned(),
                method: c[1].to_lowercase(),
                path: c[2].to_owned(),
                scope: (c[3] != "-").then(|| c[3].to_owned()),
                idempotency_key: match c[4] {
                    "idempotent" => true,
                    "-" => false,
                    other => panic!("idempotency column: {other}"),
                },
            }
        })
        .collect()
}

#[test]
fn every_operation_matches_the_table() {
    let table = table();
    assert_eq!(table.len(), 41);
    let ops = operations::registry();
    assert_eq!(ops.len(), table.len(), "every row is implemented, nothing more");
    for op in &ops {
        let s = table.iter().find(|s| s.id == op.id).unwrap_or_else(|| panic!("{} is not in the table", op.id));
        assert_eq!(s.method, op.method.as_str(), "{}", op.id);
        assert_eq!(s.path, format!("/api/v1{}", op.path), "{}", op.id);
        assert_eq!(s.scope.as_deref(), op.scope.map(|sc| sc.as_str()), "{}", op.id);
        assert_eq!(s.idempotency_key, op.idempotency_key, "{}: Idempotency-Key", op.id);
    }
    let mut ids: Vec<&str> = ops.iter().map(|o| o.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), ops.len(), "each operationId once");
}

fn walk<'a>(v: &'a Value, out: &mut Vec<(&'a str, &'a Value)>) {
    if let Some(obj) = v.as_object() {
        for (k, child) in obj {
            out.push((k.as_str(), child));
            walk(child, out);
        }
    } else if let Some(arr) = v.as_array() {
        arr.iter().for_each(|c| walk(c, out));
    }
}

#[test]
fn input_schemas_are_self_contained_and_strict() {
    for op in operations::registry() {
        let mut nodes = Vec::new();
        walk(&op.input_schema, &mut nodes);
        assert!(
            !nodes.iter().any(|(k, _)| *k == "$ref"),
            "{}: input schema must be inline (MCP tools carry it whole)",
            op.id
        );
        assert_eq!(
            op.input_schema["additionalProperties"],
            Value::Bool(false),
            "{}: unknown inputs are refused",
            op.id
        );
        assert_eq!(op.input_schema["type"], "object", "{}", op.id);
    }
}

#[test]
fn slug_parameters_use_the_domain_grammar() {
    for op in operations::registry() {
        for (name, prop) in op.input_schema["properties"].as_object().into_iter().flatten() {
            if let Some(p) = prop.get("pattern").and_then(Value::as_str)
                && p.starts_with("^[a-z0-9]")
            {
                assert_eq!(p, domain::slug::Slug::PATTERN, "{}.{name}", op.id);
                assert_eq!(prop["maxLength"], domain::slug::Slug::MAX, "{}.{name}", op.id);
            }
        }
    }
}

#[test]
fn the_openapi_document_lists_each_operation_once() {
    let ops = operations::registry();
    let doc = operations::openapi::document(&ops, "http://x.example");
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], "1.0.0");
    let mut found = Vec::new();
    for (_, item) in doc["paths"].as_object().unwrap() {
        for (_, op) in item.as_object().unwrap() {
            found.push(op["operationId"].as_str().unwrap().to_owned());
            assert!(op["responses"]["400"].is_object() && op["responses"]["429"].is_object());
        }
    }
    found.sort();
    let mut want: Vec<String> = ops.iter().map(|o| o.id.to_owned()).collect();
    want.sort();
    assert_eq!(found, want);
    let search = &doc["paths"]["/listings"]["get"];
    let page = search["parameters"].as_array().unwrap().iter().find(|p| p["name"] == "page").unwrap();
    assert_eq!(page["in"], "query");
    assert_eq!(page["schema"]["type"], "integer");
    assert_eq!((page["schema"]["minimum"].as_i64(), page["schema"]["maximum"].as_i64()), (Some(1), Some(1000)));
    let sort = search["parameters"].as_array().unwrap().iter().find(|p| p["name"] == "sort").unwrap();
    let names: Vec<&str> = sort["schema"]["enum"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(names, domain::listing::SearchSort::NAMES);
}

#[test]
fn update_draft_declares_every_bound() {
    let op = operations::registry().into_iter().find(|o| o.id == "update_draft").unwrap();
    let s = &op.input_schema["properties"];
    // An optional object is `oneOf: [object, null]`.
    let obj = |v: &'static str| -> Value {
        let v = &s[v];
        v.get("oneOf").and_then(|o| o.as_array()?.iter().find(|x| x["type"] == "object").cloned()).unwrap_or(v.clone())
    };
    let fields_obj = obj("fields");
    let fields = &fields_obj["properties"];
    assert_eq!(fields_obj["additionalProperties"], false, "no other keys inside fields");
    assert_eq!(fields["name"]["maxLength"], 500);
    assert_eq!(fields["description"]["maxLength"], 20000);
    assert_eq!(fields["tags"]["maxItems"], 20);
    assert_eq!(fields["tags"]["items"]["maxLength"], 200, "{}", fields["tags"]);
    for (key, max) in
        [("lock_fields", 20), ("regenerate", 5), ("restore", 20), ("faqs", 10), ("founders", 6), ("milestones", 50)]
    {
        assert_eq!(s[key]["maxItems"], max, "{key}: {}", s[key]);
    }
    assert_eq!(s["faqs"]["items"]["properties"]["question"]["maxLength"], 300);
    assert_eq!(s["faqs"]["items"]["properties"]["answer"]["maxLength"], 1500);
    assert_eq!(s["founders"]["items"]["properties"]["bio"]["maxLength"], 3000);
    assert_eq!(s["milestones"]["items"]["properties"]["title"]["maxLength"], 200);
    assert_eq!(obj("story")["properties"]["lessons"]["maxLength"], 8000);
    assert_eq!(obj("seo")["properties"]["title"]["maxLength"], 70);
    assert_eq!(obj("seo")["properties"]["meta"]["maxLength"], 170);
    assert_eq!(s["competitor_url"]["maxLength"], 2048);
    assert_eq!(s["company_socials"]["additionalProperties"]["maxLength"], 500, "{}", s["company_socials"]);
    let submit = operations::registry().into_iter().find(|o| o.id == "submit_listing").unwrap();
    assert_eq!(submit.input_schema["properties"]["url"]["maxLength"], 2048);
}

/// docs/API.md is the OpenAPI document rendered as Markdown; it is regenerated, never edited.
#[test]
fn the_api_reference_in_the_repository_is_the_served_document() {
    let doc = operations::openapi::document(&operations::registry(), "https://launchdir.example");
    let want = operations::reference::markdown(&doc);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/API.md");
    if std::env::var("LAUNCHDIR_WRITE_DOCS").as_deref() == Ok("1") {
        std::fs::write(path, &want).unwrap();
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "docs/API.md is out of date: run `LAUNCHDIR_WRITE_DOCS=1 cargo test -p operations --test describe`"
    );
    for op in operations::registry() {
        assert!(want.contains(&format!("\n## {}\n", op.id)), "{} is in the reference", op.id);
    }
}
