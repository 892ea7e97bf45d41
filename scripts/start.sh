#!/usr/bin/env bash
# `npm start`: installs what is missing, applies the migrations, builds, and starts the web
# process and the worker. With no GitHub App configured — none in the environment, none
# registered from the dashboard's /setup page — and a local ATELIER_PUBLIC_URL (or with
# ATELIER_SANDBOX=1) it starts the sandbox: the built-in GitHub simulator, seeded with a demo
# organization, and points Atelier at it. The decision is lib/setup/start-decision.ts.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f .env ] && set -a && . ./.env && set +a
export CHECKPOINT_DISABLE=1 NEXT_TELEMETRY_DISABLED=1
export DATABASE_URL="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/atelier}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
export PORT="${PORT:-3000}"
export ATELIER_PUBLIC_URL="${ATELIER_PUBLIC_URL:-http://localhost:$PORT}"

bash scripts/ensure-install.sh
bash scripts/ensure-services.sh
bash scripts/ensure-sandbox.sh
npx tsx scripts/prepare-db.ts

pids=()
stop() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait; }
trap stop EXIT INT TERM

app_source="$(npx tsx scripts/app-source.ts)"
if [ "$app_source" = sandbox ]; then
  export SIM_PORT="${SIM_PORT:-3001}"
  mkdir -p .atelier
  export ATELIER_SANDBOX_APP_FILE="$PWD/.atelier/sandbox-app.json"
  rm -f "$ATELIER_SANDBOX_APP_FILE"
  echo "atelier: no GitHub App configured — starting the sandbox GitHub simulator on port $SIM_PORT" >&2
  SIM_APP_FILE="$ATELIER_SANDBOX_APP_FILE" SIM_WEBHOOK_URL="http://127.0.0.1:$PORT/api/github/webhooks" \
    npx tsx scripts/sim.ts & pids+=($!)
  for _ in $(seq 1 100); do [ -s "$ATELIER_SANDBOX_APP_FILE" ] && break; sleep 0.2; done
  [ -s "$ATELIER_SANDBOX_APP_FILE" ] || { echo "atelier: the simulator did not start" >&2; exit 1; }
fi

if [ ! -f .next/BUILD_ID ] || [ -n "$(find app lib public next.config.js proxy.ts instrumentation.ts -newer .next/BUILD_ID -print -quit 2>/dev/null)" ]; then
  echo "atelier: building the dashboard" >&2
  npx next build >/dev/null
fi

[ "$app_source" = database ] && echo "atelier: using the GitHub App registered from /setup" >&2
# the worker signs no cookie and no OAuth exchange: it never holds those secrets; with no App
# yet ("setup") there is no worker: the dashboard prints the link to /setup
[ "$app_source" = setup ] || { env -u AUTH_SECRET -u NEXTAUTH_SECRET -u GITHUB_CLIENT_SECRET npx tsx jobs/worker.ts & pids+=($!); }
npx next start -p "$PORT" & pids+=($!)
echo "atelier: dashboard on $ATELIER_PUBLIC_URL" >&2
[ -n "${SIM_PORT:-}" ] && echo "atelier: sandbox GitHub on http://127.0.0.1:$SIM_PORT/_sim" >&2
wait -n "${pids[@]}"
