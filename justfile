# launchdir developer commands. CI runs `bash .ci/run`, which does `check` with plain cargo.

default: check

# Format check, clippy -D warnings, the domain purity guard and the tests.
check: fmt clippy purity test

fmt:
    cargo fmt --all -- --check

clippy:
    cargo clippy --workspace --all-targets -- -D warnings

# crates/domain must not depend on an I/O crate.
purity:
    @! cargo tree -p domain -e normal --prefix none | grep -E '^(sea-orm|sqlx|actix-web|actix-http|reqwest|rmcp|hyper|spider|lettre|hickory-resolver|tokio) '
    @echo "crates/domain: no I/O crate"

test:
    cargo test --workspace

# The release binaries (target/release/launchdir-api, launchdir-mcp): the same build the README's
# command and the benchmarks use (`.ci/one-build` checks that they share it).
build:
    cargo build --release --bin launchdir-api --bin launchdir-mcp

# The service on SQLite with demo data.
run:
    cargo run --release --bin launchdir-api -- serve --demo-data

# Benchmarks that print their figures: storage reads on SQLite and PostgreSQL
# (LAUNCHDIR_BENCH_LISTINGS, default 20000), then the HTTP API at 100 000 listings with wrk.
bench: bench-storage bench-http bench-drafts bench-draft-latency

bench-storage:
    cargo bench -p adapters-storage --bench directory

bench-http listings="100000" seconds="10":
    bench/http.sh {{listings}} {{seconds}}

# PostgreSQL alone running get_listing's own statement (pgbench): the ceiling for that read on this machine.
bench-pg-ceiling listings="100000" seconds="8":
    bench/pg-ceiling.sh {{listings}} {{seconds}}

# PostgreSQL alone running a page of trending, of the weekly board and the category counts, 16 to a
# pipeline and one at a time, beside the server's /healthz in the same minute: the ceiling for those
# reads' ratio on this machine.
bench-pg-boards listings="100000" seconds="6" rounds="2":
    bench/pg-boards.sh {{listings}} {{seconds}} {{rounds}}

# Instructions the server executes a request (callgrind; installs valgrind from Debian if missing) for
# a few reads, cache off, on the database bench/http.sh loaded: the measure of a change of a few percent,
# which wrk's rates on this noisy machine cannot resolve. BENCH_STORES=postgres, BENCH_BIN, BENCH_PATHS.
bench-instructions listings="100000" requests="1000":
    bench/instructions.sh {{listings}} {{requests}}

# Two or more release builds alternated on the benchmark database: `just bench-ab 3 old-binary target/release/launchdir-api`
# (`BIN=DATABASE_URL` gives a build its own copy, for a build with a migration the other lacks).
bench-ab rounds +binaries:
    bench/ab.sh {{rounds}} {{binaries}}

# What a vote writes (its listing's total, its week's tally) on copies of a database, taken turn about:
# `just bench-vote-writes 3 2000 sqlite://a.db sqlite://b.db`. It changes the data: use copies.
bench-vote-writes rounds writes +databases:
    bench/vote-writes.sh {{rounds}} {{writes}} {{databases}}

# The drafting corpus (fixtures/sites): recall of stated facts per site and per field, wrong and
# invented values, quotes not verbatim, robots-disallowed requests, then read + draft time (p50/p95).
bench-drafts rounds="20":
    LAUNCHDIR_BENCH_ROUNDS={{rounds}} cargo bench -p adapters-drafter --bench corpus

# Submit-to-ready latency through the whole service (API, job queue, SQLite) for one fixture site.
bench-draft-latency n="50" site="acme-rockets":
    bench/drafts.sh {{n}} {{site}}
