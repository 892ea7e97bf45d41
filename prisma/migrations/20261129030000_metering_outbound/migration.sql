-- Metering and outbound webhooks (lib/metering, lib/outbound).

-- The open-Run rate limit: one token bucket per scope (installation:<id>, repo:<owner/name>),
-- in Postgres so that a rolled-back open gives its token back with the rest of the transaction.
CREATE TABLE "rate_buckets" (
    "scope" TEXT NOT NULL,
    "tokens" DOUBLE PRECISION NOT NULL,
    "refilled_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "rate_buckets_pkey" PRIMARY KEY ("scope")
);

-- Needs you lists the Events a quota blocked and the Runs it holds.
CREATE INDEX "events_blocked_received_at" ON "events"("received_at") WHERE "status" = 'Blocked';
CREATE INDEX "runs_waiting_reason" ON "runs"("waiting_reason") WHERE "waiting_reason" IS NOT NULL;

-- The outbound worker looks up a Run's pending deliveries on every change of the Run.
CREATE INDEX "outbound_deliveries_pending_run_id" ON "outbound_deliveries"("run_id") WHERE "status" = 'pending';
