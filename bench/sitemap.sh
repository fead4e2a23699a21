#!/usr/bin/env bash
# Sitemaps at a million listings (issue 23): builds a SQLite directory of about 1 000 000 listings once
# (10 000 generated with `admin generate-demo`, then copied 99 times with new ids and slugs, the search
# index kept by its triggers), starts the release server with the read cache off, and fetches the
# sitemap index and every listings file of it, twice (cold, then with SQLite's pages warm). Prints each
# file's time, size and address count, and the server's peak anonymous and file-backed memory.
# Loopback only. Usage: bench/sitemap.sh [copies]   (copies of the 10 000, default 100)
set -euo pipefail
cd "$(dirname "$0")/.."
COPIES="${1:-100}"
PORT="${BENCH_PORT:-18556}"
OUT="bench/out"
mkdir -p "$OUT"

cargo build --release -q --bin launchdir-api
BIN=target/release/launchdir-api
DB="$OUT/sitemap-$COPIES.db"
if [ ! -f "$DB" ]; then
  echo "building $DB (once; delete the file to rebuild)"
  RUST_LOG=warn "$BIN" admin generate-demo --listings 10000 --database-url "sqlite://$DB?mode=rwc" >/dev/null
  python3 - "$DB" "$COPIES" <<'PY'
import sqlite3, sys, time
db, copies = sys.argv[1], int(sys.argv[2])
c = sqlite3.connect(db)
cols = [r[1] for r in c.execute("PRAGMA table_info(listings)")]
(base,) = c.execute("SELECT MAX(id) FROM listings").fetchone()
t = time.time()
for k in range(1, copies):
    picked = ", ".join(
        f"id + {k * base}" if col == "id" else
        f"slug || '-c{k}'" if col == "slug" else
        "NULL" if col == "draft_id" else col
        for col in cols)
    c.execute(f"INSERT INTO listings ({', '.join(cols)}) SELECT {picked} FROM listings WHERE id <= {base}")
    c.commit()
(n, live) = c.execute("SELECT COUNT(*), SUM(status = 'live') FROM listings").fetchone()
print(f"copied to {n} listings ({live} live) in {time.time() - t:.0f} s")
PY
fi

SERVER=""
trap '[ -n "$SERVER" ] && kill $SERVER 2>/dev/null; wait 2>/dev/null || true' EXIT
BASE="http://127.0.0.1:$PORT"
RUST_LOG=warn "$BIN" serve --bind "127.0.0.1:$PORT" --database-url "sqlite://$DB?mode=rwc" --no-mcp \
  --read-cache-secs 0 --rate-limit 60000000 &
SERVER=$!
for _ in $(seq 1 1200); do curl -sf "$BASE/readyz" >/dev/null && break; sleep 0.1; done

python3 - "$BASE" <<'PY'
import re, sys, time, urllib.request
base = sys.argv[1]
def get(path):
    t = time.perf_counter()
    with urllib.request.urlopen(base + path) as r:
        body = r.read()
        status = r.status
    return status, time.perf_counter() - t, body
_, _, index = get("/sitemap.xml")
files = sorted(set(re.findall(rb"listings-(\d+)\.xml", index)), key=int)
print(f"sitemap index: {len(files)} listings files")
for round in ("cold", "warm"):
    print(f"\n{round:<6} {'file':<20} {'status':>6} {'ms':>9} {'bytes':>10} {'urls':>7}")
    total = worst = 0.0
    urls_all = 0
    for path in ["/sitemap.xml"] + [f"/sitemaps/listings-{n.decode()}.xml" for n in files]:
        status, secs, body = get(path)
        urls = body.count(b"<loc>")
        urls_all += urls if "listings-" in path else 0
        total += secs; worst = max(worst, secs)
        print(f"{'':<6} {path.rsplit('/', 1)[1]:<20} {status:>6} {secs * 1000:>9.1f} {len(body):>10} {urls:>7}")
    print(f"{round}: {urls_all} listing addresses in {total:.2f} s, the slowest file {worst * 1000:.0f} ms")
PY
echo -n "server memory now: "
awk '/RssAnon|RssFile/ {printf "%s %d MiB  ", $1, $2/1024}' "/proc/$SERVER/status"; echo
