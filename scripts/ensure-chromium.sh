#!/usr/bin/env bash
# The dashboard tests drive Debian's Chromium (Playwright downloads no browser here).
set -euo pipefail
CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$CHROMIUM" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "atelier: installing Debian's chromium for the browser tests" >&2
    (apt-get install -y -qq chromium >/dev/null 2>&1) || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)
  else
    echo "atelier: the browser tests need Chromium at $CHROMIUM (apt-get install chromium) or CHROMIUM_PATH." >&2
    exit 1
  fi
fi
