//! Blog posts, founders and awards: editorial and people content, read with portable raw SQL.

use crate::entity::{blog_posts, founders};
use crate::founders::to_founder;
use crate::json::{faqs_from_json, list_from_json};
use crate::listings::SummaryRow;
use crate::sql::RawQuery;
use crate::store::{SeaOrmStore, repo_err};
use async_trait::async_trait;
use chrono::Utc;
use domain::award::{Award, AwardRank};
use domain::blog::BlogPost;
use domain::founder::Founder;
use domain::ids::{BlogPostId, ListingId};
use domain::listing::{CountryCode, ListingSummary};
use domain::paging::{COUNT_CAP, PageRequest, Paged};
use domain::ports::{AwardRepository, BlogRepository, FounderRepository, RepoResult};
use domain::slug::Slug;
use domain::week::LaunchWeek;
use sea_orm::{DbBackend, FromQueryResult, Statement};

/// `%text%` for LIKE, with LIKE's own wildcards escaped (used with `ESCAPE '\'`).
fn contains_pattern(text: &str) -> String {
    let escaped = text.to_lowercase().replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    format!("%{escaped}%")
}

fn to_post(m: blog_posts::Model) -> BlogPost {
    BlogPost {
        id: BlogPostId::from_db(m.id),
        slug: Slug::from_db(m.slug),
        title: m.title,
        summary: m.summary,
        body_markdown: m.body_markdown,
        author: m.author,
        tags: list_from_json(&m.tags),
        faqs: faqs_from_json(&m.faqs),
        published_at: m.published_at.map(|t| t.with_timezone(&Utc)),
    }
}

#[async_trait]
impl BlogRepository for SeaOrmStore {
    async fn list_blog_posts(&self, q: Option<&str>, page: PageRequest) -> RepoResult<Paged<BlogPost>> {
        let now = chrono::DateTime::<chrono::FixedOffset>::from(Utc::now());
        let filter = |r: &mut RawQuery| {
            r.sql(" FROM blog_posts WHERE published_at IS NOT NULL AND published_at <= ").bind(now);
            if let Some(q) = q.filter(|q| !q.trim().is_empty()) {
                let p = contains_pattern(q.trim());
                r.sql(" AND (lower(title) LIKE ")
                    .bind(p.clone())
                    .sql(" ESCAPE '\\' OR lower(summary) LIKE ")
                    .bind(p.clone())
                    .sql(" ESCAPE '\\' OR lower(body_markdown) LIKE ")
                    .bind(p)
                    .sql(" ESCAPE '\\')");
            }
        };
        // A scan of every founder (a name matched anywhere, and the count): through the pool in a
        // search slot, as a filtered list of listings is.
        let _slot = self.search_slot().await?;
        let mut count = RawQuery::new(self.backend());
        count.sql("SELECT COUNT(*) AS n");
        filter(&mut count);
        let total = self.count(&count).await?;
        let mut sel = RawQuery::new(self.backend());
        sel.sql("SELECT ").sql(&crate::sql::columns::<blog_posts::Entity>(""));
        filter(&mut sel);
        sel.sql(" ORDER BY published_at DESC, id DESC").page(page);
        let rows = blog_posts::Model::find_by_statement(sel.build()).all(&self.db).await.map_err(repo_err)?;
        Ok(Paged::new(rows.into_iter().map(to_post).collect(), page, total))
    }

    async fn get_blog_post(&self, slug: &Slug) -> RepoResult<Option<BlogPost>> {
        let now = chrono::DateTime::<chrono::FixedOffset>::from(Utc::now());
        let mut q = RawQuery::new(self.backend());
        q.sql("SELECT ")
            .sql(&crate::sql::columns::<blog_posts::Entity>(""))
            .sql(" FROM blog_posts WHERE slug = ")
            .bind(slug.as_str())
            .sql(" AND published_at IS NOT NULL AND published_at <= ")
            .bind(now);
        let row = blog_posts::Model::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)?;
        Ok(row.map(to_post))
    }
}

/// A founder (`f`) behind at least one live listing: their kept count (migration 59), one probe of
/// its key per founder. (The founder's links and each listing's status took two lookups a link: a
/// list's total of 10 001 founders 18–25 ms on SQLite, 65–101 ms on PostgreSQL at 100k listings.)
const BEHIND_LIVE: &str =
    " EXISTS (SELECT 1 FROM founder_live_listings k WHERE k.founder_id = f.id AND k.listings > 0)";

#[async_trait]
impl FounderRepository for SeaOrmStore {
    async fn list_founders(
        &self,
        q: Option<&str>,
        country: Option<&CountryCode>,
        page: PageRequest,
    ) -> RepoResult<Paged<Founder>> {
        let filter = |r: &mut RawQuery| {
            r.sql(" FROM founders f WHERE").sql(BEHIND_LIVE);
            if let Some(q) = q.filter(|q| !q.trim().is_empty()) {
                r.sql(" AND lower(f.name) LIKE ").bind(contains_pattern(q.trim())).sql(" ESCAPE '\\'");
            }
            if let Some(c) = country {
                r.sql(" AND f.country = ").bind(c.as_str());
            }
        };
        // A filtered list goes through the pool in a search slot, as a filtered list of listings does:
        // a name matched anywhere reads every founder, and its total is counted up to the cap. Without
        // a filter the page walks `(name, id)` (migration 50) from the top and stops at its last row,
        // and the total is one kept row (migration 59): no slot near the top (a deep page walks every
        // founder before it, as a list's does), and the total read as any short read (both were a pass
        // over every founder: 0.13–0.6 s on SQLite at 100k listings).
        let unfiltered = q.is_none_or(|q| q.trim().is_empty()) && country.is_none();
        let near_top = unfiltered && page.offset() < crate::store::SHORT_OFFSET;
        let _slot = if near_top { None } else { self.search_slot().await? };
        let mut count = RawQuery::new(self.backend());
        let counted = if unfiltered {
            count.sql("SELECT COALESCE((SELECT founders FROM founder_counts WHERE status = 'live'), 0) AS n");
            self.count_short(&count).await?
        } else {
            count.sql("SELECT COUNT(*) AS n FROM (SELECT 1");
            filter(&mut count);
            count.sql(" LIMIT ").count_of_rows(COUNT_CAP as i64 + 1).sql(") t");
            self.count(&count).await?
        };
        let mut sel = RawQuery::new(self.backend());
        sel.sql("SELECT ").sql(&crate::sql::columns::<founders::Entity>("f"));
        filter(&mut sel);
        sel.sql(" ORDER BY f.name, f.id").page(page);
        let rows = founders::Model::find_by_statement(sel.build()).all(&self.db).await.map_err(repo_err)?;
        Ok(Paged::counted_to_cap(rows.into_iter().map(to_founder).collect(), page, counted))
    }

