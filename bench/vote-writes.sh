#!/usr/bin/env bash
# What a vote writes to the listing and its week's tally, timed alone on copies of one database (issue
# 24): the cost a kept copy or index adds to each vote. Each transaction adds one to a random listing's
# total (`UPDATE listings`, which fires every trigger on that column) and upserts its tally for this
# week, as `count_vote` does; the vote's own row is left out (it is the same on every copy). The
# databases are taken turn about, ROUNDS times, WRITES transactions each, one connection, and the
# script prints the µs a transaction per database and round.
#
# It changes the data (totals no longer equal the votes): run it on copies made for it, after the reads
# are measured. PostgreSQL through pgbench, SQLite through Python's sqlite3 (both in the README's list).
#
# Usage: bench/vote-writes.sh ROUNDS WRITES DATABASE_URL [DATABASE_URL...]
#   DATABASE_URL: sqlite://path or postgres://...; loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 3 ] || { echo "usage: bench/vote-writes.sh ROUNDS WRITES DATABASE_URL [DATABASE_URL...]"; exit 2; }
ROUNDS="$1"
WRITES="$2"
shift 2
MONDAY=$(python3 -c 'import datetime as d; t = d.datetime.now(d.timezone.utc).date(); print(t - d.timedelta(days=t.weekday()))')
SCRIPT=$(mktemp)
trap 'rm -f "$SCRIPT"' EXIT

sqlite_votes() {
  python3 - "$1" "$WRITES" "$MONDAY" <<'EOF'
import random, sqlite3, sys, time
path, writes, monday = sys.argv[1], int(sys.argv[2]), sys.argv[3]
db = sqlite3.connect(path, isolation_level=None)
db.execute("PRAGMA journal_mode = WAL")
db.execute("PRAGMA synchronous = NORMAL")
db.execute("PRAGMA foreign_keys = ON")
db.execute("PRAGMA mmap_size = 1073741824")  # as the service's connections (adapters-storage db.rs)
db.execute("PRAGMA cache_size = -8192")
ids = [r[0] for r in db.execute("SELECT id FROM listings WHERE status = 'live'")]
rng = random.Random(24)
start = time.perf_counter()
for _ in range(writes):
    i = rng.choice(ids)
    db.execute("BEGIN IMMEDIATE")
    db.execute("UPDATE listings SET votes_count = votes_count + 1 WHERE id = ?", (i,))
    db.execute(
        "INSERT INTO vote_tallies (week_start, listing_id, votes) VALUES (?, ?, 1) "
        "ON CONFLICT (week_start, listing_id) DO UPDATE SET votes = vote_tallies.votes + 1",
        (monday, i),
    )
    db.execute("COMMIT")
print(f"{(time.perf_counter() - start) * 1e6 / writes:.0f}")
EOF
}

postgres_votes() {
  local max
  max=$(psql "$1" -Atc "SELECT max(id) FROM listings WHERE status = 'live'")
  cat > "$SCRIPT" <<EOF
\set id random(1, $max)
BEGIN;
UPDATE listings SET votes_count = votes_count + 1 WHERE id = :id;
INSERT INTO vote_tallies (week_start, listing_id, votes) SELECT DATE '$MONDAY', id, 1 FROM listings
  WHERE id = :id AND status = 'live'
  ON CONFLICT (week_start, listing_id) DO UPDATE SET votes = vote_tallies.votes + 1;
COMMIT;
EOF
  pgbench -n -c1 -t "$WRITES" -f "$SCRIPT" "$1" 2>/dev/null |
    awk '/latency average/ {printf "%.0f\n", $4 * 1000}'
}

echo "µs a vote's writes (listing total and week tally), $WRITES a database a round"
for round in $(seq 1 "$ROUNDS"); do
  line="round $round"
  for url in "$@"; do
    case "$url" in
      sqlite://*) us=$(sqlite_votes "${url#sqlite://}") ;;
      postgres://*) us=$(postgres_votes "$url") ;;
      *) echo "not a database URL: $url"; exit 2 ;;
    esac
    line="$line | $url $us"
  done
  echo "$line"
done
