//! The site as people and search engines find it: the search box and `/search` (words, category,
//! order, paging, the API's bounds as a 400 naming the field, a clear empty state), pages that describe
//! themselves (description, canonical address, Open Graph, JSON-LD that parses), `robots.txt` and the
//! sitemaps, which hold every live listing.

use crate::helpers::{TestApp, spawn_app};
use serde_json::Value;
use std::collections::BTreeSet;

async fn text(app: &TestApp, path: &str) -> (u16, String) {
    let r = app.get(path).await;
    (r.status().as_u16(), r.text().await.unwrap())
}

/// Every live listing's slug, read through the API.
async fn live_slugs(app: &TestApp) -> BTreeSet<String> {
    let mut slugs = BTreeSet::new();
    for page in 1.. {
        let r: Value = app.get(&format!("/api/v1/listings?per_page=100&page={page}")).await.json().await.unwrap();
        let items = r["items"].as_array().unwrap();
        slugs.extend(items.iter().map(|l| l["slug"].as_str().unwrap().to_owned()));
        if page >= r["pagination"]["total_pages"].as_i64().unwrap() {
            break;
        }
    }
    slugs
}

/// The `content` of `<meta name|property="{key}" content="…">`, unescaped enough for these checks.
fn meta(html: &str, key: &str) -> Option<String> {
    let at = html.find(&format!(r#"="{key}" content=""#))?;
    let rest = &html[at + key.len() + 13..];
    Some(crate::pages::unescape(&rest[..rest.find('"')?]))
}

fn canonical(html: &str) -> Option<String> {
    let at = html.find(r#"<link rel="canonical" href=""#)?;
    let rest = &html[at + 28..];
    Some(crate::pages::unescape(&rest[..rest.find('"')?]))
}

/// Every JSON-LD block of a page, parsed (a block that does not parse fails the test).
fn json_ld(html: &str) -> Vec<Value> {
    html.split(r#"<script type="application/ld+json">"#)
        .skip(1)
        .map(|rest| {
            let block = &rest[..rest.find("</script>").expect("a closed script")];
            serde_json::from_str(block).unwrap_or_else(|e| panic!("JSON-LD that does not parse ({e}): {block}"))
        })
        .collect()
}

fn of_type<'a>(blocks: &'a [Value], kind: &str) -> &'a Value {
    blocks.iter().find(|b| b["@type"] == kind).unwrap_or_else(|| panic!("no {kind} in {blocks:?}"))
}

#[tokio::test]
async fn a_person_searches_and_finds_a_listing() {
    let app = spawn_app(true).await;
    app.wait_ready().await;
    let (_, home) = text(&app, "/").await;
    assert!(home.contains(&format!(r#"action="{}/search""#, app.base)), "a search box in the header");

    let first: Value = app.get("/api/v1/listings?per_page=1").await.json().await.unwrap();
    let (name, slug) = (first["items"][0]["name"].as_str().unwrap(), first["items"][0]["slug"].as_str().unwrap());
    let (status, page) = text(&app, &format!("/search?q={}", name.replace(' ', "+"))).await;
    assert_eq!(status, 200);
    assert!(page.contains(&format!(r#"href="{}/listings/{slug}""#, app.base)), "the listing is found: {page}");
    assert!(page.contains(r#"<meta name="robots" content="noindex">"#), "result pages stay out of indexes");

    // A category and an order narrow and sort; paging walks on with the same words.
    let (status, all) = text(&app, "/search?sort=most_viewed").await;
    assert_eq!(status, 200);
    assert!(all.contains("live launches") && all.contains("page=2"), "many results are paged: {all}");
    let cats: Value = app.get("/api/v1/categories").await.json().await.unwrap();
    let cat = cats["items"][0]["slug"].as_str().unwrap();
    let (status, narrowed) = text(&app, &format!("/search?category={cat}&sort=newest")).await;
    assert_eq!(status, 200);
    assert!(narrowed.contains(&format!(r#"<option value="{cat}" selected>"#)), "the choice is kept");

    // Nothing found: said plainly, with a way on.
    let (status, none) = text(&app, "/search?q=zzqxjv+wwqqzz").await;
    assert_eq!(status, 200);
    assert!(none.contains("No live launch matches this search"), "{none}");

    // The API's bounds, as a 400 page naming the field.
    for (query, field) in [
        (format!("q={}", "a".repeat(201)), "q"),
        ("sort=loudest".to_owned(), "sort"),
        ("page=0".to_owned(), "page"),
        ("page=two".to_owned(), "page"),
        ("category=no-such-category".to_owned(), "category"),
    ] {
        let (status, refused) = text(&app, &format!("/search?{query}")).await;
        assert_eq!(status, 400, "{query}");
        assert!(refused.contains(&format!("<strong>{field}</strong>")), "{query} names {field}: {refused}");
    }
}

#[tokio::test]
async fn pages_describe_themselves_to_search_engines_and_link_previews() {
    let app = spawn_app(true).await;
    app.wait_ready().await;
    let first: Value = app.get("/api/v1/listings?per_page=1").await.json().await.unwrap();
    let slug = first["items"][0]["slug"].as_str().unwrap();
    let l: Value = app.get(&format!("/api/v1/listings/{slug}")).await.json().await.unwrap();

    let (status, page) = text(&app, &format!("/listings/{slug}")).await;
    assert_eq!(status, 200);
    let link = &page[page.find(r#"id="product-link""#).expect("the link to the product")..];
    let link = &link[..link.find('>').unwrap()];
    let rel = if l["link_followed"] == true { r#"rel="noopener""# } else { r#"rel="nofollow noopener""# };
    assert!(link.contains(rel), "{link} as link_followed = {} says", l["link_followed"]);
    let url = format!("{}/listings/{slug}", app.base);
    assert_eq!(canonical(&page).as_deref(), Some(url.as_str()), "an absolute canonical address");
    assert!(url.starts_with("http://") || url.starts_with("https://"));
    assert_eq!(meta(&page, "og:url").as_deref(), Some(url.as_str()));
    assert_eq!(meta(&page, "og:title").as_deref(), l["name"].as_str());
    assert_eq!(meta(&page, "twitter:card").as_deref(), Some("summary"));
    assert!(meta(&page, "description").is_some_and(|d| !d.is_empty() && d.chars().count() <= 300));
    let blocks = json_ld(&page);
    let app_ld = of_type(&blocks, "SoftwareApplication");
    assert_eq!(app_ld["name"], l["name"]);
    assert_eq!(app_ld["url"], l["url"], "the product's own address");
    if !l["pricing_summary"].as_str().unwrap_or_default().is_empty() {
        assert_eq!(app_ld["offers"]["@type"], "Offer", "its pricing as an offer: {app_ld}");
    }
    let trail = of_type(&blocks, "BreadcrumbList");
    let last = trail["itemListElement"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["item"], url.as_str(), "the trail ends at the page");

    // A founder, a category and a blog post describe themselves too.
    let founder_slug = l["founders"][0]["slug"].as_str().map(str::to_owned);
    if let Some(f) = founder_slug {
        let (_, fp) = text(&app, &format!("/founders/{f}")).await;
        let person = json_ld(&fp);
        assert_eq!(of_type(&person, "Person")["url"], format!("{}/founders/{f}", app.base));
        assert_eq!(meta(&fp, "og:type").as_deref(), Some("profile"));
    }
    let cat = l["categories"]["primary"]["slug"].as_str().unwrap();
    let (_, cp) = text(&app, &format!("/categories/{cat}")).await;
    assert_eq!(canonical(&cp), Some(format!("{}/categories/{cat}", app.base)));
    of_type(&json_ld(&cp), "BreadcrumbList");
    let posts: Value = app.get("/api/v1/blog?per_page=1").await.json().await.unwrap();
    let post = posts["items"][0]["slug"].as_str().unwrap();
    let (_, bp) = text(&app, &format!("/blog/{post}")).await;
    let article = json_ld(&bp);
    assert_eq!(of_type(&article, "BlogPosting")["headline"], posts["items"][0]["title"]);
    assert_eq!(meta(&bp, "og:type").as_deref(), Some("article"));

    // Every public page has a title and a description.
    for path in ["/", "/categories", "/leaderboards/community-weekly", "/launches/this", "/blog", "/awards", "/search"]
    {
        let (status, p) = text(&app, path).await;
        assert_eq!(status, 200, "{path}");
        assert!(p.contains("<title>") && meta(&p, "description").is_some_and(|d| !d.is_empty()), "{path}");
    }
    let (_, home) = text(&app, "/").await;
    assert_eq!(of_type(&json_ld(&home), "WebSite")["potentialAction"]["@type"], "SearchAction");
}

#[tokio::test]
async fn robots_names_the_sitemap_and_the_sitemaps_hold_every_live_listing() {
    let app = spawn_app(true).await;
    app.wait_ready().await;
    let (status, robots) = text(&app, "/robots.txt").await;
    assert_eq!(status, 200);
    assert!(robots.contains(&format!("Sitemap: {}/sitemap.xml", app.base)), "{robots}");
    assert!(robots.contains("Disallow: /me/"), "private pages are not crawled");

    let (status, index) = text(&app, "/sitemap.xml").await;
    assert_eq!(status, 200);
    assert!(index.starts_with(r#"<?xml version="1.0" encoding="UTF-8"?>"#) && index.contains("<sitemapindex"));
    let files: Vec<String> = index.split("<loc>").skip(1).map(|r| r[..r.find("</loc>").unwrap()].to_owned()).collect();
    for kind in ["listings-1.xml", "founders.xml", "categories.xml", "weeks.xml", "blog.xml"] {
        assert!(files.iter().any(|f| f.ends_with(&format!("/sitemaps/{kind}"))), "{kind} in {files:?}");
    }
    // A listing file streams (written as it is read, no length known up front).
    let listings_file = app.get("/sitemaps/listings-1.xml").await;
    assert_eq!(listings_file.status(), 200);
    assert!(listings_file.headers().get("content-length").is_none(), "{:?}", listings_file.headers());
    assert_eq!(listings_file.headers()["transfer-encoding"], "chunked");
    let body = listings_file.text().await.unwrap();
    roxmltree::Document::parse(&body).unwrap_or_else(|e| panic!("not XML ({e}): {body}"));
    assert!(body.ends_with("</urlset>\n"), "the file is whole");
    let mut listed = BTreeSet::new();
    let mut founders = 0;
    for file in &files {
        let path = file.strip_prefix(&app.base).expect("absolute, on the public URL");
        let (status, body) = text(&app, path).await;
        assert_eq!(status, 200, "{path}");
        assert!(body.contains(r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#), "{path}");
        let locs: Vec<&str> = body.split("<loc>").skip(1).map(|r| &r[..r.find("</loc>").unwrap()]).collect();
        assert!(locs.len() <= 50_000, "{path} holds at most 50 000 addresses");
        assert!(locs.iter().all(|l| l.starts_with(&app.base)), "{path}: every address is absolute");
        for loc in locs {
            if let Some(slug) = loc.strip_prefix(&format!("{}/listings/", app.base)) {
                assert!(listed.insert(slug.to_owned()), "{slug} is listed once");
            }
            founders += usize::from(loc.contains("/founders/"));
        }
    }
    assert_eq!(listed, live_slugs(&app).await, "the sitemaps hold every live listing and nothing else");
    assert!(founders > 0, "the founders are listed");
    assert_eq!(app.get("/sitemaps/listings-99.xml").await.status(), 404, "no file past the last");
    assert_eq!(app.get("/sitemaps/other.xml").await.status(), 404);
}

/// The files anyone may keep (sitemaps, feeds, the style sheet) come gzipped to a client that asks,
/// the same bytes once unzipped; pages and the API's JSON, which can hold a visitor's token or data,
/// never do (docs/DECISIONS.md, "gzip").
#[tokio::test]
async fn public_files_come_gzipped_to_a_client_that_asks_and_pages_never_do() {
    use std::io::Read;
    let app = spawn_app(true).await;
    app.wait_ready().await;
    // A client that does not unzip by itself, so the bytes on the wire are seen.
    let raw = reqwest::Client::builder().no_gzip().build().unwrap();
    let fetch = |path: &str, accept: Option<&str>| {
        let mut r = raw.get(format!("{}{path}", app.base)).header("user-agent", "Mozilla/5.0 (X11; Linux) seo test");
        if let Some(a) = accept {
            r = r.header("accept-encoding", a);
        }
        r.send()
    };
    let mut zipped_files = 0;
    for path in ["/sitemap.xml", "/sitemaps/listings-1.xml", "/feeds/launches.atom", "/static/site.css"] {
        let plain = fetch(path, None).await.unwrap();
        assert_eq!(plain.status(), 200, "{path}");
        assert!(plain.headers().get("content-encoding").is_none(), "{path}: nothing asked, nothing zipped");
        assert_eq!(plain.headers().get("vary").map(|v| v.to_str().unwrap()), Some("accept-encoding"), "{path}");
        let plain = plain.bytes().await.unwrap();
        let zipped = fetch(path, Some("gzip, deflate, br")).await.unwrap();
        if plain.len() < 1024 {
            // Not worth the gzip frame (the index of this small directory's few files).
            assert!(zipped.headers().get("content-encoding").is_none(), "{path}: {} bytes", plain.len());
            continue;
        }
        assert_eq!(zipped.headers()["content-encoding"], "gzip", "{path}");
        assert_eq!(zipped.headers()["vary"], "accept-encoding", "{path}");
        let zipped = zipped.bytes().await.unwrap();
        let mut unzipped = Vec::new();
        flate2::read::GzDecoder::new(&zipped[..]).read_to_end(&mut unzipped).unwrap();
        assert_eq!(unzipped, plain, "{path}: the same bytes");
        zipped_files += 1;
        if plain.len() > 4096 {
            assert!(zipped.len() * 2 < plain.len(), "{path}: {} bytes zipped of {}", zipped.len(), plain.len());
        }
        let head = raw.head(format!("{}{path}", app.base)).header("accept-encoding", "gzip").send().await.unwrap();
        assert_eq!(
            head.headers().get("content-encoding").map(|v| v.to_str().unwrap()),
            Some("gzip"),
            "{path}: HEAD as GET"
        );
        let refused = fetch(path, Some("gzip;q=0")).await.unwrap();
        assert!(refused.headers().get("content-encoding").is_none(), "{path}: gzip refused");
    }
    assert!(zipped_files >= 3, "the listings sitemap, the feed and the style sheet were zipped");
    let slug = live_slugs(&app).await.into_iter().next().expect("a live listing");
    for path in
        ["/".to_owned(), format!("/listings/{slug}"), "/search?q=a".into(), "/api/v1/launches?section=trending".into()]
    {
        let r = fetch(&path, Some("gzip")).await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        assert!(r.headers().get("content-encoding").is_none(), "{path} is never zipped");
    }
}

/// The Atom feed a page links to with `<link rel="alternate">`.
fn feed_link(html: &str) -> Option<String> {
    let at = html.find(r#"<link rel="alternate" type="application/atom+xml""#)?;
    let rest = &html[at..];
    let href = rest.find(r#"href=""#)? + 6;
    Some(crate::pages::unescape(&rest[href..href + rest[href..].find('"')?]))
}

/// Checks `xml` against RFC 4287's required structure; returns the entries' titles.
fn valid_atom(xml: &str, self_url: &str) -> Vec<String> {
    const ATOM: &str = "http://www.w3.org/2005/Atom";
    let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("not XML ({e}): {xml}"));
    let feed = doc.root_element();
    assert_eq!((feed.tag_name().namespace(), feed.tag_name().name()), (Some(ATOM), "feed"));
    fn child<'a, 'i>(n: roxmltree::Node<'a, 'i>, name: &str) -> Option<roxmltree::Node<'a, 'i>> {
        n.children().find(|c| c.tag_name().name() == name && c.tag_name().namespace() == Some(ATOM))
    }
    let text = |n: roxmltree::Node<'_, '_>, name: &str| child(n, name).and_then(|c| c.text()).map(str::to_owned);
    let rfc3339 = |t: Option<String>| {
        let t = t.expect("an updated element");
        chrono::DateTime::parse_from_rfc3339(&t).unwrap_or_else(|e| panic!("updated {t:?} is not RFC 3339: {e}"));
    };
    assert!(text(feed, "id").is_some_and(|i| i.starts_with("http")), "a feed id");
    assert!(text(feed, "title").is_some_and(|t| !t.is_empty()), "a feed title");
    rfc3339(text(feed, "updated"));
    let self_link = feed.children().find(|c| c.tag_name().name() == "link" && c.attribute("rel") == Some("self"));
    assert_eq!(self_link.and_then(|l| l.attribute("href")), Some(self_url), "rel=self is the feed's own address");
    let author = child(feed, "author").expect("a feed author (entries have none of their own)");
    assert!(text(author, "name").is_some_and(|n| !n.is_empty()));
    let mut ids = BTreeSet::new();
    let mut titles = Vec::new();
    for entry in feed.children().filter(|c| c.tag_name().name() == "entry") {
        let id = text(entry, "id").expect("an entry id");
        assert!(ids.insert(id.clone()), "entry ids are unique: {id}");
        titles.push(text(entry, "title").expect("an entry title"));
        rfc3339(text(entry, "updated"));
        let link = entry.children().find(|c| c.tag_name().name() == "link").and_then(|l| l.attribute("href"));
        assert!(link.is_some_and(|l| l.starts_with("http")), "an absolute entry link");
    }
    titles
}

#[tokio::test]
async fn pages_link_their_feeds_and_the_feeds_validate_as_atom() {
    let app = spawn_app(true).await;
    app.wait_ready().await;
    // This week's launches, from the home page.
    let (_, home) = text(&app, "/").await;
    let url = feed_link(&home).expect("the home page links this week's feed");
    let r = app.get(url.strip_prefix(&app.base).unwrap()).await;
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("application/atom+xml"));
    let week = valid_atom(&r.text().await.unwrap(), &url);
    let api: Value = app.get("/api/v1/launches/weeks/this").await.json().await.unwrap();
    assert_eq!(week.len(), api["launches"].as_array().unwrap().len(), "one entry per live launch of the week");

    // A category's newest launches, from its page.
    let first: Value = app.get("/api/v1/listings?per_page=1").await.json().await.unwrap();
    let slug = first["items"][0]["slug"].as_str().unwrap();
    let l: Value = app.get(&format!("/api/v1/listings/{slug}")).await.json().await.unwrap();
    let cat = l["categories"]["primary"]["slug"].as_str().unwrap();
    let (_, cp) = text(&app, &format!("/categories/{cat}")).await;
    let url = feed_link(&cp).expect("a category page links its feed");
    let entries = valid_atom(&app.get(url.strip_prefix(&app.base).unwrap()).await.text().await.unwrap(), &url);
    assert!(entries.iter().any(|t| l["name"].as_str() == Some(t.as_str())), "{entries:?} holds {}", l["name"]);

    // A listing's updates, from its page: one entry per update the API shows.
    let mut checked = false;
    let page: Value = app.get("/api/v1/listings?per_page=40").await.json().await.unwrap();
    for item in page["items"].as_array().unwrap() {
        let slug = item["slug"].as_str().unwrap();
        let l: Value = app.get(&format!("/api/v1/listings/{slug}")).await.json().await.unwrap();
        let updates = l["latest_updates"].as_array().unwrap();
        if updates.is_empty() {
            continue;
        }
        let (_, lp) = text(&app, &format!("/listings/{slug}")).await;
        let url = feed_link(&lp).expect("a listing page links its updates");
        let titles = valid_atom(&app.get(url.strip_prefix(&app.base).unwrap()).await.text().await.unwrap(), &url);
        let want: Vec<String> = updates.iter().map(|u| u["title"].as_str().unwrap().to_owned()).collect();
        assert_eq!(titles, want);
        checked = true;
        break;
    }
    assert!(checked, "the demo data has a listing with updates");
    assert_eq!(app.get("/feeds/categories/no-such-category.atom").await.status(), 404);
    assert_eq!(app.get("/listings/no-such-listing/updates.atom").await.status(), 404);
}

/// A live listing named `name` whose logo is at `logo_url`, stored directly.
async fn listing_with_logo(app: &TestApp, name: &str, logo_url: &str) -> String {
    use domain::listing::{Lifecycle, ListingProfile, ListingStatus, NewListing, Plan};
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    let slug = domain::slug::Slug::slugify(name).unwrap();
    let mut profile = ListingProfile::named(name, "https://logo.example/", "logo.example");
    profile.logo_url = logo_url.to_owned();
    let now = chrono::Utc::now();
    let lifecycle = Lifecycle::from_parts(ListingStatus::Live, Plan::Paid, None, Some(now));
    let l = store.store.create_listing(NewListing::plain(slug, profile, lifecycle, now)).await.unwrap();
    l.slug.to_string()
}

#[tokio::test]
async fn a_logo_is_served_by_the_service_only_as_png_jpeg_or_webp_never_hot_linked() {
    let dir = tempfile::tempdir().unwrap();
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89".to_vec();
    std::fs::write(dir.path().join("logo.png"), &png).unwrap();
    std::fs::write(
        dir.path().join("logo.svg"),
        "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>",
    )
    .unwrap();
    std::fs::write(dir.path().join("fake.png"), "<html><script>alert(1)</script></html>").unwrap();
    let mut big = png.clone();
    big.resize(domain::image::MAX_LOGO_BYTES + 1, 0);
    std::fs::write(dir.path().join("big.png"), &big).unwrap();
    let canary = test_support::Canary::start().await;
    let site = test_support::FixtureSite::serve_dir(dir.path().to_owned(), &canary.url()).await;
    let allowed = vec![site.host_port()];
    let app = crate::helpers::spawn_app_configured(test_support::sqlite(), false, |a| {
        a.outbound.crawler_allowed_hosts = allowed;
    })
    .await;
    app.wait_ready().await;

    let good = listing_with_logo(&app, "Logo Good", &format!("{}/logo.png", site.url().trim_end_matches('/'))).await;
    let r = app.get(&format!("/logos/{good}")).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/png");
    assert_eq!(r.bytes().await.unwrap().to_vec(), png, "the image as fetched");
    let (_, page) = text(&app, &format!("/listings/{good}")).await;
    assert!(page.contains(&format!(r#"src="{}/logos/{good}""#, app.base)), "the page shows it through us");
    assert!(!page.contains(&site.host_port()), "the product's server is never linked for the image");
    let fetched = site.requests().len();
    assert_eq!(app.get(&format!("/logos/{good}")).await.status(), 200);
    assert_eq!(site.requests().len(), fetched, "kept: not fetched again");

    for (name, file) in
        [("Logo Svg", "logo.svg"), ("Logo Fake", "fake.png"), ("Logo Big", "big.png"), ("Logo Gone", "missing.png")]
    {
        let slug = listing_with_logo(&app, name, &format!("{}/{file}", site.url().trim_end_matches('/'))).await;
        let r = app.get(&format!("/logos/{slug}")).await;
        assert_eq!(r.status(), 404, "{file} is not served");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], "not_found");
    }
    // A logo at a private address is never fetched.
    let inside = listing_with_logo(&app, "Logo Inside", &format!("{}/logo.png", canary.url())).await;
    assert_eq!(app.get(&format!("/logos/{inside}")).await.status(), 404);
    assert_eq!(canary.connections(), 0, "nothing reached the private address");
    assert_eq!(app.get("/logos/no-such-listing").await.status(), 404);
}
