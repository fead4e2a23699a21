//! Repository tests, each run against a fresh SQLite file and a fresh PostgreSQL database.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod accounts;
mod claims;
mod details;
mod drafts;
mod harness;
mod jobs;
mod moderation;
mod oauth;
mod orders;
mod own;
mod pool;

use adapters_storage::db;
use chrono::{DateTime, Duration, TimeZone, Utc};
use domain::award::launch_of_the_week;
use domain::blog::NewBlogPost;
use domain::category::NewCategory;
use domain::founder::NewFounder;
use domain::ids::CategoryId;
use domain::listing::{
    CountryCode, DomainRating, Lifecycle, ListingProfile, ListingSearch, ListingStatus, NewListing, Review, SearchSort,
    SearchText, StatusFilter, UnlockedSections,
};
use domain::money::Cents;
use domain::paging::PageRequest;
use domain::ports::{DirectoryImport, ImportListing, ListingRepository, RepoError};
use domain::product::{Product, ProductCode, ProductKind};
use domain::slug::Slug;
use domain::social::{Faq, Socials};
use domain::week::LaunchWeek;

pub(crate) fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap()
}

fn slug(s: &str) -> Slug {
    Slug::parse(s).unwrap()
}

pub(crate) fn cat(s: &str, parent: Option<&str>, pos: i32) -> NewCategory {
    NewCategory {
        slug: slug(s),
        name: s.to_uppercase(),
        description: format!("All about {s}"),
        parent: parent.map(slug),
        position: pos,
        faqs: vec![Faq::parse(format!("What is {s}?"), "A category.".into()).unwrap()],
        attributes: vec!["pricing_model".into(), "country".into()],
        synonyms: vec![format!("{s} tool")],
    }
}

pub(crate) async fn seed_categories(store: &std::sync::Arc<dyn domain::ports::Store>) -> Vec<(String, CategoryId)> {
    store
        .ensure_categories(&[
            cat("dev-tools", None, 1),
            cat("api-tools", Some("dev-tools"), 2),
            cat("marketing", None, 3),
        ])
        .await
        .unwrap();
    store.list_categories().await.unwrap().into_iter().map(|c| (c.category.slug.to_string(), c.category.id)).collect()
}

pub(crate) fn cat_id(cats: &[(String, CategoryId)], s: &str) -> CategoryId {
    cats.iter().find(|(n, _)| n == s).unwrap().1
}

pub(crate) fn listing(name: &str, status: ListingStatus, primary: Option<CategoryId>) -> NewListing {
    let domain = format!("{}.example", Slug::slugify(name).unwrap());
    let mut profile = ListingProfile::named(name, format!("https://{domain}/"), domain);
    profile.tagline = format!("{name} tagline");
    let lifecycle = match status {
        ListingStatus::Live => {
            let mut l = Lifecycle::saved();
            l.paid_launch(None, now()).unwrap();
            l
        }
        ListingStatus::Scheduled => {
            let mut l = Lifecycle::saved();
            l.paid_launch(Some(LaunchWeek::of(now()).plus_weeks(3)), now()).unwrap();
            l
        }
        _ => Lifecycle::saved(),
    };
    NewListing {
        slug: Slug::slugify(name).unwrap(),
        profile,
        lifecycle,
        categories: primary.map(domain::category::ListingCategories::new),
        unlocked: UnlockedSections::default(),
        featured: false,
        verified: false,
        domain_rating: None,
        revenue: None,
        created_at: now(),
    }
}

fn import(l: NewListing, votes: usize) -> ImportListing {
    ImportListing {
        listing: l,
        founders: vec![],
        votes: (0..votes).map(|i| now() - Duration::hours(i as i64)).collect(),
        follows: 0,
        views: 0,
        reviews: vec![],
        updates: vec![],
        milestones: vec![],
        story: None,
        billboard: vec![],
    }
}

/// A founder to import: `slug`, `name`, a headline and nothing else.
fn maker(s: &str, name: &str) -> NewFounder {
    NewFounder {
        slug: slug(s),
        name: name.into(),
        headline: "Makes things".into(),
        bio: String::new(),
        country: None,
        avatar_url: String::new(),
        socials: Socials::default(),
    }
}

fn search(q: Option<&str>) -> ListingSearch {
    ListingSearch { q: q.map(|q| SearchText::parse(q).unwrap()), ..Default::default() }
}

fn names(p: &domain::paging::Paged<domain::listing::ListingSummary>) -> Vec<String> {
    p.items.iter().map(|s| s.name.clone()).collect()
}

