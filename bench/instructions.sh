#!/usr/bin/env bash
# Instructions a request, counted by valgrind's callgrind (issue 24). On this project's 2-core machine a
# read's rate moves by 5–10 % from one run to the next, so a change of a few percent to a read's code
# cannot be seen with wrk. The instructions the server executes for a request can be counted, and they
# come out the same on a busy machine as on a quiet one.
#
# The script starts the release server under callgrind on the database bench/http.sh loaded, with the
# read cache off. For each path it sends 20 requests without counting, then REQUESTS more, counted,
# on one keep-alive connection. It prints, per request:
#   - instructions for the HTTP request (actix's `poll_request`, everything from the parsed request to
#     the written response);
#   - instructions for the operation and its answer (`Descriptor::of`'s closure);
#   - instructions for the answer's JSON alone;
#   - the whole process's instructions over the counted requests. SQLite's pool connections read the
#     schema in the background now and then, which adds up to a tenth here; compare the first columns.
#   - the answer's size.
# Only the server's own instructions are counted: with PostgreSQL its processes are not. With PostgreSQL
# a request's work resumes outside `poll_request` once the database answers (the read lanes' tasks
# wake it), so there the first column is only its first part: compare the operation and the whole
# process.
#
# Usage: bench/instructions.sh [listings] [requests]
#   BENCH_STORES: sqlite (the default) or postgres; BENCH_BIN: another build, to compare two;
#   BENCH_PATHS: the paths, space-separated (default: /healthz, a profile, trending, the weekly board,
#   the categories). Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-100000}"
REQUESTS="${2:-1000}"
STORE="${BENCH_STORES:-sqlite}"
PORT="${BENCH_PORT:-18557}"
OUT="bench/out"
mkdir -p "$OUT"
command -v valgrind >/dev/null || { echo "installing valgrind (Debian package)"; (apt-get update -qq && apt-get install -y -qq valgrind) >/dev/null; }

case "$STORE" in
  sqlite)
    [ -f "$OUT/bench-$N.db" ] || { echo "no $OUT/bench-$N.db: run BENCH_STORES=sqlite bench/http.sh $N first"; exit 2; }
    DB_URL="sqlite://$OUT/bench-$N.db"
    SLUG=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT slug FROM listings WHERE status = '"'live'"' ORDER BY id LIMIT 1").fetchone()[0])' "$OUT/bench-$N.db") ;;
  postgres)
    PG_ADMIN="${BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}"
    DB_URL="${PG_ADMIN%/*}/launchdir_bench_$N"
    SLUG=$(psql "$DB_URL" -Atc "SELECT slug FROM listings WHERE status = 'live' ORDER BY id LIMIT 1") ||
      { echo "no database launchdir_bench_$N: run BENCH_STORES=postgres bench/http.sh $N first"; exit 2; } ;;
  *) echo "BENCH_STORES is one store here: sqlite or postgres"; exit 2 ;;
esac
PATHS="${BENCH_PATHS:-/healthz /api/v1/listings/$SLUG /api/v1/launches?section=trending /api/v1/leaderboards/community-weekly /api/v1/categories}"

if [ -z "${BENCH_BIN:-}" ]; then
  cargo build --release -q --bin launchdir-api
fi
BIN="${BENCH_BIN:-target/release/launchdir-api}"

PROFILE="$OUT/instructions.out"
rm -f "$PROFILE" "$PROFILE".*
RUST_LOG=warn valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$PROFILE" \
  "$BIN" serve --bind "127.0.0.1:$PORT" --database-url "$DB_URL" --no-mcp --read-cache-secs 0 --rate-limit 60000000 \
  > "$OUT/instructions-server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait 2>/dev/null || true' EXIT
for _ in $(seq 1 1200); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.5; done
curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null || { echo "the server did not start under valgrind: $OUT/instructions-server.log"; exit 1; }

# Sends $2 requests for path $1 on one keep-alive connection; prints the last answer's size.
requests() {
  python3 - "$PORT" "$1" "$2" <<'PY'
import http.client, sys
port, path, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
c = http.client.HTTPConnection("127.0.0.1", port)
for _ in range(n):
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    assert r.status == 200, (path, r.status, body[:200])
print(len(body))
PY
}

echo "instructions a request (callgrind), $STORE, $N listings, cache off, $REQUESTS requests a path after 20 uncounted, $(basename "$BIN")"
[ "$STORE" = postgres ] && echo "(PostgreSQL: the http request column is the request's work until it waits for the database; compare the others)"
printf '%-48s %12s %12s %10s %14s %8s\n' path "http request" operation json "whole process" bytes
part=0
for path in $PATHS; do
  requests "$path" 20 >/dev/null
  callgrind_control -z "$SERVER" >/dev/null 2>&1
  callgrind_control -i on "$SERVER" >/dev/null 2>&1
  bytes=$(requests "$path" "$REQUESTS")
  callgrind_control -i off "$SERVER" >/dev/null 2>&1
  callgrind_control -d "$SERVER" >/dev/null 2>&1
  part=$((part + 1))
  for _ in $(seq 1 100); do [ -s "$PROFILE.$part" ] && break; sleep 0.1; done
  callgrind_annotate --tree=calling --inclusive=yes "$PROFILE.$part" 2>/dev/null | python3 -c '
import re, sys
n, path, size = int(sys.argv[1]), sys.argv[2], sys.argv[3]
lines = sys.stdin.read().split("\n")
count = lambda l: int(re.match(r"\s*([\d,]+)", l).group(1).replace(",", ""))
total = next(count(l) for l in lines if "PROGRAM TOTALS" in l)
def own(name):
    # The inclusive count of the first function named so, and the lines of what it calls.
    for i, l in enumerate(lines):
        if "*  " in l and name in l:
            callees = []
            for c in lines[i + 1:]:
                if ">   " not in c:
                    break
                callees.append(c)
            return count(l), callees
    return 0, []
request, _ = own("InnerDispatcher<T,S,B,X,U>::poll_request [")
operation, callees = own("operations::Descriptor::of::{{closure}}::{{closure}} [")
json = sum(count(c) for c in callees if "Serialize" in c or "json::write" in c)
per = lambda x: f"{x / n:,.0f}" if x else "-"
print(f"{path[:48]:<48} {per(request):>12} {per(operation):>12} {per(json):>10} {per(total):>14} {size:>8}")
' "$REQUESTS" "$path" "$bytes"
done
