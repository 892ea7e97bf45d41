-- Insights read roll-ups, not Runs (ADR 0092). One row per (repository id, Loop, agent, day the
-- trigger was received, UTC) holds what Insights reads of its Runs: counts by outcome, sums of what
-- their Attempts cost and took (kept on each Run by attempts_roll_up_into_run, ADR 0084), the
-- failed Attempts by category, and — for the percentiles and the distinct merged pull requests,
-- which no sum can give — each Run's trigger→start, trigger→pull request and trigger→merge in
-- milliseconds and its merged pull request's number. A trigger on runs keeps it: every change of
-- a Run takes the Run's old contribution out of its old row and puts the new one into its new row.
-- (The plpgsql bodies are escape strings that write each semicolon as \073: the migration engine
-- cuts a script at every semicolon, even inside a string.)

CREATE TABLE "insights_days" (
    "repository_id" BIGINT NOT NULL,
    "day" DATE NOT NULL,
    "loop" TEXT NOT NULL,
    "agent" TEXT NOT NULL,
    "runs" INTEGER NOT NULL DEFAULT 0,
    "merged" INTEGER NOT NULL DEFAULT 0,
    "closed" INTEGER NOT NULL DEFAULT 0,
    "open" INTEGER NOT NULL DEFAULT 0,
    "no_pull_request" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "canceled" INTEGER NOT NULL DEFAULT 0,
    "in_progress" INTEGER NOT NULL DEFAULT 0,
    "succeeded" INTEGER NOT NULL DEFAULT 0,
    "succeeded_attempts" INTEGER NOT NULL DEFAULT 0,
    "cost_usd" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "agent_ms" BIGINT NOT NULL DEFAULT 0,
    "verified" INTEGER NOT NULL DEFAULT 0,
    "verify_passed" INTEGER NOT NULL DEFAULT 0,
    "failures" JSONB NOT NULL DEFAULT '{}',
    "to_start_ms" BIGINT[] NOT NULL DEFAULT '{}',
    "to_pull_request_ms" BIGINT[] NOT NULL DEFAULT '{}',
    "to_merge_ms" BIGINT[] NOT NULL DEFAULT '{}',
    "merged_pull_requests" INTEGER[] NOT NULL DEFAULT '{}',

    CONSTRAINT "insights_days_pkey" PRIMARY KEY ("repository_id", "day", "loop", "agent")
);

-- `arr` without one occurrence of `v` (array_remove takes them all), unchanged when v is null or absent
CREATE FUNCTION "insights_remove_one"(arr anyarray, v anyelement) RETURNS anyarray LANGUAGE sql IMMUTABLE AS E'
  SELECT CASE WHEN p IS NULL THEN arr ELSE arr[:p - 1] || arr[p + 1:] END FROM (SELECT array_position(arr, v) AS p) x
';

-- `counts` (category → number) with each of `categories` counted `sign` more times
CREATE FUNCTION "insights_count_into"(counts jsonb, categories text[], sign integer) RETURNS jsonb LANGUAGE sql IMMUTABLE AS E'
  SELECT counts || COALESCE(jsonb_object_agg(c, COALESCE((counts->>c)::int, 0) + n * sign), ''{}''::jsonb)
    FROM (SELECT c, count(*)::int AS n FROM unnest(categories) c GROUP BY c) x
';

-- Adds (sign 1) or takes out (sign -1) what Run `r` counts for in its day's row. A Run's outcome,
-- first match: its pull request merged, closed, the Run Failed, Canceled, its pull request open,
-- Succeeded without one, else in progress (docs/insights.md).
CREATE FUNCTION "insights_days_apply"(r "runs", sgn integer) RETURNS void LANGUAGE plpgsql AS E'
DECLARE
  v_outcome text\073
  v_to_start bigint\073
  v_to_pull_request bigint\073
  v_to_merge bigint\073
  v_merged_pr integer\073
  v_succeeded boolean\073
