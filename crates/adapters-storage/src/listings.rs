//! The listing repository: create, read, and full-text search with filters and sorts.

use crate::entity::{listing_categories, listings};
use crate::inline::{FromSqliteRow, column, date_column, from_sqlite_row};
use crate::json::{faqs_from_json, faqs_to_json, list_from_json, list_to_json, socials_from_json, socials_to_json};
use crate::pipe::{FromPgRow, from_pg_row, pg_column};
use crate::sql::{RawQuery, columns, fts_query};
use crate::store::{SeaOrmStore, is_unique_violation, repo_err};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use domain::award::{Award, AwardRank};
use domain::category::ListingCategories;
use domain::ids::MilestoneId;
use domain::ids::{CategoryId, ListingId};
use domain::listing::{
    CommunityRating, CountryCode, DomainRating, FoundedYear, Lifecycle, Listing, ListingDetails, ListingProfile,
    ListingSearch, ListingStatus, ListingSummary, NewListing, Plan, RankMetric, Revenue, SearchSort, StatusFilter,
    UnlockedSections, ValueFilter,
};
use domain::paging::{COUNT_CAP, PageRequest, Paged};
use domain::ports::{ListingRepository, RepoError, RepoResult};
use domain::sections::{ListingUpdate, Milestone, StoredMilestone, Story};
use domain::slug::Slug;
use domain::week::LaunchWeek;
use sea_orm::{ActiveValue::Set, ConnectionTrait, DbBackend, EntityTrait, FromQueryResult, Statement};
use std::collections::HashMap;

/// Builds the row for a new listing. `id` is given for bulk imports and left to the database otherwise.
pub(crate) fn active_model(new: &NewListing, id: Option<i64>, slug: &str, now: DateTime<Utc>) -> listings::ActiveModel {
    let p = &new.profile;
    let lc = &new.lifecycle;
    let mut am = listings::ActiveModel {
        slug: Set(slug.to_owned()),
        name: Set(p.name.clone()),
        url: Set(p.url.clone()),
        domain: Set(p.domain.clone()),
        tagline: Set(p.tagline.clone()),
        short_description: Set(p.short_description.clone()),
        description: Set(p.description.clone()),
        stage: Set(p.stage.as_ref().map(|s| s.as_str().to_owned())),
        pricing_model: Set(p.pricing_model.clone()),
        pricing_summary: Set(p.pricing_summary.clone()),
        country: Set(p.country.as_ref().map(|c| c.as_str().to_owned())),
        city: Set(p.city.clone()),
        founded_year: Set(p.founded_year.map(FoundedYear::get)),
        contact_email: Set(p.contact_email.clone()),
        demo_video_url: Set(p.demo_video_url.clone()),
        logo_url: Set(p.logo_url.clone()),
        features: Set(list_to_json(&p.features)),
        usps: Set(list_to_json(&p.usps)),
        keywords: Set(list_to_json(&p.keywords)),
        tags: Set(list_to_json(&p.tags)),
        faqs: Set(faqs_to_json(&p.faqs)),
        socials: Set(socials_to_json(&p.socials)),
        headline: Set(p.headline.clone()),
        summary: Set(p.summary.clone()),
        seo_title: Set(p.seo_title.clone()),
        seo_description: Set(p.seo_description.clone()),
        not_found_on_website: Set(list_to_json(&p.not_found_on_website)),
        status: Set(lc.status().as_str().to_owned()),
        plan: Set(lc.plan().as_str().to_owned()),
        launch_week: Set(lc.launch_week().map(LaunchWeek::monday)),
        launched_at: Set(lc.launched_at().map(Into::into)),
        primary_category_id: Set(new.categories.as_ref().map(|c| c.primary().get())),
        unlocked_story: Set(new.unlocked.story),
        unlocked_milestones: Set(new.unlocked.milestones),
        unlocked_media: Set(new.unlocked.media),
        featured: Set(new.featured),
        verified: Set(new.verified),
        votes_count: Set(0),
        follows_count: Set(0),
        trending_score: Set(0.0),
        rating_avg: Set(None),
        rating_count: Set(0),
        domain_rating: Set(new.domain_rating.as_ref().map(|d| i16::from(d.value))),
        domain_rating_prev: Set(new.domain_rating.as_ref().and_then(|d| d.previous.map(i16::from))),
        domain_rating_source: Set(new.domain_rating.as_ref().map(|d| d.source.clone()).unwrap_or_default()),
        domain_rating_on: Set(new.domain_rating.as_ref().map(|d| d.measured_on)),
        revenue_monthly_cents: Set(new.revenue.as_ref().map(|r| r.monthly_cents)),
        revenue_source: Set(new.revenue.as_ref().map(|r| r.source.clone()).unwrap_or_default()),
        revenue_as_of: Set(new.revenue.as_ref().map(|r| r.as_of)),
        billboard_cents: Set(0),
        draft_id: Set(None),
        created_at: Set(new.created_at.into()),
        updated_at: Set(now.into()),
        ..Default::default()
    };
    if let Some(id) = id {
        am.id = Set(id);
    }
    am
}

/// One row per category of the listing; `ListingCategories` already holds distinct ids.
pub(crate) fn category_rows(listing_id: i64, new: &NewListing) -> Vec<listing_categories::ActiveModel> {
    let Some(cats) = &new.categories else { return Vec::new() };
    cats.all()
        .map(|c| (c, c == cats.primary()))
        .map(|(c, is_primary)| listing_categories::ActiveModel {
            listing_id: Set(listing_id),
            category_id: Set(c.get()),
            is_primary: Set(is_primary),
        })
        .collect()
}

/// The listing row's columns, named (see [`columns`]).
static LISTING_COLUMNS: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| columns::<listings::Entity>("l"));

/// Where a listing row stands: its status, plan, week and launch, and the status a hold keeps.
pub(crate) fn lifecycle_of(m: &listings::Model) -> Lifecycle {
    let status = ListingStatus::parse(&m.status).unwrap_or(ListingStatus::Draft);
    let plan = Plan::parse(&m.plan).unwrap_or(Plan::None);
    Lifecycle::from_parts(
        status,
        plan,
        m.launch_week.map(LaunchWeek::containing),
        m.launched_at.map(|t| t.with_timezone(&Utc)),
    )
    .holding(m.held_status.as_deref().and_then(ListingStatus::parse))
}

/// A listing from its row, the ids of its extra categories and its view total (kept apart from the
/// row, in `listing_view_totals`: migration 48).
pub(crate) fn to_listing(m: listings::Model, extras: Vec<CategoryId>, views: i64) -> Listing {
    let lifecycle = lifecycle_of(&m);
    let profile = ListingProfile {
        name: m.name,
        url: m.url,
        domain: m.domain,
        tagline: m.tagline,
        short_description: m.short_description,
        description: m.description,
        stage: m.stage.and_then(|s| Slug::parse(s).ok()),
        pricing_model: m.pricing_model,
        pricing_summary: m.pricing_summary,
        country: m.country.and_then(|c| CountryCode::parse(&c).ok()),
        city: m.city,
        founded_year: m.founded_year.and_then(|y| FoundedYear::parse(i64::from(y)).ok()),
        contact_email: m.contact_email,
        demo_video_url: m.demo_video_url,
        logo_url: m.logo_url,
        features: list_from_json(&m.features),
        usps: list_from_json(&m.usps),
        keywords: list_from_json(&m.keywords),
        tags: list_from_json(&m.tags),
        faqs: faqs_from_json(&m.faqs),
        socials: socials_from_json(&m.socials),
        headline: m.headline,
        summary: m.summary,
        seo_title: m.seo_title,
        seo_description: m.seo_description,
        not_found_on_website: list_from_json(&m.not_found_on_website),
    };
    Listing {
        id: ListingId::from_db(m.id),
        slug: Slug::from_db(m.slug),
        profile,
        lifecycle,
        categories: m.primary_category_id.map(|p| ListingCategories::from_db(CategoryId::from_db(p), extras)),
        unlocked: UnlockedSections {
            story: m.unlocked_story,
            milestones: m.unlocked_milestones,
            media: m.unlocked_media,
        },
        featured: m.featured,
        verified: m.verified,
        votes: m.votes_count,
        follows: m.follows_count,
        views,
        trending_score: m.trending_score,
        community_rating: m.rating_avg.map(|average| CommunityRating { average, count: m.rating_count.max(0) as u32 }),
        domain_rating: m.domain_rating.map(|v| DomainRating {
            value: v.clamp(0, 100) as u8,
            previous: m.domain_rating_prev.map(|p| p.clamp(0, 100) as u8),
            source: m.domain_rating_source.clone(),
            measured_on: m.domain_rating_on.unwrap_or_else(|| m.created_at.date_naive()),
        }),
        revenue: m.revenue_monthly_cents.map(|c| Revenue {
            monthly_cents: c,
            source: m.revenue_source.clone(),
            as_of: m.revenue_as_of.unwrap_or_else(|| m.created_at.date_naive()),
        }),
        created_at: m.created_at.with_timezone(&Utc),
        updated_at: m.updated_at.with_timezone(&Utc),
    }
}

/// The select list [`SummaryRow`] decodes, in its order (SQLite's inline readers decode by position):
/// a listing in a list, read from `listings l`.
pub(crate) const SUMMARY_SELECT: &str =
    "SELECT l.id, l.slug, l.name, l.url, l.tagline, l.votes_count, l.status, l.launch_week";

/// A summary as a week's tally carries it (migration 72), for the weekly board's live tallies.
const TALLY_SUMMARY_SELECT: &str =
    "SELECT v.listing_id AS id, v.slug, v.name, v.url, v.tagline, v.votes_count, 'live' AS status, v.launch_week";

#[derive(Debug, FromQueryResult)]
pub(crate) struct SummaryRow {
    id: i64,
    slug: String,
    name: String,
    url: String,
    tagline: String,
    votes_count: i64,
    status: String,
    launch_week: Option<chrono::NaiveDate>,
}

impl FromSqliteRow for SummaryRow {
    fn from_sqlite(row: &rusqlite::Row<'_>, at: &mut usize) -> rusqlite::Result<Self> {
        Ok(Self {
            id: column(row, at, "id")?,
            slug: column(row, at, "slug")?,
            name: column(row, at, "name")?,
            url: column(row, at, "url")?,
            tagline: column(row, at, "tagline")?,
            votes_count: column(row, at, "votes_count")?,
            status: column(row, at, "status")?,
            launch_week: date_column(row, at, "launch_week")?,
        })
    }
}

impl FromPgRow for SummaryRow {
    fn from_pg(row: &tokio_postgres::Row, at: &mut usize) -> Result<Self, String> {
        from_pg_row!(row, at, Self { id, slug, name, url, tagline, votes_count, status, launch_week })
    }
}

/// Reads a `listings::Model` with a row reader's macro (`from_sqlite_row!`, `from_pg_row!`), its fields
/// in the order `LISTING_COLUMNS` selects them.
macro_rules! listing_model {
    ($reader:ident, $row:ident, $at:ident) => {
        $reader!(
            $row,
            $at,
            Self {
                id,
                slug,
                name,
                url,
                domain,
                tagline,
                short_description,
                description,
                stage,
                pricing_model,
                pricing_summary,
                country,
                city,
                founded_year,
                contact_email,
                demo_video_url,
                logo_url,
                features,
                usps,
                keywords,
                tags,
                faqs,
                socials,
                headline,
                summary,
                seo_title,
                seo_description,
                not_found_on_website,
                status,
                plan,
                launch_week,
                launched_at,
                held_status,
                primary_category_id,
                unlocked_story,
                unlocked_milestones,
                unlocked_media,
                featured,
                verified,
                votes_count,
                follows_count,
                trending_score,
                rating_avg,
                rating_count,
                domain_rating,
                domain_rating_prev,
                domain_rating_source,
                domain_rating_on,
                revenue_monthly_cents,
                revenue_source,
                revenue_as_of,
                billboard_cents,
                draft_id,
                created_at,
                updated_at,
            }
        )
    };
}

impl FromSqliteRow for listings::Model {
    fn from_sqlite(row: &rusqlite::Row<'_>, at: &mut usize) -> rusqlite::Result<Self> {
        listing_model!(from_sqlite_row, row, at)
    }
}

impl FromPgRow for listings::Model {
    fn from_pg(row: &tokio_postgres::Row, at: &mut usize) -> Result<Self, String> {
        listing_model!(from_pg_row, row, at)
    }
}

/// The select-list expression of a listing's view total (`l` is the listing).
const VIEWS_SQL: &str = "(SELECT t.views FROM listing_view_totals t WHERE t.listing_id = l.id)";

/// The select-list expression of a listing's extra categories' ids, comma-separated in id order
/// (`l` is the listing).
fn extra_categories_sql(backend: DbBackend) -> &'static str {
    match backend {
        DbBackend::Postgres => {
            "(SELECT string_agg(lc.category_id::text, ',' ORDER BY lc.category_id) FROM listing_categories lc \
             WHERE lc.listing_id = l.id AND NOT lc.is_primary)"
        }
        _ => {
            "(SELECT group_concat(category_id) FROM (SELECT lc.category_id FROM listing_categories lc \
             WHERE lc.listing_id = l.id AND NOT lc.is_primary ORDER BY lc.category_id))"
        }
    }
}

fn parse_extras(ids: Option<String>) -> Vec<CategoryId> {
    ids.unwrap_or_default().split(',').filter_map(|id| id.trim().parse::<i64>().ok()).map(CategoryId::from_db).collect()
}

/// A stored milestone, or none when the row no longer passes the domain's rules.
fn to_milestone(id: i64, date: &str, title: String, description: String, url: String) -> Option<StoredMilestone> {
    let milestone = Milestone::parse(date, title, Some(description), Some(url).filter(|u| !u.is_empty())).ok()?;
    Some(StoredMilestone { id: MilestoneId::from_db(id), milestone })
}

fn to_award(week_start: chrono::NaiveDate, rank: i64, listing_id: i64, votes: i64) -> Option<Award> {
    Some(Award {
        week: LaunchWeek::containing(week_start),
        rank: AwardRank::parse(rank).ok()?,
        listing_id: ListingId::from_db(listing_id),
        votes,
    })
}

fn to_story(sections: &str) -> Option<Story> {
    let sections = serde_json::from_str::<Vec<(String, String)>>(sections).ok()?;
    Story::parse("story", sections, Story::MAX_SECTION).ok()
}

