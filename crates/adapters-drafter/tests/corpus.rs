//! The drafting corpus (fixtures/sites, each with an expected.json) read by the real crawler on
//! loopback and drafted by the extractive drafter, held to the targets: at least 90% of stated facts
//! found, nothing wrong, nothing invented, every kept quote verbatim, no request robots.txt disallows.
//! `just bench-drafts` prints the same scores as tables.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod scoring;

use adapters_drafter::ExtractiveDrafter;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extractive_drafter_meets_the_corpus_targets() {
    let categories = scoring::categories();
    let sites = scoring::sites();
    assert!(sites.len() >= 16, "the corpus has {} sites", sites.len());
    let mut scores = Vec::new();
    for site in &sites {
        scores.push(scoring::score_site(site, &ExtractiveDrafter, &categories).await);
    }
    let report = scoring::report("Extractive drafter", &scores);
    let t = scoring::Totals::of(&scores);
    let problems: Vec<String> =
        scores.iter().filter_map(|s| s.problem.clone().map(|p| format!("{}: {p}", s.site))).collect();
    assert!(problems.is_empty(), "{problems:?}\n{report}");
    assert_eq!(t.invented, 0, "invented values\n{report}");
    assert_eq!(t.wrong, 0, "wrong values\n{report}");
    assert_eq!(t.kept_unverbatim, 0, "kept quotes not verbatim\n{report}");
    assert_eq!(t.unverbatim, 0, "the extractive drafter offered quotes that are not on the page\n{report}");
    assert_eq!(t.disallowed, 0, "requests robots.txt disallows\n{report}");
    assert!(t.recall() >= 90.0, "recall {:.1}%\n{report}", t.recall());
}
