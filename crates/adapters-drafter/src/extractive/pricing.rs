//! The pricing model and a summary that names every plan with its price and period, read from plan
//! cards, pricing tables, structured-data offers, or — when a site has none of those — the sentences
//! that state prices (an FAQ answer, a line on the homepage). Every part of the summary is a quote.
//!
//! Models, in the order they are decided: Open source, Freemium (said so), Usage-based, One-time
//! purchase, Free trial (a trial in front of paid plans), Freemium (a free plan beside paid ones),
//! Subscription, Free, Contact sales (no price, only "contact sales for a quote").

use super::{Page, in_chrome, ld_str, ld_type_is, prop, text};
use adapters_fetch::html::{is_hidden_within, sel, text_of};
use domain::draft::{Evidence, Proposal};
use domain::text::normalize_whitespace;
use regex::Regex;
use scraper::ElementRef;
use serde_json::Value;
use std::sync::LazyLock;

static PRICE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:[$€£¥]\s?\d[\d,]*(?:\.\d{1,2})?|\b\d[\d,]*(?:\.\d{1,2})?\s?(?:€|USD|EUR|GBP|CHF)\b)(?:\s*(?:/|\bper\b|\ba\b|\ban\b|\beach\b)\s*(?:\d[\d,]*\s+)?[a-z]+\b){0,2}(?:\s+forever)?",
    )
    .expect("regex")
});
static FREE_PLAN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:free (?:plan|tier|forever|for ever|version)(?: for up to \d+ \w+)?|free for (?:everyone|individuals|personal use|small teams|up to \d+ \w+)|forever free)\b",
    )
    .expect("regex")
});
static TRIAL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)\b(?:\d+[- ]day )?free trial\b").expect("regex"));
static FREEMIUM: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)\bfreemium\b").expect("regex"));
static OPEN_SOURCE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)\bopen[- ]source\b").expect("regex"));
static IS_OPEN_SOURCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:is|are)\s+(?:an?\s+|100%\s+|fully\s+)?(?:free and\s+)?open[- ]source\b").expect("regex")
});
static ONE_TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:one[- ]time (?:payment|purchase|fee)|lifetime (?:licen[cs]e|deal|access)|buy once)\b")
        .expect("regex")
});
static USAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:pay as you go|pay-as-you-go|usage[- ]based(?: pricing)?|pay (?:only )?for what you use)\b")
        .expect("regex")
});
static CONTACT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:contact (?:sales|us)(?: for (?:a quote|pricing))?|talk to (?:our )?sales(?: team)?(?: for a quote)?|request a quote|custom pricing)\b",
    )
    .expect("regex")
});
static RECURRING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)(?:/|per|a)\s?(?:month|mo|year|yr|week)\b").expect("regex"));

/// A plan as the page shows it: its name and its price (or "Free", "Contact sales"), both quotes.
struct Plan {
    name: String,
    price: String,
}

fn is_paid(price: &str) -> bool {
    PRICE.find(price).is_some_and(|m| m.as_str().chars().any(|c| c.is_ascii_digit() && c != '0'))
}

fn is_free(price: &str) -> bool {
    let p = price.to_ascii_lowercase();
    p.starts_with("free") || PRICE.find(price).is_some_and(|m| !is_paid(m.as_str()))
}

fn visible(el: ElementRef) -> String {
    normalize_whitespace(&text_of(el))
}

/// What a card or cell says its price is: a price with its period, else a short line saying it is
/// free, else "contact sales".
fn price_in(texts: &[String]) -> Option<String> {
    // A card states its price on a short line; a long paragraph with a price in it is prose.
    let texts: Vec<&String> = texts.iter().filter(|t| t.chars().count() <= 100).collect();
    for t in &texts {
        if let Some(m) = PRICE.find(t) {
            return Some(m.as_str().trim().to_owned());
        }
    }
    for t in &texts {
        if t.to_ascii_lowercase().starts_with("free") && t.chars().count() <= 60 {
            return Some(t.trim_end_matches('.').to_owned());
        }
    }
    texts.iter().find_map(|t| CONTACT.find(t).map(|m| m.as_str().to_owned()))
}

