-- The worker registry: each worker process registers at start and heartbeats here, inside the
-- lease TTL. A worker whose heartbeat is older than its stale window is dead. What acts on a
-- death, the dashboard's Workers page and the web's readiness read this table.
CREATE TABLE "workers" (
  "id"            TEXT PRIMARY KEY,
  "host"          TEXT NOT NULL,
  "pid"           INTEGER NOT NULL,
  "version"       TEXT NOT NULL,
  "slots"         INTEGER NOT NULL,
  "running"       INTEGER NOT NULL DEFAULT 0,
  "started_at"    TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  "heartbeat_at"  TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  "stopped_at"    TIMESTAMPTZ(3)
);
CREATE INDEX "workers_heartbeat_at" ON "workers" ("heartbeat_at") WHERE "stopped_at" IS NULL;