/// A timestamp as a JSON aggregate carries it: RFC 3339 from PostgreSQL, the stored text from SQLite
/// (`2026-11-24 10:00:00.123+00:00`).
fn json_time(t: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(t)
        .or_else(|_| DateTime::parse_from_str(t, "%Y-%m-%d %H:%M:%S%.f%:z"))
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// A kept JSON array's rows (absent: none; an empty set is `[]` on SQLite and NULL on PostgreSQL). A
/// row that does not parse is a store fault, not an empty list.
fn from_json_rows<T: serde::de::DeserializeOwned>(json: Option<String>, what: &str) -> RepoResult<Vec<T>> {
    match json {
        None => Ok(Vec::new()),
        Some(j) => serde_json::from_str(&j).map_err(|e| RepoError::Unexpected(format!("{what}: {e}").into())),
    }
}

/// A listing row and its extra categories' ids, comma-separated.
#[derive(Debug, FromQueryResult)]
struct ListingRow {
    #[sea_orm(nested)]
    listing: listings::Model,
    extra_category_ids: Option<String>,
    views: Option<i64>,
}

/// A founder and their title at one listing.
#[derive(Debug, FromQueryResult)]
struct FounderWithTitle {
    #[sea_orm(nested)]
    founder: crate::entity::founders::Model,
    listing_title: String,
}

#[derive(Debug, FromQueryResult)]
/// A summary with one number beside it (votes in a week, or a board's metric).
struct WeeklyRow {
    #[sea_orm(nested)]
    listing: SummaryRow,
    week_votes: i64,
}

impl FromSqliteRow for WeeklyRow {
    fn from_sqlite(row: &rusqlite::Row<'_>, at: &mut usize) -> rusqlite::Result<Self> {
        Ok(Self { listing: SummaryRow::from_sqlite(row, at)?, week_votes: column(row, at, "week_votes")? })
    }
}

#[derive(Debug, FromQueryResult)]
/// An alternative's summary and whether its listing's owner approved it (1) or it shares the category (0).
struct AlternativeRow {
    #[sea_orm(nested)]
    listing: SummaryRow,
    approved: i64,
}

impl FromSqliteRow for AlternativeRow {
    fn from_sqlite(row: &rusqlite::Row<'_>, at: &mut usize) -> rusqlite::Result<Self> {
        Ok(Self { listing: SummaryRow::from_sqlite(row, at)?, approved: column(row, at, "approved")? })
    }
}

impl FromPgRow for AlternativeRow {
    fn from_pg(row: &tokio_postgres::Row, at: &mut usize) -> Result<Self, String> {
        Ok(Self { listing: SummaryRow::from_pg(row, at)?, approved: pg_column(row, at, "approved")? })
    }
}

/// A page's row with the read's total beside it (`page_total`, a scalar subquery the database runs
/// once per statement): a page and its count in one statement, one hand-off to the database instead of
/// two. An empty page carries no total, so the caller counts apart then.
#[derive(Debug)]
struct Counted<R> {
    row: R,
    total: Option<i64>,
}

impl<R: FromQueryResult> FromQueryResult for Counted<R> {
    fn from_query_result(res: &sea_orm::QueryResult, pre: &str) -> Result<Self, sea_orm::DbErr> {
        Ok(Self { row: R::from_query_result(res, pre)?, total: res.try_get(pre, "page_total")? })
    }
}

impl FromPgRow for WeeklyRow {
    fn from_pg(row: &tokio_postgres::Row, at: &mut usize) -> Result<Self, String> {
        Ok(Self { listing: SummaryRow::from_pg(row, at)?, week_votes: pg_column(row, at, "week_votes")? })
    }
}

impl<R: FromPgRow> FromPgRow for Counted<R> {
    fn from_pg(row: &tokio_postgres::Row, at: &mut usize) -> Result<Self, String> {
        Ok(Self { row: R::from_pg(row, at)?, total: pg_column(row, at, "page_total")? })
    }
}

impl<R: FromSqliteRow> FromSqliteRow for Counted<R> {
    fn from_sqlite(row: &rusqlite::Row<'_>, at: &mut usize) -> rusqlite::Result<Self> {
        Ok(Self { row: R::from_sqlite(row, at)?, total: column(row, at, "page_total")? })
    }
}

/// A ranked search candidate: its id and score.
#[derive(Debug, FromQueryResult)]
struct RankedRow {
    id: i64,
    r: f64,
}

/// Ranked on SQLite only.
impl FromPgRow for RankedRow {}

impl FromSqliteRow for RankedRow {
    fn from_sqlite(row: &rusqlite::Row<'_>, at: &mut usize) -> rusqlite::Result<Self> {
        crate::inline::from_sqlite_row!(row, at, Self { id, r })
    }
}

impl SummaryRow {
    pub(crate) fn into_summary(self) -> Option<ListingSummary> {
        Some(ListingSummary {
            id: ListingId::from_db(self.id),
            slug: Slug::from_db(self.slug),
            name: self.name,
            url: self.url,
            tagline: self.tagline,
            votes: self.votes_count,
            status: ListingStatus::parse(&self.status)?,
            launch_week: self.launch_week.map(LaunchWeek::containing),
        })
    }
}

/// The FTS5 query for `fts` among listings of the wanted status (the index holds each listing's status).
fn sqlite_match(fts: &str, status: StatusFilter) -> String {
    format!("({fts}) AND {}", sqlite_status_match(status))
}

/// The FTS5 term for the listings of the status a filter selects, in the index's status column.
fn sqlite_status_match(status: StatusFilter) -> String {
    format!("status:\"{}\"", status_of(status).as_str())
}

/// SQLite: ` AND` one of the categories `tree` (never empty), in the terms of the FTS5 query: the
/// index holds a token per category a listing is linked to (migration 61). Matched with the words,
/// FTS5 merges the word's doclist with the tree's tokens': `workflow` (42 954 matches at 100k demo
/// listings) within `api-tools` counted in 3 ms, where checking each match against the list of the
/// category's listings took 16–20 ms (and as a term of each match's row lookup, before that check,
/// 92 s).
fn sqlite_tree_match(tree: &[i64]) -> String {
    let mark = migration::CATEGORY_MARK;
    let tokens: Vec<String> = tree.iter().map(|id| format!("\"{mark}{id}\"")).collect();
    // In their own column only: a maker could write such a token into a tagline.
    format!(" AND category_tokens:({})", tokens.join(" OR "))
}

/// The stage, pricing model and country a search asks for, each as a store compares it (the pricing
/// model lowercased) with its place in that order (0, 1, 2): the order of [`VALUE_FIELDS`],
/// `migration::SQLITE_VALUE_MARKS` and `migration::SEARCH_FACET_PREFIXES`.
fn values_asked(s: &ListingSearch) -> Vec<(usize, String)> {
    let asked = [
        s.stage.as_ref().map(ValueFilter::Stage),
        s.pricing_model.as_ref().map(ValueFilter::PricingModel),
        s.country.as_ref().map(ValueFilter::Country),
    ];
    asked.into_iter().flatten().map(value_compared).collect()
}

/// A value filter's place among [`VALUE_FIELDS`] and its value as a store compares it (the pricing
/// model lowercased, as the kept counts and the search rows hold it).
fn value_compared(f: ValueFilter<'_>) -> (usize, String) {
    match f {
        ValueFilter::Stage(v) => (0, v.as_str().to_owned()),
        ValueFilter::PricingModel(v) => (1, v.as_str().to_lowercase()),
        ValueFilter::Country(v) => (2, v.as_str().to_owned()),
    }
}

/// The fields a search filters by value, as `listing_value_counts` names them (migration 58), in the
/// order of [`values_asked`].
const VALUE_FIELDS: [&str; 3] = ["stage", "pricing_model", "country"];

/// Writes the number of listings in `status` with `value` in field `VALUE_FIELDS[field]`, kept in
/// `listing_value_counts` by triggers (migration 58); 0 where none has it.
fn kept_value_count(q: &mut RawQuery, status: &'static str, field: usize, value: String) {
    q.sql("COALESCE((SELECT k.listings FROM listing_value_counts k WHERE k.status = ")
        .constant(status)
        .sql(" AND k.field = ")
        .constant(VALUE_FIELDS[field])
        .sql(" AND k.value = ")
        .bind(value)
        .sql("), 0)");
}

/// SQLite: ` AND` the search's stage, pricing model (lowercased) and country, in the terms of the FTS5
/// query: the index holds a token per value a listing has (migration 65), in their own column (a maker
/// could write such a token into a tagline). Empty without a value.
fn sqlite_values_match(s: &ListingSearch) -> String {
    let token = |i: usize, v: &str| migration::sqlite_value_token(migration::SQLITE_VALUE_MARKS[i], v);
    values_asked(s).iter().map(|(i, v)| format!(" AND value_tokens:\"{}\"", token(*i, v))).collect()
}

/// bm25 weights per indexed column: name, tagline, short description, description, features, keywords,
/// tags, status, categories and values (0: filters, not signals).
const BM25: &str = "bm25(listings_fts, 10.0, 5.0, 3.0, 1.0, 2.0, 4.0, 4.0, 0.0, 0.0, 0.0)";

/// [`BM25`] as the inline readers compute it, with each term's listing count read from
/// `listing_terms` instead of counted in the index (see [`crate::inline::LISTING_RANK`]), and each
/// row's length from its `listings_fts_docsize` record, joined by [`SIZES_JOIN`]. Not for a query with
/// a prefix phrase.
const COUNTED_BM25: &str = "listing_rank(listings_fts, d.sz, 10.0, 5.0, 3.0, 1.0, 2.0, 4.0, 4.0, 0.0, 0.0, 0.0)";

/// Each ranked row's record of its column lengths, for [`COUNTED_BM25`]. FTS5 would look each up
/// with a statement of its own (`xColumnSize`): 30 % of the server's CPU under a word on 2 013
/// listings (1 000 ranked rows, perf), where the join is one index step.
const SIZES_JOIN: &str = " CROSS JOIN listings_fts_docsize d ON d.id = listings_fts.rowid";

/// The statement for the pool, which ranks with bm25 itself (see [`SeaOrmStore::short_read_or`]).
fn ranked_by_bm25(stmt: Statement) -> Statement {
    Statement { sql: stmt.sql.replace(COUNTED_BM25, BM25).replace(SIZES_JOIN, ""), ..stmt }
}

/// The most completions of a typed last word a SQLite search spells out (more: a prefix query).
const COMPLETIONS: usize = 8;

/// Terms a refresh of `listing_terms` reads and compares at a time (`refresh_search_terms`).
const TERMS_CHUNK: i64 = 5_000;

/// Matches a text search ranks at least: the first this many the index hands out (or as deep as
/// the page asked for). A word on a third of the directory costs 1 000 scores, not 33 000
/// (docs/DECISIONS.md). PostgreSQL's `listing_text_search` weighs its scans for this many (migration
/// 53), so a change of it is a migration there.
const RANKED_CANDIDATES: i64 = migration::TEXT_SEARCH_CANDIDATES;

/// A page of today's launches (launched since `since`, today's midnight in UTC), most voted first: the
/// top of today's run of `(status, the launch's UTC day, votes_count)` (migration 55), whatever the
/// day's launches and their votes. On a Monday every launch of the week went live at midnight; before,
/// SQLite looked up and sorted every one of them for each page (31–35 ms at 100k demo listings), and
/// PostgreSQL walked all live listings by votes until it met ten of today's (1.36 s when they had the
/// fewest votes). The launch time is still checked (`+` keeps it off SQLite's choice of index): the
/// day only narrows, so the page is the one the range would give, launches after today being none.
fn today_page(backend: DbBackend, status: StatusFilter, since: DateTime<Utc>, page: PageRequest) -> Statement {
    // The day as the index writes it (the statement reads `listings` alone, so the column needs no alias).
    let (day, time) = match backend {
        DbBackend::Sqlite => (migration::SQLITE_LAUNCH_DAY, " AND +l.launched_at >= "),
        _ => (migration::POSTGRES_LAUNCH_DAY, " AND l.launched_at >= "),
    };
    let mut q = RawQuery::new(backend);
    q.sql(SUMMARY_SELECT)
        .sql(" FROM listings l WHERE l.status = ")
        .constant(status_of(status).as_str())
        .sql(" AND ")
        .sql(day)
        .sql(" = ")
        .date_constant(since.date_naive())
        .sql(time)
        .bind(chrono::DateTime::<chrono::FixedOffset>::from(since))
        .sql(" ORDER BY l.votes_count DESC, l.id DESC")
        .page(page);
    q.build()
}

/// The offset from which a page of the weekly board on PostgreSQL reads its tallies' keys before their
/// rows ([`tallies_first`]). Nearer the top one walk is a little cheaper (no materialized page); from
/// here the rows it reads for the skipped tallies cost more than that. (Measured when the page joined
/// `listings`, before migration 72: 33 against 36 µs for the first page on SQLite at 100k, and 2.6
/// against 0.11 ms for the 101st.)
const TALLIES_FIRST_FROM: u64 = 100;

/// The column a board ranks by (names are ours, never input).
fn board_column(metric: RankMetric) -> &'static str {
    match metric {
        RankMetric::Votes => "votes_count",
        RankMetric::BillboardCents => "billboard_cents",
        RankMetric::DomainRating => "domain_rating",
        RankMetric::RevenueMonthlyCents => "revenue_monthly_cents",
    }
}

/// A board's total, kept per column in `board_counts` (triggers, migration 26).
fn kept_board_total(q: &mut RawQuery, col: &'static str) {
    q.sql("COALESCE((SELECT k.listings FROM board_counts k WHERE k.metric = ").constant(col).sql("), 0)");
}

/// A page of a ranked board: live listings with the metric above zero, the highest first and ties to
/// the listing listed first (`col DESC, id ASC`), with the kept total beside each row. Each board has
/// an index in that order (migration 56), so the page is its first rows, ties included; by the column
/// alone, a run of equal values was read whole and sorted (130 ms on PostgreSQL for the domain-rating
/// board at 100k). SQLite would take the status index and sort every live listing for the three boards
/// whose index does not lead with the status: `+` keeps the status off its choice.
fn ranked_page(backend: DbBackend, metric: RankMetric, page: PageRequest) -> Statement {
    let col = board_column(metric);
    let status = match (backend, metric) {
        (DbBackend::Sqlite, m) if m != RankMetric::Votes => "+l.status",
        _ => "l.status",
    };
    let mut q = RawQuery::new(backend);
    q.sql(SUMMARY_SELECT).sql(", ").sql(&format!("CAST(l.{col} AS BIGINT) AS week_votes, "));
    kept_board_total(&mut q, col);
    q.sql(&format!(" AS page_total FROM listings l WHERE {status} = 'live' AND l.{col} > 0"))
        .sql(&format!(" ORDER BY l.{col} DESC, l.id ASC"))
        .page(page);
    q.build()
}

/// Whether a page of the weekly board reads its tallies' keys before their rows: on PostgreSQL from
/// [`TALLIES_FIRST_FROM`] on, where its index does not carry the summary and one walk read the row of
/// every tally it skipped. SQLite's index carries the summary (migration 72), so one walk reads the
/// index alone however deep the page.
fn tallies_first(backend: DbBackend, page: PageRequest) -> bool {
    backend == DbBackend::Postgres && page.offset() >= TALLIES_FIRST_FROM
}

/// The week's number of live listings with votes, kept in `week_counts` (triggers, migration 25).
fn kept_week_total(q: &mut RawQuery, week: LaunchWeek) {
    q.sql("COALESCE((SELECT k.listings FROM week_counts k WHERE k.week_start = ")
        .date_constant(week.monday())
        .sql("), 0)");
}

/// A page of the community-weekly board: one indexed range of the week's tallies of live listings
/// (`live` kept on the tally by triggers, migration 20, and the rank index of migration 27), with the
/// kept total: no count at read time. Each tally carries its listing's summary (triggers, migration
/// 72), so the page never reads `listings`; its status is `live`, as the range is. No parameters at
/// all: one plan on PostgreSQL (see `RawQuery::count_of_rows`).
///
/// On PostgreSQL, from [`TALLIES_FIRST_FROM`] on, the page's keys come from the rank index alone and
/// then their rows ([`tallies_first`]). That join's rows come in no set order: the caller puts them in
/// order. The page of tallies is the same text either way.
fn weekly_page(backend: DbBackend, week: LaunchWeek, page: PageRequest) -> Statement {
    let tallies_first = tallies_first(backend, page);
    let mut q = RawQuery::new(backend);
    q.sql(TALLY_SUMMARY_SELECT).sql(", v.votes AS week_votes, ");
    kept_week_total(&mut q, week);
    q.sql(if tallies_first {
        " AS page_total FROM (SELECT v.week_start, v.listing_id FROM vote_tallies v"
    } else {
        " AS page_total FROM vote_tallies v"
    })
    .sql(" WHERE v.week_start = ")
    .date_constant(week.monday())
    .sql(" AND v.live = TRUE AND v.votes > 0 ORDER BY v.votes DESC, v.listing_id ASC")
    .page(page);
    if tallies_first {
        q.sql(") p JOIN vote_tallies v ON v.week_start = p.week_start AND v.listing_id = p.listing_id");
    }
    q.build()
}

/// A listing's alternatives in one statement, one hand-off to the database: the approved alternatives
/// and the same category's most voted, each its own bounded range of `n` (the list is cut and put in
/// order by the caller). Two statements cost the listing page, which shows them, a second hand-off.
///
/// Each part is ordered `votes_count DESC, id`, the order of `ix_listings_board_votes` (migration 56),
/// and SQLite (no statistics) took that index for both: it walked every live listing by votes and
/// probed each against the listing's alternatives or category until it had `n` (17 ms a statement at
/// 100k, the listing page 20 times slower). The approved ones are the listing's few `alternatives`
/// rows, so `+` keeps the status off SQLite's choice; the category's are the top of
/// `ix_listings_category_status_votes`, so `+` keeps the id's part of the order off it.
fn alternatives_of(backend: DbBackend, id: i64, n: i64) -> Statement {
    let (status, tie) = match backend {
        DbBackend::Sqlite => ("+l.status", "+l.id"),
        _ => ("l.status", "l.id"),
    };
    let mut q = RawQuery::new(backend);
    q.sql("SELECT * FROM (")
        .sql(SUMMARY_SELECT)
        .sql(", CAST(1 AS BIGINT) AS approved FROM alternatives a JOIN listings l ON l.id = a.alternative_id WHERE a.approved AND ")
        .sql(status)
        .sql(" = 'live' AND a.listing_id = ")
        .bind(id)
        .sql(" ORDER BY l.votes_count DESC, l.id LIMIT ")
        .count_of_rows(n)
        .sql(") approved_first UNION ALL SELECT * FROM (")
        .sql(SUMMARY_SELECT)
        .sql(", CAST(0 AS BIGINT) AS approved FROM listings l WHERE l.status = 'live' AND l.primary_category_id = (SELECT s.primary_category_id FROM listings s WHERE s.id = ")
        .bind(id)
        .sql(") AND l.id <> ")
        .bind(id)
        // NOT EXISTS, a probe of the key per candidate: NOT IN built a temporary table each time.
        .sql(" AND NOT EXISTS (SELECT 1 FROM alternatives a WHERE a.approved AND a.listing_id = ")
        .bind(id)
        .sql(" AND a.alternative_id = l.id) ORDER BY l.votes_count DESC, ")
        .sql(tie)
        .sql(" LIMIT ")
        .count_of_rows(n)
        .sql(") same_category");
    q.build()
}

/// `since` when it is today's midnight in UTC (the home page's "today"), for [`today_page`]: a day's
/// run holds every launch since then only while no launch is dated after today.
fn today_midnight(since: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let today = Utc::now().date_naive();
    (since == today.and_time(chrono::NaiveTime::MIN).and_utc()).then_some(since)
}

/// Writes the call `listing_text_search(tsq, status, the cap + 1, candidates, deep)` (PostgreSQL,
/// migration 54): the matches of `tsq` ranked, `candidates` of them (none: the count alone), and
/// their number up to the cap.
fn pg_text_search_call(q: &mut RawQuery, tsq: &str, status: StatusFilter, candidates: i64, deep: i64) {
    let int = |n: i64| i32::try_from(n).unwrap_or(i32::MAX);
    q.sql("listing_text_search(");
    crate::sql::pg_tsquery(q, tsq);
    q.sql(", ")
        .bind(status_of(status).as_str())
        .sql(", ")
        .bind(COUNT_CAP as i32 + 1)
        .sql(", ")
        .bind(int(candidates))
        .sql(", ")
        .bind(int(deep))
        .sql(")");
}

/// The listing status a status filter selects.
fn status_of(f: StatusFilter) -> ListingStatus {
    match f {
        StatusFilter::Live => ListingStatus::Live,
        StatusFilter::Upcoming => ListingStatus::Scheduled,
    }
}

/// A SQLite full-text query and what the index's term counts say of it
/// ([`SeaOrmStore::sqlite_fts_completed`]).
struct FtsCompleted {
    /// The FTS5 query.
    query: String,
    /// Whether the last word stayed a prefix query (more completions than [`COMPLETIONS`]).
    prefix: bool,
    /// How many listings in the status match at least: for one word, the most listings any of its
    /// terms is on (counts of this moment: the kept ones only while nothing changed since they were
    /// counted), less the listings of every other status. Zero for several words.
    at_least: u64,
}

/// How a list checks that a listing is in the category filter's tree (see [`probe_the_tree`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TreeCheck {
    /// `l.id IN (the tree's links)`: the list of the tree's listings, built once per statement.
    List,
    /// `EXISTS (a link of l to the tree)`: one probe of `(listing_id, category_id)` per listing read.
    /// On PostgreSQL fenced with `OFFSET 0`, which keeps it a probe: without it the planner turns
    /// the `EXISTS` into the same hashed semi-join as the list (a million listings: 981 rows of a
    /// word against `developer-tools`' 229 294 links, 104 ms hashed, 5.4 ms probed).
    Probe,
}

/// Writes ` AND` the condition that the listing `member` names is linked to one of the categories
/// `tree`, checked as `check` says.
fn in_tree(q: &mut RawQuery, member: &str, tree: &[i64], check: TreeCheck) {
    match check {
        TreeCheck::List => {
            q.sql(" AND ")
                .sql(member)
                .sql(" IN (SELECT lc.listing_id FROM listing_categories lc WHERE lc.category_id IN (");
        }
        TreeCheck::Probe => {
            q.sql(" AND EXISTS (SELECT 1 FROM listing_categories lc WHERE lc.listing_id = ")
                .sql(member)
                .sql(" AND lc.category_id IN (");
        }
    }
    // The ids as constants (ours, from the database), so PostgreSQL plans for these categories' rows:
    // behind a join on the slug it could not tell how many, guessed half the directory and read all of
    // `listing_categories` for each page and count (45–80 ms at 100k).
    q.sql(&tree.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")).sql(")");
    if check == TreeCheck::Probe && q.backend() == DbBackend::Postgres {
        q.sql(" OFFSET 0");
    }
    q.sql(")");
}

/// The ORDER BY of a list in `sort` (a search by relevance without words, or ranked after them, too);
/// `with_fts` says whether the list has words.
fn search_order(sort: SearchSort, with_fts: bool, status: StatusFilter) -> &'static str {
    match (sort, with_fts, status) {
        // Upcoming launches have no votes yet: soonest week first.
        (SearchSort::Relevance, false, StatusFilter::Upcoming) => " ORDER BY l.launch_week ASC, l.id ASC",
        (SearchSort::Relevance | SearchSort::Votes, _, _) => " ORDER BY l.votes_count DESC, l.id DESC",
        (SearchSort::Newest, _, StatusFilter::Live) => " ORDER BY l.launched_at DESC, l.id DESC",
        (SearchSort::Newest, _, StatusFilter::Upcoming) => " ORDER BY l.created_at DESC, l.id DESC",
        (SearchSort::Trending, _, _) => " ORDER BY l.trending_score DESC, l.id DESC",
        // `t` is joined for this order (`search_from_where`): its `(views, listing_id)` index.
        (SearchSort::MostViewed, _, _) => " ORDER BY t.views DESC, t.listing_id DESC",
        (SearchSort::MostFollowed, _, _) => " ORDER BY l.follows_count DESC, l.id DESC",
    }
}

/// SQLite: the FTS5 query of a search's words `fts` among the listings of its status and, with a
/// category filter, in the category's tree (`tree`), with its stage, pricing model and country.
fn sqlite_words_match(fts: &str, s: &ListingSearch, tree: &[i64]) -> String {
    let mut matched = sqlite_match(fts, s.status);
    matched.push_str(&sqlite_filters_match(s, tree));
    matched
}