/// Plan cards (a heading with a price under it, alone in its box) and pricing-table rows.
fn plans(page: &Page) -> Vec<Plan> {
    let mut out: Vec<Plan> = Vec::new();
    for h in page.doc.select(&sel("h2, h3, h4")) {
        if is_hidden_within(&h) || in_chrome(&h) {
            continue;
        }
        let Some(card) = h.parent().and_then(ElementRef::wrap) else { continue };
        let tag = h.value().name();
        if card.children().filter_map(ElementRef::wrap).filter(|c| c.value().name() == tag).count() != 1 {
            continue;
        }
        let name = visible(h);
        let texts: Vec<String> = card
            .children()
            .filter_map(ElementRef::wrap)
            .filter(|c| *c != h && !is_hidden_within(c))
            .map(visible)
            .filter(|t| !t.is_empty())
            .collect();
        let lower = name.to_lowercase();
        if name.chars().count() > 40 || name.ends_with('?') || ["question", "faq"].iter().any(|w| lower.contains(w)) {
            continue;
        }
        if let Some(price) = price_in(&texts) {
            out.push(Plan { name, price });
        }
    }
    for tr in page.doc.select(&sel("tr")) {
        if is_hidden_within(&tr) {
            continue;
        }
        let cells: Vec<String> = tr.select(&sel("td")).map(visible).collect();
        if cells.len() < 2 || cells[0].chars().count() > 40 {
            continue;
        }
        if let Some(price) = price_in(&cells[1..]) {
            out.push(Plan { name: cells[0].clone(), price });
        }
    }
    out.truncate(8);
    out
}

/// Offers in structured data: (name, price with currency, period), each a quote.
fn offers(page: &Page, ld: &[&Value]) -> Vec<(String, String, String, Option<String>)> {
    let mut out = Vec::new();
    for v in ld {
        let list = match v.get("offers") {
            Some(Value::Array(a)) => a.clone(),
            Some(o @ Value::Object(_)) => vec![o.clone()],
            _ => continue,
        };
        for o in list {
            let price = o
                .get("price")
                .and_then(|p| p.as_str().map(str::to_owned).or_else(|| p.as_f64().map(|f| f.to_string())));
            let (Some(name), Some(price)) = (ld_str(&o, "name"), price) else { continue };
            let currency = ld_str(&o, "priceCurrency").unwrap_or_default().to_owned();
            let unit = o.get("priceSpecification").and_then(|s| ld_str(s, "unitText")).map(str::to_owned);
            if page.ev(name).is_some() && page.ev(&price).is_some() {
                out.push((name.to_owned(), price, currency, unit));
            }
        }
    }
    out
}

/// What the summary is built from, and what the model is decided on.
#[derive(Default)]
struct Found {
    parts: Vec<(String, Vec<Evidence>)>,
    free: Option<Evidence>,
    paid: Option<Evidence>,
    recurring: bool,
}

impl Found {
    /// A priced thing: `price` (a quote) decides free, paid and recurring.
    fn price(&mut self, price: &str, ev: &Evidence, recurring: bool) {
        if is_free(price) {
            self.free.get_or_insert_with(|| ev.clone());
        }
        if is_paid(price) {
            self.paid.get_or_insert_with(|| ev.clone());
            self.recurring |= recurring || RECURRING.is_match(price) || price.contains(" per ");
        }
    }
}