BEGIN
  IF r."repository_id" IS NULL THEN
    RETURN\073
  END IF\073
  v_outcome := CASE WHEN r."pull_request_state" = ''merged'' THEN ''merged''
                    WHEN r."pull_request_state" = ''closed'' THEN ''closed''
                    WHEN r."state" = ''Failed'' THEN ''failed''
                    WHEN r."state" = ''Canceled'' THEN ''canceled''
                    WHEN r."pull_request_number" IS NOT NULL THEN ''open''
                    WHEN r."state" = ''Succeeded'' THEN ''no_pull_request''
                    ELSE ''in_progress'' END\073
  v_succeeded := r."state" = ''Succeeded''\073
  v_to_start := round(EXTRACT(EPOCH FROM r."started_at" - r."received_at") * 1000)::bigint\073
  v_to_pull_request := round(EXTRACT(EPOCH FROM r."pull_request_at" - r."received_at") * 1000)::bigint\073
  IF r."pull_request_state" = ''merged'' THEN
    v_to_merge := round(EXTRACT(EPOCH FROM r."pull_request_closed_at" - r."received_at") * 1000)::bigint\073
    v_merged_pr := r."pull_request_number"\073
  END IF\073
  INSERT INTO "insights_days" AS d ("repository_id", "day", "loop", "agent", "runs", "merged", "closed", "open", "no_pull_request", "failed", "canceled",
                                     "in_progress", "succeeded", "succeeded_attempts", "cost_usd", "agent_ms", "verified", "verify_passed", "failures",
                                     "to_start_ms", "to_pull_request_ms", "to_merge_ms", "merged_pull_requests")
  VALUES (r."repository_id", r."received_at"::date, r."loop", r."agent", sgn,
          sgn * (v_outcome = ''merged'')::int, sgn * (v_outcome = ''closed'')::int, sgn * (v_outcome = ''open'')::int,
          sgn * (v_outcome = ''no_pull_request'')::int, sgn * (v_outcome = ''failed'')::int, sgn * (v_outcome = ''canceled'')::int,
          sgn * (v_outcome = ''in_progress'')::int, sgn * v_succeeded::int, CASE WHEN v_succeeded THEN sgn * r."attempts_closed" ELSE 0 END,
          sgn * r."attempts_cost_usd", sgn * r."attempts_ms", sgn * r."verify_checked", sgn * r."verify_passed",
          insights_count_into(''{}''::jsonb, r."failure_categories", sgn),
          CASE WHEN sgn > 0 AND v_to_start IS NOT NULL THEN ARRAY[v_to_start] ELSE ''{}''::bigint[] END,
          CASE WHEN sgn > 0 AND v_to_pull_request IS NOT NULL THEN ARRAY[v_to_pull_request] ELSE ''{}''::bigint[] END,
          CASE WHEN sgn > 0 AND v_to_merge IS NOT NULL THEN ARRAY[v_to_merge] ELSE ''{}''::bigint[] END,
          CASE WHEN sgn > 0 AND v_merged_pr IS NOT NULL THEN ARRAY[v_merged_pr] ELSE ''{}''::integer[] END)
  ON CONFLICT ("repository_id", "day", "loop", "agent") DO UPDATE SET
    "runs" = d."runs" + EXCLUDED."runs",
    "merged" = d."merged" + EXCLUDED."merged",
    "closed" = d."closed" + EXCLUDED."closed",
    "open" = d."open" + EXCLUDED."open",
    "no_pull_request" = d."no_pull_request" + EXCLUDED."no_pull_request",
    "failed" = d."failed" + EXCLUDED."failed",
    "canceled" = d."canceled" + EXCLUDED."canceled",
    "in_progress" = d."in_progress" + EXCLUDED."in_progress",
    "succeeded" = d."succeeded" + EXCLUDED."succeeded",
    "succeeded_attempts" = d."succeeded_attempts" + EXCLUDED."succeeded_attempts",
    "cost_usd" = d."cost_usd" + EXCLUDED."cost_usd",
    "agent_ms" = d."agent_ms" + EXCLUDED."agent_ms",
    "verified" = d."verified" + EXCLUDED."verified",
    "verify_passed" = d."verify_passed" + EXCLUDED."verify_passed",
    "failures" = insights_count_into(d."failures", r."failure_categories", sgn),
    "to_start_ms" = CASE WHEN sgn > 0 THEN d."to_start_ms" || EXCLUDED."to_start_ms" ELSE insights_remove_one(d."to_start_ms", v_to_start) END,
    "to_pull_request_ms" = CASE WHEN sgn > 0 THEN d."to_pull_request_ms" || EXCLUDED."to_pull_request_ms" ELSE insights_remove_one(d."to_pull_request_ms", v_to_pull_request) END,
    "to_merge_ms" = CASE WHEN sgn > 0 THEN d."to_merge_ms" || EXCLUDED."to_merge_ms" ELSE insights_remove_one(d."to_merge_ms", v_to_merge) END,
    "merged_pull_requests" = CASE WHEN sgn > 0 THEN d."merged_pull_requests" || EXCLUDED."merged_pull_requests" ELSE insights_remove_one(d."merged_pull_requests", v_merged_pr) END\073
END'
;

CREATE FUNCTION "runs_roll_up_into_insights"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  IF TG_OP <> ''INSERT'' THEN
    PERFORM insights_days_apply(OLD, -1)\073
  END IF\073
  IF TG_OP <> ''DELETE'' THEN
    PERFORM insights_days_apply(NEW, 1)\073
  END IF\073
  RETURN NULL\073
END'
;

CREATE TRIGGER "runs_roll_up_into_insights" AFTER INSERT OR DELETE ON "runs"
  FOR EACH ROW EXECUTE FUNCTION "runs_roll_up_into_insights"();

-- an update moves the Run only when something Insights reads of it changed
CREATE TRIGGER "runs_roll_up_into_insights_update" AFTER UPDATE OF "repository_id", "loop", "agent", "received_at", "state", "started_at",
    "pull_request_number", "pull_request_at", "pull_request_state", "pull_request_closed_at", "attempts_closed", "attempts_cost_usd",
    "attempts_ms", "verify_checked", "verify_passed", "failure_categories" ON "runs"
  FOR EACH ROW WHEN ((OLD."repository_id", OLD."loop", OLD."agent", OLD."received_at", OLD."state", OLD."started_at", OLD."pull_request_number",
                      OLD."pull_request_at", OLD."pull_request_state", OLD."pull_request_closed_at", OLD."attempts_closed", OLD."attempts_cost_usd",
                      OLD."attempts_ms", OLD."verify_checked", OLD."verify_passed", OLD."failure_categories")
                IS DISTINCT FROM
                     (NEW."repository_id", NEW."loop", NEW."agent", NEW."received_at", NEW."state", NEW."started_at", NEW."pull_request_number",
                      NEW."pull_request_at", NEW."pull_request_state", NEW."pull_request_closed_at", NEW."attempts_closed", NEW."attempts_cost_usd",
                      NEW."attempts_ms", NEW."verify_checked", NEW."verify_passed", NEW."failure_categories"))
  EXECUTE FUNCTION "runs_roll_up_into_insights"();

-- the Runs written before this migration (the bench calls the same after its bulk load)
SELECT insights_days_apply(r, 1) FROM "runs" r ORDER BY r."repository_id", r."received_at";
