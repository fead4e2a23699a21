#!/usr/bin/env bash
# HTTP benchmark of the public read API (issue 3): loads N listings (default 100 000) with
# `launchdir-api admin generate-demo` into a fresh SQLite file (and a PostgreSQL database when
# BENCH_STORES names it), starts the release server, and drives
# each endpoint and the site's main pages (home, listing, boards, calendar) with wrk at a fixed concurrency. Prints req/s, p50 and p99 per endpoint and each
# endpoint's throughput as a ratio to a trivial JSON endpoint (/healthz) measured in the same pass (its
# first run and its last), the CPU time a request cost the server, PostgreSQL and the whole machine, the
# share of the cores the host took meanwhile (steal), and
# the server's memory at the end of each pass (anonymous apart from the file's mapped pages).
# Two passes over the same endpoints: the service as configured by default (public reads cached, see
# LAUNCHDIR_READ_CACHE_SECS; the 20 000 profiles, and their pages, requested once before they are measured) and with the read cache off,
# so the database path is measured too.
# The rate limiter stays on (its cost is part of every request) with a limit wrk cannot reach.
# Loopback only; every run is bounded by its duration. Usage: bench/http.sh [listings] [seconds]
# (BENCH_PASSES picks the passes: on, off, churn, reads, searches; BENCH_STORES the stores: sqlite, postgres; BENCH_BIN
# the server binary; BENCH_POSTGRES_SOCKET PostgreSQL's socket directory — see below and the end of this file).
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-100000}"
SECS="${2:-10}"
PORT="${BENCH_PORT:-18555}"
OUT="bench/out"
mkdir -p "$OUT"

if ! command -v wrk >/dev/null; then
  echo "installing wrk (Debian package)"
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi

# BENCH_BIN runs another build of the server (say, an older commit's) on the same data, to compare two
# builds in one sitting; by default the release build of this checkout.
if [ -z "${BENCH_BIN:-}" ]; then
  cargo build --release -q --bin launchdir-api
fi
BIN="${BENCH_BIN:-target/release/launchdir-api}"
PG_ADMIN="${BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}"

# Points DB_URL at the store's benchmark database, generating N listings into it once.
prepare_store() {
  STORE="$1"
  case "$STORE" in
    sqlite)
      local db="$OUT/bench-$N.db"
      DB_URL="sqlite://$db?mode=rwc"
      if [ ! -f "$db" ]; then
        echo "generating $N listings into $db (once; delete the file to regenerate)"
        /usr/bin/time -f "generate-demo: %e s, %M KiB max RSS" "$BIN" admin generate-demo --listings "$N" --database-url "$DB_URL"
      fi ;;
    postgres)
      local name="launchdir_bench_$N"
      DB_URL="${PG_ADMIN%/*}/$name"
      # BENCH_POSTGRES_SOCKET (a directory, say /var/run/postgresql): the server and the loader reach
      # PostgreSQL over its Unix socket instead of loopback TCP, as a service beside its database would.
      if [ -n "${BENCH_POSTGRES_SOCKET:-}" ]; then
        DB_URL="postgres://postgres@localhost/$name?host=$BENCH_POSTGRES_SOCKET"
      fi
      if ! psql "$PG_ADMIN" -Atc "SELECT 1 FROM pg_database WHERE datname = '$name'" | grep -q 1; then
        psql "$PG_ADMIN" -qc "CREATE DATABASE $name"
        echo "generating $N listings into PostgreSQL database $name (once; drop it to regenerate)"
        /usr/bin/time -f "generate-demo: %e s, %M KiB max RSS" "$BIN" admin generate-demo --listings "$N" --database-url "$DB_URL"
        psql "$DB_URL" -qc "VACUUM ANALYZE"
      fi ;;
    *) echo "unknown store $STORE (sqlite, postgres)"; exit 2 ;;
  esac
  # Slugs of live listings for the per-request random pick (uniform over 20 000 profiles: harder on
  # a cache than real traffic, where a few listings get most views).
  local query="SELECT slug FROM listings WHERE status = 'live' ORDER BY id LIMIT 20000"
  if [ "$STORE" = sqlite ]; then
    python3 -c 'import sqlite3, sys; [print(r[0]) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])]' "$OUT/bench-$N.db" "$query" > "$OUT/slugs.txt"
  else
    psql "$DB_URL" -Atc "$query" > "$OUT/slugs.txt"
  fi
  write_scripts
}

