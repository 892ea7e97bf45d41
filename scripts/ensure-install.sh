#!/usr/bin/env bash
# Installs the npm packages when they are missing or older than the lockfile, and generates
# the Prisma client (no download: the client engine is JavaScript).
set -euo pipefail
export CHECKPOINT_DISABLE=1 NEXT_TELEMETRY_DISABLED=1
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "atelier: installing npm packages" >&2
  npm ci --no-audit --no-fund --loglevel=error
fi
if [ ! -f lib/store/generated/client.ts ] || [ prisma/schema.prisma -nt lib/store/generated/client.ts ]; then
  bash scripts/generate-client.sh
fi
