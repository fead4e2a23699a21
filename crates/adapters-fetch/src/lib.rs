//! The safe outbound fetcher: every outbound request of the service (site crawls, badge checks, claim
//! checks, OAuth client metadata) goes through [`fetch::SafeFetcher`], with [`robots::Robots`] deciding
//! what a crawl may read. Built on reqwest (no proxy, redirects by hand, our own resolver) and the
//! robotstxt crate, not spider: spider fetches through its own client, out of reach of per-hop address
//! checks, and its robots matcher got several RFC 9309 cases wrong (see issue 5).
//!
//! Architecture invariant: no outbound connection leaves the service except through this crate, and
//! this crate connects only to addresses [`addr::is_public`] accepts (or to host:port pairs an operator
//! exempted with `LAUNCHDIR_CRAWLER_ALLOWED_HOSTS`).

pub mod addr;
pub mod crawl;
pub mod fetch;
pub mod html;
pub mod robots;

pub use crawl::SiteCrawler;
pub use fetch::{FetchError, Fetched, Hop, SafeFetcher};
pub use robots::Robots;
