-- An update of a Run that stays in its day's row of insights_days (the same repository id, day,
-- Loop and agent) applies one net change to that row (ADR 0096), instead of taking the Run out and
-- putting it back in: one UPDATE, each count and sum moved by new − old, and each of the Run's
-- times left as it is — the very array, whose TOAST pointer Postgres keeps — unless it changed.
-- Inserts, deletes and updates that move the Run to another row are as before (ADR 0092).
-- (The plpgsql bodies are escape strings that write each semicolon as \073: the migration engine
-- cuts a script at every semicolon, even inside a string.)

-- What Run `r` counts for in its row, besides its own columns: its outcome (first match: its pull
-- request merged, closed, the Run Failed, Canceled, its pull request open, Succeeded without one,
-- else in progress — docs/insights.md), its Attempts if it Succeeded, its times in milliseconds
-- from the trigger and its merged pull request's number (null when it has none)
CREATE FUNCTION "insights_of_run"(r "runs", OUT outcome text, OUT succeeded boolean, OUT succeeded_attempts integer, OUT to_start_ms bigint,
                                  OUT to_pull_request_ms bigint, OUT to_merge_ms bigint, OUT merged_pull_request integer)
  LANGUAGE plpgsql IMMUTABLE AS E'
BEGIN
  outcome := CASE WHEN r."pull_request_state" = ''merged'' THEN ''merged''
                  WHEN r."pull_request_state" = ''closed'' THEN ''closed''
                  WHEN r."state" = ''Failed'' THEN ''failed''
                  WHEN r."state" = ''Canceled'' THEN ''canceled''
                  WHEN r."pull_request_number" IS NOT NULL THEN ''open''
                  WHEN r."state" = ''Succeeded'' THEN ''no_pull_request''
                  ELSE ''in_progress'' END\073
  succeeded := r."state" = ''Succeeded''\073
  succeeded_attempts := CASE WHEN succeeded THEN r."attempts_closed" ELSE 0 END\073
  to_start_ms := round(EXTRACT(EPOCH FROM r."started_at" - r."received_at") * 1000)::bigint\073
  to_pull_request_ms := round(EXTRACT(EPOCH FROM r."pull_request_at" - r."received_at") * 1000)::bigint\073
  IF r."pull_request_state" = ''merged'' THEN
    to_merge_ms := round(EXTRACT(EPOCH FROM r."pull_request_closed_at" - r."received_at") * 1000)::bigint\073
    merged_pull_request := r."pull_request_number"\073
  END IF\073
END'
;

-- `arr` with one occurrence of `was` replaced by `becomes` (either may be null: nothing to take
-- out, or nothing to put in), or `arr` itself, the very value, when they are the same
CREATE FUNCTION "insights_replace_one"(arr anyarray, was anyelement, becomes anyelement) RETURNS anyarray LANGUAGE sql IMMUTABLE AS E'
  SELECT CASE WHEN was IS NOT DISTINCT FROM becomes THEN arr
              WHEN becomes IS NULL THEN insights_remove_one(arr, was)
              ELSE insights_remove_one(arr, was) || becomes END
';

-- Adds (sign 1) or takes out (sign -1) what Run `r` counts for in its day's row.
CREATE OR REPLACE FUNCTION "insights_days_apply"(r "runs", sgn integer) RETURNS void LANGUAGE plpgsql AS E'
DECLARE
  f record\073
BEGIN
  IF r."repository_id" IS NULL THEN
    RETURN\073
  END IF\073
  f := insights_of_run(r)\073
  INSERT INTO "insights_days" AS d ("repository_id", "day", "loop", "agent", "runs", "merged", "closed", "open", "no_pull_request", "failed", "canceled",
                                     "in_progress", "succeeded", "succeeded_attempts", "cost_usd", "agent_ms", "verified", "verify_passed", "failures",
                                     "to_start_ms", "to_pull_request_ms", "to_merge_ms", "merged_pull_requests")
  VALUES (r."repository_id", r."received_at"::date, r."loop", r."agent", sgn,
          sgn * (f.outcome = ''merged'')::int, sgn * (f.outcome = ''closed'')::int, sgn * (f.outcome = ''open'')::int,
          sgn * (f.outcome = ''no_pull_request'')::int, sgn * (f.outcome = ''failed'')::int, sgn * (f.outcome = ''canceled'')::int,
          sgn * (f.outcome = ''in_progress'')::int, sgn * f.succeeded::int, sgn * f.succeeded_attempts,
          sgn * r."attempts_cost_usd", sgn * r."attempts_ms", sgn * r."verify_checked", sgn * r."verify_passed",
          insights_count_into(''{}''::jsonb, r."failure_categories", sgn),
          CASE WHEN sgn > 0 AND f.to_start_ms IS NOT NULL THEN ARRAY[f.to_start_ms] ELSE ''{}''::bigint[] END,
          CASE WHEN sgn > 0 AND f.to_pull_request_ms IS NOT NULL THEN ARRAY[f.to_pull_request_ms] ELSE ''{}''::bigint[] END,
          CASE WHEN sgn > 0 AND f.to_merge_ms IS NOT NULL THEN ARRAY[f.to_merge_ms] ELSE ''{}''::bigint[] END,
          CASE WHEN sgn > 0 AND f.merged_pull_request IS NOT NULL THEN ARRAY[f.merged_pull_request] ELSE ''{}''::integer[] END)
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
    "to_start_ms" = CASE WHEN sgn > 0 THEN d."to_start_ms" || EXCLUDED."to_start_ms" ELSE insights_remove_one(d."to_start_ms", f.to_start_ms) END,
    "to_pull_request_ms" = CASE WHEN sgn > 0 THEN d."to_pull_request_ms" || EXCLUDED."to_pull_request_ms" ELSE insights_remove_one(d."to_pull_request_ms", f.to_pull_request_ms) END,
    "to_merge_ms" = CASE WHEN sgn > 0 THEN d."to_merge_ms" || EXCLUDED."to_merge_ms" ELSE insights_remove_one(d."to_merge_ms", f.to_merge_ms) END,
    "merged_pull_requests" = CASE WHEN sgn > 0 THEN d."merged_pull_requests" || EXCLUDED."merged_pull_requests" ELSE insights_remove_one(d."merged_pull_requests", f.merged_pull_request) END\073
