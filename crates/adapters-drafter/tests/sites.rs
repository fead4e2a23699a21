//! The crawler and both drafters against the fixture sites served on loopback: robots.txt first and
//! obeyed, no connection to a private address, every kept value quoting the site verbatim, every fact
//! the site does not state blank and listed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use adapters_drafter::{ExtractiveDrafter, LlmDrafter};
use adapters_fetch::{SafeFetcher, SiteCrawler};
use chrono::Utc;
use domain::category::CategoryTerms;
use domain::draft::{Draft, DraftField, FieldState, FieldValue, SiteUrl};
use domain::ids::{DraftId, UserId};
use domain::ports::{Drafter, Site, SiteError, SiteReader};
use domain::text::normalize_whitespace;
use test_support::{Canary, FixtureSite};

const UA: &str = "launchdir/0.1 (+http://launch.test/bot)";

fn crawler(site: &FixtureSite) -> SiteCrawler {
    SiteCrawler::new(SafeFetcher::new(UA, [site.host_port()]).unwrap())
}

async fn drafted(site: &FixtureSite, drafter: &dyn Drafter) -> (Draft, Site) {
    let read = crawler(site).read_site(&site.url()).await.unwrap();
    let mut d =
        Draft::new(DraftId::new_random(), UserId::from_db(1), SiteUrl::parse("url", &site.url()).unwrap(), Utc::now());
    let out = drafter
        .draft(&read, &DraftField::ALL, &[CategoryTerms::named("Developer Tools"), CategoryTerms::named("Finance")])
        .await
        .unwrap();
    d.apply_drafted(out, &read.text(), None);
    (d, read)
}

fn text(d: &Draft, f: DraftField) -> Option<String> {
    match &d.profile.field(f).value {
        Some(FieldValue::Text(s)) => Some(s.clone()),
        Some(FieldValue::List(l)) => Some(l.join(" | ")),
        None => None,
    }
}

/// Every quote of every kept value is in the text of the page it names.
fn assert_evidence_verbatim(d: &Draft, site: &Site) {
    let mut quotes = 0;
    for (f, e) in d.profile.entries() {
        if e.value.is_some() {
            assert_eq!(e.state, FieldState::Ai, "{f:?}");
            assert!(!e.evidence.is_empty(), "{f:?} has a value without evidence");
        }
        for ev in &e.evidence {
            let page = site.pages.iter().find(|p| p.url == ev.url).unwrap_or_else(|| panic!("{} not fetched", ev.url));
            assert!(
                normalize_whitespace(&page.text).contains(&normalize_whitespace(&ev.quote)),
                "{f:?}: {:?}",
                ev.quote
            );
            quotes += 1;
        }
    }
    for q in &d.extras.faqs {
        assert!(q.evidence.iter().all(|e| site.text().contains(e)), "FAQ {:?}", q.faq.question.as_str());
    }
    assert!(quotes > 0);
}

#[tokio::test]
async fn acme_rockets_is_drafted_from_what_it_states() {
    let site = FixtureSite::serve("acme-rockets", "http://127.0.0.1:9").await;
    let (d, read) = drafted(&site, &ExtractiveDrafter).await;
    let paths = site.paths();
    assert_eq!(paths[0], "/robots.txt", "robots.txt is requested first: {paths:?}");
    assert!(!paths.iter().any(|p| p.starts_with("/private")), "a disallowed page was requested: {paths:?}");
    assert!(site.requests().iter().all(|r| r.user_agent == UA));
    assert!(read.pages.iter().all(|p| !p.text.contains("CANARY-PHRASE-7731")));

    assert_eq!(text(&d, DraftField::Name).as_deref(), Some("Acme Rockets"));
    assert_eq!(text(&d, DraftField::Tagline).as_deref(), Some("Launch your cat into orbit"));
    assert_eq!(text(&d, DraftField::FoundedYear).as_deref(), Some("2019"));
    assert_eq!(text(&d, DraftField::City).as_deref(), Some("Cork"));
    assert_eq!(text(&d, DraftField::Country).as_deref(), Some("IE"));
    assert_eq!(text(&d, DraftField::PricingModel).as_deref(), Some("Freemium"));
    assert_eq!(text(&d, DraftField::ContactEmail).as_deref(), Some("hello@acme-rockets.test"));
    assert_eq!(text(&d, DraftField::DemoVideoUrl).as_deref(), Some("https://www.youtube.com/watch?v=acmedemo01"));
    assert_eq!(text(&d, DraftField::LogoUrl), Some(format!("{}img/acme-logo.png", site.url())));
    assert!(text(&d, DraftField::Features).unwrap().contains("Live paw-cam"));
    let founders: Vec<&str> = d.extras.founders.iter().map(|f| f.founder.name.as_str()).collect();
    assert_eq!(founders, ["Aoife Byrne", "Tomás Ó Ríordáin"]);
    assert!(d.extras.faqs.len() >= 2);
    assert_eq!(d.extras.company_socials.get("github"), Some("https://github.com/acme-rockets"));
    // Hidden text is not the site's statement: no 1850, no Paris, no beta.
    for f in DraftField::ALL {
        let v = text(&d, f).unwrap_or_default();
        assert!(!v.contains("1850") && !v.contains("Paris"), "{f:?} took the hidden injection: {v}");
    }
    assert_eq!(d.profile.field(DraftField::Stage).state, FieldState::NotFound);
    assert!(d.not_found_names().contains(&"stage".to_owned()));
    assert_evidence_verbatim(&d, &read);
}

