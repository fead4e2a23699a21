//! The drafting corpus (fixtures/sites, each with an expected.json) read by the real crawler on
//! loopback and drafted by the extractive drafter, held to the targets: at least 90% of stated facts
//! found, nothing wrong, nothing invented, every kept quote verbatim, no request robots.txt disallows.
//! `just bench-drafts` prints the same scores as tables.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod scoring;

use adapters_drafter::ExtractiveDrafter;

/// One test per site, so a regression names the shape it broke: every stated fact found, nothing
/// wrong, invented, unquoted or disallowed.
macro_rules! pinned {
    ($($test:ident => $site:literal),* $(,)?) => {$(
        #[tokio::test]
        async fn $test() {
            let s = scoring::score_site($site, &ExtractiveDrafter, &scoring::categories()).await;
            let report = scoring::report($site, std::slice::from_ref(&s));
            assert!(s.problem.is_none(), "{report}");
            assert!(s.wrong.is_empty() && s.invented.is_empty(), "{report}");
            assert!(s.unverbatim.is_empty() && s.kept_unverbatim.is_empty() && s.disallowed.is_empty(), "{report}");
            assert_eq!(s.found, s.facts, "{report}");
        }
    )*};
}

pinned! {
    json_ld_faq_page_team_page_and_hidden_injection => "acme-rockets",
    robots_txt_forbidding_everything_refuses_the_read => "blocked",
    a_fact_on_a_robots_forbidden_page_stays_blank => "crewroster",
    quote_only_pricing_h_card_and_loom_demo => "deskpilot",
    fake_facts_a_visitor_never_sees_are_never_drafted => "glowcrm",
    tagline_class_title_suffix_faq_freemium_and_founder_bios => "inkwell",
    facts_in_prose_and_a_visible_injection_page => "ledgerly",
    holdout_saas_template_with_split_prices_and_figure_captions => "lumio",
    holdout_site_builder_divs_text_email_and_timeline_year => "billow",
    docs_heavy_tool_with_usage_based_pricing_table => "mailgrid",
    a_single_page_app_stated_only_in_json_ld => "orbitcal",
    open_source_with_a_paid_cloud_plan_and_docs_faq => "pgpulse",
    company_facts_on_a_page_linked_only_from_the_footer => "pixelmint",
    a_coming_soon_page_leaves_everything_else_blank => "quietnotes",
    private_beta_without_prices_and_founder_articles => "quillai",
    redirects_free_trial_subtitle_and_team_page => "shipyard",
    a_multilingual_site_is_drafted_in_the_language_given => "sprachwerk",
    pricing_only_in_an_faq_and_a_copyright_range => "tallyho",
}

#[test]
fn every_site_of_the_corpus_is_pinned() {
    let source = include_str!("corpus.rs");
    for site in scoring::sites() {
        assert!(source.contains(&format!("=> \"{site}\"")), "fixtures/sites/{site} has no pinned test");
    }
}

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
