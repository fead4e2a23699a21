#!/usr/bin/env bash
# Two or more builds of the server, alternated on the same database, cache off (issue 24). A read's
# rate here moves 5-10 % from one run to the next, and more between minutes, so a change is judged by
# builds run turn about, each several times, never by one run of each. For each build in turn the script
# starts the server, drives /healthz, the weekly board, trending, the categories and /healthz again
# with wrk (2 s untimed, then BENCH_SECS at 64 connections), and prints per read: requests a second,
# the CPU µs a request of the server and of the whole machine (/proc, wrk and PostgreSQL included), and
# the machine's context switches a request (`ctxt` in /proc/stat), which moves far less between runs
# than the rate and showed what two request threads cost beside PostgreSQL (docs/BENCHMARKS.md, 65th).
#
# Usage: bench/ab.sh ROUNDS BIN[=DATABASE_URL] [BIN[=DATABASE_URL]...]
#   BENCH_STORES: sqlite (the default) or postgres: the database bench/http.sh loaded, for each BIN
#     given without its own. A build with a migration the other lacks needs its own copy of the data
#     (an older build refuses a database migrated past it): BIN=sqlite://copy.db or
#     BIN=postgres://.../copy (each PostgreSQL copy is vacuumed and analyzed first, as the default is);
#   BENCH_SECS: seconds a read (5); BENCH_PATHS: the reads (space-separated; a path ending in .lua is
#     a wrk script, say bench/out/slugs.lua for get_listing of random live listings). Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: bench/ab.sh ROUNDS BIN [BIN...]"; exit 2; }
ROUNDS="$1"
shift
N=100000
SECS="${BENCH_SECS:-5}"
PORT="${BENCH_PORT:-18610}"
BASE="http://127.0.0.1:$PORT"
UA="Mozilla/5.0 (X11; Linux x86_64) launchdir-bench"
TICK_US=$((1000000 / $(getconf CLK_TCK)))
PATHS="${BENCH_PATHS:-/healthz /api/v1/leaderboards/community-weekly /api/v1/launches?section=trending /api/v1/categories /healthz}"
command -v wrk >/dev/null || { echo "installing wrk (Debian package)"; (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null; }
case "${BENCH_STORES:-sqlite}" in
  sqlite)
    [ -f "bench/out/bench-$N.db" ] || { echo "no bench/out/bench-$N.db: run BENCH_STORES=sqlite bench/http.sh $N first"; exit 2; }
    DB_URL="sqlite://bench/out/bench-$N.db" ;;
  postgres)
    PG_ADMIN="${BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}"
    DB_URL="${PG_ADMIN%/*}/launchdir_bench_$N"
    psql "$DB_URL" -qc "VACUUM ANALYZE" ||
      { echo "no database launchdir_bench_$N: run BENCH_STORES=postgres bench/http.sh $N first"; exit 2; } ;;
  *) echo "BENCH_STORES is one store here: sqlite or postgres"; exit 2 ;;
esac

SERVER=""
trap '[ -n "$SERVER" ] && kill $SERVER 2>/dev/null; wait 2>/dev/null || true' EXIT
server_ticks() { awk '{print $14 + $15}' "/proc/$SERVER/stat"; }
machine_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
switches() { awk '/^ctxt / {print $2}' /proc/stat; }

for arg in "$@"; do
  case "$arg" in *=postgres://*) psql "${arg#*=}" -qc "VACUUM ANALYZE" ;; esac
done

echo "rounds of $*: per read, requests a second, server / whole machine CPU µs a request, context switches a request"
for round in $(seq 1 "$ROUNDS"); do
  for arg in "$@"; do
    bin="${arg%%=*}"
    db="$DB_URL"
    [ "$arg" = "$bin" ] || db="${arg#*=}"
    RUST_LOG=warn "$bin" serve --bind "127.0.0.1:$PORT" --database-url "$db" --no-mcp \
      --read-cache-secs 0 --rate-limit 60000000 > /dev/null 2>&1 &
    SERVER=$!
    for _ in $(seq 1 300); do curl -sf "$BASE/readyz" >/dev/null && break; sleep 0.1; done
    line="round $round $arg"
    for path in $PATHS; do
      # A path ending in .lua is a wrk script run against the server (bench/out/slugs.lua, which
      # bench/http.sh writes: get_listing of a random one of 20 000 live listings a request).
      target=("$BASE$path")
      [[ "$path" != *.lua ]] || target=(-s "$path" "$BASE")
      wrk -t2 -c64 -d2s -H "User-Agent: $UA" "${target[@]}" > /dev/null
      s0=$(server_ticks); m0=$(machine_ticks); c0=$(switches)
      out=$(wrk -t2 -c64 -d"${SECS}s" -H "User-Agent: $UA" "${target[@]}")
      s1=$(server_ticks); m1=$(machine_ticks); c1=$(switches)
      n=$(awk '/ requests in / {print $1}' <<< "$out")
      rps=$(awk '/Requests\/sec/ {printf "%.0f", $2}' <<< "$out")
      name="${path%%\?*}"
      name="${name%.lua}"
      cs=$(awk -v c="$((c1 - c0))" -v n="$n" 'BEGIN {printf "%.2f", c / n}')
      line="$line | ${name##*/} $rps $(((s1 - s0) * TICK_US / n)) / $(((m1 - m0) * TICK_US / n)) cs $cs"
      # Answers of 400 or more (a 429, a 503) are far faster than the read: such a figure is not the read's.
      errors=$(awk '/Non-2xx or 3xx responses:/ {print $NF}' <<< "$out")
      [ -z "$errors" ] || line="$line !! $errors answers of 400 or more"
    done
    echo "$line"
    kill "$SERVER"
    wait "$SERVER" 2>/dev/null || true
    SERVER=""
  done
done
