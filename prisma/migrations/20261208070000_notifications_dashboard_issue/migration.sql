-- Notifications (ADR 0087): a target is a signed webhook or a Slack incoming webhook, owned by
-- the instance (installation_id and repo NULL), an installation or one Loop, and subscribed to
-- notices besides the terminal states a webhook always gets.
ALTER TABLE "outbound_hooks" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'webhook';
ALTER TABLE "outbound_hooks" ADD COLUMN "events" TEXT[] NOT NULL DEFAULT '{}';
ALTER TABLE "outbound_hooks" ADD CONSTRAINT "outbound_hooks_kind_check" CHECK ("kind" IN ('webhook', 'slack'));

-- a notice is about one thing (a Run, the cycle budget of an Item, the config of a repository), delivered
-- once per target and subject, whoever found it first
ALTER TABLE "outbound_deliveries" ALTER COLUMN "run_id" DROP NOT NULL;
ALTER TABLE "outbound_deliveries" ADD COLUMN "subject" TEXT;
CREATE UNIQUE INDEX "outbound_deliveries_hook_subject" ON "outbound_deliveries"("hook_id", "subject") WHERE "subject" IS NOT NULL;

-- The dashboard issue of a repository (ADR 0088), keyed by the GitHub id of the repository: its number
-- and the body the App last wrote (a tick is the difference between the two).
CREATE TABLE "dashboard_issues" (
    "repository_id" BIGINT NOT NULL,
    "number" INTEGER NOT NULL,
    "body" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "dashboard_issues_pkey" PRIMARY KEY ("repository_id")
);

-- A tick that acted, once per key (the repository, the issue, the item ticked, the body it was ticked in)
CREATE TABLE "dashboard_issue_ticks" (
    "key" TEXT NOT NULL,
    "repository_id" BIGINT NOT NULL,
    "subject" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "delivery_id" TEXT,
    "acted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "dashboard_issue_ticks_pkey" PRIMARY KEY ("key")
);
