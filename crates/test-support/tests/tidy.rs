//! Workspace hygiene checked by tests: every source file says what it holds, and each crate's
//! invariant in docs/ARCHITECTURE.md that a machine can check is checked here (the domain stays pure,
//! dependencies point inward, one crate per technology), so a slip fails `cargo test` rather than
//! waiting for review. `crates/operations/tests/tidy.rs` checks the use cases' whole dependency graph.

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let p = entry.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "target" && n != "node_modules") {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_source_file_opens_with_a_module_doc() {
    let root = workspace();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("migration"), &mut files);
    assert!(files.len() > 20, "found the sources");
    let missing: Vec<String> = files
        .iter()
        .filter(|f| !std::fs::read_to_string(f).unwrap_or_default().starts_with("//!"))
        .map(|f| f.strip_prefix(&root).unwrap_or(f).display().to_string())
        .collect();
    assert!(missing.is_empty(), "these files lack a `//!` first line saying what lives there: {missing:?}");
}

/// The names in a crate's `[dependencies]` table (normal dependencies: what ships, not what tests use).
fn dependencies_of(krate: &str) -> Vec<String> {
    let dir = if krate == "migration" { workspace().join("migration") } else { workspace().join("crates").join(krate) };
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("a crate manifest");
    let deps = manifest.split("\n[dependencies]").nth(1).unwrap_or("").split("\n[").next().unwrap_or("");
    deps.lines()
        .filter_map(|l| l.split(['=', '.']).next())
        .map(str::trim)
        .filter(|n| !n.is_empty() && !n.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// Every crate of the workspace.
fn crates() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(workspace().join("crates"))
        .expect("the crates directory")
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.push("migration".into());
    names.sort();
    assert!(names.len() > 10, "found the crates: {names:?}");
    names
}

/// The crates whose `[dependencies]` name `dependency` (a trailing `*` matches a prefix).
fn dependents_of(dependency: &str) -> Vec<String> {
    let matches = |d: &str| match dependency.strip_suffix('*') {
        Some(p) => d.starts_with(p),
        None => d == dependency,
    };
    crates().into_iter().filter(|c| dependencies_of(c).iter().any(|d| matches(d))).collect()
}

#[test]
fn the_domain_depends_on_no_io_crate() {
    let names = dependencies_of("domain");
    // Pure crates only: types, errors, dates, ids. Anything that talks to a network, a database or a
    // file system belongs in an adapter.
    let allowed = ["async-trait", "chrono", "thiserror", "uuid"];
    let extra: Vec<&String> = names.iter().filter(|n| !allowed.contains(&n.as_str())).collect();
    assert!(
        extra.is_empty(),
        "crates/domain gained dependencies {extra:?}; keep I/O in adapters (or extend the allow-list with a reason)"
    );
}

#[test]
fn the_api_crates_call_use_cases_not_repositories() {
    // The API crates answer HTTP and MCP by calling `operations`; reaching a repository through
    // `app.store` from there would put a business rule (who may accept an invite, whose order a number
    // is) where no other adapter shares it.
    let root = workspace();
    let mut files = Vec::new();
    for krate in ["api-rest", "api-mcp", "api-http"] {
        rust_files(&root.join("crates").join(krate).join("src"), &mut files);
    }
    assert!(files.len() > 5, "found the API sources");
    let offenders: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).expect("a source file");
            text.lines()
                .enumerate()
                .filter(|(_, l)| !l.trim_start().starts_with("//") && l.contains(".store."))
                .map(|(i, l)| format!("{}:{}: {}", f.display(), i + 1, l.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(offenders.is_empty(), "API code calls a repository directly:\n{}", offenders.join("\n"));
}

#[test]
fn pages_are_templates_over_typed_operations() {
    // Every HTML, Atom and sitemap page of api-rest is an askama template (escaping on) over a view
    // built from an operation's typed output: no hand-made escaping, and no operation called by its
    // string name through the registry (a renamed output field would blank a page silently). The
    // REST routes are the one place that calls operations by descriptor, generated from the registry.
    let root = workspace();
    let mut files = Vec::new();
    rust_files(&root.join("crates/api-rest/src"), &mut files);
    assert!(files.len() > 10, "found the api-rest sources");
    let offenders: Vec<String> = files
        .iter()
        .filter(|f| !f.ends_with("rest.rs"))
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).expect("a source file");
            text.lines()
                .enumerate()
                .filter(|(_, l)| {
                    !l.trim_start().starts_with("//")
                        && (l.contains("escape(") || l.contains("registry().iter()") || l.contains(".call(state.ctx"))
                })
                .map(|(i, l)| format!("{}:{}: {}", f.display(), i + 1, l.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(offenders.is_empty(), "a page escapes by hand or calls an operation by name:\n{}", offenders.join("\n"));
    let templates = root.join("crates/api-rest/templates");
    assert!(templates.join("layout.html").is_file() && templates.join("site/listing.html").is_file());
}

#[test]
fn adapters_point_inward() {
    // An adapter implements ports of the domain; it never reaches up to the use cases, the composition
    // root or an API crate. (The drafter reads pages with the fetcher's HTML reader: one adapter on
    // another, still inward.)
    for adapter in crates().into_iter().filter(|c| c.starts_with("adapters-")) {
        let deps = dependencies_of(&adapter);
        assert!(deps.iter().any(|d| d == "domain"), "{adapter} implements domain ports: {deps:?}");
        let upward: Vec<&String> = deps
            .iter()
            .filter(|d| ["operations", "bootstrap", "demo-data"].contains(&d.as_str()) || d.starts_with("api-"))
            .collect();
        assert!(upward.is_empty(), "{adapter} depends on {upward:?}");
    }
}

#[test]
fn only_bootstrap_chooses_adapters() {
    let users: Vec<String> = dependents_of("adapters-*").into_iter().filter(|c| !c.starts_with("adapters-")).collect();
    assert_eq!(users, ["bootstrap"], "crates other than bootstrap that name an adapter");
}

#[test]
fn one_crate_per_technology() {
    // SQL and the table layout: the sea-orm store and the migrations (test-support makes test databases).
    assert_eq!(dependents_of("sea-orm*"), ["adapters-storage", "migration", "test-support"]);
    // MCP: only api-mcp.
    assert_eq!(dependents_of("rmcp*"), ["api-mcp"]);
    // HTTP serving: the API crates only.
    assert_eq!(dependents_of("actix-*"), ["api-http", "api-mcp", "api-rest"]);
    // Outbound mail, DNS and Redis: their adapters.
    assert_eq!(dependents_of("lettre"), ["adapters-mail"]);
    assert_eq!(dependents_of("hickory-resolver"), ["adapters-dns"]);
    assert_eq!(dependents_of("redis"), ["adapters-ratelimit"]);
    // Key material and password hashing: adapters-auth.
    assert_eq!(dependents_of("argon2"), ["adapters-auth"]);
    // SQLite's own API (the inline readers, the ranking function): the store and fts5-rank.
    assert_eq!(dependents_of("rusqlite"), ["adapters-storage", "fts5-rank"]);
    // PostgreSQL's own client (the read pipe, pipelined where sqlx is not): the store alone.
    assert_eq!(dependents_of("tokio-postgres"), ["adapters-storage"]);
}

#[test]
fn unsafe_code_lives_in_one_crate() {
    // The workspace forbids `unsafe`; only fts5-rank (SQLite's C API) leaves the workspace's lints,
    // and it still denies an unsafe block without its SAFETY comment.
    let root = workspace();
    for krate in crates() {
        let dir = if krate == "migration" { root.join("migration") } else { root.join("crates").join(&krate) };
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("a manifest");
        let inherits = manifest.contains("[lints]\nworkspace = true");
        if krate == "fts5-rank" {
            assert!(!inherits && manifest.contains("undocumented_unsafe_blocks = \"deny\""), "{krate}: {manifest}");
        } else {
            assert!(inherits, "{krate} does not take the workspace's lints (unsafe_code = forbid)");
        }
    }
    let workspace_manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("the workspace manifest");
    assert!(workspace_manifest.contains("unsafe_code = \"forbid\""));
}

#[test]
fn demo_data_writes_only_through_ports() {
    let deps = dependencies_of("demo-data");
    // futures-util: the combinators a bulk load keeps its batches in flight with (no I/O of its own).
    let allowed = ["domain", "chrono", "futures-util", "serde", "serde_json", "thiserror"];
    let extra: Vec<&String> = deps.iter().filter(|d| !allowed.contains(&d.as_str())).collect();
    assert!(extra.is_empty(), "demo-data gained {extra:?}: it knows the ports, not a storage technology");
}

#[test]
fn test_support_is_for_tests_only() {
    assert!(dependents_of("test-support").is_empty(), "test-support is a dev-dependency, never shipped");
}

#[test]
fn the_api_crates_do_not_choose_error_statuses_elsewhere() {
    // Domain and use-case errors become HTTP statuses in one place: api-http's error module.
    let root = workspace();
    let mut files = Vec::new();
    for krate in ["api-rest", "api-mcp", "operations", "bootstrap"] {
        rust_files(&root.join("crates").join(krate).join("src"), &mut files);
    }
    let offenders: Vec<String> = files
        .iter()
        .filter(|f| std::fs::read_to_string(f).unwrap_or_default().contains("ResponseError for "))
        .map(|f| f.display().to_string())
        .collect();
    assert!(offenders.is_empty(), "error-to-status mapping outside api-http: {offenders:?}");
}

#[test]
fn the_codemap_names_every_crate_and_only_paths_that_exist() {
    let root = workspace();
    let map = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).expect("docs/ARCHITECTURE.md");
    for krate in crates() {
        assert!(map.contains(&format!("| `{krate}` |")), "docs/ARCHITECTURE.md's code map has no row for {krate}");
    }
    for doc in ["docs/ARCHITECTURE.md", "docs/INTERNALS.md"] {
        let text = std::fs::read_to_string(root.join(doc)).expect("a doc");
        let missing: Vec<&str> = text
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|p| {
                (p.starts_with("crates/") || p.starts_with("fixtures/") || p.starts_with("migration/"))
                    && !p.contains(['*', '<', ' ', '…'])
            })
            .filter(|p| !root.join(p.trim_end_matches('/')).exists())
            .collect();
        assert!(missing.is_empty(), "{doc} names paths that do not exist: {missing:?}");
    }
}
