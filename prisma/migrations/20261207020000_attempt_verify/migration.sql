-- What verify found on an Attempt's harvested commit (docs/environments.md, ADR 0047): passed,
-- exit code, timed out, duration, the command, how many rounds and the last lines of its output,
-- redacted and bounded. NULL: the Attempt ran no verify (none declared, or the agent did not finish).
ALTER TABLE "attempts" ADD COLUMN "verify" JSONB;