END'
;

-- Run `o`, now `n`, in the same day's row: each count and sum moved by what `n` counts for less
-- what `o` did, the failed Attempts' categories taken out and put in, each time array replaced
-- only when the Run's time in it changed. The Run is already counted in the row: `runs` stays.
CREATE FUNCTION "insights_days_change"(o "runs", n "runs") RETURNS void LANGUAGE plpgsql AS E'
DECLARE
  o_figures record\073
  n_figures record\073
BEGIN
  IF n."repository_id" IS NULL THEN
    RETURN\073
  END IF\073
  o_figures := insights_of_run(o)\073
  n_figures := insights_of_run(n)\073
  UPDATE "insights_days" AS d SET
    "merged" = d."merged" + (n_figures.outcome = ''merged'')::int - (o_figures.outcome = ''merged'')::int,
    "closed" = d."closed" + (n_figures.outcome = ''closed'')::int - (o_figures.outcome = ''closed'')::int,
    "open" = d."open" + (n_figures.outcome = ''open'')::int - (o_figures.outcome = ''open'')::int,
    "no_pull_request" = d."no_pull_request" + (n_figures.outcome = ''no_pull_request'')::int - (o_figures.outcome = ''no_pull_request'')::int,
    "failed" = d."failed" + (n_figures.outcome = ''failed'')::int - (o_figures.outcome = ''failed'')::int,
    "canceled" = d."canceled" + (n_figures.outcome = ''canceled'')::int - (o_figures.outcome = ''canceled'')::int,
    "in_progress" = d."in_progress" + (n_figures.outcome = ''in_progress'')::int - (o_figures.outcome = ''in_progress'')::int,
    "succeeded" = d."succeeded" + n_figures.succeeded::int - o_figures.succeeded::int,
    "succeeded_attempts" = d."succeeded_attempts" + n_figures.succeeded_attempts - o_figures.succeeded_attempts,
    "cost_usd" = d."cost_usd" + n."attempts_cost_usd" - o."attempts_cost_usd",
    "agent_ms" = d."agent_ms" + n."attempts_ms" - o."attempts_ms",
    "verified" = d."verified" + n."verify_checked" - o."verify_checked",
    "verify_passed" = d."verify_passed" + n."verify_passed" - o."verify_passed",
    "failures" = insights_count_into(insights_count_into(d."failures", o."failure_categories", -1), n."failure_categories", 1),
    "to_start_ms" = insights_replace_one(d."to_start_ms", o_figures.to_start_ms, n_figures.to_start_ms),
    "to_pull_request_ms" = insights_replace_one(d."to_pull_request_ms", o_figures.to_pull_request_ms, n_figures.to_pull_request_ms),
    "to_merge_ms" = insights_replace_one(d."to_merge_ms", o_figures.to_merge_ms, n_figures.to_merge_ms),
    "merged_pull_requests" = insights_replace_one(d."merged_pull_requests", o_figures.merged_pull_request, n_figures.merged_pull_request)
  WHERE d."repository_id" = n."repository_id" AND d."day" = n."received_at"::date AND d."loop" = n."loop" AND d."agent" = n."agent"\073
END'
;

CREATE OR REPLACE FUNCTION "runs_roll_up_into_insights"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  IF TG_OP = ''UPDATE'' AND (OLD."repository_id", OLD."received_at"::date, OLD."loop", OLD."agent")
                            IS NOT DISTINCT FROM (NEW."repository_id", NEW."received_at"::date, NEW."loop", NEW."agent") THEN
    PERFORM insights_days_change(OLD, NEW)\073
    RETURN NULL\073
  END IF\073
  IF TG_OP <> ''INSERT'' THEN
    PERFORM insights_days_apply(OLD, -1)\073
  END IF\073
  IF TG_OP <> ''DELETE'' THEN
    PERFORM insights_days_apply(NEW, 1)\073
  END IF\073
  RETURN NULL\073
END'
;
