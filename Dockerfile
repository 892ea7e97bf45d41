# syntax=docker/dockerfile:1
# One image for every process of Atelier: the web (`next start`), the worker (`tsx jobs/worker.ts`)
# and the migrations (`prisma migrate deploy`) — the command picks which. See docs/operating.md, "Deploying".

# ── 1. dependencies, from the lock file only (cached while package*.json do not change) ────────
FROM node:20-bookworm-slim AS deps
WORKDIR /app
ENV CHECKPOINT_DISABLE=1 NEXT_TELEMETRY_DISABLED=1
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error

# ── 2. build: the Prisma client and the Next.js dashboard ───────────────────────────────────────
FROM deps AS build
COPY . .
# generate only reads the schema; it needs a URL of the right shape, never a database
RUN DATABASE_URL=postgresql://build@127.0.0.1:5432/build npx prisma generate \
 && npx next build

# ── 3. runtime: node, git, bubblewrap (the agents' sandbox), socat (its egress bridge) ──────────
FROM node:20-bookworm-slim AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap git socat ca-certificates tini \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 --user-group atelier \
 && mkdir -p /var/lib/atelier/workspaces \
 && chown -R atelier:atelier /var/lib/atelier
WORKDIR /app
ENV NODE_ENV=production CHECKPOINT_DISABLE=1 NEXT_TELEMETRY_DISABLED=1 \
    PORT=3000 ATELIER_WORKSPACE=/var/lib/atelier/workspaces ATELIER_WORKER_HEALTH_PORT=9464
COPY --from=build --chown=atelier:atelier /app ./
# never root: the agents' sandbox then keeps this uid inside unprivileged user namespaces
USER 10001:10001
EXPOSE 3000 9464
# tini hands SIGTERM to the process (the worker's drain), and a second one stops it at once
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node_modules/.bin/next", "start"]
