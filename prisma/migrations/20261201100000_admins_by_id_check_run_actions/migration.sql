-- Instance admins by GitHub account id (THREATS.md attack 14): each login of the instance
-- config's `admins` is resolved to its account id once, the first time it is needed, and that id
-- is the admin from then on. A renamed admin stays admin, whoever takes the old login does not.
CREATE TABLE "instance_admins" (
    "login" TEXT NOT NULL,
    "github_id" TEXT NOT NULL,
    "resolved_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "instance_admins_pkey" PRIMARY KEY ("login")
);

-- A check run button acts once per (check run, action, identifier, sender) (attack 15): a replay
-- of the same signed delivery under a new delivery id finds its key taken.
CREATE TABLE "check_run_actions" (
    "key" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "delivery_id" TEXT,
    "acted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "check_run_actions_pkey" PRIMARY KEY ("key")
);
