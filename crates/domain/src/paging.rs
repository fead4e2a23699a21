//! Pagination: page 1–1000 (default 1), per_page 1–100 (default 20), and the envelope of a page.

use crate::ValidationError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    page: u32,
    per_page: u32,
}

impl PageRequest {
    pub const MAX_PAGE: u32 = 1000;
    pub const MAX_PER_PAGE: u32 = 100;
    pub const DEFAULT_PER_PAGE: u32 = 20;

    pub fn parse(page: Option<i64>, per_page: Option<i64>) -> Result<Self, ValidationError> {
        let page = page.unwrap_or(1);
        let per_page = per_page.unwrap_or(i64::from(Self::DEFAULT_PER_PAGE));
        if !(1..=i64::from(Self::MAX_PAGE)).contains(&page) {
            return Err(ValidationError::new("page", "must be between 1 and 1000"));
        }
        if !(1..=i64::from(Self::MAX_PER_PAGE)).contains(&per_page) {
            return Err(ValidationError::new("per_page", "must be between 1 and 100"));
        }
        // Both fit in u32: checked just above.
        Ok(Self { page: page as u32, per_page: per_page as u32 })
    }

    pub fn first(per_page: u32) -> Self {
        Self { page: 1, per_page: per_page.clamp(1, Self::MAX_PER_PAGE) }
    }

    pub fn page(self) -> u32 {
        self.page
    }

    pub fn per_page(self) -> u32 {
        self.per_page
    }

    pub fn offset(self) -> u64 {
        u64::from(self.page - 1) * u64::from(self.per_page)
    }
}

impl Default for PageRequest {
    fn default() -> Self {
        Self { page: 1, per_page: Self::DEFAULT_PER_PAGE }
    }
}

/// One page of results with the counters a client needs to walk the rest.
#[derive(Debug, Clone, PartialEq)]
pub struct Paged<T> {
    pub items: Vec<T>,
    pub page: u32,
    pub per_page: u32,
    /// Exact when `total_exact`; otherwise at least this many ([`COUNT_CAP`]).
    pub total: u64,
    pub total_exact: bool,
}

/// Matches a search counts exactly; beyond it a total reads "10 000+" (`total_exact` false), so a
/// search for a word on every listing counts 10 001 rows, not all of them.
pub const COUNT_CAP: u64 = 10_000;

impl<T> Paged<T> {
    pub fn new(items: Vec<T>, req: PageRequest, total: u64) -> Self {
        Self { items, page: req.page(), per_page: req.per_page(), total, total_exact: true }
    }

    /// A page whose total was counted up to [`COUNT_CAP`] + 1: past the cap it is the cap, not exact.
    pub fn counted_to_cap(items: Vec<T>, req: PageRequest, counted: u64) -> Self {
        let mut p = Self::new(items, req, counted.min(COUNT_CAP));
        p.total_exact = counted <= COUNT_CAP;
        p
    }

    pub fn total_pages(&self) -> u64 {
        self.total.div_ceil(u64::from(self.per_page.max(1)))
    }

    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Paged<U> {
        Paged {
            items: self.items.into_iter().map(f).collect(),
            page: self.page,
            per_page: self.per_page,
            total: self.total,
            total_exact: self.total_exact,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_at_the_edges() {
        assert_eq!(PageRequest::parse(None, None).unwrap(), PageRequest::default());
        assert!(PageRequest::parse(Some(1000), Some(100)).is_ok());
        assert_eq!(PageRequest::parse(Some(0), None).unwrap_err().field, "page");
        assert_eq!(PageRequest::parse(Some(1001), None).unwrap_err().field, "page");
        assert_eq!(PageRequest::parse(None, Some(0)).unwrap_err().field, "per_page");
        assert_eq!(PageRequest::parse(None, Some(101)).unwrap_err().field, "per_page");
    }

    #[test]
    fn offset_and_pages() {
        let r = PageRequest::parse(Some(3), Some(10)).unwrap();
        assert_eq!(r.offset(), 20);
        let p: Paged<u8> = Paged::new(vec![], r, 21);
        assert_eq!(p.total_pages(), 3);
    }
}
