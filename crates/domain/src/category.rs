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

/// How many live listings each category holds (primary or extra, not counting subcategories), by
/// category: what [`crate::ports::CategoryRepository::live_listing_counts`] answers. A list sorted by
/// id, looked up by halving: the category list reads one count for each of its few dozen categories
/// on every request, and hashing each id (SipHash, into a `HashMap`) cost a twelfth of that request's
/// instructions on PostgreSQL (callgrind, docs/BENCHMARKS.md).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CategoryCounts(Vec<(CategoryId, u64)>);

impl CategoryCounts {
    /// The count of `id`: 0 for a category not listed (one with no live listing may be absent).
    pub fn get(&self, id: CategoryId) -> u64 {
        self.0.binary_search_by_key(&id, |(c, _)| *c).map_or(0, |at| self.0[at].1)
    }

    /// Every category listed and its count, by id.
    pub fn iter(&self) -> impl Iterator<Item = (CategoryId, u64)> + '_ {
        self.0.iter().copied()
    }
}

/// Counts in any order; an id given more than once counts the sum of its counts.
impl FromIterator<(CategoryId, u64)> for CategoryCounts {
    fn from_iter<I: IntoIterator<Item = (CategoryId, u64)>>(iter: I) -> Self {
        let mut all: Vec<(CategoryId, u64)> = iter.into_iter().collect();
        all.sort_unstable_by_key(|(id, _)| *id);
        all.dedup_by(|(id, n), (kept_id, kept)| {
            let same = id == kept_id;
            if same {
                *kept = kept.saturating_add(*n);
            }
            same
        });
        Self(all)
    }
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
    fn category_counts_find_every_id_in_any_order_and_sum_repeats() {
        let counts: CategoryCounts =
            [(id(7), 2), (id(3), 5), (id(11), 0), (id(7), 1), (id(1), 4)].into_iter().collect();
        assert_eq!(counts.get(id(7)), 3);
        assert_eq!(counts.get(id(3)), 5);
        assert_eq!(counts.get(id(1)), 4);
        assert_eq!(counts.get(id(11)), 0);
        // Absent ids before, between and after the listed ones.
        for absent in [0, 2, 5, 8, 12, i64::MAX] {
            assert_eq!(counts.get(id(absent)), 0, "{absent}");
        }
        assert_eq!(counts.iter().map(|(c, n)| (c.get(), n)).collect::<Vec<_>>(), [(1, 4), (3, 5), (7, 3), (11, 0)]);
        assert_eq!(CategoryCounts::default().get(id(1)), 0);
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
