-- Insights and retention (ADRs 0084, 0086).
-- A Run keeps what became of its pull request: when it first had one (pull_request_at), and the
-- state GitHub last showed once it left "open" (pull_request_state: merged or closed) with when
-- (pull_request_closed_at: GitHub's mergedAt, else closedAt). The poll that stores a closed or merged
-- pull request writes them (lib/store/runs/pull-request-outcomes.ts), and a Run that gets its pull
-- request number once GitHub already shows it closed or merged reads them here, from the Item.
-- (The plpgsql body is an escape string that writes each semicolon as \073: the migration engine
-- cuts a script at every semicolon, even inside a string.)

ALTER TABLE "runs" ADD COLUMN "pull_request_at" TIMESTAMP(3),
                   ADD COLUMN "pull_request_state" TEXT,
                   ADD COLUMN "pull_request_closed_at" TIMESTAMP(3);

CREATE OR REPLACE FUNCTION "runs_note_pull_request"() RETURNS trigger LANGUAGE plpgsql AS E'
DECLARE
  pr record\073
BEGIN
  IF NEW."pull_request_number" IS NULL OR NEW."pull_request_number" IS NOT DISTINCT FROM OLD."pull_request_number" THEN
    RETURN NEW\073
  END IF\073
  NEW."pull_request_at" := COALESCE(NEW."pull_request_at", now())\073
  SELECT i."state", i."projection" INTO pr FROM "items" i WHERE i."repo" = NEW."repo" AND i."number" = NEW."pull_request_number"\073
  IF FOUND AND pr."state" IN (''merged'', ''closed'') THEN
    NEW."pull_request_state" := pr."state"\073
    NEW."pull_request_closed_at" := COALESCE(pr."projection"->>''mergedAt'', pr."projection"->>''closedAt'')::timestamptz AT TIME ZONE ''UTC''\073
  ELSE
    NEW."pull_request_state" := NULL\073
    NEW."pull_request_closed_at" := NULL\073
  END IF\073
  RETURN NEW\073
END'
;

CREATE TRIGGER "runs_note_pull_request" BEFORE UPDATE OF "pull_request_number" ON "runs"
  FOR EACH ROW EXECUTE FUNCTION "runs_note_pull_request"();

-- Retention: an Attempt whose transcript was cut to its summary and last lines, an Event whose
-- payload (its submission) was shed, its key kept, and what each sweep pruned, for the Usage page.
ALTER TABLE "attempts" ADD COLUMN "transcript_pruned_at" TIMESTAMP(3);
ALTER TABLE "events" ADD COLUMN "payload_pruned_at" TIMESTAMP(3);

CREATE TABLE "retention_sweeps" (
    "id" BIGSERIAL NOT NULL,
    "kind" TEXT NOT NULL,
    "rows" INTEGER NOT NULL,
    "horizon" TIMESTAMP(3) NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "retention_sweeps_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "retention_sweeps_kind_at_idx" ON "retention_sweeps"("kind", "at");

-- What Insights reads of a Run's Attempts, kept on the Run as each Attempt closes (ADR 0084): how
-- many closed, their cost and agent time, how many verify checked and passed, and the category of
-- each that failed. Insights then reads the Runs of a range alone, without their Attempts.
ALTER TABLE "runs" ADD COLUMN "attempts_closed" INTEGER NOT NULL DEFAULT 0,
                   ADD COLUMN "attempts_cost_usd" DECIMAL(14,6) NOT NULL DEFAULT 0,
                   ADD COLUMN "attempts_ms" BIGINT NOT NULL DEFAULT 0,
                   ADD COLUMN "verify_checked" INTEGER NOT NULL DEFAULT 0,
                   ADD COLUMN "verify_passed" INTEGER NOT NULL DEFAULT 0,
                   ADD COLUMN "failure_categories" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];

CREATE OR REPLACE FUNCTION "attempts_roll_up_into_run"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  IF NEW."state" = ''Running'' OR (TG_OP = ''UPDATE'' AND OLD."state" <> ''Running'') THEN
    RETURN NULL\073
  END IF\073
  UPDATE "runs" SET "attempts_closed" = "attempts_closed" + 1,
         "attempts_cost_usd" = "attempts_cost_usd" + COALESCE(NEW."cost_usd", 0),
         "attempts_ms" = "attempts_ms" + COALESCE(NEW."duration_ms", 0),
         "verify_checked" = "verify_checked" + (NEW."verify" IS NOT NULL)::int,
         "verify_passed" = "verify_passed" + COALESCE((NEW."verify"->>''passed'')::boolean, false)::int,
         "failure_categories" = CASE WHEN NEW."state" = ''Failed'' THEN "failure_categories" || COALESCE(NEW."failure_category", ''unknown'')
                                     ELSE "failure_categories" END
   WHERE "id" = NEW."run_id"\073
  RETURN NULL\073
END'
;

CREATE TRIGGER "attempts_roll_up_into_run" AFTER INSERT OR UPDATE OF "state" ON "attempts"
  FOR EACH ROW EXECUTE FUNCTION "attempts_roll_up_into_run"();

-- the Attempts closed before this migration
UPDATE "runs" r SET "attempts_closed" = a."closed", "attempts_cost_usd" = a."cost", "attempts_ms" = a."ms",
       "verify_checked" = a."checked", "verify_passed" = a."passed", "failure_categories" = a."categories"
  FROM (SELECT "run_id", count(*)::int AS "closed", COALESCE(sum("cost_usd"), 0) AS "cost", COALESCE(sum("duration_ms"), 0) AS "ms",
               count(*) FILTER (WHERE "verify" IS NOT NULL)::int AS "checked",
               count(*) FILTER (WHERE ("verify"->>'passed')::boolean)::int AS "passed",
               COALESCE(array_agg(COALESCE("failure_category", 'unknown') ORDER BY "number") FILTER (WHERE "state" = 'Failed'), ARRAY[]::TEXT[]) AS "categories"
          FROM "attempts" WHERE "state" <> 'Running' GROUP BY "run_id") a
 WHERE r."id" = a."run_id";

-- Retention's batches start from the oldest rows not pruned yet (ADR 0085)
CREATE INDEX "attempts_transcript_kept" ON "attempts"("ended_at") WHERE "transcript_pruned_at" IS NULL AND "ended_at" IS NOT NULL;
CREATE INDEX "events_payload_kept" ON "events"("received_at") WHERE "payload_pruned_at" IS NULL;
