#!/usr/bin/env bash
# PostgreSQL alone running a page of the trending list, of the weekly board and the category counts
# (issue 24): pgbench sends the statements on 4 connections with the read lanes' settings (no TLS; memoize, JIT
# and parallel workers off), 16 to a pipeline (as a busy read lane sends them) and one at a time (each
# connection waits for each answer, the shallowest), and prints statements a second beside `SELECT 1`
# and beside the server's own `/healthz` (wrk @64), measured in the same minute. If PostgreSQL alone runs
# a page at under 0.25x of `/healthz` here, no change to the server can meet the 0.25x target for that
# read on this machine; only a page that costs PostgreSQL less can. Between the two depths lies what
# the server's lanes see: how deep their pipelines are depends on how many requests arrive at once.
#
# The statements are written here as adapters-storage writes them (the trending list: a search of live
# listings ordered by `trending_score`; the weekly board: `weekly_page`, page 1; the category counts:
# `live_listing_counts`). Before measuring, each page's listings and the categories' counts are compared
# with what the API answers, so a statement that no longer finds what the service shows stops the run.
# The service's text may still change in form (another index, another join order) without this
# noticing: compare with `log_min_duration_statement` when in doubt.
# Usage: bench/pg-boards.sh [listings] [seconds] [rounds] (the database launchdir_bench_<listings> must
# exist: BENCH_STORES=postgres bench/http.sh makes it). Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-100000}"
SECS="${2:-6}"
ROUNDS="${3:-2}"
command -v wrk >/dev/null || { echo "wrk is needed (Debian: wrk)"; exit 2; }
source bench/pg-common.sh
BASE="http://127.0.0.1:$PORT"

psql "$DB_URL" -qc "VACUUM ANALYZE"
RUST_LOG=warn start_server "$OUT/pg-boards-server.log"

# The week the service counts in, as its weekly board says.
WEEK=$(curl -sf "$BASE/api/v1/leaderboards/community-weekly?per_page=1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["week"])')
SUMMARY="SELECT l.id, l.slug, l.name, l.url, l.tagline, l.votes_count, l.status, l.launch_week"
echo "$SUMMARY, COALESCE((SELECT k.listings FROM listing_counts k WHERE k.status = 'live'), 0) AS page_total FROM listings l WHERE 1 = 1 AND l.status = 'live' ORDER BY l.trending_score DESC, l.id DESC LIMIT 20 OFFSET 0;" > "$OUT/pg-boards-trending.sql"
# The weekly board reads its summaries from the tallies (migration 72).
TALLY_SUMMARY="SELECT v.listing_id AS id, v.slug, v.name, v.url, v.tagline, v.votes_count, 'live' AS status, v.launch_week"
echo "$TALLY_SUMMARY, v.votes AS week_votes, COALESCE((SELECT k.listings FROM week_counts k WHERE k.week_start = '$WEEK'), 0) AS page_total FROM vote_tallies v WHERE v.week_start = '$WEEK' AND v.live = TRUE AND v.votes > 0 ORDER BY v.votes DESC, v.listing_id ASC LIMIT 20 OFFSET 0;" > "$OUT/pg-boards-weekly.sql"
echo "SELECT 1;" > "$OUT/pg-boards-select1.sql"

# Each statement finds the page the API shows (the same slugs in the same order), or the run stops.
check() {
  local sql="$1" path="$2" db api
  db=$(psql "$DB_URL" -AtF' ' -f "$sql" | awk '{print $2}' | paste -sd' ')
  api=$(curl -sf "$BASE$path" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(" ".join(i.get("slug") or i["listing"]["slug"] for i in d["items"]))')
  if [ -z "$db" ] || [ "$db" != "$api" ]; then
    echo "$(basename "$sql") does not find what $path shows:"; echo "  statement: $db"; echo "  API:       $api"; exit 1
  fi
}
check "$OUT/pg-boards-trending.sql" "/api/v1/launches?section=trending"
check "$OUT/pg-boards-weekly.sql" "/api/v1/leaderboards/community-weekly"
# The category counts, as adapters-storage reads them: the same counts the API shows, or the run stops.
echo "SELECT id, live_listings FROM categories;" > "$OUT/pg-boards-categories.sql"
db=$(psql "$DB_URL" -AtF' ' -f "$OUT/pg-boards-categories.sql" | awk '$2 > 0 {print $2}' | sort -n | paste -sd' ')
api=$(curl -sf "$BASE/api/v1/categories" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(" ".join(sorted((str(n["live_listings"]) for t in d["items"] for n in [t] + t["subcategories"] if n["live_listings"] > 0), key=int)))')
if [ -z "$db" ] || [ "$db" != "$api" ]; then
  echo "pg-boards-categories.sql does not count what /api/v1/categories shows:"; echo "  statement: $db"; echo "  API:       $api"; exit 1
fi

# 16 to a pipeline, as a read lane sends what its thread's requests asked at once.
for s in select1 trending weekly categories; do
  { echo '\startpipeline'; for _ in $(seq 16); do cat "$OUT/pg-boards-$s.sql"; done; echo '\endpipeline'; } > "$OUT/pg-boards-$s-x16.sql"
done

# Statements a second: pgbench on FILE, each of its transactions K statements (run FILE K). In the
# clear, as the read lanes connect (they carry no TLS, `pipe.rs`); pgbench alone would take TLS where
# the server offers it, and pay for it on both sides (8 % of the machine's samples, libssl and libcrypto, in
# a perf of the trending statement 16 deep, seventy-fourth sitting). A pipeline here ends with one Sync,
# so its 16 statements are one implicit transaction; a lane ends each statement with its own.
run() {
  PGSSLMODE=disable PGOPTIONS="-c enable_memoize=off -c jit=off -c max_parallel_workers_per_gather=0" \
    pgbench -n -M prepared -c 4 -j 2 -T "$SECS" -f "$1" \
    -h "${HOSTPORT%%:*}" -p "${HOSTPORT##*:}" -U postgres "$NAME" 2>&1 | awk -v k="$2" '/^tps/ {printf "%.0f", $3 * k}'
}
healthz() { wrk -t2 -c64 -d"${SECS}s" "$BASE/healthz" | awk '/Requests\/sec/ {printf "%.0f", $2}'; }
echo "== PostgreSQL alone, $N listings, week $WEEK: pgbench -M prepared -c 4 -j 2, ${SECS}s, 16 statements to a"
echo "   pipeline and one at a time, no TLS, memoize, JIT and parallel workers off (the read lanes' settings);"
echo "   /healthz by wrk @64"
printf "%-6s %-10s %12s %10s %12s %10s\n" round statement "16 deep /s" "x healthz" "1 deep /s" "x healthz"
for r in $(seq 1 "$ROUNDS"); do
  h=$(healthz)
  printf "%-6s %-10s %12s %10s\n" "$r" healthz "$h" 1.000
  for s in select1 trending weekly categories; do
    deep=$(run "$OUT/pg-boards-$s-x16.sql" 16)
    one=$(run "$OUT/pg-boards-$s.sql" 1)
    printf "%-6s %-10s %12s %10.3f %12s %10.3f\n" "$r" "$s" "${deep:-failed}" "$(echo "${deep:-0} / $h" | bc -l)" \
      "${one:-failed}" "$(echo "${one:-0} / $h" | bc -l)"
  done
done
h=$(healthz)
printf "%-6s %-10s %12s\n" last healthz "$h"
