-- The model a Loop picked (`model:` in .github/atelier.yml, among those its agent lists), kept
-- on the Run beside its agent when the Run opens, so a later change of the config does not
-- change what a retry runs. Null: the agent's default model from the roster.
ALTER TABLE "runs" ADD COLUMN "model" TEXT;
