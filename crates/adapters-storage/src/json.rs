//! JSON held in text columns: lists, socials and FAQs are stored as JSON text on both databases.
//! A column that does not parse reads as empty (and is logged) rather than failing a public read.

use domain::social::{Faq, FaqAnswer, FaqQuestion, Socials};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub fn list_to_json(items: &[String]) -> String {
    serde_json::to_string(items).unwrap_or_else(|_| "[]".into())
}

pub fn list_from_json(raw: &str) -> Vec<String> {
    serde_json::from_str(raw).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "unreadable JSON list column");
        Vec::new()
    })
}

pub fn socials_to_json(s: &Socials) -> String {
    let map: BTreeMap<&str, &str> = s.iter().collect();
    serde_json::to_string(&map).unwrap_or_else(|_| "{}".into())
}

pub fn socials_from_json(raw: &str) -> Socials {
    let map: BTreeMap<String, String> = serde_json::from_str(raw).unwrap_or_default();
    // Stored socials were validated on the way in; re-parse to keep the type honest.
    Socials::parse("socials", map).unwrap_or_default()
}

#[derive(Serialize, Deserialize)]
struct FaqJson {
    question: String,
    answer: String,
}

pub fn faqs_to_json(faqs: &[Faq]) -> String {
    let v: Vec<FaqJson> = faqs
        .iter()
        .map(|f| FaqJson { question: f.question.as_str().to_owned(), answer: f.answer.as_str().to_owned() })
        .collect();
    serde_json::to_string(&v).unwrap_or_else(|_| "[]".into())
}

pub fn faqs_from_json(raw: &str) -> Vec<Faq> {
    let v: Vec<FaqJson> = serde_json::from_str(raw).unwrap_or_default();
    v.into_iter()
        .filter_map(|f| {
            Some(Faq { question: FaqQuestion::parse(f.question).ok()?, answer: FaqAnswer::parse(f.answer).ok()? })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let l = vec!["a \"quoted\" item".to_owned(), "ü".to_owned()];
        assert_eq!(list_from_json(&list_to_json(&l)), l);
        let s = Socials::parse("s", [("github".to_owned(), "https://github.example/a".to_owned())]).unwrap();
        assert_eq!(socials_from_json(&socials_to_json(&s)), s);
        let f = vec![Faq::parse("Q?".into(), "A.".into()).unwrap()];
        assert_eq!(faqs_from_json(&faqs_to_json(&f)), f);
        assert!(list_from_json("not json").is_empty());
    }
}
