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

# Typecheck, lint and the dashboard's build need no service and use one core each at most of
# their time: run side by side, each one's output printed whole when all are done.
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
side_by_side() {
  local name="$1"; shift
  ( start=$SECONDS; if "$@" >"$logs/$name.log" 2>&1; then echo "ok $((SECONDS - start))" >"$logs/$name.rc"; else echo "failed $((SECONDS - start))" >"$logs/$name.rc"; fi ) &
}
side_by_side typecheck npx tsc --noEmit
side_by_side lint npx eslint . --max-warnings=0
side_by_side build npx tsx scripts/build-dashboard.ts
wait
failed=0
for name in typecheck lint build; do
  read -r verdict seconds <"$logs/$name.rc"
  echo "== $name: $verdict in ${seconds} s"
  if [ "$verdict" != ok ]; then cat "$logs/$name.log"; failed=1; fi
done
[ "$failed" = 0 ]
echo "== unit and integration" && ATELIER_TEST_SKIP_BUILD=1 npx vitest run
if [ -f playwright.config.ts ] && ls e2e/*.spec.ts >/dev/null 2>&1; then
  echo "== browser" && npx playwright test
fi
