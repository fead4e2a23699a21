//! `SafeFetcher`: GET a page the way every outbound request of the service must go.
//!
//! - http and https only, no credentials in URLs, no system proxy;
//! - every hop's host is checked: a literal IP must be public; a name is resolved once by our resolver,
//!   which hands the connector only the public addresses among the answers (so the address checked is
//!   the address connected to — no second lookup to rebind);
//! - redirects are followed by hand, at most 5, each re-checked like the first URL;
//! - connect timeout 5 s, 30 s per page, bodies capped at 1 MiB after decompression;
//! - `host:port` pairs an operator lists in `LAUNCHDIR_CRAWLER_ALLOWED_HOSTS` skip the address check
//!   (intranet sites, test fixtures) and nothing else.

use crate::addr::is_public;
use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use url::{Host, Url};

pub const MAX_BODY: usize = 1024 * 1024;
pub const MAX_REDIRECTS: usize = 5;

/// Why a fetch failed, worded for the person whose site it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("the address is not a valid URL")]
    InvalidUrl,
    #[error("only http and https addresses can be read")]
    Scheme,
    #[error("addresses with a user name or password are not read")]
    Credentials,
    #[error("{0} is not a public internet address")]
    NotPublic(String),
    #[error("the site redirects more than {MAX_REDIRECTS} times")]
    TooManyRedirects,
    #[error("the site could not be reached ({0})")]
    Unreachable(String),
    #[error("the site took too long to answer")]
    Timeout,
    #[error("the page is larger than 1 MiB")]
    TooLarge,
    #[error("only the standard ports 80 and 443 are read, not {0}")]
    Port(u16),
    #[error("{0} is this service itself")]
    OwnService(String),
}

/// A fetched response (after redirects).
#[derive(Debug, Clone)]
pub struct Fetched {
    pub url: Url,
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
}

impl Fetched {
    pub fn is_html(&self) -> bool {
        let ct = self.content_type.to_ascii_lowercase();
        ct.starts_with("text/html") || ct.starts_with("application/xhtml+xml")
    }
}

/// Resolves names to their public addresses only; a name with none is an error.
#[derive(Debug)]
struct PublicOnly;

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let public: Vec<SocketAddr> = all.into_iter().filter(|a| is_public(a.ip())).collect();
            if public.is_empty() {
                let e: Box<dyn std::error::Error + Send + Sync> =
                    format!("{host} resolves to no public address").into();
                return Err(e);
            }
            Ok(Box::new(public.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[derive(Debug, Clone)]
pub struct SafeFetcher {
    checked: reqwest::Client,
    exempt: reqwest::Client,
    allowed: Arc<HashSet<String>>,
    /// The service's own public host names and addresses: never read (a submitted URL must not make
    /// the crawler call our own endpoints from the inside).
    own_hosts: Arc<HashSet<String>>,
    user_agent: String,
}

fn builder(user_agent: &str) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .user_agent(user_agent)
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(30))
}

impl SafeFetcher {
    /// `allowed`: `host:port` pairs exempt from the address check. `user_agent` names the service and
    /// its URL, e.g. `launchdir/0.1 (+https://launch.example/bot)`.
    pub fn new(user_agent: &str, allowed: impl IntoIterator<Item = String>) -> Result<Self, FetchError> {
        let unreachable = |e: reqwest::Error| FetchError::Unreachable(e.to_string());
        Ok(Self {
            checked: builder(user_agent).dns_resolver(Arc::new(PublicOnly)).build().map_err(unreachable)?,
            exempt: builder(user_agent).build().map_err(unreachable)?,
            allowed: Arc::new(allowed.into_iter().map(|h| h.trim().to_ascii_lowercase()).collect()),
            own_hosts: Arc::default(),
            user_agent: user_agent.to_owned(),
        })
    }

    /// Refuses the hosts of `public_urls` (the service's own addresses), unless a `host:port` of them
    /// is explicitly allowed.
    #[must_use]
    pub fn refusing_own(mut self, public_urls: &[&str]) -> Self {
        let hosts = public_urls
            .iter()
            .filter_map(|u| Url::parse(u).ok())
            .filter_map(|u| u.host().map(|h| host_text(&h)))
            .collect();
        self.own_hosts = Arc::new(hosts);
        self
    }

    pub fn user_agent(&self) -> &str {
        &self.user_agent
    }

