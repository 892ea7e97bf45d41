-- The start of a Run (Pending or Queued → Running) rewrites no index entry: it is a HOT update.
-- No index of `runs` keys on `state` any more, nor names it in a predicate (either would make
-- every state change write a new entry into every index of the table). They key on `phase`,
-- the state with the three states a worker moves (Pending, Queued, Running) folded into
-- Active, which the start leaves as it is. And the table leaves room on each page for the
-- new version of the row (fillfactor), so the update stays on the page.
-- (set first, so that adding the column, which rewrites the table, leaves that room already)
ALTER TABLE "runs" SET (fillfactor = 70);
-- (each state named: the cast of an enum to text is not immutable, so it cannot compute a column)
ALTER TABLE "runs" ADD COLUMN "phase" text GENERATED ALWAYS AS (
  CASE "state" WHEN 'Pending' THEN 'Active' WHEN 'Queued' THEN 'Active' WHEN 'Running' THEN 'Active'
    WHEN 'Waiting' THEN 'Waiting' WHEN 'Succeeded' THEN 'Succeeded' WHEN 'Failed' THEN 'Failed'
    WHEN 'Canceled' THEN 'Canceled' END
) STORED;

-- invariant 3, as before: never two open (Active or Waiting) Runs of one Loop on one Item
ALTER TABLE "runs" DROP CONSTRAINT "runs_one_open_per_loop_item";
ALTER TABLE "runs" ADD CONSTRAINT "runs_one_open_per_loop_item"
  EXCLUDE USING btree ("loop" WITH =, "item_key" WITH =) WHERE ("phase" IN ('Active', 'Waiting'))
  DEFERRABLE INITIALLY DEFERRED;
-- the reconcile lists the open Runs through the exclusion index above, which holds them all
DROP INDEX "runs_open_received_at";
-- one Run per Event: the id of a Run is derived from the key of its Event (engine/ids.ts), so
-- the primary key holds it
DROP INDEX "runs_event_id_key";

-- one index serves the Runs of an Item (the board, the budgets) and those of a Loop on it (the claim)
DROP INDEX "runs_loop_item_key_state_idx";
DROP INDEX "runs_item_key_idx";
CREATE INDEX "runs_item_key_loop_idx" ON "runs"("item_key", "loop");
-- the Runs of a repository by phase: the Waiting and Failed ones of Needs you, the open ones of the poll
DROP INDEX "runs_repo_state_idx";
CREATE INDEX "runs_repo_phase_idx" ON "runs"("repo", "phase");

-- the transcript is read by Run only (the stream of the dashboard), never by Attempt
DROP INDEX "transcript_entries_attempt_id_id_idx";

-- An Attempt is opened, then closed: its opening writes no entry into the index by end
-- (partial), and the sweep finds the Running Attempts through the open Runs, whose Attempts
-- they are, instead of through an index of its own.
DROP INDEX "attempts_ended_at_idx";
CREATE INDEX "attempts_ended_at_idx" ON "attempts"("ended_at") WHERE "ended_at" IS NOT NULL;
DROP INDEX "attempts_running_started_at";