/// SQLite: the FTS5 query of a search without words, among the listings of its status, in the
/// category's tree (`tree`) and with its stage, pricing model and country
/// ([`facets_in_sqlite_index`]).
fn sqlite_facets_match(s: &ListingSearch, tree: &[i64]) -> String {
    let mut matched = sqlite_status_match(s.status);
    matched.push_str(&sqlite_filters_match(s, tree));
    matched
}

/// SQLite: ` AND` the search's category tree and values, in the terms of the FTS5 query.
fn sqlite_filters_match(s: &ListingSearch, tree: &[i64]) -> String {
    let mut matched = String::new();
    if s.category.is_some() {
        matched.push_str(&sqlite_tree_match(tree));
    }
    matched.push_str(&sqlite_values_match(s));
    matched
}

/// How SQLite matches a search's words (see [`SeaOrmStore::search_from_where`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WordsMatch {
    /// The full-text index drives: each match's listing row is read (and, for an order, all of them
    /// sorted).
    Drive,
    /// The matches' ids as a list, built once per statement, that a walk of the order's index checks
    /// each listing against (see [`walk_the_order`]).
    List,
}

/// SQLite: whether a page of words in an order of `listings`' indexes (newest, votes, trending,
/// followers, views) walks that index checking each listing against the list of the matches, rather
/// than reading and sorting every match: `workflow` (33 000 live matches of 78 000 at 100k demo
/// listings) newest first took 112 ms driven by the index of words and 20 ms as a list, `larkhub` (86)
/// 0.9 and 4.5 ms. A page ending at row `end` walks about `end × live / matches` listings, and a match's
/// row read for the sort costs several steps of that walk: walk when the walk is no longer than the
/// matches (`matches² ≥ end × live`), which leans to reading where the two are close.
fn walk_the_order(matches: u64, live: u64, end: u64) -> bool {
    matches > 0 && matches.saturating_mul(matches) >= end.saturating_mul(live)
}

/// A probe costs about ten steps of the list: see [`probe_the_tree`].
const PROBE_FACTOR: u64 = 10;

/// SQLite: whether a page of a category's live listings, walked in an index's order, probes each
/// listing it reads for a link to the tree rather than listing the tree's links first. A page ending at
/// row `end` walks about `end × live / tree` listings to find `end` of the tree's, each a probe (3–5 µs
/// at 100k listings); the list costs a step per link (about 0.4 µs), and a tree has about as many links
/// as live listings: probe when `end × live / tree × PROBE_FACTOR ≤ tree`. `developer-tools` (17 085
/// live listings of 78 000, 22 800 links) built its list in 7–14 ms and probed 92 listings in 0.3–0.5;
/// `api-tools` (3 707) lists in about 1 ms, and a category of a few dozen listings would probe most live
/// listings, so both list.
fn probe_the_tree(tree: u64, live: u64, end: u64) -> bool {
    tree > 0 && tree.saturating_mul(tree) >= PROBE_FACTOR.saturating_mul(end).saturating_mul(live)
}

/// One word (the last typed word always a prefix on PostgreSQL) within a category, and no other
/// filter: on PostgreSQL its matches are the word's kept rows (migration 54) that the category holds.
fn one_word_in_category(s: &ListingSearch) -> bool {
    let words = crate::sql::search_words(s.q.as_ref().map(|t| t.as_str()).unwrap_or_default());
    words.len() == 1 && s.category.is_some() && text_in_category(s)
}

/// True when a search has words and no filter but its status, so SQLite can count and rank inside the
/// full-text index and read only the page's rows.
fn text_only(s: &ListingSearch) -> bool {
    s.has_words()
        && s.category.is_none()
        && s.stage.is_none()
        && s.country.is_none()
        && s.pricing_model.is_none()
        && s.launch_week.is_none()
        && s.launched_since.is_none()
        && s.domain.is_none()
}

/// PostgreSQL: the elements of a search row's `facets` (migrations 64 and 66,
/// `migration::search_facets`) that a search's stage, pricing model and country ask for, and its
/// status where that measured faster than checking the status on each row (100k listings, the same
/// counts one after the other): for upcoming listings with a value or a category (12 000 of 90 000 rows; without it
/// PostgreSQL read every row to count `q=a&category=developer-tools&status=upcoming`, 90 ms); for live
/// ones, within a category, where it keeps a letter's prefix out of the bitmaps (`q=a` in
/// `developer-tools`: 60–84 ms with the words' bitmap, 17 without) for a millisecond or two more on a
/// rare word. Elsewhere live is most rows, and its list ANDed in cost more than it saved. Words
/// alone ask for nothing here: their path stays as it was measured before migration 66.
fn facets_of(s: &ListingSearch) -> Vec<String> {
    let values: Vec<String> =
        values_asked(s).into_iter().map(|(i, v)| format!("{}{v}", migration::SEARCH_FACET_PREFIXES[i])).collect();
    let upcoming = s.status == StatusFilter::Upcoming && !values.is_empty();
    let status = (upcoming || s.category.is_some())
        .then(|| format!("{}{}", migration::SEARCH_STATUS_PREFIX, status_of(s.status).as_str()));
    values.into_iter().chain(status).collect()
}

/// PostgreSQL: writes ` AND` the condition that the search row `ls` holds every one of `facets`
/// (nothing for none).
fn in_facets(q: &mut RawQuery, facets: &[String]) {
    if facets.is_empty() {
        return;
    }
    q.sql(" AND ls.facets @> ARRAY[");
    for (i, f) in facets.iter().enumerate() {
        q.sql(if i == 0 { "" } else { ", " }).bind(f.clone());
    }
    q.sql("]::text[]");
}

/// PostgreSQL: writes ` AND` the condition that the search row `ls` holds one of the categories
/// `tree` (migration 66: an element per link, `k:` and the category's id), which the same GIN scan as
/// [`in_facets`] answers. Checked against the list of the tree's links instead, a count of words with
/// a stage in `developer-tools` (six categories, 10 600 links at 100k listings) hashed the list for
/// every count and page (34 ms).
fn in_categories(q: &mut RawQuery, tree: &[i64]) {
    q.sql(" AND ls.facets && ARRAY[");
    for (i, id) in tree.iter().enumerate() {
        // Constants (ours, from the database), so PostgreSQL estimates these elements' rows.
        q.sql(if i == 0 { "'" } else { ", '" }).sql(migration::SEARCH_CATEGORY_PREFIX).sql(&id.to_string()).sql("'");
    }
    q.sql("]::text[]");
}

/// PostgreSQL: how the search rows of words with values or a category are found
/// ([`scan_the_facets`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowsScan {
    /// The words' index and the facets' intersected, as the planner chooses (two bitmaps ANDed).
    Both,
    /// The facets' rows alone, the words checked on each row read: the words' condition stands
    /// outside a fenced (`OFFSET 0`) scan of the facets, so their index is not read. Both scans hand
    /// out the rows in the table's order (a bitmap's heap scan or a sequential one, from block 0:
    /// `synchronize_seqscans` off), so they find the same first rows and the same count.
    Facets,
}

/// A row of the facets' scan (a heap row read and its words checked) costs about as much as this
/// many postings of the words' index gathered into their bitmap (see [`scan_the_facets`]).
const ROW_POSTINGS: u64 = 10;

/// PostgreSQL: whether words with values (or a category) are found by scanning the facets' rows
/// alone ([`RowsScan::Facets`]) rather than intersecting the two indexes: when the words' postings
/// (`postings`, the kept listing counts of every index word they cover, summed) cost more than the
/// rows that scan reads to find `need` matches. The words' share of the `live` listings in the
/// search's status is taken from `least` (the fewest postings of any one word), as if the words
/// and the values were independent, so the scan reads about `need × live / least` of the
/// `facet_rows` the values (or the category) have, and all of them at most. `co` with `US` at a
/// million listings: `co:*`'s 627 711 postings (467 749 listings) gathered into a bitmap before the
/// 45 029 of the US were ANDed with it (135 ms of the count's 218); `kanban` (20 368) with `free`
/// (129 782) stays with the two indexes, as the scan would read every free listing.
fn scan_the_facets(postings: u64, least: u64, facet_rows: u64, live: u64, need: u64) -> bool {
    if postings == 0 || least == 0 || facet_rows == 0 {
        return false;
    }
    let read = need.saturating_mul(live).checked_div(least).unwrap_or(0).max(need).min(facet_rows);
    postings >= ROW_POSTINGS.saturating_mul(read)
}

/// PostgreSQL: what the kept counts say of a search of words with values or a category
/// ([`SeaOrmStore::postgres_rows_kept`]), read once for its count and its page; all zero when they
/// say nothing (the intersection, as before).
#[derive(Debug, Clone, Copy, Default)]
struct RowsKept {
    postings: u64,
    least: u64,
    facet_rows: u64,
    live: u64,
}

impl RowsKept {
    /// How the search rows are found to hand out `need` of them ([`scan_the_facets`]).
    fn scan(&self, need: u64) -> RowsScan {
        if scan_the_facets(self.postings, self.least, self.facet_rows, self.live, need) {
            RowsScan::Facets
        } else {
            RowsScan::Both
        }
    }
}

/// PostgreSQL: ` FROM listing_search ls WHERE` the words `tsq` match (any row without words), in the
/// search's status, with its values (and within `tree` for a category): the search rows alone, for
/// [`on_search_rows`], found as `scan` says (with words).
fn search_rows_from_where(q: &mut RawQuery, tsq: Option<&str>, s: &ListingSearch, tree: &[i64], scan: RowsScan) {
    let fenced = scan == RowsScan::Facets && tsq.is_some();
    if fenced {
        q.sql(" FROM (SELECT ls.listing_id, ls.doc");
    }
    q.sql(" FROM listing_search ls WHERE ls.status = ").constant(status_of(s.status).as_str());
    let words = |q: &mut RawQuery| {
        if let Some(tsq) = tsq {
            q.sql(" AND ls.doc @@ ");
            crate::sql::pg_tsquery(q, tsq);
        }
    };
    if !fenced {
        words(q);
    }
    in_facets(q, &facets_of(s));
    if s.category.is_some() {
        in_categories(q, tree);
    }
    if fenced {
        q.sql(" OFFSET 0) ls WHERE 1 = 1");
        words(q);
    }
}

/// True when a search has no filter but its status and at least one of a category, a stage, a
/// pricing model and a country, so its search rows (migrations 64 and 66) hold everything it asks.
fn only_facets(s: &ListingSearch) -> bool {
    (s.category.is_some() || !values_asked(s).is_empty())
        && s.launch_week.is_none()
        && s.launched_since.is_none()
        && s.domain.is_none()
}

/// True when PostgreSQL matches a search on its search rows alone (`listing_search`, whose GIN
/// indexes of words and facets intersect) and counts it there ([`SeaOrmStore::postgres_rows_total`]):
/// words with a category or values, or, without words, at least two of them (a category with a
/// stage, say). A category or a value alone keeps its kept count and its walk of an order's index.
fn on_search_rows(s: &ListingSearch) -> bool {
    only_facets(s) && (s.has_words() || usize::from(s.category.is_some()) + values_asked(s).len() >= 2)
}

/// PostgreSQL: whether a page in an order of `listings`' indexes chooses between reading the
/// matching search rows first and walking the order's index ([`SeaOrmStore::walk_or_read`]): a
/// search on the search rows ([`on_search_rows`]), and words alone, whose rare word's page walked the
/// order's index probing each listing's search row (`q=larkhub&sort=votes`, 981 matches at a million
/// listings: 234 ms, 26 read first).
fn chooses_rows_first(s: &ListingSearch) -> bool {
    on_search_rows(s) || text_only(s)
}

/// True when a search has words and no filter but its status and, at most, a category (on
/// PostgreSQL, a word within a category is answered from its kept word rows: `one_word_in_category`).
fn text_in_category(s: &ListingSearch) -> bool {
    text_only(&ListingSearch { category: None, ..s.clone() })
}

/// SQLite: true when a search has no words and at least two of a category, a stage, a pricing model
/// and a country, and no other filter but its status: each is a token of the full-text index
/// (migrations 61 and 65), so the search is counted there without reading a listing row. Checked on
/// each listing of a category's tree, `category=developer-tools&stage=growing` looked up 22 809
/// listings to count 2 876 (25–50 ms at 100k demo listings); matched in the index, 2.5 ms.
fn facets_in_sqlite_index(s: &ListingSearch) -> bool {
    !s.has_words() && on_search_rows(s)
}

/// SQLite: the FTS5 query that counts a search in the full-text index, where one does: words with at
/// most a category and values ([`text_in_sqlite_index`]), or no words and two or more of those
/// ([`facets_in_sqlite_index`]). `None`: the search is counted on the listing rows.
fn sqlite_index_count_match(s: &ListingSearch, fts: Option<&str>, tree: &[i64]) -> Option<String> {
    if let Some(f) = fts
        && text_in_sqlite_index(s)
    {
        return Some(sqlite_words_match(f, s, tree));
    }
    facets_in_sqlite_index(s).then(|| sqlite_facets_match(s, tree))
}

/// True when a search has words and no filter but its status and, at most, a category, a stage, a
/// pricing model and a country: SQLite matches all of them in the full-text index with the words
/// (migrations 61 and 65), so it ranks and counts there as for the words alone (PostgreSQL, with a
/// value, in its search rows: [`on_search_rows`]).
fn text_in_sqlite_index(s: &ListingSearch) -> bool {
    text_in_category(&ListingSearch { stage: None, pricing_model: None, country: None, ..s.clone() })
}

impl SeaOrmStore {
    /// The ids of the category `slug` and its subcategories, from the kept tree; `None` when there
    /// is no such category.
    async fn category_tree(&self, slug: &domain::slug::Slug) -> RepoResult<Option<Vec<i64>>> {
        let all = domain::ports::CategoryRepository::all_categories(self).await?;
        let Some(top) = all.iter().find(|c| &c.slug == slug) else {
            return Ok(None);
        };
        let below = all.iter().filter(|c| c.parent_id == Some(top.id)).map(|c| c.id.get());
        Ok(Some(std::iter::once(top.id.get()).chain(below).collect()))
    }