write_scripts() {
python3 - "$OUT/slugs.txt" "$OUT/slugs.lua" "$OUT/site_slugs.lua" "$OUT/site_new_viewers.lua" <<'PY'
import sys
rows = [(s,) for s in open(sys.argv[1]).read().split()]
with open(sys.argv[2], "w") as f:
    f.write("slugs = {" + ",".join('"%s"' % r[0] for r in rows) + "}\n")
    f.write("math.randomseed(7)\nrequest = function() return wrk.format('GET', '/api/v1/listings/' .. slugs[math.random(#slugs)]) end\n")
slugs = "slugs = {" + ",".join('"%s"' % r[0] for r in rows) + "}\nmath.randomseed(7)\n"
# The listing page, as one person browsing (one address and browser: after the first view of a
# listing that day, a view is a lookup of the existing mark).
with open(sys.argv[3], "w") as f:
    f.write(slugs + "request = function() return wrk.format('GET', '/listings/' .. slugs[math.random(#slugs)]) end\n")
# The listing page, every request a new person (a new browser string): each view is counted, so each
# request writes a view mark and the listing's view count. The string names the run (the time wrk
# started), the thread and the request: with only a seeded random number in it, wrk's two threads, and
# every later run that day, sent the same strings, and their views were repeats that wrote nothing.
with open(sys.argv[4], "w") as f:
    f.write(slugs + "made = 0\nfunction setup(thread) made = made + 1; thread:set('tid', made); thread:set('run', os.time()) end\n"
            "n = 0\nrequest = function() n = n + 1; return wrk.format('GET', '/listings/' .. slugs[math.random(#slugs)], "
            "{['User-Agent'] = 'Mozilla/5.0 (bench viewer ' .. run .. '-' .. tid .. '-' .. n .. ')'}) end\n")
PY
}

