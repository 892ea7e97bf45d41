-- Needs you lists the Failed Runs whose latest failed Attempt nobody resolved. It asked the
-- attempts table for each Failed Run (3.6 s with 117,000 of them), so the Run now keeps the id
-- of its latest failed Attempt, written by the statement that closes that Attempt, and a
-- partial index holds exactly the unresolved ones. Its key and its predicate name no column a
-- start changes (not updated_at), so a start stays a HOT update (ADR 0008)
ALTER TABLE "runs" ADD COLUMN "failed_attempt_id" TEXT;
UPDATE "runs" r SET "failed_attempt_id" = (
  SELECT a."id" FROM "attempts" a WHERE a."run_id" = r."id" AND a."state" = 'Failed' ORDER BY a."number" DESC LIMIT 1)
 WHERE EXISTS (SELECT 1 FROM "attempts" a WHERE a."run_id" = r."id" AND a."state" = 'Failed');
CREATE INDEX "runs_unresolved_failures" ON "runs"("repo")
  WHERE "phase" = 'Failed' AND "resolved_failure_attempt_id" IS DISTINCT FROM "failed_attempt_id";
