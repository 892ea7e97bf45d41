#!/usr/bin/env bash
# `npm start`: installs what is missing, applies the migrations, then hands over to the
# supervisor (scripts/supervise.ts), which checks the ports, builds the dashboard when needed
# and runs the web process and the worker. With no GitHub App configured — none in the
# environment, none registered from the dashboard's /setup page — and a local
# ATELIER_PUBLIC_URL (or with ATELIER_SANDBOX=1) it also starts the sandbox: the built-in
# GitHub simulator, seeded with a demo organization, and points Atelier at it. The decision
# is lib/setup/start-decision.ts.
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

app_source="$(npx tsx scripts/app-source.ts)"
mode=()
[ "$app_source" = sandbox ] && mode=(--sandbox)
# with no App yet ("setup") there is no worker: the dashboard prints the link to /setup
[ "$app_source" = setup ] && mode=(--setup)
[ "$app_source" = database ] && echo "atelier: using the GitHub App registered from /setup" >&2
exec node --import tsx scripts/supervise.ts "${mode[@]}"
