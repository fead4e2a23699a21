//! sea-orm adapters for the domain's repository ports, on SQLite and PostgreSQL.
//!
//! Architecture invariant: the only crate that knows SQL, sea-orm and the schema's table layout.
//! It hands the domain's own types across the port boundary, never entity models.

mod accounts;
mod categories;
mod claims;
mod content;
pub mod db;
mod drafts;
pub mod entity;
mod founders;
mod idempotency;
mod import;
mod inline;
mod jobs;
mod json;
mod listings;
mod moderation;
mod oauth;
mod orders;
mod own;
mod pipe;
#[cfg(test)]
mod plans;
mod profiles;
mod reference;
mod sql;
mod store;
mod throttles;

pub use store::{PoolStats, SEARCH_SLOT_WAIT, SeaOrmStore, SearchSlotStats, default_search_slots};