on_both!(migrations_are_complete_and_idempotent, |store| {
    use sea_orm::{ConnectionTrait, DbBackend, Statement};
    // Several instances start at once, then one more: no deadlock, no lock left behind.
    let runs = (0..3).map(|_| db::migrate(store.connection()));
    let all = tokio::time::timeout(std::time::Duration::from_secs(30), futures::future::join_all(runs))
        .await
        .expect("migrations finish");
    assert!(all.iter().all(Result::is_ok), "{all:?}");
    tokio::time::timeout(std::time::Duration::from_secs(30), db::migrate(store.connection()))
        .await
        .expect("no lock left")
        .unwrap();
    if store.backend() == DbBackend::Postgres {
        let held = store
            .connection()
            .query_one_raw(Statement::from_string(
                DbBackend::Postgres,
                "SELECT COUNT(*) AS n FROM pg_locks WHERE locktype = 'advisory' \
                 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            ))
            .await
            .unwrap()
            .unwrap()
            .try_get::<i64>("", "n")
            .unwrap();
        assert_eq!(held, 0, "the migration lock is released");
    }
    assert_eq!(db::pending_migrations(store.connection()).await.unwrap(), 0);
    db::ping(store.connection()).await.unwrap();
});

// A write that cannot have its lock within the store's wait (`db::LOCK_WAIT`) is `Unavailable` (a
// 503 with Retry-After: worth retrying), neither a failure (a 500) nor a wait without end. The lock
// is held from another pooled connection: SQLite's write lock (an immediate transaction), and on
// PostgreSQL the table's, as an operator's `ALTER TABLE` or a long transaction would hold it. Before,
// SQLite answered "database is locked" as a failure and PostgreSQL waited for as long as the lock stayed.
on_both!(a_lock_held_past_the_wait_makes_a_write_unavailable_not_failed, |store| {
    use domain::ports::SettingsRepository;
    use sea_orm::{ConnectionTrait, DbBackend, TransactionTrait};
    use std::time::{Duration, Instant};
    let options = sea_orm::TransactionOptions {
        sqlite_transaction_mode: Some(sea_orm::SqliteTransactionMode::Immediate),
        ..Default::default()
    };
    let holder = store.connection().begin_with_options(options).await.unwrap();
    if store.backend() == DbBackend::Postgres {
        holder.execute_unprepared("LOCK TABLE site_settings IN ACCESS EXCLUSIVE MODE").await.unwrap();
    }
    let started = Instant::now();
    let write = store.set_setting("free_plan_min_weeks", "5");
    let answer = tokio::time::timeout(db::LOCK_WAIT + Duration::from_secs(10), write).await;
    let waited = started.elapsed();
    holder.rollback().await.unwrap();
    let answer = answer.unwrap_or_else(|_| panic!("still waiting for the lock after {waited:?}"));
    assert!(matches!(answer, Err(RepoError::Unavailable(_))), "{answer:?}");
    assert!(waited >= db::LOCK_WAIT - Duration::from_millis(500), "gave up after {waited:?}");
    // Once the lock is let go, the same write goes through.
    store.set_setting("free_plan_min_weeks", "5").await.unwrap();
});

/// What waits on another instance by design is not cut off by the store's lock wait: a migration
/// waits for another instance's migration, and the search terms' refresh for another's refresh, however
/// long those take (here their locks are held past `db::LOCK_WAIT`). With the wait's bound on them, an
/// instance starting beside one that migrates a large database would fail to start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_on_another_instance_s_migration_or_refresh_are_not_cut_off_on_postgres() {
    use sea_orm::{ConnectionTrait, TransactionTrait};
    use std::time::{Duration, Instant};
    let Some(db) = harness::postgres().await else { return };
    let store = &db.store;
    store.import_listings(&[import(listing("Waiting", ListingStatus::Live, None), 0)], now()).await.unwrap();
    let holder = store.connection().begin().await.unwrap();
    holder
        .execute_unprepared(
            "SELECT pg_advisory_xact_lock(7262021), pg_advisory_xact_lock(hashtext('listing_terms_refresh'))",
        )
        .await
        .unwrap();
    let started = Instant::now();
    let release = async {
        tokio::time::sleep(db::LOCK_WAIT + Duration::from_secs(1)).await;
        holder.rollback().await.unwrap();
    };
    let (migrated, refreshed, ()) =
        tokio::join!(db::migrate(store.connection()), store.refresh_search_terms(), release);
    assert!(started.elapsed() > db::LOCK_WAIT, "they waited for the locks");
    migrated.unwrap();
    assert!(refreshed.unwrap(), "the refresh ran once the other let go");
}

/// PostgreSQL connections wait `db::LOCK_WAIT` for a lock, compile no statement (JIT off), start no
/// parallel worker and no synchronized scan (a search's candidates are the first rows its scan hands
/// out: see `a_scan_starts_at_the_first_block_on_the_pools_connections_on_postgres`) and give a bitmap
/// `db::WORK_MEM`, unless the URL's `options` choose their own.
#[tokio::test]
async fn the_lock_wait_jit_and_scans_are_the_service_s_unless_the_url_sets_them_on_postgres() {
    use sea_orm::{ConnectionTrait, DbBackend, Statement};
    let Some(t) = test_support::postgres().await else { return };
    let shown = |url: String| async move {
        let conn = db::connect(&url).await.unwrap();
        let mut settings = Vec::new();
        for name in ["lock_timeout", "jit", "max_parallel_workers_per_gather", "synchronize_seqscans", "work_mem"] {
            let show = Statement::from_string(DbBackend::Postgres, format!("SHOW {name}"));
            settings.push(conn.query_one_raw(show).await.unwrap().unwrap().try_get::<String>("", name).unwrap());
        }
        settings
    };
    let wait = format!("{}s", db::LOCK_WAIT.as_secs());
    assert_eq!(shown(t.url.clone()).await, [wait.as_str(), "off", "0", "off", db::WORK_MEM]);
    let sep = if t.url.contains('?') { '&' } else { '?' };
    let url = format!("{}{sep}options=-c%20lock_timeout%3D2500ms", t.url);
    assert_eq!(shown(url).await, ["2500ms", "off", "0", "off", db::WORK_MEM]);
    let url =
        format!("{}{sep}options=-c%20jit%3Don%20-c%20max_parallel_workers_per_gather%3D3%20-c%20work_mem%3D5MB", t.url);
    assert_eq!(shown(url).await, [wait.as_str(), "on", "3", "off", "5MB"]);
}

/// A PostgreSQL search ranks the first candidates its scan hands out (`LIMIT`, no order), so a scan
/// must start at its table's first block: synchronized sequential scans (PostgreSQL's default) start a
/// scan of a table larger than a quarter of `shared_buffers` where the last one got to, and the same
/// search gave another first page each time (`q=workflow&stage=growing` at 100k demo listings). The
/// pool's connections turn them off unless the URL's `options` name them. Shown on a table just past
/// that size: a scan that stops half way, then the first row of a scan.
#[tokio::test]
async fn a_scan_starts_at_the_first_block_on_the_pools_connections_on_postgres() {
    use sea_orm::{ConnectionTrait, DbBackend, Statement};
    let Some(t) = test_support::postgres().await else { return };
    let setup = db::connect(&t.url).await.unwrap();
    let one = |conn: &sea_orm::DatabaseConnection, sql: &str| {
        let conn = conn.clone();
        let stmt = Statement::from_string(DbBackend::Postgres, sql.to_owned());
        async move { conn.query_one_raw(stmt).await.unwrap().unwrap().try_get::<i64>("", "n").unwrap() }
    };
    // Blocks of 8 kB; a tenth of each filled, so a few dozen rows a block.
    let quarter = one(&setup, "SELECT setting::bigint / 4 AS n FROM pg_settings WHERE name = 'shared_buffers'").await;
    setup
        .execute_unprepared(&format!(
            "CREATE TABLE scanned (g BIGINT NOT NULL) WITH (fillfactor = 10); \
             INSERT INTO scanned SELECT g FROM generate_series(1, {}) g; ANALYZE scanned",
            (quarter + 64) * 30
        ))
        .await
        .unwrap();
    let blocks = one(&setup, "SELECT (pg_relation_size('scanned') / 8192)::bigint AS n").await;
    assert!(blocks > quarter + 16, "{blocks} blocks, past a quarter of shared_buffers ({quarter})");
    let rows = one(&setup, "SELECT count(*) AS n FROM scanned").await;
    let first_after_half = |url: String| async move {
        let conn = db::connect(&url).await.unwrap();
        one(&conn, &format!("SELECT count(*) AS n FROM (SELECT g FROM scanned OFFSET {} LIMIT 1) h", rows / 2)).await;
        one(&conn, "SELECT g AS n FROM scanned LIMIT 1").await
    };
    assert_eq!(first_after_half(t.url.clone()).await, 1, "the service's connections scan from the first block");
    let sep = if t.url.contains('?') { '&' } else { '?' };
    let synchronized = first_after_half(format!("{}{sep}options=-c%20synchronize_seqscans%3Don", t.url)).await;
    assert!(
        synchronized > rows / 4,
        "the URL's choice stays, and with it a scan starts where the last got to: {synchronized}"
    );
}

/// The pool's connections to a loopback PostgreSQL with TLS only preferred (the default) run in the
/// clear, as the read pipe's do: TLS there protects nothing and costs every statement. TLS asked for
/// stays, where the server offers it.
#[tokio::test]
async fn a_loopback_pool_connection_skips_tls_unless_it_is_asked_for_on_postgres() {
    use sea_orm::{ConnectionTrait, DbBackend, Statement};
    let Some(t) = test_support::postgres().await else { return };
    let host = t.url.split('@').nth(1).and_then(|rest| rest.split([':', '/']).next()).unwrap_or_default();
    assert!(["127.0.0.1", "localhost"].contains(&host), "the tests' database is on loopback: {}", t.url);
    let encrypted = |url: String| async move {
        let conn = db::connect(&url).await.unwrap();
        let ssl =
            Statement::from_string(DbBackend::Postgres, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()");
        conn.query_one_raw(ssl).await.unwrap().unwrap().try_get::<bool>("", "ssl").unwrap()
    };
    let sep = if t.url.contains('?') { '&' } else { '?' };
    assert!(!encrypted(t.url.clone()).await, "TLS preferred, by default");
    assert!(!encrypted(format!("{}{sep}sslmode=prefer", t.url)).await, "TLS preferred, by the URL");
    let offered = {
        let conn = db::connect(&t.url).await.unwrap();
        let show = Statement::from_string(DbBackend::Postgres, "SHOW ssl");
        conn.query_one_raw(show).await.unwrap().unwrap().try_get::<String>("", "ssl").unwrap() == "on"
    };
    if offered {
        assert!(encrypted(format!("{}{sep}sslmode=require", t.url)).await, "TLS required stays");
    }
}

on_every_store!(categories_seed_once_as_a_tree, |store| {
    assert_eq!(
        store.ensure_categories(&[cat("api-tools", Some("dev-tools"), 2), cat("dev-tools", None, 1)]).await.unwrap(),
        2
    );
    assert_eq!(store.ensure_categories(&[cat("dev-tools", None, 1)]).await.unwrap(), 0, "seeding is idempotent");
    let all = store.list_categories().await.unwrap();
    assert_eq!(all.len(), 2);
    let parent = all.iter().find(|c| c.category.slug.as_str() == "dev-tools").unwrap();
    let child = store.get_category_by_slug(&slug("api-tools")).await.unwrap().unwrap();
    assert_eq!(child.parent_id, Some(parent.category.id));
    assert_eq!(child.faqs.len(), 1);
    assert_eq!(child.attributes, vec!["pricing_model", "country"]);
    assert_eq!(child.synonyms, vec!["api-tools tool"]);
    assert!(store.get_category_by_slug(&slug("nope")).await.unwrap().is_none());
    // A category stored before it had synonyms gets the reference's on the next seeding, and only then.
    let bare = NewCategory { synonyms: vec![], ..cat("ci", Some("dev-tools"), 3) };
    assert_eq!(store.ensure_categories(&[bare]).await.unwrap(), 1);
    assert_eq!(store.get_category_by_slug(&slug("ci")).await.unwrap().unwrap().synonyms, Vec::<String>::new());
    assert_eq!(store.ensure_categories(&[cat("ci", Some("dev-tools"), 3)]).await.unwrap(), 0);
    assert_eq!(store.get_category_by_slug(&slug("ci")).await.unwrap().unwrap().synonyms, vec!["ci tool"]);
    let orphan = store.ensure_categories(&[cat("orphan", Some("missing"), 9)]).await;
    assert!(matches!(orphan, Err(RepoError::Conflict(_))), "an unknown parent is refused");
});

on_every_store!(products_keep_admin_prices, |store| {
    let launch = Product {
        code: ProductCode::parse("launch").unwrap(),
        kind: ProductKind::Launch,
        name: "Launch".into(),
        description: "Go live".into(),
        price: Cents::new(4900),
        needs_listing: true,
        active: true,
        position: 1,
    };
    assert_eq!(store.ensure_products(std::slice::from_ref(&launch)).await.unwrap(), 1);
    store.set_price(&launch.code, Cents::new(7900)).await.unwrap();
    assert_eq!(store.ensure_products(std::slice::from_ref(&launch)).await.unwrap(), 0);
    let listed = store.list_products().await.unwrap();
    assert_eq!(listed[0].price, Cents::new(7900), "re-seeding never resets an admin price");
    let missing = store.set_price(&ProductCode::parse("nope").unwrap(), Cents::new(1)).await;
    assert!(matches!(missing, Err(RepoError::NotFound)));
});

on_every_store!(public_changes_count_up_from_zero_with_their_scopes, |store| {
    assert_eq!(store.public_changes().await.unwrap(), 0);
    assert_eq!(store.note_public_change("*").await.unwrap(), 1);
    assert_eq!(store.note_public_change("engagement:acme").await.unwrap(), 2);
    assert_eq!(store.public_changes().await.unwrap(), 2);
    // Concurrent writers never lose a count.
    let (a, b) = tokio::join!(store.note_public_change("*"), store.note_public_change("engagement:b"));
    let mut got = [a.unwrap(), b.unwrap()];
    got.sort_unstable();
    assert_eq!(got, [3, 4]);
    assert_eq!(store.public_changes().await.unwrap(), 4);
    // What each change touched, after a given count, oldest first.
    let since = store.public_changes_since(1, 10).await.unwrap();
    assert_eq!(since.iter().map(|(c, _)| *c).collect::<Vec<_>>(), vec![2, 3, 4]);
    assert_eq!(since[0].1, "engagement:acme");
    assert_eq!(store.public_changes_since(1, 2).await.unwrap().len(), 2, "at most the limit");
    // Only the newest scopes are remembered: an instance further behind cannot tell, and knows it.
    for _ in 0..(domain::ports::REMEMBERED_CHANGES + 300) {
        store.note_public_change("*").await.unwrap();
    }
    let now = store.public_changes().await.unwrap();
    let behind = store.public_changes_since(0, 100_000).await.unwrap();
    assert!((behind.len() as i64) < now, "older scopes forgotten: {} of {now}", behind.len());
    assert_eq!(behind.last().map(|(c, _)| *c), Some(now), "the newest is kept");
});

on_every_store!(settings_and_questions, |store| {
    assert_eq!(store.ensure_settings(&domain::settings::DEFAULTS).await.unwrap(), domain::settings::DEFAULTS.len());
    store.set_setting("free_plan_min_weeks", "5").await.unwrap();
    assert_eq!(store.ensure_settings(&domain::settings::DEFAULTS).await.unwrap(), 0);
    let all = store.all_settings().await.unwrap();
    assert!(all.windows(2).all(|w| w[0].0 <= w[1].0), "sorted by key");
    assert!(all.contains(&("free_plan_min_weeks".into(), "5".into())));
    assert_eq!(store.ensure_questions(&["Why?", "How?"]).await.unwrap(), 2);
    assert_eq!(store.ensure_questions(&["Why?", "What next?"]).await.unwrap(), 1);
    let q: Vec<String> = store.list_questions().await.unwrap().into_iter().map(|q| q.text).collect();
    assert_eq!(q, vec!["Why?", "How?", "What next?"]);
});

on_every_store!(listing_round_trip_and_slug_collisions, |store| {
    let cats = seed_categories(store).await;
    let mut new = listing("Acme Rockets", ListingStatus::Live, Some(cat_id(&cats, "dev-tools")));
    new.categories = Some(
        domain::category::ListingCategories::with_extras(
            cat_id(&cats, "dev-tools"),
            vec![cat_id(&cats, "marketing"), cat_id(&cats, "dev-tools")],
        )
        .unwrap(),
    );
    new.profile.features = vec!["Launch \"fast\"".into(), "Ünïcode".into()];
    new.profile.faqs = vec![Faq::parse("Is it safe?".into(), "Mostly.".into()).unwrap()];
    new.profile.socials =
        Socials::parse("socials", [("github".to_owned(), "https://github.example/acme".to_owned())]).unwrap();
    new.profile.country = Some(CountryCode::parse("ie").unwrap());
    new.profile.not_found_on_website = vec!["founded_year".into()];
    new.domain_rating =
        Some(DomainRating { value: 42, previous: Some(40), source: "ahrefs".into(), measured_on: now().date_naive() });
    let a = store.create_listing(new.clone()).await.unwrap();
    assert_eq!(a.slug.as_str(), "acme-rockets");
    assert_eq!(a.profile, new.profile, "every profile field survives the round trip");
    let stored = a.categories.as_ref().unwrap();
    assert_eq!(stored.primary(), cat_id(&cats, "dev-tools"));
    assert_eq!(stored.extras(), [cat_id(&cats, "marketing")], "the primary is not repeated as an extra");
    assert_eq!(a.lifecycle.status(), ListingStatus::Live);
    assert_eq!(a.domain_rating.as_ref().map(|d| d.trend()), Some(domain::listing::Trend::Up));
    let b = store.create_listing(new.clone()).await.unwrap();
    assert_eq!(b.slug.as_str(), "acme-rockets-2", "a taken slug gets the next free suffix");
    let by_slug = store.get_listing_by_slug(&slug("acme-rockets-2")).await.unwrap().unwrap();
    assert_eq!(by_slug.id, b.id);
    assert!(store.get_listing_by_slug(&slug("acme-rockets-3")).await.unwrap().is_none());
    assert_eq!(store.count_live_listings().await.unwrap(), 2);
});

// A word searched within a category, where every listing has both: the category must be a check on
// each match, not a list walked for each one. On SQLite the category's listings had become a term of
// the lookup of each match's row (its id is the rowid), so the work grew as matches × the category's
// listings: at 100k demo listings `workflow` in `ai` took 92 s, and eight such requests held every
// pooled connection. Here 5 000 × 5 000: over 20 s a search that way (debug build), milliseconds as a check.
on_every_store!(a_word_within_a_category_is_checked_per_match_not_walked_per_match, |store| {
    let cats = seed_categories(store).await;
    const N: usize = 5_000;
    let items: Vec<ImportListing> = (0..N)
        .map(|i| import(listing(&format!("Probe {i}"), ListingStatus::Live, Some(cat_id(&cats, "api-tools"))), 0))
        .collect();
    for chunk in items.chunks(1_000) {
        store.import_listings(chunk, now()).await.unwrap();
    }
    store
        .import_listings(
            &[import(listing("Probe elsewhere", ListingStatus::Live, Some(cat_id(&cats, "marketing"))), 0)],
            now(),
        )
        .await
        .unwrap();
    for (sort, category) in
        [(SearchSort::Relevance, "dev-tools"), (SearchSort::Votes, "api-tools"), (SearchSort::Newest, "dev-tools")]
    {
        let s = ListingSearch { category: Some(slug(category)), sort, ..search(Some("probe")) };
        let found =
            tokio::time::timeout(std::time::Duration::from_secs(5), store.search_listings(&s, PageRequest::default()))
                .await
                .unwrap_or_else(|_| panic!("a word within {category} ({sort:?}) answered within 5 s"))
                .unwrap();
        assert_eq!(found.total, N as u64, "{category}, {sort:?}: every probe in it, none elsewhere");
        assert_eq!(found.items.len(), 20);
        assert!(found.items.iter().all(|l| l.name != "Probe elsewhere"), "{category}, {sort:?}");
    }
});

// A category filter is the category and its subcategories, through any of a listing's categories (its
// primary or an extra one), for every sort; a slug that names no category finds nothing; and a
// subcategory this instance adds counts at once (the SQL stores resolve the slug to ids from their
// kept category tree).
on_every_store!(a_category_filter_is_the_category_and_its_subcategories, |store| {
    use domain::category::ListingCategories;
    let cats = seed_categories(store).await;
    let (dev, api, marketing) = (cat_id(&cats, "dev-tools"), cat_id(&cats, "api-tools"), cat_id(&cats, "marketing"));
    let mut extra = listing("Also An Api Tool", ListingStatus::Live, Some(marketing));
    extra.categories = Some(ListingCategories::with_extras(marketing, vec![api]).unwrap());
    // In the parent and its subcategory: once in the parent's total.
    let mut both = listing("Both Tool", ListingStatus::Live, Some(dev));
    both.categories = Some(ListingCategories::with_extras(dev, vec![api]).unwrap());
    let listings = [
        import(listing("Parent Tool", ListingStatus::Live, Some(dev)), 3),
        import(listing("Child Tool", ListingStatus::Live, Some(api)), 2),
        import(both, 1),
        import(listing("Elsewhere", ListingStatus::Live, Some(marketing)), 1),
        import(extra, 0),
        import(listing("Not Yet", ListingStatus::Scheduled, Some(api)), 0),
    ];
    store.import_listings(&listings, now()).await.unwrap();
    let in_category = |slug_: &str, sort| ListingSearch { category: Some(slug(slug_)), sort, ..search(None) };
    for sort in [SearchSort::Relevance, SearchSort::Votes, SearchSort::Newest, SearchSort::Trending] {
        let mut found = store.search_listings(&in_category("dev-tools", sort), PageRequest::default()).await.unwrap();
        assert_eq!(found.total, 4, "{sort:?}: {found:?}");
        let mut got = names(&found);
        got.sort();
        assert_eq!(got, ["Also An Api Tool", "Both Tool", "Child Tool", "Parent Tool"], "{sort:?}");
        found = store.search_listings(&in_category("api-tools", sort), PageRequest::default()).await.unwrap();
        got = names(&found);
        got.sort();
        assert_eq!((found.total, got), (3, vec!["Also An Api Tool".into(), "Both Tool".into(), "Child Tool".into()]));
        found = store.search_listings(&in_category("no-such-category", sort), PageRequest::default()).await.unwrap();
        assert_eq!((found.total, found.items.len()), (0, 0), "{sort:?}");
    }
    let by_votes = store.search_listings(&in_category("dev-tools", SearchSort::Votes), PageRequest::default()).await;
    assert_eq!(names(&by_votes.unwrap()), ["Parent Tool", "Child Tool", "Both Tool", "Also An Api Tool"]);
    // A subcategory added after the tree was read, and a listing in it.
    store.ensure_categories(&[cat("api-tests", Some("dev-tools"), 4)]).await.unwrap();
    let tests = store.list_categories().await.unwrap().into_iter().find(|c| c.category.slug.as_str() == "api-tests");
    let late = listing("Late Test Tool", ListingStatus::Live, Some(tests.unwrap().category.id));
    store.import_listings(&[import(late, 0)], now()).await.unwrap();
    let found = store.search_listings(&in_category("dev-tools", SearchSort::Votes), PageRequest::default()).await;
    assert_eq!(found.unwrap().total, 5, "the new subcategory's listing is in its parent");
});

// A page of a category's live listings is the same whether SQLite probes each walked listing's links
// (a tree that is a large share of the live listings; here 11 of 12 on pages of one) or lists the
// tree's links first (pages of twenty): every sort, every page.
on_every_store!(a_category_page_is_the_same_probed_or_listed, |store| {
    let cats = seed_categories(store).await;
    let (dev, api, marketing) = (cat_id(&cats, "dev-tools"), cat_id(&cats, "api-tools"), cat_id(&cats, "marketing"));
    let mut listings: Vec<_> = (0..11)
        .map(|i| {
            import(
                listing(&format!("Tree {i}"), ListingStatus::Live, Some(if i % 2 == 0 { dev } else { api })),
                (i * 7) % 5,
            )
        })
        .collect();
    listings.push(import(listing("Outside", ListingStatus::Live, Some(marketing)), 9));
    store.import_listings(&listings, now()).await.unwrap();
    for sort in
        [SearchSort::Relevance, SearchSort::Votes, SearchSort::Newest, SearchSort::Trending, SearchSort::MostFollowed]
    {
        let s = ListingSearch { category: Some(slug("dev-tools")), sort, ..search(None) };
        let listed = store.search_listings(&s, PageRequest::parse(Some(1), Some(20)).unwrap()).await.unwrap();
        assert_eq!(listed.total, 11, "{sort:?}");
        let mut probed = Vec::new();
        for n in 1..=12 {
            let page = store.search_listings(&s, PageRequest::parse(Some(n), Some(1)).unwrap()).await.unwrap();
            assert_eq!(page.total, 11, "{sort:?}, page {n}");
            probed.extend(names(&page));
        }
        assert_eq!(probed, names(&listed), "{sort:?}");
    }
});

// Words in an order of the listings' indexes (not relevance) give the same pages whether SQLite reads
// and sorts every match (few matches, or a deep page: pages of twenty here) or walks the order's index
// checking each listing against the list of matches (a word on most of the listings: 10 of 12 on
// pages of one), alone and within a category, and the same total as the search by relevance (on
// PostgreSQL that total comes from the text search's kept counts).
on_every_store!(words_in_an_order_are_the_same_walked_or_read_and_sorted, |store| {
    let cats = seed_categories(store).await;
    let (dev, api, marketing) = (cat_id(&cats, "dev-tools"), cat_id(&cats, "api-tools"), cat_id(&cats, "marketing"));
    let mut listings: Vec<_> = (0..10)
        .map(|i| {
            let mut l = listing(&format!("Osprey {i}"), ListingStatus::Live, Some(if i % 2 == 0 { dev } else { api }));
            l.profile.tagline = format!("osprey watch {i}");
            import(l, (i * 7) % 5)
        })
        .collect();
    let mut rare = listing("Plover", ListingStatus::Live, Some(api));
    rare.profile.tagline = "plover watch".into();
    listings.push(import(rare, 3));
    listings.push(import(listing("Outside", ListingStatus::Live, Some(marketing)), 9));
    let mut soon = listing("Osprey Soon", ListingStatus::Scheduled, Some(api));
    soon.profile.tagline = "osprey watch soon".into();
    listings.push(import(soon, 0));
    store.import_listings(&listings, now()).await.unwrap();
    let sorts =
        [SearchSort::Newest, SearchSort::Votes, SearchSort::Trending, SearchSort::MostFollowed, SearchSort::MostViewed];
    for (q, category, total) in [
        ("osprey", None, 10),
        ("osp", None, 10),
        ("plover", None, 1),
        ("watch", None, 11),
        ("osprey", Some("api-tools"), 5),
        ("osprey", Some("dev-tools"), 10),
        ("watch", Some("api-tools"), 6),
    ] {
        let base = ListingSearch { category: category.map(slug), ..search(Some(q)) };
        let ranked = store.search_listings(&base, PageRequest::default()).await.unwrap();
        assert_eq!(ranked.total, total, "{q} in {category:?}, by relevance");
        for sort in sorts {
            let s = ListingSearch { sort, ..base.clone() };
            let read = store.search_listings(&s, PageRequest::parse(Some(1), Some(20)).unwrap()).await.unwrap();
            assert_eq!((read.total, read.items.len() as u64), (total, total), "{q} in {category:?}, {sort:?}");
            let mut walked = Vec::new();
            for n in 1..=total + 1 {
                let page =
                    store.search_listings(&s, PageRequest::parse(Some(n as i64), Some(1)).unwrap()).await.unwrap();
                assert_eq!(page.total, total, "{q} in {category:?}, {sort:?}, page {n}");
                walked.extend(names(&page));
            }
            assert_eq!(walked, names(&read), "{q} in {category:?}, {sort:?}");
        }
        let upcoming =
            ListingSearch { status: domain::listing::StatusFilter::Upcoming, sort: SearchSort::Newest, ..base };
        let found = store.search_listings(&upcoming, PageRequest::parse(Some(1), Some(1)).unwrap()).await.unwrap();
        assert_eq!(found.total, u64::from(q != "plover"), "{q} in {category:?}: upcoming (in api-tools)");
    }
});

// One word within a category: every match the category's tree holds, once each, best first (a word
// said three times before one said twice before one said once), counted; PostgreSQL reads them from the
// word's kept rows (migration 54) when one word of the index begins with the typed one, and from the
// documents otherwise (`glim` begins `glimmer` and `glimpse`): both ways give the same answer.
on_every_store!(a_word_within_a_category_ranks_every_match_the_category_holds, |store| {
    use domain::category::ListingCategories;
    let cats = seed_categories(store).await;
    let (dev, api, marketing) = (cat_id(&cats, "dev-tools"), cat_id(&cats, "api-tools"), cat_id(&cats, "marketing"));
    let said = |name: &str, status, category, tagline: &str| {
        let mut l = listing(name, status, Some(category));
        l.profile.tagline = tagline.into();
        l
    };
    let mut twice = said("Beta", ListingStatus::Live, dev, "glimmer glimmer board");
    twice.categories = Some(ListingCategories::with_extras(dev, vec![api]).unwrap());
    let listings = [
        import(said("Alpha", ListingStatus::Live, api, "glimmer glimmer glimmer board"), 0),
        import(twice, 0),
        import(said("Gamma", ListingStatus::Live, api, "glimmer board"), 5),
        import(said("Plain", ListingStatus::Live, dev, "board"), 9),
        import(said("Elsewhere", ListingStatus::Live, marketing, "glimmer board"), 9),
        import(said("Peek", ListingStatus::Live, marketing, "glimpse board"), 9),
        import(said("Soon", ListingStatus::Scheduled, api, "glimmer board"), 0),
    ];
    store.import_listings(&listings, now()).await.unwrap();
    let within = |q: &str, category: &str| ListingSearch { category: Some(slug(category)), ..search(Some(q)) };
    for q in ["glimmer", "glimm", "glim"] {
        let found = store.search_listings(&within(q, "dev-tools"), PageRequest::default()).await.unwrap();
        assert_eq!((found.total, names(&found)), (3, vec!["Alpha".into(), "Beta".into(), "Gamma".into()]), "{q}");
        let found = store.search_listings(&within(q, "api-tools"), PageRequest::default()).await.unwrap();
        assert_eq!((found.total, names(&found)), (3, vec!["Alpha".into(), "Beta".into(), "Gamma".into()]), "{q}");
        let second = PageRequest::parse(Some(2), Some(1)).unwrap();
        let found = store.search_listings(&within(q, "dev-tools"), second).await.unwrap();
        assert_eq!((found.total, names(&found)), (3, vec!["Beta".into()]), "{q}: the second page of one");
        let upcoming = ListingSearch { status: domain::listing::StatusFilter::Upcoming, ..within(q, "api-tools") };
        let found = store.search_listings(&upcoming, PageRequest::default()).await.unwrap();
        assert_eq!((found.total, names(&found)), (1, vec!["Soon".into()]), "{q}: upcoming");
    }
    let found = store.search_listings(&within("glimpse", "dev-tools"), PageRequest::default()).await.unwrap();
    assert_eq!((found.total, found.items.len()), (0, 0), "a word only listings elsewhere have");
    let found = store.search_listings(&within("the", "dev-tools"), PageRequest::default()).await.unwrap();
    assert_eq!(found.total, 0, "a stop word");
});

// A word with more matches in a category than the ranked candidates: the candidates are the newest
// matches, as they are for the word alone, so the category's best new listings are ranked. SQLite
// took the first thousand the index handed out, the oldest, and never ranked the newer five.
on_every_store!(a_word_within_a_category_ranks_its_newest_matches_when_there_are_more_than_the_candidates, |store| {
    let expected = newest_herons(store).await;
    let alone = store.search_listings(&search(Some("heron")), PageRequest::default()).await.unwrap();
    assert_eq!(top_five(&alone), expected, "the word alone ranks the named ones first");
    for category in ["api-tools", "dev-tools"] {
        let s = ListingSearch { category: Some(slug(category)), ..search(Some("heron")) };
        let found = store.search_listings(&s, PageRequest::default()).await.unwrap();
        assert_eq!((found.total, found.items.len()), (1_005, 20), "{category}");
        assert_eq!(top_five(&found), expected, "{category}: the newest matches are among the ranked");
    }
});

// The same with a stage beside the category: the general search. SQLite's candidates are the newest
// matches there too (it took the oldest thousand). PostgreSQL's general search ranks the first
// thousand matches it finds, in no order (docs/INTERNALS.md); only its total is asserted here.
on_both!(a_word_within_a_category_and_a_stage_ranks_its_newest_matches_on_sqlite, |store| {
    let shared: std::sync::Arc<dyn domain::ports::Store> = std::sync::Arc::new(store.clone());
    let expected = newest_herons(&shared).await;
    for category in ["api-tools", "dev-tools"] {
        let s = ListingSearch { category: Some(slug(category)), stage: Some(slug("growing")), ..search(Some("heron")) };
        let found = store.search_listings(&s, PageRequest::default()).await.unwrap();
        assert_eq!((found.total, found.items.len()), (1_005, 20), "{category} and a stage");
        if store.backend() == sea_orm::DbBackend::Sqlite {
            assert_eq!(top_five(&found), expected, "{category} and a stage: the newest matches are among the ranked");
        }
    }
});

/// A thousand live listings in `api-tools` (stage `growing`) with `heron` in the tagline, then five
/// newer ones named by it; returns the five names, sorted.
async fn newest_herons(store: &std::sync::Arc<dyn domain::ports::Store>) -> Vec<String> {
    let cats = seed_categories(store).await;
    let api = cat_id(&cats, "api-tools");
    let said = |name: String, tagline: &str| {
        let mut l = listing(&name, ListingStatus::Live, Some(api));
        l.profile.tagline = tagline.into();
        l.profile.stage = Some(slug("growing"));
        import(l, 0)
    };
    let old: Vec<ImportListing> = (0..1_000).map(|i| said(format!("Old {i}"), "a heron nearby")).collect();
    store.import_listings(&old, now()).await.unwrap();
    let fresh: Vec<ImportListing> = (0..5).map(|i| said(format!("Heron Fresh {i}"), "wading")).collect();
    store.import_listings(&fresh, now()).await.unwrap();
    (0..5).map(|i| format!("Heron Fresh {i}")).collect()
}

/// The first five names of a page, sorted.
fn top_five(found: &domain::paging::Paged<domain::listing::ListingSummary>) -> Vec<String> {
    let mut five: Vec<String> = names(found).into_iter().take(5).collect();
    five.sort();
    five
}

// A list filtered by one stage, pricing model (any case) or country alone takes its total from the
// listings kept per status and value; each must be the list's own count.
on_every_store!(a_list_of_one_value_counts_the_listings_of_that_value_and_status, |store| {
    use domain::listing::{CountryCode, PricingModel};
    let with = |name: &str, status, stage: Option<&str>, pricing: &str, country: Option<&str>| {
        let mut l = listing(name, status, None);
        l.profile.stage = stage.map(slug);
        l.profile.pricing_model = pricing.into();
        l.profile.country = country.map(|c| CountryCode::parse(c).unwrap());
        import(l, 0)
    };
    let ids = store
        .import_listings(
            &[
                with("Grows Free Us", ListingStatus::Live, Some("growing"), "Free", Some("US")),
                with("Grows Free Gb", ListingStatus::Live, Some("growing"), "free", Some("GB")),
                with("Grows Soon", ListingStatus::Scheduled, Some("growing"), "Paid", Some("US")),
                with("Mvp Shouting", ListingStatus::Live, Some("mvp"), "FREE", None),
                with("Grows Draft", ListingStatus::Draft, Some("growing"), "Free", Some("US")),
            ],
            now(),
        )
        .await
        .unwrap();
    let list = |stage: Option<&str>, pricing: Option<&str>, country: Option<&str>, status| ListingSearch {
        stage: stage.map(slug),
        pricing_model: pricing.map(|p| PricingModel::parse(p).unwrap()),
        country: country.map(|c| CountryCode::parse(c).unwrap()),
        status,
        ..search(None)
    };
    let found = |s: ListingSearch| async move {
        let p = store.search_listings(&s, PageRequest::default()).await.unwrap();
        let mut got = names(&p);
        got.sort();
        (p.total, got)
    };
    let (live, upcoming) = (StatusFilter::Live, StatusFilter::Upcoming);
    assert_eq!(
        found(list(Some("growing"), None, None, live)).await,
        (2, vec!["Grows Free Gb".into(), "Grows Free Us".into()])
    );
    assert_eq!(found(list(Some("growing"), None, None, upcoming)).await, (1, vec!["Grows Soon".into()]));
    let free = found(list(None, Some("fReE"), None, live)).await;
    assert_eq!(free.0, 3, "the pricing model in any case: {free:?}");
    assert_eq!(found(list(None, None, Some("us"), live)).await, (1, vec!["Grows Free Us".into()]));
    assert_eq!(found(list(None, None, Some("US"), upcoming)).await.0, 1);
    assert_eq!(found(list(Some("idea"), None, None, live)).await, (0, vec![]));
    assert_eq!(found(list(None, None, Some("FR"), live)).await, (0, vec![]));
    assert_eq!(found(list(Some("growing"), Some("free"), None, live)).await.0, 2, "two values: counted");
    // A listing leaving live leaves its values' counts.
    let gone = store.get_listing(ids[0]).await.unwrap().unwrap();
    let mut removed = gone.lifecycle;
    removed.remove().unwrap();
    assert!(store.move_lifecycle(gone.id, &gone.lifecycle, &removed, now()).await.unwrap());
    assert_eq!(found(list(Some("growing"), None, None, live)).await, (1, vec!["Grows Free Gb".into()]));
    assert_eq!(found(list(None, Some("free"), None, live)).await.0, 2);
    assert_eq!(found(list(None, None, Some("US"), live)).await.0, 0);
});

// Words with a stage, a pricing model (any case) or a country, alone, together and within a
// category, in every order: the listings with the words and every value, counted exactly, and a
// value's change followed at once (a profile edit, a listing leaving live). PostgreSQL matches the
// values in its search rows beside the words (migration 64), so they must follow the listing.
on_every_store!(words_with_values_find_the_listings_that_have_both, |store| {
    use domain::listing::{CountryCode, PricingModel, SearchSort};
    let cats = seed_categories(store).await;
    let (api, mkt) = (cat_id(&cats, "api-tools"), cat_id(&cats, "marketing"));
    let with = |name: &str, status, stage: Option<&str>, pricing: &str, country: Option<&str>, category| {
        let mut l = listing(name, status, category);
        l.profile.tagline = if name.starts_with("Osprey") { "an osprey over the lake" } else { "a kite" }.into();
        l.profile.stage = stage.map(slug);
        l.profile.pricing_model = pricing.into();
        l.profile.country = country.map(|c| CountryCode::parse(c).unwrap());
        import(l, 0)
    };
    let (live, upcoming) = (ListingStatus::Live, ListingStatus::Scheduled);
    let ids = store
        .import_listings(
            &[
                with("Osprey Grows Free Us", live, Some("growing"), "Free", Some("US"), Some(api)),
                with("Osprey Grows Paid Gb", live, Some("growing"), "Paid", Some("GB"), Some(mkt)),
                with("Osprey Mvp Free Us", live, Some("mvp"), "FREE", Some("US"), None),
                with("Osprey Bare", live, None, "", None, None),
                with("Osprey Soon", upcoming, Some("growing"), "free", Some("US"), None),
                with("Osprey Draft", ListingStatus::Draft, Some("growing"), "Free", Some("US"), None),
                with("Kite Grows", live, Some("growing"), "Free", Some("US"), Some(api)),
            ],
            now(),
        )
        .await
        .unwrap();
    let find =
        |q: &'static str, stage: Option<&'static str>, pricing: Option<&'static str>, country: Option<&'static str>| {
            ListingSearch {
                stage: stage.map(slug),
                pricing_model: pricing.map(|p| PricingModel::parse(p).unwrap()),
                country: country.map(|c| CountryCode::parse(c).unwrap()),
                ..search(Some(q))
            }
        };
    let found = |s: ListingSearch| async move {
        let p = store.search_listings(&s, PageRequest::default()).await.unwrap();
        let mut got = names(&p);
        got.sort();
        assert_eq!(p.total as usize, got.len(), "{s:?}: the total is the listings found");
        got
    };
    let both = vec!["Osprey Grows Free Us".to_owned(), "Osprey Grows Paid Gb".to_owned()];
    let free_us = vec!["Osprey Grows Free Us".to_owned(), "Osprey Mvp Free Us".to_owned()];
    for sort in [
        SearchSort::Relevance,
        SearchSort::Newest,
        SearchSort::Votes,
        SearchSort::Trending,
        SearchSort::MostViewed,
        SearchSort::MostFollowed,
    ] {
        let sorted = |s: ListingSearch| ListingSearch { sort, ..s };
        for q in ["osprey", "ospr", "lake osprey"] {
            assert_eq!(found(sorted(find(q, Some("growing"), None, None))).await, both, "{q} {sort:?}: a stage");
            assert_eq!(found(sorted(find(q, None, Some("fReE"), None))).await, free_us, "{q} {sort:?}: pricing");
            assert_eq!(found(sorted(find(q, None, None, Some("us")))).await, free_us, "{q} {sort:?}: a country");
        }
        let all_three = sorted(find("osprey", Some("growing"), Some("free"), Some("US")));
        assert_eq!(found(all_three).await, ["Osprey Grows Free Us"], "{sort:?}: every value");
        let within =
            ListingSearch { category: Some(slug("dev-tools")), ..sorted(find("osprey", Some("growing"), None, None)) };
        assert_eq!(found(within).await, ["Osprey Grows Free Us"], "{sort:?}: and a category's tree");
        let soon = ListingSearch {
            status: StatusFilter::Upcoming,
            ..sorted(find("osprey", Some("growing"), None, Some("US")))
        };
        assert_eq!(found(soon).await, ["Osprey Soon"], "{sort:?}: upcoming");
        assert!(found(sorted(find("osprey", Some("idea"), None, None))).await.is_empty(), "{sort:?}: no such stage");
        assert!(found(sorted(find("kestrel", Some("growing"), None, None))).await.is_empty(), "{sort:?}: no such word");
        // Words within a category alone, and a category with values and no words: on PostgreSQL
        // matched on the search rows' facets (migration 66), read first or walked (`walk_or_read`).
        for q in ["ospr", "lake osprey", "o"] {
            let within = ListingSearch { category: Some(slug("dev-tools")), ..sorted(find(q, None, None, None)) };
            assert_eq!(found(within).await, ["Osprey Grows Free Us"], "{q} {sort:?}: words in a category");
        }
        let grows =
            ListingSearch { category: Some(slug("dev-tools")), ..sorted(find("x", Some("growing"), None, None)) };
        let grows = ListingSearch { q: None, ..grows };
        assert_eq!(found(grows.clone()).await, ["Kite Grows", "Osprey Grows Free Us"], "{sort:?}: a tree and a stage");
        let free = ListingSearch { category: None, pricing_model: Some(PricingModel::parse("free").unwrap()), ..grows };
        assert_eq!(found(free.clone()).await, ["Kite Grows", "Osprey Grows Free Us"], "{sort:?}: a stage and pricing");
        let soon = ListingSearch { status: StatusFilter::Upcoming, ..free };
        assert_eq!(found(soon).await, ["Osprey Soon"], "{sort:?}: upcoming, two values");
    }
    // A link added to a live listing puts it in the category's searches at once.
    domain::ports::OrderRepository::add_extra_categories(store.as_ref(), ids[1], &[api]).await.unwrap();
    let within = ListingSearch { category: Some(slug("api-tools")), ..find("osprey", Some("growing"), None, None) };
    assert_eq!(found(within).await, both, "a link added");
    // And to a category's searches without words (SQLite counts them in its text index).
    let api_growing =
        ListingSearch { category: Some(slug("api-tools")), q: None, ..find("x", Some("growing"), None, None) };
    let all_growing =
        vec!["Kite Grows".to_owned(), "Osprey Grows Free Us".to_owned(), "Osprey Grows Paid Gb".to_owned()];
    assert_eq!(found(api_growing).await, all_growing, "a link added: a tree and a stage");
    // A profile edit (a maker edits pricing and country; the stage comes with the draft) moves one
    // listing's values and takes another's away. Changes of the stage by statement are followed in
    // `kept_counts_equal_a_recount_after_every_kind_of_change`.
    let ann = store.create_user(accounts::user("ann@acme.example"), now()).await.unwrap();
    let edit = |id, pricing: &str, country: Option<&str>| {
        let store = store.clone();
        let (pricing, country) = (pricing.to_owned(), country.map(|c| CountryCode::parse(c).unwrap()));
        async move {
            let mut p = store.get_listing(id).await.unwrap().unwrap().profile;
            (p.pricing_model, p.country) = (pricing, country);
            store.save_profile_edit(id, ann.id, &p, "{}", "{}", now()).await.unwrap();
        }
    };
    edit(ids[1], "Free", Some("US")).await;
    edit(ids[0], "", None).await;
    let now_free = vec!["Osprey Grows Paid Gb".to_owned(), "Osprey Mvp Free Us".to_owned()];
    assert_eq!(found(find("osprey", None, Some("free"), None)).await, now_free, "one came to free, one left");
    assert_eq!(found(find("osprey", None, None, Some("US"))).await, now_free, "and to the US");
    let grows_free = found(find("osprey", Some("growing"), Some("free"), Some("us"))).await;
    assert_eq!(grows_free, ["Osprey Grows Paid Gb"], "the stage stays");
    assert_eq!(found(find("osprey", Some("growing"), None, None)).await, both, "the stage stays");
    let grows_free = ListingSearch { q: None, ..find("x", Some("growing"), Some("free"), None) };
    let now_growing_free = vec!["Kite Grows".to_owned(), "Osprey Grows Paid Gb".to_owned()];
    assert_eq!(found(grows_free).await, now_growing_free, "two values without words follow the edit");
    // A listing leaving live leaves the search, values and all.
    let gone = store.get_listing(ids[2]).await.unwrap().unwrap();
    let mut removed = gone.lifecycle;
    removed.remove().unwrap();
    assert!(store.move_lifecycle(gone.id, &gone.lifecycle, &removed, now()).await.unwrap());
    assert_eq!(found(find("osprey", None, Some("free"), None)).await, ["Osprey Grows Paid Gb"], "removed");
});

// Several words (or a prefix several words begin) among the upcoming listings, in every order: the
// upcoming listings with every word, counted exactly, never a live one, and a listing going live
// leaves the count at once. PostgreSQL counts these from an index of the upcoming rows alone when
// nothing is ranked (migration 70), and reads the ones it ranks by relevance from the eighths of the
// upcoming rows (migration 71): both give the same total.
on_every_store!(several_words_among_upcoming_listings_count_the_upcoming_ones, |store| {
    use domain::listing::SearchSort;
    let said = |name: &str, status, tagline: &str| {
        let mut l = listing(name, status, None);
        l.profile.tagline = tagline.into();
        import(l, 0)
    };
    let (live, soon) = (ListingStatus::Live, ListingStatus::Scheduled);
    let ids = store
        .import_listings(
            &[
                said("Harbour One", soon, "a harbour light over the lake"),
                said("Harbour Two", soon, "harbour light and a lantern"),
                said("Harbour Three", soon, "a harbour only"),
                said("Harbour Live", live, "harbour light, already out"),
                said("Lantern Soon", soon, "lantern light by the lake"),
            ],
            now(),
        )
        .await
        .unwrap();
    let sorts = [
        SearchSort::Relevance,
        SearchSort::Votes,
        SearchSort::Newest,
        SearchSort::Trending,
        SearchSort::MostViewed,
        SearchSort::MostFollowed,
    ];
    let found = |q: &'static str, status, sort| async move {
        let s = ListingSearch { status, sort, ..search(Some(q)) };
        let p = store.search_listings(&s, PageRequest::default()).await.unwrap();
        let mut got = names(&p);
        got.sort();
        (p.total, got)
    };
    let (upcoming, live_only) = (StatusFilter::Upcoming, StatusFilter::Live);
    let one_two = || (2, vec!["Harbour One".to_owned(), "Harbour Two".to_owned()]);
    for sort in sorts {
        assert_eq!(found("harbour light", upcoming, sort).await, one_two(), "{sort:?}");
        assert_eq!(found("harbour l", upcoming, sort).await, one_two(), "a prefix: {sort:?}");
        assert_eq!(
            found("light lake", upcoming, sort).await,
            (2, vec!["Harbour One".to_owned(), "Lantern Soon".to_owned()]),
            "{sort:?}"
        );
        assert_eq!(found("harbour light", live_only, sort).await, (1, vec!["Harbour Live".to_owned()]), "{sort:?}");
        assert_eq!(found("harbour qqqzx", upcoming, sort).await, (0, vec![]), "{sort:?}");
    }
    // Harbour Two goes live: it leaves the upcoming count and joins the live one.
    let two = store.get_listing(ids[1]).await.unwrap().unwrap();
    let its_week = two.lifecycle.launch_week().expect("scheduled for a week").starts_at();
    let mut launched = two.lifecycle;
    launched.go_live(its_week).unwrap();
    assert!(store.move_lifecycle(two.id, &two.lifecycle, &launched, its_week).await.unwrap());
    for sort in sorts {
        assert_eq!(found("harbour light", upcoming, sort).await, (1, vec!["Harbour One".to_owned()]), "{sort:?}");
        assert_eq!(found("harbour light", live_only, sort).await.0, 2, "{sort:?}");
    }
});

// Words on every listing with a value on most of them, more matches than a search ranks (1 000):
// before the word counts are kept and after, the same count and the same pages. PostgreSQL chooses
// how it reads the search rows from the kept counts (`listings::scan_the_facets`): before they are
// counted it intersects the words' index with the values', after it scans the US listings' rows and
// checks the word on each. Both hand out the rows in the table's order, so the same thousand
// are ranked.
on_every_store!(a_common_word_with_a_common_value_pages_alike_however_it_is_read, |store| {
    use domain::listing::CountryCode;
    const N: usize = 10_200;
    let items: Vec<ImportListing> = (0..N)
        .map(|i| {
            let mut l = listing(&format!("Heron {i}"), ListingStatus::Live, None);
            l.profile.tagline = "a heron by the lake".into();
            l.profile.country = (i % 3 != 0).then(|| CountryCode::parse("US").unwrap());
            import(l, 0)
        })
        .collect();
    for chunk in items.chunks(2_000) {
        store.import_listings(chunk, now()).await.unwrap();
    }
    let us = |q: &str| ListingSearch { country: Some(CountryCode::parse("US").unwrap()), ..search(Some(q)) };
    let pages = || async {
        let mut got = Vec::new();
        for q in ["heron", "her"] {
            for page in [1, 3] {
                let p = store.search_listings(&us(q), PageRequest::parse(Some(page), Some(20)).unwrap()).await.unwrap();
                assert_eq!((p.total, p.total_exact, p.items.len()), (6_800, true, 20), "{q} page {page}");
                got.push(names(&p));
            }
        }
        got
    };
    let before = pages().await;
    store.refresh_search_terms().await.unwrap();
    assert_eq!(pages().await, before, "the same pages with the word counts kept");
    assert_ne!(before[0], before[1], "page 3 is not page 1");
});

// The founders behind live listings, where each of 10 050 founders has a live listing of their own:
// the founder's links must be found by the founder. Joined the other way (SQLite has no statistics),
// each founder walked every live listing: 10 050 × 10 050 here (over 5 s a statement in a debug build,
// under a second the right way), and a list of founders took 545 s to count
// at 100k listings and held a pooled connection all that time. The total is counted as a search's
// is, up to the cap ("10 000+"), and the page is the founders in order of name, then id.
on_every_store!(founders_behind_live_listings_are_found_by_their_own_links, |store| {
    use domain::founder::NewFounder;
    use domain::paging::COUNT_CAP;
    const N: usize = 10_050;
    let founders: Vec<NewFounder> = (0..N).map(|i| maker(&format!("maker-{i}"), &format!("Maker {i}"))).collect();
    let ids = store.import_founders(&founders).await.unwrap();
    let items: Vec<ImportListing> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let mut item = import(listing(&format!("Made {i}"), ListingStatus::Live, None), 0);
            item.founders = vec![(*id, "Founder".into())];
            item
        })
        .collect();
    for chunk in items.chunks(1_000) {
        store.import_listings(chunk, now()).await.unwrap();
    }
    for q in [None, Some("maker 1")] {
        let listed = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            store.list_founders(q, None, PageRequest::parse(Some(2), Some(100)).unwrap()),
        )
        .await
        .unwrap_or_else(|_| panic!("the founders (q = {q:?}) listed within 5 s"))
        .unwrap();
        let matching: Vec<String> =
            (0..N).map(|i| format!("Maker {i}")).filter(|name| q.is_none() || name.contains("Maker 1")).collect();
        let want = if q.is_none() { (COUNT_CAP, false) } else { (matching.len() as u64, true) };
        assert_eq!((listed.total, listed.total_exact), want, "q = {q:?}");
        let mut in_order = matching;
        in_order.sort();
        let page: Vec<&str> = listed.items.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            page,
            in_order[100..200].iter().map(String::as_str).collect::<Vec<_>>(),
            "q = {q:?}: page 2 by name"
        );
    }
});

