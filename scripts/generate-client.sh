#!/usr/bin/env bash
# Generates the Prisma client into lib/store/generated (npm's postinstall, and npm test when the
# schema changed). The client engine is JavaScript: nothing is downloaded. Prisma reads
# DATABASE_URL from the schema even to generate, so a default stands in when none is set.
set -euo pipefail
cd "$(dirname "$0")/.."
DATABASE_URL="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/atelier}" npx prisma generate >/dev/null
