//! Workspace hygiene checked by tests: every source file says what it holds, and the domain crate
//! stays pure (no I/O dependency), so a slip fails `cargo test` rather than waiting for review.

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

#[test]
fn the_domain_depends_on_no_io_crate() {
    let manifest = std::fs::read_to_string(workspace().join("crates/domain/Cargo.toml")).expect("domain manifest");
    let deps =
        manifest.split("[dependencies]").nth(1).expect("a [dependencies] table").split("\n[").next().unwrap_or("");
    let names: Vec<&str> = deps
        .lines()
        .filter_map(|l| l.split(['=', '.']).next())
        .map(str::trim)
        .filter(|n| !n.is_empty() && !n.starts_with('#'))
        .collect();
    // Pure crates only: types, errors, dates, ids. Anything that talks to a network, a database or a
    // file system belongs in an adapter.
    let allowed = ["async-trait", "chrono", "thiserror", "uuid"];
    let extra: Vec<&&str> = names.iter().filter(|n| !allowed.contains(n)).collect();
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
