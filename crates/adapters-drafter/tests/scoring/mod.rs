//! Scores a drafter against the drafting corpus (`fixtures/sites/*/expected.json`, described in
//! fixtures/sites/README.md): each site is served on loopback, read by the real crawler, drafted, held
//! to the domain's evidence rule, and compared with what the site states and what it does not.
//! Shared by the corpus test (which asserts the targets) and `just bench-drafts` (which prints them).

use adapters_fetch::{SafeFetcher, SiteCrawler};
use chrono::Utc;
use domain::draft::{Draft, DraftField, Drafted, FieldValue, SiteUrl};
use domain::ids::{DraftId, UserId};
use domain::ports::{Drafter, Site, SiteReader};
use domain::text::normalize_whitespace;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use test_support::FixtureSite;

pub const UA: &str = "launchdir/0.1 (+http://launch.test/bot)";

/// Keys of expected.json besides the draft fields.
pub const EXTRAS: [&str; 3] = ["founders", "faqs", "socials"];

/// Every site of the corpus, by folder name.
pub fn sites() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(test_support::sites_dir())
        .expect("fixtures/sites")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("expected.json").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// The category names the service offers, each with the synonyms written in the reference data.
pub fn categories() -> Vec<domain::category::CategoryTerms> {
    let raw = std::fs::read_to_string(test_support::sites_dir().join("../reference/categories.json"))
        .expect("fixtures/reference/categories.json");
    let all: Vec<Value> = serde_json::from_str(&raw).expect("categories.json is JSON");
    all.iter()
        .map(|c| domain::category::CategoryTerms {
            name: c["name"].as_str().expect("a name").to_owned(),
            synonyms: c["synonyms"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default(),
        })
        .collect()
}

/// Sites with a recorded model answer (`llm-answer.json`).
pub fn recorded_sites() -> Vec<String> {
    sites().into_iter().filter(|s| test_support::sites_dir().join(s).join("llm-answer.json").exists()).collect()
}

/// An OpenAI-compatible stand-in replaying `site`'s recorded answer (fields it leaves out are null;
/// `{site}` becomes the origin of the pages the drafter sent), and an LLM drafter pointed at it.
pub async fn recorded_llm(site: &str) -> (test_support::JsonStandIn, adapters_drafter::LlmDrafter) {
    let raw =
        std::fs::read_to_string(test_support::sites_dir().join(site).join("llm-answer.json")).expect("llm-answer.json");
    let mut answer: Value = serde_json::from_str(&raw).expect("llm-answer.json is JSON");
    if let Some(o) = answer.as_object_mut() {
        o.remove("recorded");
        let fields = o.entry("fields").or_insert_with(|| Value::Object(Default::default()));
        for f in DraftField::ALL {
            fields.as_object_mut().expect("fields is an object").entry(f.as_str()).or_insert(Value::Null);
        }
    }
    let answer = answer.to_string();
    let stand_in = test_support::JsonStandIn::start(move |_, body| {
        let request: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let user = request.pointer("/messages/1/content").and_then(Value::as_str).unwrap_or_default();
        let origin = user
            .split("<page url=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .and_then(|u| url::Url::parse(u).ok())
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_default();
        let content = answer.replace("{site}", &origin);
        (200, serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}]}).to_string())
    })
    .await;
    let drafter =
        adapters_drafter::LlmDrafter::new(&format!("{}/v1", stand_in.url()), "recorded", None).expect("an LLM drafter");
    (stand_in, drafter)
}

