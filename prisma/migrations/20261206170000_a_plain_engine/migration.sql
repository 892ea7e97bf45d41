-- A plain engine (ADR 0031). What the group-committed statements and the engine_vs_floor ratio
-- needed, and no product figure needs, goes:
-- - `runs.phase`, the generated column that let a Run's start leave every index entry as it was
--   (a HOT update, with the table's fillfactor at 70), goes back to `state`: the indexes and the
--   open-Run exclusion key on the state again, as before 20261201000000_hot_run_start,
-- - the Item's current Run is kept by the plain trigger of 20261201490000 again: each change of a
--   Run that opens or closes it, moves it in time or changes its pull request computes the Item's
--   current Run afresh from its Runs (one index scan of a few rows), instead of the incremental
--   bookkeeping of 20261201500000 and 20261204020000, a supersede fires it as any close does, so
--   the store's item_refresh_current_run goes too.
-- (The plpgsql bodies are escape strings that write each semicolon as \073: the migration engine
-- cuts a script at every semicolon, even inside a string.)

ALTER TABLE "runs" DROP CONSTRAINT "runs_one_open_per_loop_item";
DROP INDEX "runs_repo_phase_idx";
DROP INDEX "runs_unresolved_failures";
DROP TRIGGER "runs_item_current_run_update" ON "runs";
DROP FUNCTION "item_refresh_current_run"(text);

CREATE OR REPLACE FUNCTION "item_current_run"(item text) RETURNS TABLE ("id" text, "open" boolean, "pull_request_number" integer)
  LANGUAGE sql STABLE AS $$
  SELECT c."id", c."open", c."pull_request_number"
    FROM (SELECT 1) AS one
    LEFT JOIN LATERAL (
      SELECT r."id", r."state" IN ('Pending', 'Waiting', 'Queued', 'Running') AS "open", r."pull_request_number" FROM "runs" r WHERE r."item_key" = item
       ORDER BY (r."state" IN ('Pending', 'Waiting', 'Queued', 'Running')) DESC, r."received_at" DESC, r."id" DESC LIMIT 1
    ) c ON true
$$;

CREATE OR REPLACE FUNCTION "runs_keep_item_current_run"() RETURNS trigger LANGUAGE plpgsql AS E'
DECLARE
  item text := CASE WHEN TG_OP = ''DELETE'' THEN OLD."item_key" ELSE NEW."item_key" END\073
BEGIN
  PERFORM 1 FROM "items" WHERE "key" = item FOR NO KEY UPDATE\073
  IF NOT FOUND THEN
    RETURN NULL\073
  END IF\073
  UPDATE "items" i SET "current_run_id" = c."id", "current_run_open" = COALESCE(c."open", false),
         "current_run_pull_request" = c."pull_request_number"
    FROM "item_current_run"(item) c
   WHERE i."key" = item AND (i."current_run_id", i."current_run_open", i."current_run_pull_request")
         IS DISTINCT FROM (c."id", COALESCE(c."open", false), c."pull_request_number")\073
  RETURN NULL\073
END';

ALTER TABLE "runs" DROP COLUMN "phase";
ALTER TABLE "runs" RESET (fillfactor);

-- invariant 3: never two open Runs of one Loop on one Item, checked at COMMIT
ALTER TABLE "runs" ADD CONSTRAINT "runs_one_open_per_loop_item"
  EXCLUDE USING btree ("loop" WITH =, "item_key" WITH =) WHERE ("state" IN ('Pending', 'Waiting', 'Queued', 'Running'))
  DEFERRABLE INITIALLY DEFERRED;
-- the Runs of a repository by state: the Waiting and Failed ones of Needs you, the open ones of the poll
CREATE INDEX "runs_repo_state_idx" ON "runs"("repo", "state");
-- Needs you's unresolved failures
CREATE INDEX "runs_unresolved_failures" ON "runs"("repo")
  WHERE "state" = 'Failed' AND "resolved_failure_attempt_id" IS DISTINCT FROM "failed_attempt_id";

-- only when the Run opens or closes, moves in time or changes its pull request
CREATE TRIGGER "runs_item_current_run_update" AFTER UPDATE OF "state", "received_at", "pull_request_number" ON "runs"
  FOR EACH ROW WHEN ((OLD."state" IN ('Pending', 'Waiting', 'Queued', 'Running')) IS DISTINCT FROM (NEW."state" IN ('Pending', 'Waiting', 'Queued', 'Running'))
                     OR OLD."received_at" IS DISTINCT FROM NEW."received_at"
                     OR OLD."pull_request_number" IS DISTINCT FROM NEW."pull_request_number")
  EXECUTE FUNCTION "runs_keep_item_current_run"();
