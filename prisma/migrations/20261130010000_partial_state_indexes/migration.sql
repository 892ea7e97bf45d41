-- The state indexes only ever serve open rows (the reconcile's open Runs, the sweep's running
-- Attempts). As partial indexes they hold those rows only, and the write that closes a Run or
-- an Attempt adds nothing to them.
DROP INDEX "runs_state_received_at_idx";
CREATE INDEX "runs_open_received_at" ON "runs"("received_at") WHERE "state" IN ('Pending', 'Waiting', 'Queued', 'Running');
DROP INDEX "attempts_state_idx";
CREATE INDEX "attempts_running_started_at" ON "attempts"("started_at") WHERE "state" = 'Running';