on_every_store!(full_text_search_ranks_and_filters, |store| {
    let cats = seed_categories(store).await;
    let dev = cat_id(&cats, "dev-tools");
    let api = cat_id(&cats, "api-tools");
    let mut timely = listing("Timely Tracker", ListingStatus::Live, Some(api));
    timely.profile.description = "Track the hours your team spends.".into();
    timely.profile.country = Some(CountryCode::parse("DE").unwrap());
    let mut ledger = listing("Ledger Lane", ListingStatus::Live, Some(dev));
    ledger.profile.description = "Invoices, and a tracker for expenses.".into();
    ledger.profile.keywords = vec!["bookkeeping".into()];
    let mut hidden = listing("Tracker Draft", ListingStatus::Draft, Some(dev));
    hidden.profile.description = "tracker".into();
    let mut soon = listing("Soon Tracker", ListingStatus::Scheduled, Some(dev));
    soon.profile.features = vec!["tracker of things".into()];
    let ids = store
        .import_listings(&[import(timely, 3), import(ledger, 9), import(hidden, 0), import(soon, 0)], now())
        .await
        .unwrap();
    assert_eq!(ids.len(), 4);
    let page = PageRequest::default();

    let r = store.search_listings(&search(Some("tracker")), page).await.unwrap();
    assert_eq!(
        names(&r),
        vec!["Timely Tracker", "Ledger Lane"],
        "a name match outranks a description match; drafts never show"
    );
    assert_eq!(r.total, 2);
    let prefix = store.search_listings(&search(Some("book")), page).await.unwrap();
    assert_eq!(names(&prefix), vec!["Ledger Lane"], "the last word matches as a prefix, keywords are searched");
    let stemmed = store.search_listings(&search(Some("invoice")), page).await.unwrap();
    assert_eq!(names(&stemmed), vec!["Ledger Lane"], "stemming finds invoices");
    let none = store.search_listings(&search(Some("\"* OR")), page).await.unwrap();
    assert!(
        none.items.is_empty() || none.items.iter().all(|s| s.status == ListingStatus::Live),
        "FTS syntax is neutralised"
    );
    let symbols = store.search_listings(&search(Some("!!!")), page).await.unwrap();
    assert_eq!(symbols.total, 0);

    let mut by_votes = search(None);
    by_votes.sort = SearchSort::Votes;
    assert_eq!(names(&store.search_listings(&by_votes, page).await.unwrap()), vec!["Ledger Lane", "Timely Tracker"]);
    let mut in_parent = search(None);
    in_parent.category = Some(slug("dev-tools"));
    assert_eq!(
        store.search_listings(&in_parent, page).await.unwrap().total,
        2,
        "a parent category includes its subcategories"
    );
    let mut in_child = search(None);
    in_child.category = Some(slug("api-tools"));
    assert_eq!(names(&store.search_listings(&in_child, page).await.unwrap()), vec!["Timely Tracker"]);
    let mut de = search(Some("tracker"));
    de.country = Some(CountryCode::parse("de").unwrap());
    assert_eq!(names(&store.search_listings(&de, page).await.unwrap()), vec!["Timely Tracker"]);
    let mut domain = search(None);
    domain.domain = Some(domain::listing::DomainFilter::parse("WWW.ledger-lane.example").unwrap());
    assert_eq!(names(&store.search_listings(&domain, page).await.unwrap()), vec!["Ledger Lane"]);
    let mut upcoming = search(Some("tracker"));
    upcoming.status = StatusFilter::Upcoming;
    assert_eq!(names(&store.search_listings(&upcoming, page).await.unwrap()), vec!["Soon Tracker"]);

    let second = store.search_listings(&search(None), PageRequest::parse(Some(2), Some(1)).unwrap()).await.unwrap();
    assert_eq!((second.items.len(), second.total, second.total_pages()), (1, 2, 2));
});

on_both!(the_last_word_completes_beside_the_words_before_it, |store| {
    // SQLite spells a last word's completions out as terms (up to eight) and keeps a prefix query
    // beyond that; both must answer as the prefix did, with the earlier words still required.
    let mut hours = listing("Hours Tracker", ListingStatus::Live, None);
    hours.profile.description = "Time tracking for teams.".into();
    let mut capsule = listing("Time Capsule", ListingStatus::Live, None);
    capsule.profile.description = "Letters to the future.".into();
    let mut trace = listing("Trace Viewer", ListingStatus::Live, None);
    trace.profile.description = "Time spent in each span.".into();
    let mut words = listing("Word Shop", ListingStatus::Live, None);
    words.profile.description = "hours of tea tan tap tar tab tag tax tin tip top tub zone zoo zoom zodiac zombie zoology zonal zorro zoetrope zounds"
            .into();
    store
        .import_listings(&[import(hours, 3), import(capsule, 2), import(trace, 1), import(words, 0)], now())
        .await
        .unwrap();
    let page = PageRequest::default();
    let found = |q: &'static str| async move {
        let mut n = names(&store.search_listings(&search(Some(q)), page).await.unwrap());
        n.sort();
        n
    };
    // Before SQLite's table of terms is refreshed (completions read from the index) and after (from the table).
    for refreshed in [false, true] {
        assert_eq!(found("time trac").await, vec!["Hours Tracker", "Trace Viewer"], "completions ({refreshed})");
        assert_eq!(found("time tracking").await, vec!["Hours Tracker"], "a whole last word, stemmed");
        assert_eq!(found("time trackers").await, vec!["Hours Tracker"], "a plural finds the singular");
        assert_eq!(found("trac time").await, Vec::<String>::new(), "only the last word is a prefix");
        // `t`, `z` and `zo` begin more than eight terms here: the prefix query answers (on SQLite from
        // the index's lists of first letters and first two letters, migration 62).
        assert_eq!(found("hours t").await, vec!["Hours Tracker", "Word Shop"]);
        // A one-letter English stop word as the last word is a prefix too (PostgreSQL, migration 63).
        assert_eq!(found("s").await, vec!["Trace Viewer", "Word Shop"]);
        assert_eq!(found("time s").await, vec!["Trace Viewer"]);
        assert_eq!(found("tracking t").await, vec!["Hours Tracker"]);
        let mut in_shop = search(Some("s"));
        in_shop.domain = Some(domain::listing::DomainFilter::parse("word-shop.example").unwrap());
        assert_eq!(names(&store.search_listings(&in_shop, page).await.unwrap()), vec!["Word Shop"], "with a filter");
        assert_eq!(found("z").await, vec!["Word Shop"]);
        assert_eq!(found("zo").await, vec!["Word Shop"]);
        assert_eq!(found("hours zo").await, vec!["Word Shop"]);
        assert_eq!(found("time zo").await, Vec::<String>::new());
        assert_eq!(found("zoo").await, vec!["Word Shop"], "three letters, completions spelled out");
        assert_eq!(found("tab").await, vec!["Word Shop"]);
        assert_eq!(found("capsul").await, vec!["Time Capsule"]);
        assert_eq!(store.refresh_search_terms().await.unwrap(), !refreshed);
    }
    if store.backend() == sea_orm::DbBackend::Sqlite {
        let definition = count_of(
            store,
            &format!(
                "SELECT count(*) AS n FROM sqlite_master WHERE name = 'listings_fts' AND sql LIKE '%{}%'",
                migration::SQLITE_PREFIXES.replace('\'', "''")
            ),
        )
        .await;
        assert_eq!(definition, 1, "the index keeps its words' first letters and first two letters");
    }
});

/// SQLite's table of terms, as (term, listings) in term order; and the full-text index's own count.
async fn terms_and_index(store: &adapters_storage::SeaOrmStore) -> (Vec<(String, i64)>, Vec<(String, i64)>) {
    #[derive(Debug, sea_orm::FromQueryResult)]
    struct Term {
        term: String,
        docs: i64,
    }
    let read = |sql: &'static str| async move {
        let stmt = sea_orm::Statement::from_string(sea_orm::DbBackend::Sqlite, sql);
        let rows = <Term as sea_orm::FromQueryResult>::find_by_statement(stmt).all(store.connection()).await.unwrap();
        rows.into_iter().map(|t| (t.term, t.docs)).collect::<Vec<_>>()
    };
    (
        read("SELECT term, docs FROM listing_terms ORDER BY term").await,
        read("SELECT term, doc AS docs FROM listings_fts_vocab ORDER BY term").await,
    )
}

on_both!(a_word_on_more_listings_than_are_ranked_has_its_exact_live_total, |store| {
    // More live listings say the word than a search ranks (1 000), so its total is not the candidates'
    // count: SQLite takes it from the live count kept per term (migration 43) while the table is
    // current, and counts it otherwise; PostgreSQL from its counts per status (migration 34). Either
    // way it is exact, and the scheduled listings that say it too are not in it.
    use sea_orm::ConnectionTrait;
    let sqlite = store.connection().get_database_backend() == sea_orm::DbBackend::Sqlite;
    let with_word = |name: String, status: ListingStatus, word: &str| {
        let mut l = listing(&name, status, None);
        l.profile.description = format!("Send {word} to clients.");
        import(l, 0)
    };
    let mut batch: Vec<ImportListing> =
        (0..1_100).map(|i| with_word(format!("Ledger {i}"), ListingStatus::Live, "invoices")).collect();
    batch.extend((0..60).map(|i| with_word(format!("Upcoming {i}"), ListingStatus::Scheduled, "an invoice")));
    store.import_listings(&batch, now()).await.unwrap();
    store.refresh_search_terms().await.unwrap();
    let total = |q: &'static str| async move {
        store.search_listings(&search(Some(q)), PageRequest::default()).await.unwrap().total
    };
    assert_eq!(total("invoices").await, 1_100);
    assert_eq!(total("invoice").await, 1_100, "the same term, stemmed");
    if sqlite {
        #[derive(Debug, sea_orm::FromQueryResult)]
        struct Live {
            live: Option<i64>,
        }
        let kept = || async {
            let stmt = sea_orm::Statement::from_string(
                sea_orm::DbBackend::Sqlite,
                "SELECT live FROM listing_terms WHERE term = 'invoic'",
            );
            <Live as sea_orm::FromQueryResult>::find_by_statement(stmt)
                .one(store.connection())
                .await
                .unwrap()
                .unwrap()
                .live
        };
        assert_eq!(kept().await, Some(1_100), "the stemmed term's live listings, kept");
        // While the table is current the kept count is the total (not counted again) ...
        store.connection().execute_unprepared("UPDATE listing_terms SET live = 7 WHERE term = 'invoic'").await.unwrap();
        assert_eq!(total("invoices").await, 7);
        // ... and once it is behind, the total is counted.
        store.connection().execute_unprepared("UPDATE listing_terms_state SET changes = changes + 1").await.unwrap();
        assert_eq!(total("invoices").await, 1_100);
        assert!(store.refresh_search_terms().await.unwrap());
        assert_eq!(kept().await, Some(1_100), "the refresh counts it again");
    }
    // One more live listing: counted before the refresh, kept after it, the same on both stores.
    store.import_listings(&[with_word("Ledger more".into(), ListingStatus::Live, "invoices")], now()).await.unwrap();
    assert_eq!(total("invoices").await, 1_101);
    store.refresh_search_terms().await.unwrap();
    assert_eq!(total("invoices").await, 1_101);
});

on_both!(a_word_repeated_in_a_description_does_not_outrank_the_listing_named_by_it, |store| {
    // A maker writes their own description. PostgreSQL ranked with `ts_rank_cd`, which adds up every
    // occurrence: eleven in a description (weight D, 0.1 each) beat one in the name (A, 1.0). It ranks
    // with `ts_rank` since migration 51: a word's best-weighted occurrence counts whole, each further
    // one less. SQLite's bm25 saturates a word's frequency too. Both ways a search is ranked: one word
    // alone (before and after the term counts are refreshed) and within a category.
    let dyn_store: std::sync::Arc<dyn domain::ports::Store> = std::sync::Arc::new(store.clone());
    let cats = seed_categories(&dyn_store).await;
    let dev = cat_id(&cats, "dev-tools");
    let named = listing("Invoices Desk", ListingStatus::Live, Some(dev));
    let mut stuffed = listing("Ledger Zeta", ListingStatus::Live, Some(dev));
    stuffed.profile.description = vec!["invoices"; 40].join(" ");
    let mut other = listing("Paper Trail", ListingStatus::Live, Some(dev));
    other.profile.description = "Send invoices to clients.".into();
    store.import_listings(&[import(stuffed, 50), import(named, 0), import(other, 0)], now()).await.unwrap();
    let page = PageRequest::default();
    let in_dev = |q: &str| ListingSearch { category: Some(slug("dev-tools")), ..search(Some(q)) };
    for refreshed in [false, true] {
        for s in [search(Some("invoices")), search(Some("invoic")), in_dev("invoices")] {
            let found = names(&store.search_listings(&s, page).await.unwrap());
            assert_eq!(found, ["Invoices Desk", "Ledger Zeta", "Paper Trail"], "{s:?} (terms refreshed: {refreshed})");
        }
        store.refresh_search_terms().await.unwrap();
    }
});

on_both!(searches_rank_the_same_with_kept_and_counted_term_counts, |store| {
    // SQLite ranks with bm25 whose document counts come from `listing_terms`; with the table current
    // that must order every page as counting in the index does (what a term missing from the table
    // falls back to). PostgreSQL ranks without counts but takes a one-word total from its kept counts
    // (migration 34): every total and page must be what counting gives.
    use sea_orm::ConnectionTrait;
    demo_data::seed_reference(store).await.unwrap();
    demo_data::bulk_load_demo(store, demo_data::generate::DemoConfig::standard(now()), false).await.unwrap();
    let sqlite = store.connection().get_database_backend() == sea_orm::DbBackend::Sqlite;
    assert!(!store.refresh_search_terms().await.unwrap(), "the bulk load left the table current");
    let queries = ["workflow", "team work", "export", "automat", "data pipelines", "invoice", "ai writing"];
    let mut kept = Vec::new();
    for q in queries {
        let page = PageRequest::parse(Some(1), Some(50)).unwrap();
        let r = store.search_listings(&search(Some(q)), page).await.unwrap();
        kept.push((q, r.total, r.items.iter().map(|s| s.id).collect::<Vec<_>>()));
    }
    assert!(kept.iter().filter(|(_, total, _)| *total > 5).count() >= 4, "the words match: {kept:?}");
    // No kept count (and the table marked behind, so completions come from the index as well).
    let terms = if sqlite { "listing_terms" } else { "listing_status_terms" };
    let forget = format!("DELETE FROM {terms}; UPDATE listing_terms_state SET changes = changes + 1");
    store.connection().execute_unprepared(&forget).await.unwrap();
    for (q, total, ids) in &kept {
        let page = PageRequest::parse(Some(1), Some(50)).unwrap();
        let r = store.search_listings(&search(Some(q)), page).await.unwrap();
        assert_eq!((r.total, &r.items.iter().map(|s| s.id).collect::<Vec<_>>()), (*total, ids), "{q}");
    }
});

/// One call of PostgreSQL's `listing_text_search` (migration 34) inside `txn` on the candidate path: the
/// ids it ranks in order, the count it reports, and the sequential scans of `listing_search` it made.
/// The word is asked for with all four weights (`'word':*ABCD`), which matches what the bare word
/// matches and keeps the search off the ranked path a bare word takes (migration 54): these are the
/// paths a prefix that begins several words takes.
async fn pg_text_search(
    txn: &sea_orm::DatabaseTransaction,
    word: &str,
    cap: i32,
    candidates: i32,
) -> (Vec<i64>, i64, i64) {
    use sea_orm::ConnectionTrait;
    #[derive(Debug, sea_orm::FromQueryResult)]
    struct Hit {
        listing_id: Option<i64>,
        matches: i64,
    }
    #[derive(Debug, sea_orm::FromQueryResult)]
    struct Scans {
        n: i64,
    }
    let scans = || async {
        let sql = "SELECT COALESCE(seq_scan, 0) AS n FROM pg_stat_xact_user_tables WHERE relname = 'listing_search'";
        let stmt = sea_orm::Statement::from_string(sea_orm::DbBackend::Postgres, sql);
        <Scans as sea_orm::FromQueryResult>::find_by_statement(stmt).one(txn).await.unwrap().map_or(0, |s| s.n)
    };
    let before = scans().await;
    let sql = "SELECT listing_id, matches FROM listing_text_search(to_tsquery('english', $1), 'live', $2, $3) \
               ORDER BY rank DESC NULLS LAST, listing_id DESC";
    let stmt = sea_orm::Statement::from_sql_and_values(
        txn.get_database_backend(),
        sql,
        [format!("{word}:*ABCD").into(), cap.into(), candidates.into()],
    );
    let hits = <Hit as sea_orm::FromQueryResult>::find_by_statement(stmt).all(txn).await.unwrap();
    let matches = hits.first().map_or(-1, |h| h.matches);
    let ids = hits.into_iter().filter_map(|h| h.listing_id).collect();
    (ids, matches, scans().await - before)
}