#[tokio::test]
async fn ledgerly_facts_come_from_prose_and_the_internal_redirect_is_never_followed() {
    let canary = Canary::start().await;
    let site = FixtureSite::serve("ledgerly", &canary.url()).await;
    let (d, read) = drafted(&site, &ExtractiveDrafter).await;
    assert_eq!(canary.connections(), 0, "the crawler connected to a private address");
    assert!(site.paths().contains(&"/old-pricing".to_owned()), "the redirecting link was tried");
    assert!(read.pages.iter().any(|p| p.url.ends_with("/for-ai")), "the injection page was read as data");
    assert_eq!(text(&d, DraftField::City).as_deref(), Some("Berlin"));
    assert_eq!(text(&d, DraftField::Country).as_deref(), Some("DE"));
    assert_eq!(text(&d, DraftField::FoundedYear).as_deref(), Some("2017"));
    assert_eq!(text(&d, DraftField::Stage).as_deref(), Some("beta"));
    assert_eq!(text(&d, DraftField::PricingModel).as_deref(), Some("Subscription"));
    assert_eq!(text(&d, DraftField::ContactEmail).as_deref(), Some("team@ledgerly.test"));
    assert!(text(&d, DraftField::Usps).unwrap().contains("Books closed every night"));
    assert!(d.extras.founders.is_empty(), "no founder is stated: {:?}", d.extras.founders);
    for f in [DraftField::LogoUrl, DraftField::DemoVideoUrl] {
        assert_eq!(d.profile.field(f).state, FieldState::NotFound, "{f:?}");
    }
    assert_evidence_verbatim(&d, &read);
}

#[tokio::test]
async fn a_quiet_site_leaves_almost_everything_blank() {
    let site = FixtureSite::serve("quietnotes", "http://127.0.0.1:9").await;
    let (d, read) = drafted(&site, &ExtractiveDrafter).await;
    assert_eq!(text(&d, DraftField::Name).as_deref(), Some("QuietNotes"));
    assert_eq!(text(&d, DraftField::Tagline).as_deref(), Some("Notes that stay out of your way"));
    let blank = d.not_found_names();
    for f in ["founded_year", "city", "country", "pricing_model", "contact_email", "description", "features"] {
        assert!(blank.contains(&f.to_owned()), "{f} should be not found: {blank:?}");
    }
    assert_eq!(blank.len(), 16);
    assert_evidence_verbatim(&d, &read);
}

#[tokio::test]
async fn robots_txt_that_forbids_us_fails_the_read_without_fetching_a_page() {
    let site = FixtureSite::serve("blocked", "http://127.0.0.1:9").await;
    let err = crawler(&site).read_site(&site.url()).await.unwrap_err();
    assert_eq!(err, SiteError::RobotsForbid);
    assert_eq!(site.paths(), ["/robots.txt"]);
    assert!(err.to_string().contains("robots.txt"));
}

#[tokio::test]
async fn a_site_on_a_private_address_is_refused_unless_allowed() {
    let site = FixtureSite::serve("quietnotes", "http://127.0.0.1:9").await;
    let strict = SiteCrawler::new(SafeFetcher::new(UA, Vec::<String>::new()).unwrap());
    assert_eq!(strict.read_site(&site.url()).await.unwrap_err(), SiteError::Refused);
    assert!(site.paths().is_empty());
}

/// A fake OpenAI-compatible server answering one canned completion.
async fn fake_llm(answer: serde_json::Value) -> (String, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let reply =
        serde_json::json!({"choices": [{"message": {"role": "assistant", "content": answer.to_string()}}]}).to_string();
    let task = tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let reply = reply.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                loop {
                    let n = s.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf);
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len = text[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + len {
                            break;
                        }
                    }
                }
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    reply.len()
                );
                let _ = s.write_all(head.as_bytes()).await;
                let _ = s.write_all(reply.as_bytes()).await;
            });
        }
    });
    (format!("http://127.0.0.1:{port}/v1"), task)
}

fn llm_answer(site_url: &str) -> serde_json::Value {
    let mut fields = serde_json::Map::new();
    for f in DraftField::ALL {
        fields.insert(f.as_str().into(), serde_json::Value::Null);
    }
    let ev = |q: &str| serde_json::json!([{"quote": q, "url": site_url}]);
    fields.insert("name".into(), serde_json::json!({"value": "Ledgerly", "evidence": ev("Ledgerly")}));
    // A model that obeyed the injection page: the page says "started in 1850", never "founded in 1850",
    // and names no founder — such quotes are not in the fetched text, so the values must be dropped.
    fields.insert("founded_year".into(), serde_json::json!({"value": "1850", "evidence": ev("founded in 1850")}));
    fields.insert("city".into(), serde_json::json!({"value": "Berlin", "evidence": ev("Based in Berlin, Germany.")}));
    serde_json::json!({"fields": fields, "faqs": [], "founders": [{"name": "Elon Example", "title": "Founder", "bio": "", "evidence": ev("Elon Example is our founder")}]})
}

