# Sourced by the PostgreSQL-alone benchmarks (bench/pg-ceiling.sh, bench/pg-boards.sh) after they set N,
# the listings: the database bench/http.sh loaded (NAME, DB_URL; HOSTPORT for pgbench), the server
# binary (BIN: BENCH_BIN, or this checkout's release build), the port to start it on (PORT) and the
# output directory (OUT), and start_server (below). Stops with a message when pgbench or the database
# is missing.
PORT="${BENCH_PORT:-18556}"
OUT="bench/out"
PG_ADMIN="${BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}"
NAME="launchdir_bench_$N"
DB_URL="${PG_ADMIN%/*}/$NAME"
HOSTPORT="${PG_ADMIN#*@}"; HOSTPORT="${HOSTPORT%%/*}"
mkdir -p "$OUT"
command -v pgbench >/dev/null || { echo "pgbench is needed (Debian: postgresql-client)"; exit 2; }
psql "$DB_URL" -Atc "SELECT 1" >/dev/null || { echo "no database $NAME: run BENCH_STORES=postgres bench/http.sh $N first"; exit 2; }
if [ -z "${BENCH_BIN:-}" ]; then
  cargo build --release -q --bin launchdir-api
fi
BIN="${BENCH_BIN:-target/release/launchdir-api}"

# The server on the benchmark database, read cache off and a rate limit no run reaches: start_server
# LOG starts it with its output to LOG and waits until it is ready (SERVER is its pid); the script's
# exit stops it.
SERVER=""
trap '[ -n "$SERVER" ] && kill $SERVER 2>/dev/null; wait 2>/dev/null || true' EXIT
start_server() {
  "$BIN" serve --bind "127.0.0.1:$PORT" --database-url "$DB_URL" --no-mcp --read-cache-secs 0 \
    --rate-limit 60000000 > "$1" 2>&1 &
  SERVER=$!
  for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.1; done
}
