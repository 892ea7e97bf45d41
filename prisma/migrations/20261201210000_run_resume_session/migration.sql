-- An operator's retry (or edit and retry) of a Run keeps the session its last Attempt's agent
-- reported, when the agent stays the same: the Attempts from then on resume it (Claude's
-- --resume, `codex exec resume`) instead of starting the conversation again.
ALTER TABLE "runs" ADD COLUMN "resume_session" TEXT;
