//! Storage benchmark: loads N generated listings (LAUNCHDIR_BENCH_LISTINGS, default 20 000) into a fresh
//! SQLite file and, when reachable, a fresh PostgreSQL database, then measures the reads the public API
//! makes. Prints the import rate and p50/p99 per read, each as a ratio to a trivial round trip (`ping`)
//! measured in the same run, then a vote and taking it back (the write a person's click makes). Each
//! loop stops after 2 000 calls or 3 s, whichever comes first.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use adapters_storage::{SeaOrmStore, db};
use chrono::Utc;
use domain::engagement::Vote;
use domain::listing::{ListingSearch, SearchSort, SearchText};
use domain::paging::PageRequest;
use domain::ports::{CategoryRepository, ListingRepository, NewUser, OwnListingRepository, UserRepository};
use domain::slug::Slug;
use domain::user::Email;
use sea_orm::{ConnectionTrait, Statement};
use std::future::Future;
use std::time::{Duration, Instant};

/// Calls `f` until 2 000 calls or 3 s; every call must succeed. Returns (p50, p99, calls).
async fn measure<F, Fut, T, E>(mut f: F) -> (Duration, Duration, usize)
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: std::fmt::Debug,
{
    let mut samples = Vec::new();
    let started = Instant::now();
    while samples.len() < 2000 && started.elapsed() < Duration::from_secs(3) {
        let t = Instant::now();
        f(samples.len()).await.expect("a benchmarked read failed");
        samples.push(t.elapsed());
    }
    samples.sort();
    let pick = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
    (pick(0.5), pick(0.99), samples.len())
}

fn search(q: Option<&str>, sort: SearchSort) -> ListingSearch {
    ListingSearch { q: q.map(|q| SearchText::parse(q).unwrap()), sort, ..Default::default() }
}

/// The rows of a SQL statement the bench picks its keys with.
async fn query(store: &SeaOrmStore, sql: &str) -> Vec<sea_orm::QueryResult> {
    store.connection().query_all_raw(Statement::from_string(store.backend(), sql)).await.unwrap()
}

/// A verified account for the bench's votes.
async fn account(store: &SeaOrmStore, email: &str) -> domain::ids::UserId {
    let new = NewUser {
        email: Email::parse(email).unwrap(),
        password_hash: "$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHQ$aGFzaA".into(),
        display_name: "Bench".into(),
        is_admin: false,
        verified: true,
    };
    store.create_user(new, Utc::now()).await.unwrap().id
}

/// A vote and taking it back: the write a person's two clicks make. With `address`, as the site casts
/// it: the store also counts that address's votes today (the per-address cap) inside the vote.
async fn vote_and_take_back(
    store: &SeaOrmStore,
    id: domain::ids::ListingId,
    voter: domain::ids::UserId,
    address: Option<&str>,
) -> Result<(), domain::ports::RepoError> {
    let vote = Vote { address_key: address.map(str::to_owned), ..Vote::plain(id, voter, Utc::now()) };
    let cast = store.cast_vote(&vote).await?.counted();
    let taken = store.uncast_vote(id, voter).await?;
    assert!(cast && taken, "the bench voter's vote is cast and taken back");
    Ok(())
}

