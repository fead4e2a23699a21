//! What an input's Rust type cannot say in its JSON Schema, added to the one description REST and MCP
//! share: closed lists the domain fixes (draft field names, social platforms, ISO country codes), rules
//! between fields, and lists that live in the database (categories, interview questions, products and
//! their prices). The latter are marked with `x-reference` in the static schema and filled in from the
//! store whenever the OpenAPI document or the MCP tool list is served, so the description always names
//! what the service accepts at that moment.

use crate::OpResult;
use domain::product::{Product, ProductKind};
use serde_json::{Map, Value, json};

/// Bounds of the top-level inputs that mean the same in every operation that takes them, from the
/// domain's constants (one source: the schema cannot drift from what the parsers accept). Applied to
/// every operation's input schema before its own refinements.
pub fn common_bounds(schema: &mut Value) {
    use domain::listing::{CountryCode, DomainFilter, PricingModel};
    use domain::paging::PageRequest;
    use domain::slug::Slug;
    use domain::week::LaunchWeek;
    let slug = json!({"maxLength": Slug::MAX, "pattern": Slug::PATTERN});
    let bounds = [
        ("page", json!({"minimum": 1, "maximum": PageRequest::MAX_PAGE})),
        ("per_page", json!({"minimum": 1, "maximum": PageRequest::MAX_PER_PAGE})),
        ("slug", slug.clone()),
        ("category", slug.clone()),
        ("stage", slug.clone()),
        ("listing", slug.clone()),
        ("a", slug.clone()),
        ("b", slug),
        (
            "country",
            json!({"minLength": CountryCode::LEN, "maxLength": CountryCode::LEN, "pattern": CountryCode::PATTERN}),
        ),
        ("domain", json!({"maxLength": DomainFilter::MAX})),
        ("pricing_model", json!({"maxLength": PricingModel::MAX})),
        ("week", json!({"maxLength": LaunchWeek::MAX_PARAM_LEN, "pattern": LaunchWeek::PARAM_PATTERN})),
    ];
    let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) else { return };
    for (name, keys) in bounds {
        if let (Some(Value::Object(p)), Value::Object(keys)) = (props.get_mut(name), keys) {
            p.extend(keys);
        }
    }
}

/// Sets `maxLength` on each text property under `path` from its bound (a table the domain keeps).
pub fn max_lengths(schema: &mut Value, path: &[&str], bounds: &[(&str, usize)]) {
    for (name, max) in bounds {
        let mut at_field = path.to_vec();
        at_field.push(name);
        set(schema, &at_field, "maxLength", json!(max));
    }
}

/// The bounds of a domain text type on the schema at `path`: its length and, when blank text is
/// refused, at least one character that is not white space.
pub fn text<T: domain::text::Bounded>(schema: &mut Value, path: &[&str]) {
    set(schema, path, "maxLength", json!(T::MAX_CHARS));
    if T::REQUIRED {
        set(schema, path, "minLength", json!(1));
        set(schema, path, "pattern", json!(domain::text::NOT_BLANK_PATTERN));
    }
}

/// `path` followed by `more`.
pub fn under<'a>(path: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    path.iter().chain(more).copied().collect()
}

/// The marker key: its value names the list (`category`, `interview-question`, `order-item`).
pub const MARKER: &str = "x-reference";

/// The schema at `path` (property names; `[]` for array items), looking through `oneOf` / `anyOf`
/// wrappers (an optional object is `oneOf [object, null]`).
pub fn at<'a>(schema: &'a mut Value, path: &[&str]) -> Option<&'a mut Value> {
    let Some((first, rest)) = path.split_first() else { return Some(schema) };
    let key = if *first == "[]" { "items" } else { "properties" };
    let holds = |s: &Value| {
        if *first == "[]" {
            s.get("items").is_some()
        } else {
            s.get("properties").is_some_and(|p| p.get(*first).is_some())
        }
    };
    let node = if holds(schema) {
        schema
    } else {
        let alts = ["oneOf", "anyOf"].into_iter().find(|k| schema.get(k).is_some())?;
        schema.get_mut(alts)?.as_array_mut()?.iter_mut().find(|s| holds(s))?
    };
    let next = if *first == "[]" { node.get_mut(key)? } else { node.get_mut(key)?.get_mut(*first)? };
    at(next, rest)
}

/// Sets `key` on the schema at `path`; a path the schema lacks is a programming error caught by the
/// tests that build every descriptor.
pub fn set(schema: &mut Value, path: &[&str], key: &str, value: Value) {
    match at(schema, path) {
        Some(Value::Object(o)) => {
            o.insert(key.to_owned(), value);
        }
        _ => panic!("input schema has no object at {path:?}"),
    }
}

/// The schema at `path` takes its values from a list in the database.
pub fn mark(schema: &mut Value, path: &[&str], list: &str) {
    set(schema, path, MARKER, Value::String(list.to_owned()));
}

/// A socials object: keys from the platforms the domain knows, values http(s) links.
pub fn socials(schema: &mut Value, path: &[&str]) {
    set(schema, path, "propertyNames", json!({"type": "string", "enum": domain::social::PLATFORMS}));
    if let Some(Value::Object(link)) = at(schema, path).and_then(|m| m.get_mut("additionalProperties")) {
        link.insert("maxLength".into(), json!(domain::social::Socials::MAX_LINK));
    }
}

/// A list of draft field names (lock_fields, regenerate, restore).
pub fn draft_field_names(schema: &mut Value, path: &[&str]) {
    let names: Vec<&str> = domain::draft::DraftField::ALL.iter().map(|f| f.as_str()).collect();
    set(schema, &[path, &["[]"]].concat(), "enum", json!(names));
}

