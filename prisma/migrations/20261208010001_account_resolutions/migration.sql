-- The config's logins (admins, allowed_orgs) resolved to GitHub account ids once, per GitHub
-- host (ADR 0071): an id names an account only on the GitHub that gave it, so an instance moved
-- from the sandbox's simulator to github.com, or to a GitHub Enterprise Server, resolves its
-- logins again there and never trusts an id of another host.
CREATE TABLE "account_resolutions" (
  "host" TEXT NOT NULL,
  "login" TEXT NOT NULL,
  "github_id" TEXT NOT NULL,
  "resolved_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "account_resolutions_pkey" PRIMARY KEY ("host", "login")
);

-- The admins resolved so far: on the host of the stored App's API, when the instance has one.
-- Without one (an App configured by the environment) the host is unknown: those rows keep the
-- empty host, which no GitHub has, and each admin login is resolved again on first use.
INSERT INTO "account_resolutions" ("host", "login", "github_id", "resolved_at")
SELECT COALESCE((SELECT substring(c."base_url" from '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#]+)') FROM "app_credentials" c WHERE c."id" = 1), ''),
       a."login", a."github_id", a."resolved_at"
  FROM "instance_admins" a;

DROP TABLE "instance_admins";
