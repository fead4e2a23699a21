//! A listing's kept details (migration 36): the row a profile reads beside the listing must be what
//! its tables say after every kind of change, on both stores, including two transactions changing one
//! listing at once on PostgreSQL, and a bulk load that put them off.

use super::*;
use sea_orm::ConnectionTrait;

/// Kept rows that differ from the view computing them, or whose listing is gone.
pub(crate) async fn stale_details(store: &adapters_storage::SeaOrmStore) -> Vec<i64> {
    let same =
        ["extra_category_ids", "founders_json", "updates_json", "milestones_json", "story_sections", "awards_json"]
            .map(|c| format!("d.{c} IS NOT DISTINCT FROM f.{c}"))
            .join(" AND ");
    let rows = store
        .connection()
        .query_all_raw(sea_orm::Statement::from_string(
            store.backend(),
            format!(
                "SELECT d.listing_id AS id FROM listing_details d LEFT JOIN listing_details_fresh f \
                 ON f.listing_id = d.listing_id WHERE f.listing_id IS NULL OR NOT ({same}) ORDER BY 1"
            ),
        ))
        .await
        .unwrap();
    rows.iter().map(|r| r.try_get("", "id").unwrap()).collect()
}

/// Every listing's one-statement profile holds what its separate reads of the tables hold; returns
/// how many listings have founders, updates, milestones, a story and awards, so a caller can tell
/// the comparison saw them.
pub(crate) async fn profiles_agree<S: domain::ports::Store + ?Sized>(store: &S) -> [usize; 5] {
    let mut seen = [0usize; 5];
    for id in 1..=store.max_listing_id().await.unwrap() {
        let Some(l) = store.get_listing(domain::ids::ListingId::from_db(id)).await.unwrap() else { continue };
        let d = store.listing_details(l.id, true).await.unwrap();
        for (n, has) in seen.iter_mut().zip([
            !d.founders.is_empty(),
            !d.updates.is_empty(),
            !d.milestones.is_empty(),
            d.story.is_some(),
            !d.awards.is_empty(),
        ]) {
            *n += usize::from(has);
        }
        let slug = l.slug.clone();
        assert_eq!(store.listing_with_details(&slug).await.unwrap(), Some((l, d)), "{slug}");
    }
    seen
}

on_both!(kept_details_follow_every_kind_of_change, |store| {
    let shared: std::sync::Arc<dyn domain::ports::Store> = std::sync::Arc::new(store.clone());
    let cats = seed_categories(&shared).await;
    let (dev, mkt) = (cat_id(&cats, "dev-tools"), cat_id(&cats, "marketing"));
    let ids = store
        .import_listings(
            &[
                import(listing("Alpha", ListingStatus::Live, Some(dev)), 0),
                import(listing("Beta", ListingStatus::Live, Some(dev)), 0),
                import(listing("Gamma", ListingStatus::Live, Some(mkt)), 0),
            ],
            now(),
        )
        .await
        .unwrap();
    let (a, b, c) = (ids[0], ids[1], ids[2]);
    let conn = store.connection();
    let at = "'2026-01-02 10:00:00+00:00'";
    let founder = |id: i64, name: &str| {
        format!(
            "INSERT INTO founders (id, slug, name, headline, bio, country, avatar_url, socials, user_id, created_at) \
             VALUES ({id}, '{}', '{name}', 'Maker', 'Builds things', NULL, '', '{{}}', NULL, {at})",
            name.to_lowercase()
        )
    };
    // Each as an operator's SQL or a use case writes it; the checks run after every statement.
    let steps = [
        founder(9001, "Ada"),
        founder(9002, "Grace"),
        // One statement, two listings.
        format!(
            "INSERT INTO listing_founders (listing_id, founder_id, title, position) VALUES ({a}, 9001, 'CEO', 0), ({b}, 9001, 'CTO', 0)"
        ),
        format!("INSERT INTO listing_founders (listing_id, founder_id, title, position) VALUES ({a}, 9002, 'CTO', 1)"),
        // A founder's edit reaches every listing they found.
        "UPDATE founders SET name = 'Ada L.', headline = 'Founder' WHERE id = 9001".to_owned(),
        format!("UPDATE listing_founders SET position = 2 WHERE listing_id = {a} AND founder_id = 9001"),
        format!(
            "INSERT INTO listing_updates (listing_id, title, body, posted_at) VALUES ({a}, 'Launched', 'We are live', {at}), \
             ({b}, 'Beta opens', 'Come in', {at}), ({a}, 'Later', 'More', '2026-02-01 09:30:00+00:00')"
        ),
        format!("UPDATE listing_updates SET title = 'Launched, edited' WHERE listing_id = {a} AND title = 'Launched'"),
        format!(
            "INSERT INTO milestones (listing_id, date, title, description, url) VALUES ({a}, '2025-06-01', 'Founded', \
             'We started', 'https://alpha.example/'), ({a}, '2025-09-01', 'First customer', 'A shop', '')"
        ),
        // A row moved from one listing to another changes both.
        format!("UPDATE milestones SET listing_id = {c} WHERE listing_id = {a} AND title = 'Founded'"),
        format!(
            "INSERT INTO stories (listing_id, sections, updated_at) VALUES ({a}, '[[\"problem\",\"Spreadsheets\"]]', {at})"
        ),
        format!(
            "UPDATE stories SET sections = '[[\"problem\",\"Spreadsheets\"],[\"journey\",\"Long\"]]' WHERE listing_id = {a}"
        ),
        format!(
            "INSERT INTO awards (week_start, rank, listing_id, votes) VALUES ('2026-01-05', 1, {a}, 12), ('2026-01-05', 2, {b}, 7)"
        ),
        format!("INSERT INTO listing_categories (listing_id, category_id, is_primary) VALUES ({a}, {mkt}, FALSE)"),
        format!("DELETE FROM listing_categories WHERE listing_id = {a} AND category_id = {mkt}"),
        format!("INSERT INTO listing_categories (listing_id, category_id, is_primary) VALUES ({b}, {mkt}, FALSE)"),
        format!("DELETE FROM listing_updates WHERE listing_id = {a} AND title = 'Later'"),
        format!("DELETE FROM milestones WHERE listing_id = {c}"),
        format!("DELETE FROM stories WHERE listing_id = {a}"),
        format!("DELETE FROM awards WHERE listing_id = {b}"),
        // A founder removed takes their links, and so their place on each listing.
        "DELETE FROM founders WHERE id = 9002".to_owned(),
        // A listing removed takes its kept row.
        format!("DELETE FROM listings WHERE id = {b}"),
    ];
    for sql in &steps {
        conn.execute_unprepared(sql).await.unwrap();
        assert_eq!(stale_details(store).await, Vec::<i64>::new(), "after {sql}");
        profiles_agree(store).await;
    }
    assert_eq!(
        profiles_agree(store).await,
        [1, 1, 1, 0, 1],
        "Alpha keeps a founder, an update, a milestone and an award"
    );
    let kept = count_of(store, &format!("SELECT COUNT(*) AS n FROM listing_details WHERE listing_id = {b}")).await;
    assert_eq!(kept, 0, "the removed listing's row went with it");
    let alpha = store.listing_with_details(&slug("alpha")).await.unwrap().unwrap().1;
    assert_eq!(
        alpha.founders.iter().map(|(f, t)| (f.name.as_str(), t.as_str())).collect::<Vec<_>>(),
        [("Ada L.", "CEO")]
    );
    assert_eq!(alpha.updates.iter().map(|u| u.title.as_str()).collect::<Vec<_>>(), ["Launched, edited"]);
    assert_eq!(alpha.milestones.len(), 1);
    assert_eq!(alpha.awards.len(), 1);
});

