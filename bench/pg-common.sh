# Sourced by the PostgreSQL-alone benchmarks (bench/pg-ceiling.sh, bench/pg-boards.sh) after they set N,
# the listings: the database bench/http.sh loaded (NAME, DB_URL; HOSTPORT for pgbench), the server
# binary (BIN: BENCH_BIN, or this checkout's release build), the port to start it on (PORT) and the
# output directory (OUT). Stops with a message when pgbench or the database is missing.
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
