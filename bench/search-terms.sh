#!/usr/bin/env bash
# One search word at a time (issue 24): which words of bench/http.sh's search mix cost what, uncached.
# Uses the SQLite file bench/http.sh generates (bench/out/bench-N.db, made here too if missing),
# starts the release server with the read cache off, and drives each word alone with wrk at 8
# connections after a 2 s warm-up. Prints each word's total (and whether it is exact or capped),
# req/s, p50 and p99, and /healthz's req/s of the same run for scale.
# Loopback only. Usage: bench/search-terms.sh [listings] [seconds]   (TERMS="a b" picks the words)
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-100000}"
SECS="${2:-5}"
PORT="${BENCH_PORT:-18557}"
OUT="bench/out"
mkdir -p "$OUT"
command -v wrk >/dev/null || { (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null; }
if [ -z "${BENCH_BIN:-}" ]; then
  cargo build --release -q --bin launchdir-api
fi
BIN="${BENCH_BIN:-target/release/launchdir-api}"
DB="$OUT/bench-$N.db"
if [ ! -f "$DB" ]; then
  echo "generating $N listings into $DB (once; delete the file to regenerate)"
  RUST_LOG=warn "$BIN" admin generate-demo --listings "$N" --database-url "sqlite://$DB?mode=rwc" >/dev/null
fi
BASE="http://127.0.0.1:$PORT"
LAUNCHDIR_READ_CACHE_SECS=0 LAUNCHDIR_RATE_LIMIT=60000000 DATABASE_URL="sqlite://$DB?mode=rwc" \
  LAUNCHDIR_BIND="127.0.0.1:$PORT" RUST_LOG=warn "$BIN" serve >"$OUT/search-terms-server.log" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do curl -fs "$BASE/readyz" >/dev/null 2>&1 && break; sleep 0.5; done
curl -fs "$BASE/readyz" >/dev/null

measure() {
  wrk -t2 -c"$2" -d2s "$BASE$1" >/dev/null
  wrk -t2 -c"$2" -d"${SECS}s" --latency "$BASE$1" |
    awk '/Requests\/sec/ {rps = $2} $1 == "50%" {p50 = $2} $1 == "99%" {p99 = $2} END {print rps, p50, p99}'
}
echo "== search words one at a time: listings=$N, read cache off, ${SECS}s each @8, release build, SQLite"
read -r rps _ _ < <(measure /healthz 64)
echo "/healthz @64: $rps req/s"
printf "%-10s %8s %6s %10s %10s %10s\n" word total exact "req/s" p50 p99
for t in ${TERMS:-workflow invoices kanban larkhub tracing export nimbusly captions}; do
  read -r total exact < <(curl -fs "$BASE/api/v1/listings?q=$t&per_page=1" |
    python3 -c 'import json,sys; p=json.load(sys.stdin)["pagination"]; print(p["total"], p.get("total_exact", True))')
  read -r rps p50 p99 < <(measure "/api/v1/listings?q=$t" 8)
  printf "%-10s %8s %6s %10s %10s %10s\n" "$t" "$total" "$exact" "$rps" "$p50" "$p99"
done
