#!/usr/bin/env bash
# Makes sure PostgreSQL and Redis answer at DATABASE_URL / REDIS_URL (or the local defaults).
# Where nothing listens locally it starts the installed servers; otherwise it says what to install.
set -euo pipefail

DATABASE_URL="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/atelier}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"

pg_host=$(node -e 'const u=new URL(process.argv[1]);console.log(u.hostname||"127.0.0.1")' "$DATABASE_URL")
pg_port=$(node -e 'const u=new URL(process.argv[1]);console.log(u.port||5432)' "$DATABASE_URL")
redis_host=$(node -e 'const u=new URL(process.argv[1]);console.log(u.hostname||"127.0.0.1")' "$REDIS_URL")
redis_port=$(node -e 'const u=new URL(process.argv[1]);console.log(u.port||6379)' "$REDIS_URL")

listening() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
is_local() { [[ "$1" == "127.0.0.1" || "$1" == "localhost" || "$1" == "::1" ]]; }

wait_for() {
  for _ in $(seq 1 50); do listening "$1" "$2" && return 0; sleep 0.2; done
  return 1
}

if ! listening "$pg_host" "$pg_port"; then
  if is_local "$pg_host" && command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
    echo "atelier: starting the local PostgreSQL" >&2
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
    wait_for "$pg_host" "$pg_port" || { echo "atelier: PostgreSQL did not start; see its log under /var/log/postgresql." >&2; exit 1; }
  else
    echo "atelier: nothing answers at $pg_host:$pg_port — install PostgreSQL 15+ (apt-get install postgresql) or set DATABASE_URL." >&2
    exit 1
  fi
fi

if ! listening "$redis_host" "$redis_port"; then
  if is_local "$redis_host" && command -v redis-server >/dev/null; then
    echo "atelier: starting the local Redis" >&2
    mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$redis_port" --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/ci.log
    wait_for "$redis_host" "$redis_port" || { echo "atelier: Redis did not start; see /var/log/redis/ci.log." >&2; exit 1; }
  else
    echo "atelier: nothing answers at $redis_host:$redis_port — install Redis 7 (apt-get install redis-server) or set REDIS_URL." >&2
    exit 1
  fi
fi
