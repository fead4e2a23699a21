//! Attacks a stranger with a script can make today, each run against the running service and named
//! by what it proves is shut (docs/SECURITY.md lists them with their numbers).

mod connections;
mod crawler;
mod links;
mod mail;
mod money;
mod oauth;
mod pages;
mod rate_limit;
mod reset;
mod secrets;
mod sign_in;
mod signup;