/// How one site scored.
#[derive(Debug, Default, Clone)]
pub struct SiteScore {
    pub site: String,
    pub facts: usize,
    pub found: usize,
    /// Stated facts left blank.
    pub missed: Vec<String>,
    /// Stated facts with another value.
    pub wrong: Vec<String>,
    /// Values for facts the site does not state.
    pub invented: Vec<String>,
    /// Quotes the drafter offered, and those not verbatim on a fetched page (the domain drops their
    /// values; kept values are verbatim by construction, and checked again here).
    pub quotes: usize,
    pub unverbatim: Vec<String>,
    pub kept_unverbatim: Vec<String>,
    /// Paths requested that the site's robots.txt disallows for us.
    pub disallowed: Vec<String>,
    pub pages: usize,
    /// Reading and drafting the site.
    pub elapsed: Duration,
    /// Per field: (stated facts, found).
    pub fields: BTreeMap<String, (usize, usize)>,
    /// Set when expected.json itself is incomplete or the read failed unexpectedly.
    pub problem: Option<String>,
}

impl SiteScore {
    fn fact(&mut self, field: &str, found: bool) {
        self.facts += 1;
        let e = self.fields.entry(field.to_owned()).or_default();
        e.0 += 1;
        if found {
            self.found += 1;
            e.1 += 1;
        }
    }
}

fn norm(s: &str) -> String {
    normalize_whitespace(s).to_lowercase()
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => vec![],
    }
}

/// Disallow rules for us in robots.txt (the `*` group and ours): path prefixes, `$` and `*` dropped
/// (the fixtures use plain prefixes).
fn disallowed_prefixes(site: &str) -> Vec<String> {
    let Ok(robots) = std::fs::read_to_string(test_support::sites_dir().join(site).join("robots.txt")) else {
        return vec![];
    };
    let mut out = Vec::new();
    let mut ours = false;
    for line in robots.lines() {
        let (k, v) = line.split_once(':').map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim())).unwrap_or_default();
        match k.as_str() {
            "user-agent" => ours = v == "*" || v.eq_ignore_ascii_case("launchdir"),
            "disallow" if ours && !v.is_empty() && !v.contains('*') => out.push(v.trim_end_matches('$').to_owned()),
            _ => {}
        }
    }
    out
}

fn field_text(v: &FieldValue) -> String {
    match v {
        FieldValue::Text(s) => s.clone(),
        FieldValue::List(l) => l.join(" | "),
    }
}

/// Every quote the drafter offered: (what it supports, quote, page).
fn offered_quotes(d: &Drafted) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (f, p) in &d.fields {
        out.extend(p.evidence.iter().map(|e| (f.as_str().to_owned(), e.quote.clone(), e.url.clone())));
    }
    for f in &d.founders {
        out.extend(f.evidence.iter().map(|e| ("founders".into(), e.quote.clone(), e.url.clone())));
    }
    for q in &d.faqs {
        out.extend(q.evidence.iter().map(|e| ("faqs".into(), e.quote.clone(), e.url.clone())));
    }
    out
}

fn verbatim(site: &Site, quote: &str, url: &str) -> bool {
    let q = normalize_whitespace(quote);
    !q.is_empty() && site.pages.iter().any(|p| p.url == url && normalize_whitespace(&p.text).contains(&q))
}

