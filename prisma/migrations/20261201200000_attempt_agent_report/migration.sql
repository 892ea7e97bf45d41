-- What the agent reported of an Attempt, through its adapter: the session it can be resumed
-- from (Claude's session_id, Codex's thread_id), the model that ran, its number of turns, and
-- whether the cost is exact (the agent's own figure, or its exact tokens priced from the roster)
-- rather than an estimate or a result file's claim.
ALTER TABLE "attempts" ADD COLUMN "session_id" TEXT,
                       ADD COLUMN "model" TEXT,
                       ADD COLUMN "turns" INTEGER,
                       ADD COLUMN "cost_exact" BOOLEAN NOT NULL DEFAULT false;