# Requests each listing of slugs.txt once at $1 + slug (8 keep-alive connections) and prints the rate:
# a running instance has seen its listings before, so the cached pass measures a warm cache. No
# browser string, so these loads count no view. The profiles are warmed before the API reads and the
# listing pages right before the page runs: a cached entry older than half the cache's TTL is drawn
# again in the background at its next hit, and pages warmed a minute before (as until the thirty-third
# sitting, with the profiles) were redrawn, all 20 000 together, while they were measured.
warm() {
  python3 - "$PORT" "$OUT/slugs.txt" "$1" "$2" <<'PY'
import http.client, sys, threading, time
port, slugs, prefix, what = int(sys.argv[1]), open(sys.argv[2]).read().split(), sys.argv[3], sys.argv[4]
def worker(part):
    c = http.client.HTTPConnection("127.0.0.1", port)
    for s in part:
        c.request("GET", prefix + s)
        r = c.getresponse(); r.read()
        assert r.status == 200, (prefix + s, r.status)
t = time.time()
threads = [threading.Thread(target=worker, args=(slugs[i::8],)) for i in range(8)]
[x.start() for x in threads]; [x.join() for x in threads]
d = time.time() - t
print(f"warm-up: {len(slugs)} {what} requested once in {d:.1f} s ({len(slugs) / d:.0f} req/s, cold, 8 connections)")
PY
}
cat > "$OUT/search.lua" <<'LUA'
-- A mix of rare and common terms; "workflow" matches about 40 % of listings.
terms = {"workflow", "invoices", "kanban", "larkhub", "tracing", "workflow", "export", "nimbusly", "captions", "workflow"}
i = 0
request = function() i = i + 1; return wrk.format("GET", "/api/v1/listings?q=" .. terms[(i % #terms) + 1]) end
LUA

# CPU time in clock ticks (utime + stime, /proc/<pid>/stat) of the server; of every PostgreSQL
# process on this machine (the backends serving the reads, and the rest of the cluster, idle here);
# and of the whole machine (/proc/stat: everything but idle, iowait and steal, wrk included). A read's cost
# where PostgreSQL and the server share the cores: a ratio to /healthz cannot say which side spent it.
# Then the time the host took from this machine (steal, /proc/stat's eighth figure: a virtual machine
# whose host is busy loses its cores for a while, and a 5-second run that meets such a while moves
# its rate and its 99th percentile with nothing in the service changed).
TICK_US=$((1000000 / $(getconf CLK_TCK)))
CORES=$(nproc)
proc_ticks() {
  local total=0 pid f
  for pid in "$@"; do
    if f=$(cat "/proc/$pid/stat" 2>/dev/null); then
      f=${f##*) }
      total=$((total + $(echo "$f" | awk '{print $12 + $13}')))
    fi
  done
  echo "$total"
}
cpu_ticks() {
  local postgres
  postgres=$(pgrep -x postgres || true)
  # shellcheck disable=SC2086
  echo "$(proc_ticks "$SERVER") $(proc_ticks $postgres) $(awk '/^cpu / {print $2 + $3 + $4 + $7 + $8, $9}' /proc/stat)"
}

# name, connections, url or script
run() {
  local name="$1" conns="$2" target="$3" args=()
  if [[ "$target" == *.lua ]]; then args=(-s "$target" "$BASE"); else args=("$BASE$target"); fi
  # The first request of a URL shows the cold cost (nothing cached yet); then 2 s of warm-up, discarded.
  local cold="-"
  if [[ "$target" != *.lua ]]; then cold=$(curl -s -o /dev/null -A "$UA" -w '%{time_total}' "$BASE$target"); fi
  # A browser's User-Agent, so the site's pages count views as they do for people (bots are not counted).
  wrk -t2 -c"$conns" -d2s -H "User-Agent: $UA" "${args[@]}" > /dev/null
  local before after
  before=$(cpu_ticks)
  wrk -t2 -c"$conns" -d"${SECS}s" --latency -H "User-Agent: $UA" "${args[@]}" > "$OUT/$name.txt"
  after=$(cpu_ticks)
  # CPU microseconds a request: the server's, PostgreSQL's, the whole machine's (see cpu_ticks).
  local cpu
  cpu=$(awk -v b="$before" -v a="$after" -v tick="$TICK_US" '/ requests in / {n = $1}
    END {split(b, x, " "); split(a, y, " ");
      if (n > 0) printf "%.0f %.0f %.0f", (y[1] - x[1]) * tick / n, (y[2] - x[2]) * tick / n, (y[3] - x[3]) * tick / n;
      else printf "- - -";
      printf " %.1f", (y[4] - x[4]) * tick / (secs * 1000000 * cores) * 100}' secs="$SECS" cores="$CORES" "$OUT/$name.txt")
  local rps p50 p99
  rps=$(awk '/Requests\/sec/ {print $2}' "$OUT/$name.txt")
  p50=$(awk '$1 == "50%" {print $2}' "$OUT/$name.txt")
  p99=$(awk '$1 == "99%" {print $2}' "$OUT/$name.txt")
  local timeouts errors
  timeouts=$(awk '/Socket errors/ {gsub(",", ""); for (i = 1; i <= NF; i++) if ($i == "timeout") print $(i + 1)}' "$OUT/$name.txt")
  # Answers with a status of 400 or more (wrk's "Non-2xx or 3xx responses"): a 429 or a 503 is answered
  # far faster than the read, so a row with any is not a measurement of the read.
  errors=$(awk '/Non-2xx or 3xx responses:/ {print $NF}' "$OUT/$name.txt")
  echo "$name $conns $rps ${p50:-none} ${p99:-none} ${timeouts:-0} ${errors:-0} $cold $cpu" >> "$OUT/results"
}

SERVER=""
CHURN=""
trap '[ -n "$CHURN" ] && kill $CHURN 2>/dev/null; [ -n "$SERVER" ] && kill $SERVER 2>/dev/null; wait 2>/dev/null || true' EXIT
BASE="http://127.0.0.1:$PORT"
UA="Mozilla/5.0 (X11; Linux x86_64) launchdir-bench"

# Starts the server with the read-cache TTL $1 and waits until it is ready (SERVER is its pid).
start_server() {
  # Each pass writes (views, follows), and the earlier passes' row versions stay behind until a vacuum.
  # A production PostgreSQL vacuums them in the background; a test server may run with autovacuum off
  # (this machine's does), where the week's count read 20 000 dead versions for 10 000 rows (84 ms,
  # not 10). So each pass starts on a vacuumed database, as it would find one in production.
  if [ "$STORE" = postgres ]; then psql "$DB_URL" -qc "VACUUM ANALYZE"; fi
  RUST_LOG=warn "$BIN" serve --bind "127.0.0.1:$PORT" --database-url "$DB_URL" --no-mcp \
    --read-cache-secs "$1" --rate-limit 60000000 &
  SERVER=$!
  for _ in $(seq 1 1200); do curl -sf "$BASE/readyz" >/dev/null && break; sleep 0.1; done
}

# One pass: start the server with the given read-cache TTL, drive every endpoint, print the table.
pass() {
  local cache="$1" label="$2" churn="${3:-}"
  start_server "$cache"
  CHURN=""
  if [ -n "$churn" ]; then
    python3 bench/churn.py "$PORT" bench-churn@bench.example "correct horse churn" "$OUT/slugs.txt" &
    CHURN=$!
  fi
  rm -f "$OUT/results"
  curl -sf "$BASE/api/v1/listings?q=workflow&per_page=1" | python3 -c 'import json,sys; p=json.load(sys.stdin)["pagination"]; print("common term workflow matches", p["total"], "" if p.get("total_exact", True) else "or more (the count stops at the cap)", "listings")'
  run trivial_healthz 64 /healthz
  if [ "$cache" != 0 ]; then warm /api/v1/listings/ profiles; fi
  run get_listing 64 "$OUT/slugs.lua"
  run search_mix 8 "$OUT/search.lua"
  run search_common 8 "/api/v1/listings?q=workflow"
  run list_launches_trending 64 "/api/v1/launches?section=trending"
  run leaderboard_all_time 64 "/api/v1/leaderboards/community-all-time"
  run leaderboard_weekly 64 "/api/v1/leaderboards/community-weekly"
  run list_categories 64 /api/v1/categories
  # The site's pages (issue 10): server-rendered from the same operations, plus the page's own work.
  run site_home 64 /
  if [ "$cache" != 0 ]; then warm /listings/ "listing pages"; fi
  run site_listing 64 "$OUT/site_slugs.lua"
  run site_listing_new_viewer 64 "$OUT/site_new_viewers.lua"
  run site_board_weekly 64 /leaderboards/community-weekly
  run site_board_all_time 64 /leaderboards/community-all-time
  run site_calendar 64 /launches/this
  # What people and search engines find the site by (issue 23): search, sitemaps, feeds.
  run site_search 8 "/search?q=workflow"
  run sitemap_index 8 /sitemap.xml
  run sitemap_listings 2 /sitemaps/listings-1.xml
  run feed_launches 64 /feeds/launches.atom
  run trivial_healthz_again 64 /healthz
  if [ -n "$CHURN" ]; then kill -TERM "$CHURN"; wait "$CHURN" 2>/dev/null || true; CHURN=""; fi
  # The server's memory after the pass (issue 24 asks for the anonymous memory apart from the file's
  # mapped pages, which on SQLite are the database file itself).
  local memory
  memory=$(awk '/^(RssAnon|RssFile|VmHWM):/ {printf "%s %.0f MiB  ", $1, $2 / 1024}' "/proc/$SERVER/status")
  kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=""

  echo
  echo "== $label: listings=$N duration=${SECS}s per endpoint, wrk -t2, release build, $STORE"
  local base again slug
  base=$(awk '$1 == "trivial_healthz" {print $3}' "$OUT/results")
  # The pass's last /healthz too: on a shared 2-core machine the two have differed by a fifth, so a
  # ratio is printed against each (a target met against only one of them is within the noise).
  again=$(awk '$1 == "trivial_healthz_again" {print $3}' "$OUT/results")
  slug=$(awk '$1 == "get_listing" {print $3}' "$OUT/results")
  echo "(p50/p99 cover completed requests only; 'timeouts' counts requests wrk gave up on after 2 s; 'errors' answers of 400 or more)"
  echo "(measured after a 2 s warm-up; 'cold s' is the first request of the URL, before anything was cached)"
  echo "(server memory at the end of the pass: $memory)"
  echo "(CPU µs a request while it was measured: the server's, every PostgreSQL process's, the whole machine's with wrk; clock ticks of $TICK_US µs)"
  echo "(steal %: the share of the machine's $CORES cores its host took while the read was measured; a read measured while it was high is not comparable)"
  printf "%-26s %5s %10s %10s %10s %9s %7s %9s %9s %9s %8s %7s %7s %7s %7s\n" endpoint conns "req/s" p50 p99 timeouts errors "x trivial" "x last" "x slug" "cold s" \
    "srv us" "pg us" "all us" "steal %"
  while read -r name conns rps p50 p99 timeouts errors cold srv pg all steal; do
    printf "%-26s %5s %10s %10s %10s %9s %7s %9.3f %9.3f %9.3f %8s %7s %7s %7s %7s\n" "$name" "$conns" "$rps" "$p50" "$p99" "$timeouts" "$errors" \
      "$(echo "$rps / $base" | bc -l)" "$(echo "$rps / ${again:-$base}" | bc -l)" "$(echo "$rps / $slug" | bc -l)" "$cold" \
      "$srv" "$pg" "$all" "$steal"
  done < "$OUT/results"
  local failed
  failed=$(awk '$7 != 0 {printf " %s", $1}' "$OUT/results")
  if [ -n "$failed" ]; then
    echo "!! answers of 400 or more in:$failed -- those rows measure the errors, not the reads (bench/out/<name>.txt)"
  fi
  cp "$OUT/results" "$OUT/results-$STORE-cache-$cache"
  echo
}

# BENCH_PASSES picks the passes: "on off churn" (default), or any of them. churn: the cache on and one
# public change a second (a follow or unfollow on the site, by bench/churn.py). reads: every public
# read and page one at a time, cache off (bench/reads.py), for the reads wrk does not drive; searches:
# every combination of a search's parameters one at a time, cache off (bench/searches.py).
# BENCH_STORES picks the stores: "sqlite" (default) or "sqlite postgres" (PostgreSQL at BENCH_POSTGRES_URL's
# server, sharing this machine's cores with the service and wrk).
for store in ${BENCH_STORES:-sqlite}; do
prepare_store "$store"
for p in ${BENCH_PASSES:-on off churn}; do
  case "$p" in
    on) pass 60 "read cache on (default: 60 s, a change drops what it touched)" ;;
    off) pass 0 "read cache off (every request reaches the database)" ;;
    churn)
      printf 'correct horse churn\n' | "$BIN" admin create-user --email bench-churn@bench.example --password-stdin \
        --database-url "$DB_URL" >/dev/null 2>&1 || true
      pass 60 "read cache on, one public change a second (a follow or unfollow)" churn ;;
    reads)
      # Every public read once at a time, cache off (bench/reads.py): a slow plan shows at one connection.
      start_server 0
      echo "== every public read, one at a time, read cache off: listings=$N, release build, $STORE"
      python3 bench/reads.py "$PORT"
      echo
      kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER="" ;;
    searches)
      # Every combination of a search's words, filters, orders and statuses, one at a time, cache off
      # (bench/searches.py): what a script can ask, not only what someone thought to measure.
      start_server 0
      echo "== every kind of search, one at a time, read cache off: listings=$N, release build, $STORE"
      python3 bench/searches.py "$PORT" 3 "$OUT/searches-$STORE.tsv"
      echo
      kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER="" ;;
    *) echo "unknown pass $p (on, off, churn, reads, searches)"; exit 2 ;;
  esac
done
done