    /// Checks one hop's URL and picks the client for it.
    fn client_for(&self, url: &Url) -> Result<&reqwest::Client, FetchError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchError::Scheme);
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(FetchError::Credentials);
        }
        let host = url.host().ok_or(FetchError::InvalidUrl)?;
        let port = url.port_or_known_default().ok_or(FetchError::InvalidUrl)?;
        let host_text = host_text(&host);
        if self.allowed.contains(&format!("{host_text}:{port}")) {
            return Ok(&self.exempt);
        }
        let literal: Option<IpAddr> = match host {
            Host::Ipv4(ip) => Some(ip.into()),
            Host::Ipv6(ip) => Some(ip.into()),
            Host::Domain(_) => None,
        };
        if let Some(ip) = literal
            && !is_public(ip)
        {
            return Err(FetchError::NotPublic(host_text));
        }
        if self.own_hosts.contains(host_text.trim_end_matches('.')) {
            return Err(FetchError::OwnService(host_text));
        }
        // Other ports reach services that are no website (mail, databases, admin consoles).
        if port != 80 && port != 443 {
            return Err(FetchError::Port(port));
        }
        Ok(&self.checked)
    }

    /// GETs `url`, following up to 5 redirects, each hop checked.
    pub async fn get(&self, url: &str) -> Result<Fetched, FetchError> {
        let mut url = Url::parse(url.trim()).map_err(|_| FetchError::InvalidUrl)?;
        for _ in 0..=MAX_REDIRECTS {
            match self.get_hop(&url).await? {
                Hop::Redirect(next) => url = next,
                Hop::Done(f) => return Ok(f),
            }
        }
        Err(FetchError::TooManyRedirects)
    }

    /// One request, its address checked, without following a redirect: for callers that decide about
    /// each hop themselves (the crawler asks robots.txt before every one).
    pub async fn get_hop(&self, url: &Url) -> Result<Hop, FetchError> {
        let client = self.client_for(url)?;
        let mut res = client.get(url.clone()).send().await.map_err(|e| classify(&e, url))?;
        let status = res.status();
        if status.is_redirection()
            && let Some(loc) = res.headers().get(reqwest::header::LOCATION)
        {
            let loc = loc.to_str().map_err(|_| FetchError::InvalidUrl)?;
            return Ok(Hop::Redirect(url.join(loc).map_err(|_| FetchError::InvalidUrl)?));
        }
        let content_type = res
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        if res.content_length().is_some_and(|n| n > MAX_BODY as u64) {
            return Err(FetchError::TooLarge);
        }
        let mut body = Vec::new();
        while let Some(chunk) = res.chunk().await.map_err(|e| classify(&e, url))? {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(FetchError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Hop::Done(Fetched { url: url.clone(), status: status.as_u16(), content_type, body }))
    }
}

/// A URL's host as the allow-list and the own-host list write it (lower case; IPv6 in brackets).
fn host_text(host: &Host<&str>) -> String {
    match host {
        Host::Domain(d) => d.to_ascii_lowercase().trim_end_matches('.').to_owned(),
        Host::Ipv4(ip) => ip.to_string(),
        Host::Ipv6(ip) => format!("[{ip}]"),
    }
}

/// What one request brought back.
#[derive(Debug, Clone)]
pub enum Hop {
    Redirect(Url),
    Done(Fetched),
}

fn classify(e: &reqwest::Error, url: &Url) -> FetchError {
    if e.is_timeout() {
        return FetchError::Timeout;
    }
    // Walk the source chain: our resolver's refusal reads "… resolves to no public address".
    let mut source: Option<&dyn std::error::Error> = Some(e);
    while let Some(s) = source {
        if s.to_string().contains("resolves to no public address") {
            return FetchError::NotPublic(url.host_str().unwrap_or_default().to_owned());
        }
        source = s.source();
    }
    FetchError::Unreachable(if e.is_connect() { "connection failed".into() } else { "request failed".into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn other_ports_and_the_service_itself_are_refused_before_any_connection() {
        let f = SafeFetcher::new("test", ["127.0.0.1:9999".to_owned()])
            .unwrap()
            .refusing_own(&["https://Launch.Example/", "http://203.0.113.9:8080"]);
        // Public addresses on ports that are no website: refused without connecting.
        for (url, port) in [("http://93.184.216.34:25/", 25), ("https://93.184.216.34:6379/", 6379)] {
            assert_eq!(f.get(url).await.unwrap_err(), FetchError::Port(port), "{url}");
        }
        // The service's own host names, whatever the case or a trailing dot.
        for url in ["https://launch.example/mcp", "http://LAUNCH.example./api/v1/me"] {
            assert!(matches!(f.get(url).await.unwrap_err(), FetchError::OwnService(_)), "{url}");
        }
        // An operator's explicit allowance still wins (test fixtures, intranet sites on other ports).
        assert!(f.client_for(&Url::parse("http://127.0.0.1:9999/").unwrap()).is_ok());
    }
}
