#!/usr/bin/env bash
# Start throw-away PostgreSQL 15 and Redis servers on loopback for the tests.
#
#   source .ci/services.sh        # exports FLOWGRAPH_TEST_POSTGRES_URL / FLOWGRAPH_TEST_REDIS_URL
#   stop_test_services            # stops both and removes their data
#
# PostgreSQL's initdb/pg_ctl refuse to run as root, so the cluster belongs to the
# existing `postgres` user when we are root. Data lives in a temp folder.

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

as_postgres() {
  if [ "$(id -u)" = "0" ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_postgres() {
  local pg_bin=${PG_BIN:-/usr/local/bin}
  if [ ! -x "$pg_bin/initdb" ]; then
    echo "WARNING: $pg_bin/initdb not found; the PostgreSQL tests will skip" >&2
    return 0
  fi
  FG_PG_DIR=$(mktemp -d /tmp/flowgraph-pg.XXXXXX)
  chmod 755 "$FG_PG_DIR"
  [ "$(id -u)" = "0" ] && chown postgres "$FG_PG_DIR"
  local port
  port=$(free_port)
  as_postgres "$pg_bin/initdb" -D "$FG_PG_DIR/data" -U postgres -A trust --no-sync >"$FG_PG_DIR/initdb.log" 2>&1
  as_postgres "$pg_bin/pg_ctl" -D "$FG_PG_DIR/data" -l "$FG_PG_DIR/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $FG_PG_DIR -c fsync=off -c max_connections=300" start >/dev/null
  export FG_PG_DIR
  export FLOWGRAPH_TEST_POSTGRES_URL="postgresql://postgres@127.0.0.1:$port/postgres"
  echo "PostgreSQL at $FLOWGRAPH_TEST_POSTGRES_URL"
}

start_redis() {
  if ! command -v redis-server >/dev/null; then
    echo "WARNING: redis-server not found; the Redis tests will skip" >&2
    return 0
  fi
  FG_REDIS_DIR=$(mktemp -d /tmp/flowgraph-redis.XXXXXX)
  local port
  port=$(free_port)
  redis-server --port "$port" --bind 127.0.0.1 --dir "$FG_REDIS_DIR" --save '' --appendonly no \
    --daemonize yes --pidfile "$FG_REDIS_DIR/redis.pid" --logfile "$FG_REDIS_DIR/redis.log"
  for _ in $(seq 50); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  export FG_REDIS_DIR
  export FLOWGRAPH_TEST_REDIS_URL="redis://127.0.0.1:$port/0"
  echo "Redis at $FLOWGRAPH_TEST_REDIS_URL"
}

stop_test_services() {
  if [ -n "${FG_PG_DIR:-}" ] && [ -d "$FG_PG_DIR/data" ]; then
    as_postgres "${PG_BIN:-/usr/local/bin}/pg_ctl" -D "$FG_PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$FG_PG_DIR"
  fi
  if [ -n "${FG_REDIS_DIR:-}" ] && [ -f "$FG_REDIS_DIR/redis.pid" ]; then
    kill "$(cat "$FG_REDIS_DIR/redis.pid")" 2>/dev/null || true
    rm -rf "$FG_REDIS_DIR"
  fi
}

start_postgres
start_redis
