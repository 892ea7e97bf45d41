-- The Runs list pages by a keyset cursor on (received_at, id), newest first: per repository, a
-- backward scan of this index from the cursor, stopped at the page's size.
-- None of these columns changes after a Run is inserted, so a Run's start stays a HOT update (ADR 0008).
CREATE INDEX "runs_repo_received_at_id_idx" ON "runs"("repo", "received_at", "id");
