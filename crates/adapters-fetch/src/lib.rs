//! The safe outbound fetcher (issue 5 builds it here; every later outbound check goes through it).
//! So far: the address policy, the part every hop's check rests on.
//!
//! Architecture invariant: no outbound connection leaves the service except through this crate, and
//! this crate connects only to addresses [`addr::is_public`] accepts (or to host:port pairs an operator
//! exempted with `LAUNCHDIR_CRAWLER_ALLOWED_HOSTS`).

pub mod addr;