/// PostgreSQL (migrations 34 and 53): with the kept counts current, a word that is one kept term
/// takes its total from the table; a word the kept counts put over the cap, current or not, reports
/// the cap; either way its candidates are the ones counting finds, by any of the scans (the whole
/// index, its eighths in order, the table in order). A table behind by enough changes, or a prefix
/// that begins several terms, makes it count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_takes_a_word_s_total_from_the_kept_counts_only_when_they_prove_it() {
    use sea_orm::{ConnectionTrait, TransactionTrait};
    let Some(db) = harness::postgres().await else { return };
    let store = &db.store;
    let conn = store.connection();
    // Forty listings say "alpha", three "beta", two of those also "betamax"; ninety-two neither.
    // Twenty of the "alpha" ones have ids 1–20 (the first block of 1 024 ids: the first eighth of the
    // index, migration 53), the other twenty ids from 2 049 (the third); the first twenty's rows are
    // then written again, as an edit moves a row, so that the table holds the third block's first.
    let mut rows = Vec::new();
    for i in 0..115 {
        let mut l = listing(&format!("Kept {i}"), ListingStatus::Live, None);
        l.profile.description = match i {
            0..20 => "alpha tools".into(),
            20 => "beta tools".into(),
            21 | 22 => "beta betamax tools".into(),
            _ => "gamma".into(),
        };
        rows.push(import(l, 0));
    }
    store.import_listings(&rows, now()).await.unwrap();
    conn.execute_unprepared("SELECT setval(pg_get_serial_sequence('listings', 'id'), 2048)").await.unwrap();
    let later: Vec<_> = (0..20)
        .map(|i| {
            let mut l = listing(&format!("Later {i}"), ListingStatus::Live, None);
            l.profile.description = "alpha tools".into();
            import(l, 0)
        })
        .collect();
    store.import_listings(&later, now()).await.unwrap();
    let moved = "WITH d AS (DELETE FROM listing_search WHERE listing_id < 1024 RETURNING *) \
                 INSERT INTO listing_search SELECT * FROM d";
    conn.execute_unprepared(moved).await.unwrap();
    conn.execute_unprepared("ANALYZE listing_search").await.unwrap();
    // Inside a transaction rolled back after: `setup` (say, an edit of the kept table), then one search.
    let search = |setup: &'static str, word: &'static str, cap: i32, candidates: i32| async move {
        let txn = conn.begin().await.unwrap();
        if !setup.is_empty() {
            txn.execute_unprepared(setup).await.unwrap();
        }
        let r = pg_text_search(&txn, word, cap, candidates).await;
        txn.rollback().await.unwrap();
        r
    };
    const BEHIND: &str = "UPDATE listing_terms_state SET changes = changes + 1";
    let counted = search(BEHIND, "alpha", 6, 4).await;
    assert_eq!((counted.0.len(), counted.1), (4, 6), "never refreshed: counted to the cap {counted:?}");
    assert!(store.refresh_search_terms().await.unwrap());
    assert!(!store.refresh_search_terms().await.unwrap(), "nothing changed since");
    let kept = |term: &'static str| async move {
        let sql = format!("SELECT docs AS n FROM listing_status_terms WHERE status = 'live' AND term = '{term}'");
        let row = conn.query_one_raw(sea_orm::Statement::from_string(conn.get_database_backend(), sql)).await.unwrap();
        row.map(|r| r.try_get::<i64>("", "n").unwrap())
    };
    assert_eq!((kept("alpha").await, kept("beta").await, kept("betamax").await), (Some(40), Some(3), Some(2)));
    // Forty matches and four candidates (40² < 4 × 1 000 × 135): read eighth by eighth, so the four
    // come from the first block, though the table holds them last, counted or not.
    assert!(counted.0.iter().all(|id| *id < 1024), "the first eighth first: {counted:?}");

    // Current, one term: the total is the kept count (told 39, it says 39), and only the candidates
    // are read; behind by one change, it counts (40).
    assert_eq!(search("", "alpha", 50, 4).await, (counted.0.clone(), 40, 0));
    let told = "UPDATE listing_status_terms SET docs = 39 WHERE term = 'alpha'";
    assert_eq!(search(told, "alpha", 50, 4).await.1, 39, "the kept count is the total");
    assert_eq!(search(BEHIND, "alpha", 50, 4).await.1, 40, "behind: counted");
    assert_eq!(search("", "zzyzx", 20, 4).await, (Vec::new(), 0, 0), "no such term: nothing to read");
    // `beta` as a prefix begins two terms: counted, whatever the table says.
    let told = "UPDATE listing_status_terms SET docs = 2 WHERE term = 'beta'";
    assert_eq!(search(told, "beta", 20, 4).await.1, 3, "two terms begin it: counted");

    // Over the cap by the kept count, current or behind by less than the margin: read by eighths
    // (40² < 4 × 1 000 × 135, the class a first page's candidates set), a page of 2 candidates as a
    // page of 4 and as counting reads it.
    assert_eq!(search("", "alpha", 6, 4).await, (counted.0.clone(), 6, 0), "the same candidates, by the eighths");
    assert_eq!(search(BEHIND, "alpha", 6, 4).await, (counted.0.clone(), 6, 0), "40 - 1 changes is over the cap");
    let two_of_four = search("", "alpha", 6, 2).await;
    assert_eq!((two_of_four.0.len(), two_of_four.1, two_of_four.2), (2, 6, 0), "{two_of_four:?}");
    assert!(two_of_four.0.iter().all(|id| counted.0.contains(id)), "the class is not the page's: {two_of_four:?}");
    // Told it is on 2 000 (2 000² ≥ 4 × 1 000 × 135): the sequential scan, in the table's order, and
    // counting that word (behind by more than its count less the cap) reads the whole index in that
    // order too.
    const COMMON: &str = "UPDATE listing_status_terms SET docs = 2000 WHERE term = 'alpha'";
    let two = search(COMMON, "alpha", 6, 2).await;
    assert_eq!(two.2, 1, "a sequential scan: {two:?}");
    const COMMON_BEHIND: &str = "UPDATE listing_status_terms SET docs = 2000 WHERE term = 'alpha'; \
                                 UPDATE listing_terms_state SET changes = changes + 1999";
    let two_counted = search(COMMON_BEHIND, "alpha", 6, 2).await;
    assert_eq!(two_counted.2, 0, "counting reads the bitmap");
    assert_eq!((&two.0, two.1), (&two_counted.0, 6), "the same candidates as counting's");
    assert!(two.0.iter().all(|id| *id > 2048), "in the table's order, not by eighths: {two:?}");
    let told = "UPDATE listing_status_terms SET docs = 100 WHERE term = 'beta'";
    assert_eq!(search(told, "beta", 6, 4).await.1, 6, "told 100, a word on 3 reports the cap");

    // Thirty-five "alpha" listings leave: 40 - 35 changes is under the cap, so the stale table is not
    // trusted.
    let sql = "DELETE FROM listings WHERE id IN (SELECT listing_id FROM listing_search WHERE doc @@ 'alpha' LIMIT 35)";
    conn.execute_unprepared(sql).await.unwrap();
    assert_eq!(search("", "alpha", 6, 4).await.1, 5, "five left, counted exactly");
    assert!(store.refresh_search_terms().await.unwrap());
    assert_eq!(kept("alpha").await, Some(5));
    assert_eq!(search("", "alpha", 20, 4).await.1, 5);
    let sql = "DELETE FROM listings WHERE id IN (SELECT listing_id FROM listing_search WHERE doc @@ 'alpha')";
    conn.execute_unprepared(sql).await.unwrap();
    assert!(store.refresh_search_terms().await.unwrap());
    assert_eq!(kept("alpha").await, None, "a term no listing holds leaves the table");
}

/// PostgreSQL (migration 54): a search for one word reads its listings best first from the kept ranked
/// words, and every page is what ranking all of its matches by `ts_rank`, then id, gives; a prefix
/// that begins one word is that word; a prefix that begins two, or a query with weights, ranks its
/// candidates as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_ranks_one_word_over_every_match_from_its_kept_words() {
    use sea_orm::{ConnectionTrait, TransactionTrait};
    let Some(db) = harness::postgres().await else { return };
    let store = &db.store;
    let conn = store.connection();
    // Thirty listings say "orbit" once to four times in their description (low ranks), written
    // first; three scheduled; then four with it in their name (the best), written last; twenty
    // without it.
    let mut rows = Vec::new();
    for i in 0..30 {
        let mut l = listing(&format!("Plain {i}"), ListingStatus::Live, None);
        l.profile.description = format!("{} tools", vec!["orbit"; 1 + i % 4].join(" and "));
        rows.push(import(l, 0));
    }
    for i in 0..3 {
        let mut l = listing(&format!("Soon {i}"), ListingStatus::Scheduled, None);
        l.profile.description = "orbit".into();
        rows.push(import(l, 0));
    }
    for i in 0..20 {
        rows.push(import(listing(&format!("Other {i}"), ListingStatus::Live, None), 0));
    }
    for i in 0..4 {
        rows.push(import(listing(&format!("Orbit Prime {i}"), ListingStatus::Live, None), 0));
    }
    store.import_listings(&rows, now()).await.unwrap();
    assert_eq!(ranked_terms_recounted(store).await.1, 0);
    #[derive(Debug, sea_orm::FromQueryResult)]
    struct Id {
        id: i64,
    }
    let ids = |sql: String| async move {
        let stmt = sea_orm::Statement::from_string(sea_orm::DbBackend::Postgres, sql);
        <Id as sea_orm::FromQueryResult>::find_by_statement(stmt)
            .all(conn)
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect::<Vec<_>>()
    };
    // Every live match, by rank over all of them.
    let all = ids("SELECT listing_id AS id FROM listing_search WHERE status = 'live' AND doc @@ 'orbit'::tsquery \
                   ORDER BY ts_rank(doc, 'orbit'::tsquery) DESC, listing_id DESC"
        .to_owned())
    .await;
    assert_eq!(all.len(), 34);
    let by_page = |q: &'static str, per_page: i64| async move {
        let mut seen = Vec::new();
        let mut total = 0;
        for n in 1..=10 {
            let r = store.search_listings(&search(Some(q)), PageRequest::parse(Some(n), Some(per_page)).unwrap()).await;
            let r = r.unwrap();
            total = r.total;
            seen.extend(r.items.iter().map(|s| s.id.get()));
        }
        (seen, total)
    };
    let stored = all;
    assert_eq!(by_page("orbit", 7).await, (stored.clone(), 34), "pages of 7, as ranking every match gives");
    assert_eq!(by_page("orb", 5).await, (stored.clone(), 34), "a prefix that begins one word");
    // The kept counts behind (every change bumps them until a refresh): the total is counted.
    conn.execute_unprepared("UPDATE listing_terms_state SET changes = changes + 5").await.unwrap();
    assert_eq!(by_page("orbit", 7).await, (stored.clone(), 34), "counted while the kept counts are behind");
    assert!(store.refresh_search_terms().await.unwrap());
    assert_eq!(by_page("orbit", 7).await, (stored.clone(), 34), "the kept count");

    // The function itself, two candidates: the ranked path returns the two best of all matches; the
    // candidate path (the same word with all four weights) ranks the first two it finds, which here
    // are written first and rank lower.
    let call = |q: &'static str| {
        format!(
            "SELECT listing_id AS id FROM listing_text_search(to_tsquery('english', '{q}'), 'live', 100, 2) \
             ORDER BY rank DESC, listing_id DESC"
        )
    };
    assert_eq!(ids(call("orbit:*")).await, stored[..2].to_vec(), "the two best of all");
    let candidates = ids(call("orbit:*ABCD")).await;
    assert_eq!(candidates.len(), 2);
    assert!(candidates.iter().all(|id| !stored[..4].contains(id)), "the first two found: {candidates:?}");
    // `deep` bounds the ranked path's rows to the page's end.
    let deep = "SELECT listing_id AS id FROM listing_text_search('orbit', 'live', 100, 1000, 3)".to_owned();
    assert_eq!(ids(deep).await.len(), 3);
    assert_eq!(store.search_listings(&search(Some("zzyzx")), PageRequest::default()).await.unwrap().total, 0);

    // The statements the function reads them with, their status written out as it writes it (the
    // migration's own test checks that), read the live words' own index, under the function's
    // settings (no sequential scan).
    let txn = conn.begin().await.unwrap();
    txn.execute_unprepared("SET LOCAL enable_seqscan = off").await.unwrap();
    for statement in [
        "SELECT min(t.term), max(t.term) FROM listing_search_terms t WHERE t.status = 'live' \
         AND t.term >= 'orbit' AND t.term <= 'orbit' || chr(1114111)",
        "SELECT t.listing_id, t.rank FROM listing_search_terms t WHERE t.status = 'live' AND t.term = 'orbit' \
         ORDER BY t.rank DESC, t.listing_id DESC LIMIT 20",
    ] {
        let stmt = sea_orm::Statement::from_string(sea_orm::DbBackend::Postgres, format!("EXPLAIN {statement}"));
        let rows = txn.query_all_raw(stmt).await.unwrap();
        let plan: Vec<String> = rows.iter().map(|r| r.try_get("", "QUERY PLAN").unwrap()).collect();
        let plan = plan.join("\n");
        assert!(plan.contains("ix_listing_search_terms_live") && !plan.contains("Sort"), "{statement}: {plan}");
    }
    txn.rollback().await.unwrap();

    // A listing says "orbweaver" (`orbweav`): "orb" now begins two words and ranks its candidates
    // (all 35 matches, fewer than the candidates); "orbit" still reads its kept words.
    let mut weaver = listing("Weaver", ListingStatus::Live, None);
    weaver.profile.description = "orbweaver".into();
    store.create_listing(weaver).await.unwrap();
    assert_eq!(by_page("orbit", 7).await, (stored.clone(), 34));
    let (orb, total) = by_page("orb", 5).await;
    assert_eq!((orb.len(), total), (35, 35), "{orb:?}");

    // Words as a document may hold them, with quotes, backslashes and colons: each word's own query
    // is one word that finds it, and a search for it (its query as a tsquery prints it) finds the
    // listing through the kept words.
    let odd = r"$$'a\\b':1 'o''brien':2 'x:y':3 'naïve':4 '&':5$$::tsvector";
    let sql = format!(
        "SELECT count(*) AS id FROM unnest({odd}) w WHERE NOT ({odd} @@ listing_term_query(w.lexeme) \
         AND numnode(listing_term_query(w.lexeme)) = 1 AND ts_rank({odd}, listing_term_query(w.lexeme)) > 0)"
    );
    assert_eq!(ids(sql).await, vec![0], "every odd word's query finds it");
    let txn = conn.begin().await.unwrap();
    let sql = format!("UPDATE listing_search SET doc = doc || {odd} WHERE listing_id = {}", stored[0]);
    txn.execute_unprepared(&sql).await.unwrap();
    for word in [r"a\b", "o'brien", "x:y", "naïve", "&"] {
        let sql = format!(
            "SELECT listing_id AS id FROM listing_text_search(listing_term_query($${word}$$), 'live', 100, 1000) \
             WHERE listing_id IS NOT NULL"
        );
        let stmt = sea_orm::Statement::from_string(sea_orm::DbBackend::Postgres, sql);
        let found: Vec<i64> = <Id as sea_orm::FromQueryResult>::find_by_statement(stmt)
            .all(&txn)
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(found, vec![stored[0]], "{word}");
    }
    txn.rollback().await.unwrap();
}

/// An in-memory SQLite database has no inline readers: its searches run on the pool, which has no
/// `listing_rank` and ranks with bm25 itself; completions and ranking answer as on a file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_memory_sqlite_store_searches_through_the_pool() {
    let conn = db::connect("sqlite::memory:").await.unwrap();
    db::migrate(&conn).await.unwrap();
    let store = adapters_storage::SeaOrmStore::new(conn);
    let mut quokka = listing("Quiet Quokka", ListingStatus::Live, None);
    quokka.profile.description = "Workflow boards for teams.".into();
    let mut heron = listing("Heron Workflows", ListingStatus::Live, None);
    heron.profile.description = "Automations.".into();
    store.create_listing(quokka).await.unwrap();
    store.create_listing(heron).await.unwrap();
    let page = PageRequest::default();
    for refreshed in [false, true] {
        let r = store.search_listings(&search(Some("workf")), page).await.unwrap();
        assert_eq!(names(&r), vec!["Heron Workflows", "Quiet Quokka"], "a name match first ({refreshed})");
        assert_eq!(r.total, 2);
        assert_eq!(store.refresh_search_terms().await.unwrap(), !refreshed);
    }
}

on_both!(the_table_of_search_terms_follows_the_index, |store| {
    use sea_orm::ConnectionTrait;
    let page = PageRequest::default();
    let total = |q: &'static str| async move { store.search_listings(&search(Some(q)), page).await.unwrap().total };
    if store.connection().get_database_backend() == sea_orm::DbBackend::Postgres {
        // PostgreSQL keeps only the terms on more listings than a search counts (see
        // `postgres_counts_no_word_the_kept_counts_put_over_the_cap`); none are here.
        store.create_listing(listing("Quiet Quokka", ListingStatus::Live, None)).await.unwrap();
        assert!(store.refresh_search_terms().await.unwrap());
        assert!(!store.refresh_search_terms().await.unwrap(), "nothing changed since");
        assert_eq!(total("quok").await, 1);
        return;
    }
    let a = store.create_listing(listing("Quiet Quokka", ListingStatus::Live, None)).await.unwrap();
    store.create_listing(listing("Quiet Heron", ListingStatus::Live, None)).await.unwrap();
    assert!(store.refresh_search_terms().await.unwrap(), "two listings came");
    assert!(!store.refresh_search_terms().await.unwrap(), "nothing changed since");
    let (terms, index) = terms_and_index(store).await;
    assert_eq!(terms, index);
    assert!(terms.contains(&("quiet".to_owned(), 2)), "{terms:?}");

    // A word a listing gains completes at once, before the table has it.
    let conn = store.connection();
    conn.execute_unprepared(&format!("UPDATE listings SET name = 'Zebrafish Quokka' WHERE id = {}", a.id))
        .await
        .unwrap();
    assert!(!terms_and_index(store).await.0.iter().any(|(t, _)| t == "zebrafish"));
    assert_eq!(total("zebraf").await, 1, "completed from the index while the table is behind");
    assert!(store.refresh_search_terms().await.unwrap());
    let (terms, index) = terms_and_index(store).await;
    assert_eq!(terms, index);
    assert!(terms.contains(&("zebrafish".to_owned(), 1)), "{terms:?}");
    assert_eq!(total("zebraf").await, 1, "completed from the table");

    // A term no listing holds any more leaves the table; a vote (no indexed column) changes nothing.
    conn.execute_unprepared(&format!("DELETE FROM listings WHERE id = {}", a.id)).await.unwrap();
    assert!(store.refresh_search_terms().await.unwrap());
    let (terms, index) = terms_and_index(store).await;
    assert_eq!(terms, index);
    assert!(!terms.iter().any(|(t, _)| t == "zebrafish" || t == "quokka"), "{terms:?}");
    assert_eq!(total("zebraf").await, 0);
    conn.execute_unprepared("UPDATE listings SET votes_count = votes_count + 1").await.unwrap();
    assert!(!store.refresh_search_terms().await.unwrap(), "a counter is not an indexed column");

    // More terms than one run of a refresh reads (5 000): 12 listings of 500 words each, added and
    // then half of them removed, the table equal to the index each time.
    let mut ids = Vec::new();
    for i in 0..12 {
        let mut l = listing(&format!("Wordy {i}"), ListingStatus::Live, None);
        l.profile.description = (0..500).map(|j| format!("zq{i}x{j}")).collect::<Vec<_>>().join(" ");
        ids.push(store.create_listing(l).await.unwrap().id);
    }
    assert!(store.refresh_search_terms().await.unwrap());
    let (terms, index) = terms_and_index(store).await;
    assert!(terms.len() > 6_000, "{}", terms.len());
    assert_eq!(terms, index);
    for id in ids.iter().step_by(2) {
        conn.execute_unprepared(&format!("DELETE FROM listings WHERE id = {id}")).await.unwrap();
    }
    assert!(store.refresh_search_terms().await.unwrap());
    let (terms, index) = terms_and_index(store).await;
    assert!(terms.len() > 3_000 && terms.len() < 6_000, "{}", terms.len());
    assert_eq!(terms, index);
    assert_eq!(total("zq11x49").await, 1);
    assert_eq!(total("zq10x49").await, 0);
});

on_both!(search_index_follows_edits_and_deletes, |store| {
    use sea_orm::ConnectionTrait;
    // PostgreSQL also keeps each listing's words ranked (migration 54): after every step, equal to
    // what the search table's documents give, row for row; (kept rows, rows that differ).
    let ranked = || async { ranked_terms_recounted(store).await };
    let other = store.create_listing(listing("Steady Heron", ListingStatus::Live, None)).await.unwrap();
    let l = store.create_listing(listing("Quiet Quokka", ListingStatus::Live, None)).await.unwrap();
    assert_eq!(store.search_listings(&search(Some("quokka")), PageRequest::default()).await.unwrap().total, 1);
    let (kept, wrong) = ranked().await;
    assert_eq!(wrong, 0);
    let pg = store.backend() == sea_orm::DbBackend::Postgres;
    assert!(!pg || kept > 4, "both listings' words: {kept}");
    let conn = store.connection();
    let sql = format!("UPDATE listings SET name = 'Loud Lemur', tagline = 'Noisy' WHERE id = {}", l.id);
    conn.execute_unprepared(&sql).await.unwrap();
    assert_eq!(ranked().await.1, 0, "a text change");
    assert_eq!(store.search_listings(&search(Some("quokka")), PageRequest::default()).await.unwrap().total, 0);
    assert_eq!(store.search_listings(&search(Some("lemur")), PageRequest::default()).await.unwrap().total, 1);
    // A status change moves the listing between live and upcoming results (SQLite keeps status in the index).
    conn.execute_unprepared(&format!("UPDATE listings SET status = 'scheduled' WHERE id = {}", l.id)).await.unwrap();
    assert_eq!(ranked().await.1, 0, "a status change");
    assert_eq!(store.search_listings(&search(Some("lemur")), PageRequest::default()).await.unwrap().total, 0);
    let mut upcoming = search(Some("lemur"));
    upcoming.status = StatusFilter::Upcoming;
    let found = store.search_listings(&upcoming, PageRequest::default()).await.unwrap();
    assert_eq!((found.total, names(&found)), (1, vec!["Loud Lemur".to_owned()]));
    // A text change and a status change at once.
    let sql = format!("UPDATE listings SET tagline = 'Noisy lemurs', status = 'live' WHERE id = {}", l.id);
    conn.execute_unprepared(&sql).await.unwrap();
    assert_eq!(ranked().await.1, 0, "text and status together");
    // Hidden by the site team: in neither; restored to live: back in the live results.
    conn.execute_unprepared(&format!("UPDATE listings SET status = 'hidden' WHERE id = {}", l.id)).await.unwrap();
    assert_eq!(ranked().await.1, 0, "hidden: out of the search table");
    assert_eq!(store.search_listings(&upcoming, PageRequest::default()).await.unwrap().total, 0);
    assert_eq!(store.search_listings(&search(Some("lemur")), PageRequest::default()).await.unwrap().total, 0);
    conn.execute_unprepared(&format!("UPDATE listings SET status = 'live' WHERE id = {}", l.id)).await.unwrap();
    assert_eq!(ranked().await.1, 0, "back");
    assert_eq!(store.search_listings(&search(Some("lemur")), PageRequest::default()).await.unwrap().total, 1);
    // A vote writes no search row.
    conn.execute_unprepared("UPDATE listings SET votes_count = votes_count + 1").await.unwrap();
    assert_eq!(ranked().await, (kept_now(store).await, 0), "a vote");
    conn.execute_unprepared(&format!("DELETE FROM listings WHERE id = {}", l.id)).await.unwrap();
    assert_eq!(ranked().await.1, 0, "a deletion");
    assert_eq!(store.search_listings(&search(Some("lemur")), PageRequest::default()).await.unwrap().total, 0);
    let (left, _) = ranked().await;
    assert!(!pg || left > 0, "the other listing's words stay: {left}");
    conn.execute_unprepared(&format!("DELETE FROM listings WHERE id = {}", other.id)).await.unwrap();
    assert_eq!(ranked().await, (0, 0), "nothing left");
});

