//! Founders as sites show them: structured data (`founder` with `jobTitle` and `description`), cards
//! (a name, a role naming them a founder, a bio paragraph), and one-line entries ("Ana Souza — Co-founder,
//! illustrator. Ana drew …"). Name, title and bio are each a quote; only people a page calls a founder
//! are proposed.

use super::{Page, in_chrome, ld_str};
use adapters_fetch::html::{is_hidden_within, sel};
use domain::draft::{DraftFounder, Evidence};
use domain::founder::FounderEntry;
use domain::text::normalize_whitespace;
use regex::Regex;
use scraper::ElementRef;
use serde_json::Value;
use std::sync::LazyLock;

static FOUNDER_ROLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b(?:co-?founder|founder|founding partner)s?\b").expect("regex"));
static PERSON: LazyLock<Regex> = LazyLock::new(|| {
    // Given names and surnames, with the particles surnames carry ("Noor de Vries", "Ana dos Santos").
    Regex::new(
            r"^\p{Lu}[\p{L}'.-]+(?: (?:(?:de|van|von|der|den|da|di|du|la|le|del|dos|das|ter|ten|bin|al|ben) )*\p{Lu}[\p{L}'.-]*){1,3}$",
        )
        .expect("regex")
});

/// One founder being assembled: each part with the quote it came from.
struct Found {
    name: Evidence,
    title: Option<Evidence>,
    bio: Option<Evidence>,
}

fn add(out: &mut Vec<Found>, page: &Page, name: &str, title: &str, bio: &str) {
    let (name, title, bio) = (normalize_whitespace(name), normalize_whitespace(title), normalize_whitespace(bio));
    let title = (!title.is_empty() && title.chars().count() <= 160).then(|| page.ev(&title)).flatten();
    let bio = (bio.split_whitespace().count() >= 3 && bio.chars().count() <= 3000).then(|| page.ev(&bio)).flatten();
    if let Some(f) = out.iter_mut().find(|f| f.name.quote == name) {
        // Another source for someone already found fills in what the first left out.
        if f.title.is_none() {
            f.title = title;
        }
        if f.bio.is_none() {
            f.bio = bio;
        }
        return;
    }
    if let Some(name) = page.ev(&name) {
        out.push(Found { name, title, bio });
    }
}

/// The element after `el` among its siblings (a line break is not one).
fn next_el<'a>(el: ElementRef<'a>) -> Option<ElementRef<'a>> {
    el.next_siblings().filter_map(ElementRef::wrap).find(|e| e.value().name() != "br")
}

pub(super) fn founders(pages: &[Page], ld: &[(usize, Value)]) -> Vec<DraftFounder> {
    let mut out: Vec<Found> = Vec::new();
    for (i, v) in ld {
        let list = match v.get("founder").or_else(|| v.get("founders")) {
            Some(Value::Array(a)) => a.clone(),
            Some(o) => vec![o.clone()],
            None => continue,
        };
        for f in list {
            let name = match &f {
                Value::String(s) => s.as_str(),
                o => ld_str(o, "name").unwrap_or_default(),
            };
            let title = ld_str(&f, "jobTitle").unwrap_or_default();
            let bio = ld_str(&f, "description").unwrap_or_default();
            add(&mut out, &pages[*i], name, title, bio);
        }
    }
    let people_pages =
        pages.iter().filter(|p| p.is(&["team", "about", "people", "founder", "company", "who", "story"]));
    for page in people_pages.chain(pages.first()) {
        for el in page.doc.select(&sel("h2, h3, h4, h5, strong, b, p, span, div, dt")) {
            if in_chrome(&el) || is_hidden_within(&el) || el.children().filter_map(ElementRef::wrap).count() > 0 {
                continue;
            }
            let name = page.visible(el);
            if !PERSON.is_match(&name) || name.chars().count() > 60 {
                continue;
            }
            // A card: the name, then a role, then perhaps a bio.
            if let Some(role_el) = next_el(el) {
                let role = page.visible(role_el);
                if role.chars().count() <= 80 && FOUNDER_ROLE.is_match(&role) {
                    let bio = next_el(role_el)
                        .filter(|b| matches!(b.value().name(), "p" | "div" | "span" | "dd") && !is_hidden_within(b))
                        .map(|b| page.visible(b))
                        .filter(|b| !PERSON.is_match(b))
                        .unwrap_or_default();
                    add(&mut out, page, &name, &role, &bio);
                    continue;
                }
            }
            // One line: "Name — Co-founder, role. Bio …" in the element that holds the name.
            if next_el(el).is_none()
                && let Some(line) = el.parent().and_then(ElementRef::wrap).map(|p| page.visible(p))
                && let Some(rest) = line.strip_prefix(name.as_str())
            {
                let rest = rest
                    .trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '—' | '–' | '-' | ',' | ':' | '|'));
                let (role, bio) = match rest.split_once(". ") {
                    Some((r, b)) => (r, b),
                    None => (rest.trim_end_matches('.'), ""),
                };
                if role.chars().count() <= 80 && FOUNDER_ROLE.is_match(role) {
                    add(&mut out, page, &name, role, bio);
                }
            }
        }
    }
    out.into_iter()
        .filter_map(|f| {
            let entry = FounderEntry::parse(
                f.name.quote.clone(),
                Some(f.title.as_ref().map(|t| t.quote.clone()).unwrap_or_default()),
                Some(f.bio.as_ref().map(|b| b.quote.clone()).unwrap_or_default()),
            )
            .ok()?;
            let evidence = std::iter::once(f.name).chain(f.title).chain(f.bio).collect();
            Some(DraftFounder { founder: entry, evidence })
        })
        .take(domain::draft::limits::FOUNDERS)
        .collect()
}
