#!/usr/bin/env bash
# `npm test`: installs what is missing, prepares its own test database, runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
export CHECKPOINT_DISABLE=1 NEXT_TELEMETRY_DISABLED=1
export TEST_DATABASE_URL="${TEST_DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/atelier_test}"
export DATABASE_URL="$TEST_DATABASE_URL"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"

bash scripts/ensure-install.sh
bash scripts/ensure-services.sh
bash scripts/ensure-sandbox.sh
bash scripts/ensure-chromium.sh

echo "== typecheck" && npx tsc --noEmit
echo "== lint" && npx eslint . --max-warnings=0
echo "== unit and integration" && npx vitest run
if [ -f playwright.config.ts ] && ls e2e/*.spec.ts >/dev/null 2>&1; then
  echo "== browser" && npx playwright test
fi