/// PostgreSQL's kept ranked words (migration 54) against a recount from the search table's documents:
/// (rows kept, rows in one and not the other). `(0, 0)` on SQLite, which keeps none.
async fn ranked_terms_recounted(store: &adapters_storage::SeaOrmStore) -> (i64, i64) {
    use sea_orm::ConnectionTrait;
    if store.backend() != sea_orm::DbBackend::Postgres {
        return (0, 0);
    }
    let recount = "SELECT s.status, w.lexeme::text, ts_rank(s.doc, listing_term_query(w.lexeme)), s.listing_id \
                   FROM listing_search s, unnest(s.doc) w";
    let kept = "SELECT status, term::text, rank, listing_id FROM listing_search_terms";
    let sql = format!(
        "SELECT (SELECT count(*) FROM listing_search_terms) AS kept, \
         (SELECT count(*) FROM (({kept} EXCEPT ALL {recount}) UNION ALL ({recount} EXCEPT ALL {kept})) d) AS wrong"
    );
    let row = store
        .connection()
        .query_one_raw(sea_orm::Statement::from_string(sea_orm::DbBackend::Postgres, sql))
        .await
        .unwrap()
        .unwrap();
    (row.try_get("", "kept").unwrap(), row.try_get("", "wrong").unwrap())
}

/// The rows of PostgreSQL's kept ranked words (0 on SQLite).
async fn kept_now(store: &adapters_storage::SeaOrmStore) -> i64 {
    ranked_terms_recounted(store).await.0
}

on_every_store!(import_counts_votes_and_continues_ids, |store| {
    assert!(store.is_empty().await.unwrap());
    let founders = store
        .import_founders(&[NewFounder {
            slug: slug("ada"),
            name: "Ada".into(),
            headline: "Maker".into(),
            bio: "Builds things.".into(),
            country: Some("IE".into()),
            avatar_url: String::new(),
            socials: Socials::default(),
        }])
        .await
        .unwrap();
    let mut a = import(listing("Alpha", ListingStatus::Live, None), 5);
    a.founders = vec![(founders[0], "CEO".into())];
    a.reviews = vec![Review { rating: 5, genuine: true }, Review { rating: 1, genuine: false }];
    a.billboard = vec![(Cents::new(2500), now())];
    let b = import(listing("Beta", ListingStatus::Live, None), 2);
    let ids = store.import_listings(&[a, b], now()).await.unwrap();
    assert!(!store.is_empty().await.unwrap());
    let alpha = store.get_listing(ids[0]).await.unwrap().unwrap();
    assert_eq!(alpha.votes, 5);
    let trending = domain::listing::trending::score_of(alpha.trending_score, now());
    assert!(trending > 4.0 && trending < 5.0, "recent votes decay a little: {trending}");
    let rating = alpha.community_rating.unwrap();
    assert_eq!((rating.average, rating.count), (5.0, 1), "only genuine reviews count");
    // A listing created after an import gets a fresh id (the PostgreSQL sequence was moved on).
    let c = store.create_listing(listing("Gamma", ListingStatus::Live, None)).await.unwrap();
    assert!(c.id > ids[1]);
    let week = LaunchWeek::of(now()).plus_weeks(-1);
    let awards = launch_of_the_week(week, vec![(ids[0], 5), (ids[1], 2)]);
    assert_eq!(store.import_awards(&awards).await.unwrap(), 2);
    let dup = store.import_awards(&awards).await;
    assert!(matches!(dup, Err(RepoError::Conflict(_))), "one award per week and rank");
    let post = NewBlogPost {
        slug: slug("hello"),
        title: "Hello".into(),
        summary: "Hi".into(),
        body_markdown: "# Hello".into(),
        author: "Team".into(),
        tags: vec![],
        faqs: vec![],
        published_at: Some(now()),
    };
    assert_eq!(store.import_blog_posts(&[post]).await.unwrap(), 1);
});

on_every_store!(reference_and_demo_content_load, |store| {
    let first = demo_data::seed_reference(store.as_ref()).await.unwrap();
    assert!(first.categories >= 30 && first.products >= 5 && first.questions >= 5 && first.settings >= 5);
    let again = demo_data::seed_reference(store.as_ref()).await.unwrap();
    assert_eq!(again, demo_data::ReferenceReport::default(), "seeding twice inserts nothing");
    let report =
        demo_data::load_demo(store.as_ref(), demo_data::generate::DemoConfig::standard(now()), true).await.unwrap();
    assert_eq!(report.listings, 420);
    assert!(report.blog_posts >= 12 && report.founders >= 60 && report.awards >= 3 * 16, "{report:?}");
    assert!(store.count_live_listings().await.unwrap() >= 300);
    let cats = store.list_categories().await.unwrap();
    assert!(cats.iter().filter(|c| c.live_listings > 0).count() >= 20, "listings spread over the categories");
    let hits = store.search_listings(&search(Some("export")), PageRequest::default()).await.unwrap();
    assert!(hits.total >= 60, "a common word matches many listings: {}", hits.total);

    // A profile's one read holds what its separate reads hold, for every listing of the demo.
    let seen = details::profiles_agree(store.as_ref()).await;
    assert!(seen.iter().all(|n| *n > 0), "founders, updates, milestones, stories and awards all compared: {seen:?}");
    assert_eq!(store.listing_with_details(&slug("no-such-listing")).await.unwrap(), None);
});

// The demo loads as one import transaction. A load that fails at its last step (here a blog post
// already holds a demo post's slug) keeps none of its founders, listings or awards, and the next load
// writes the whole demo. Before, every step was a transaction of its own: a first `serve --demo-data`
// stopped after the founders left a directory whose every later load failed on `founders.slug`.
on_every_store!(a_demo_load_that_fails_part_way_keeps_nothing, |store| {
    demo_data::seed_reference(store.as_ref()).await.unwrap();
    let taken = demo_data::blog::posts().unwrap().remove(0);
    assert_eq!(store.import_blog_posts(&[taken]).await.unwrap(), 1);
    let cfg = || demo_data::generate::DemoConfig::standard(now());
    let failed = demo_data::load_demo(store.as_ref(), cfg(), true).await;
    assert!(matches!(failed, Err(demo_data::LoadError::Repo(_))), "the taken slug fails the load: {failed:?}");
    assert!(store.is_empty().await.unwrap(), "no listing of the failed load kept");
    assert_eq!(store.count_live_listings().await.unwrap(), 0);

    let report = demo_data::load_demo(store.as_ref(), cfg(), false).await.expect("the next load, whole");
    assert_eq!((report.listings, report.founders), (420, cfg().founder_count()));
    assert!(report.awards >= 3 * 16, "{report:?}");
    assert!(store.count_live_listings().await.unwrap() >= 300);
});

// An import transaction dropped without its commit keeps nothing; the same rows import afterwards.
on_every_store!(an_import_dropped_without_commit_keeps_nothing, |store| {
    let cats = seed_categories(store).await;
    let dev = cat_id(&cats, "dev-tools");
    let founder = maker("dropped-founder", "Dropped Founder");
    {
        let txn = store.begin_import().await.unwrap();
        let ids = txn.import_founders(std::slice::from_ref(&founder)).await.unwrap();
        let mut item = import(listing("Dropped", ListingStatus::Live, Some(dev)), 3);
        item.founders = vec![(ids[0], "Maker".into())];
        txn.import_listings(&[item], now()).await.unwrap();
        // Dropped here, as when the load's task is cancelled.
    }
    assert!(store.is_empty().await.unwrap(), "the dropped import's listing is gone");
    assert_eq!(store.live_listing_counts().await.unwrap().get(dev), 0);
    let txn = store.begin_import().await.unwrap();
    let ids = txn.import_founders(&[founder]).await.expect("the founder's slug is free again");
    let mut item = import(listing("Dropped", ListingStatus::Live, Some(dev)), 3);
    item.founders = vec![(ids[0], "Maker".into())];
    txn.import_listings(&[item], now()).await.expect("the listing's slug is free again");
    txn.commit().await.unwrap();
    assert_eq!(store.count_live_listings().await.unwrap(), 1);
    assert_eq!(store.live_listing_counts().await.unwrap().get(dev), 1);
});

// SQLite: an import sets `listings_fts_deferred` while it writes (the full-text index takes its
// listings at its end, migration 61) and takes it away even when it fails, so a caller that commits
// after a failed import does not leave every later listing out of the index.
on_both!(a_failed_import_leaves_the_text_index_taking_new_listings, |store| {
    use domain::ports::{DirectoryImport, ListingRepository};
    store.create_listing(listing("Taken", ListingStatus::Live, None)).await.unwrap();
    let txn = store.begin_import().await.unwrap();
    let item = import(listing("Taken", ListingStatus::Live, None), 0);
    assert!(txn.import_listings(&[item], now()).await.is_err(), "the slug is taken");
    // Committed anyway (PostgreSQL refuses: its transaction failed with the statement).
    let _ = txn.commit().await;
    store.create_listing(listing("Quetzal Later", ListingStatus::Live, None)).await.unwrap();
    let found = store.search_listings(&search(Some("quetzal")), PageRequest::default()).await.unwrap();
    assert_eq!(names(&found), ["Quetzal Later"], "a listing created after the failed import is searchable");
});

// An import that names a founder or a category the directory does not hold is refused as not found
// and keeps nothing, on every store. PostgreSQL's import as a superuser turns the row triggers off
// for speed (`session_replication_role = replica`), and with them the foreign keys: it wrote the
// listing with a link to nobody.
on_every_store!(an_import_naming_a_founder_or_a_category_it_does_not_hold_keeps_nothing, |store| {
    use domain::ids::FounderId;
    let cats = seed_categories(store).await;
    let dev = cat_id(&cats, "dev-tools");
    let grace = store.import_founders(&[maker("grace", "Grace")]).await.unwrap()[0];
    let nobody = FounderId::from_db(grace.get() + 1_000);
    let mut ghost_founder = import(listing("Ghost Founder", ListingStatus::Live, Some(dev)), 2);
    ghost_founder.founders = vec![(grace, "Maker".into()), (nobody, "Nobody".into())];
    let refused = store.import_listings(&[ghost_founder], now()).await;
    assert!(matches!(refused, Err(RepoError::NotFound)), "{refused:?}");
    let ghost_category = CategoryId::from_db(cats.iter().map(|(_, id)| id.get()).max().unwrap() + 1_000);
    let refused = store
        .import_listings(&[import(listing("Ghost Category", ListingStatus::Live, Some(ghost_category)), 1)], now())
        .await;
    assert!(matches!(refused, Err(RepoError::NotFound)), "{refused:?}");
    assert!(store.is_empty().await.unwrap(), "neither refused import kept a listing");
    assert_eq!(store.count_live_listings().await.unwrap(), 0);
    assert!(store.get_founder(&slug("grace")).await.unwrap().is_none(), "grace has no live listing");
    let dev_live = |list: Vec<domain::category::CategoryWithCount>| {
        list.iter().find(|c| c.category.id == dev).map(|c| c.live_listings)
    };
    assert_eq!(dev_live(store.list_categories().await.unwrap()), Some(0), "no count moved");

    // The same listing with the founder and category it may name is taken.
    let mut kept = import(listing("Ghost Founder", ListingStatus::Live, Some(dev)), 2);
    kept.founders = vec![(grace, "Maker".into())];
    store.import_listings(&[kept], now()).await.expect("every id it names is held");
    assert_eq!(dev_live(store.list_categories().await.unwrap()), Some(1));
    let (_, listings) = store.get_founder(&slug("grace")).await.unwrap().expect("grace has a live listing");
    assert_eq!(listings.len(), 1, "{listings:?}");
});

/// The memory store's import writes into a copy of its state, put in place at the commit: a write
/// made to the store meanwhile refuses the commit instead of being lost with the copy's swap, and so
/// does a second import's commit after the first's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_import_refuses_to_commit_over_a_write_made_meanwhile() {
    let store = harness::memory();
    let cats = seed_categories(&store).await;
    let dev = cat_id(&cats, "dev-tools");
    let txn = store.begin_import().await.unwrap();
    txn.import_listings(&[import(listing("Copied", ListingStatus::Live, Some(dev)), 0)], now()).await.unwrap();
    store.set_setting("site_name", "Changed meanwhile").await.unwrap();
    let refused = txn.commit().await;
    assert!(matches!(refused, Err(RepoError::Conflict(_))), "{refused:?}");
    let settings = store.all_settings().await.unwrap();
    assert!(settings.contains(&("site_name".into(), "Changed meanwhile".into())), "{settings:?}");
    assert!(store.is_empty().await.unwrap(), "the refused import kept nothing");

    let (first, second) = (store.begin_import().await.unwrap(), store.begin_import().await.unwrap());
    first.import_listings(&[import(listing("First", ListingStatus::Live, Some(dev)), 0)], now()).await.unwrap();
    second.import_listings(&[import(listing("Second", ListingStatus::Live, Some(dev)), 0)], now()).await.unwrap();
    first.commit().await.expect("nothing wrote meanwhile");
    assert!(matches!(second.commit().await, Err(RepoError::Conflict(_))), "the first import's listing is kept");
    assert_eq!(store.count_live_listings().await.unwrap(), 1);
    assert!(store.get_listing_by_slug(&slug("first")).await.unwrap().is_some());
}

on_every_store!(listing_details_and_weekly_votes, |store| {
    use domain::sections::{ListingUpdate, Milestone, Story};
    let week = LaunchWeek::of(now()).plus_weeks(-1);
    let founders = store
        .import_founders(&[NewFounder {
            slug: slug("grace"),
            name: "Grace".into(),
            headline: "Maker".into(),
            bio: "Bio".into(),
            country: None,
            avatar_url: String::new(),
            socials: Socials::default(),
        }])
        .await
        .unwrap();
    let mut a = import(listing("Alpha", ListingStatus::Live, None), 0);
    a.founders = vec![(founders[0], "CEO".into())];
    a.updates = vec![
        ListingUpdate { title: "Old".into(), body: "b".into(), posted_at: now() - Duration::days(3) },
        ListingUpdate { title: "New".into(), body: "b".into(), posted_at: now() - Duration::days(1) },
    ];
    a.milestones = vec![Milestone::parse("2026-01-02", "Beta".into(), None, None).unwrap()];
    a.story = Some(Story::parse("story", [("why_started".to_owned(), "Because.".to_owned())], 200).unwrap());
    // Votes: 3 inside last week (one exactly at its start), 1 exactly at the start of this week.
    a.votes = vec![
        week.starts_at(),
        week.starts_at() + Duration::hours(5),
        week.ends_at() - Duration::seconds(1),
        week.ends_at(),
    ];
    let mut b = import(listing("Beta", ListingStatus::Live, None), 0);
    b.votes = vec![week.starts_at() + Duration::days(2)];
    let c = import(listing("Gamma", ListingStatus::Live, None), 0);
    let ids = store.import_listings(&[a, b, c], now()).await.unwrap();

    let d = store.listing_details(ids[0], true).await.unwrap();
    assert_eq!(d.founders.len(), 1);
    assert_eq!((d.founders[0].0.name.as_str(), d.founders[0].1.as_str()), ("Grace", "CEO"));
    assert_eq!(d.updates.iter().map(|u| u.title.as_str()).collect::<Vec<_>>(), ["New", "Old"], "newest update first");
    assert_eq!(d.milestones.len(), 1);
    assert_eq!(d.story.as_ref().map(|s| s.get("why_started")), Some("Because."));
    let empty = store.listing_details(ids[2], true).await.unwrap();
    assert!(empty.founders.is_empty() && empty.story.is_none() && empty.awards.is_empty());

    let board = store.weekly_votes(week, PageRequest::default()).await.unwrap();
    let ranked: Vec<(String, i64)> = board.items.iter().map(|(s, n)| (s.name.clone(), *n)).collect();
    assert_eq!(ranked, vec![("Alpha".to_owned(), 3), ("Beta".to_owned(), 1)], "votes counted inside the week only");
    assert_eq!(board.total, 2);
    // A page past the end has no rows to carry the total: it is read apart, the same.
    let past = PageRequest::parse(Some(3), Some(1)).unwrap();
    let beyond = store.weekly_votes(week, past).await.unwrap();
    assert_eq!((beyond.items.len(), beyond.total), (0, 2));
    let all = store.search_listings(&search(None), PageRequest::default()).await.unwrap();
    let beyond = store.search_listings(&search(None), PageRequest::parse(Some(9), Some(1)).unwrap()).await.unwrap();
    assert_eq!((all.total, beyond.items.len(), beyond.total, beyond.total_exact), (3, 0, 3, true));
    assert_eq!(store.weekly_votes(week.plus_weeks(-5), past).await.unwrap().total, 0, "a week nobody voted in");
    let this = store.weekly_votes(week.plus_weeks(1), PageRequest::default()).await.unwrap();
    assert_eq!(this.items.iter().map(|(s, n)| (s.name.as_str(), *n)).collect::<Vec<_>>(), [("Alpha", 1)]);

    let mut in_week = search(None);
    in_week.launch_week = Some(LaunchWeek::of(now()));
    assert_eq!(store.search_listings(&in_week, PageRequest::default()).await.unwrap().total, 3);
    in_week.launch_week = Some(week);
    assert_eq!(store.search_listings(&in_week, PageRequest::default()).await.unwrap().total, 0);
});

on_every_store!(a_weeks_launches_read_as_its_search_pages_do, |store| {
    use domain::listing::{ListingSummary, SearchSort, StatusFilter};
    let mut batch = Vec::new();
    for (i, votes) in [3usize, 0, 5, 3, 1].into_iter().enumerate() {
        batch.push(import(listing(&format!("Week Live {i}"), ListingStatus::Live, None), votes));
    }
    for i in 0..3 {
        batch.push(import(listing(&format!("Week Later {i}"), ListingStatus::Scheduled, None), 0));
    }
    store.import_listings(&batch, now()).await.unwrap();
    let this = LaunchWeek::of(now());
    let later = this.plus_weeks(3);
    let ids = |v: &[ListingSummary]| v.iter().map(|s| s.id).collect::<Vec<_>>();
    for (week, status, expected) in
        [(this, StatusFilter::Live, 5), (later, StatusFilter::Upcoming, 3), (this, StatusFilter::Upcoming, 0)]
    {
        let sort = if status == StatusFilter::Live { SearchSort::Votes } else { SearchSort::Relevance };
        let s = ListingSearch { launch_week: Some(week), status, sort, ..Default::default() };
        let paged = store.search_listings(&s, PageRequest::default()).await.unwrap();
        let read = store.week_launches(week, status, 500).await.unwrap();
        assert_eq!(ids(&read), ids(&paged.items), "{status:?} in {week}: as the search pages list them");
        assert_eq!(read.len(), expected, "{status:?} in {week}");
        assert_eq!((paged.total, paged.total_exact), (expected as u64, true), "{status:?} in {week}: its kept total");
        // In another order, and a page past the end (no row to carry the total: it is read apart).
        let newest = ListingSearch { sort: SearchSort::Newest, ..s };
        let past = store.search_listings(&newest, PageRequest::parse(Some(9), Some(1)).unwrap()).await.unwrap();
        assert_eq!((past.items.len(), past.total), (0, expected as u64), "{status:?} in {week}, past the end");
    }
    let all = store.week_launches(this, StatusFilter::Live, 500).await.unwrap();
    assert_eq!(all.iter().map(|s| s.votes).collect::<Vec<_>>(), [5, 3, 3, 1, 0], "most votes first");
    assert!(all[1].id.get() > all[2].id.get(), "a tie goes to the newer listing");
    let top = store.week_launches(this, StatusFilter::Live, 2).await.unwrap();
    assert_eq!(ids(&top), ids(&all[..2]), "at most max");
});

on_every_store!(ranked_boards_and_the_category_list, |store| {
    use domain::listing::{RankMetric, Revenue};
    seed_categories(store).await;
    assert_eq!(store.all_categories().await.unwrap().len(), 3);
    let mut a = import(listing("Alpha", ListingStatus::Live, None), 2);
    a.billboard = vec![(Cents::new(500), now()), (Cents::new(700), now())];
    a.listing.revenue =
        Some(Revenue { monthly_cents: 90_000, source: "Stripe (verified)".into(), as_of: now().date_naive() });
    let mut b = import(listing("Beta", ListingStatus::Live, None), 5);
    b.billboard = vec![(Cents::new(2500), now())];
    b.listing.domain_rating =
        Some(DomainRating { value: 30, previous: None, source: "x".into(), measured_on: now().date_naive() });
    let mut hidden = import(listing("Hidden", ListingStatus::Scheduled, None), 0);
    hidden.billboard = vec![(Cents::new(99_999), now())];
    store.import_listings(&[a, b, hidden], now()).await.unwrap();
    let board = |m| async move {
        let p = store.ranked(m, PageRequest::default()).await.unwrap();
        p.items.into_iter().map(|(s, v)| (s.name, v)).collect::<Vec<_>>()
    };
    assert_eq!(board(RankMetric::Votes).await, [("Beta".to_owned(), 5), ("Alpha".to_owned(), 2)]);
    assert_eq!(
        board(RankMetric::BillboardCents).await,
        [("Beta".to_owned(), 2500), ("Alpha".to_owned(), 1200)],
        "live listings only"
    );
    assert_eq!(board(RankMetric::DomainRating).await, [("Beta".to_owned(), 30)]);
    assert_eq!(board(RankMetric::RevenueMonthlyCents).await, [("Alpha".to_owned(), 90_000)]);
});

on_every_store!(every_board_breaks_ties_to_the_listing_listed_first, |store| {
    use domain::listing::{RankMetric, Revenue};
    // Five live listings in id order, two pairs of them tied on every board, and a scheduled one above
    // them all that no board shows.
    let tied = |name: &str, n: i64| {
        let mut l = import(listing(name, ListingStatus::Live, None), n as usize);
        l.billboard = vec![(Cents::new(100 * n), now())];
        l.listing.domain_rating = Some(DomainRating {
            value: 10 * n as u8,
            previous: None,
            source: "x".into(),
            measured_on: now().date_naive(),
        });
        l.listing.revenue =
            Some(Revenue { monthly_cents: 1000 * n, source: "self-reported".into(), as_of: now().date_naive() });
        l
    };
    let mut hidden = tied("Hidden", 9);
    hidden.listing = listing("Hidden", ListingStatus::Scheduled, None);
    let list = [tied("Alpha", 2), tied("Beta", 3), tied("Gamma", 2), tied("Delta", 3), tied("Epsilon", 1), hidden];
    store.import_listings(&list, now()).await.unwrap();
    for metric in
        [RankMetric::Votes, RankMetric::BillboardCents, RankMetric::DomainRating, RankMetric::RevenueMonthlyCents]
    {
        let mut seen = Vec::new();
        for n in 1..=3 {
            let page = store.ranked(metric, PageRequest::parse(Some(n), Some(2)).unwrap()).await.unwrap();
            assert_eq!(page.total, 5, "{metric:?}");
            seen.push(page.items.into_iter().map(|(s, _)| s.name).collect::<Vec<_>>());
        }
        assert_eq!(seen, [vec!["Beta", "Delta"], vec!["Alpha", "Gamma"], vec!["Epsilon"]], "{metric:?}");
    }
});

on_every_store!(a_deep_page_of_the_weekly_board_is_the_same_slice_of_it, |store| {
    // 130 live listings with 1–7 votes this week (ties on every count): on PostgreSQL the pages from
    // offset 100 on read their tallies' keys first (`TALLIES_FIRST_FROM`), the ones before (and every
    // page on SQLite) in one walk; all must be slices of one order, most votes first and ties to the
    // listing listed first, each with its listing's summary.
    let week = LaunchWeek::of(now());
    let list: Vec<_> = (0..130)
        .map(|i| {
            let mut l = import(listing(&format!("Weekly {i:03}"), ListingStatus::Live, None), 0);
            l.votes = vec![week.starts_at(); i % 7 + 1];
            l
        })
        .collect();
    let ids = store.import_listings(&list, now()).await.unwrap();
    let mut expected: Vec<(i64, domain::ids::ListingId)> =
        ids.iter().enumerate().map(|(i, id)| ((i % 7 + 1) as i64, *id)).collect();
    expected.sort_by(|(a_votes, a), (b_votes, b)| b_votes.cmp(a_votes).then(a.cmp(b)));
    let (ids, list) = (&ids, &list);
    let page = |n: i64, per: i64| async move {
        let p = store.weekly_votes(week, PageRequest::parse(Some(n), Some(per)).unwrap()).await.unwrap();
        assert_eq!(p.total, 130);
        for (s, v) in &p.items {
            let i = ids.iter().position(|id| *id == s.id).expect("a listing of the week");
            let l = &list[i].listing;
            assert_eq!(
                (s.name.as_str(), s.slug.as_str(), s.url.as_str(), s.tagline.as_str()),
                (
                    format!("Weekly {i:03}").as_str(),
                    l.slug.as_str(),
                    l.profile.url.as_str(),
                    l.profile.tagline.as_str()
                ),
                "the summary of {:?}",
                s.id
            );
            assert_eq!((s.votes, s.status, s.launch_week), (*v, ListingStatus::Live, l.lifecycle.launch_week()));
        }
        p.items.into_iter().map(|(s, v)| (v, s.id)).collect::<Vec<_>>()
    };
    let mut whole = Vec::new();
    for n in 1..=3 {
        whole.extend(page(n, 50).await);
    }
    assert_eq!(whole, expected, "pages of 50: offsets 0 and 50 in one walk, 100 keys first on PostgreSQL");
    assert_eq!(page(6, 20).await, expected[100..120], "offset 100");
    assert_eq!(page(7, 20).await, expected[120..], "offset 120, the last");
    assert_eq!(page(5, 20).await, expected[80..100], "offset 80, one walk");
});

