//! Drafters: what turns the pages of a site into proposed profile values, each with the quotes it was
//! read from. Nothing a drafter says is trusted: the domain keeps a value only when every quote is in
//! the fetched text (`Draft::apply_drafted`).
//!
//! - [`ExtractiveDrafter`]: the default. Offline and deterministic: structured data (JSON-LD,
//!   OpenGraph, meta tags, microformats), headings, lists, pricing text, mailto and social links.
//! - [`LlmDrafter`]: any OpenAI-compatible chat-completions server (`LAUNCHDIR_LLM_*`), answering one
//!   JSON object that is validated against [`answer_schema`] before use.

mod extractive;
mod llm;

pub use extractive::{ExtractiveDrafter, company_socials};
pub use llm::{LlmDrafter, answer_schema};