    /// A page's kept total: what its first row carries beside it, or for an empty page (past the end)
    /// the expression `kept` writes, read alone.
    async fn page_total<R>(&self, rows: &[Counted<R>], kept: impl Fn(&mut RawQuery)) -> RepoResult<u64> {
        let total = match rows.first() {
            Some(r) => r.total,
            None => {
                let mut q = RawQuery::new(self.backend());
                q.sql("SELECT ");
                kept(&mut q);
                q.sql(" AS n");
                let row = crate::store::CountRow::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)?;
                row.map(|r| r.n)
            }
        };
        Ok(total.unwrap_or(0).max(0) as u64)
    }

    /// The FTS5 query for `words` (SQLite), the last word's prefix spelled out as the index's terms that
    /// begin with it when there are at most [`COMPLETIONS`] of them, and whether it kept the prefix.
    /// FTS5 answers a prefix by merging the doclists of every term it covers in memory (2 ms of a
    /// 5.6 ms common-word search at 100k, for a prefix with one completion); an `OR` of explicit terms
    /// is walked lazily. A prefix with more completions (a letter or two typed) keeps the prefix query,
    /// which for one or two letters reads the index's own list of that prefix (migration 62) and for
    /// more merges the lists of the words it begins.
    ///
    /// The terms come from `listing_terms` (migration 32), one indexed range, when it is up to date
    /// with the listings; else from `listings_fts_vocab`, which counts each term's listings as it reads
    /// it (5.5 ms for `workflow` at a million listings), so a word a listing gained a moment ago
    /// completes at once.
    ///
    /// For a search of one word it also says how many listings in `status` match at least (see
    /// [`FtsCompleted::at_least`]), so a word on most of the directory is not counted.
    async fn sqlite_fts_completed(&self, words: &[String], status: ListingStatus) -> RepoResult<FtsCompleted> {
        #[derive(Debug, FromQueryResult)]
        struct Term {
            current: bool,
            others: i64,
            term: Option<String>,
            docs: Option<i64>,
        }
        impl FromSqliteRow for Term {
            fn from_sqlite(row: &rusqlite::Row<'_>, at: &mut usize) -> rusqlite::Result<Self> {
                from_sqlite_row!(row, at, Self { current, others, term, docs })
            }
        }
        impl FromPgRow for Term {}
        let empty = || RepoError::Unexpected("a search without words".into());
        let last = words.last().ok_or_else(empty)?;
        // Every term that starts with `last` sorts between it and it followed by the last code point.
        let range = |q: &mut RawQuery| {
            q.sql(" WHERE term >= ")
                .bind(last.clone())
                .sql(" AND term <= ")
                .bind(format!("{last}\u{10FFFF}"))
                .sql(" ORDER BY term LIMIT ")
                .count_of_rows(COMPLETIONS as i64 + 1);
        };
        // The listings of every other status, from the kept counts (migration 21), read in the same
        // statement as the terms' counts, so both are of one moment.
        let others = |q: &mut RawQuery| {
            q.sql("(SELECT COALESCE(SUM(listings), 0) FROM listing_counts WHERE status <> ")
                .constant(status.as_str())
                .sql(") AS others");
        };
        // One row when the table is behind (its term NULL), else one per term (or one NULL: none).
        let mut q = RawQuery::new(DbBackend::Sqlite);
        q.sql("SELECT s.changes = s.refreshed AS current, ");
        others(&mut q);
        q.sql(", t.term AS term, t.docs AS docs FROM listing_terms_state s LEFT JOIN (SELECT term, docs FROM listing_terms");
        range(&mut q);
        q.sql(") t ON s.changes = s.refreshed");
        let mut rows = self.short_read::<Term>(q.build()).await?;
        if !rows.first().is_some_and(|r| r.current) {
            // The index counts each term's listings as it reads it: the counts are of this moment too.
            let mut q = RawQuery::new(DbBackend::Sqlite);
            q.sql("SELECT 1 AS current, ");
            others(&mut q);
            q.sql(", term, doc AS docs FROM listings_fts_vocab");
            range(&mut q);
            rows = self.short_read::<Term>(q.build()).await?;
        }
        let at_least = match (words.len(), rows.first()) {
            (1, Some(first)) => {
                let top = rows.iter().filter_map(|t| t.docs).max().unwrap_or(0);
                (top - first.others).max(0) as u64
            }
            _ => 0,
        };
        let terms: Vec<String> = rows.into_iter().filter_map(|t| t.term).collect();
        let prefix = terms.len() > COMPLETIONS;
        let query = if prefix {
            fts_query(DbBackend::Sqlite, &words.join(" "))
        } else {
            crate::sql::sqlite_query_completed(words, &terms)
        };
        Ok(FtsCompleted { query: query.ok_or_else(empty)?, prefix, at_least })
    }

    /// SQLite: the live listings of a one-word search's one term (a search of live listings), from `listing_terms.live`
    /// (migration 43), when the table is current and counted them — read in one statement with the
    /// term the index matches for `fts` (`inline::QUERY_TERM`, stemmed as the listings were) and the
    /// table's state, so all three are of one moment. `None`: count them. The pool's connections
    /// lack the function: through the pool it is always `None`.
    async fn kept_live_matches(
        &self,
        fts: &str,
        prefix: bool,
        words: usize,
        status: StatusFilter,
    ) -> RepoResult<Option<u64>> {
        // Only live listings are counted per term (upcoming ones are a few weeks' worth).
        if prefix || words != 1 || status != StatusFilter::Live || self.inline.is_none() {
            return Ok(None);
        }
        let mut q = RawQuery::new(DbBackend::Sqlite);
        q.sql("SELECT (SELECT k.live FROM listing_terms k, listing_terms_state s WHERE k.term = q.t AND s.changes = s.refreshed) AS n FROM (SELECT ")
            .sql(crate::inline::QUERY_TERM)
            .sql("(listings_fts) AS t FROM listings_fts WHERE listings_fts MATCH ")
            .bind(fts.to_owned())
            .sql(" LIMIT 1) q");
        Ok(self.inline_count(q).await?.map(|n| n.max(0) as u64))
    }

    /// SQLite: the one value `n` of a statement that uses the inline readers' functions, on an inline
    /// reader; `None` when it is NULL or the pool answers (it lacks the functions).
    async fn inline_count(&self, q: RawQuery) -> RepoResult<Option<i64>> {
        #[derive(Debug, FromQueryResult)]
        struct MaybeCount {
            n: Option<i64>,
        }
        impl FromSqliteRow for MaybeCount {
            fn from_sqlite(row: &rusqlite::Row<'_>, at: &mut usize) -> rusqlite::Result<Self> {
                from_sqlite_row!(row, at, Self { n })
            }
        }
        impl FromPgRow for MaybeCount {}
        let none = |_| Statement::from_string(DbBackend::Sqlite, "SELECT NULL AS n");
        let rows = self.short_read_or::<MaybeCount>(q.build(), none).await?;
        Ok(rows.first().and_then(|r| r.n))
    }

    /// SQLite: the live listings of `term` (a term of the index as it spells it), counted up to the
    /// cap, for `listing_terms.live`; `None` where the term, written as a query, would be stemmed into
    /// another term (Porter's stemmer is not idempotent: `agre` becomes `agr`), so its count would be
    /// another's, or where the pool answers (it lacks the function).
    async fn count_live_term(&self, term: &str) -> RepoResult<Option<i64>> {
        let phrase = format!("\"{}\"", term.replace('"', "\"\""));
        let mut q = RawQuery::new(DbBackend::Sqlite);
        q.sql("SELECT CASE WHEN (SELECT ")
            .sql(crate::inline::QUERY_TERM)
            .sql("(listings_fts) FROM listings_fts WHERE listings_fts MATCH ")
            .bind(phrase.clone())
            .sql(" LIMIT 1) = ")
            .bind(term.to_owned())
            .sql(" THEN (SELECT COUNT(*) FROM (SELECT 1 FROM listings_fts WHERE listings_fts MATCH ")
            .bind(sqlite_match(&phrase, StatusFilter::Live))
            .sql(" LIMIT ")
            .count_of_rows(COUNT_CAP as i64 + 1)
            .sql(")) END AS n");
        self.inline_count(q).await
    }

    /// A text-only search by relevance on PostgreSQL: one statement through `listing_text_search`
    /// (migration 30), which matches through the GIN index of `listing_search`, counts up to the cap
    /// and ranks the first candidates; only the page's listings are read. A search for one word reads
    /// that word's listings best first from `listing_search_terms` instead (migration 54), only as deep
    /// as the page. A page past the last candidate carries no count, so it is asked for apart (the same
    /// function, no candidate).
    async fn postgres_text_search(
        &self,
        tsq: &str,
        status: StatusFilter,
        page: PageRequest,
    ) -> RepoResult<Paged<ListingSummary>> {
        let _slot = self.search_slot().await?;
        let deep = page.offset() as i64 + i64::from(page.per_page());
        let candidates = deep.max(RANKED_CANDIDATES);
        let mut q = RawQuery::new(DbBackend::Postgres);
        q.sql(SUMMARY_SELECT).sql(", f.matches AS page_total FROM (SELECT listing_id, rank, matches FROM ");
        pg_text_search_call(&mut q, tsq, status, candidates, deep);
        q.sql(" WHERE listing_id IS NOT NULL ORDER BY rank DESC, listing_id DESC")
            .page(page)
            .sql(") f JOIN listings l ON l.id = f.listing_id ORDER BY f.rank DESC, l.id DESC");
        let rows = Counted::<SummaryRow>::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?;
        let counted = match rows.first() {
            Some(r) => r.total.unwrap_or(0).max(0) as u64,
            None => self.postgres_text_total(tsq, status, deep).await?,
        };
        let items = rows.into_iter().filter_map(|r| r.row.into_summary()).collect();
        Ok(Paged::counted_to_cap(items, page, counted))
    }

    /// PostgreSQL: how many listings in `status` the words `tsq` match, up to the cap, as the text
    /// search counts them (`listing_text_search` with no candidate): from the kept counts while they
    /// are current or already say "the cap or more", else counted eighth by eighth (migrations 34, 53
    /// and 54). `deep` is the page's end, which the function weighs its ranked path by.
    async fn postgres_text_total(&self, tsq: &str, status: StatusFilter, deep: i64) -> RepoResult<u64> {
        let mut count = RawQuery::new(DbBackend::Postgres);
        count.sql("SELECT COALESCE(MAX(matches), 0) AS n FROM ");
        pg_text_search_call(&mut count, tsq, status, 0, deep);
        let row = crate::store::CountRow::find_by_statement(count.build()).one(&self.db).await.map_err(repo_err)?;
        Ok(row.map_or(0, |r| r.n).max(0) as u64)
    }

    /// PostgreSQL: how many listings in the search's status the words `tsq` (if any) match with its
    /// stage, pricing model and country and within `tree`, its category's (if any), up to the cap,
    /// counted in `listing_search` alone: the words' bitmap and the facets' (migrations 64 and 66)
    /// intersect, or, where the words are far more common, the facets' rows are read and the words
    /// checked on each (as `kept` says: [`SeaOrmStore::postgres_rows_kept`]); the status is checked
    /// on the search row.
    async fn postgres_rows_total(
        &self,
        tsq: Option<&str>,
        s: &ListingSearch,
        tree: &[i64],
        kept: RowsKept,
    ) -> RepoResult<u64> {
        let scan = kept.scan(COUNT_CAP + 1);
        let mut count = RawQuery::new(DbBackend::Postgres);
        count.sql("SELECT COUNT(*) AS n FROM (SELECT 1");
        search_rows_from_where(&mut count, tsq, s, tree, scan);
        count.sql(" LIMIT ").count_of_rows(COUNT_CAP as i64 + 1).sql(") t");
        self.count(&count).await
    }

    /// PostgreSQL: what the kept counts say of the words `tsq` with the search's values and within
    /// `tree` (its category's, if any), for [`RowsKept::scan`], in one statement: each word's
    /// postings (the listings of every index word it covers in the status, `listing_status_terms`,
    /// at most a thousand index words a word), the listings in the status (`listing_counts`), and
    /// the share of them each value and the category's tree have (`listing_value_counts`;
    /// `categories.tree_live_listings`, for live listings). A kept count behind the listings
    /// changes only the choice, never the answer.
    async fn postgres_rows_kept(&self, tsq: &str, s: &ListingSearch, tree: &[i64]) -> RepoResult<RowsKept> {
        #[derive(Debug, FromQueryResult)]
        struct Kept {
            postings: i64,
            least: i64,
            live: i64,
            facet_rows: i64,
        }
        let status = status_of(s.status).as_str();
        let mut q = RawQuery::new(DbBackend::Postgres);
        q.sql("SELECT sum(w.docs)::bigint AS postings, min(w.docs)::bigint AS least, l.live, round(l.live::float8");
        // The facets' rows as if the values and the tree were independent: the fewest of them overcounted
        // `pro` with `growing` in `developer-tools` at a million listings (130 350 and 171 868 of
        // 779 547 live; 33 200 have both).
        for (i, v) in values_asked(s) {
            q.sql(" * ");
            kept_value_count(&mut q, status, i, v);
            q.sql(" / GREATEST(l.live, 1)");
        }
        if let (Some(top), StatusFilter::Live) = (tree.first(), s.status) {
            q.sql(" * COALESCE((SELECT c.tree_live_listings FROM categories c WHERE c.id = ")
                .bind(*top)
                .sql("), 0) / GREATEST(l.live, 1)");
        }
        q.sql(
            ")::bigint AS facet_rows FROM (SELECT COALESCE((SELECT k.listings FROM listing_counts k WHERE k.status = ",
        )
        .constant(status)
        .sql("), 0)::bigint AS live) l, ");
        // Each lexeme of the query as PostgreSQL parsed it (`'word'`, `'word':*` for a prefix), read
        // as `listing_text_search` reads a one-word query (migration 34).
        q.sql("(SELECT (SELECT COALESCE(sum(t.docs), 0) FROM (SELECT t.docs FROM listing_status_terms t WHERE t.status = ")
            .constant(status)
            .sql(" AND t.term >= x.lexeme AND t.term <= x.last LIMIT 1000) t) AS docs FROM (SELECT x.lexeme, ")
            .sql("x.lexeme || CASE WHEN x.prefix THEN chr(1114111) ELSE '' END AS last FROM (SELECT ")
            .sql("replace(m[1], '''''', '''') AS lexeme, m[2] = '*' AS prefix FROM regexp_matches((");
        crate::sql::pg_tsquery(&mut q, tsq);
        q.sql(")::text, '''((?:[^'']|'''')*)''(?::(\\*?)[A-D]*)?', 'g') AS m) x) x) w GROUP BY l.live");
        let kept = Kept::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)?;
        let n = |v: i64| v.max(0) as u64;
        Ok(kept.map_or_else(RowsKept::default, |k| RowsKept {
            postings: n(k.postings),
            least: n(k.least),
            facet_rows: n(k.facet_rows),
            live: n(k.live),
        }))
    }

    /// PostgreSQL: a page of the words `tsq` with the search's stage, pricing model and country and
    /// within `tree`, its category's (any of them it has), by relevance, of `counted` matches: the
    /// first candidates the search rows hand out (`listing_search` alone, found as `kept` says:
    /// [`RowsKept::scan`]), ranked by `ts_rank` as the words alone are, ties by id, and only the
    /// page's listings read. Through the general search's join every live listing was hashed for the
    /// candidates, and again for the page (57 ms of `q=workflow&stage=growing` at 100k listings).
    async fn postgres_rows_search(
        &self,
        tsq: &str,
        s: &ListingSearch,
        tree: &[i64],
        page: PageRequest,
        counted: u64,
        kept: RowsKept,
    ) -> RepoResult<Paged<ListingSummary>> {
        let candidates = (page.offset() as i64 + i64::from(page.per_page())).max(RANKED_CANDIDATES);
        let scan = kept.scan(candidates as u64);
        let mut q = RawQuery::new(DbBackend::Postgres);
        q.sql(SUMMARY_SELECT).sql(" FROM (SELECT c.id, c.r FROM (SELECT ls.listing_id AS id, ts_rank(ls.doc, ");
        crate::sql::pg_tsquery(&mut q, tsq);
        q.sql(") AS r");
        search_rows_from_where(&mut q, Some(tsq), s, tree, scan);
        q.sql(" LIMIT ")
            .count_of_rows(candidates)
            .sql(") c ORDER BY c.r DESC, c.id DESC")
            .page(page)
            .sql(") f JOIN listings l ON l.id = f.id ORDER BY f.r DESC, l.id DESC");
        let rows = SummaryRow::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?;
        let items = rows.into_iter().filter_map(SummaryRow::into_summary).collect();
        Ok(Paged::counted_to_cap(items, page, counted))
    }

    /// PostgreSQL: the one word of the index that the search's one word stands for (`tsq`, written by
    /// `fts_query`, a prefix), when exactly one word of the listings in `status` begins with it, as the
    /// one-word text search decides (migration 54); `None` otherwise (a stop word, a prefix of several
    /// words, a word no listing has, a lexeme with a quote or backslash), which takes the general path.
    async fn postgres_one_term(&self, tsq: &str, status: StatusFilter) -> RepoResult<Option<String>> {
        #[derive(Debug, FromQueryResult)]
        struct Term {
            term: Option<String>,
        }
        let mut q = RawQuery::new(DbBackend::Postgres);
        q.sql("SELECT CASE WHEN min(t.term) = max(t.term) THEN min(t.term) END AS term FROM listing_search_terms t, ")
            .sql("(SELECT substring(");
        crate::sql::pg_tsquery(&mut q, tsq);
        q.sql(r"::text FROM '^''([^''\\]+)''(:\*)?$') AS w) q WHERE t.status = ")
            .constant(status_of(status).as_str())
            .sql(" AND t.term >= q.w AND t.term <= q.w || chr(1114111)");
        let row = Term::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)?;
        Ok(row.and_then(|r| r.term))
    }

    /// PostgreSQL: a page of the listings of `term` (one word of the index) within the categories
    /// `tree`, best first by the word's kept rank, every match ranked (as a one-word search without a
    /// category ranks, migration 54), and their number up to the cap. The word's kept rows are walked
    /// in rank order and each checked against the category, so neither the word's documents (the
    /// general path ranked 1 000 of them, reading each from the heap) nor every live listing (which
    /// the general count hashed against the category) is read: `workflow` in `api-tools` at 100k
    /// listings, 33 517 matches of which 1 554 in the category, took 106 ms.
    async fn postgres_term_in_category(
        &self,
        term: &str,
        status: StatusFilter,
        tree: &[i64],
        page: PageRequest,
    ) -> RepoResult<Paged<ListingSummary>> {
        let _slot = self.search_slot().await?;
        let check = self.postgres_term_tree_check(term, status, tree).await?;
        let from = |q: &mut RawQuery| {
            q.sql(" FROM listing_search_terms t WHERE t.status = ")
                .constant(status_of(status).as_str())
                .sql(" AND t.term = ")
                .bind(term.to_owned());
            in_tree(q, "t.listing_id", tree, check);
        };
        let mut count = RawQuery::new(DbBackend::Postgres);
        count.sql("SELECT COUNT(*) AS n FROM (SELECT 1");
        from(&mut count);
        count.sql(" LIMIT ").count_of_rows(COUNT_CAP as i64 + 1).sql(") c");
        let counted = self.count(&count).await?;
        let mut q = RawQuery::new(DbBackend::Postgres);
        q.sql(SUMMARY_SELECT).sql(" FROM (SELECT t.listing_id, t.rank");
        from(&mut q);
        q.sql(" ORDER BY t.rank DESC, t.listing_id DESC")
            .page(page)
            .sql(") f JOIN listings l ON l.id = f.listing_id ORDER BY f.rank DESC, l.id DESC");
        let rows = SummaryRow::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?;
        let items = rows.into_iter().filter_map(SummaryRow::into_summary).collect();
        Ok(Paged::counted_to_cap(items, page, counted))
    }

    /// PostgreSQL: how [`SeaOrmStore::postgres_term_in_category`] checks the word's kept rows against
    /// the tree `tree`: each row probed for a link to it when the word has at most a
    /// [`PROBE_FACTOR`]th as many rows in `status` as the tree has live listings (about its links,
    /// migration 57), else against the list of the tree's links, built once. Listed, `larkhub` in
    /// `developer-tools` at a million listings (some 900 rows against 228 000 links) hashed every link
    /// for the count and again for the page (94 ms). The word's rows are counted only as far as that
    /// bound, from their index.
    async fn postgres_term_tree_check(&self, term: &str, status: StatusFilter, tree: &[i64]) -> RepoResult<TreeCheck> {
        let Some(top) = tree.first() else { return Ok(TreeCheck::List) };
        let mut kept = RawQuery::new(DbBackend::Postgres);
        kept.sql("SELECT COALESCE((SELECT c.tree_live_listings FROM categories c WHERE c.id = ")
            .bind(*top)
            .sql("), 0) AS n");
        let bound = self.count_short(&kept).await? / PROBE_FACTOR;
        if bound == 0 {
            return Ok(TreeCheck::List);
        }
        let mut rows = RawQuery::new(DbBackend::Postgres);
        rows.sql("SELECT COUNT(*) AS n FROM (SELECT 1 FROM listing_search_terms t WHERE t.status = ")
            .constant(status_of(status).as_str())
            .sql(" AND t.term = ")
            .bind(term.to_owned())
            .sql(" LIMIT ")
            .count_of_rows(i64::try_from(bound).unwrap_or(i64::MAX - 1) + 1)
            .sql(") t");
        let few = self.count(&rows).await? <= bound;
        Ok(if few { TreeCheck::Probe } else { TreeCheck::List })
    }

    /// How many listings are in `status`: the count kept by triggers (migration 21), one row.
    async fn listings_in(&self, status: ListingStatus) -> RepoResult<u64> {
        let mut q = RawQuery::new(self.backend());
        q.sql("SELECT listings AS n FROM listing_counts WHERE status = ").constant(status.as_str());
        let row = crate::store::CountRow::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)?;
        Ok(row.map_or(0, |r| r.n.max(0) as u64))
    }

    /// One listing (with the ids of its extra categories folded in) by a unique column (`id` or
    /// `slug`); see [`SeaOrmStore::load_listings`].
    async fn load_where(&self, col: &'static str, value: sea_orm::Value) -> RepoResult<Option<Listing>> {
        let rows = self
            .load_listings(|q| {
                q.sql(" WHERE l.").sql(col).sql(" = ").bind(value);
            })
            .await?;
        Ok(rows.into_iter().next())
    }

    /// Listings with their extra categories, `tail` writing the WHERE (and ORDER/LIMIT) after
    /// `FROM listings l`. Raw statements: sea-orm's select builder cost ~100 µs per call here for this
    /// 57-column row (measured in `benches/directory.rs`), four times the statement itself.
    pub(crate) async fn load_listings(&self, tail: impl FnOnce(&mut RawQuery)) -> RepoResult<Vec<Listing>> {
        let mut q = RawQuery::new(self.backend());
        q.sql("SELECT ")
            .sql(&LISTING_COLUMNS)
            .sql(", ")
            .sql(extra_categories_sql(self.backend()))
            .sql(" AS extra_category_ids, ")
            .sql(VIEWS_SQL)
            .sql(" AS views FROM listings l");
        tail(&mut q);
        let rows = ListingRow::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?;
        Ok(rows
            .into_iter()
            .map(|r| to_listing(r.listing, parse_extras(r.extra_category_ids), r.views.unwrap_or(0)))
            .collect())
    }

    /// How a page of `counted` matches in an order of `listings`' indexes is read: walking the order
    /// and checking each listing (`List`) or reading the matches first (`Drive`): [`walk_the_order`].
    async fn walk_or_read(&self, counted: u64, status: StatusFilter, page: PageRequest) -> RepoResult<WordsMatch> {
        let all = self.listings_in(status_of(status)).await?;
        let end = page.offset().saturating_add(u64::from(page.per_page()));
        Ok(if walk_the_order(counted, all, end) { WordsMatch::List } else { WordsMatch::Drive })
    }

    /// Writes the FROM and WHERE of a listing search; returns whether the FTS table is joined.
    /// `by_views` joins the listings' view totals as `t`, for the most-viewed order. `tree` holds the
    /// ids of the category filter's category and its subcategories (never empty when `s` has one).
    /// `words` says how SQLite matches the words, and how PostgreSQL reads a search it matches on its
    /// search rows or by words alone ([`chooses_rows_first`]): `Drive`, the matching rows first, then their listings
    /// (sorted by the caller); `List`, as the planner chooses (a walk of the order's index, mostly).
    fn search_from_where(
        &self,
        q: &mut RawQuery,
        s: &ListingSearch,
        tree: &[i64],
        check: TreeCheck,
        by_views: bool,
        words: WordsMatch,
    ) -> Option<bool> {
        let totals = if by_views { " JOIN listing_view_totals t ON t.listing_id = l.id" } else { "" };
        let backend = q.backend();
        let fts = match &s.q {
            Some(text) if !text.as_str().trim().is_empty() => Some(fts_query(backend, text.as_str())?),
            _ => None,
        };
        let rows_first = backend == DbBackend::Postgres && chooses_rows_first(s) && words == WordsMatch::Drive;
        match (&fts, backend) {
            _ if rows_first => {
                // The matching search rows alone, fenced (`OFFSET 0`) so the planner reads them first:
                // it walked the order's index probing each listing's search row instead, misjudging
                // how few match (`q=pro&category=developer-tools&stage=growing&sort=votes` at 100k
                // listings: 23 562 probes for 20 listings, 77 ms).
                q.sql(" FROM (SELECT ls.listing_id");
                search_rows_from_where(q, fts.as_deref(), s, tree, RowsScan::Both);
                q.sql(" OFFSET 0) m JOIN listings l ON l.id = m.listing_id").sql(totals).sql(" WHERE 1 = 1");
            }
            (Some(f), DbBackend::Sqlite) if words == WordsMatch::List => {
                // The walk in the order's index checks each listing against the list of the matches.
                q.sql(" FROM listings l")
                    .sql(totals)
                    .sql(" WHERE l.id IN (SELECT listings_fts.rowid FROM listings_fts WHERE listings_fts MATCH ")
                    .bind(sqlite_words_match(f, s, tree))
                    .sql(")");
            }
            (Some(f), DbBackend::Sqlite) => {
                // CROSS JOIN fixes the order: SQLite would otherwise drive from the status index and run the
                // full-text match once per listing (measured: 75 ms instead of 2 ms for a COUNT on 2 000 rows).
                q.sql(" FROM listings_fts CROSS JOIN listings l ON l.id = listings_fts.rowid")
                    .sql(totals)
                    .sql(" WHERE listings_fts MATCH ")
                    .bind(sqlite_words_match(f, s, tree));
            }
            (Some(f), _) => {
                q.sql(" FROM listings l JOIN listing_search ls ON ls.listing_id = l.id")
                    .sql(totals)
                    .sql(" WHERE ls.doc @@ ");
                crate::sql::pg_tsquery(q, f);
            }
            (None, DbBackend::Postgres) if on_search_rows(s) => {
                // Two of a category and values: matched on the search rows (below).
                q.sql(" FROM listings l JOIN listing_search ls ON ls.listing_id = l.id")
                    .sql(totals)
                    .sql(" WHERE 1 = 1");
            }
            (None, _) => {
                q.sql(" FROM listings l").sql(totals).sql(" WHERE 1 = 1");
            }
        }
        // PostgreSQL matches the category and the values on the search row where it reads one.
        let facets = backend == DbBackend::Postgres && (fts.is_some() || on_search_rows(s));
        match s.status {
            StatusFilter::Live => q.sql(" AND l.status = 'live'"),
            StatusFilter::Upcoming => q.sql(" AND l.status = 'scheduled'"),
        };
        if by_views {
            // The total's row keeps its listing's status (migration 48): the order walks
            // `(status, views, listing_id)`.
            q.sql(" AND t.status = ").constant(status_of(s.status).as_str());
        }
        // Where SQLite matches words, the category is matched in the index with them (above); on
        // PostgreSQL's search row, one of its facets (migration 66); anywhere else it is a check on
        // each listing.
        if s.category.is_some() {
            match (&fts, backend) {
                _ if rows_first => {}
                (Some(_), DbBackend::Sqlite) => {}
                _ if facets => in_categories(q, tree),
                _ => in_tree(q, "l.id", tree, check),
            }
        }
        match (&fts, backend) {
            _ if rows_first => {}
            // On the search row, the values are its facets (migration 64): two indexes of
            // `listing_search` intersect, where `listings` has none on these columns.
            _ if facets => in_facets(q, &facets_of(s)),
            // Matched in the full-text index with the words (`sqlite_words_match`, migration 65).
            (Some(_), DbBackend::Sqlite) => {}
            _ => {
                if let Some(st) = &s.stage {
                    q.sql(" AND l.stage = ").bind(st.as_str());
                }
                if let Some(c) = &s.country {
                    q.sql(" AND l.country = ").bind(c.as_str());
                }
                if let Some(p) = &s.pricing_model {
                    q.sql(" AND lower(l.pricing_model) = ").bind(p.as_str().to_lowercase());
                }
            }
        }
        if let Some(w) = s.launch_week {
            q.sql(" AND l.launch_week = ").date_constant(w.monday());
        }
        if let Some(t) = s.launched_since {
            q.sql(" AND l.launched_at >= ").bind(chrono::DateTime::<chrono::FixedOffset>::from(t));
        }
        if let Some(d) = &s.domain {
            let d = d.as_str().trim().to_lowercase();
            let d = d.strip_prefix("www.").unwrap_or(&d).to_owned();
            q.sql(" AND l.domain = ").bind(d);
        }
        Some(fts.is_some())
    }
}

