//! Dependencies point inward: the use cases know no adapter (no database, HTTP, mail, DNS or Redis
//! client, no `adapters-*` crate, not `bootstrap`). Checked on the real dependency graph (`cargo tree`,
//! normal dependencies only: tests may use adapters). The domain's purity is checked beside the other
//! workspace rules, in `crates/test-support/tests/tidy.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

fn normal_dependencies(package: &str) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["tree", "-p", package, "-e", "normal", "--prefix", "none", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect();
    names.sort();
    names.dedup();
    names
}

fn offending<'a>(deps: &'a [String], forbidden: &[&str]) -> Vec<&'a String> {
    deps.iter()
        .filter(|d| {
            forbidden.iter().any(|f| if let Some(p) = f.strip_suffix('*') { d.starts_with(p) } else { *d == f })
        })
        .collect()
}

#[test]
fn the_use_cases_know_no_adapter() {
    let deps = normal_dependencies("operations");
    assert!(deps.iter().any(|d| d == "domain"), "the graph was read: {deps:?}");
    let bad = offending(
        &deps,
        &[
            "adapters-*",
            "bootstrap",
            "sea-orm*",
            "sea-query*",
            "sqlx*",
            "reqwest",
            "hyper",
            "lettre",
            "hickory-*",
            "redis",
            "scraper",
            "actix-*",
            "rmcp",
        ],
    );
    assert!(bad.is_empty(), "operations depends on {bad:?}");
}
