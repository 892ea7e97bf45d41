-- An agent's kept session (ADR 0082): the CLI's session files of a Run's last Attempt that saved
-- one, sealed with the instance key (AES-256-GCM bound to the Run's id), in chunks of at most
-- 1 MiB, so that the next Attempt of the Run resumes it on any worker. One per Run, replaced whole
-- by each save, and gone with its Run (retention) and with its repository (by GitHub id).

CREATE TABLE "agent_sessions" (
  "run_id" TEXT NOT NULL PRIMARY KEY REFERENCES "runs"("id") ON DELETE CASCADE,
  "attempt_id" TEXT NOT NULL,
  "repository_id" BIGINT,
  "kind" TEXT NOT NULL,
  "session_id" TEXT NOT NULL,
  "bytes" INTEGER NOT NULL,
  "chunks" INTEGER NOT NULL,
  "saved_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "agent_sessions_repository_id_idx" ON "agent_sessions"("repository_id");

CREATE TABLE "agent_session_chunks" (
  "run_id" TEXT NOT NULL REFERENCES "agent_sessions"("run_id") ON DELETE CASCADE,
  "seq" INTEGER NOT NULL,
  "data" BYTEA NOT NULL,
  PRIMARY KEY ("run_id", "seq")
);

-- the session an Attempt resumed (a kept one restored into its home), null for a new conversation
ALTER TABLE "attempts" ADD COLUMN "resumed_session" TEXT;

-- a retired repository (removed from the installation, deleted, or its name taken by another
-- repository: ADR 0070)
-- takes its Runs' kept sessions with it, whatever statement retires it
-- (the body is an escape string that writes each semicolon as \073: the migration engine cuts a
-- script at every semicolon, even inside a string)
CREATE FUNCTION "repositories_forget_agent_sessions"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  DELETE FROM "agent_sessions" WHERE "repository_id" = NEW."id"\073
  RETURN NULL\073
END';

CREATE TRIGGER "repositories_retired_forget_agent_sessions" AFTER UPDATE OF "removed_at", "retired_at" ON "repositories"
  FOR EACH ROW WHEN ((OLD."removed_at" IS NULL AND NEW."removed_at" IS NOT NULL) OR (OLD."retired_at" IS NULL AND NEW."retired_at" IS NOT NULL))
  EXECUTE FUNCTION "repositories_forget_agent_sessions"();