async fn run(name: &str, url: &str, n: usize) {
    let conn = db::connect(url).await.unwrap();
    db::migrate(&conn).await.unwrap();
    let store = SeaOrmStore::new(conn);
    demo_data::seed_reference(&store).await.unwrap();
    let cfg = demo_data::generate::DemoConfig { listings: n, seed: 7, now: Utc::now() };
    let t = Instant::now();
    let report = demo_data::load_demo(&store, cfg, false).await.unwrap();
    let load = t.elapsed();
    println!(
        "\n{name}: imported {} listings ({} votes) in {:.1} s = {:.0} listings/s",
        report.listings,
        report.votes,
        load.as_secs_f64(),
        report.listings as f64 / load.as_secs_f64()
    );
    let rows = query(&store, "SELECT slug FROM listings WHERE status = 'live' ORDER BY id").await;
    let slugs: Vec<Slug> = rows.iter().map(|r| Slug::from_db(r.try_get::<String>("", "slug").unwrap())).collect();
    let common =
        store.search_listings(&search(Some("workflow"), SearchSort::Relevance), PageRequest::default()).await.unwrap();
    let rare_word = slugs[slugs.len() / 2].as_str().split('-').next().unwrap().to_owned();
    let rare =
        store.search_listings(&search(Some(&rare_word), SearchSort::Relevance), PageRequest::default()).await.unwrap();
    println!(
        "{name}: {} live; common term 'workflow' matches {} ({:.0} %), rare term '{rare_word}' matches {}",
        slugs.len(),
        common.total,
        100.0 * common.total as f64 / slugs.len().max(1) as f64,
        rare.total
    );

    let (base50, base99, _) = measure(|_| db::ping(store.connection())).await;
    println!("{:<34} {:>9} {:>9} {:>7}", "read", "p50", "p99", "p50/ping");
    let line = |what: &str, (p50, p99, calls): (Duration, Duration, usize)| {
        println!(
            "{what:<34} {:>7.0}µs {:>7.0}µs {:>7.1}×   ({calls} calls)",
            p50.as_secs_f64() * 1e6,
            p99.as_secs_f64() * 1e6,
            p50.as_secs_f64() / base50.as_secs_f64()
        )
    };
    line("ping (baseline)", (base50, base99, 0));
    line("get_listing_by_slug", measure(|i| store.get_listing_by_slug(&slugs[(i * 7919) % slugs.len()])).await);
    let ids: Vec<domain::ids::ListingId> = {
        let mut v = Vec::new();
        for s in slugs.iter().take(500) {
            v.push(store.get_listing_by_slug(s).await.unwrap().unwrap().id);
        }
        v
    };
    line("listing_details (free sections)", measure(|i| store.listing_details(ids[i % ids.len()], false)).await);
    line("all_categories", measure(|_| store.all_categories()).await);
    let common_q = search(Some("workflow"), SearchSort::Relevance);
    line("search common term, relevance", measure(|_| store.search_listings(&common_q, PageRequest::default())).await);
    let rare_q = search(Some(&rare_word), SearchSort::Relevance);
    line("search rare term, relevance", measure(|_| store.search_listings(&rare_q, PageRequest::default())).await);
    let trending = search(None, SearchSort::Trending);
    line("search no q, trending", measure(|_| store.search_listings(&trending, PageRequest::default())).await);
    line("list_categories (with counts)", measure(|_| store.list_categories()).await);

    // Writes: a vote and taking it back, on the most-voted live listing and on one with a median count
    // (each pair one call).
    let voter = account(&store, "bench-voter@people.example").await;
    let rows =
        query(&store, "SELECT id, votes_count FROM listings WHERE status = 'live' ORDER BY votes_count DESC, id").await;
    let by_votes: Vec<(i64, i64)> = rows
        .iter()
        .map(|r| (r.try_get::<i64>("", "id").unwrap(), r.try_get::<i64>("", "votes_count").unwrap()))
        .collect();
    for (label, (id, votes)) in [("most-voted", by_votes[0]), ("median", by_votes[by_votes.len() / 2])] {
        let id = domain::ids::ListingId::from_db(id);
        let pair = measure(|_| vote_and_take_back(&store, id, voter, None)).await;
        line(&format!("vote + unvote, {label} ({votes} votes)"), pair);
        let pair = measure(|_| vote_and_take_back(&store, id, voter, Some("bench-address"))).await;
        line(&format!("vote + unvote from an address, {label}"), pair);
    }
    // LAUNCHDIR_BENCH_CROWD=N: N more votes for the median listing (each its own account), then the
    // same pair: taking a vote back subtracts it against the listing's peak (it counted the listing's
    // votes afresh until 2026-11-27, so its cost grew with them).
    let crowd: usize = std::env::var("LAUNCHDIR_BENCH_CROWD").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    if crowd > 0 {
        let (id, before) = by_votes[by_votes.len() / 2];
        let id = domain::ids::ListingId::from_db(id);
        let t = Instant::now();
        for k in 0..crowd {
            let u = account(&store, &format!("crowd{k}@people.example")).await;
            let at = Utc::now() - chrono::Duration::minutes(k as i64);
            assert!(store.cast_vote(&Vote::plain(id, u, at)).await.unwrap().counted());
        }
        println!("{name}: {crowd} more votes cast in {:.1} s", t.elapsed().as_secs_f64());
        let pair = measure(|_| vote_and_take_back(&store, id, voter, None)).await;
        line(&format!("vote + unvote, crowded ({} votes)", before + crowd as i64), pair);
    }
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::var("LAUNCHDIR_BENCH_LISTINGS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    println!("storage benchmark, {n} generated listings, sequential calls on one task");
    let sqlite = test_support::sqlite();
    run("SQLite", &sqlite.url, n).await;
    match test_support::postgres().await {
        Some(pg) => run("PostgreSQL", &pg.url, n).await,
        None => println!("\nPostgreSQL: unreachable, skipped"),
    }
}
