-- CreateSchema

-- CreateEnum
CREATE TYPE "RunState" AS ENUM ('Pending', 'Waiting', 'Queued', 'Running', 'Succeeded', 'Failed', 'Canceled');

-- CreateEnum
CREATE TYPE "AttemptState" AS ENUM ('Running', 'Succeeded', 'Failed', 'Canceled');

-- CreateEnum
CREATE TYPE "EventStatus" AS ENUM ('Claimed', 'Queued', 'Ignored', 'Blocked');

-- CreateTable
CREATE TABLE "installations" (
    "id" BIGINT NOT NULL,
    "account_login" TEXT NOT NULL,
    "account_type" TEXT NOT NULL DEFAULT 'Organization',
    "suspended_at" TIMESTAMP(3),
    "deleted_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "installations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "repositories" (
    "id" BIGINT NOT NULL,
    "installation_id" BIGINT NOT NULL,
    "full_name" TEXT NOT NULL,
    "private" BOOLEAN NOT NULL DEFAULT false,
    "default_branch" TEXT NOT NULL DEFAULT 'main',
    "removed_at" TIMESTAMP(3),
    "cursor_since" TIMESTAMP(3),
    "cursor_etag" TEXT,
    "cursor_open_pulls" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "cursor_loops" TEXT,
    "reset_pending" BOOLEAN NOT NULL DEFAULT false,
    "labels_etag" TEXT,
    "last_polled_at" TIMESTAMP(3),
    "poll_error" TEXT,
    "poll_error_at" TIMESTAMP(3),
    "config" JSONB,
    "config_error" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "repositories_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "items" (
    "key" TEXT NOT NULL,
    "repo" TEXT NOT NULL,
    "number" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "author" TEXT,
    "labels" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "draft" BOOLEAN NOT NULL DEFAULT false,
    "head_sha" TEXT,
    "projection" JSONB NOT NULL,
    "content_hash" TEXT NOT NULL,
    "github_updated_at" TIMESTAMP(3),
    "observed_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "items_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "loop_runtime" (
    "repo" TEXT NOT NULL,
    "loop" TEXT NOT NULL,
    "paused" BOOLEAN NOT NULL DEFAULT false,
    "paused_by" TEXT,
    "error" TEXT,
    "error_line" INTEGER,
    "last_polled_at" TIMESTAMP(3),
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "loop_runtime_pkey" PRIMARY KEY ("repo","loop")
);

-- CreateTable
CREATE TABLE "events" (
    "id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "loop" TEXT NOT NULL,
    "repo" TEXT NOT NULL,
    "item_key" TEXT NOT NULL,
    "number" INTEGER,
    "content_hash" TEXT,
    "generation" INTEGER NOT NULL DEFAULT 0,
    "status" "EventStatus" NOT NULL,
    "reason" TEXT,
    "run_id" TEXT,
    "submission" JSONB NOT NULL,
    "received_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ignored_at" TIMESTAMP(3),

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "runs" (
    "id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "loop" TEXT NOT NULL,
    "repo" TEXT NOT NULL,
    "item_key" TEXT NOT NULL,
    "number" INTEGER,
    "state" "RunState" NOT NULL,
    "cancel_reason" TEXT,
    "superseded_by" TEXT,
    "reserved_generation" INTEGER,
    "agent" TEXT NOT NULL,
    "prompt" TEXT NOT NULL,
    "approval_required" BOOLEAN NOT NULL,
    "received_at" TIMESTAMP(3) NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMP(3),
    "ended_at" TIMESTAMP(3),
    "waiting_reason" TEXT,
    "resolved_failure_attempt_id" TEXT,
    "branch" TEXT,
    "pull_request_number" INTEGER,
    "head_sha" TEXT,

    CONSTRAINT "runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "attempts" (
    "id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "step" TEXT NOT NULL DEFAULT 'agent',
    "number" INTEGER NOT NULL,
    "state" "AttemptState" NOT NULL,
    "lease_token" TEXT,
    "worker_id" TEXT,
    "started_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ended_at" TIMESTAMP(3),
    "failure_kind" TEXT,
    "failure_category" TEXT,
    "retryable" BOOLEAN,
    "failure_message" TEXT,
    "summary" TEXT,
    "duration_ms" INTEGER,
    "tokens_in" INTEGER,
    "tokens_out" INTEGER,
    "cost_usd" DECIMAL(12,6),
    "cost_estimated" BOOLEAN NOT NULL DEFAULT false,
    "agent" TEXT,

    CONSTRAINT "attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "transcript_entries" (
    "id" BIGSERIAL NOT NULL,
    "attempt_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "stream" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "transcript_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "approvals" (
    "run_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "approved_by" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "approvals_pkey" PRIMARY KEY ("run_id")
);

-- CreateTable
CREATE TABLE "cycle_budgets" (
    "item_key" TEXT NOT NULL,
    "repo" TEXT NOT NULL,
    "generation" INTEGER NOT NULL DEFAULT 0,
    "ask" JSONB,
    "asked_at" TIMESTAMP(3),
    "reset_at" TIMESTAMP(3),
    "reset_by" TEXT,

    CONSTRAINT "cycle_budgets_pkey" PRIMARY KEY ("item_key")
);

-- CreateTable
CREATE TABLE "audit_log" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "repo" TEXT,
    "run_id" TEXT,
    "detail" JSONB,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "action" TEXT,
    "status" TEXT NOT NULL,
    "installation_id" BIGINT,
    "received_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "quotas" (
    "id" BIGSERIAL NOT NULL,
    "installation_id" BIGINT,
    "repository_id" BIGINT,
    "monthly_runs" INTEGER NOT NULL DEFAULT 0,
    "monthly_cost_usd" DECIMAL(12,2) NOT NULL DEFAULT 0,
    "max_concurrent" INTEGER NOT NULL DEFAULT 0,
    "open_rate_per_minute" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "quotas_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "usage_counters" (
    "scope" TEXT NOT NULL,
    "month" TEXT NOT NULL,
    "runs" INTEGER NOT NULL DEFAULT 0,
    "cost_usd" DECIMAL(14,6) NOT NULL DEFAULT 0,
    "minutes" DECIMAL(14,3) NOT NULL DEFAULT 0,

    CONSTRAINT "usage_counters_pkey" PRIMARY KEY ("scope","month")
);

-- CreateTable
CREATE TABLE "outbound_hooks" (
    "id" BIGSERIAL NOT NULL,
    "installation_id" BIGINT,
    "repo" TEXT,
    "loop" TEXT,
    "url" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "outbound_hooks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbound_deliveries" (
    "id" BIGSERIAL NOT NULL,
    "hook_id" BIGINT NOT NULL,
    "run_id" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_status" INTEGER,
    "last_error" TEXT,
    "next_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMP(3),

    CONSTRAINT "outbound_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "run_mirrors" (
    "run_id" TEXT NOT NULL,
    "check_run_id" BIGINT,
    "check_sha" TEXT,
    "comment_id" BIGINT,
    "last_synced" TEXT,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "run_mirrors_pkey" PRIMARY KEY ("run_id")
);

-- CreateTable
CREATE TABLE "users" (
    "id" TEXT NOT NULL,
    "login" TEXT NOT NULL,
    "name" TEXT,
    "avatar_url" TEXT,
    "token" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sessions" (
    "session_token" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "expires" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "sessions_pkey" PRIMARY KEY ("session_token")
);

-- CreateTable
CREATE TABLE "app_credentials" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "app_id" BIGINT NOT NULL,
    "slug" TEXT NOT NULL,
    "private_key" TEXT NOT NULL,
    "webhook_secret" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "client_secret" TEXT NOT NULL,
    "html_url" TEXT NOT NULL,
    "base_url" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "app_credentials_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "repositories_full_name_key" ON "repositories"("full_name");

-- CreateIndex
CREATE INDEX "repositories_installation_id_idx" ON "repositories"("installation_id");

-- CreateIndex
CREATE INDEX "items_repo_state_idx" ON "items"("repo", "state");

-- CreateIndex
CREATE UNIQUE INDEX "items_repo_number_key" ON "items"("repo", "number");

-- CreateIndex
CREATE INDEX "events_loop_item_key_status_idx" ON "events"("loop", "item_key", "status");

-- CreateIndex
CREATE UNIQUE INDEX "runs_event_id_key" ON "runs"("event_id");

-- CreateIndex
CREATE INDEX "runs_loop_item_key_state_idx" ON "runs"("loop", "item_key", "state");

-- CreateIndex
CREATE INDEX "runs_state_received_at_idx" ON "runs"("state", "received_at");

-- CreateIndex
CREATE INDEX "runs_repo_state_idx" ON "runs"("repo", "state");

-- CreateIndex
CREATE INDEX "runs_item_key_idx" ON "runs"("item_key");

-- CreateIndex
CREATE INDEX "attempts_state_idx" ON "attempts"("state");

-- CreateIndex
CREATE INDEX "attempts_ended_at_idx" ON "attempts"("ended_at");

-- CreateIndex
CREATE UNIQUE INDEX "attempts_run_id_step_number_key" ON "attempts"("run_id", "step", "number");

-- CreateIndex
CREATE INDEX "transcript_entries_attempt_id_id_idx" ON "transcript_entries"("attempt_id", "id");

-- CreateIndex
CREATE INDEX "transcript_entries_run_id_id_idx" ON "transcript_entries"("run_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "approvals_event_id_key" ON "approvals"("event_id");

-- CreateIndex
CREATE INDEX "cycle_budgets_repo_idx" ON "cycle_budgets"("repo");

-- CreateIndex
CREATE INDEX "audit_log_run_id_idx" ON "audit_log"("run_id");

-- CreateIndex
CREATE INDEX "audit_log_repo_at_idx" ON "audit_log"("repo", "at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_received_at_idx" ON "webhook_deliveries"("received_at");

-- CreateIndex
CREATE UNIQUE INDEX "quotas_installation_id_key" ON "quotas"("installation_id");

-- CreateIndex
CREATE UNIQUE INDEX "quotas_repository_id_key" ON "quotas"("repository_id");

-- CreateIndex
CREATE INDEX "outbound_deliveries_status_next_at_idx" ON "outbound_deliveries"("status", "next_at");

-- CreateIndex
CREATE UNIQUE INDEX "users_login_key" ON "users"("login");

-- AddForeignKey
ALTER TABLE "repositories" ADD CONSTRAINT "repositories_installation_id_fkey" FOREIGN KEY ("installation_id") REFERENCES "installations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attempts" ADD CONSTRAINT "attempts_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "quotas" ADD CONSTRAINT "quotas_installation_id_fkey" FOREIGN KEY ("installation_id") REFERENCES "installations"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "quotas" ADD CONSTRAINT "quotas_repository_id_fkey" FOREIGN KEY ("repository_id") REFERENCES "repositories"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Invariant 3, held by the database too: never two open Runs of one Loop on one Item.
CREATE UNIQUE INDEX "runs_one_open_per_loop_item" ON "runs"("loop", "item_key")
  WHERE "state" IN ('Pending', 'Waiting', 'Queued', 'Running');
-- Budget admission counts the reservations of a Loop on an Item in one generation.
CREATE INDEX "runs_reservations" ON "runs"("loop", "item_key", "reserved_generation")
  WHERE "reserved_generation" IS NOT NULL;