/// The pricing model and summary. `pages[0]` is the homepage.
pub(super) fn pricing(pages: &[Page], ld: &[(usize, Value)]) -> (Option<Proposal>, Option<Proposal>) {
    let Some(home) = pages.first() else { return (None, None) };
    let pricing_page = pages.iter().find(|p| p.is(&["pricing", "plans", "price", "buy"]));
    // Where prices are stated: the pricing page, else the homepage and any FAQ page.
    let sources: Vec<&Page> = match pricing_page {
        Some(p) => vec![p],
        None => std::iter::once(home).chain(pages.iter().filter(|p| p.is(&["faq", "questions", "help"]))).collect(),
    };
    let bodies: Vec<(&str, &Page)> = sources.iter().map(|p| (p.body.as_str(), *p)).collect();
    let find = |re: &Regex| bodies.iter().find_map(|(b, p)| re.find(b).and_then(|m| p.ev(m.as_str())));
    let mut f = Found::default();

    // The summary: a trial, then every plan (cards, table rows or structured offers), else the phrases.
    let trial = find(&TRIAL);
    if let Some(e) = &trial {
        f.parts.push((e.quote.clone(), vec![e.clone()]));
    }
    for page in &sources {
        for plan in plans(page) {
            if let (Some(a), Some(b)) = (page.ev(&plan.name), page.ev(&plan.price)) {
                f.price(&plan.price, &b, false);
                f.parts.push((format!("{}: {}", plan.name, plan.price), vec![a, b]));
            }
        }
        if f.parts.len() > usize::from(trial.is_some()) {
            break;
        }
    }
    if f.parts.len() == usize::from(trial.is_some()) {
        for (i, page) in pages.iter().enumerate() {
            let mine: Vec<&Value> =
                ld.iter().filter(|(j, v)| *j == i && ld_type_is(v, &super::ORG_TYPES)).map(|(_, v)| v).collect();
            for (name, price, currency, unit) in offers(page, &mine) {
                let (Some(name_ev), Some(price_ev)) = (page.ev(&name), page.ev(&price)) else { continue };
                let mut ev = vec![name_ev, price_ev.clone()];
                let mut shown = price.clone();
                if let Some(c) = page.ev(&currency) {
                    shown = format!("{price} {currency}");
                    ev.push(c);
                }
                if let Some(u) = unit.as_deref().and_then(|u| page.ev(u)) {
                    shown.push_str(&format!(" per {}", u.quote.to_lowercase()));
                    ev.push(u);
                }
                f.price(&format!("${price}"), &price_ev, unit.is_some());
                f.parts.push((format!("{name}: {shown}"), ev));
            }
        }
    }
    if f.parts.len() == usize::from(trial.is_some()) {
        if let Some(e) = find(&FREE_PLAN) {
            f.free = Some(e.clone());
            f.parts.push((e.quote.clone(), vec![e]));
        }
        let mut seen: Vec<String> = Vec::new();
        for (b, p) in &bodies {
            for m in PRICE.find_iter(b) {
                let s = m.as_str().trim().to_owned();
                if is_paid(&s)
                    && !seen.contains(&s)
                    && seen.len() < 4
                    && let Some(e) = p.ev(&s)
                {
                    f.price(&s, &e, false);
                    f.parts.push((s.clone(), vec![e]));
                    seen.push(s);
                }
            }
        }
    }
    let contact = find(&CONTACT);
    if f.parts.is_empty()
        && let Some(e) = &contact
    {
        f.parts.push((e.quote.clone(), vec![e.clone()]));
    }

    // The model, and the quotes that state it.
    let anywhere = |re: &Regex| pages.iter().find_map(|p| re.find(&p.body).and_then(|m| p.ev(m.as_str())));
    let open_source = pricing_page
        .and_then(|p| OPEN_SOURCE.find(&p.body).and_then(|m| p.ev(m.as_str())))
        .or_else(|| IS_OPEN_SOURCE.find(&home.body).and_then(|m| home.ev(m.as_str())));
    let model: Option<(&str, Vec<Evidence>)> = if let Some(e) = open_source {
        Some(("Open source", vec![e]))
    } else if let Some(e) = anywhere(&FREEMIUM) {
        Some(("Freemium", vec![e]))
    } else if let Some(e) = find(&USAGE) {
        Some(("Usage-based", vec![e]))
    } else if let Some(e) = find(&ONE_TIME) {
        Some(("One-time purchase", vec![e]))
    } else if let (Some(t), Some(p)) = (&trial, &f.paid) {
        Some(("Free trial", vec![t.clone(), p.clone()]))
    } else if let (Some(fr), Some(p)) = (&f.free, &f.paid) {
        Some(("Freemium", vec![fr.clone(), p.clone()]))
    } else if let (Some(p), true) = (&f.paid, f.recurring) {
        Some(("Subscription", vec![p.clone()]))
    } else if let (Some(fr), None) = (&f.free, &f.paid) {
        Some(("Free", vec![fr.clone()]))
    } else if let (Some(c), None) = (contact, &f.paid) {
        Some(("Contact sales", vec![c]))
    } else {
        None
    };
    let model = model.and_then(|(m, e)| prop(text(m), e));

    let summary = if f.parts.is_empty() {
        None
    } else {
        let value = f.parts.iter().map(|(v, _)| v.as_str()).collect::<Vec<_>>().join("; ");
        let evidence: Vec<Evidence> = f.parts.into_iter().flat_map(|(_, e)| e).collect();
        (value.chars().count() <= 500).then(|| prop(text(value), evidence)).flatten()
    };
    (model, summary)
}
