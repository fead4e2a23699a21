//! robots.txt as RFC 9309 says: fetched (through the safe fetcher) before any page of a site; a 2xx
//! body is matched for our user-agent token with the robotstxt crate (a port of Google's matcher); a
//! 4xx means everything is allowed; a 5xx or an unreachable robots.txt means nothing is.

use crate::fetch::SafeFetcher;
use url::Url;

/// The user-agent token robots.txt rules name us by.
pub const AGENT: &str = "launchdir";

#[derive(Debug, Clone)]
pub enum Robots {
    AllowAll,
    DisallowAll,
    Rules(String),
}

impl Robots {
    /// Reads `origin`'s robots.txt.
    pub async fn fetch(fetcher: &SafeFetcher, origin: &Url) -> Self {
        let Ok(robots_url) = origin.join("/robots.txt") else { return Self::DisallowAll };
        match fetcher.get(robots_url.as_str()).await {
            Ok(r) if (200..300).contains(&r.status) => Self::Rules(String::from_utf8_lossy(&r.body).into_owned()),
            Ok(r) if (400..500).contains(&r.status) => Self::AllowAll,
            Ok(_) | Err(_) => Self::DisallowAll,
        }
    }

    pub fn allows(&self, url: &Url) -> bool {
        match self {
            Self::AllowAll => true,
            Self::DisallowAll => false,
            Self::Rules(body) => {
                robotstxt::DefaultMatcher::default().one_agent_allowed_by_robots(body, AGENT, url.as_str())
            }
        }
    }
}
