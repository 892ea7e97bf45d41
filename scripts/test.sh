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

# Two stages, each of jobs side by side, each job's output printed whole when its stage ends:
# first the dashboard's production build (the browser specs and the files that start `next
# start` need it), then everything else at once: the test files, the browser specs, the type
# check and the linter. The tests mostly wait on processes they started, so the type check and
# the linter, niced, use cores that would idle. The specs and the files share nothing: the specs have
# their own databases and Redis database (e2e/global-setup.ts), the files theirs
# (test/support/global-setup.ts).
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
side_by_side() {
  local name="$1"; shift
  ( start=$SECONDS; if "$@" >"$logs/$name.log" 2>&1; then echo "ok $((SECONDS - start))" >"$logs/$name.rc"; else echo "failed $((SECONDS - start))" >"$logs/$name.rc"; fi ) &
}
stage() {
  wait
  local failed=0 name verdict seconds
  for name in "$@"; do
    read -r verdict seconds <"$logs/$name.rc"
    echo "== $name: $verdict in ${seconds} s"
    if [ "$verdict" != ok ] || [ "$name" = "unit and integration" ] || [ "$name" = browser ]; then cat "$logs/$name.log"; fi
    [ "$verdict" = ok ] || failed=1
  done
  [ "$failed" = 0 ]
}
side_by_side build npx tsx scripts/build-dashboard.ts
stage build
jobs=("unit and integration")
side_by_side "unit and integration" env ATELIER_TEST_SKIP_BUILD=1 npx vitest run
if [ -f playwright.config.ts ] && ls e2e/*.spec.ts >/dev/null 2>&1; then
  side_by_side browser npx playwright test
  jobs+=(browser)
fi
# niced: they take the cores the tests leave idle, never a test's time (a worker's heartbeat)
side_by_side typecheck nice -n 15 npx tsc --noEmit
side_by_side lint nice -n 15 npx eslint . --max-warnings=0
jobs+=(typecheck lint)
stage "${jobs[@]}"
