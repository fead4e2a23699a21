//! Ports for reference data: products and prices, site settings, interview questions.

use super::RepoResult;
use crate::interview::InterviewQuestion;
use crate::money::Cents;
use crate::product::{Product, ProductCode};
use async_trait::async_trait;

#[async_trait]
pub trait ProductRepository: Send + Sync {
    /// Inserts each product whose code is not stored yet; never changes a stored price.
    /// Returns how many were inserted.
    async fn ensure_products(&self, defaults: &[Product]) -> RepoResult<usize>;

    /// Active products in display order, with their current prices.
    async fn list_products(&self) -> RepoResult<Vec<Product>>;

    /// MUST return `RepoError::NotFound` when no product has `code`.
    async fn set_price(&self, code: &ProductCode, price: Cents) -> RepoResult<()>;
}

#[async_trait]
pub trait SettingsRepository: Send + Sync {
    /// Inserts each key not stored yet; never overwrites. Returns how many were inserted.
    async fn ensure_settings(&self, defaults: &[(&str, &str)]) -> RepoResult<usize>;

    /// Every stored key and value, sorted by key.
    async fn all_settings(&self) -> RepoResult<Vec<(String, String)>>;

    /// Stores a value (validated by the caller with `settings::validate`), inserting or replacing.
    async fn set_setting(&self, key: &str, value: &str) -> RepoResult<()>;
}

#[async_trait]
pub trait InterviewRepository: Send + Sync {
    /// Inserts each question whose text is not stored yet, in order. Returns how many were inserted.
    async fn ensure_questions(&self, questions: &[&str]) -> RepoResult<usize>;

    /// Questions in display order; ids are stable.
    async fn list_questions(&self) -> RepoResult<Vec<InterviewQuestion>>;
}
