//! `just bench-drafts`: the drafting corpus (fixtures/sites) scored and timed. Each site is served on
//! loopback, read by the real crawler and drafted; the tables say, per site and per field, how many
//! stated facts were found, and count wrong values, invented values, quotes that are not verbatim on a
//! fetched page and requests robots.txt disallows. Then the time to read and draft each multi-page
//! site, repeated (`LAUNCHDIR_BENCH_ROUNDS`, default 20), as p50 and p95. A measurement, not a test:
//! `tests/corpus.rs` asserts the targets.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "../tests/scoring/mod.rs"]
mod scoring;

use adapters_drafter::ExtractiveDrafter;
use std::time::Duration;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let categories = scoring::categories();
    let mut scores = Vec::new();
    for site in scoring::sites() {
        scores.push(scoring::score_site(&site, &ExtractiveDrafter, &categories).await);
    }
    println!("{}", scoring::report("Extractive drafter", &scores));

    let mut llm_scores = Vec::new();
    for site in scoring::recorded_sites() {
        let (_stand_in, llm) = scoring::recorded_llm(&site).await;
        llm_scores.push(scoring::score_site(&site, &llm, &categories).await);
    }
    println!(
        "{}",
        scoring::report("LLM drafter on recorded answers (an OpenAI-compatible stand-in replays them)", &llm_scores)
    );

    let rounds: usize = std::env::var("LAUNCHDIR_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(20);
    println!("### Read + draft time on loopback, {rounds} rounds per site\n");
    println!("| site | pages | p50 | p95 | max |\n|---|---:|---:|---:|---:|");
    let mut all: Vec<Duration> = Vec::new();
    for site in scores.iter().filter(|s| s.pages >= 3) {
        let mut times: Vec<Duration> = Vec::new();
        for _ in 0..rounds {
            times.push(scoring::score_site(&site.site, &ExtractiveDrafter, &categories).await.elapsed);
        }
        times.sort();
        all.extend(&times);
        let at = |q: f64| times[((times.len() as f64 * q).ceil() as usize).clamp(1, times.len()) - 1];
        println!(
            "| {} | {} | {:.1} ms | {:.1} ms | {:.1} ms |",
            site.site,
            site.pages,
            at(0.5).as_secs_f64() * 1000.0,
            at(0.95).as_secs_f64() * 1000.0,
            times[times.len() - 1].as_secs_f64() * 1000.0
        );
    }
    all.sort();
    let at = |q: f64| all[((all.len() as f64 * q).ceil() as usize).clamp(1, all.len()) - 1];
    println!(
        "| **all** | | **{:.1} ms** | **{:.1} ms** | **{:.1} ms** |",
        at(0.5).as_secs_f64() * 1000.0,
        at(0.95).as_secs_f64() * 1000.0,
        all[all.len() - 1].as_secs_f64() * 1000.0
    );
}
