//! The site reader: the homepage, then the most useful same-site pages (pricing, about, features, FAQ,
//! contact, team), every request through [`SafeFetcher`] and every hop — redirects included — asked of
//! the robots.txt of its origin first. A page robots.txt disallows is never requested.
//!
//! Why not spider: its robots handling is off by default and mis-matches rules, and it fetches through
//! its own client, out of reach of the per-hop address check (docs/INTERNALS.md).

use crate::fetch::{FetchError, Hop, MAX_REDIRECTS, SafeFetcher};
use crate::html;
use crate::robots::{Robots, RobotsUnread};
use async_trait::async_trait;
use domain::ports::{FetchedPage, Homepage, Site, SiteError, SiteReader};
use scraper::Html;
use std::collections::HashMap;
use url::Url;

/// The kinds of page worth reading besides the homepage, with the words that name them.
const KINDS: [(&str, &[&str]); 6] = [
    ("pricing", &["pricing", "prices", "plans", "price", "buy"]),
    ("about", &["about", "company", "our-story", "story", "mission", "who-we-are", "who"]),
    ("features", &["features", "feature", "product", "tour", "how-it-works"]),
    ("faq", &["faq", "faqs", "questions", "help"]),
    ("contact", &["contact", "support"]),
    ("team", &["team", "people", "founders", "founder"]),
];

/// Links to these are not pages.
const NOT_PAGES: [&str; 14] =
    [".pdf", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".zip", ".mp4", ".mp3", ".css", ".js", ".xml", ".json"];

#[derive(Debug, Clone)]
pub struct SiteCrawler {
    fetcher: SafeFetcher,
    /// Pages besides the homepage.
    extra_pages: usize,
}

impl SiteCrawler {
    pub fn new(fetcher: SafeFetcher) -> Self {
        Self { fetcher, extra_pages: KINDS.len() }
    }

    /// Fetches `url`, asking robots.txt of each hop's origin first.
    async fn fetch(&self, url: &Url, robots: &mut HashMap<String, Robots>) -> Result<crate::Fetched, SiteError> {
        self.fetch_within(url, robots, false).await
    }

    /// [`SiteCrawler::fetch`]; with `same_site_only`, a redirect to another site is an error.
    async fn fetch_within(
        &self,
        start: &Url,
        robots: &mut HashMap<String, Robots>,
        same_site_only: bool,
    ) -> Result<crate::Fetched, SiteError> {
        let mut url = start.clone();
        for _ in 0..=MAX_REDIRECTS {
            let origin = url.origin().ascii_serialization();
            if !robots.contains_key(&origin) {
                let r = self.robots(&url).await?;
                robots.insert(origin.clone(), r);
            }
            if !robots.get(&origin).is_some_and(|r| r.allows(&url)) {
                return Err(SiteError::RobotsForbid);
            }
            match self.fetcher.get_hop(&url).await.map_err(site_error)? {
                Hop::Redirect(next) if same_site_only && !same_site(&next, start) => {
                    return Err(SiteError::OffSite(next.host_str().unwrap_or_default().to_owned()));
                }
                Hop::Redirect(next) => url = next,
                Hop::Done(f) => return Ok(f),
            }
        }
        Err(SiteError::TooManyRedirects)
    }
}

impl SiteCrawler {
    /// robots.txt of `url`'s origin as RFC 9309 reads it, failing (instead of reading "disallow all")
    /// when the origin is a private address or cannot be reached, so the reason a person sees is true.
    async fn robots(&self, url: &Url) -> Result<Robots, SiteError> {
        match Robots::read(&self.fetcher, url).await {
            Ok(r) => Ok(r),
            Err(RobotsUnread::Status(status)) => Err(SiteError::RobotsUnavailable(status)),
            Err(RobotsUnread::Fetch(
                e @ (FetchError::NotPublic(_)
                | FetchError::Unreachable(_)
                | FetchError::Timeout
                | FetchError::Port(_)
                | FetchError::OwnService(_)),
            )) => Err(site_error(e)),
            Err(RobotsUnread::Fetch(_)) => Ok(Robots::DisallowAll),
        }
    }
}

fn site_error(e: FetchError) -> SiteError {
    match e {
        FetchError::NotPublic(_) => SiteError::Refused,
        FetchError::TooManyRedirects => SiteError::TooManyRedirects,
        FetchError::TooLarge => SiteError::TooLarge,
        FetchError::Timeout => SiteError::Unreachable("it took too long to answer".into()),
        FetchError::Unreachable(m) => SiteError::Unreachable(m),
        other => SiteError::Unreachable(other.to_string()),
    }
}

