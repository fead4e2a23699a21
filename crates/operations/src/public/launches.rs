//! Categories with their listings, launch feeds, launch weeks and the five leaderboards.

use super::Pagination;
use super::listings::{CategoryRef, FaqOut, ListingPage, ListingSummaryOut, path_slug, summary_out};
use crate::{Ctx, Method, OpError, OpResult, Operation};
use async_trait::async_trait;
use chrono::{Datelike, NaiveTime};
use domain::listing::{ListingSearch, RankMetric, SearchSort, StatusFilter};
use domain::paging::PageRequest;
use domain::week::LaunchWeek;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa::openapi::schema::{ObjectBuilder, Type};

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GetCategoryInput {
    pub slug: String,
    #[schema(default = 1)]
    pub page: Option<i64>,
    #[schema(default = 20)]
    pub per_page: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CategoryOut {
    pub slug: String,
    pub name: String,
    pub description: String,
    pub parent: Option<CategoryRef>,
    pub subcategories: Vec<CategoryRef>,
    pub faqs: Vec<FaqOut>,
    /// Listing facts compare_listings puts side by side in this category.
    pub compare_attributes: Vec<String>,
    /// Live listings here (and in subcategories), most voted first.
    pub listings: ListingPage,
}

#[derive(Debug)]
pub struct GetCategory;

#[async_trait]
impl Operation for GetCategory {
    const ID: &'static str = "get_category";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/categories/{slug}";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "A category with its parent, subcategories, FAQs and live listings";
    const DESCRIPTION: &'static str = "Returns one category (slug from list_categories) with its parent, its \
        subcategories, its FAQs and its live listings, most voted first, paged. 404 for an unknown slug. Read-only.";
    type Input = GetCategoryInput;
    type Output = CategoryOut;

    async fn run(ctx: &Ctx, i: GetCategoryInput) -> OpResult<CategoryOut> {
        let slug = path_slug(i.slug)?;
        let page = PageRequest::parse(i.page, i.per_page)?;
        let store = ctx.app.store.as_ref();
        let cat = store.get_category_by_slug(&slug).await?.ok_or(OpError::NotFound("category"))?;
        let all = store.all_categories().await?;
        let as_ref = |c: &domain::category::Category| CategoryRef { slug: c.slug.to_string(), name: c.name.clone() };
        let search = ListingSearch { category: Some(slug), sort: SearchSort::Votes, ..Default::default() };
        let listings = store.search_listings(&search, page).await?.into();
        Ok(CategoryOut {
            parent: cat.parent_id.and_then(|p| all.iter().find(|c| c.id == p)).map(as_ref),
            subcategories: all.iter().filter(|c| c.parent_id == Some(cat.id)).map(as_ref).collect(),
            faqs: cat.faqs.into_iter().map(FaqOut::from).collect(),
            compare_attributes: cat.attributes,
            slug: cat.slug.to_string(),
            name: cat.name,
            description: cat.description,
            listings,
        })
    }
}

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Section {
    Today,
    ThisWeek,
    Trending,
    MostVoted,
    Recent,
    MostViewed,
    MostFollowed,
    Upcoming,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ListLaunchesInput {
    /// Default this-week. trending means time-decayed votes.
    #[schema(inline, default = "this-week")]
    pub section: Option<Section>,
    #[schema(default = 1)]
    pub page: Option<i64>,
    #[schema(default = 20)]
    pub per_page: Option<i64>,
}

#[derive(Debug)]
pub struct ListLaunches;

#[async_trait]
impl Operation for ListLaunches {
    const ID: &'static str = "list_launches";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/launches";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "A launch feed: today, this week, trending, most voted, recent, upcoming …";
    const DESCRIPTION: &'static str = "Returns a paged feed of launches. today: went live today (UTC); this-week: \
        launched this Monday-to-Sunday week, most voted first; trending: time-decayed votes (each vote halves in \
        weight every 72 hours); most-voted, recent, most-viewed, most-followed: all live listings; upcoming: \
        scheduled launches, soonest first. Read-only.";
    type Input = ListLaunchesInput;
    type Output = ListingPage;

    async fn run(ctx: &Ctx, i: ListLaunchesInput) -> OpResult<ListingPage> {
        let page = PageRequest::parse(i.page, i.per_page)?;
        let now = ctx.app.now();
        let mut s = ListingSearch::default();
        match i.section.unwrap_or(Section::ThisWeek) {
            Section::Today => {
                s.launched_since = Some(now.date_naive().and_time(NaiveTime::MIN).and_utc());
                s.sort = SearchSort::Votes;
            }
            Section::ThisWeek => {
                s.launch_week = Some(LaunchWeek::of(now));
                s.sort = SearchSort::Votes;
            }
            Section::Trending => s.sort = SearchSort::Trending,
            Section::MostVoted => s.sort = SearchSort::Votes,
            Section::Recent => s.sort = SearchSort::Newest,
            Section::MostViewed => s.sort = SearchSort::MostViewed,
            Section::MostFollowed => s.sort = SearchSort::MostFollowed,
            Section::Upcoming => s.status = StatusFilter::Upcoming,
        }
        Ok(ctx.app.store.search_listings(&s, page).await?.into())
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WeekInput {
    /// this, next, last, or a date YYYY-MM-DD (snapped to its Monday).
    pub week: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RankedLaunch {
    pub rank: u32,
    pub listing: ListingSummaryOut,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LaunchWeekOut {
    /// Monday (YYYY-MM-DD).
    pub week: String,
    pub starts_at: String,
    pub ends_at: String,
    /// Live launches of the week, most voted first.
    pub launches: Vec<RankedLaunch>,
    /// Launches scheduled for the week that are not live yet (future weeks).
    pub scheduled: Vec<ListingSummaryOut>,
}

/// Reads a week parameter. Malformed is a 400; an impossible date (2026-02-30), a week before 2000 or
/// more than a year ahead is a 404.
fn week_param(raw: &str, ctx: &Ctx) -> OpResult<LaunchWeek> {
    let today = ctx.app.now().date_naive();
    // Shaped as the schema's pattern says: YYYY-MM-DD with a month 01–12 and a day 01–31.
    let num = |r: std::ops::Range<usize>| raw.get(r).and_then(|t| t.parse::<u32>().ok());
    let dated = raw.len() == 10
        && raw.bytes().enumerate().all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() })
        && num(5..7).is_some_and(|m| (1..=12).contains(&m))
        && num(8..10).is_some_and(|d| (1..=31).contains(&d));
    let w = match LaunchWeek::parse(raw, today, "week") {
        Ok(w) => w,
        // Shaped like a date but no day of the calendar (2026-02-30): there is no such week.
        Err(_) if dated => return Err(OpError::NotFound("week")),
        Err(e) => return Err(e.into()),
    };
    let this = LaunchWeek::containing(today);
    if w.monday().year() < 2000 || this.weeks_until(w) > LaunchWeek::MAX_WEEKS_AHEAD {
        return Err(OpError::NotFound("week"));
    }
    Ok(w)
}

/// The most launches a week's page lists per status (a week holds far fewer).
const WEEK_LAUNCHES: u32 = 500;

#[derive(Debug)]
pub struct GetLaunchWeek;

#[async_trait]
impl Operation for GetLaunchWeek {
    const ID: &'static str = "get_launch_week";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/launches/weeks/{week}";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "One Monday-to-Sunday launch week";
    const DESCRIPTION: &'static str = "Returns a launch week (this, next, last, or any date, snapped to its Monday; \
        weeks run Monday 00:00 to Monday 00:00 UTC): its live launches ranked by community votes and, for a future \
        week, the launches scheduled for it. 404 for a week before 2000 or more than a year ahead. Read-only.";
    type Input = WeekInput;
    type Output = LaunchWeekOut;

    async fn run(ctx: &Ctx, i: WeekInput) -> OpResult<LaunchWeekOut> {
        let w = week_param(&i.week, ctx)?;
        let store = &ctx.app.store;
        Ok(LaunchWeekOut {
            week: w.to_string(),
            starts_at: w.starts_at().to_rfc3339(),
            ends_at: w.ends_at().to_rfc3339(),
            launches: store
                .week_launches(w, StatusFilter::Live, WEEK_LAUNCHES)
                .await?
                .into_iter()
                .enumerate()
                .map(|(n, s)| RankedLaunch { rank: n as u32 + 1, listing: summary_out(s) })
                .collect(),
            scheduled: store
                .week_launches(w, StatusFilter::Upcoming, WEEK_LAUNCHES)
                .await?
                .into_iter()
                .map(summary_out)
                .collect(),
        })
    }
}

pub const BOARDS: [&str; 5] = ["community-weekly", "community-all-time", "billboard", "domain-rating", "revenue"];

fn board_schema() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String).enum_values(Some(BOARDS))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LeaderboardInput {
    /// community-weekly, community-all-time, billboard (paid), domain-rating or revenue.
    #[schema(schema_with = board_schema)]
    pub board: String,
    /// For community-weekly only: this (default), last, or a date YYYY-MM-DD.
    pub week: Option<String>,
    #[schema(default = 1)]
    pub page: Option<i64>,
    #[schema(default = 20)]
    pub per_page: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Metric {
    /// votes, votes_this_week, billboard_cents, domain_rating or monthly_revenue_cents.
    pub name: &'static str,
    pub value: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LeaderboardItem {
    pub rank: u64,
    pub listing: ListingSummaryOut,
    pub metric: Metric,
    /// True on every billboard item: a paid placement, not a community ranking.
    pub paid: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LeaderboardOut {
    pub board: String,
    /// True for the billboard: ranked by money contributed.
    pub paid: bool,
    pub description: String,
    /// community-weekly: the Monday of the week.
    pub week: Option<String>,
    pub items: Vec<LeaderboardItem>,
    pub pagination: Pagination,
}

#[derive(Debug)]
pub struct GetLeaderboard;

#[async_trait]
impl Operation for GetLeaderboard {
    const ID: &'static str = "get_leaderboard";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/leaderboards/{board}";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "One of five separate leaderboards";
    const DESCRIPTION: &'static str = "Returns a leaderboard with rank, listing and metric. community-weekly (votes \
        cast in one week; week=this, last or a date) and community-all-time count community votes only; billboard is \
        a PAID ranking by money contributed and is always marked paid; domain-rating and revenue show third-party or \
        reported figures. They are separate systems. 404 for an unknown board, an unknown week, or a week asked of \
        another board than community-weekly. Read-only.";
    type Input = LeaderboardInput;
    type Output = LeaderboardOut;

    async fn run(ctx: &Ctx, i: LeaderboardInput) -> OpResult<LeaderboardOut> {
        let page = PageRequest::parse(i.page, i.per_page)?;
        let board = BOARDS.iter().find(|b| **b == i.board).copied().ok_or(OpError::NotFound("board"))?;
        // Only community-weekly has weeks: another board asked for one has no such edition, as an
        // unknown week of the weekly board has none.
        if board != "community-weekly" && i.week.is_some() {
            return Err(OpError::NotFound("a week of this board (only community-weekly has weeks)"));
        }
        let store = ctx.app.store.as_ref();
        let (rows, metric, week, description) = match board {
            "community-weekly" => {
                let w = week_param(i.week.as_deref().unwrap_or("this"), ctx)?;
                let rows = store.weekly_votes(w, page).await?;
                (
                    rows,
                    "votes_this_week",
                    Some(w.to_string()),
                    "Community votes cast in this Monday-to-Sunday week (UTC).",
                )
            }
            "community-all-time" => {
                (store.ranked(RankMetric::Votes, page).await?, "votes", None, "All community votes.")
            }
            "billboard" => (
                store.ranked(RankMetric::BillboardCents, page).await?,
                "billboard_cents",
                None,
                "PAID: listings ranked by money contributed to the billboard. Not a community ranking.",
            ),
            "domain-rating" => (
                store.ranked(RankMetric::DomainRating, page).await?,
                "domain_rating",
                None,
                "Third-party Domain Rating (0–100) of each listing's website.",
            ),
            _ => (
                store.ranked(RankMetric::RevenueMonthlyCents, page).await?,
                "monthly_revenue_cents",
                None,
                "Monthly revenue, verified by a payment provider or self-reported (see each listing's revenue source).",
            ),
        };
        let paid = board == "billboard";
        let pagination = Pagination::from(&rows);
        let first = page.offset();
        Ok(LeaderboardOut {
            board: board.to_owned(),
            paid,
            description: description.to_owned(),
            week,
            items: rows
                .items
                .into_iter()
                .enumerate()
                .map(|(n, (s, v))| LeaderboardItem {
                    rank: first + n as u64 + 1,
                    listing: summary_out(s),
                    metric: Metric { name: metric, value: v },
                    paid,
                })
                .collect(),
            pagination,
        })
    }
}
