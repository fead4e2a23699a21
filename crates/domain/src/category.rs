//! Categories: a two-level tree. Every listing has one primary category; paid listings up to 3 more.

use crate::ids::CategoryId;
use crate::slug::Slug;
use crate::social::Faq;
use crate::{ValidationError, bounded_text};

bounded_text!(
    /// A category name as used in draft `categories` (each max 200).
    CategoryName, "name", 200, non_empty
);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Category {
    pub id: CategoryId,
    pub slug: Slug,
    pub name: String,
    pub description: String,
    pub parent_id: Option<CategoryId>,
    pub position: i32,
    pub faqs: Vec<Faq>,
    /// Listing facts compared side by side for listings of this category (compare_listings).
    pub attributes: Vec<String>,
    /// Other words sites use for this category ("helpdesk", "time tracker"): what the drafter also
    /// recognises when a site names what it is.
    pub synonyms: Vec<String>,
}

impl Category {
    /// The category as the drafter matches it.
    pub fn terms(&self) -> CategoryTerms {
        CategoryTerms { name: self.name.clone(), synonyms: self.synonyms.clone() }
    }
}

/// A category's name and the other words sites use for it. A drafter proposes the name; the synonyms
/// are only ever matched against what a site says about itself.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CategoryTerms {
    pub name: String,
    pub synonyms: Vec<String>,
}

impl CategoryTerms {
    pub fn named(name: impl Into<String>) -> Self {
        Self { name: name.into(), synonyms: vec![] }
    }
}

/// A category to be created (reference data); `parent` names the parent by slug.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCategory {
    pub slug: Slug,
    pub name: String,
    pub description: String,
    pub parent: Option<Slug>,
    pub position: i32,
    pub faqs: Vec<Faq>,
    pub attributes: Vec<String>,
    pub synonyms: Vec<String>,
}

/// A category with how many live listings it holds (directly, and with its subcategories).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryWithCount {
    pub category: Category,
    pub live_listings: u64,
}

/// The categories of one listing: a primary one and at most three extras, all distinct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingCategories {
    primary: CategoryId,
    extras: Vec<CategoryId>,
}

impl ListingCategories {
    pub const MAX_EXTRAS: usize = 3;

    pub fn new(primary: CategoryId) -> Self {
        Self { primary, extras: Vec::new() }
    }

    pub fn with_extras(primary: CategoryId, extras: Vec<CategoryId>) -> Result<Self, ValidationError> {
        let mut c = Self::new(primary);
        for e in extras {
            c.add_extra(e)?;
        }
        Ok(c)
    }

    /// Adds an extra category. Refused past three extras; adding the primary or a duplicate is a
    /// no-op, not an error, so a retried purchase is harmless.
    pub fn add_extra(&mut self, id: CategoryId) -> Result<(), ValidationError> {
        if id == self.primary || self.extras.contains(&id) {
            return Ok(());
        }
        if self.extras.len() >= Self::MAX_EXTRAS {
            return Err(ValidationError::new("categories", "a listing has at most 3 extra categories"));
        }
        self.extras.push(id);
        Ok(())
    }

    /// Rebuilds the categories storage holds; storage only holds sets built by the methods above.
    pub fn from_db(primary: CategoryId, extras: Vec<CategoryId>) -> Self {
        Self { primary, extras }
    }

    pub fn primary(&self) -> CategoryId {
        self.primary
    }

    pub fn extras(&self) -> &[CategoryId] {
        &self.extras
    }

    pub fn all(&self) -> impl Iterator<Item = CategoryId> + '_ {
        std::iter::once(self.primary).chain(self.extras.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: i64) -> CategoryId {
        CategoryId::from_db(n)
    }

    #[test]
    fn at_most_three_distinct_extras() {
        let mut c = ListingCategories::new(id(1));
        for n in 2..=4 {
            c.add_extra(id(n)).unwrap();
        }
        c.add_extra(id(1)).unwrap();
        c.add_extra(id(2)).unwrap();
        assert_eq!(c.extras().len(), 3);
        assert!(c.add_extra(id(5)).is_err());
        assert_eq!(c.all().count(), 4);
    }
}
