#!/usr/bin/env bash
# The dashboard tests drive Debian's Chromium headless shell (Playwright downloads no browser
# here): the browser without a window system, which costs the suite a third less CPU than the
# full Chromium in headless mode (ADR 0095).
set -euo pipefail
CHROMIUM="${CHROMIUM_PATH:-/usr/lib/chromium/chromium-headless-shell}"
if [ ! -x "$CHROMIUM" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "atelier: installing Debian's chromium-headless-shell for the browser tests" >&2
    (apt-get install -y -qq chromium-headless-shell >/dev/null 2>&1) || (apt-get update -qq && apt-get install -y -qq chromium-headless-shell >/dev/null)
  else
    echo "atelier: the browser tests need Chromium's headless shell at $CHROMIUM (apt-get install chromium-headless-shell) or CHROMIUM_PATH." >&2
    exit 1
  fi
fi