/// Reads and drafts `name` with `drafter`, and scores the result against its expected.json.
pub async fn score_site(
    name: &str,
    drafter: &dyn Drafter,
    categories: &[domain::category::CategoryTerms],
) -> SiteScore {
    let dir = test_support::sites_dir().join(name);
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).expect("expected.json"))
            .unwrap_or_else(|e| panic!("{name}/expected.json: {e}"));
    let mut score = SiteScore { site: name.to_owned(), ..Default::default() };
    let stated = expected["stated"].as_object().cloned().unwrap_or_default();
    let blank: Vec<String> = strings(&expected["blank"]);
    let never: Vec<String> = strings(&expected["never"]);
    let keys: Vec<&str> = DraftField::ALL.iter().map(|f| f.as_str()).chain(EXTRAS).collect();
    let unclassified: Vec<&&str> =
        keys.iter().filter(|k| stated.contains_key(**k) == blank.iter().any(|b| b == **k)).collect();
    if !unclassified.is_empty() {
        score.problem = Some(format!("expected.json must name each of {unclassified:?} once, stated or blank"));
    }

    let site = FixtureSite::serve(name, "http://127.0.0.1:9").await;
    let reader = SiteCrawler::new(SafeFetcher::new(UA, [site.host_port()]).expect("a fetcher"));
    let started = Instant::now();
    let read = reader.read_site(&site.url()).await;
    let refused = expected["read"].as_str() == Some("refused");
    let read = match (read, refused) {
        (Ok(r), false) => r,
        (Err(_), true) => Site::default(),
        (Ok(_), true) => {
            score.problem = Some("the read should have been refused".into());
            Site::default()
        }
        (Err(e), false) => {
            score.problem = Some(format!("the read failed: {e}"));
            Site::default()
        }
    };
    let drafted = if read.pages.is_empty() {
        Drafted::default()
    } else {
        drafter.draft(&read, &DraftField::ALL, categories).await.unwrap_or_else(|e| {
            score.problem = Some(format!("the drafter failed: {e}"));
            Drafted::default()
        })
    };
    score.elapsed = started.elapsed();
    score.pages = read.pages.len();
    let prefixes = disallowed_prefixes(name);
    score.disallowed = site
        .paths()
        .into_iter()
        .filter(|p| p != "/robots.txt" && prefixes.iter().any(|d| p.starts_with(d.as_str())))
        .collect();

    for (what, quote, url) in offered_quotes(&drafted) {
        score.quotes += 1;
        if !verbatim(&read, &quote, &url) {
            score.unverbatim.push(format!("{what}: {quote:?} on {url}"));
        }
    }
    let mut draft = Draft::new(
        DraftId::new_random(),
        UserId::from_db(1),
        SiteUrl::parse("url", &site.url()).expect("a site url"),
        Utc::now(),
    );
    draft.apply_drafted(drafted, &read.text(), None);
    for (f, e) in draft.profile.entries() {
        for ev in &e.evidence {
            if !verbatim(&read, &ev.quote, &ev.url) {
                score.kept_unverbatim.push(format!("{}: {:?}", f.as_str(), ev.quote));
            }
        }
    }

    // Fields.
    for f in DraftField::ALL {
        let key = f.as_str();
        let value = draft.profile.field(f).value.clone().filter(|v| !v.is_blank());
        if blank.iter().any(|b| b == key) {
            if let Some(v) = &value {
                score.invented.push(format!("{key}: {}", field_text(v)));
            }
            continue;
        }
        let Some(spec) = stated.get(key) else { continue };
        match (spec, &value) {
            (Value::Object(o), _) if o.contains_key("includes") => {
                let items: Vec<String> = match &value {
                    Some(FieldValue::List(l)) => l.iter().map(|s| norm(s)).collect(),
                    Some(FieldValue::Text(s)) => vec![norm(s)],
                    None => vec![],
                };
                let includes = strings(o.get("includes").unwrap_or(&Value::Null));
                for i in &includes {
                    let found = items.contains(&norm(i));
                    score.fact(key, found);
                    if !found {
                        score.missed.push(format!("{key}: {i}"));
                    }
                }
                if let Some(allowed) = o.get("allowed") {
                    let ok: Vec<String> = includes.iter().chain(strings(allowed).iter()).map(|s| norm(s)).collect();
                    for i in items.iter().filter(|i| !ok.contains(i)) {
                        score.wrong.push(format!("{key}: {i} is not stated"));
                    }
                }
            }
            (_, None) => {
                score.fact(key, false);
                score.missed.push(key.to_owned());
            }
            (Value::Object(o), Some(v)) => {
                let got = norm(&field_text(v));
                let list = |k: &str| strings(o.get(k).unwrap_or(&Value::Null));
                let ok = list("contains").iter().all(|c| got.contains(&norm(c)))
                    && !list("not_contains").iter().any(|c| got.contains(&norm(c)));
                score.fact(key, ok);
                if !ok {
                    score.wrong.push(format!("{key}: {:?}", field_text(v)));
                }
            }
            (accepted, Some(v)) => {
                let got = norm(&field_text(v));
                let ok = strings(accepted).iter().any(|a| norm(a) == got);
                score.fact(key, ok);
                if !ok {
                    score.wrong.push(format!(
                        "{key}: {:?} (expected {})",
                        field_text(v),
                        strings(accepted).join(" or ")
                    ));
                }
            }
        }
    }

    // Founders: each stated one is one fact (name, and title and bio when the site gives them).
    let founders = &draft.extras.founders;
    let expected_founders = stated.get("founders").and_then(Value::as_array).cloned().unwrap_or_default();
    for ef in &expected_founders {
        let name = ef["name"].as_str().unwrap_or_default();
        match founders.iter().find(|f| norm(f.founder.name.as_str()) == norm(name)) {
            None => {
                score.fact("founders", false);
                score.missed.push(format!("founder {name}"));
            }
            Some(f) => {
                let title_ok = ef["title"].as_str().is_none_or(|t| norm(f.founder.title.as_str()) == norm(t));
                let bio_ok = ef["bio"].as_str().is_none_or(|b| norm(f.founder.bio.as_str()).contains(&norm(b)));
                score.fact("founders", title_ok && bio_ok);
                if !(title_ok && bio_ok) {
                    let what = format!(
                        "founder {name}: title {:?}, bio {:?}",
                        f.founder.title.as_str(),
                        f.founder.bio.as_str()
                    );
                    if (!title_ok && !f.founder.title.as_str().is_empty())
                        || (!bio_ok && !f.founder.bio.as_str().is_empty())
                    {
                        score.wrong.push(what);
                    } else {
                        score.missed.push(what);
                    }
                }
            }
        }
    }
    for f in founders {
        if !expected_founders
            .iter()
            .any(|e| norm(e["name"].as_str().unwrap_or_default()) == norm(f.founder.name.as_str()))
        {
            score.invented.push(format!("founder {}", f.founder.name.as_str()));
        }
    }

    // FAQs: each stated question is one fact; a drafted FAQ the site does not have is invented.
    let faqs: Vec<String> = draft.extras.faqs.iter().map(|q| norm(q.faq.question.as_str())).collect();
    let expected_faqs = strings(stated.get("faqs").unwrap_or(&Value::Null));
    for q in &expected_faqs {
        let found = faqs.iter().any(|f| f.contains(&norm(q)));
        score.fact("faqs", found);
        if !found {
            score.missed.push(format!("faq {q}"));
        }
    }
    for f in &faqs {
        if !expected_faqs.iter().any(|q| f.contains(&norm(q))) {
            score.invented.push(format!("faq {f}"));
        }
    }

    // Company socials: each stated platform is one fact.
    let socials = &draft.extras.company_socials;
    let expected_socials = stated.get("socials").and_then(Value::as_object).cloned().unwrap_or_default();
    for (platform, url) in &expected_socials {
        let got = socials.get(platform);
        let ok = got == url.as_str();
        score.fact("socials", ok);
        match got {
            None => score.missed.push(format!("social {platform}")),
            Some(g) if !ok => score.wrong.push(format!("social {platform}: {g}")),
            Some(_) => {}
        }
    }
    for (platform, link) in socials.iter() {
        if !expected_socials.contains_key(platform) {
            score.invented.push(format!("social {platform}: {link}"));
        }
    }

    // Words the site only says where a visitor never looks (or a disallowed page holds).
    let mut said: Vec<String> = draft
        .profile
        .entries()
        .filter_map(|(_, e)| e.value.as_ref().map(field_text))
        .chain(founders.iter().map(|f| format!("{} {}", f.founder.name.as_str(), f.founder.title.as_str())))
        .collect();
    said.extend(socials.iter().map(|(_, l)| l.to_owned()));
    for w in &never {
        if said.iter().any(|s| norm(s).contains(&norm(w))) {
            score.invented.push(format!("never-stated {w:?} appears"));
        }
    }
    score
}