on_every_store!(blog_founders_and_awards_reads, |store| {
    demo_data::seed_reference(store.as_ref()).await.unwrap();
    demo_data::load_demo(store.as_ref(), demo_data::generate::DemoConfig::standard(now()), true).await.unwrap();
    let page = PageRequest::default();

    let posts = store.list_blog_posts(None, page).await.unwrap();
    assert_eq!(posts.total, 13);
    let dates: Vec<_> = posts.items.iter().map(|p| p.published_at.unwrap()).collect();
    assert!(dates.windows(2).all(|w| w[0] >= w[1]), "newest first");
    let billboard = store.list_blog_posts(Some("BILLBOARD"), page).await.unwrap();
    assert!(billboard.total >= 1 && billboard.total < 13, "case-insensitive match: {}", billboard.total);
    assert_eq!(store.list_blog_posts(Some("%"), page).await.unwrap().total, 0, "LIKE wildcards are literal");
    let post = store.get_blog_post(&slug("how-launch-weeks-work")).await.unwrap().unwrap();
    assert!(post.body_markdown.contains("Monday") && !post.faqs.is_empty());
    assert!(store.get_blog_post(&slug("no-such-post")).await.unwrap().is_none());

    let founders = store.list_founders(None, None, PageRequest::parse(Some(1), Some(100)).unwrap()).await.unwrap();
    assert!(founders.total >= 60);
    let names: Vec<&str> = founders.items.iter().map(|f| f.name.as_str()).collect();
    assert!(names.windows(2).all(|w| w[0] <= w[1]), "by name");
    let first = &founders.items[0];
    let (found, companies) = store.get_founder(&first.slug).await.unwrap().unwrap();
    assert_eq!(found.id, first.id);
    assert!(!companies.is_empty() && companies.iter().all(|c| c.status == ListingStatus::Live));
    let fragment: String = first.name.chars().take(3).collect::<String>().to_uppercase();
    let by_name = store.list_founders(Some(&fragment), None, page).await.unwrap();
    assert!(by_name.items.iter().all(|f| f.name.to_uppercase().contains(&fragment)) && by_name.total >= 1);
    let country = CountryCode::parse(first.country.as_deref().unwrap()).unwrap();
    let here = store.list_founders(None, Some(&country), page).await.unwrap();
    assert!(here.items.iter().all(|f| f.country.as_deref() == Some(country.as_str())));

    let awards = store.list_awards(None, PageRequest::parse(Some(1), Some(100)).unwrap()).await.unwrap();
    assert!(awards.total >= 48);
    let keys: Vec<_> = awards.items.iter().map(|(a, _)| (std::cmp::Reverse(a.week), a.rank)).collect();
    assert!(keys.windows(2).all(|w| w[0] <= w[1]), "newest week first, then rank");
    let winner = awards.items[0].1.id;
    let own = store.list_awards(Some(winner), page).await.unwrap();
    assert!(own.total >= 1 && own.items.iter().all(|(a, s)| a.listing_id == winner && s.id == winner));
});

on_both!(alternatives_put_approved_first, |store| {
    use sea_orm::ConnectionTrait;
    let shared: std::sync::Arc<dyn domain::ports::Store> = std::sync::Arc::new(store.clone());
    let cats = seed_categories(&shared).await;
    let (dev, mkt) = (cat_id(&cats, "dev-tools"), cat_id(&cats, "marketing"));
    let ids = store
        .import_listings(
            &[
                import(listing("Main", ListingStatus::Live, Some(dev)), 1),
                import(listing("Peer Low", ListingStatus::Live, Some(dev)), 2),
                import(listing("Peer High", ListingStatus::Live, Some(dev)), 9),
                import(listing("Approved Elsewhere", ListingStatus::Live, Some(mkt)), 0),
                import(listing("Peer Soon", ListingStatus::Scheduled, Some(dev)), 50),
            ],
            now(),
        )
        .await
        .unwrap();
    // Approved: one in another category and one in the same (never listed twice); a suggestion not
    // approved yet is no more than a peer.
    for (alt, approved) in [(ids[3], true), (ids[2], true), (ids[1], false)] {
        let sql = format!(
            "INSERT INTO alternatives (listing_id, alternative_id, approved) VALUES ({}, {}, {})",
            ids[0], alt, approved
        );
        store.connection().execute_unprepared(&sql).await.unwrap();
    }
    let alts = store.alternatives(ids[0], 20).await.unwrap();
    let got: Vec<(&str, bool)> = alts.iter().map(|(s, a)| (s.name.as_str(), *a)).collect();
    assert_eq!(got, [("Peer High", true), ("Approved Elsewhere", true), ("Peer Low", false)]);
    let first: Vec<_> = store.alternatives(ids[0], 1).await.unwrap().into_iter().map(|(s, a)| (s.name, a)).collect();
    assert_eq!(first, [("Peer High".to_owned(), true)], "the limit keeps the approved first");
});

on_both!(vote_tally_backfill_matches_the_votes, |store| {
    use sea_orm::ConnectionTrait;
    // Votes over two weeks: the import writes tallies beside them.
    let week = LaunchWeek::of(now());
    let mut a = import(listing("Alpha", ListingStatus::Live, None), 0);
    a.votes = vec![week.starts_at(), week.starts_at() - Duration::seconds(1), now(), now() - Duration::days(8)];
    let b = import(listing("Beta", ListingStatus::Live, None), 2);
    store.import_listings(&[a, b], now()).await.unwrap();
    let before = |w: LaunchWeek| async move {
        let p = store.weekly_votes(w, PageRequest::default()).await.unwrap();
        p.items.into_iter().map(|(s, n)| (s.name, n)).collect::<Vec<_>>()
    };
    let (this_week, last_week) = (before(week).await, before(week.plus_weeks(-1)).await);
    assert_eq!(this_week, [("Alpha".to_owned(), 2), ("Beta".to_owned(), 2)]);
    assert_eq!(last_week, [("Alpha".to_owned(), 2)]);

    // Rolling the tallies migration back and forward rebuilds them from the votes alone.
    let db = store.connection();
    db.execute_unprepared("DELETE FROM vote_tallies").await.unwrap();
    assert!(before(week).await.is_empty());
    // The tallies are the third migration: roll back it and everything after it.
    crate::harness::roll_back_through(db, "m20261122_000003_vote_tallies").await;
    adapters_storage::db::migrate(db).await.unwrap();
    assert_eq!(before(week).await, this_week);
    assert_eq!(before(week.plus_weeks(-1)).await, last_week);
});

on_every_store!(sitemap_ranges_hold_each_live_listing_once, |store| {
    assert_eq!(store.max_listing_id().await.unwrap(), 0, "an empty directory");
    let mut live = Vec::new();
    for (i, status) in
        [ListingStatus::Live, ListingStatus::Draft, ListingStatus::Live, ListingStatus::Live].iter().enumerate()
    {
        let l = store.create_listing(listing(&format!("Range {i}"), *status, None)).await.unwrap();
        if *status == ListingStatus::Live {
            live.push((l.id.get(), l.slug.to_string()));
        }
    }
    let max = store.max_listing_id().await.unwrap();
    assert_eq!(max, live.last().unwrap().0, "the highest id stored");
    let slugs =
        |rows: Vec<(Slug, chrono::DateTime<Utc>)>| rows.into_iter().map(|(s, _)| s.to_string()).collect::<Vec<_>>();
    let all = slugs(store.live_slugs_in(0, max).await.unwrap());
    assert_eq!(all, live.iter().map(|(_, s)| s.clone()).collect::<Vec<_>>(), "live ones only, by id");
    // Ranges are (after, up_to]: split anywhere, the parts hold each listing once.
    let cut = live[0].0;
    let mut parts = slugs(store.live_slugs_in(0, cut).await.unwrap());
    parts.extend(slugs(store.live_slugs_in(cut, max).await.unwrap()));
    assert_eq!(parts, all);
    assert!(store.live_slugs_in(max, max + 100).await.unwrap().is_empty());
});

/// Live listings per category slug, as list_categories reports them.
async fn category_counts(store: &dyn domain::ports::Store) -> std::collections::BTreeMap<String, u64> {
    store.list_categories().await.unwrap().into_iter().map(|c| (c.category.slug.to_string(), c.live_listings)).collect()
}

on_every_store!(category_counts_follow_go_lives_extras_and_removals, |store| {
    let cats = seed_categories(store).await;
    let (dev, api, mkt) = (cat_id(&cats, "dev-tools"), cat_id(&cats, "api-tools"), cat_id(&cats, "marketing"));
    let count = |c: std::collections::BTreeMap<String, u64>| (c["dev-tools"], c["api-tools"], c["marketing"]);
    let a = store.create_listing(listing("Alpha", ListingStatus::Live, Some(dev))).await.unwrap();
    let b = store.create_listing(listing("Beta", ListingStatus::Scheduled, Some(dev))).await.unwrap();
    store.create_listing(listing("Gamma", ListingStatus::Live, Some(api))).await.unwrap();
    store.create_listing(listing("Delta", ListingStatus::Draft, Some(mkt))).await.unwrap();
    assert_eq!(count(category_counts(store.as_ref()).await), (1, 1, 0), "live listings only");

    // A go-live counts the listing in its categories.
    let mut live = b.lifecycle;
    live.go_live(now() + Duration::weeks(3)).unwrap();
    assert!(store.move_lifecycle(b.id, &b.lifecycle, &live, now()).await.unwrap());
    assert_eq!(count(category_counts(store.as_ref()).await), (2, 1, 0), "Beta went live");

    // An extra category of a live listing counts there too.
    assert_eq!(store.add_extra_categories(a.id, &[mkt]).await.unwrap(), 1);
    assert_eq!(count(category_counts(store.as_ref()).await), (2, 1, 1), "Alpha is in marketing too");

    // Leaving live takes it out of every category it is in.
    let mut removed = a.lifecycle;
    removed.remove().unwrap();
    assert!(store.move_lifecycle(a.id, &a.lifecycle, &removed, now()).await.unwrap());
    assert_eq!(count(category_counts(store.as_ref()).await), (1, 1, 0), "Alpha removed");
});

/// The `n` of a statement that counts (`SELECT COUNT(*) AS n …`).
async fn single_count(store: &adapters_storage::SeaOrmStore, sql: &str) -> i64 {
    use sea_orm::ConnectionTrait;
    let statement = sea_orm::Statement::from_string(store.backend(), sql);
    let row = store.connection().query_one_raw(statement).await.unwrap().unwrap();
    row.try_get::<i64>("", "n").unwrap()
}

/// Every kept count (live listings per category, listings per status, each week's and each board's
/// ranked listings) against a count of the rows it stands for; panics on the first that differs.
/// Returns each category's slug and kept count.
async fn kept_counts_recounted(store: &adapters_storage::SeaOrmStore) -> Vec<(String, i64)> {
    use sea_orm::ConnectionTrait;
    let conn = store.connection();
    let rows = conn
        .query_all_raw(sea_orm::Statement::from_string(
            store.backend(),
            "SELECT c.slug AS slug, c.live_listings AS kept, (SELECT COUNT(*) FROM listing_categories lc \
             JOIN listings l ON l.id = lc.listing_id WHERE lc.category_id = c.id AND l.status = 'live') AS counted \
             FROM categories c ORDER BY c.id",
        ))
        .await
        .unwrap();
    // Each status's listings of each stage, pricing model (lowercased) and country.
    let values = single_count(
        store,
        "WITH c AS (SELECT status, 'stage' AS field, stage AS value, COUNT(*) AS n FROM listings \
             WHERE stage IS NOT NULL GROUP BY status, stage \
             UNION ALL SELECT status, 'pricing_model', lower(pricing_model), COUNT(*) FROM listings \
             GROUP BY status, lower(pricing_model) \
             UNION ALL SELECT status, 'country', country, COUNT(*) FROM listings \
             WHERE country IS NOT NULL GROUP BY status, country) \
             SELECT COUNT(*) AS n FROM (SELECT k.status FROM listing_value_counts k LEFT JOIN c \
             ON c.status = k.status AND c.field = k.field AND c.value = k.value WHERE k.listings <> COALESCE(c.n, 0) \
             UNION ALL SELECT c.status FROM c LEFT JOIN listing_value_counts k \
             ON k.status = c.status AND k.field = c.field AND k.value = c.value WHERE k.listings IS NULL) d",
    )
    .await;
    assert_eq!(values, 0, "listings per status and value: kept counts that differ from a recount");
    // Each founder's live listings (no row: none), and the founders with any.
    let founders = conn
        .query_one_raw(sea_orm::Statement::from_string(
            store.backend(),
            "SELECT COUNT(*) AS n, (SELECT founders FROM founder_counts WHERE status = 'live') AS kept, \
             SUM(CASE WHEN c.counted > 0 THEN 1 ELSE 0 END) AS counted, \
             SUM(CASE WHEN c.counted <> c.kept THEN 1 ELSE 0 END) AS differ \
             FROM (SELECT (SELECT COUNT(*) FROM listing_founders lf JOIN listings l ON l.id = lf.listing_id \
             WHERE lf.founder_id = f.id AND l.status = 'live') AS counted, \
             COALESCE((SELECT k.listings FROM founder_live_listings k WHERE k.founder_id = f.id), 0) AS kept \
             FROM founders f) c",
        ))
        .await
        .unwrap()
        .unwrap();
    let n: i64 = founders.try_get("", "n").unwrap();
    let (kept, counted, differ): (i64, Option<i64>, Option<i64>) = (
        founders.try_get("", "kept").unwrap(),
        founders.try_get("", "counted").unwrap(),
        founders.try_get("", "differ").unwrap(),
    );
    assert_eq!(differ.unwrap_or(0), 0, "founders whose kept live listings differ from a recount (of {n})");
    assert_eq!(kept, counted.unwrap_or(0), "founders behind a live listing: kept {kept}, counted {counted:?}");
    let astray = single_count(
        store,
        "SELECT COUNT(*) AS n FROM founder_live_listings k WHERE NOT EXISTS \
             (SELECT 1 FROM founders f WHERE f.id = k.founder_id)",
    )
    .await;
    assert_eq!(astray, 0, "kept live listings of a founder deleted");
    // Each category's tree (it and its subcategories), a listing once however many links it has there.
    let trees = conn
        .query_all_raw(sea_orm::Statement::from_string(
            store.backend(),
            "SELECT t.slug AS slug, t.tree_live_listings AS kept, (SELECT COUNT(DISTINCT lc.listing_id) \
             FROM listing_categories lc JOIN categories c ON c.id = lc.category_id \
             JOIN listings l ON l.id = lc.listing_id \
             WHERE (c.id = t.id OR c.parent_id = t.id) AND l.status = 'live') AS counted FROM categories t",
        ))
        .await
        .unwrap();
    for r in &trees {
        let slug: String = r.try_get("", "slug").unwrap();
        let (kept, counted): (i64, i64) = (r.try_get("", "kept").unwrap(), r.try_get("", "counted").unwrap());
        assert_eq!(kept, counted, "the tree of {slug}: kept {kept}, counted {counted}");
    }
    if store.backend() == sea_orm::DbBackend::Sqlite {
        // SQLite's full-text index holds a token per category link (migration 61): each category's
        // token finds exactly its linked listings, and the index matches the text it was built from.
        conn.execute_unprepared("INSERT INTO listings_fts(listings_fts) VALUES ('integrity-check')")
            .await
            .expect("the full-text index matches its listings");
        let mark = migration::CATEGORY_MARK as u32;
        let links = conn
            .query_all_raw(sea_orm::Statement::from_string(
                store.backend(),
                format!(
                    "SELECT c.slug AS slug, COALESCE((SELECT group_concat(listing_id) FROM (SELECT DISTINCT \
                     lc.listing_id FROM listing_categories lc WHERE lc.category_id = c.id ORDER BY lc.listing_id)), '') \
                     AS linked, COALESCE((SELECT group_concat(rowid) FROM (SELECT rowid FROM listings_fts \
                     WHERE listings_fts MATCH 'category_tokens:\"' || char({mark}) || c.id || '\"' ORDER BY rowid)), '') \
                     AS matched FROM categories c"
                ),
            ))
            .await
            .unwrap();
        for r in &links {
            let slug: String = r.try_get("", "slug").unwrap();
            let (linked, matched): (String, String) =
                (r.try_get("", "linked").unwrap(), r.try_get("", "matched").unwrap());
            assert_eq!(matched, linked, "the listings the index puts in {slug}");
        }
    }
    let statuses = conn
        .query_all_raw(sea_orm::Statement::from_string(
            store.backend(),
            "SELECT s.status AS status, COALESCE(k.listings, 0) AS kept, \
             (SELECT COUNT(*) FROM listings l WHERE l.status = s.status) AS counted \
             FROM (SELECT status FROM listings UNION SELECT status FROM listing_counts) s \
             LEFT JOIN listing_counts k ON k.status = s.status",
        ))
        .await
        .unwrap();
    for r in &statuses {
        let status: String = r.try_get("", "status").unwrap();
        let (kept, counted): (i64, i64) = (r.try_get("", "kept").unwrap(), r.try_get("", "counted").unwrap());
        assert_eq!(kept, counted, "listings {status}: kept {kept}, counted {counted}");
    }
    // Each tally carries its listing's summary (migration 72): the weekly board reads it there.
    let stale = single_count(
        store,
        "SELECT COUNT(*) AS n FROM vote_tallies t JOIN listings l ON l.id = t.listing_id \
             WHERE NOT (t.slug = l.slug AND t.name = l.name AND t.url = l.url AND t.tagline = l.tagline \
             AND t.votes_count = l.votes_count AND (t.launch_week = l.launch_week \
             OR (t.launch_week IS NULL AND l.launch_week IS NULL)))",
    )
    .await;
    assert_eq!(stale, 0, "tallies whose copy of the summary differs from their listing");
    // Each listing's view total has its row, with the listing's status (migration 48).
    let astray = single_count(
        store,
        "SELECT COUNT(*) AS n FROM listings l LEFT JOIN listing_view_totals t ON t.listing_id = l.id \
             WHERE t.status IS NULL OR t.status <> l.status",
    )
    .await;
    assert_eq!(astray, 0, "view totals without their row or their listing's status");
    if store.backend() == sea_orm::DbBackend::Postgres {
        // Each search row holds its listing's stage, pricing model (lowercased) and country (migration
        // 64), then its status and its categories in id order (66).
        let astray = single_count(
            store,
            "SELECT COUNT(*) AS n FROM listing_search s JOIN listings l ON l.id = s.listing_id WHERE s.facets \
             IS DISTINCT FROM array_remove(ARRAY['s:' || l.stage, 'p:' || lower(l.pricing_model), 'c:' || l.country], NULL) \
             || ('t:' || l.status) || ARRAY(SELECT 'k:' || lc.category_id FROM listing_categories lc WHERE lc.listing_id = l.id \
             ORDER BY lc.category_id)",
        )
        .await;
        assert_eq!(astray, 0, "search rows whose filter values or categories are not their listing's");
    } else {
        // The full-text index holds what its content says, the value tokens too (migration 65: its
        // update trigger runs when a stage, pricing model or country is written). An error otherwise.
        let check = "INSERT INTO listings_fts (listings_fts, rank) VALUES ('integrity-check', 1)";
        let checked = conn.execute_unprepared(check).await;
        assert!(checked.is_ok(), "the text index differs from its listings: {checked:?}");
    }
    // Each launch week's listings per status, kept in week_listing_counts.
    let launches = conn
        .query_all_raw(sea_orm::Statement::from_string(
            store.backend(),
            "SELECT COALESCE(k.listings, 0) AS kept, (SELECT COUNT(*) FROM listings l \
             WHERE l.status = w.status AND l.launch_week = w.launch_week) AS counted \
             FROM (SELECT status, launch_week FROM listings WHERE launch_week IS NOT NULL \
             UNION SELECT status, launch_week FROM week_listing_counts) w \
             LEFT JOIN week_listing_counts k ON k.status = w.status AND k.launch_week = w.launch_week",
        ))
        .await
        .unwrap();
    let launches: Vec<(i64, i64)> =
        launches.iter().map(|r| (r.try_get("", "kept").unwrap(), r.try_get("", "counted").unwrap())).collect();
    for (kept, counted) in &launches {
        assert_eq!(kept, counted, "a launch week's listings: kept {kept}, counted {counted} ({launches:?})");
    }
    // Each launch day's listings per status, kept in day_listing_counts (the UTC day of launched_at,
    // as each store's index of migration 55 writes it).
    let day = match store.backend() {
        sea_orm::DbBackend::Postgres => migration::POSTGRES_LAUNCH_DAY,
        _ => migration::SQLITE_LAUNCH_DAY,
    };
    let days = single_count(
        store,
        &format!(
            "WITH c AS (SELECT status, {day} AS launch_day, COUNT(*) AS n FROM listings \
             WHERE launched_at IS NOT NULL GROUP BY status, {day}) \
             SELECT COUNT(*) AS n FROM (SELECT k.status FROM day_listing_counts k LEFT JOIN c \
             ON c.status = k.status AND c.launch_day = k.launch_day WHERE k.listings <> COALESCE(c.n, 0) \
             UNION ALL SELECT c.status FROM c LEFT JOIN day_listing_counts k \
             ON k.status = c.status AND k.launch_day = c.launch_day WHERE k.listings IS NULL) d"
        ),
    )
    .await;
    assert_eq!(days, 0, "listings per status and launch day: kept counts that differ from a recount");
    // Each week's ranked listings (live, at least one vote that week), kept in week_counts.
    let weeks = conn
        .query_all_raw(sea_orm::Statement::from_string(
            store.backend(),
            "SELECT COALESCE(k.listings, 0) AS kept, (SELECT COUNT(*) FROM vote_tallies v \
             WHERE v.week_start = w.week_start AND v.live AND v.votes > 0) AS counted \
             FROM (SELECT week_start FROM vote_tallies UNION SELECT week_start FROM week_counts) w \
             LEFT JOIN week_counts k ON k.week_start = w.week_start ORDER BY w.week_start",
        ))
        .await
        .unwrap();
    let weeks: Vec<(i64, i64)> =
        weeks.iter().map(|r| (r.try_get("", "kept").unwrap(), r.try_get("", "counted").unwrap())).collect();
    assert!(!weeks.is_empty());
    for (kept, counted) in &weeks {
        assert_eq!(kept, counted, "a week's ranked listings: kept {kept}, counted {counted} ({weeks:?})");
    }
    // Each all-time board's ranked listings (live, the column positive), kept in board_counts.
    let boards = conn
        .query_all_raw(sea_orm::Statement::from_string(
            store.backend(),
            "SELECT k.metric AS metric, k.listings AS kept, CASE k.metric \
             WHEN 'votes_count' THEN (SELECT COUNT(*) FROM listings l WHERE l.status = 'live' AND l.votes_count > 0) \
             WHEN 'billboard_cents' THEN (SELECT COUNT(*) FROM listings l WHERE l.status = 'live' AND l.billboard_cents > 0) \
             WHEN 'domain_rating' THEN (SELECT COUNT(*) FROM listings l WHERE l.status = 'live' AND l.domain_rating > 0) \
             ELSE (SELECT COUNT(*) FROM listings l WHERE l.status = 'live' AND l.revenue_monthly_cents > 0) END AS counted \
             FROM board_counts k ORDER BY k.metric",
        ))
        .await
        .unwrap();
    assert_eq!(boards.len(), 4, "a row per board");
    for r in &boards {
        let metric: String = r.try_get("", "metric").unwrap();
        let (kept, counted): (i64, i64) = (r.try_get("", "kept").unwrap(), r.try_get("", "counted").unwrap());
        assert_eq!(kept, counted, "board {metric}: kept {kept}, counted {counted}");
    }
    rows.iter()
        .map(|r| {
            let slug: String = r.try_get("", "slug").unwrap();
            let (kept, counted): (i64, i64) = (r.try_get("", "kept").unwrap(), r.try_get("", "counted").unwrap());
            assert_eq!(kept, counted, "{slug}: kept {kept}, counted {counted}");
            (slug, kept)
        })
        .collect::<Vec<_>>()
}

