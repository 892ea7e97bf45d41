-- Commits held for review (ADR 0058). A Reviewing Run is open: the open-Run exclusion, the Item's
-- current Run and its trigger count it, so a Loop never has two open Runs on one Item while a
-- writer has not decided. Its commits sit on GitHub under refs/atelier/held/<run id> (no branch,
-- so no workflow starts), and what the reviewer reads of them here.
-- (The plpgsql bodies are escape strings that write each semicolon as \073: the migration engine
-- cuts a script at every semicolon, even inside a string.)

ALTER TABLE "runs" DROP CONSTRAINT "runs_one_open_per_loop_item";
ALTER TABLE "runs" ADD CONSTRAINT "runs_one_open_per_loop_item"
  EXCLUDE USING btree ("loop" WITH =, "item_key" WITH =) WHERE ("state" IN ('Pending', 'Waiting', 'Queued', 'Running', 'Reviewing'))
  DEFERRABLE INITIALLY DEFERRED;

CREATE OR REPLACE FUNCTION "item_current_run"(item text) RETURNS TABLE ("id" text, "open" boolean, "pull_request_number" integer)
  LANGUAGE sql STABLE AS $$
  SELECT c."id", c."open", c."pull_request_number"
    FROM (SELECT 1) AS one
    LEFT JOIN LATERAL (
      SELECT r."id", r."state" IN ('Pending', 'Waiting', 'Queued', 'Running', 'Reviewing') AS "open", r."pull_request_number" FROM "runs" r WHERE r."item_key" = item
       ORDER BY (r."state" IN ('Pending', 'Waiting', 'Queued', 'Running', 'Reviewing')) DESC, r."received_at" DESC, r."id" DESC LIMIT 1
    ) c ON true
$$;

DROP TRIGGER "runs_item_current_run_update" ON "runs";
CREATE TRIGGER "runs_item_current_run_update" AFTER UPDATE OF "state", "received_at", "pull_request_number" ON "runs"
  FOR EACH ROW WHEN ((OLD."state" IN ('Pending', 'Waiting', 'Queued', 'Running', 'Reviewing')) IS DISTINCT FROM (NEW."state" IN ('Pending', 'Waiting', 'Queued', 'Running', 'Reviewing'))
                     OR OLD."received_at" IS DISTINCT FROM NEW."received_at"
                     OR OLD."pull_request_number" IS DISTINCT FROM NEW."pull_request_number")
  EXECUTE FUNCTION "runs_keep_item_current_run"();

-- why a writer reviews this Run's commits before they are pushed (null: they are pushed as made)
ALTER TABLE "runs" ADD COLUMN "review_reason" JSONB;

CREATE TABLE "held_commits" (
  "run_id" TEXT NOT NULL PRIMARY KEY REFERENCES "runs"("id"),
  "attempt_id" TEXT NOT NULL,
  "ref" TEXT NOT NULL,
  "branch" TEXT NOT NULL,
  "branch_sha" TEXT,
  "base_sha" TEXT NOT NULL,
  "head_sha" TEXT NOT NULL,
  "commits" JSONB NOT NULL,
  "files" JSONB NOT NULL,
  "patch" TEXT NOT NULL,
  "patch_cut" BOOLEAN NOT NULL,
  "pull_request_title" TEXT,
  "pull_request_body" TEXT NOT NULL,
  "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