/// The corpus totals.
#[derive(Debug, Default)]
pub struct Totals {
    pub facts: usize,
    pub found: usize,
    pub wrong: usize,
    pub invented: usize,
    pub quotes: usize,
    pub unverbatim: usize,
    pub kept_unverbatim: usize,
    pub disallowed: usize,
    pub fields: BTreeMap<String, (usize, usize)>,
}

impl Totals {
    pub fn of(scores: &[SiteScore]) -> Self {
        let mut t = Totals::default();
        for s in scores {
            t.facts += s.facts;
            t.found += s.found;
            t.wrong += s.wrong.len();
            t.invented += s.invented.len();
            t.quotes += s.quotes;
            t.unverbatim += s.unverbatim.len();
            t.kept_unverbatim += s.kept_unverbatim.len();
            t.disallowed += s.disallowed.len();
            for (f, (n, k)) in &s.fields {
                let e = t.fields.entry(f.clone()).or_default();
                e.0 += n;
                e.1 += k;
            }
        }
        t
    }

    pub fn recall(&self) -> f64 {
        if self.facts == 0 { 0.0 } else { self.found as f64 * 100.0 / self.facts as f64 }
    }
}

fn pct(n: usize, d: usize) -> String {
    if d == 0 { "—".into() } else { format!("{:.0}%", n as f64 * 100.0 / d as f64) }
}