// Today's launches (the home page's list): the listings launched since midnight and no others, most
// voted first and the newest first among equals, paged. Both stores read the page from the top of
// today's run of `(status, launch day, votes)` (migration 55); listings launched before midnight, with
// more votes than any of today's, stay out.
on_both!(today_s_launches_are_the_day_s_most_voted_first, |store| {
    let midnight = Utc::now().date_naive().and_time(chrono::NaiveTime::MIN).and_utc();
    let launched = |name: String, at: DateTime<Utc>, votes: usize| {
        let mut l = listing(&name, ListingStatus::Draft, None);
        l.lifecycle.paid_launch(None, at).unwrap();
        import(l, votes)
    };
    let mut items: Vec<ImportListing> = [3, 1, 3, 0, 2]
        .iter()
        .enumerate()
        .map(|(i, v)| launched(format!("Today {i}"), midnight + Duration::seconds(i as i64), *v))
        .collect();
    items.extend(
        [10, 9, 8]
            .iter()
            .enumerate()
            .map(|(i, v)| launched(format!("Yesterday {i}"), midnight - Duration::hours(1 + i as i64), *v)),
    );
    store.import_listings(&items, now()).await.unwrap();
    let today = ListingSearch { launched_since: Some(midnight), sort: SearchSort::Votes, ..Default::default() };
    let mut seen = Vec::new();
    for n in 1..=3 {
        let page = store.search_listings(&today, PageRequest::parse(Some(n), Some(2)).unwrap()).await.unwrap();
        assert_eq!(page.total, 5, "page {n}: {page:?}");
        seen.extend(names(&page));
    }
    assert_eq!(seen, ["Today 2", "Today 0", "Today 4", "Today 1", "Today 3"]);
    // The total is kept per launch day (migration 69): a launch hidden today, and one of yesterday's
    // moved to today, move it as a count would.
    use sea_orm::ConnectionTrait;
    let moved = format!(
        "UPDATE listings SET launched_at = '{}' WHERE name = 'Yesterday 2'",
        (midnight + Duration::minutes(5)).format("%Y-%m-%dT%H:%M:%S+00:00")
    );
    for sql in ["UPDATE listings SET status = 'hidden' WHERE name = 'Today 1'", moved.as_str()] {
        store.connection().execute_unprepared(sql).await.unwrap();
    }
    let page = store.search_listings(&today, PageRequest::parse(Some(1), Some(10)).unwrap()).await.unwrap();
    assert_eq!(page.total, 5, "{page:?}");
    assert_eq!(names(&page), ["Yesterday 2", "Today 2", "Today 0", "Today 4", "Today 3"]);
});

// An import keeps every count its rows move, whichever way the store writes them (on PostgreSQL as
// a superuser, with the row triggers off and the counts written once per batch): listings of three
// statuses, in one or two categories, with votes in two weeks, money, a rating and revenue, in two
// batches after a listing written before them.
on_both!(an_import_keeps_every_count_a_recount_finds, |store| {
    use domain::listing::{DomainRating, Revenue};
    use sea_orm::ConnectionTrait;
    let shared: std::sync::Arc<dyn domain::ports::Store> = std::sync::Arc::new(store.clone());
    let cats = seed_categories(&shared).await;
    let (dev, mkt) = (cat_id(&cats, "dev-tools"), cat_id(&cats, "marketing"));
    store.import_listings(&[import(listing("Before", ListingStatus::Live, Some(dev)), 2)], now()).await.unwrap();
    let varied = |batch: usize| {
        (0..12)
            .map(|i| {
                let status = [ListingStatus::Live, ListingStatus::Scheduled, ListingStatus::Draft][i % 3];
                let mut l =
                    listing(&format!("Batch {batch} item {i}"), status, Some(if i % 2 == 0 { dev } else { mkt }));
                if i % 4 == 0 {
                    l.categories = Some(domain::category::ListingCategories::with_extras(dev, vec![mkt]).unwrap());
                }
                if i % 5 == 0 {
                    l.domain_rating = Some(DomainRating {
                        value: 30,
                        previous: Some(20),
                        source: "test".into(),
                        measured_on: now().date_naive(),
                    });
                    l.revenue = Some(Revenue { monthly_cents: 900, source: "test".into(), as_of: now().date_naive() });
                }
                let mut item = import(l, i % 4);
                item.views = (batch * 100 + i * 7) as i64;
                // Votes across weeks: some of them three weeks back.
                item.votes = (0..i % 4).map(|v| now() - Duration::days(7 * (v as i64 % 2) * 3)).collect();
                if i % 3 == 1 {
                    item.billboard = vec![(domain::money::Cents::new(500), now())];
                }
                item
            })
            .collect::<Vec<_>>()
    };
    store.import_listings(&varied(1), now()).await.unwrap();
    store.import_listings(&varied(2), now()).await.unwrap();
    let categories = kept_counts_recounted(store).await;
    // Per batch, four live listings: one in two categories, three in one.
    assert_eq!(categories.iter().map(|(_, n)| n).sum::<i64>(), 1 + 2 * 5, "live listings in their categories");
    let conn = store.connection();
    let one = |sql: &'static str| async move {
        let r = conn.query_one_raw(sea_orm::Statement::from_string(store.backend(), sql)).await.unwrap().unwrap();
        r.try_get::<i64>("", "n").unwrap()
    };
    // The weeks' counts above read `live` on each tally: it must say what its listing's status says.
    let wrong = "SELECT COUNT(*) AS n FROM vote_tallies t JOIN listings l ON l.id = t.listing_id \
                 WHERE t.live <> (l.status = 'live')";
    assert_eq!(one(wrong).await, 0, "each tally's live flag follows its listing");
    assert!(one("SELECT COUNT(*) AS n FROM vote_tallies WHERE NOT live").await > 0, "votes on listings not live");
    assert_eq!(one("SELECT COUNT(DISTINCT week_start) AS n FROM vote_tallies WHERE live").await, 2, "two weeks");
    // Every listing has its view total, the imported one (migration 48).
    let without = "SELECT COUNT(*) AS n FROM listings l LEFT JOIN listing_view_totals t ON t.listing_id = l.id \
                   WHERE t.listing_id IS NULL";
    assert_eq!(one(without).await, 0, "a view total for every listing");
    let views: i64 = (1..=2).flat_map(|batch| (0..12).map(move |i| (batch * 100 + i * 7) as i64)).sum();
    assert_eq!(
        one("SELECT CAST(SUM(views) AS BIGINT) AS n FROM listing_view_totals").await,
        views,
        "the imported views"
    );
    if store.backend() == sea_orm::DbBackend::Postgres {
        // The search table holds exactly the live and scheduled listings, each with the vector its
        // trigger writes, and its change count moved by at least as many rows.
        let stale = "SELECT COUNT(*) AS n FROM listings l FULL JOIN listing_search s ON s.listing_id = l.id \
             WHERE (l.status IN ('live', 'scheduled')) IS DISTINCT FROM (s.listing_id IS NOT NULL) \
             OR s.status <> l.status OR s.doc <> listing_search_doc(l.name, l.tagline, l.keywords, l.tags, \
             l.short_description, l.features, l.description)";
        assert_eq!(one(stale).await, 0, "the search table follows the import");
        let searchable = one("SELECT COUNT(*) AS n FROM listing_search").await;
        assert_eq!(searchable, 1 + 2 * 8);
        assert!(one("SELECT changes AS n FROM listing_terms_state").await >= searchable, "changes counted");
        let (kept, wrong) = ranked_terms_recounted(store).await;
        assert!(kept > searchable, "each searchable listing's words: {kept}");
        assert_eq!(wrong, 0, "the ranked words follow the import");
    }
    conn.execute_unprepared("DELETE FROM listings WHERE name = 'Before'").await.unwrap();
    assert_eq!(one(without).await, 0);
    assert_eq!(one("SELECT COUNT(*) AS n FROM listing_view_totals").await, 2 * 12, "a deleted listing's total goes");
    assert_eq!(ranked_terms_recounted(store).await.1, 0, "a deleted listing's words go");
});

// Imports running at once, as a bulk load's lanes run them (`DirectoryImport::import_lanes`): each
// takes ids no other takes, the demo voters they both need are created once, every count equals a
// recount, and a listing written the usual way afterwards takes an id after all of them. (Before the
// ids were reserved, both imports read the same highest id and the second failed on the first's rows.)
on_both!(imports_side_by_side_take_their_own_ids_and_keep_every_count, |store| {
    use sea_orm::ConnectionTrait;
    let shared: std::sync::Arc<dyn domain::ports::Store> = std::sync::Arc::new(store.clone());
    let cats = seed_categories(&shared).await;
    let (dev, mkt) = (cat_id(&cats, "dev-tools"), cat_id(&cats, "marketing"));
    let batch = |lane: usize, round: usize| {
        (0..8)
            .map(|i| {
                let status = [ListingStatus::Live, ListingStatus::Scheduled][i % 2];
                let cat = if (lane + i).is_multiple_of(2) { dev } else { mkt };
                // Every batch needs seven voters: both lanes' first imports set out to create them.
                import(
                    listing(&format!("Lane {lane} round {round} item {i}"), status, Some(cat)),
                    (lane + round * 2 + i) % 8,
                )
            })
            .collect::<Vec<_>>()
    };
    let lane = |lane: usize| {
        let batch = &batch;
        async move {
            let mut ids = Vec::new();
            for round in 0..3 {
                ids.extend(store.import_listings(&batch(lane, round), now()).await.expect("an import beside another"));
            }
            ids
        }
    };
    let (a, b) = futures::future::join(lane(0), lane(1)).await;
    let mut ids: Vec<i64> = a.iter().chain(&b).map(|id| id.get()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 48, "every listing its own id");
    kept_counts_recounted(store).await;
    let conn = store.connection();
    let one = |sql: &'static str| async move {
        let r = conn.query_one_raw(sea_orm::Statement::from_string(store.backend(), sql)).await.unwrap().unwrap();
        r.try_get::<i64>("", "n").unwrap()
    };
    assert_eq!(one("SELECT COUNT(*) AS n FROM listings").await, 48);
    assert_eq!(one("SELECT COUNT(*) AS n FROM users WHERE is_demo").await, 7, "the voters, once each");
    assert_eq!(one("SELECT COUNT(DISTINCT email) AS n FROM users WHERE is_demo").await, 7);
    let votes: i64 =
        (0..2).flat_map(|l| (0..3).flat_map(move |r| (0..8).map(move |i| ((l + r * 2 + i) % 8) as i64))).sum();
    assert_eq!(one("SELECT COUNT(*) AS n FROM votes").await, votes, "every vote");
    let after = store.create_listing(listing("After the lanes", ListingStatus::Draft, Some(dev))).await.unwrap();
    assert!(after.id.get() > *ids.last().unwrap(), "{} after {:?}", after.id.get(), ids.last());
});

/// PostgreSQL, as a superuser: a bulk load writes its batches two at a time
/// (`DirectoryImport::import_lanes`) and still writes the directory one import transaction writes:
/// the same listings under the same ids with the same votes, the same awards, every count a recount.
/// Three batches (2 100 listings), so the lanes overlap and the last batch is a short one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_bulk_load_in_two_lanes_writes_what_one_transaction_writes() {
    use domain::ports::DirectoryImport;
    use sea_orm::ConnectionTrait;
    let (Some(lanes), Some(one)) = (harness::postgres().await, harness::postgres().await) else { return };
    assert_eq!(lanes.store.import_lanes().await.unwrap(), 2, "a superuser's imports run side by side");
    let sqlite = harness::sqlite().await.unwrap();
    assert_eq!(sqlite.store.import_lanes().await.unwrap(), 1, "SQLite has one writer");
    let cfg = demo_data::generate::DemoConfig { listings: 2100, ..demo_data::generate::DemoConfig::standard(now()) };
    for db in [&lanes, &one] {
        demo_data::seed_reference(&db.store).await.unwrap();
    }
    let bulk = demo_data::bulk_load_demo(&lanes.store, cfg.clone(), false).await.unwrap();
    let together = demo_data::load_demo(&one.store, cfg, false).await.unwrap();
    assert_eq!(bulk, together);
    assert_eq!(bulk.listings, 2100);
    kept_counts_recounted(&lanes.store).await;
    async fn dump(store: &adapters_storage::SeaOrmStore) -> Vec<String> {
        {
            let rows = store
                .connection()
                .query_all_raw(sea_orm::Statement::from_string(
                    sea_orm::DbBackend::Postgres,
                    "SELECT l.id::text || ' ' || l.slug || ' ' || l.status || ' ' || l.votes_count || ' ' || \
                     (SELECT COUNT(*) FROM votes v WHERE v.listing_id = l.id) || ' ' || \
                     (SELECT COUNT(*) FROM listing_search s WHERE s.listing_id = l.id) AS line \
                     FROM listings l UNION ALL SELECT 'award ' || week_start || ' ' || rank || ' ' || listing_id \
                     FROM awards ORDER BY 1",
                ))
                .await
                .unwrap();
            rows.iter().map(|r| r.try_get::<String>("", "line").unwrap()).collect::<Vec<_>>()
        }
    }
    let (a, b) = (dump(&lanes.store).await, dump(&one.store).await);
    assert_eq!(a.len(), b.len());
    assert!(a.iter().any(|l| l.starts_with("award ")), "awards written");
    assert_eq!(a, b, "the same directory");
}

/// PostgreSQL: the column `t` of a catalog query's rows on a freshly migrated database; `None` where
/// no PostgreSQL is configured.
async fn postgres_catalog(sql: &str) -> Option<Vec<String>> {
    use sea_orm::ConnectionTrait;
    let db = harness::postgres().await?;
    let rows = db
        .store
        .connection()
        .query_all_raw(sea_orm::Statement::from_string(sea_orm::DbBackend::Postgres, sql))
        .await
        .unwrap();
    Some(rows.iter().map(|r| r.try_get("", "t").unwrap()).collect())
}

/// PostgreSQL: a category linked to a live listing, or unlinked, rewrites its search row's facets
/// (migration 66) without marking the kept word counts stale (`listing_terms_state.changes`), which a
/// full recount at the next search refresh would follow; a change of its words still marks them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_category_change_leaves_the_word_counts_current() {
    use sea_orm::ConnectionTrait;
    let Some(db) = harness::postgres().await else {
        return;
    };
    let store = &db.store;
    let shared: std::sync::Arc<dyn domain::ports::Store> = std::sync::Arc::new(store.clone());
    let cats = seed_categories(&shared).await;
    let (dev, mkt) = (cat_id(&cats, "dev-tools"), cat_id(&cats, "marketing"));
    let ids =
        store.import_listings(&[import(listing("Heron", ListingStatus::Live, Some(dev)), 0)], now()).await.unwrap();
    let conn = store.connection();
    let changes = || single_count(store, "SELECT changes AS n FROM listing_terms_state");
    let linked =
        || single_count(store, "SELECT COUNT(*) AS n FROM listing_search s, unnest(s.facets) f WHERE f LIKE 'k:%'");
    let before = changes().await;
    assert_eq!(linked().await, 1, "the import wrote the link's element");
    let id = ids[0].get();
    let add =
        format!("INSERT INTO listing_categories (listing_id, category_id, is_primary) VALUES ({id}, {mkt}, FALSE)");
    conn.execute_unprepared(&add).await.unwrap();
    assert_eq!(linked().await, 2, "a link added");
    conn.execute_unprepared(&format!("DELETE FROM listing_categories WHERE listing_id = {id}")).await.unwrap();
    assert_eq!(linked().await, 0, "every link taken, in one statement");
    assert_eq!(changes().await, before, "no word moved");
    conn.execute_unprepared(&format!("UPDATE listings SET tagline = 'wading birds' WHERE id = {id}")).await.unwrap();
    assert!(changes().await > before, "a change of the words is counted");
}

/// PostgreSQL: the import writes what the row triggers keep itself when it turns them off
/// (`keep_by_set`), so a trigger on a table it writes that it does not know about would go unkept.
/// This list is the one `keep_by_set` follows: a new trigger fails here until the import learns it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_import_knows_every_trigger() {
    let Some(found) = postgres_catalog(
        "SELECT tgrelid::regclass::text || '.' || tgname AS t FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1",
    )
    .await
    else {
        return;
    };
    assert_eq!(
        found,
        [
            "awards.listing_details_added",
            "awards.listing_details_changed",
            "awards.listing_details_removed",
            "founder_live_listings.founder_counts_moved",
            "founder_live_listings.founder_counts_written",
            "founders.founder_live_listings_dropped",
            "founders.listing_details_changed",
            "listing_categories.category_count_link",
            "listing_categories.category_tree_count_link",
            "listing_categories.listing_category_not_moved",
            "listing_categories.listing_details_added",
            "listing_categories.listing_details_changed",
            "listing_categories.listing_details_removed",
            "listing_categories.listing_search_links_added",
            "listing_categories.listing_search_links_taken",
            "listing_founders.founder_count_link",
            "listing_founders.listing_details_added",
            "listing_founders.listing_details_changed",
            "listing_founders.listing_details_removed",
            "listing_founders.listing_founder_not_moved",
            "listing_search.listing_search_terms_kept",
            "listing_search.listing_terms_bumped",
            "listing_updates.listing_details_added",
            "listing_updates.listing_details_changed",
            "listing_updates.listing_details_removed",
            "listings.board_counts_moved",
            "listings.board_counts_written",
            "listings.category_count_deleted",
            "listings.category_count_status",
            "listings.category_tree_count_deleted",
            "listings.category_tree_count_status",
            "listings.day_listing_counts_moved",
            "listings.day_listing_counts_written",
            "listings.founder_count_deleted",
            "listings.founder_count_status",
            "listings.listing_counts_moved",
            "listings.listing_counts_written",
            "listings.listing_search_added",
            "listings.listing_search_changed",
            "listings.listing_value_counts_moved",
            "listings.listing_value_counts_written",
            "listings.listing_view_totals_added",
            "listings.listing_view_totals_moved",
            "listings.tally_live_status",
            "listings.tally_summary_edited",
            "listings.week_listing_counts_moved",
            "listings.week_listing_counts_written",
            "milestones.listing_details_added",
            "milestones.listing_details_changed",
            "milestones.listing_details_removed",
            "stories.listing_details_added",
            "stories.listing_details_changed",
            "stories.listing_details_removed",
            "vote_tallies.tally_live_written",
            "vote_tallies.week_counts_moved",
            "vote_tallies.week_counts_written",
        ]
    );
}

/// PostgreSQL: an import as a superuser runs without its foreign keys (`triggers_off_for_import`), so
/// every id its rows hold must be one it wrote, read, or checked (`names_held`). This lists each
/// foreign key of a table it writes whose values do not come from the import's own listings: a new
/// one fails here until the import accounts for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_import_accounts_for_every_foreign_key() {
    let Some(found) = postgres_catalog(
        "SELECT c.conrelid::regclass::text || '.' || a.attname || ' -> ' || c.confrelid::regclass::text AS t \
             FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey) \
             WHERE c.contype = 'f' AND c.confrelid <> 'listings'::regclass AND c.conrelid::regclass::text IN \
             ('listings', 'listing_view_totals', 'listing_categories', 'listing_founders', 'votes', 'vote_tallies', \
             'reviews', 'listing_updates', 'milestones', 'stories', 'billboard_contributions', 'domain_ratings', \
             'listing_search', 'listing_search_terms') ORDER BY 1",
    )
    .await
    else {
        return;
    };
    assert_eq!(
        found,
        [
            "billboard_contributions.order_line_id -> order_lines", // none: an import's are unpaid
            "listing_categories.category_id -> categories",         // names_held
            "listing_founders.founder_id -> founders",              // names_held
            "listings.primary_category_id -> categories",           // names_held (one of the listing's)
            "reviews.user_id -> users",                             // none: an import's reviews are anonymous
            "votes.user_id -> users",                               // the demo voters, read or written
        ]
    );
}

// SQLite matches a word's category in its full-text index, which holds a token per category link
// (migration 61): a link added or taken moves the listing in or out, and a maker who writes a
// category's token into a tagline is not put in it.
on_both!(a_word_within_a_category_is_found_by_the_listing_s_links_alone, |store| {
    use domain::category::ListingCategories;
    use sea_orm::ConnectionTrait;
    let shared: std::sync::Arc<dyn domain::ports::Store> = std::sync::Arc::new(store.clone());
    let cats = seed_categories(&shared).await;
    let (api, mkt) = (cat_id(&cats, "api-tools"), cat_id(&cats, "marketing"));
    let db = store.connection();
    let said = |name: &str, primary, tagline: String| {
        let mut l = listing(name, ListingStatus::Live, Some(primary));
        l.profile.tagline = tagline;
        l
    };
    let mut both = said("Kestrel Both", mkt, "kestrel".into());
    both.categories = Some(ListingCategories::with_extras(mkt, vec![api]).unwrap());
    let forged = format!("kestrel {}{}", migration::CATEGORY_MARK, api.get());
    let mut ids = Vec::new();
    for l in [
        said("Kestrel Api", api, "kestrel".into()),
        both,
        said("Kestrel Forged", mkt, forged),
        said("Kestrel Elsewhere", mkt, "kestrel".into()),
    ] {
        ids.push(domain::ports::ListingRepository::create_listing(store, l).await.unwrap().id);
    }
    let within = |category: &'static str| async move {
        let s = ListingSearch { category: Some(slug(category)), ..search(Some("kestrel")) };
        let mut found = names(&store.search_listings(&s, PageRequest::default()).await.unwrap());
        found.sort();
        found
    };
    assert_eq!(within("api-tools").await, ["Kestrel Api", "Kestrel Both"], "an extra category counts");
    assert_eq!(within("dev-tools").await, ["Kestrel Api", "Kestrel Both"], "and in the parent's tree");
    assert_eq!(within("marketing").await, ["Kestrel Both", "Kestrel Elsewhere", "Kestrel Forged"]);
    domain::ports::OrderRepository::add_extra_categories(store, ids[3], &[api]).await.unwrap();
    let sql = format!("DELETE FROM listing_categories WHERE listing_id = {} AND category_id = {api}", ids[1].get());
    db.execute_unprepared(&sql).await.unwrap();
    assert_eq!(within("api-tools").await, ["Kestrel Api", "Kestrel Elsewhere"], "a link added, a link taken");
    assert_eq!(within("marketing").await, ["Kestrel Both", "Kestrel Elsewhere", "Kestrel Forged"]);
});

