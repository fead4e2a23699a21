#!/usr/bin/env bash
# PostgreSQL's own ceiling for an uncached profile read (issue 24): runs the exact statement get_listing
# sends, with pgbench and no server in between, against the database bench/http.sh loaded, and prints
# statements a second beside `SELECT 1`, the listing row alone, and the row with its details computed
# from their tables at read time (what the profile statement did before migration 36 kept them), and
# the statement for 16 slugs at once (what concurrent profile reads send). If PostgreSQL alone cannot
# read N profiles a second on this machine, the service cannot answer get_listing N times a second on
# it either, whatever its own code costs.
# Usage: bench/pg-ceiling.sh [listings] [seconds] (the database launchdir_bench_<listings> must exist:
# BENCH_STORES=postgres bench/http.sh makes it). Loopback only; prints one line per script and mode.
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-100000}"
SECS="${2:-8}"
source bench/pg-common.sh

# The statement as the service sends it: from its own statement log, for one profile request.
RUST_LOG=warn,sqlx::query=debug NO_COLOR=1 start_server "$OUT/ceiling-server.log"
SLUG=$(psql "$DB_URL" -Atc "SELECT slug FROM listings WHERE status = 'live' ORDER BY id LIMIT 1")
: > "$OUT/ceiling-server.log"
curl -sf -o /dev/null "http://127.0.0.1:$PORT/api/v1/listings/$SLUG"
sleep 0.5
kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=""

python3 - "$OUT" <<'PY'
import re, sys
out = sys.argv[1]
log = open(f"{out}/ceiling-server.log", encoding="utf-8", errors="replace").read().replace("\0", "")
log = re.sub(r"\x1b\[[0-9;]*m", "", log)
found = [m.group(1) for m in re.finditer(r'db\.statement="(.*?)" rows_affected', log, re.S)]
profile = next((s for s in found if "d.founders_json" in s and "l.slug = $1" in s), None)
if profile is None:
    sys.exit("the profile statement was not in the server's statement log")
sql = " ".join(profile.replace("\\n", " ").replace('\\"', '"').split())
pick = "\\set n random(1, :slugs)\nSELECT slug AS s FROM bench_slugs WHERE n = :n \\gset\n"
open(f"{out}/ceiling-profile.pgb", "w").write(pick + sql.replace("$1", ":s") + ";\n")
# The same statement for 16 slugs at once, as the service sends it when reads are asked together
# (adapters-storage's profiles.rs): its rate times 16 is profiles a second.
picks = "".join(f"\\set n{i} random(1, :slugs)\n" for i in range(16))
many = ",".join(f":n{i}" for i in range(16))
batch = sql.replace("l.slug = $1", f"l.slug = ANY(ARRAY(SELECT slug FROM bench_slugs WHERE n IN ({many})))")
open(f"{out}/ceiling-profile16.pgb", "w").write(picks + batch + ";\n")
cols = sql.split(", d.extra_category_ids", 1)[0]
row = cols + " FROM listings l WHERE l.slug = :s;\n"
open(f"{out}/ceiling-row.pgb", "w").write(pick + row)
# The details computed at read time from their tables (the view that keeps them), as the profile
# statement did before migration 36.
parts = "extra_category_ids, founders_json, updates_json, milestones_json, story_sections, awards_json"
computed = cols + ", " + ", ".join("f." + p for p in parts.split(", ")) + \
    " FROM listings l LEFT JOIN listing_details_fresh f ON f.listing_id = l.id WHERE l.slug = :s;\n"
open(f"{out}/ceiling-computed.pgb", "w").write(pick + computed)
open(f"{out}/ceiling-pick.pgb", "w").write(pick)
open(f"{out}/ceiling-select1.pgb", "w").write("SELECT 1;\n")
PY

# 20 000 live slugs to pick from, as bench/http.sh's wrk scripts do (kept in the benchmark database); a
# smaller directory's live listings all (the picks draw from as many as there are: before, a pick past
# the last one found no slug and ended pgbench, and with it this script, below 20 000 live listings).
PGOPTIONS="-c client_min_messages=warning" psql "$DB_URL" -qc "CREATE TABLE IF NOT EXISTS bench_slugs AS SELECT row_number() OVER (ORDER BY id) AS n, slug FROM (SELECT id, slug FROM listings WHERE status = 'live' ORDER BY id LIMIT 20000) s" \
  -qc "CREATE UNIQUE INDEX IF NOT EXISTS bench_slugs_n ON bench_slugs (n)"
SLUGS=$(psql "$DB_URL" -Atc "SELECT count(*) FROM bench_slugs")

echo "== PostgreSQL alone, $N listings, pgbench -M prepared -j 2, ${SECS}s each (statements a second; the"
echo "   profile, row and computed scripts also run the slug pick, whose own rate is the 'pick' line;"
echo "   profile16 reads 16 listings a statement, as concurrent profile reads share one: x16 for profiles)"
printf "%-10s %-8s %8s %10s\n" script tls clients "tps"
for tls in disable prefer; do
  for script in select1 pick row profile profile16 computed; do
    for c in 16 64; do
      tps=$(PGSSLMODE=$tls pgbench -n -M prepared -c "$c" -j 2 -T "$SECS" -D slugs="$SLUGS" -f "$OUT/ceiling-$script.pgb" \
        -h "${HOSTPORT%%:*}" -p "${HOSTPORT##*:}" -U postgres "$NAME" 2>&1 | awk '/^tps/ {printf "%.0f", $3}')
      printf "%-10s %-8s %8s %10s\n" "$script" "$tls" "$c" "${tps:-failed}"
    done
  done
done