#[async_trait]
impl ListingRepository for SeaOrmStore {
    async fn create_listing(&self, new: NewListing) -> RepoResult<Listing> {
        let now = Utc::now();
        for attempt in 0..50u32 {
            let slug = if attempt == 0 { new.slug.clone() } else { new.slug.with_suffix(attempt + 1) };
            let txn = self.begin_write().await?;
            let inserted = listings::Entity::insert(active_model(&new, None, slug.as_str(), now)).exec(&txn).await;
            match inserted {
                Ok(r) => {
                    let rows = category_rows(r.last_insert_id, &new);
                    if !rows.is_empty() {
                        listing_categories::Entity::insert_many(rows).exec(&txn).await.map_err(repo_err)?;
                    }
                    txn.commit().await.map_err(repo_err)?;
                    return self.get_listing(ListingId::from_db(r.last_insert_id)).await?.ok_or(RepoError::NotFound);
                }
                Err(e) if is_unique_violation(&e) => {
                    txn.rollback().await.map_err(repo_err)?;
                }
                Err(e) => return Err(repo_err(e)),
            }
        }
        Err(RepoError::Conflict(format!("no free slug near {}", new.slug)))
    }

    async fn get_listing(&self, id: ListingId) -> RepoResult<Option<Listing>> {
        self.load_where("id", id.get().into()).await
    }

    async fn get_listing_by_slug(&self, slug: &Slug) -> RepoResult<Option<Listing>> {
        self.load_where("slug", slug.as_str().into()).await
    }

    async fn live_listing_id(&self, slug: &Slug) -> RepoResult<Option<ListingId>> {
        // get_alternatives asks this: one lookup of the slug's index, on the calling thread on
        // SQLite. (The site's listing page takes the id from the profile it reads.)
        let mut q = RawQuery::new(self.backend());
        q.sql("SELECT id AS n FROM listings WHERE slug = ")
            .bind(slug.as_str().to_owned())
            .sql(" AND status = ")
            .constant(ListingStatus::Live.as_str());
        let row = self.short_read::<crate::store::CountRow>(q.build()).await?;
        Ok(row.first().map(|r| ListingId::from_db(r.n)))
    }

    async fn search_listings(&self, s: &ListingSearch, page: PageRequest) -> RepoResult<Paged<ListingSummary>> {
        let backend = self.backend();
        let fts = s.q.as_ref().and_then(|t| fts_query(backend, t.as_str()));
        if let (DbBackend::Sqlite, true, Some(_), SearchSort::Relevance) =
            (backend, text_in_sqlite_index(s), &fts, s.sort)
        {
            // Rank inside the index and read only the page's listings; count apart only when the
            // candidates do not hold every match. Short statements, each bounded (a few index terms,
            // the candidate set, 10 001 matches): on the calling thread. A category is matched in the
            // index with the words (its tokens, migration 61).
            let tree = match &s.category {
                Some(slug) => match self.category_tree(slug).await? {
                    Some(tree) => Some(tree),
                    None => return Ok(Paged::new(vec![], page, 0)),
                },
                None => None,
            };
            let words = crate::sql::search_words(s.q.as_ref().map(|t| t.as_str()).unwrap_or_default());
            let FtsCompleted { query: fts, prefix, at_least } =
                self.sqlite_fts_completed(&words, status_of(s.status)).await?;
            // Within a category or with a value (matched in the index with the words: migrations 61
            // and 65), the kept counts of the words' listings say nothing of the count.
            let values = sqlite_values_match(s);
            let (fts, at_least) = match &tree {
                Some(tree) => (format!("({fts}){}{values}", sqlite_tree_match(tree)), 0),
                None if !values.is_empty() => (format!("({fts}){values}"), 0),
                None => (fts, at_least),
            };
            let filtered = tree.is_some() || !values.is_empty();
            // A last word with more completions than are spelled out (a letter or two typed) stays a
            // prefix: at 100k listings, before the index kept one- and two-letter prefixes (migration
            // 62), `s` took 175–250 ms and `a` 105 ms, which on the request's thread held every other
            // request of its HTTP worker; now 10–12 ms, and 53–58 ms at a million listings, most of it
            // FTS5's `bm25` counting the prefix's rows. Such a search ranks and counts through the
            // pool, in a search slot, like a filtered one.
            let _slot = if prefix { self.search_slot().await? } else { None };
            // Ranks a bounded candidate set: the newest matches the index hands out (by rowid), as many as
            // the page needs and at least RANKED_CANDIDATES — not every match of a word on every listing.
            let candidates = (page.offset() as i64 + i64::from(page.per_page())).max(RANKED_CANDIDATES);
            // The status is checked beside the index, not matched in it: walking the index newest first,
            // FTS5 would merge the status token's doclist (every live listing) for each query (at 1M
            // listings a rare word ranked in 28 ms this way, 7 ms the other). It is read from
            // `ux_listings_id_status` (migration 28), not the listing row, where it sits behind the long
            // texts: 0.24 ms for 1 000 candidates instead of 0.86.
            //
            // The candidates' ids and scores come back whole and are ordered here: their number is
            // the count of matches when there are fewer than asked for, and the page is cut from
            // them. In SQL that took a window (`COUNT(*) OVER ()`), which wrote every candidate to a
            // temporary table: a third of the statement (0.4 of 1.2–1.4 ms for 1 000 candidates).
            let mut q = RawQuery::new(backend);
            q.sql("SELECT listings_fts.rowid AS id, ")
                .sql(if prefix { BM25 } else { COUNTED_BM25 })
                .sql(" AS r FROM listings_fts CROSS JOIN listings s INDEXED BY ux_listings_id_status ON s.id = listings_fts.rowid")
                .sql(if prefix { "" } else { SIZES_JOIN })
                .sql(" WHERE listings_fts MATCH ")
                .bind(fts.clone())
                .sql(" AND s.status = ")
                .bind(status_of(s.status).as_str())
                .sql(" ORDER BY listings_fts.rowid DESC LIMIT ")
                .count_of_rows(candidates);
            let mut ranked = if prefix {
                RankedRow::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?
            } else {
                self.short_read_or::<RankedRow>(q.build(), ranked_by_bm25).await?
            };
            let matched = ranked.len() as i64;
            // bm25 ranks lower first; equal scores newest first.
            ranked.sort_unstable_by(|a, b| a.r.total_cmp(&b.r).then(b.id.cmp(&a.id)));
            let from = usize::try_from(page.offset()).unwrap_or(usize::MAX).min(ranked.len());
            let to = from.saturating_add(page.per_page() as usize).min(ranked.len());
            let ids = ranked[from..to].iter().map(|c| c.id.to_string()).collect::<Vec<_>>().join(",");
            // The page's listings in the ranked order: one statement shape for every page (the ids
            // are one JSON array), so the readers' statement caches keep it.
            let rows: Vec<SummaryRow> = if ids.is_empty() {
                Vec::new()
            } else {
                let mut q = RawQuery::new(backend);
                q.sql(SUMMARY_SELECT)
                    .sql(" FROM json_each(")
                    .bind(format!("[{ids}]"))
                    .sql(") p JOIN listings l ON l.id = p.value ORDER BY p.key");
                self.short_read::<SummaryRow>(q.build()).await?
            };
            let counted = match matched {
                n if n < candidates => n as u64,
                // A word that the kept counts put on more listings than the cap: "10 000+", uncounted
                // (counting them took 1.5 ms of a 3.7 ms search for a word on 43 000 listings of 100k).
                _ if at_least > COUNT_CAP => at_least,
                // Every candidate taken (more may match): a word that is one term of the index takes
                // its live listings from the kept counts (migration 43) while they are current (with
                // no category or value); any other is counted up to the cap with the status matched in
                // the index, which merges doclists quickly when there are many matches.
                _ => {
                    let kept = if filtered {
                        None
                    } else {
                        self.kept_live_matches(&fts, prefix, words.len(), s.status).await?
                    };
                    match kept {
                        Some(live) => live,
                        None => {
                            let mut count = RawQuery::new(backend);
                            count
                                .sql("SELECT COUNT(*) AS n FROM (SELECT 1 FROM listings_fts WHERE listings_fts MATCH ")
                                .bind(sqlite_match(&fts, s.status))
                                .sql(" LIMIT ")
                                .count_of_rows(COUNT_CAP as i64 + 1)
                                .sql(") t");
                            if prefix { self.count(&count).await? } else { self.count_short(&count).await? }
                        }
                    }
                }
            };
            let items = rows.into_iter().filter_map(SummaryRow::into_summary).collect();
            return Ok(Paged::counted_to_cap(items, page, counted));
        }
        if let (DbBackend::Postgres, true, Some(tsq), SearchSort::Relevance) = (backend, text_only(s), &fts, s.sort) {
            return self.postgres_text_search(tsq, s.status, page).await;
        }
        // A category filter is the category and its subcategories: their ids, from the kept tree.
        let tree = match &s.category {
            Some(slug) => match self.category_tree(slug).await? {
                Some(tree) => tree,
                None => return Ok(Paged::new(vec![], page, 0)),
            },
            None => Vec::new(),
        };
        if let (DbBackend::Postgres, Some(tsq), SearchSort::Relevance) = (backend, &fts, s.sort)
            && one_word_in_category(s)
            && let Some(term) = self.postgres_one_term(tsq, s.status).await?
        {
            return self.postgres_term_in_category(&term, s.status, &tree, page).await;
        }
        let mut count = RawQuery::new(backend);
        count.sql("SELECT COUNT(*) AS n FROM (SELECT 1");
        let Some(_) = self.search_from_where(&mut count, s, &tree, TreeCheck::List, false, WordsMatch::Drive) else {
            return Ok(Paged::new(vec![], page, 0));
        };
        count.sql(" LIMIT ").count_of_rows(COUNT_CAP as i64 + 1).sql(") t");
        // An unfiltered list's total, and a week's, is a kept count (exact at any size: migrations 21
        // and 37), read in the page's own statement; any other list's is counted up to the cap (apart,
        // through the count cache).
        let unfiltered = s.is_unfiltered();
        let week = s.only_launch_week();
        // A week in the order of an index (live by votes: `(status, launch_week, votes_count)`; upcoming
        // by id: `(status, launch_week, id)`) reads the page's rows alone, like an unfiltered list; in
        // another order it sorts every listing of the week. Today's launches (the home page's) read
        // a day's rows through `(status, launched_at)`. Any other list is a search: it waits for a
        // slot on PostgreSQL.
        let bounded = unfiltered || matches!(s.sort, SearchSort::Relevance | SearchSort::Votes);
        let short = ((unfiltered || week.is_some()) && bounded) || s.only_launched_since().is_some();
        let _slot = if short { None } else { self.search_slot().await? };
        // What the kept counts say of words on the search rows, read for the count, used again for the page.
        let mut rows_kept = RowsKept::default();
        let counted = if unfiltered || week.is_some() {
            0
        } else if let (Some(top), Some(_), StatusFilter::Live) = (tree.first(), s.only_category(), s.status) {
            // A category alone: the live listings of its tree (it and its subcategories, each listing
            // once) are kept on its row (triggers, migration 57), the number this count would reach
            // (4.5–30 ms at 100k listings).
            let mut kept = RawQuery::new(backend);
            kept.sql("SELECT COALESCE((SELECT c.tree_live_listings FROM categories c WHERE c.id = ")
                .bind(*top)
                .sql("), 0) AS n");
            self.count_short(&kept).await?
        } else if let Some(value) = s.only_value() {
            // A stage, pricing model or country alone: the listings of each status and value are kept
            // (triggers, migration 58), where this count walked listing rows for the value's
            // (55–107 ms at 100k listings, for 13 000 of 78 000 live).
            let (field, value) = value_compared(value);
            let mut kept = RawQuery::new(backend);
            kept.sql("SELECT ");
            kept_value_count(&mut kept, status_of(s.status).as_str(), field, value);
            kept.sql(" AS n");
            self.count_short(&kept).await?
        } else if let Some(since) = s.only_launched_since().and_then(today_midnight) {
            // Today's launches (the home page's): the listings of each status and launch day are kept
            // (triggers, migration 69), today's are those of the days from today on. Counted, this was
            // up to 10 001 index entries on the pool (a Monday's are the whole week's launches), and
            // under the home page's load it queued there (p99 0.1–1.1 s at 100k on PostgreSQL).
            let mut kept = RawQuery::new(backend);
            kept.sql("SELECT COALESCE(CAST((SELECT SUM(k.listings) FROM day_listing_counts k WHERE k.status = ")
                .constant(status_of(s.status).as_str())
                .sql(" AND k.launch_day >= ")
                .date_constant(since.date_naive())
                .sql(") AS BIGINT), 0) AS n");
            self.count_short(&kept).await?
        } else if backend == DbBackend::Sqlite
            && let Some(matched) = sqlite_index_count_match(s, fts.as_deref(), &tree)
        {
            // Words (within a category, with values) in another order than relevance, or two or more
            // of a category and values without words: the status, the category and the values are in
            // the full-text index, so the matches are counted there without reading a listing row
            // (`workflow`: 5.6 ms for the capped count, 10.3 joined to the rows; with
            // `stage=growing`, 2.4 ms, where checking the stage on each match's row took 42).
            let mut only = RawQuery::new(backend);
            only.sql("SELECT COUNT(*) AS n FROM (SELECT 1 FROM listings_fts WHERE listings_fts MATCH ")
                .bind(matched)
                .sql(" LIMIT ")
                .count_of_rows(COUNT_CAP as i64 + 1)
                .sql(") t");
            self.count(&only).await?
        } else if let (DbBackend::Postgres, true) = (backend, on_search_rows(s)) {
            // Words with a category, a stage, a pricing model or a country, or two of those without
            // words: the search rows alone. Joined to `listings`, `q=workflow&stage=growing` read and
            // hashed the whole table (123–140 ms at 100k), and `q=co&category=developer-tools` checked
            // 47 000 matches against the tree's list of links (59 ms; 19 on the search rows).
            if let Some(tsq) = &fts {
                rows_kept = self.postgres_rows_kept(tsq, s, &tree).await?;
            }
            self.postgres_rows_total(fts.as_deref(), s, &tree, rows_kept).await?
        } else if let (DbBackend::Postgres, true, Some(tsq)) = (backend, text_only(s), &fts) {
            // Words alone in another order than relevance: the relevance search's total (kept counts).
            // Counted here, every such search hashed all the listings of its status against the
            // words' matches: `q=workflow&sort=newest` took 67 ms at 100k listings, its page 2.
            let deep = page.offset() as i64 + i64::from(page.per_page());
            self.postgres_text_total(tsq, s.status, deep).await?
        } else {
            self.count(&count).await?
        };
        if counted == 0 && !unfiltered && week.is_none() {
            // Nothing matches (the count, kept or capped, is exact at zero): no page to read. Read
            // anyway, a page in an order walked that order's whole index for 20 rows that were not
            // there: `q=qqqzx&sort=trending` took 8.7–9.7 s at a million PostgreSQL listings.
            return Ok(Paged::new(vec![], page, 0));
        }

        if let (DbBackend::Postgres, true, Some(tsq), SearchSort::Relevance) =
            (backend, on_search_rows(s), &fts, s.sort)
        {
            return self.postgres_rows_search(tsq, s, &tree, page, counted, rows_kept).await;
        }
        if s.sort == SearchSort::Relevance && fts.is_some() {
            // Ranks a bounded candidate set: the first matches the index hands out (with the filters
            // applied), as many as the page needs and at least RANKED_CANDIDATES. On SQLite the newest,
            // as for the word alone (FTS5 walks its doclists backwards as cheaply): in rowid order the
            // oldest thousand of a word's matches in a category were ranked and a newer one never was.
            let candidates = (page.offset() as i64 + i64::from(page.per_page())).max(RANKED_CANDIDATES);
            let mut q = RawQuery::new(backend);
            q.sql(SUMMARY_SELECT).sql(" FROM (SELECT l.id AS id, ");
            match backend {
                DbBackend::Postgres => {
                    // `ts_rank`, as `listing_text_search` ranks (migration 51): a word's repeats count
                    // less and less, and it skips `ts_rank_cd`'s 32 KiB zero-fill for every row.
                    let text = s.q.as_ref().map(|t| t.as_str()).unwrap_or_default();
                    let tsq = fts_query(backend, text).unwrap_or_default();
                    q.sql("ts_rank(ls.doc, ");
                    crate::sql::pg_tsquery(&mut q, &tsq);
                    q.sql(") AS r");
                }
                _ => {
                    q.sql("-").sql(BM25).sql(" AS r");
                }
            }
            self.search_from_where(&mut q, s, &tree, TreeCheck::List, false, WordsMatch::Drive);
            if backend == DbBackend::Sqlite {
                q.sql(" ORDER BY listings_fts.rowid DESC");
            }
            q.sql(" LIMIT ")
                .count_of_rows(candidates)
                .sql(") f JOIN listings l ON l.id = f.id ORDER BY f.r DESC, l.votes_count DESC, l.id DESC")
                .page(page);
            let rows = SummaryRow::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?;
            let items = rows.into_iter().filter_map(SummaryRow::into_summary).collect();
            return Ok(Paged::counted_to_cap(items, page, counted));
        }

        if let (SearchSort::Votes, Some(since)) = (s.sort, s.only_launched_since().and_then(today_midnight)) {
            // Today's launches, the home page's: a run of one index (migration 55), read as any page of
            // a list (the pool's for a deep page).
            let rows = self.paged_read::<SummaryRow>(today_page(backend, s.status, since, page), page).await?;
            let items = rows.into_iter().filter_map(SummaryRow::into_summary).collect();
            return Ok(Paged::counted_to_cap(items, page, counted));
        }
        let mut q = RawQuery::new(backend);
        q.sql(SUMMARY_SELECT);
        let kept = |q: &mut RawQuery| {
            match week {
                Some(w) => q
                    .sql("COALESCE((SELECT k.listings FROM week_listing_counts k WHERE k.status = ")
                    .constant(status_of(s.status).as_str())
                    .sql(" AND k.launch_week = ")
                    .date_constant(w.monday()),
                None => q
                    .sql("COALESCE((SELECT k.listings FROM listing_counts k WHERE k.status = ")
                    .constant(status_of(s.status).as_str()),
            };
            q.sql("), 0)");
        };
        if unfiltered || week.is_some() {
            q.sql(", ");
            kept(&mut q);
            q.sql(" AS page_total");
        }
        // A category alone, live, walked in an order of `listings`' own indexes: SQLite builds the list
        // of the tree's listings before the walk, or probes each walked listing's links; which is less
        // work follows from the tree's share of the live listings (`probe_the_tree`).
        let check = match (backend, s.only_category(), s.status, s.sort) {
            (DbBackend::Sqlite, Some(_), StatusFilter::Live, sort) if sort != SearchSort::MostViewed => {
                let live = self.listings_in(ListingStatus::Live).await?;
                let end = page.offset().saturating_add(u64::from(page.per_page()));
                if probe_the_tree(counted, live, end) { TreeCheck::Probe } else { TreeCheck::List }
            }
            _ => TreeCheck::List,
        };
        // Words in an order of `listings`' indexes (relevance ranked above): SQLite reads and sorts
        // every match, or walks the order's index checking each listing against the list of matches;
        // which is less work follows from the matches' share of the listings (`walk_the_order`).
        // PostgreSQL, a search on its search rows or of words alone: the same choice between reading
        // the matches first and walking the order's index (which the planner makes, misjudging a
        // sparse match).
        let words = match (backend, &fts) {
            (DbBackend::Sqlite, Some(_)) => self.walk_or_read(counted, s.status, page).await?,
            (DbBackend::Postgres, _) if chooses_rows_first(s) => self.walk_or_read(counted, s.status, page).await?,
            _ => WordsMatch::Drive,
        };
        let by_views = s.sort == SearchSort::MostViewed;
        let with_fts = self.search_from_where(&mut q, s, &tree, check, by_views, words).unwrap_or(false);
        q.sql(search_order(s.sort, with_fts, s.status));
        q.sql("").page(page);
        if !unfiltered && week.is_none() {
            // A filter can make the database read far more rows than the page: this stays on the pool.
            let rows = SummaryRow::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?;
            let items = rows.into_iter().filter_map(SummaryRow::into_summary).collect();
            return Ok(Paged::counted_to_cap(items, page, counted));
        }
        // A bounded read goes where the short reads go (a deep page: the pool, in a slot); a week in
        // another order stays on the pool.
        let rows = if bounded {
            self.paged_read::<Counted<SummaryRow>>(q.build(), page).await?
        } else {
            Counted::<SummaryRow>::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?
        };
        let total = self.page_total(&rows, kept).await?;
        let items = rows.into_iter().filter_map(|r| r.row.into_summary()).collect();
        Ok(Paged::new(items, page, total))
    }

