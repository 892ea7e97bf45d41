-- Dead-letter for engine failures: how many times a Run's job failed inside Atelier (not the
-- agent), and the last such error. After a few, the Run is parked (Waiting, reason
-- engine_failed, or Failed when it had Attempts) with its error, in Needs you. An operator's retry resets both.
ALTER TABLE "runs" ADD COLUMN "engine_failures" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "runs" ADD COLUMN "engine_error" TEXT;