on_both!(kept_counts_equal_a_recount_after_every_kind_of_change, |store| {
    use sea_orm::ConnectionTrait;
    let shared: std::sync::Arc<dyn domain::ports::Store> = std::sync::Arc::new(store.clone());
    let cats = seed_categories(&shared).await;
    let (dev, api, mkt) = (cat_id(&cats, "dev-tools"), cat_id(&cats, "api-tools"), cat_id(&cats, "marketing"));
    let maker = |name: &str| domain::founder::NewFounder {
        slug: slug(name),
        name: name.into(),
        headline: "Maker".into(),
        bio: String::new(),
        country: None,
        avatar_url: String::new(),
        socials: Socials::default(),
    };
    let makers = store.import_founders(&[maker("ada"), maker("bo")]).await.unwrap();
    let (ada, bo) = (makers[0], makers[1]);
    let by = |l: NewListing, votes, founders: &[domain::ids::FounderId]| ImportListing {
        founders: founders.iter().map(|f| (*f, "Founder".to_owned())).collect(),
        ..import(l, votes)
    };
    let ids = store
        .import_listings(
            &[
                by(listing("One", ListingStatus::Live, Some(dev)), 3, &[ada, bo]),
                by(listing("Two", ListingStatus::Live, Some(dev)), 1, &[ada]),
                by(listing("Three", ListingStatus::Scheduled, Some(mkt)), 0, &[bo]),
                by(listing("Four", ListingStatus::Live, Some(mkt)), 2, &[ada]),
            ],
            now(),
        )
        .await
        .unwrap();
    let conn = store.connection();
    let recount = || kept_counts_recounted(store);
    assert_eq!(recount().await.iter().map(|(_, n)| n).sum::<i64>(), 3, "the import counted");
    // Every kind of change an operator's SQL or a use case makes, each followed by a recount.
    // A vote's write of its week's tally (an upsert, as `count_vote` writes it).
    let vote = format!(
        "INSERT INTO vote_tallies (week_start, listing_id, votes, live) VALUES ('2026-01-12', {}, 1, TRUE) \
         ON CONFLICT (week_start, listing_id) DO UPDATE SET votes = vote_tallies.votes + 1",
        ids[0]
    );
    for sql in [
        format!("UPDATE listings SET status = 'live' WHERE id = {}", ids[2]),
        format!(
            "INSERT INTO listing_categories (listing_id, category_id, is_primary) VALUES ({}, {mkt}, FALSE)",
            ids[0]
        ),
        format!("UPDATE listings SET status = 'removed' WHERE id = {}", ids[1]),
        format!("DELETE FROM listing_categories WHERE listing_id = {} AND category_id = {mkt}", ids[0]),
        // A live listing linked to a parent and its subcategory in one statement (each row's trigger
        // must see the other's row, and not its own), linked again where it already is, and unlinked
        // from both in one statement.
        format!(
            "INSERT INTO listing_categories (listing_id, category_id, is_primary) VALUES ({0}, {api}, FALSE), \
             ({0}, {dev}, FALSE)",
            ids[2]
        ),
        format!(
            "INSERT INTO listing_categories (listing_id, category_id, is_primary) VALUES ({}, {api}, FALSE) \
             ON CONFLICT DO NOTHING",
            ids[2]
        ),
        // Leaving live and coming back with three links in two trees.
        format!("UPDATE listings SET status = 'hidden' WHERE id = {}", ids[2]),
        format!("UPDATE listings SET status = 'live' WHERE id = {}", ids[2]),
        format!("DELETE FROM listing_categories WHERE listing_id = {} AND category_id IN ({api}, {dev})", ids[2]),
        // A link's other column written in place (a move of a link is refused: below).
        format!("UPDATE listing_categories SET is_primary = NOT is_primary WHERE listing_id = {}", ids[0]),
        format!("UPDATE listings SET name = 'Renamed' WHERE id = {}", ids[3]),
        // The rest of the summary each tally copies (migration 72), one column and then three at once,
        // and a write of the same values.
        format!("UPDATE listings SET slug = 'renamed-one' WHERE id = {}", ids[0]),
        format!(
            "UPDATE listings SET url = 'https://one.example/new', tagline = 'A new line', name = 'One Again' \
             WHERE id = {}",
            ids[0]
        ),
        format!("UPDATE listings SET tagline = tagline, votes_count = votes_count WHERE id = {}", ids[0]),
        // A launch moved to another day, to a day two listings share, taken away and given again.
        format!("UPDATE listings SET launched_at = '2026-01-14T09:30:00+00:00' WHERE id = {}", ids[0]),
        format!("UPDATE listings SET launched_at = '2026-01-14T23:59:00+00:00' WHERE id = {}", ids[3]),
        format!("UPDATE listings SET launched_at = NULL WHERE id = {}", ids[3]),
        format!("UPDATE listings SET launched_at = '2026-01-15T00:00:00+00:00' WHERE id = {}", ids[3]),
        // A stage, pricing model and country given, changed in case only, changed, and taken away.
        format!("UPDATE listings SET stage = 'growing', pricing_model = 'Free', country = 'US' WHERE id = {}", ids[0]),
        format!("UPDATE listings SET pricing_model = 'FREE' WHERE id = {}", ids[0]),
        format!("UPDATE listings SET stage = 'mvp', pricing_model = 'Paid' WHERE id IN ({}, {})", ids[0], ids[2]),
        format!("UPDATE listings SET stage = NULL, country = NULL WHERE id = {}", ids[0]),
        // A founder linked to a live listing, and one unlinked from a live listing while behind another.
        format!(
            "INSERT INTO listing_founders (listing_id, founder_id, title, position) VALUES ({}, {ada}, 'CTO', 1)",
            ids[2]
        ),
        format!("DELETE FROM listing_founders WHERE listing_id = {} AND founder_id = {bo}", ids[0]),
        // A listing moved to another launch week, taken out of every week, and given one again.
        format!("UPDATE listings SET launch_week = '2026-01-12' WHERE id = {}", ids[0]),
        format!("UPDATE listings SET launch_week = NULL WHERE id = {}", ids[3]),
        format!("UPDATE listings SET launch_week = '2026-01-19', status = 'scheduled' WHERE id = {}", ids[3]),
        format!("DELETE FROM listings WHERE id = {}", ids[3]),
        format!("DELETE FROM listings WHERE id = {}", ids[1]),
        // A week's tallies: an unvote to zero, a vote again, a tally of another week, moved, deleted.
        format!("UPDATE vote_tallies SET votes = 0 WHERE listing_id = {}", ids[0]),
        format!("UPDATE vote_tallies SET votes = votes + 1 WHERE listing_id = {}", ids[0]),
        format!(
            "INSERT INTO vote_tallies (week_start, listing_id, votes, live) VALUES ('2026-01-05', {}, 2, TRUE)",
            ids[2]
        ),
        format!(
            "UPDATE vote_tallies SET week_start = '2026-01-12' WHERE listing_id = {} AND week_start = '2026-01-05'",
            ids[2]
        ),
        // As a vote writes it: an upsert, a new row in a week already counted; an unvote to zero; the
        // upsert again, now the update of a row that comes back onto the board.
        vote.clone(),
        format!(
            "UPDATE vote_tallies SET votes = votes - 1 WHERE listing_id = {} AND week_start = '2026-01-12'",
            ids[0]
        ),
        vote.clone(),
        // The all-time boards: money, a rating and revenue arriving, votes falling to zero, a rating
        // taken away; then the listing hidden and restored with all of them.
        format!("UPDATE listings SET billboard_cents = 500 WHERE id = {}", ids[0]),
        format!("UPDATE listings SET domain_rating = 40, revenue_monthly_cents = 9000 WHERE id = {}", ids[2]),
        format!("UPDATE listings SET votes_count = 0 WHERE id = {}", ids[0]),
        format!("UPDATE listings SET votes_count = votes_count + 1 WHERE id = {}", ids[2]),
        format!("UPDATE listings SET domain_rating = NULL WHERE id = {}", ids[0]),
        format!("UPDATE listings SET status = 'hidden' WHERE id = {}", ids[2]),
        format!("UPDATE listings SET status = 'live' WHERE id = {}", ids[2]),
        format!("DELETE FROM vote_tallies WHERE listing_id = {}", ids[0]),
        // A founder behind a live listing deleted.
        format!("DELETE FROM founders WHERE id = {bo}"),
    ] {
        conn.execute_unprepared(&sql).await.unwrap();
        recount().await;
    }
    let after: Vec<i64> = recount().await.into_iter().map(|(_, n)| n).collect();
    assert_eq!(after.iter().sum::<i64>(), 2, "One in dev-tools, Three in marketing: {after:?}");
    // A link moved by an UPDATE (an operator's SQL) is refused, its counts untouched: the counts follow
    // a link's insert and delete (migration 67). It moved api-tools' tree count to 0 with One in it.
    for sql in [
        format!(
            "UPDATE listing_categories SET category_id = {api} WHERE listing_id = {} AND category_id = {dev}",
            ids[0]
        ),
        format!("UPDATE listing_categories SET listing_id = {} WHERE listing_id = {}", ids[2], ids[0]),
        format!("UPDATE listing_founders SET listing_id = {} WHERE listing_id = {}", ids[0], ids[2]),
    ] {
        let refused = conn.execute_unprepared(&sql).await.expect_err(&sql).to_string();
        assert!(refused.contains(migration::LINK_MOVE_REFUSAL), "{sql}: {refused}");
    }
    let unmoved: Vec<i64> = recount().await.into_iter().map(|(_, n)| n).collect();
    assert_eq!(unmoved, after, "the refused moves left every count as it was");
    // Written to the same values, a link is not moved.
    let same = format!("UPDATE listing_categories SET category_id = category_id WHERE listing_id = {}", ids[0]);
    conn.execute_unprepared(&same).await.unwrap();
});

on_every_store!(search_totals_are_exact_up_to_the_cap_and_say_so_beyond, |store| {
    use domain::paging::COUNT_CAP;
    let n = COUNT_CAP as usize + 3;
    let mut batch = Vec::new();
    for i in 0..n {
        let mut l = listing(&format!("Common Widget {i}"), ListingStatus::Live, None);
        if i < 5 {
            l.profile.tagline = "a rare marmoset".into();
        } else if i < 1004 {
            l.profile.tagline = "a busy lemur and a gibbon".into();
        } else if i == 1004 {
            l.profile.tagline = "a busy lemur".into();
        }
        batch.push(import(l, 0));
        if batch.len() == 1000 || i + 1 == n {
            store.import_listings(&batch, now()).await.unwrap();
            batch.clear();
        }
    }
    let page = PageRequest::parse(Some(2), Some(20)).unwrap();
    let common = store.search_listings(&search(Some("widget")), page).await.unwrap();
    assert_eq!((common.total, common.total_exact, common.items.len()), (COUNT_CAP, false, 20), "10 000+");
    let all = store.search_listings(&search(None), page).await.unwrap();
    assert_eq!((all.total, all.total_exact), (n as u64, true), "every live listing: the kept count, exact");
    let mut newest = search(None);
    newest.sort = SearchSort::Newest;
    assert_eq!(store.search_listings(&newest, page).await.unwrap().total, n as u64, "in any order");
    let rare = store.search_listings(&search(Some("marmoset")), PageRequest::default()).await.unwrap();
    assert_eq!((rare.total, rare.total_exact, rare.items.len()), (5, true, 5), "exact under the cap");
    let past = store.search_listings(&search(Some("marmoset")), page).await.unwrap();
    assert_eq!((past.total, past.total_exact, past.items.len()), (5, true, 0), "a page past the end keeps the total");
    // Around the ranked candidates (1 000, or as deep as the page asks): exact on either side.
    for (word, total) in [("lemur", 1000), ("gibbon", 999)] {
        for (number, size) in [(1, 20), (50, 20), (51, 20), (11, 100)] {
            let page = PageRequest::parse(Some(number), Some(size)).unwrap();
            let r = store.search_listings(&search(Some(word)), page).await.unwrap();
            let shown = (total as usize).saturating_sub(page.offset() as usize).min(size as usize);
            assert_eq!(
                (r.total, r.total_exact, r.items.len()),
                (total, true, shown),
                "{word}, page {number} of {size}"
            );
        }
    }
    let none = store.search_listings(&search(Some("okapi")), PageRequest::default()).await.unwrap();
    assert_eq!((none.total, none.items.len()), (0, 0), "no match");
    // A page past the ranked candidates still comes back, ordered and full.
    let deep =
        store.search_listings(&search(Some("widget")), PageRequest::parse(Some(60), Some(20)).unwrap()).await.unwrap();
    assert_eq!(deep.items.len(), 20, "page 60 of a search for a word on every listing");
});

// A word on more listings than the cap is "10 000+" without counting when the kept term counts vouch
// for it; here they cannot, and a search that trusted them would claim 10 000+ for 9 999 matches: the
// other listings that hold the word are drafts, or the counts are older than the change.
on_both!(a_total_past_the_cap_is_claimed_only_when_the_kept_counts_vouch_for_it, |store| {
    use domain::paging::COUNT_CAP;
    use sea_orm::ConnectionTrait;
    let n = COUNT_CAP as usize + 3;
    let mut batch = Vec::new();
    for i in 0..n {
        batch.push(import(listing(&format!("Common Widget {i}"), ListingStatus::Live, None), 0));
        if batch.len() == 1000 || i + 1 == n {
            store.import_listings(&batch, now()).await.unwrap();
            batch.clear();
        }
    }
    let total = || async {
        let r = store.search_listings(&search(Some("widget")), PageRequest::default()).await.unwrap();
        (r.total, r.total_exact)
    };
    let run = |sql: String| async move {
        store.connection().execute_unprepared(&sql).await.unwrap();
    };
    let four = "(SELECT id FROM listings WHERE name LIKE 'Common Widget%' ORDER BY id LIMIT 4)";
    store.refresh_search_terms().await.unwrap();
    assert_eq!(total().await, (COUNT_CAP, false), "10 003 live listings hold the word: 10 000+");
    // Four of them drafts, the counts brought up to date: the word is still on 10 003 listings.
    run(format!("UPDATE listings SET status = 'draft' WHERE id IN {four}")).await;
    store.refresh_search_terms().await.unwrap();
    assert_eq!(total().await, (9_999, true), "the drafts are not live matches");
    // Live again and counted; then four lose the word, the counts not brought up since.
    run("UPDATE listings SET status = 'live' WHERE status = 'draft'".to_owned()).await;
    store.refresh_search_terms().await.unwrap();
    assert_eq!(total().await, (COUNT_CAP, false));
    run(format!("UPDATE listings SET name = 'Plain Gadget', tagline = 'Plain' WHERE id IN {four}")).await;
    assert_eq!(total().await, (9_999, true), "counts older than the change do not vouch");
    store.refresh_search_terms().await.unwrap();
    assert_eq!(total().await, (9_999, true), "and once brought up to date, the count is exact");
});

// A typed word is a prefix: it finds every listing with a term it begins, whatever the kept term
// counts say (PostgreSQL matches the word exactly when they say it is the only such term; SQLite
// spells the completions out from them).
on_both!(a_typed_word_finds_every_term_it_begins_however_old_the_term_counts, |store| {
    use sea_orm::ConnectionTrait;
    let mut batch: Vec<ImportListing> = (0..3)
        .map(|i| {
            let mut l = listing(&format!("Primate {i}"), ListingStatus::Live, None);
            l.profile.tagline = "a lemur".into();
            import(l, 0)
        })
        .collect();
    batch.push(import(listing("Quiet One", ListingStatus::Live, None), 0));
    store.import_listings(&batch, now()).await.unwrap();
    store.refresh_search_terms().await.unwrap();
    let found = |word: &'static str| async move {
        let r = store.search_listings(&search(Some(word)), PageRequest::default()).await.unwrap();
        let mut names: Vec<String> = r.items.into_iter().map(|i| i.name).collect();
        names.sort();
        (r.total, names)
    };
    let primates = vec!["Primate 0".to_owned(), "Primate 1".to_owned(), "Primate 2".to_owned()];
    assert_eq!(found("lemur").await, (3, primates.clone()), "the word itself");
    assert_eq!(found("lemu").await, (3, primates.clone()), "the word being typed");
    // A term the counts do not know yet, then know.
    let sql = "UPDATE listings SET tagline = 'lemurian tales' WHERE name = 'Quiet One'";
    store.connection().execute_unprepared(sql).await.unwrap();
    let mut all = primates.clone();
    all.push("Quiet One".to_owned());
    assert_eq!(found("lemur").await, (4, all.clone()), "a term the word begins, gained since the counts");
    store.refresh_search_terms().await.unwrap();
    assert_eq!(found("lemur").await, (4, all.clone()), "and after the counts");
    assert_eq!(found("lemuria").await.1, vec!["Quiet One".to_owned()], "the longer word finds only it");
});

/// Every index of the schema as (name, definition), by name.
async fn index_list(store: &adapters_storage::SeaOrmStore) -> Vec<(String, String)> {
    use sea_orm::ConnectionTrait;
    let sql = if store.backend() == sea_orm::DbBackend::Postgres {
        "SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname"
    } else {
        "SELECT name, COALESCE(sql, '') AS definition FROM sqlite_master WHERE type = 'index' ORDER BY name"
    };
    let rows = store.connection().query_all_raw(sea_orm::Statement::from_string(store.backend(), sql)).await.unwrap();
    rows.iter().map(|r| (r.try_get("", "name").unwrap(), r.try_get("", "definition").unwrap())).collect()
}

/// The one number `sql` selects as `n`.
pub(crate) async fn count_of(store: &adapters_storage::SeaOrmStore, sql: &str) -> i64 {
    use sea_orm::ConnectionTrait;
    let row =
        store.connection().query_one_raw(sea_orm::Statement::from_string(store.backend(), sql)).await.unwrap().unwrap();
    row.try_get("", "n").unwrap()
}

async fn deferred_count(store: &adapters_storage::SeaOrmStore) -> i64 {
    count_of(store, "SELECT COUNT(*) AS n FROM deferred_indexes").await
}

on_both!(a_bulk_load_builds_every_index_it_put_off_even_after_an_interruption, |store| {
    use sea_orm::ConnectionTrait;
    let before = index_list(store).await;
    let plain = before.iter().filter(|(_, d)| d.starts_with("CREATE INDEX")).count();
    assert!(plain >= 20, "the schema's plain indexes: {before:?}");

    store.begin_bulk_load().await.unwrap();
    let during = index_list(store).await;
    assert!(
        during.iter().all(|(_, d)| !d.starts_with("CREATE INDEX")),
        "only unique indexes and keys stay during a bulk load: {during:?}"
    );
    assert!(during.iter().any(|(n, _)| n == "ix_votes_listing_user"), "the unique vote index guards the load");
    assert_eq!(
        deferred_count(store).await,
        plain as i64 + 1,
        "every dropped index is remembered in the database, and the kept details' rebuild"
    );
    // The load writes and reads meanwhile; the kept details wait for the end.
    let shared: std::sync::Arc<dyn domain::ports::Store> = std::sync::Arc::new(store.clone());
    let cats = seed_categories(&shared).await;
    let dev = cat_id(&cats, "dev-tools");
    let ids =
        store.import_listings(&[import(listing("Bulkwise", ListingStatus::Live, Some(dev)), 3)], now()).await.unwrap();
    let found = store.search_listings(&search(Some("bulkwise")), PageRequest::default()).await.unwrap();
    assert_eq!(found.items.len(), 1);
    let milestone = format!(
        "INSERT INTO milestones (listing_id, date, title, description, url) VALUES ({}, '2025-06-01', 'Founded', 'Begun', '')",
        ids[0]
    );
    store.connection().execute_unprepared(&milestone).await.unwrap();
    let kept = count_of(store, "SELECT COUNT(*) AS n FROM listing_details").await;
    assert_eq!(kept, 0, "no kept row is written while the indexes are off");

    // The process stops here (no end_bulk_load): the next start builds what was put off.
    db::migrate(store.connection()).await.unwrap();
    assert_eq!(index_list(store).await, before, "the same indexes, defined the same way");
    assert_eq!(deferred_count(store).await, 0);
    assert_eq!(
        details::profiles_agree(store).await,
        [0, 0, 1, 0, 0],
        "the milestone written during the load is in its profile"
    );

    // A load that ends normally builds them too, and a second start finds nothing to do.
    store.begin_bulk_load().await.unwrap();
    let two = store
        .import_listings(&[import(listing("Bulkwise Two", ListingStatus::Live, Some(dev)), 1)], now())
        .await
        .unwrap();
    let milestone = milestone.replace(&format!("VALUES ({}", ids[0]), &format!("VALUES ({}", two[0]));
    store.connection().execute_unprepared(&milestone).await.unwrap();
    store.end_bulk_load().await.unwrap();
    assert_eq!(index_list(store).await, before);
    assert_eq!(deferred_count(store).await, 0);
    assert_eq!(details::profiles_agree(store).await, [0, 0, 2, 0, 0], "and so is the one written during this load");
    assert_eq!(details::stale_details(store).await, Vec::<i64>::new());
    db::migrate(store.connection()).await.unwrap();
    assert_eq!(index_list(store).await, before);
});

// Instances that start together after an interrupted load each find its indexes to build: every one is
// built once, and no start fails on an index another built first.
on_both!(instances_starting_together_build_an_interrupted_load_s_indexes_once, |store| {
    let before = index_list(store).await;
    store.begin_bulk_load().await.unwrap();
    assert!(deferred_count(store).await >= 20);
    let (a, b, c) = tokio::join!(
        db::migrate(store.connection()),
        db::migrate(store.connection()),
        db::build_deferred_indexes(store.connection())
    );
    a.unwrap();
    b.unwrap();
    c.unwrap();
    assert_eq!(index_list(store).await, before, "the same indexes, defined the same way");
    assert_eq!(deferred_count(store).await, 0);
});

/// The PostgreSQL tables a bulk load compacts.
const COMPACTED: [&str; 7] = [
    "categories",
    "listing_counts",
    "week_listing_counts",
    "day_listing_counts",
    "week_counts",
    "board_counts",
    "listing_terms_state",
];

/// `(relfilenode, pages)` of a PostgreSQL table: the file changes when the table is rewritten.
async fn pg_table_file(store: &adapters_storage::SeaOrmStore, table: &str) -> (i64, i64) {
    use sea_orm::ConnectionTrait;
    let row = store
        .connection()
        .query_one_raw(sea_orm::Statement::from_string(
            store.backend(),
            format!(
                "SELECT relfilenode::bigint AS file, pg_relation_size('{table}') / current_setting('block_size')::bigint AS pages \
                 FROM pg_class WHERE oid = '{table}'::regclass"
            ),
        ))
        .await
        .unwrap()
        .unwrap();
    (row.try_get("", "file").unwrap(), row.try_get("", "pages").unwrap())
}

on_both!(a_bulk_load_leaves_the_kept_count_tables_compact, |store| {
    let shared: std::sync::Arc<dyn domain::ports::Store> = std::sync::Arc::new(store.clone());
    let cats = seed_categories(&shared).await;
    let dev = cat_id(&cats, "dev-tools");
    if store.backend() == sea_orm::DbBackend::Postgres {
        // Autovacuum would take the old row versions this test counts on finding.
        for table in COMPACTED {
            let sql = format!("ALTER TABLE \"{table}\" SET (autovacuum_enabled = false)");
            sea_orm::ConnectionTrait::execute_unprepared(store.connection(), &sql).await.unwrap();
        }
    }
    store.begin_bulk_load().await.unwrap();
    // Each live listing updates its category's count and the live total: a new row version each.
    for chunk in 0..4 {
        let batch: Vec<ImportListing> = (0..100)
            .map(|i| import(listing(&format!("Compact {chunk} {i}"), ListingStatus::Live, Some(dev)), 1))
            .collect();
        store.import_listings(&batch, now()).await.unwrap();
    }
    let mut loaded = Vec::new();
    if store.backend() == sea_orm::DbBackend::Postgres {
        // As a superuser the import writes each count once per batch; a role that may not turn the
        // row triggers off writes one row version per listing. 400 updates stand for that load.
        let per_row = "DO $$ BEGIN FOR i IN 1..400 LOOP \
                       UPDATE categories SET live_listings = live_listings WHERE slug = 'dev-tools'; END LOOP; END $$";
        sea_orm::ConnectionTrait::execute_unprepared(store.connection(), per_row).await.unwrap();
        for table in COMPACTED {
            loaded.push(pg_table_file(store, table).await);
        }
    }
    store.end_bulk_load().await.unwrap();
    assert_eq!(category_counts(shared.as_ref()).await["dev-tools"], 400);
    if store.backend() == sea_orm::DbBackend::Postgres {
        for (table, (file, pages)) in COMPACTED.into_iter().zip(loaded) {
            if table == "categories" {
                // The others are pruned as they go; one row updated 400 times in one transaction is not.
                assert!(pages > 1, "{table}: the load left old row versions to compact ({pages} pages)");
            }
            let (after_file, mut after) = pg_table_file(store, table).await;
            assert_ne!(after_file, file, "{table}: the end of the load rewrote the table");
            // A rewrite keeps the row versions another transaction of this database could still
            // see, and autovacuum's ANALYZE of the catalogs the migrations filled holds such a
            // snapshot now and then (with many test databases busy, 2 full runs in 5 kept 6 pages).
            // So the same compaction runs again, a few times at most, until nothing holds one.
            let mut again = 0;
            while after > 1 && again < 5 {
                again += 1;
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                db::compact_after_bulk_load(store.connection()).await.unwrap();
                after = pg_table_file(store, table).await.1;
            }
            assert_eq!(after, 1, "{table} holds its few rows in one page after the load, not every old version");
        }
    }
});

// The site's limit on votes from one address looks them up by address and time; the index holds only
// votes with an address (migration 35), and the lookup's condition must still let it be used.
on_both!(the_vote_limit_reads_votes_by_address_from_their_index, |store| {
    use adapters_storage::entity::votes;
    use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryTrait, TransactionTrait};
    let lookup = votes::Entity::find()
        .filter(votes::Column::AddressKey.eq("k1"))
        .filter(votes::Column::CreatedAt.gte(now()))
        .build(store.backend());
    let txn = store.connection().begin().await.unwrap();
    let explain = if store.backend() == sea_orm::DbBackend::Postgres {
        // An empty table is cheaper to scan whole: ask for what an index can do.
        txn.execute_unprepared("SET LOCAL enable_seqscan = off").await.unwrap();
        "EXPLAIN"
    } else {
        // EXPLAIN alone reads no page, so a pooled connection that loaded the schema while the
        // migrations ran would explain against its stale copy (the old index): read the schema first.
        txn.execute_unprepared("SELECT COUNT(*) FROM sqlite_master").await.unwrap();
        "EXPLAIN QUERY PLAN"
    };
    let plan = txn
        .query_all_raw(sea_orm::Statement::from_sql_and_values(
            store.backend(),
            format!("{explain} {}", lookup.sql),
            lookup.values.map(|v| v.0).unwrap_or_default(),
        ))
        .await
        .unwrap();
    let column = if store.backend() == sea_orm::DbBackend::Postgres { "QUERY PLAN" } else { "detail" };
    let lines: Vec<String> = plan.iter().map(|r| r.try_get("", column).unwrap()).collect();
    assert!(lines.iter().any(|l| l.contains("ix_votes_address_known")), "{lines:#?}");
    txn.rollback().await.unwrap();
});
