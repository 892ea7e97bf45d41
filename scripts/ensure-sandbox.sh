#!/usr/bin/env bash
# Agents run in a bubblewrap sandbox: installs it with apt when missing (as root), else says
# what to install. Atelier itself refuses to start an agent other than the demo without it.
set -euo pipefail
if command -v bwrap >/dev/null && command -v setpriv >/dev/null; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "atelier: installing bubblewrap for the agents' sandbox" >&2
  (apt-get install -y -qq bubblewrap util-linux >/dev/null 2>&1) || (apt-get update -qq && apt-get install -y -qq bubblewrap util-linux >/dev/null)
else
  echo "atelier: agents run in a bubblewrap sandbox; install it (apt-get install bubblewrap) — until then only the demo agent runs." >&2
fi
