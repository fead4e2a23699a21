//! API integration tests: the real server on port 0 with its own database, and the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod attacks;
mod auth;
mod binary;
mod browser;
mod claims;
mod drafts;
mod helpers;
mod http;
mod instances;
mod journey;
mod limits;
mod mcp;
mod metrics;
mod moderation;
mod oauth;
mod orders;
mod own;
mod pages;
mod public;
mod seo;
mod site;
