//! Reference data read from `fixtures/reference/` (compiled in, so a binary needs no files beside it):
//! the category tree, products with default prices, and the founder interview questions.

use domain::category::NewCategory;
use domain::money::Cents;
use domain::product::{Product, ProductCode, ProductKind};
use domain::slug::Slug;
use domain::social::Faq;
use serde::Deserialize;

const CATEGORIES: &str = include_str!("../../../fixtures/reference/categories.json");
const PRODUCTS: &str = include_str!("../../../fixtures/reference/products.json");
const QUESTIONS: &str = include_str!("../../../fixtures/reference/interview_questions.json");
const EU_VAT: &str = include_str!("../../../fixtures/reference/eu_vat.json");

/// A fixture file that does not parse: a bug in the repository, reported with the file's name.
#[derive(Debug, thiserror::Error)]
#[error("fixtures/reference/{file}: {problem}")]
pub struct FixtureError {
    pub file: &'static str,
    pub problem: String,
}

fn bad(file: &'static str, problem: impl ToString) -> FixtureError {
    FixtureError { file, problem: problem.to_string() }
}

/// A category as written in the fixture, with the hints the demo generator writes text from.
#[derive(Debug, Clone, Deserialize)]
pub struct CategoryFixture {
    pub slug: String,
    pub name: String,
    pub description: String,
    pub parent: Option<String>,
    pub position: i32,
    faqs: Vec<FaqJson>,
    pub attributes: Vec<String>,
    /// Feature phrases typical of the category (subcategories only).
    pub features: Vec<String>,
    /// Who products in the category are for.
    pub audience: String,
    pub keywords: Vec<String>,
    /// Other words sites use for the category, matched by the drafter.
    #[serde(default)]
    pub synonyms: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct FaqJson {
    question: String,
    answer: String,
}

pub fn category_fixtures() -> Result<Vec<CategoryFixture>, FixtureError> {
    serde_json::from_str(CATEGORIES).map_err(|e| bad("categories.json", e))
}

pub fn categories() -> Result<Vec<NewCategory>, FixtureError> {
    category_fixtures()?
        .into_iter()
        .map(|c| {
            let faqs = c
                .faqs
                .into_iter()
                .map(|f| Faq::parse(f.question, f.answer))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| bad("categories.json", format!("{}: {e}", c.slug)))?;
            Ok(NewCategory {
                slug: Slug::parse(c.slug.clone()).map_err(|e| bad("categories.json", e))?,
                name: c.name,
                description: c.description,
                parent: c.parent.map(Slug::parse).transpose().map_err(|e| bad("categories.json", e))?,
                position: c.position,
                faqs,
                attributes: c.attributes,
                synonyms: c.synonyms,
            })
        })
        .collect()
}

#[derive(Debug, Deserialize)]
struct ProductJson {
    code: String,
    kind: String,
    name: String,
    description: String,
    price_cents: i64,
    needs_listing: bool,
    position: i32,
}

pub fn products() -> Result<Vec<Product>, FixtureError> {
    let raw: Vec<ProductJson> = serde_json::from_str(PRODUCTS).map_err(|e| bad("products.json", e))?;
    raw.into_iter()
        .map(|p| {
            Ok(Product {
                code: ProductCode::parse(&p.code).map_err(|e| bad("products.json", e))?,
                kind: ProductKind::parse(&p.kind)
                    .ok_or_else(|| bad("products.json", format!("unknown kind {}", p.kind)))?,
                name: p.name,
                description: p.description,
                price: Cents::new(p.price_cents),
                needs_listing: p.needs_listing,
                active: true,
                position: p.position,
            })
        })
        .collect()
}

#[derive(Debug, Deserialize)]
struct VatFile {
    countries: Vec<VatCountryJson>,
}

#[derive(Debug, Deserialize)]
struct VatCountryJson {
    country: String,
    prefix: String,
    standard_rate_bp: u32,
    pattern: String,
}

/// The EU member states' standard VAT rates and VAT number formats (`eu_vat.json`).
pub fn vat_table() -> Result<domain::vat::VatTable, FixtureError> {
    let file: VatFile = serde_json::from_str(EU_VAT).map_err(|e| bad("eu_vat.json", e))?;
    Ok(domain::vat::VatTable::new(
        file.countries
            .into_iter()
            .map(|c| domain::vat::VatCountry {
                country: c.country,
                prefix: c.prefix,
                standard_rate_bp: c.standard_rate_bp,
                pattern: c.pattern,
            })
            .collect(),
    ))
}

pub fn interview_questions() -> Result<Vec<String>, FixtureError> {
    serde_json::from_str(QUESTIONS).map_err(|e| bad("interview_questions.json", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_tree_has_two_levels_and_enough_categories() {
        let cats = categories().unwrap();
        assert!(cats.len() >= 30, "{} categories", cats.len());
        let tops: Vec<&NewCategory> = cats.iter().filter(|c| c.parent.is_none()).collect();
        assert!(tops.len() >= 5);
        for c in &cats {
            assert!(!c.description.is_empty() && !c.faqs.is_empty(), "{} needs a description and FAQs", c.slug);
            if let Some(p) = &c.parent {
                let parent = cats.iter().find(|x| &x.slug == p).expect("parent exists");
                assert!(parent.parent.is_none(), "two levels only: {}", c.slug);
            }
        }
        let mut slugs: Vec<&str> = cats.iter().map(|c| c.slug.as_str()).collect();
        slugs.sort_unstable();
        slugs.dedup();
        assert_eq!(slugs.len(), cats.len(), "slugs are unique");
    }

    #[test]
    fn products_include_launch_with_a_price() {
        let p = products().unwrap();
        let launch = p.iter().find(|p| p.code.as_str() == "launch").expect("the 'launch' product exists");
        assert!(launch.price.get() > 0 && launch.needs_listing);
        assert!(p.iter().any(|p| p.kind == ProductKind::Billboard));
    }

    #[test]
    fn interview_questions_are_present() {
        assert!(interview_questions().unwrap().len() >= 5);
    }
}