    async fn listing_details(&self, id: ListingId, paid_sections: bool) -> RepoResult<ListingDetails> {
        use crate::entity::{awards, founders, listing_updates, milestones, stories};
        let id = id.get();
        // Founders with their title at this listing, in one join.
        let mut q = RawQuery::new(self.backend());
        q.sql("SELECT ").sql(&crate::sql::columns::<founders::Entity>("f")).sql(", lf.title AS listing_title FROM listing_founders lf JOIN founders f ON f.id = lf.founder_id WHERE lf.listing_id = ")
            .bind(id)
            .sql(" ORDER BY lf.position");
        let founders = founders::Entity::find()
            .from_raw_sql(q.build())
            .into_model::<FounderWithTitle>()
            .all(&self.db)
            .await
            .map_err(repo_err)?
            .into_iter()
            .map(|r| (crate::founders::to_founder(r.founder), r.listing_title))
            .collect();
        // Raw statements, as in `load_where`: the select builder costs more than the queries.
        let raw = |sql: &str| {
            let mut q = RawQuery::new(self.backend());
            q.sql(sql).bind(id);
            q
        };
        let mut uq =
            raw(&format!("SELECT {} FROM listing_updates WHERE listing_id = ", columns::<listing_updates::Entity>("")));
        uq.sql(" ORDER BY posted_at DESC, id DESC LIMIT 50");
        let updates = listing_updates::Entity::find()
            .from_raw_sql(uq.build())
            .all(&self.db)
            .await
            .map_err(repo_err)?
            .into_iter()
            .map(|u| ListingUpdate { title: u.title, body: u.body, posted_at: u.posted_at.with_timezone(&Utc) })
            .collect();
        let milestones = if !paid_sections {
            Vec::new()
        } else {
            let mut mq =
                raw(&format!("SELECT {} FROM milestones WHERE listing_id = ", columns::<milestones::Entity>("")));
            mq.sql(" ORDER BY date, id");
            milestones::Entity::find()
                .from_raw_sql(mq.build())
                .all(&self.db)
                .await
                .map_err(repo_err)?
                .into_iter()
                .filter_map(|m| {
                    to_milestone(m.id, &m.date.format("%Y-%m-%d").to_string(), m.title, m.description, m.url)
                })
                .collect()
        };
        let story = if !paid_sections {
            None
        } else {
            stories::Entity::find()
                .from_raw_sql(
                    raw(&format!("SELECT {} FROM stories WHERE listing_id = ", columns::<stories::Entity>(""))).build(),
                )
                .one(&self.db)
                .await
                .map_err(repo_err)?
                .and_then(|s| to_story(&s.sections))
        };
        let mut aq = raw(&format!("SELECT {} FROM awards WHERE listing_id = ", columns::<awards::Entity>("")));
        aq.sql(" ORDER BY week_start DESC, id");
        let awards = awards::Entity::find()
            .from_raw_sql(aq.build())
            .all(&self.db)
            .await
            .map_err(repo_err)?
            .into_iter()
            .filter_map(|a| to_award(a.week_start, i64::from(a.rank), a.listing_id, a.votes))
            .collect();
        Ok(ListingDetails { founders, updates, milestones, story, awards })
    }

    async fn listing_with_details(&self, slug: &Slug) -> RepoResult<Option<(Listing, ListingDetails)>> {
        // One statement: the listing row and its kept details (migration 36: triggers keep them in the
        // transaction that changes them), each part a JSON array. Each query is a hand-off to the database
        // and back (on SQLite, to the connection's thread and back: about 35 µs, measured); computing the
        // details here took six aggregates, half of PostgreSQL's time for a profile. On PostgreSQL,
        // concurrent profile reads share that hand-off (see [`crate::profiles`]).
        let row = match &self.profiles {
            Some(batch) => batch.read(slug).await?,
            None => {
                let q = profile_query(self.backend(), &[slug.as_str()]);
                self.short_read::<ProfileRow>(q.build()).await?.into_iter().next()
            }
        };
        row.map(profile_from_row).transpose()
    }

    async fn alternatives(&self, id: ListingId, limit: u32) -> RepoResult<Vec<(ListingSummary, bool)>> {
        let q = alternatives_of(self.backend(), id.get(), i64::from(limit));
        let rows = self.short_read::<AlternativeRow>(q).await?;
        // Put in order here, not by a third sort in the statement: at most twice `limit` rows.
        let mut all: Vec<(ListingSummary, bool)> =
            rows.into_iter().filter_map(|r| Some((r.listing.into_summary()?, r.approved != 0))).collect();
        all.sort_by(|(a, a_approved), (b, b_approved)| {
            b_approved.cmp(a_approved).then(b.votes.cmp(&a.votes)).then(a.id.cmp(&b.id))
        });
        all.truncate(limit as usize);
        Ok(all)
    }

    async fn ranked(&self, metric: RankMetric, page: PageRequest) -> RepoResult<Paged<(ListingSummary, i64)>> {
        let rows = self.paged_read::<Counted<WeeklyRow>>(ranked_page(self.backend(), metric, page), page).await?;
        let col = board_column(metric);
        let total = self.page_total(&rows, |q| kept_board_total(q, col)).await?;
        let items = rows.into_iter().filter_map(|r| Some((r.row.listing.into_summary()?, r.row.week_votes))).collect();
        Ok(Paged::new(items, page, total))
    }

    async fn weekly_votes(&self, week: LaunchWeek, page: PageRequest) -> RepoResult<Paged<(ListingSummary, i64)>> {
        let rows = self.paged_read::<Counted<WeeklyRow>>(weekly_page(self.backend(), week, page), page).await?;
        let total = self.page_total(&rows, |q| kept_week_total(q, week)).await?;
        let mut items: Vec<(ListingSummary, i64)> =
            rows.into_iter().filter_map(|r| Some((r.row.listing.into_summary()?, r.row.week_votes))).collect();
        if tallies_first(self.backend(), page) {
            // The join's rows come in no set order (`weekly_page`).
            items.sort_by(|(a, a_votes), (b, b_votes)| b_votes.cmp(a_votes).then(a.id.cmp(&b.id)));
        }
        Ok(Paged::new(items, page, total))
    }

    async fn week_launches(&self, week: LaunchWeek, status: StatusFilter, max: u32) -> RepoResult<Vec<ListingSummary>> {
        // One statement from `(status, launch_week, votes_count)` (migration 29), without the capped
        // count each page of a search carries: the calendar read a big week as five pages and five
        // counts (ten statements) before.
        let order = match status {
            StatusFilter::Live => " ORDER BY l.votes_count DESC, l.id DESC",
            StatusFilter::Upcoming => " ORDER BY l.id ASC",
        };
        let mut q = RawQuery::new(self.backend());
        q.sql(SUMMARY_SELECT)
            .sql(" FROM listings l WHERE l.status = ")
            .constant(status_of(status).as_str())
            .sql(" AND l.launch_week = ")
            .date_constant(week.monday())
            .sql(order)
            .sql(" LIMIT ")
            .count_of_rows(i64::from(max));
        let rows = self.short_read::<SummaryRow>(q.build()).await?;
        Ok(rows.into_iter().filter_map(SummaryRow::into_summary).collect())
    }

    async fn max_listing_id(&self) -> RepoResult<i64> {
        #[derive(Debug, FromQueryResult)]
        struct Max {
            m: Option<i64>,
        }
        let mut q = RawQuery::new(self.backend());
        q.sql("SELECT MAX(id) AS m FROM listings");
        let row = Max::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)?;
        Ok(row.and_then(|r| r.m).unwrap_or(0))
    }

    async fn live_slugs_in(&self, after: i64, up_to: i64) -> RepoResult<Vec<(Slug, DateTime<Utc>)>> {
        #[derive(Debug, FromQueryResult)]
        struct Row {
            slug: String,
            updated_at: chrono::DateTime<chrono::FixedOffset>,
        }
        // A range of the primary key: the cost is the range's rows, however many listings there are.
        // SQLite otherwise picks the status index and walks every live listing for each range (17 ms
        // for a slice of 2 000 ids at 100 000 listings, 3 ms with the key; sqlite3, measured).
        let table = match self.backend() {
            DbBackend::Sqlite => "listings NOT INDEXED",
            _ => "listings",
        };
        let mut q = RawQuery::new(self.backend());
        q.sql("SELECT slug, updated_at FROM ")
            .sql(table)
            .sql(" WHERE id > ")
            .bind(after)
            .sql(" AND id <= ")
            .bind(up_to)
            .sql(" AND status = 'live' ORDER BY id");
        let rows = Row::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?;
        Ok(rows.into_iter().map(|r| (Slug::from_db(r.slug), r.updated_at.with_timezone(&Utc))).collect())
    }

    async fn count_live_listings(&self) -> RepoResult<u64> {
        self.listings_in(ListingStatus::Live).await
    }

    /// SQLite: brings `listing_terms` (migration 32) up to date with the full-text index when listings
    /// changed since it was last brought up. The index's terms are read a run of [`TERMS_CHUNK`] at a
    /// time, outside any write (all of them: a walk of every doclist, 136 ms at 100k listings), and
    /// only the terms of the run whose count changed are then written. The change count is read
    /// before the first run and recorded after the last, so a change made meanwhile leaves the table
    /// marked behind.
    ///
    /// PostgreSQL: counts every term's listings again (`listing_status_terms`, migration 34) in one
    /// statement when `listing_search` changed since, writing the counts that changed (100k
    /// listings: 0.3 s).
    async fn refresh_search_terms(&self) -> RepoResult<bool> {
        #[derive(Debug, FromQueryResult)]
        struct State {
            changes: i64,
            refreshed: i64,
        }
        #[derive(Debug, FromQueryResult)]
        struct Term {
            term: String,
            docs: i64,
        }
        #[derive(Debug, FromQueryResult)]
        struct KeptTerm {
            term: String,
            docs: i64,
            live: Option<i64>,
        }
        #[derive(Debug, FromQueryResult)]
        struct Refreshed {
            refreshed: bool,
        }
        if self.backend() == DbBackend::Postgres {
            // Waits for another instance's refresh however long it runs, then finds the table current.
            let txn = sea_orm::TransactionTrait::begin(&self.db).await.map_err(repo_err)?;
            crate::db::unbounded_lock_wait(&txn).await.map_err(repo_err)?;
            let refresh = Statement::from_string(DbBackend::Postgres, "SELECT listing_terms_refresh() AS refreshed");
            let row = Refreshed::find_by_statement(refresh).one(&txn).await.map_err(repo_err)?;
            txn.commit().await.map_err(repo_err)?;
            return Ok(row.is_some_and(|r| r.refreshed));
        }
        let read = |sql: &str| Statement::from_string(DbBackend::Sqlite, sql);
        let state = State::find_by_statement(read("SELECT changes, refreshed FROM listing_terms_state"))
            .one(&self.db)
            .await
            .map_err(repo_err)?;
        let Some(State { changes, refreshed }) = state else {
            return Err(RepoError::Unexpected("listing_terms_state has no row".into()));
        };
        if changes == refreshed {
            return Ok(false);
        }
        // In runs of TERMS_CHUNK terms, so the memory a refresh takes does not grow with the vocabulary.
        let mut after = String::new();
        loop {
            let mut q = RawQuery::new(DbBackend::Sqlite);
            q.sql("SELECT term, doc AS docs FROM listings_fts_vocab WHERE term > ")
                .bind(after.clone())
                .sql(" ORDER BY term LIMIT ")
                .count_of_rows(TERMS_CHUNK);
            let index: Vec<Term> = Term::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?;
            let last_run = (index.len() as i64) < TERMS_CHUNK;
            // The kept terms of the same range: up to this run's last term, or all the rest after the last run.
            let mut q = RawQuery::new(DbBackend::Sqlite);
            q.sql("SELECT term, docs, live FROM listing_terms WHERE term > ").bind(after.clone());
            if let (false, Some(last)) = (last_run, index.last()) {
                q.sql(" AND term <= ").bind(last.term.clone());
            }
            let kept: HashMap<String, (i64, Option<i64>)> = KeptTerm::find_by_statement(q.build())
                .all(&self.db)
                .await
                .map_err(repo_err)?
                .into_iter()
                .map(|t| (t.term, (t.docs, t.live)))
                .collect();
            // The live listings of each term on at least as many listings as a search ranks: a
            // search of that word alone takes its total from here instead of counting (migration 43).
            let mut fresh: HashMap<&str, (i64, Option<i64>)> = HashMap::with_capacity(index.len());
            for t in &index {
                let live = if t.docs >= RANKED_CANDIDATES { self.count_live_term(&t.term).await? } else { None };
                fresh.insert(t.term.as_str(), (t.docs, live));
            }
            let changed: serde_json::Map<String, serde_json::Value> = index
                .iter()
                .filter_map(|t| {
                    let now = fresh.get(t.term.as_str()).copied()?;
                    (kept.get(&t.term) != Some(&now)).then(|| (t.term.clone(), serde_json::json!([now.0, now.1])))
                })
                .collect();
            let gone: Vec<&String> = kept.keys().filter(|t| !fresh.contains_key(t.as_str())).collect();
            if !changed.is_empty() || !gone.is_empty() {
                let txn = self.begin_write().await?;
                let mut upsert = RawQuery::new(DbBackend::Sqlite);
                upsert
                    .sql("INSERT INTO listing_terms (term, docs, live) SELECT key, json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(")
                    .bind(serde_json::Value::Object(changed).to_string())
                    .sql(") WHERE true ON CONFLICT (term) DO UPDATE SET docs = excluded.docs, live = excluded.live");
                txn.execute_raw(upsert.build()).await.map_err(repo_err)?;
                let mut delete = RawQuery::new(DbBackend::Sqlite);
                delete
                    .sql("DELETE FROM listing_terms WHERE term IN (SELECT value FROM json_each(")
                    .bind(serde_json::to_string(&gone).map_err(|e| RepoError::Unexpected(e.to_string().into()))?)
                    .sql("))");
                txn.execute_raw(delete.build()).await.map_err(repo_err)?;
                txn.commit().await.map_err(repo_err)?;
            }
            match (last_run, index.last()) {
                (false, Some(last)) => after = last.term.clone(),
                _ => break,
            }
        }
        let mut done = RawQuery::new(DbBackend::Sqlite);
        done.sql("UPDATE listing_terms_state SET refreshed = ").bind(changes);
        self.db.execute_raw(done.build()).await.map_err(repo_err)?;
        Ok(true)
    }
}

