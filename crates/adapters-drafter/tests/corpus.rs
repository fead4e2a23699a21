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

/// The LLM drafter on the sites with a recorded model answer (replayed by an OpenAI-compatible stand-in),
/// answers that invent facts, obey hidden text and quote pages never fetched: every such value is
/// dropped, what the site states is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_llm_drafter_keeps_only_what_the_pages_say() {
    let categories = scoring::categories();
    let sites = scoring::recorded_sites();
    assert!(sites.len() >= 4, "recorded answers: {sites:?}");
    let mut scores = Vec::new();
    for site in &sites {
        let (_stand_in, llm) = scoring::recorded_llm(site).await;
        scores.push(scoring::score_site(site, &llm, &categories).await);
    }
    let report = scoring::report("LLM drafter, recorded answers", &scores);
    let t = scoring::Totals::of(&scores);
    let problems: Vec<String> =
        scores.iter().filter_map(|s| s.problem.clone().map(|p| format!("{}: {p}", s.site))).collect();
    assert!(problems.is_empty(), "{problems:?}\n{report}");
    assert!(t.unverbatim >= 5, "the recorded answers quote what no fetched page says\n{report}");
    assert_eq!(t.invented, 0, "an invented value was kept\n{report}");
    assert_eq!(t.wrong, 0, "a wrong value was kept\n{report}");
    assert_eq!(t.kept_unverbatim, 0, "a kept quote is not verbatim\n{report}");
    assert_eq!(t.disallowed, 0, "{report}");
    assert!(t.recall() >= 80.0, "recall {:.1}%\n{report}", t.recall());
}
