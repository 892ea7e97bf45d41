-- The Runs list pages by a keyset cursor on (received_at, id), newest first, per repository.
-- None of these columns changes after a Run is inserted, so a Run's start stays a HOT update (ADR 0008).
CREATE INDEX "runs_repo_received_at_id_idx" ON "runs"("repo", "received_at" DESC, "id" DESC);