/// A regular expression matching exactly the assigned ISO 3166-1 alpha-2 codes, in any case (the
/// service upper-cases them).
pub fn country_pattern() -> String {
    let alts: Vec<String> = domain::listing::iso_3166_alpha2()
        .map(|c| c.chars().map(|ch| format!("[{}{}]", ch, ch.to_ascii_lowercase())).collect())
        .collect();
    format!("^(?:{})$", alts.join("|"))
}

/// The database's lists, as the markers need them.
#[derive(Debug, Clone, Default)]
pub struct ReferenceSets {
    /// Every category's name and slug (both are accepted).
    pub categories: Vec<String>,
    pub question_ids: Vec<i64>,
    pub products: Vec<Product>,
}

impl ReferenceSets {
    pub async fn load(app: &crate::App) -> OpResult<Self> {
        let cats = app.store.all_categories().await?;
        let mut categories: Vec<String> = Vec::new();
        for c in cats.iter() {
            for v in [c.name.clone(), c.slug.as_str().to_owned()] {
                if !categories.contains(&v) {
                    categories.push(v);
                }
            }
        }
        let question_ids = app.store.list_questions().await?.iter().map(|q| q.id.get()).collect();
        let products = app.store.list_products().await?;
        Ok(Self { categories, question_ids, products })
    }

    /// Replaces every marker under `v` with the list it names.
    pub fn fill(&self, v: &mut Value) {
        match v {
            Value::Object(o) => {
                if let Some(Value::String(list)) = o.remove(MARKER) {
                    match list.as_str() {
                        "category" => {
                            o.insert("enum".into(), json!(self.categories));
                        }
                        "interview-question" => {
                            o.insert("enum".into(), json!(self.question_ids));
                        }
                        "order-item" => {
                            let item = std::mem::take(o);
                            *o = self.order_item(item);
                        }
                        _ => {}
                    }
                }
                o.values_mut().for_each(|c| self.fill(c));
            }
            Value::Array(items) => items.iter_mut().for_each(|c| self.fill(c)),
            _ => {}
        }
    }

    /// An order item: one shape per kind of product on sale, each naming its products, the options it
    /// takes (others may only be null) and, for the billboard, its minimum.
    fn order_item(&self, item: Map<String, Value>) -> Map<String, Value> {
        let props = item.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
        let prop = |name: &str| {
            let mut p = props.get(name).cloned().unwrap_or_else(|| json!({}));
            // Within its own shape an option is required, so never null.
            if let Some(Value::Array(types)) = p.get("type").cloned() {
                let t: Vec<Value> = types.into_iter().filter(|t| t != "null").collect();
                if t.len() == 1 {
                    p["type"] = t[0].clone();
                }
            }
            p
        };
        let options = [
            ("week", ProductKind::Launch),
            ("categories", ProductKind::ExtraCategory),
            ("amount_cents", ProductKind::Billboard),
        ];
        let mut groups: Vec<(ProductKind, bool, Vec<&Product>)> = Vec::new();
        for p in &self.products {
            match groups.iter_mut().find(|(k, n, _)| *k == p.kind && *n == p.needs_listing) {
                Some(g) => g.2.push(p),
                None => groups.push((p.kind, p.needs_listing, vec![p])),
            }
        }
        let branches: Vec<Value> = groups
            .into_iter()
            .map(|(kind, needs_listing, products)| {
                let codes: Vec<&str> = products.iter().map(|p| p.code.as_str()).collect();
                let mut product = prop("product");
                product["enum"] = json!(codes);
                let mut bp = Map::new();
                let mut required = vec![json!("product")];
                bp.insert("product".into(), product);
                if needs_listing {
                    bp.insert("listing_id".into(), prop("listing_id"));
                    required.push(json!("listing_id"));
                } else {
                    bp.insert("listing_id".into(), json!({"type": "null"}));
                }
                for (name, k) in options {
                    if k != kind {
                        bp.insert(name.into(), json!({"type": "null"}));
                        continue;
                    }
                    let mut s = prop(name);
                    match kind {
                        ProductKind::Launch => {}
                        ProductKind::ExtraCategory => required.push(json!(name)),
                        ProductKind::Billboard => {
                            let min = products.iter().map(|p| p.price.get()).max().unwrap_or(1);
                            s["minimum"] = json!(min.max(1));
                            required.push(json!(name));
                        }
                        _ => {}
                    }
                    bp.insert(name.into(), s);
                }
                json!({"type": "object", "properties": bp, "required": required, "additionalProperties": false})
            })
            .collect();
        let mut out = Map::new();
        if let Some(d) = item.get("description") {
            out.insert("description".into(), d.clone());
        }
        out.insert("oneOf".into(), Value::Array(branches));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_looks_through_optional_wrappers() {
        let mut s = json!({"properties": {"fields": {"oneOf": [
            {"type": "object", "properties": {"categories": {"type": ["array", "null"], "items": {"type": "string"}}}},
            {"type": "null"}
        ]}}});
        mark(&mut s, &["fields", "categories", "[]"], "category");
        let sets = ReferenceSets { categories: vec!["AI".into(), "ai".into()], ..Default::default() };
        sets.fill(&mut s);
        assert_eq!(
            s["properties"]["fields"]["oneOf"][0]["properties"]["categories"]["items"]["enum"],
            json!(["AI", "ai"])
        );
        assert!(at(&mut s, &["nothing"]).is_none());
    }

    #[test]
    fn the_country_pattern_is_the_assigned_codes_in_any_case() {
        let p = country_pattern();
        assert!(p.starts_with("^(?:[Aa][Dd]|"));
        assert!(p.contains("|[Ii][Ee]|"));
        assert!(!p.contains("[Aa][Aa]"));
    }
}
