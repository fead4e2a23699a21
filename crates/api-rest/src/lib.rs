//! The REST API, the web pages a person uses, and the `launchdir-api` binary's commands.
//!
//! Architecture invariant: thin. Parses HTTP into domain types, calls the domain through the
//! [`bootstrap::App`], and maps results to HTTP; no SQL, no business rule lives here.

pub mod badges;
mod checkout;
mod claim_links;
pub mod cli;
mod compress;
pub mod console;
pub mod docs_page;
mod headers;
mod invites;
mod oauth;
pub use api_http::{error, middleware};
pub mod feeds;
pub mod maker;
pub mod metrics;
pub mod probes;
pub mod rest;
pub mod seo;
pub mod server;
pub mod site;
pub mod web;
