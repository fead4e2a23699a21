//! The parts of a draft beyond its one-value fields, on the maker's draft page: FAQs, founders,
//! company and founder social links, the founder story, milestones, SEO and the competitor to
//! compare with. Each is one form that replaces that part through update_draft, as the API does
//! (every key there replaces its whole list), so no rule lives here: the operation checks, and its
//! refusal is shown naming the field.
//!
//! Lists are rows numbered from 0 (`question.0`, `answer.0`, …): the items the draft has, then a few
//! blank rows to add to, up to the list's bound. A row left wholly blank is not sent, which is how
//! an item is removed; a refusal's `faqs[i]` is renumbered to the row on the page.

use crate::site::s;
use domain::draft::limits;
use domain::sections::STORY_SECTIONS;
use domain::social::{Faq, PLATFORMS};
use operations::badges::escape;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The parts, in page order: (path segment, heading).
pub(crate) const SECTIONS: [(&str, &str); 7] = [
    ("faqs", "FAQs"),
    ("founders", "Founders"),
    ("socials", "Social links"),
    ("story", "Founder story"),
    ("milestones", "Milestones"),
    ("seo", "Search engines"),
    ("competitor", "Compare with a competitor"),
];

/// The quotes from the site a value was drafted from, each with a link to its page.
pub(crate) fn evidence(quotes: &Value) -> String {
    quotes
        .as_array()
        .map(|e| {
            e.iter()
                .map(|q| {
                    // Evidence points at pages the crawler read (domain::draft::SiteText::anchored); a
                    // link is drawn only for an http(s) address all the same, so nothing stored before
                    // that rule, or damaged since, can become a script link on our page.
                    let url = s(q, "url");
                    let link = if url.starts_with("https://") || url.starts_with("http://") {
                        format!(
                            r#" <a class="muted" href="{}" rel="nofollow noopener noreferrer">source</a>"#,
                            escape(url)
                        )
                    } else {
                        String::new()
                    };
                    format!(r#"<blockquote>“{}”{link}</blockquote>"#, escape(s(q, "quote")))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn input(name: &str, label: &str, value: &str, max: usize, kind: &str) -> String {
    format!(r#"<label>{label} <input type="{kind}" name="{name}" value="{}" maxlength="{max}"></label>"#, escape(value))
}

fn area(name: &str, label: &str, value: &str, max: usize) -> String {
    format!(r#"<label>{label} <textarea name="{name}" rows="3" maxlength="{max}">{}</textarea></label>"#, escape(value))
}

/// A list's rows: the items `d[key]` has and up to `blank` empty ones, never past `max`, each a
/// fieldset `legend n` holding what `row(i, item)` draws (a blank row gets `Null`).
fn list(d: &Value, key: &str, blank: usize, max: usize, legend: &str, row: impl Fn(usize, &Value) -> String) -> String {
    let items = d[key].as_array().map(Vec::as_slice).unwrap_or_default();
    (0..rows(items.len(), blank, max))
        .map(|i| {
            let item = items.get(i).unwrap_or(&Value::Null);
            let primary = if key == "founders" && i == 0 { " (primary)" } else { "" };
            format!("<fieldset><legend>{legend} {}{primary}</legend>{}</fieldset>", i + 1, row(i, item))
        })
        .collect()
}

/// How many rows a list of `len` items gets: up to `blank` more, never past `max`.
fn rows(len: usize, blank: usize, max: usize) -> usize {
    (len + blank).min(max).max(len)
}

fn faqs(d: &Value) -> String {
    list(d, "faqs", 2, Faq::MAX_ITEMS, "FAQ", |i, f| {
        format!(
            "{}{}{}",
            input(&format!("question.{i}"), "Question", s(f, "question"), 300, "text"),
            area(&format!("answer.{i}"), "Answer", s(f, "answer"), 1500),
            evidence(&f["evidence"]),
        )
    })
}

fn founders(d: &Value) -> String {
    list(d, "founders", 1, limits::FOUNDERS, "Founder", |i, f| {
        format!(
            "{}{}{}{}",
            input(&format!("name.{i}"), "Name", s(f, "name"), 160, "text"),
            input(&format!("title.{i}"), "Role", s(f, "title"), 160, "text"),
            area(&format!("bio.{i}"), "Bio", s(f, "bio"), 3000),
            evidence(&f["evidence"]),
        )
    })
}

fn socials(d: &Value) -> String {
    let group = |key: &str, legend: &str| {
        let links: String = PLATFORMS
            .iter()
            .map(|p| input(&format!("{key}.{p}"), p, s(&d[format!("{key}_socials")], p), 500, "url"))
            .collect();
        format!("<fieldset><legend>{legend}</legend>{links}</fieldset>")
    };
    format!("{}{}", group("company", "The product's accounts"), group("founder", "The founder's accounts"))
}

fn story(d: &Value) -> String {
    STORY_SECTIONS
        .iter()
        .map(|name| {
            let label = sentence(name);
            if *name == "title" {
                input(name, &label, s(&d["story"], name), 8000, "text")
            } else {
                area(name, &label, s(&d["story"], name), 8000)
            }
        })
        .collect()
}

/// `why_started` → "Why started".
fn sentence(name: &str) -> String {
    let text = name.replace('_', " ");
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

fn milestones(d: &Value) -> String {
    list(d, "milestones", 2, limits::MILESTONES, "Milestone", |i, m| {
        format!(
            "{}{}{}{}",
            input(&format!("date.{i}"), "Date", s(m, "date"), 10, "date"),
            input(&format!("title.{i}"), "Title", s(m, "title"), 200, "text"),
            area(&format!("description.{i}"), "Description", s(m, "description"), 2000),
            input(&format!("url.{i}"), "Link (https, optional)", s(m, "url"), 500, "url"),
        )
    })
}

fn seo(d: &Value) -> String {
    format!(
        "{}{}",
        input("title", "Title", s(&d["seo"], "title"), limits::SEO_TITLE, "text"),
        area("meta", "Meta description", s(&d["seo"], "meta"), limits::SEO_META)
    )
}

fn competitor(d: &Value) -> String {
    let c = &d["competitor"];
    let status = if c.is_null() {
        String::new()
    } else {
        let rows: String = c["rows"]
            .as_array()
            .map(|r| {
                r.iter()
                    .map(|row| {
                        let cell = |v: &Value| escape(&crate::maker::value_text(v));
                        format!(
                            "<tr><th>{}</th><td>{}</td><td>{}{}</td></tr>",
                            escape(s(row, "field")),
                            cell(&row["ours"]),
                            cell(&row["theirs"]),
                            evidence(&row["their_evidence"])
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let table = if rows.is_empty() {
            String::new()
        } else {
            format!(
                "<table><thead><tr><th>Field</th><th>Yours</th><th>Theirs</th></tr></thead><tbody>{rows}</tbody></table>"
            )
        };
        format!(
            r#"<p class="muted">{} is {}{}.</p>{table}"#,
            escape(s(c, "url")),
            escape(s(c, "status")),
            c["failure_reason"].as_str().map(|r| format!(": {}", escape(r))).unwrap_or_default()
        )
    };
    format!(
        "{status}{}",
        input("url", "Their website (leave empty to stop comparing)", s(c, "url"), limits::COMPETITOR_URL, "url")
    )
}

/// Links to the parts, for the top of the draft page.
pub(crate) fn index() -> String {
    let links: String = SECTIONS.iter().map(|(key, heading)| format!(r##"<a href="#{key}">{heading}</a>"##)).collect();
    format!(r#"<p class="parts muted">Also in this draft: {links}</p>"#)
}

/// Every part's form, each in a `<details>` that is open when the part has something in it.
pub(crate) fn render(base: &str, id: &str, csrf: &str, d: &Value) -> String {
    SECTIONS
        .iter()
        .map(|(key, heading)| {
            let (fields, filled) = match *key {
                "faqs" => (faqs(d), non_empty(&d["faqs"])),
                "founders" => (founders(d), non_empty(&d["founders"])),
                "socials" => (socials(d), non_empty(&d["company_socials"]) || non_empty(&d["founder_socials"])),
                "story" => (story(d), d["story"].as_object().is_some_and(|o| o.values().any(|v| v != ""))),
                "milestones" => (milestones(d), non_empty(&d["milestones"])),
                "seo" => (seo(d), !s(&d["seo"], "title").is_empty() || !s(&d["seo"], "meta").is_empty()),
                _ => (competitor(d), !d["competitor"].is_null()),
            };
            format!(
                r#"<section class="card" id="{key}"><details{open}><summary><h2>{heading}</h2></summary><form method="post" action="{base}/me/drafts/{id}/{key}" class="stack"><input type="hidden" name="csrf" value="{csrf}">{fields}<button type="submit" class="secondary">Save {lower}</button></form></details></section>"#,
                open = if filled { " open" } else { "" },
                id = escape(id),
                csrf = escape(csrf),
                lower = heading.to_lowercase(),
            )
        })
        .collect()
}

fn non_empty(v: &Value) -> bool {
    v.as_array().is_some_and(|a| !a.is_empty()) || v.as_object().is_some_and(|o| !o.is_empty())
}

/// What update_draft is sent for one part's form, and for a list the row each sent item came from.
/// `None` for a part we do not have.
pub(crate) fn to_update(section: &str, form: &[(String, String)]) -> Option<(Value, Vec<usize>)> {
    let get =
        |name: &str| form.iter().find(|(k, _)| k == name).map(|(_, v)| v.trim().to_owned()).filter(|v| !v.is_empty());
    // Rows by number: `name.i` → value, for the list forms.
    let mut by_row: BTreeMap<usize, Map<String, Value>> = BTreeMap::new();
    for (k, v) in form {
        if let Some((name, i)) = k.rsplit_once('.')
            && let Ok(i) = i.parse::<usize>()
            && !v.trim().is_empty()
        {
            by_row.entry(i).or_default().insert(name.to_owned(), json!(v.trim()));
        }
    }
    // A row with anything in it is sent whole: a required part left blank is sent empty, so the
    // operation's refusal names it.
    let list = |key: &str, required: &[&str]| {
        let (rows, items): (Vec<usize>, Vec<Value>) = by_row
            .iter()
            .map(|(i, m)| {
                let mut m = m.clone();
                for r in required {
                    m.entry(*r).or_insert_with(|| json!(""));
                }
                (*i, Value::Object(m))
            })
            .unzip();
        (json!({ key: items }), rows)
    };
    let filled = |names: &[&str]| -> Map<String, Value> {
        names.iter().filter_map(|n| get(n).map(|v| ((*n).to_owned(), json!(v)))).collect()
    };
    let links = |group: &str| -> Map<String, Value> {
        PLATFORMS.iter().filter_map(|p| get(&format!("{group}.{p}")).map(|v| ((*p).to_owned(), json!(v)))).collect()
    };
    Some(match section {
        "faqs" => list(section, &["question", "answer"]),
        "founders" => list(section, &["name"]),
        "milestones" => list(section, &["date", "title"]),
        "socials" => (json!({"company_socials": links("company"), "founder_socials": links("founder")}), vec![]),
        "story" => (json!({ "story": filled(&STORY_SECTIONS) }), vec![]),
        "seo" => (json!({ "seo": filled(&["title", "meta"]) }), vec![]),
        "competitor" => (json!({"competitor_url": get("url").unwrap_or_default()}), vec![]),
        _ => return None,
    })
}

/// A refusal's field path with the list index of the sent item replaced by its row on the page.
pub(crate) fn renumber(field: &str, section: &str, rows: &[usize]) -> String {
    let Some(rest) = field.strip_prefix(section).and_then(|r| r.strip_prefix('[')) else { return field.to_owned() };
    let Some((i, tail)) = rest.split_once(']') else { return field.to_owned() };
    match i.parse::<usize>().ok().and_then(|i| rows.get(i)) {
        Some(row) => format!("{section}[{row}]{tail}"),
        None => field.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn blank_rows_are_not_sent_and_refusals_name_the_row() {
        let f = form(&[
            ("csrf", "t"),
            ("question.0", " Why? "),
            ("answer.0", "Because."),
            ("question.1", ""),
            ("answer.1", "  "),
            ("question.2", "Only a question"),
            ("answer.2", ""),
        ]);
        let (body, rows) = to_update("faqs", &f).unwrap();
        assert_eq!(
            body,
            json!({"faqs": [{"question": "Why?", "answer": "Because."}, {"question": "Only a question", "answer": ""}]})
        );
        assert_eq!(rows, vec![0, 2]);
        assert_eq!(renumber("faqs[1].answer", "faqs", &rows), "faqs[2].answer");
        assert_eq!(renumber("faqs", "faqs", &rows), "faqs");
        assert_eq!(renumber("founders[0].name", "faqs", &rows), "founders[0].name");
        assert!(to_update("votes", &f).is_none());
    }

    #[test]
    fn socials_story_seo_and_competitor_send_what_is_filled() {
        let f = form(&[
            ("company.github", "https://github.com/acme"),
            ("company.x", " "),
            ("founder.linkedin", "https://linkedin.com/in/ann"),
        ]);
        assert_eq!(
            to_update("socials", &f).unwrap().0,
            json!({"company_socials": {"github": "https://github.com/acme"}, "founder_socials": {"linkedin": "https://linkedin.com/in/ann"}})
        );
        let f = form(&[("title", "How it began"), ("problem", "Cats"), ("lessons", "")]);
        assert_eq!(to_update("story", &f).unwrap().0, json!({"story": {"title": "How it began", "problem": "Cats"}}));
        assert_eq!(to_update("competitor", &form(&[("url", "")])).unwrap().0, json!({"competitor_url": ""}));
        assert_eq!(to_update("seo", &form(&[("title", "T"), ("meta", "")])).unwrap().0, json!({"seo": {"title": "T"}}));
    }

    #[test]
    fn lists_get_blank_rows_up_to_their_bound() {
        assert_eq!(rows(1, 2, 10), 3);
        assert_eq!(rows(9, 2, 10), 10);
        assert_eq!(rows(10, 2, 10), 10);
        assert_eq!(rows(0, 1, 6), 1);
        let d = json!({"founders": [{"name": "Ann"}]});
        let html = founders(&d);
        assert!(html.contains("Founder 1 (primary)") && html.contains(r#"value="Ann""#) && html.contains("Founder 2"));
        assert!(!html.contains("Founder 3"), "{html}");
    }
}