/// Two transactions adding to one listing's details at once: the second waits for the first's lock
/// and must then read the first's change, not write back the details as they were when it began.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_changes_to_one_listing_both_reach_its_kept_details_on_postgres() {
    use sea_orm::TransactionTrait;
    let Some(db) = harness::postgres().await else { return };
    let store = &db.store;
    let ids = store.import_listings(&[import(listing("Duo", ListingStatus::Live, None), 0)], now()).await.unwrap();
    let id = ids[0];
    let conn = store.connection();
    let first = conn.begin().await.unwrap();
    first
        .execute_unprepared(&format!(
            "INSERT INTO milestones (listing_id, date, title, description, url) VALUES ({id}, '2025-06-01', 'Founded', 'Begun', '')"
        ))
        .await
        .unwrap();
    let second = {
        let conn = conn.clone();
        tokio::spawn(async move {
            let txn = conn.begin().await.unwrap();
            txn.execute_unprepared(&format!(
                "INSERT INTO listing_updates (listing_id, title, body, posted_at) \
                 VALUES ({id}, 'News', 'Body', '2026-01-02 10:00:00+00:00')"
            ))
            .await
            .unwrap();
            txn.commit().await.unwrap();
        })
    };
    // The second transaction's statement has begun and waits for the first's lock on the row.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!second.is_finished(), "the second change waits for the first");
    first.commit().await.unwrap();
    second.await.unwrap();
    assert_eq!(stale_details(store).await, Vec::<i64>::new());
    let (_, d) = store.listing_with_details(&slug("duo")).await.unwrap().unwrap();
    assert_eq!((d.milestones.len(), d.updates.len()), (1, 1), "both changes kept: {d:?}");
}

// Many profile reads at once (on PostgreSQL they share statements, `crate::profiles`): each answer is
// its own listing's, as a read alone gives it — the same slug asked several times at once, and slugs
// that name no listing, among them.
on_every_store!(concurrent_profile_reads_each_get_their_own_listing, |store| {
    let cats = seed_categories(store).await;
    let dev = cat_id(&cats, "dev-tools");
    let new: Vec<ImportListing> =
        (0..24).map(|i| import(listing(&format!("Crowd {i}"), ListingStatus::Live, Some(dev)), i % 4)).collect();
    store.import_listings(&new, now()).await.unwrap();
    let mut asked: Vec<Slug> = (0..24).map(|i| slug(&format!("crowd-{i}"))).collect();
    asked.extend((0..24).step_by(3).map(|i| slug(&format!("crowd-{i}"))));
    asked.extend((0..6).map(|i| slug(&format!("nobody-{i}"))));
    let mut alone = Vec::new();
    for s in &asked {
        alone.push(store.listing_with_details(s).await.unwrap());
    }
    assert_eq!(alone.iter().filter(|a| a.is_some()).count(), 32, "24 listings, 8 of them asked twice");
    for round in 0..3 {
        let together = futures::future::join_all(asked.iter().map(|s| {
            let store = store.clone();
            let s = s.clone();
            tokio::spawn(async move { store.listing_with_details(&s).await.unwrap() })
        }))
        .await;
        for ((s, one), many) in asked.iter().zip(&alone).zip(together) {
            assert_eq!(&many.unwrap(), one, "{s}, round {round}");
        }
    }
});
