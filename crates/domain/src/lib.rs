//! The launchdir domain: what a listing, draft, launch week, order or claim *is*, the rules they obey,
//! and the port traits the outside world is reached through.
//!
//! Architecture invariant: this crate performs no I/O and depends on no I/O crate (no sea-orm, sqlx,
//! actix, reqwest, rmcp, hyper). Adapters implement [`ports`]; API crates call them. Every bound the
//! spec states lives here, once.

pub mod auth;
pub mod award;
pub mod badge;
pub mod blog;
pub mod category;
pub mod claim;
pub mod draft;
pub mod engagement;
pub mod error;
pub mod founder;
pub mod ids;
pub mod image;
pub mod interview;
pub mod listing;
pub mod moderation;
pub mod money;
pub mod oauth;
pub mod order;
pub mod own;
pub mod paging;
pub mod ports;
pub mod product;
pub mod ratelimit;
pub mod sections;
pub mod settings;
pub mod slug;
pub mod social;
pub mod text;
pub mod throttle;
pub mod user;
pub mod vat;
pub mod week;

pub use error::{ValidationError, ValidationErrors};