/// A listing's row and its kept details (migration 36), each part a JSON array: what a profile reads.
#[derive(Debug, Clone, FromQueryResult)]
pub(crate) struct ProfileRow {
    #[sea_orm(nested)]
    listing: listings::Model,
    extra_category_ids: Option<String>,
    founders_json: Option<String>,
    updates_json: Option<String>,
    milestones_json: Option<String>,
    story_sections: Option<String>,
    awards_json: Option<String>,
    views: Option<i64>,
}

impl FromSqliteRow for ProfileRow {
    fn from_sqlite(row: &rusqlite::Row<'_>, at: &mut usize) -> rusqlite::Result<Self> {
        Ok(Self {
            listing: listings::Model::from_sqlite(row, at)?,
            extra_category_ids: column(row, at, "extra_category_ids")?,
            founders_json: column(row, at, "founders_json")?,
            updates_json: column(row, at, "updates_json")?,
            milestones_json: column(row, at, "milestones_json")?,
            story_sections: column(row, at, "story_sections")?,
            awards_json: column(row, at, "awards_json")?,
            views: column(row, at, "views")?,
        })
    }
}

impl FromPgRow for ProfileRow {
    fn from_pg(row: &tokio_postgres::Row, at: &mut usize) -> Result<Self, String> {
        Ok(Self {
            listing: listings::Model::from_pg(row, at)?,
            extra_category_ids: crate::pipe::pg_column(row, at, "extra_category_ids")?,
            founders_json: crate::pipe::pg_column(row, at, "founders_json")?,
            updates_json: crate::pipe::pg_column(row, at, "updates_json")?,
            milestones_json: crate::pipe::pg_column(row, at, "milestones_json")?,
            story_sections: crate::pipe::pg_column(row, at, "story_sections")?,
            awards_json: crate::pipe::pg_column(row, at, "awards_json")?,
            views: crate::pipe::pg_column(row, at, "views")?,
        })
    }
}

/// A profile's kept details as their JSON rows hold a founder.
type FounderJson = (i64, String, String, String, String, Option<String>, String, String, Option<i64>, String);

impl ProfileRow {
    pub(crate) fn slug(&self) -> &str {
        &self.listing.slug
    }
}

/// The statement of a profile read: the listing row and its kept details, of one slug (SQLite, and
/// PostgreSQL for a read alone) or of several in one statement (PostgreSQL, reads asked together:
/// [`crate::profiles`]; joined by commas, which slugs never hold: [`Slug::parse`]).
///
/// Two shapes, not `slug = ANY(…)` for one too: PostgreSQL guesses a list holds 10 slugs, so for one
/// slug its generic plan looked ten times dearer than a plan made for the value, and it planned the
/// statement again at every run. pgbench on the 100k database: 3 700–3 800 reads a second that way,
/// 8 700–9 000 with `slug = $1`.
pub(crate) fn profile_query(backend: DbBackend, slugs: &[&str]) -> RawQuery {
    let mut q = RawQuery::new(backend);
    q.sql("SELECT ")
        .sql(&LISTING_COLUMNS)
        .sql(
            ", d.extra_category_ids, d.founders_json, d.updates_json, d.milestones_json, d.story_sections, \
             d.awards_json, ",
        )
        .sql(VIEWS_SQL)
        .sql(" AS views FROM listings l LEFT JOIN listing_details d ON d.listing_id = l.id WHERE l.slug = ");
    match slugs {
        [one] => q.bind((*one).to_owned()),
        many => q.sql("ANY(string_to_array(").bind(many.join(",")).sql(", ','))"),
    };
    q
}

/// A listing and its details from a profile row.
pub(crate) fn profile_from_row(r: ProfileRow) -> RepoResult<(Listing, ListingDetails)> {
    let id = r.listing.id;
    let founders = from_json_rows::<FounderJson>(r.founders_json, "founders")?
        .into_iter()
        .map(|(id, slug, name, headline, bio, country, avatar_url, socials, user_id, title)| {
            let founder = domain::founder::Founder {
                id: domain::ids::FounderId::from_db(id),
                slug: Slug::from_db(slug),
                name,
                headline,
                bio,
                country,
                avatar_url,
                socials: socials_from_json(&socials),
                user_id: user_id.map(domain::ids::UserId::from_db),
            };
            (founder, title)
        })
        .collect();
    let updates = from_json_rows::<(String, String, String)>(r.updates_json, "updates")?
        .into_iter()
        .map(|(title, body, at)| {
            let posted_at =
                json_time(&at).ok_or_else(|| RepoError::Unexpected(format!("update time {at:?}").into()))?;
            Ok(ListingUpdate { title, body, posted_at })
        })
        .collect::<RepoResult<_>>()?;
    let milestones = from_json_rows::<(i64, String, String, String, String)>(r.milestones_json, "milestones")?
        .into_iter()
        .filter_map(|(id, date, title, description, url)| to_milestone(id, &date, title, description, url))
        .collect();
    let awards = from_json_rows::<(chrono::NaiveDate, i64, i64)>(r.awards_json, "awards")?
        .into_iter()
        .filter_map(|(week, rank, votes)| to_award(week, rank, id, votes))
        .collect();
    let story = r.story_sections.as_deref().and_then(to_story);
    let listing = to_listing(r.listing, parse_extras(r.extra_category_ids), r.views.unwrap_or(0));
    Ok((listing, ListingDetails { founders, updates, milestones, story, awards }))
}

#[cfg(test)]
mod tests {
    use crate::plans::{plan_of, postgres_planning, sqlite_db};
    use domain::listing::RankMetric;
    use sea_orm::ConnectionTrait;

    /// A search of live listings within `category`, for words `q` or none.
    fn in_category(q: Option<&str>, category: &str) -> domain::listing::ListingSearch {
        domain::listing::ListingSearch {
            q: q.map(|q| domain::listing::SearchText::parse(q).expect("a search")),
            category: Some(domain::slug::Slug::parse(category).expect("a slug")),
            ..Default::default()
        }
    }

    /// The texts bound to a statement, in order.
    fn bound_texts(stmt: &sea_orm::Statement) -> Vec<String> {
        let values = stmt.values.iter().flat_map(|v| v.0.iter());
        values
            .filter_map(|v| match v {
                sea_orm::Value::String(Some(text)) => Some(text.to_string()),
                _ => None,
            })
            .collect()
    }

    /// A word within a category on SQLite is one match in the full-text index: the category's tokens
    /// are matched with the word, so the statement neither lists the category's listings nor probes
    /// their links (checking each of the word's matches against that list took 16–20 ms of a 42 954-match
    /// word at 100k, the match 3 ms). Read from the statement's bytecode: no cursor on
    /// `listing_categories` or its indexes, and the tree's tokens in the bound query.
    #[tokio::test]
    async fn sqlite_matches_a_word_s_category_in_the_text_index() {
        let (_t, db) = sqlite_db().await;
        let store = crate::SeaOrmStore::new(db.clone());
        let s = in_category(Some("workflow"), "api-tools");
        let mut q = crate::sql::RawQuery::new(sea_orm::DbBackend::Sqlite);
        q.sql("EXPLAIN SELECT 1");
        let drives =
            store.search_from_where(&mut q, &s, &[10, 11], super::TreeCheck::List, false, super::WordsMatch::Drive);
        assert_eq!(drives, Some(true), "the FTS table drives");
        let stmt = q.build();
        let bound = bound_texts(&stmt);
        let mark = migration::CATEGORY_MARK;
        let tokens = format!("category_tokens:(\"{mark}10\" OR \"{mark}11\")");
        assert!(bound.iter().any(|b| b.ends_with(&tokens)), "{bound:?}");
        let roots: Vec<i64> = db
            .query_all_raw(sea_orm::Statement::from_string(
                sea_orm::DbBackend::Sqlite,
                "SELECT rootpage FROM sqlite_master WHERE tbl_name = 'listing_categories' AND rootpage > 0",
            ))
            .await
            .expect("the schema")
            .iter()
            .map(|r| r.try_get::<i64>("", "rootpage").expect("a page"))
            .collect();
        assert!(!roots.is_empty(), "listing_categories and its indexes");
        let ops: Vec<(String, i64)> = db
            .query_all_raw(stmt)
            .await
            .expect("explain")
            .iter()
            .map(|r| (r.try_get::<String>("", "opcode").expect("an opcode"), r.try_get::<i64>("", "p2").expect("p2")))
            .collect();
        assert!(ops.iter().any(|(op, _)| op == "VFilter"), "the index is matched: {ops:?}");
        assert!(
            !ops.iter().any(|(op, root)| op == "OpenRead" && roots.contains(root)),
            "the category's links are not read: {ops:?}"
        );
    }

    /// Words with a stage, pricing model and country on SQLite: the values are matched in the text
    /// index with the words, as their tokens (migration 65), and never checked on the listing row,
    /// which the count of such a search does not read.
    #[tokio::test]
    async fn sqlite_matches_words_values_in_the_text_index() {
        let s = domain::listing::ListingSearch {
            stage: Some(domain::slug::Slug::parse("growing").expect("a stage")),
            pricing_model: Some(domain::listing::PricingModel::parse("Free").expect("a pricing model")),
            country: Some(domain::listing::CountryCode::parse("us").expect("a country")),
            ..in_category(Some("workflow"), "api-tools")
        };
        assert!(super::text_in_sqlite_index(&s), "ranked and counted in the index");
        let (_t, db) = sqlite_db().await;
        let store = crate::SeaOrmStore::new(db);
        let mut q = crate::sql::RawQuery::new(sea_orm::DbBackend::Sqlite);
        q.sql("SELECT 1");
        store.search_from_where(&mut q, &s, &[10], super::TreeCheck::List, false, super::WordsMatch::Drive);
        let stmt = q.build();
        assert!(!stmt.sql.contains("l.stage") && !stmt.sql.contains("pricing_model"), "{}", stmt.sql);
        assert!(!stmt.sql.contains("l.country"), "{}", stmt.sql);
        let [stage, pricing, country] = migration::SQLITE_VALUE_MARKS;
        let values = format!(
            " AND value_tokens:\"{}\" AND value_tokens:\"{}\" AND value_tokens:\"{}\"",
            migration::sqlite_value_token(stage, "growing"),
            migration::sqlite_value_token(pricing, "free"),
            migration::sqlite_value_token(country, "US")
        );
        let bound = bound_texts(&stmt);
        assert!(bound.iter().any(|b| b.ends_with(&values)), "{bound:?}");
    }

    /// Without words, a category with a value, or two values, are counted in SQLite's text index: the
    /// status, the tree's tokens and each value's token in one match, as with words. A category or a
    /// value alone keeps its kept count, words keep their own match, and a launch week keeps the
    /// search on the listing rows.
    #[test]
    fn sqlite_counts_a_category_with_a_value_or_two_values_in_the_text_index() {
        use domain::listing::{ListingSearch, PricingModel, StatusFilter};
        let growing = Some(domain::slug::Slug::parse("growing").expect("a stage"));
        let tree_and_stage = ListingSearch { stage: growing.clone(), ..in_category(None, "api-tools") };
        assert!(super::facets_in_sqlite_index(&tree_and_stage), "a tree and a stage");
        let two_values = ListingSearch {
            stage: growing.clone(),
            pricing_model: Some(PricingModel::parse("Free").expect("a pricing model")),
            status: StatusFilter::Upcoming,
            ..Default::default()
        };
        assert!(super::facets_in_sqlite_index(&two_values), "two values");
        let week = domain::week::LaunchWeek::containing(chrono::NaiveDate::from_ymd_opt(2026, 12, 7).expect("a day"));
        for (one, what) in [
            (in_category(None, "api-tools"), "a tree alone: its kept count"),
            (ListingSearch { stage: growing.clone(), ..Default::default() }, "a value alone: its kept count"),
            (ListingSearch { stage: growing.clone(), ..in_category(Some("workflow"), "api-tools") }, "words"),
            (ListingSearch { launch_week: Some(week), ..tree_and_stage.clone() }, "a week"),
        ] {
            assert!(!super::facets_in_sqlite_index(&one), "{what}");
        }
        let [stage, pricing, _] = migration::SQLITE_VALUE_MARKS;
        let mark = migration::CATEGORY_MARK;
        assert_eq!(
            super::sqlite_facets_match(&tree_and_stage, &[10, 11]),
            format!(
                "status:\"live\" AND category_tokens:(\"{mark}10\" OR \"{mark}11\") AND value_tokens:\"{}\"",
                migration::sqlite_value_token(stage, "growing")
            )
        );
        assert_eq!(
            super::sqlite_facets_match(&two_values, &[]),
            format!(
                "status:\"scheduled\" AND value_tokens:\"{}\" AND value_tokens:\"{}\"",
                migration::sqlite_value_token(stage, "growing"),
                migration::sqlite_value_token(pricing, "free")
            )
        );
    }

    /// Words in an order of `listings`' indexes on SQLite, as each way writes them: as a list, the walk
    /// of the order's index checks each listing against the list of matches and nothing is sorted;
    /// driven by the index of words, every match is read and sorted (what `workflow` newest first did
    /// at 100k: 112 ms, against 20 as a list).
    #[tokio::test]
    async fn sqlite_walks_an_order_s_index_against_the_list_of_a_word_s_matches() {
        use domain::listing::{SearchSort, StatusFilter};
        let (_t, db) = sqlite_db().await;
        let store = crate::SeaOrmStore::new(db.clone());
        for sort in [
            SearchSort::Newest,
            SearchSort::Votes,
            SearchSort::Trending,
            SearchSort::MostFollowed,
            SearchSort::MostViewed,
        ] {
            for status in [StatusFilter::Live, StatusFilter::Upcoming] {
                for (words, listed) in [(super::WordsMatch::List, true), (super::WordsMatch::Drive, false)] {
                    let s = domain::listing::ListingSearch {
                        q: Some(domain::listing::SearchText::parse("workflow").expect("words")),
                        sort,
                        status,
                        ..Default::default()
                    };
                    let mut q = crate::sql::RawQuery::new(sea_orm::DbBackend::Sqlite);
                    q.sql(super::SUMMARY_SELECT);
                    let by_views = sort == SearchSort::MostViewed;
                    assert_eq!(
                        store.search_from_where(&mut q, &s, &[], super::TreeCheck::List, by_views, words),
                        Some(true)
                    );
                    q.sql(super::search_order(sort, true, status)).sql(" LIMIT 20");
                    let lines = plan_of(&db, q.build()).await;
                    let what = format!("{sort:?}, {status:?}, {words:?}: {lines:?}");
                    let sorted = lines.iter().any(|l| l.contains("TEMP B-TREE FOR ORDER BY"));
                    let list = lines.iter().any(|l| l.contains("LIST SUBQUERY"));
                    assert_eq!((list, sorted), (listed, !listed), "{what}");
                }
            }
        }
    }

    /// The facets' rows alone when the words' postings outweigh the rows that scan reads, with the
    /// figures measured at a million listings: `co` (627 711 postings) with the US (45 029 of
    /// 779 547 live) scans the US; `kanban` (20 368) with `free` (129 782) intersects, as the scan
    /// would read every free listing to find 10 001.
    #[test]
    fn words_scan_the_facets_only_when_their_postings_outweigh_the_rows_read() {
        assert!(super::scan_the_facets(627_711, 627_711, 45_029, 779_547, 10_001));
        assert!(super::scan_the_facets(627_711, 627_711, 45_029, 779_547, 1_000), "the page's candidates");
        assert!(!super::scan_the_facets(20_368, 20_368, 129_782, 779_547, 10_001));
        assert!(!super::scan_the_facets(20_368, 20_368, 129_782, 779_547, 1_000));
        assert!(super::scan_the_facets(400, 400, 3, 400, 10_001), "a rare value: its rows, all of them");
        assert!(!super::scan_the_facets(20, 20, 3, 400, 10_001), "a rare word");
        assert!(!super::scan_the_facets(0, 0, 3, 400, 10_001), "a word no listing has");
        assert!(!super::scan_the_facets(400, 400, 0, 400, 10_001), "no listing has the value");
    }

    /// PostgreSQL knows how many listings of a status hold a value a search filters by, as the filter
    /// writes it (migration 68): a third of 3 000 listings scheduled, half of those free, growing and
    /// in the US, none of the live ones. Without the statistics the planner expected 5 of them free
    /// (no statistics on `lower(pricing_model)`) and 167 growing or in the US (the two shares
    /// multiplied), and read every scheduled listing to find the most viewed free ones.
    #[tokio::test]
    async fn postgres_estimates_a_status_and_a_value_together() {
        let Some(t) = test_support::postgres().await else { return };
        let db = crate::db::connect(&t.url).await.expect("connect");
        crate::db::migrate(&db).await.expect("migrate");
        let insert = "INSERT INTO listings (slug, name, status, plan, pricing_model, stage, country, created_at, updated_at) \
             SELECT 'l-' || i, 'L ' || i, CASE WHEN i % 3 = 0 THEN 'scheduled' ELSE 'live' END, 'free', \
             CASE WHEN i % 6 = 0 THEN 'Free' ELSE 'Paid' END, CASE WHEN i % 6 = 0 THEN 'growing' ELSE 'mvp' END, \
             CASE WHEN i % 6 = 0 THEN 'US' ELSE 'DE' END, now(), now() FROM generate_series(1, 3000) i";
        for sql in [insert, "ANALYZE listings"] {
            db.execute_unprepared(sql).await.expect(sql);
        }
        for filter in ["lower(l.pricing_model) = 'free'", "l.stage = 'growing'", "l.country = 'US'"] {
            let sql = format!("SELECT 1 FROM listings l WHERE l.status = 'scheduled' AND {filter}");
            let counted = db
                .query_one_raw(sea_orm::Statement::from_string(
                    sea_orm::DbBackend::Postgres,
                    format!("SELECT COUNT(*) AS n FROM ({sql}) t"),
                ))
                .await
                .expect("count")
                .expect("a row")
                .try_get::<i64>("", "n")
                .expect("n");
            assert_eq!(counted, 500, "{filter}");
            let plan = db
                .query_one_raw(sea_orm::Statement::from_string(sea_orm::DbBackend::Postgres, format!("EXPLAIN {sql}")))
                .await
                .expect("explain")
                .expect("a plan")
                .try_get::<String>("", "QUERY PLAN")
                .expect("its first line");
            let rows: f64 = plan
                .split("rows=")
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .and_then(|r| r.parse().ok())
                .unwrap_or_else(|| panic!("no estimate in {plan}"));
            assert!((400.0..=600.0).contains(&rows), "{filter}: {plan}");
        }
    }

