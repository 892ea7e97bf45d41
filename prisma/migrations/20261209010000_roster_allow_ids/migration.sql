-- The roster's `allow:` by GitHub ids (ADR 0091). An installation keeps the id of its account (a
-- repository's owner): an `allow:` account entry admits the repositories of that account id,
-- whatever its login is now. Installations registered before this column get it from the next
-- reconcile (at every process start, then hourly), and until then their account entries admit nothing.
ALTER TABLE "installations" ADD COLUMN "account_id" BIGINT;

-- An `allow:` repository entry (owner/name, lower-cased) resolved once, per GitHub host, to the id of
-- the repository that held the name then: the first resolution stays, as account_resolutions' do.
CREATE TABLE "repository_resolutions" (
  "host" TEXT NOT NULL,
  "full_name" TEXT NOT NULL,
  "github_id" TEXT NOT NULL,
  "resolved_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "repository_resolutions_pkey" PRIMARY KEY ("host", "full_name")
);
