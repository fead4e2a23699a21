//! robots.txt as RFC 9309 says: fetched (through the safe fetcher) before any page of a site; a 2xx
//! body is matched for our user-agent token with the robotstxt crate (a port of Google's matcher); a
//! 4xx means everything is allowed; a 5xx or an unreachable robots.txt means nothing is.

use crate::fetch::{FetchError, SafeFetcher};
use url::Url;

/// The user-agent token robots.txt rules name us by.
pub const AGENT: &str = "launchdir";

/// Why robots.txt gave no decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RobotsUnread {
    /// Answered with a status that is neither 2xx nor 4xx (a 5xx, or redirects beyond the limit).
    Status(u16),
    Fetch(FetchError),
}

#[derive(Debug, Clone)]
pub enum Robots {
    AllowAll,
    DisallowAll,
    Rules(String),
}

impl Robots {
    /// Reads `origin`'s robots.txt to a decision: a 2xx body gives the rules, a 4xx allows everything;
    /// any other answer, or none, is returned as why it could not be read.
    pub async fn read(fetcher: &SafeFetcher, origin: &Url) -> Result<Self, RobotsUnread> {
        let robots_url = origin.join("/robots.txt").map_err(|_| RobotsUnread::Fetch(FetchError::InvalidUrl))?;
        match fetcher.get(robots_url.as_str()).await {
            Ok(r) if (200..300).contains(&r.status) => Ok(Self::Rules(String::from_utf8_lossy(&r.body).into_owned())),
            Ok(r) if (400..500).contains(&r.status) => Ok(Self::AllowAll),
            Ok(r) => Err(RobotsUnread::Status(r.status)),
            Err(e) => Err(RobotsUnread::Fetch(e)),
        }
    }

    /// Reads `origin`'s robots.txt; RFC 9309: one that cannot be read (5xx, unreachable) allows nothing.
    pub async fn fetch(fetcher: &SafeFetcher, origin: &Url) -> Self {
        Self::read(fetcher, origin).await.unwrap_or(Self::DisallowAll)
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
