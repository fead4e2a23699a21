//! Attacks a stranger with a script can make today, each run against the running service and named
//! by what it proves is shut (docs/SECURITY.md lists them with their numbers).

mod links;
mod rate_limit;
mod sign_in;