fn same_site(a: &Url, b: &Url) -> bool {
    let strip = |u: &Url| u.host_str().map(|h| h.trim_start_matches("www.").to_ascii_lowercase());
    strip(a) == strip(b) && a.port_or_known_default() == b.port_or_known_default()
}

/// The language a path is the translation for (`/de/…`, `/pt-br/…`), when its first segment is one.
fn path_language(u: &Url) -> Option<String> {
    let first = u.path_segments()?.next()?.to_ascii_lowercase();
    let (lang, region) = first.split_once('-').unwrap_or((first.as_str(), ""));
    let is_lang = lang.len() == 2 && lang.chars().all(|c| c.is_ascii_lowercase());
    (is_lang && (region.is_empty() || region.len() == 2)).then(|| lang.to_owned())
}

/// The best link for each kind of useful page, best kind order first. Pages of another language than
/// the homepage's (`/de/preise` from an English homepage) are translations of what we read already.
fn pick_pages(home: &Url, start: &Url, links: &[(Url, String)], limit: usize, lang: Option<&str>) -> Vec<Url> {
    let home_lang = path_language(home).or_else(|| lang.map(|l| l.get(..2).unwrap_or(l).to_ascii_lowercase()));
    let mut picked: Vec<Url> = Vec::new();
    for (_, words) in KINDS {
        let mut best: Option<(i32, &Url)> = None;
        for (u, anchor) in links {
            if !matches!(u.scheme(), "http" | "https") || !(same_site(u, home) || same_site(u, start)) {
                continue;
            }
            let path = u.path().to_ascii_lowercase();
            if path == home.path() || path == "/" || NOT_PAGES.iter().any(|e| path.ends_with(e)) {
                continue;
            }
            if picked.iter().any(|p| p.path() == u.path()) {
                continue;
            }
            if let Some(l) = path_language(u)
                && home_lang.as_deref() != Some(l.as_str())
            {
                continue;
            }
            let segments: Vec<&str> = path.split(['/', '.', '_']).filter(|s| !s.is_empty()).collect();
            let anchor = anchor.to_ascii_lowercase();
            let mut score = 0;
            if segments.iter().any(|s| words.contains(s)) {
                score += 4;
            }
            if anchor.split(|c: char| !c.is_alphanumeric()).any(|w| words.contains(&w)) {
                score += 2;
            }
            if score == 0 {
                continue;
            }
            score -= segments.len() as i32;
            if best.is_none_or(|(s, _)| score > s) {
                best = Some((score, u));
            }
        }
        if let Some((_, u)) = best {
            picked.push(u.clone());
        }
        if picked.len() >= limit {
            break;
        }
    }
    picked
}

fn to_page(f: &crate::Fetched) -> (FetchedPage, Vec<(Url, String)>) {
    let raw = String::from_utf8_lossy(&f.body).into_owned();
    let doc = Html::parse_document(&raw);
    let text = html::page_text(&doc);
    let links = html::links(&doc, &f.url);
    (FetchedPage { url: f.url.to_string(), html: raw, text }, links)
}

impl SiteCrawler {
    /// The homepage at `url`: a 2xx HTML page, or the reason it is not one.
    async fn homepage(
        &self,
        url: &str,
        robots: &mut HashMap<String, Robots>,
        same_site_only: bool,
    ) -> Result<(Url, crate::Fetched), SiteError> {
        let start =
            Url::parse(url.trim()).map_err(|_| SiteError::Unreachable("the address is not a valid URL".into()))?;
        let home = self.fetch_within(&start, robots, same_site_only).await?;
        if !(200..300).contains(&home.status) {
            return Err(SiteError::Status(home.status));
        }
        if !home.is_html() {
            let ct = home.content_type.split(';').next().unwrap_or_default().trim().to_owned();
            return Err(SiteError::NotHtml(if ct.is_empty() { "of an unknown type".into() } else { ct }));
        }
        Ok((start, home))
    }
}

#[async_trait]
impl SiteReader for SiteCrawler {
    async fn read_homepage(&self, url: &str) -> Result<Homepage, SiteError> {
        let (_, home) = self.homepage(url, &mut HashMap::new(), true).await?;
        let doc = Html::parse_document(&String::from_utf8_lossy(&home.body));
        Ok(Homepage {
            url: home.url.to_string(),
            hrefs: html::links(&doc, &home.url).into_iter().map(|(u, _)| u.to_string()).collect(),
            images: html::images(&doc, &home.url).into_iter().map(|u| u.to_string()).collect(),
            meta: html::head_meta(&doc),
        })
    }

