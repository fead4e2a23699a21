#!/usr/bin/env bash
# Draft latency (issue 5): how long from submit_listing to a ready draft, with the built-in extractive
# drafter, for a fixture site served on loopback (python's http.server over fixtures/sites/<site>).
# Starts the release server on a fresh SQLite file with the fixture's host:port allowed, makes an account
# and an API key with the admin commands, submits the site N times one after another and polls get_draft
# every 10 ms. Prints p50, p95 and max. A measurement, not a test. Usage: bench/drafts.sh [n] [site]
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-50}"
SITE="${2:-acme-rockets}"
PORT="${BENCH_PORT:-18556}"
SITE_PORT="${BENCH_SITE_PORT:-18557}"
OUT="bench/out"
mkdir -p "$OUT"
cargo build --release -q --bin launchdir-api
BIN=target/release/launchdir-api
DB="$OUT/drafts-bench.db"
rm -f "$DB" "$DB-wal" "$DB-shm"
export DATABASE_URL="sqlite://$DB?mode=rwc"

# The fixture as test_support::FixtureSite serves it: /pricing answers pricing.html.
python3 - "$SITE_PORT" "fixtures/sites/$SITE" >/dev/null 2>&1 <<'PY' &
import functools, http.server, os, sys
class H(http.server.SimpleHTTPRequestHandler):
    def translate_path(self, path):
        p = super().translate_path(path)
        return p + ".html" if not os.path.exists(p) and os.path.exists(p + ".html") else p
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), functools.partial(H, directory=sys.argv[2])).serve_forever()
PY
SITE_PID=$!
# An account reads at most 30 sites a day (docs/SECURITY.md): one account per 30 drafts.
KEYS=""
for a in $(seq 1 $(( (N + 29) / 30 ))); do
  printf 'bench password\n' | "$BIN" admin create-user --email "bench$a@launch.test" --password-stdin >/dev/null
  KEYS="$KEYS,$("$BIN" admin create-api-key --email "bench$a@launch.test" --scopes account:read,listings:write | tail -n1)"
done
KEY="${KEYS#,}"
RUST_LOG=warn "$BIN" serve --bind "127.0.0.1:$PORT" --crawler-allowed-hosts "127.0.0.1:$SITE_PORT" --rate-limit 60000000 &
API_PID=$!
trap 'kill $API_PID $SITE_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.1; done

python3 - "$N" "http://127.0.0.1:$PORT" "$KEY" "http://127.0.0.1:$SITE_PORT/" <<'PY'
import json, sys, time, urllib.request
n, base, keys, site = int(sys.argv[1]), sys.argv[2], sys.argv[3].split(","), sys.argv[4]
key = keys[0]
def call(method, path, body=None):
    req = urllib.request.Request(base + "/api/v1" + path, method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.load(r)
took, statuses = [], {}
for i in range(n):
    key = keys[i // 30]
    t0 = time.perf_counter()
    d = call("POST", "/drafts", {"url": site})
    while d["status"] in ("crawling", "drafting"):
        time.sleep(0.01)
        d = call("GET", "/drafts/" + d["id"])
    took.append(time.perf_counter() - t0)
    statuses[d["status"]] = statuses.get(d["status"], 0) + 1
took.sort()
pick = lambda q: took[min(len(took) - 1, max(0, int(round(q * len(took))) - 1))]
print(f"drafts: {n} of {site} -> {statuses}")
print(f"submit to ready: p50 {pick(0.5)*1000:.0f} ms, p95 {pick(0.95)*1000:.0f} ms, max {took[-1]*1000:.0f} ms")
PY