    async fn get_founder(&self, slug: &Slug) -> RepoResult<Option<(Founder, Vec<ListingSummary>)>> {
        let mut q = RawQuery::new(self.backend());
        q.sql("SELECT ")
            .sql(&crate::sql::columns::<founders::Entity>("f"))
            .sql(" FROM founders f WHERE f.slug = ")
            .bind(slug.as_str())
            .sql(" AND")
            .sql(BEHIND_LIVE);
        let Some(f) = founders::Model::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)? else {
            return Ok(None);
        };
        let l = founder_listings(self.backend(), f.id);
        let rows = SummaryRow::find_by_statement(l).all(&self.db).await.map_err(repo_err)?;
        Ok(Some((to_founder(f), rows.into_iter().filter_map(SummaryRow::into_summary).collect())))
    }
}

/// A founder's live listings, most voted first (ties to the listing listed first): the founder's rows
/// of `listing_founders`, then each listing by its key. SQLite (no statistics) walked every live listing
/// by votes instead, probing each for the founder, to skip a sort of a few rows: 90–130 ms at 100k
/// listings, where this takes 0.2 ms. `+` keeps the status off its choice.
fn founder_listings(backend: DbBackend, founder_id: i64) -> Statement {
    let status = match backend {
        DbBackend::Sqlite => "+l.status",
        _ => "l.status",
    };
    let mut q = RawQuery::new(backend);
    q.sql(crate::listings::SUMMARY_SELECT)
        .sql(" FROM listing_founders lf JOIN listings l ON l.id = lf.listing_id WHERE ")
        .sql(status)
        .sql(" = 'live' AND lf.founder_id = ")
        .bind(founder_id)
        .sql(" ORDER BY l.votes_count DESC, l.id");
    q.build()
}

#[derive(Debug, FromQueryResult)]
struct AwardRow {
    week_start: chrono::NaiveDate,
    rank: i16,
    award_votes: i64,
    #[sea_orm(nested)]
    listing: SummaryRow,
}

#[async_trait]
impl AwardRepository for SeaOrmStore {
    async fn list_awards(
        &self,
        listing: Option<ListingId>,
        page: PageRequest,
    ) -> RepoResult<Paged<(Award, ListingSummary)>> {
        let filter = |r: &mut RawQuery| {
            r.sql(" FROM awards a JOIN listings l ON l.id = a.listing_id");
            if let Some(id) = listing {
                r.sql(" WHERE a.listing_id = ").bind(id.get());
            }
        };
        // A scan of every founder (a name matched anywhere, and the count): through the pool in a
        // search slot, as a filtered list of listings is.
        let _slot = self.search_slot().await?;
        let mut count = RawQuery::new(self.backend());
        count.sql("SELECT COUNT(*) AS n");
        filter(&mut count);
        let total = self.count(&count).await?;
        let mut sel = RawQuery::new(self.backend());
        sel.sql("SELECT a.week_start, a.rank, a.votes AS award_votes, l.id, l.slug, l.name, l.url, l.tagline, l.votes_count, l.status, l.launch_week");
        filter(&mut sel);
        sel.sql(" ORDER BY a.week_start DESC, a.rank ASC").page(page);
        let rows = AwardRow::find_by_statement(sel.build()).all(&self.db).await.map_err(repo_err)?;
        let items = rows
            .into_iter()
            .filter_map(|r| {
                let summary = r.listing.into_summary()?;
                let award = Award {
                    week: LaunchWeek::containing(r.week_start),
                    rank: AwardRank::parse(i64::from(r.rank)).ok()?,
                    listing_id: summary.id,
                    votes: r.award_votes,
                };
                Some((award, summary))
            })
            .collect();
        Ok(Paged::new(items, page, total))
    }
}

#[cfg(test)]
mod tests {
    use crate::plans::{plan_of, sqlite_db};

    /// A founder's listings start from the founder's rows (`founder_listings`), never from a walk of
    /// every live listing by votes.
    #[tokio::test]
    async fn sqlite_reads_a_founder_s_listings_from_the_founder_s_rows() {
        let (_t, db) = sqlite_db().await;
        let lines = plan_of(&db, super::founder_listings(sea_orm::DbBackend::Sqlite, 7)).await;
        let first = lines.first().map(String::as_str);
        assert_eq!(first, Some("SEARCH lf USING INDEX ix_listing_founders_founder (founder_id=?)"), "{lines:?}");
        assert!(!lines.iter().any(|l| l.ends_with("(status=?)")), "{lines:?}");
    }
}