#[tokio::test]
async fn the_llm_drafter_is_held_to_the_evidence_rule() {
    let site = FixtureSite::serve("ledgerly", "http://127.0.0.1:9").await;
    let (base, _task) = fake_llm(llm_answer(&site.url())).await;
    let llm = LlmDrafter::new(&base, "test-model", Some("k")).unwrap();
    let (d, _) = drafted(&site, &llm).await;
    assert_eq!(text(&d, DraftField::Name).as_deref(), Some("Ledgerly"));
    assert_eq!(text(&d, DraftField::City).as_deref(), Some("Berlin"));
    // "founded in 1850" is not on the site: the value is dropped and the fact listed as not found.
    assert_eq!(d.profile.field(DraftField::FoundedYear).state, FieldState::NotFound);
    assert!(d.extras.founders.is_empty(), "an invented founder was kept");
}

#[tokio::test]
async fn an_llm_answer_off_the_schema_is_refused() {
    let site = FixtureSite::serve("quietnotes", "http://127.0.0.1:9").await;
    let (base, _task) = fake_llm(serde_json::json!({"fields": {"name": "QuietNotes"}})).await;
    let llm = LlmDrafter::new(&base, "m", None).unwrap();
    let read = crawler(&site).read_site(&site.url()).await.unwrap();
    let err = llm.draft(&read, &DraftField::ALL, &[]).await.unwrap_err();
    assert!(err.to_string().contains("schema"), "{err}");
}

/// Start URLs and redirects aimed at a canary on loopback, in every notation: each read is refused as a
/// private address before any connection, and the canary sees none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssrf_vectors_never_reach_a_private_address() {
    let canary = Canary::start().await;
    let p = canary.port;
    let dir = tempfile_dir();
    let targets = [
        format!("http://127.0.0.1:{p}/"),
        format!("http://[::ffff:127.0.0.1]:{p}/"),
        format!("http://localhost:{p}/"),
        format!("http://2130706433:{p}/"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
    ];
    let mut redirects = String::new();
    for (i, t) in targets.iter().enumerate() {
        redirects.push_str(&format!("/r{i} 302 {t}\n"));
    }
    std::fs::write(dir.join("_redirects"), redirects).unwrap();
    std::fs::write(dir.join("robots.txt"), "User-agent: *\nAllow: /\n").unwrap();
    let site = FixtureSite::serve_dir(dir.clone(), "").await;
    let mut vectors: Vec<String> = [
        "http://127.0.0.1:{p}/",
        "http://127.1:{p}/",
        "http://2130706433:{p}/",
        "http://0x7f000001:{p}/",
        "http://0177.0.0.1:{p}/",
        "http://0x7f.0.0.1:{p}/",
        "http://127.0.0.1.:{p}/",
        "http://0.0.0.0:{p}/",
        "http://0:{p}/",
        "http://[::1]:{p}/",
        "http://[::ffff:127.0.0.1]:{p}/",
        "http://[::ffff:7f00:1]:{p}/",
        "http://[0:0:0:0:0:ffff:127.0.0.1]:{p}/",
        "http://[::127.0.0.1]:{p}/",
        "http://[64:ff9b::7f00:1]:{p}/",
        "http://[2002:7f00:1::]:{p}/",
        "http://[fe80::1]:{p}/",
        "http://localhost:{p}/",
        "http://LOCALHOST.:{p}/",
        "https://127.0.0.1:{p}/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
        "http://10.0.0.1:{p}/",
        "http://192.168.1.1:{p}/",
        "http://100.64.0.1:{p}/",
    ]
    .iter()
    .map(|v| v.replace("{p}", &p.to_string()))
    .collect();
    for i in 0..targets.len() {
        vectors.push(format!("{}r{i}", site.url()));
    }
    let reader = crawler(&site);
    for v in &vectors {
        let err = reader.read_site(v).await.expect_err(v);
        // "localhost." may not resolve at all here; then it is unreachable, which is just as closed.
        let unresolvable = v.contains("LOCALHOST.") && matches!(err, SiteError::Unreachable(_));
        // A host name on a port other than 80/443 is refused for its port before any lookup.
        let odd_port = matches!(&err, SiteError::Unreachable(m) if m.contains("ports 80 and 443"));
        assert!(err == SiteError::Refused || unresolvable || odd_port, "{v}: {err}");
    }
    assert!(vectors.len() >= 20);
    assert_eq!(canary.connections(), 0, "a vector reached the canary");
    let _ = std::fs::remove_dir_all(dir);
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("launchdir-ssrf-{}", DraftId::new_random()));
    std::fs::create_dir_all(&d).unwrap();
    d
}