    async fn read_file(&self, url: &str) -> Result<String, SiteError> {
        let start =
            Url::parse(url.trim()).map_err(|_| SiteError::Unreachable("the address is not a valid URL".into()))?;
        let mut at = start.clone();
        for _ in 0..=MAX_REDIRECTS {
            match self.fetcher.get_hop(&at).await.map_err(site_error)? {
                Hop::Redirect(next) if !same_site(&next, &start) => {
                    return Err(SiteError::OffSite(next.host_str().unwrap_or_default().to_owned()));
                }
                Hop::Redirect(next) => at = next,
                Hop::Done(f) if (200..300).contains(&f.status) => {
                    return Ok(String::from_utf8_lossy(&f.body).into_owned());
                }
                Hop::Done(f) => return Err(SiteError::Status(f.status)),
            }
        }
        Err(SiteError::TooManyRedirects)
    }

    async fn read_image(&self, url: &str) -> Result<Vec<u8>, SiteError> {
        let mut at =
            Url::parse(url.trim()).map_err(|_| SiteError::Unreachable("the address is not a valid URL".into()))?;
        for _ in 0..=MAX_REDIRECTS {
            // Every hop's address is checked by the fetcher (public addresses only).
            match self.fetcher.get_hop(&at).await.map_err(site_error)? {
                Hop::Redirect(next) => at = next,
                Hop::Done(f) if (200..300).contains(&f.status) => return Ok(f.body.to_vec()),
                Hop::Done(f) => return Err(SiteError::Status(f.status)),
            }
        }
        Err(SiteError::TooManyRedirects)
    }

    async fn read_site(&self, url: &str) -> Result<Site, SiteError> {
        let mut robots = HashMap::new();
        let (start, home) = self.homepage(url, &mut robots, false).await?;
        let (page, links) = to_page(&home);
        let lang = Html::parse_document(&page.html)
            .select(&html::sel("html[lang]"))
            .next()
            .and_then(|h| h.value().attr("lang").map(str::to_owned));
        let mut site = Site { pages: vec![page] };
        for u in pick_pages(&home.url, &start, &links, self.extra_pages, lang.as_deref()) {
            match self.fetch(&u, &mut robots).await {
                Ok(f) if (200..300).contains(&f.status) && f.is_html() => site.pages.push(to_page(&f).0),
                Ok(f) => tracing::debug!(url = %u, status = f.status, "skipped a page"),
                Err(e) => tracing::debug!(url = %u, error = %e, "skipped a page"),
            }
        }
        Ok(site)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_one_page_per_kind_on_the_same_site() {
        let home = Url::parse("https://acme.example/").unwrap();
        let l = |u: &str, a: &str| (Url::parse(u).unwrap(), a.to_owned());
        let links = vec![
            l("https://acme.example/blog/pricing-news-2024", "Our new prices"),
            l("https://acme.example/pricing", "Pricing"),
            l("https://www.acme.example/about", "About us"),
            l("https://other.example/pricing", "Their pricing"),
            l("https://acme.example/brochure.pdf", "Features (PDF)"),
            l("https://acme.example/faq", "FAQ"),
            l("mailto:hi@acme.example", "Contact"),
        ];
        let picked: Vec<String> = pick_pages(&home, &home, &links, 6, None).iter().map(|u| u.to_string()).collect();
        assert_eq!(
            picked,
            ["https://acme.example/pricing", "https://www.acme.example/about", "https://acme.example/faq"]
        );
    }

    #[test]
    fn translations_are_not_read_and_footer_names_count() {
        let home = Url::parse("https://acme.example/").unwrap();
        let l = |u: &str, a: &str| (Url::parse(u).unwrap(), a.to_owned());
        let links = vec![
            l("https://acme.example/de/preise", "Preise"),
            l("https://acme.example/de/pricing", "Deutsch"),
            l("https://acme.example/en/pricing", "Pricing"),
            l("https://acme.example/who-we-are", "Who we are"),
        ];
        let picked: Vec<String> =
            pick_pages(&home, &home, &links, 6, Some("en-GB")).iter().map(|u| u.to_string()).collect();
        assert_eq!(picked, ["https://acme.example/en/pricing", "https://acme.example/who-we-are"]);
        let de = Url::parse("https://acme.example/de/").unwrap();
        let picked: Vec<String> = pick_pages(&de, &de, &links, 6, Some("en")).iter().map(|u| u.to_string()).collect();
        assert_eq!(picked[0], "https://acme.example/de/pricing", "a German homepage reads German pages");
    }
}