/// The tables `just bench-drafts` prints (Markdown, so a run can be pasted into docs/BENCHMARKS.md).
pub fn report(title: &str, scores: &[SiteScore]) -> String {
    let t = Totals::of(scores);
    let mut out = format!("### {title}\n\n");
    out.push_str("| site | pages | stated facts | found | recall | wrong | invented | quotes not verbatim (dropped) | disallowed requests | read + draft |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for s in scores {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} of {} | {} | {} ms |\n",
            s.site,
            s.pages,
            s.facts,
            s.found,
            pct(s.found, s.facts),
            s.wrong.len(),
            s.invented.len(),
            s.unverbatim.len(),
            s.quotes,
            s.disallowed.len(),
            s.elapsed.as_millis()
        ));
    }
    out.push_str(&format!(
        "| **all {}** | | **{}** | **{}** | **{:.1}%** | **{}** | **{}** | **{} of {}** | **{}** | |\n\n",
        scores.len(),
        t.facts,
        t.found,
        t.recall(),
        t.wrong,
        t.invented,
        t.unverbatim,
        t.quotes,
        t.disallowed
    ));
    out.push_str(&format!(
        "Kept values whose quotes are verbatim on a fetched page: {} of them are not ({}).\n\n",
        t.kept_unverbatim,
        if t.kept_unverbatim == 0 { "100% verbatim" } else { "FAILS" }
    ));
    out.push_str("| field | stated | found | recall |\n|---|---:|---:|---:|\n");
    for (f, (n, k)) in &t.fields {
        out.push_str(&format!("| {f} | {n} | {k} | {} |\n", pct(*k, *n)));
    }
    out.push('\n');
    let mut details = String::new();
    for s in scores {
        let mut lines: Vec<String> = Vec::new();
        lines.extend(s.problem.iter().map(|p| format!("problem: {p}")));
        lines.extend(s.missed.iter().map(|m| format!("missed {m}")));
        lines.extend(s.wrong.iter().map(|m| format!("wrong {m}")));
        lines.extend(s.invented.iter().map(|m| format!("invented {m}")));
        lines.extend(s.unverbatim.iter().map(|m| format!("not verbatim {m}")));
        lines.extend(s.disallowed.iter().map(|m| format!("disallowed request {m}")));
        if !lines.is_empty() {
            details.push_str(&format!("- {}: {}\n", s.site, lines.join("; ")));
        }
    }
    if !details.is_empty() {
        out.push_str("What was missed or wrong:\n\n");
        out.push_str(&details);
    }
    out
}