    /// What `postgres_rows_kept` reads from the kept counts (each lexeme of the query as PostgreSQL
    /// parsed it, a prefix over every index word it begins, the values' and the tree's shares of the
    /// listings) and the plan of the count it chooses: the facets' index alone, never the
    /// words', when the facets' rows are read; both where they are intersected.
    #[tokio::test]
    async fn postgres_scans_the_facets_for_words_far_more_common_than_the_value() {
        use domain::listing::{CountryCode, ListingSearch, PricingModel, SearchText, StatusFilter};
        let Some(t) = test_support::postgres().await else { return };
        let db = crate::db::connect(&t.url).await.expect("connect");
        crate::db::migrate(&db).await.expect("migrate");
        for sql in [
            "INSERT INTO listing_counts (status, listings) VALUES ('live', 900000) \
             ON CONFLICT (status) DO UPDATE SET listings = EXCLUDED.listings",
            "INSERT INTO listing_status_terms (status, term, docs) VALUES ('live', 'co', 200000), \
             ('live', 'code', 150000), ('live', 'comet', 117749), ('live', 'cn', 900000), ('live', 'kanban', 40000), \
             ('scheduled', 'kanban', 900000)",
            "INSERT INTO listing_value_counts (status, field, value, listings) VALUES ('live', 'country', 'US', 45029), \
             ('live', 'pricing_model', 'free', 150000), ('live', 'stage', 'growing', 160000)",
            "INSERT INTO categories (id, slug, name, description, parent_id, position, faqs, attributes, synonyms, \
             live_listings, tree_live_listings) VALUES (7, 'birds', 'Birds', '', NULL, 0, '[]', '[]', '[]', 40, 40)",
        ] {
            db.execute_unprepared(sql).await.expect(sql);
        }
        let top = 7;
        let store = crate::SeaOrmStore::new(db.clone());
        let find = |q: &str, country: Option<&str>, pricing: Option<&str>| ListingSearch {
            q: Some(SearchText::parse(q).expect("words")),
            country: country.map(|c| CountryCode::parse(c).expect("a country")),
            pricing_model: pricing.map(|p| PricingModel::parse(p).expect("a pricing model")),
            ..Default::default()
        };
        let scan = |s: ListingSearch, tree: Vec<i64>| {
            let store = store.clone();
            async move {
                let tsq = crate::sql::fts_query(sea_orm::DbBackend::Postgres, s.q.as_ref().expect("words").as_str())
                    .expect("a query");
                store
                    .postgres_rows_kept(&tsq, &s, &tree)
                    .await
                    .expect("the kept counts")
                    .scan(domain::paging::COUNT_CAP + 1)
            }
        };
        use super::RowsScan::{Both, Facets};
        // `co:*` covers co, code and comet (467 749 postings), not cn.
        assert_eq!(scan(find("co", Some("US"), None), vec![]).await, Facets, "a common prefix, a rarer value");
        assert_eq!(scan(find("co", None, Some("FREE")), vec![]).await, Facets, "half the free listings match");
        assert_eq!(scan(find("kanban", None, Some("FREE")), vec![]).await, Both, "every free listing read");
        assert_eq!(scan(find("kanban", Some("US"), None), vec![]).await, Both, "a rarer word");
        assert_eq!(scan(find("kanban", Some("US"), Some("free")), vec![]).await, Both, "some 7 500 free in the US");
        assert_eq!(scan(find("co", Some("US"), Some("free")), vec![]).await, Facets, "and fewer rows to read");
        assert_eq!(scan(find("comet co", Some("US"), None), vec![]).await, Facets, "two words, both common");
        assert_eq!(scan(find("cn kanban", Some("US"), None), vec![]).await, Facets, "every US row, against 940 000");
        assert_eq!(
            scan(find("cn kanban", None, Some("free")), vec![]).await,
            Both,
            "every free row, the rarer's share"
        );
        assert_eq!(scan(find("qqqzx", Some("US"), None), vec![]).await, Both, "a word no listing has");
        let within = ListingSearch {
            category: Some(domain::slug::Slug::parse("any").expect("a slug")),
            ..find("kanban", None, None)
        };
        assert_eq!(scan(within.clone(), vec![top]).await, Facets, "a tree of 40 listings");
        let upcoming = ListingSearch { status: StatusFilter::Upcoming, ..within.clone() };
        assert_eq!(scan(upcoming, vec![top]).await, Both, "no kept tree count for upcoming listings");
        // The count's plan when the facets' rows are scanned, with every index cheaper than a
        // sequential scan: the facets' index, never the words', which are checked on each row.
        let (_p, txn) = postgres_planning().await.expect("PostgreSQL");
        let us = find("co", Some("US"), None);
        let tsq = crate::sql::fts_query(sea_orm::DbBackend::Postgres, "co").expect("a query");
        let mut q = crate::sql::RawQuery::new(sea_orm::DbBackend::Postgres);
        q.sql("SELECT COUNT(*) FROM (SELECT 1");
        super::search_rows_from_where(&mut q, Some(&tsq), &us, &[], Facets);
        q.sql(" LIMIT 10001) t");
        let lines = plan_of(&txn, q.build()).await;
        let reads = |index: &str| lines.iter().any(|l| l.contains(&format!("Index Scan on {index}")));
        assert!(reads("ix_listing_search_facets"), "{lines:?}");
        assert!(!reads("ix_listing_search_doc"), "{lines:?}");
        assert!(lines.iter().any(|l| l.contains("Filter: (ls.doc @@")), "the words checked on each row: {lines:?}");
    }

    /// As a list when the matches are a large enough share of the listings for the page's walk to be
    /// short: `workflow` (33 000 of 78 000 at 100k) lists, `larkhub` (86) and a deep page read.
    #[test]
    fn words_walk_the_order_only_when_they_are_a_large_share() {
        assert!(super::walk_the_order(33_000, 78_000, 20));
        assert!(super::walk_the_order(10_001, 78_000, 20), "the count's cap");
        assert!(!super::walk_the_order(86, 78_000, 20));
        assert!(!super::walk_the_order(1_000, 78_000, 20_000), "a deep page walks too far");
        assert!(!super::walk_the_order(0, 0, 20));
        assert!(super::walk_the_order(10, 12, 1), "the storage test's walked pages");
        assert!(!super::walk_the_order(10, 12, 20), "and its read one");
    }

    /// A big tree probes (`developer-tools` at 100k: 17 085 of 78 000 live listings), a small one or a
    /// deep page lists, and an empty tree never probes (it would walk every live listing).
    #[test]
    fn a_category_page_probes_the_links_only_when_the_tree_is_a_large_share() {
        assert!(super::probe_the_tree(17_085, 78_000, 20));
        assert!(!super::probe_the_tree(3_707, 78_000, 20));
        assert!(!super::probe_the_tree(17_085, 78_000, 2_000), "a deep page walks too far");
        assert!(!super::probe_the_tree(40, 78_000, 20));
        assert!(!super::probe_the_tree(0, 0, 20));
        assert!(super::probe_the_tree(11, 12, 1), "the storage test's probed page");
        assert!(!super::probe_the_tree(11, 12, 20), "and its listed page");
    }

    /// A category's live listings by votes on SQLite, as each check writes it: probed, the walk of
    /// `(status, votes)` looks up each listing's link to the tree by the links' key; listed, the tree's
    /// links are read into a list first.
    #[tokio::test]
    async fn sqlite_walks_a_category_by_votes_probing_or_listing_its_links() {
        let (_t, db) = sqlite_db().await;
        let store = crate::SeaOrmStore::new(db.clone());
        let s = in_category(None, "developer-tools");
        for (check, probe) in [(super::TreeCheck::Probe, true), (super::TreeCheck::List, false)] {
            let mut q = crate::sql::RawQuery::new(sea_orm::DbBackend::Sqlite);
            q.sql(super::SUMMARY_SELECT);
            assert_eq!(
                store.search_from_where(&mut q, &s, &[1, 10, 11], check, false, super::WordsMatch::Drive),
                Some(false)
            );
            q.sql(" ORDER BY l.votes_count DESC, l.id DESC LIMIT 20");
            let lines = plan_of(&db, q.build()).await;
            assert!(lines.iter().any(|l| l.starts_with("SEARCH l USING INDEX ix_listings_")), "{check:?}: {lines:?}");
            assert!(!lines.iter().any(|l| l.contains("TEMP B-TREE")), "{check:?} sorts: {lines:?}");
            let by_key = lines.iter().any(|l| l.contains("(listing_id=? AND category_id=?)"));
            let listed = lines.iter().any(|l| l.contains("LIST SUBQUERY"));
            assert_eq!((by_key, listed), (probe, !probe), "{check:?}: {lines:?}");
        }
    }

    /// On SQLite a page of the trending list is one range of `ix_listings_trending_cards` (migration
    /// 52): the index holds every column a summary shows, so no listing row is looked up. A column
    /// added to [`super::SUMMARY_SELECT`] and not to the index fails this.
    #[tokio::test]
    async fn sqlite_reads_a_trending_page_from_its_index_alone() {
        let (_t, db) = sqlite_db().await;
        let page = format!(
            "{} FROM listings l WHERE 1 = 1 AND l.status = 'live' ORDER BY l.trending_score DESC, l.id DESC LIMIT 20",
            super::SUMMARY_SELECT
        );
        let lines = plan_of(&db, sea_orm::Statement::from_string(sea_orm::DbBackend::Sqlite, page.clone())).await;
        assert_eq!(lines, ["SEARCH l USING COVERING INDEX ix_listings_trending_cards (status=?)"], "{page}");
    }

    /// A page of the community-weekly board, first and deep: on SQLite one range of the covering rank
    /// index (migration 72), with no sort and no read of `listings`. A column added to
    /// `TALLY_SUMMARY_SELECT` and not to the index fails this.
    #[tokio::test]
    async fn sqlite_reads_a_weekly_board_page_from_its_index_alone() {
        let (_t, db) = sqlite_db().await;
        let week = domain::week::LaunchWeek::of(chrono::Utc::now());
        for n in [1, 8] {
            let page = domain::paging::PageRequest::parse(Some(n), Some(20)).expect("a page");
            let lines = plan_of(&db, super::weekly_page(sea_orm::DbBackend::Sqlite, week, page)).await;
            let walk =
                "SEARCH v USING COVERING INDEX ix_vote_tallies_week_live_cards (week_start=? AND live=? AND votes>?)";
            assert_eq!(lines[0], walk, "page {n}: {lines:?}");
            // The kept total's subquery, and nothing else: no sort, no listing, no second read of a tally.
            assert_eq!(lines.len(), 3, "page {n}: {lines:?}");
            assert!(!lines.iter().any(|l| l.contains("TEMP B-TREE") || l.contains("listings")), "{lines:?}");
        }
    }

    /// On PostgreSQL a page walks the rank index in its order (no sort), and never reads `listings`;
    /// a deep page takes its keys from the index before it reads any tally's row.
    #[tokio::test]
    async fn postgres_reads_a_weekly_board_page_in_its_index_order() {
        let Some((_t, txn)) = postgres_planning().await else { return };
        let week = domain::week::LaunchWeek::of(chrono::Utc::now());
        for n in [1, 8] {
            let page = domain::paging::PageRequest::parse(Some(n), Some(20)).expect("a page");
            let lines = plan_of(&txn, super::weekly_page(sea_orm::DbBackend::Postgres, week, page)).await;
            assert!(lines.iter().any(|l| l.contains("using ix_vote_tallies_week_live_rank")), "{lines:?}");
            assert!(!lines.iter().any(|l| l.contains("Sort") || l.contains("listings")), "{lines:?}");
            if n > 1 {
                assert!(
                    lines.iter().any(|l| l.contains("Index Only Scan using ix_vote_tallies_week_live_rank")),
                    "{lines:?}"
                );
            }
        }
    }

    /// A page of today's launches is the top of one run of `ix_listings_status_launch_day_votes`
    /// (migration 55) on both stores: no sort, and no walk of other days' launches or of every live
    /// listing by votes. The expression the statement writes must be the index's, or this fails.
    async fn today_plan(db: &impl ConnectionTrait) -> Vec<String> {
        let midnight = chrono::Utc::now().date_naive().and_time(chrono::NaiveTime::MIN).and_utc();
        let page = domain::paging::PageRequest::parse(Some(2), Some(10)).expect("a page");
        let status = domain::listing::StatusFilter::Live;
        plan_of(db, super::today_page(db.get_database_backend(), status, midnight, page)).await
    }

    /// Each ranked board's second page and its plan: the top of the board's index (migration 56), ties
    /// included, with no sort.
    async fn board_plans(db: &impl ConnectionTrait) -> Vec<(RankMetric, Vec<String>)> {
        let page = domain::paging::PageRequest::parse(Some(2), Some(20)).expect("a page");
        let mut plans = Vec::new();
        for metric in
            [RankMetric::Votes, RankMetric::BillboardCents, RankMetric::DomainRating, RankMetric::RevenueMonthlyCents]
        {
            plans.push((metric, plan_of(db, super::ranked_page(db.get_database_backend(), metric, page)).await));
        }
        plans
    }

    /// The index each board's page walks (migration 56).
    fn board_index(metric: RankMetric) -> &'static str {
        match metric {
            RankMetric::Votes => "ix_listings_board_votes",
            RankMetric::BillboardCents => "ix_listings_board_billboard",
            RankMetric::DomainRating => "ix_listings_board_domain_rating",
            RankMetric::RevenueMonthlyCents => "ix_listings_board_revenue",
        }
    }

    #[tokio::test]
    async fn sqlite_reads_each_board_s_page_in_its_index_order() {
        let (_t, db) = sqlite_db().await;
        for (metric, lines) in board_plans(&db).await {
            assert!(lines.iter().any(|l| l.contains(&format!("USING INDEX {}", board_index(metric)))), "{lines:?}");
            assert!(!lines.iter().any(|l| l.contains("TEMP B-TREE")), "{metric:?} sorts: {lines:?}");
        }
    }

    #[tokio::test]
    async fn postgres_reads_each_board_s_page_in_its_index_order() {
        let Some((_t, txn)) = postgres_planning().await else { return };
        for (metric, lines) in board_plans(&txn).await {
            let walk = format!("Index Scan using {}", board_index(metric));
            assert!(lines.iter().any(|l| l.contains(&walk)), "{lines:?}");
            assert!(!lines.iter().any(|l| l.contains("Sort")), "{metric:?} sorts: {lines:?}");
        }
    }

    /// A listing's alternatives are its own `alternatives` rows and the top of its category's run of
    /// `ix_listings_category_status_votes` (`alternatives_of`), never a walk of every live listing by
    /// votes (`(status=?)` of `ix_listings_board_votes`).
    #[tokio::test]
    async fn sqlite_reads_a_listing_s_alternatives_from_its_own_rows_and_its_category() {
        let (_t, db) = sqlite_db().await;
        let lines = plan_of(&db, super::alternatives_of(sea_orm::DbBackend::Sqlite, 7, 4)).await;
        let approved = "SEARCH a USING INDEX sqlite_autoindex_alternatives_1 (listing_id=?)";
        let category = "SEARCH l USING INDEX ix_listings_category_status_votes (primary_category_id=? AND status=?)";
        assert!(lines.iter().any(|l| l == approved), "{lines:?}");
        assert!(lines.iter().any(|l| l == category), "{lines:?}");
        assert!(!lines.iter().any(|l| l.ends_with("(status=?)")), "{lines:?}");
    }

    /// A page of the newest live listings (`sort=newest`, as `search_listings` writes it): the listings
    /// that went live together share `launched_at`, so the order's index must end in the id, or each
    /// page reads the whole run of its instant and sorts it (migration 60).
    async fn newest_plan(db: &impl ConnectionTrait) -> Vec<String> {
        let page = format!(
            "{} FROM listings l WHERE 1 = 1 AND l.status = 'live' ORDER BY l.launched_at DESC, l.id DESC \
             LIMIT 20 OFFSET 20",
            super::SUMMARY_SELECT
        );
        plan_of(db, sea_orm::Statement::from_string(db.get_database_backend(), page)).await
    }

    #[tokio::test]
    async fn sqlite_reads_the_newest_listings_in_their_index_s_order() {
        let (_t, db) = sqlite_db().await;
        assert_eq!(newest_plan(&db).await, ["SEARCH l USING INDEX ix_listings_status_launched (status=?)"]);
    }

    #[tokio::test]
    async fn postgres_reads_the_newest_listings_in_their_index_s_order() {
        let Some((_t, txn)) = postgres_planning().await else { return };
        let lines = newest_plan(&txn).await;
        assert!(
            lines.iter().any(|l| l.contains("Index Scan Backward using ix_listings_status_launched_id")),
            "{lines:?}"
        );
        assert!(!lines.iter().any(|l| l.contains("Sort")), "{lines:?}");
    }

    /// A page of upcoming launches by votes and by followers (as `search_listings` writes them): they
    /// all share one count, so the order's index must end in the id, or each page reads every
    /// scheduled listing and sorts it (migration 63).
    #[tokio::test]
    async fn postgres_reads_upcoming_launches_by_votes_and_followers_in_their_index_s_order() {
        use domain::listing::{SearchSort, StatusFilter};
        let Some((_t, txn)) = postgres_planning().await else { return };
        for (sort, index) in [
            (SearchSort::Votes, "ix_listings_status_votes_id"),
            (SearchSort::MostFollowed, "ix_listings_status_follows_id"),
        ] {
            let page = format!(
                "{} FROM listings l WHERE 1 = 1 AND l.status = 'scheduled'{} LIMIT 20 OFFSET 20",
                super::SUMMARY_SELECT,
                super::search_order(sort, false, StatusFilter::Upcoming)
            );
            let lines = plan_of(&txn, sea_orm::Statement::from_string(sea_orm::DbBackend::Postgres, page)).await;
            let scan = format!("Index Scan Backward using {index}");
            assert!(lines.iter().any(|l| l.contains(&scan)), "{sort:?}: {lines:?}");
            assert!(!lines.iter().any(|l| l.contains("Sort")), "{sort:?}: {lines:?}");
        }
    }

    #[tokio::test]
    async fn sqlite_reads_today_s_launches_from_the_top_of_the_day_s_run() {
        let (_t, db) = sqlite_db().await;
        let lines = today_plan(&db).await;
        assert_eq!(lines, ["SEARCH l USING INDEX ix_listings_status_launch_day_votes (status=? AND <expr>=?)"]);
    }

    #[tokio::test]
    async fn postgres_reads_today_s_launches_from_the_top_of_the_day_s_run() {
        let Some((_t, txn)) = postgres_planning().await else { return };
        let lines = today_plan(&txn).await;
        let walk = "Index Scan Backward using ix_listings_status_launch_day_votes";
        assert!(lines.iter().any(|l| l.contains(walk)), "{lines:?}");
        assert!(!lines.iter().any(|l| l.contains("Sort")), "{lines:?}");
    }
}
