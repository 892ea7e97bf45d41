-- A repository's rows belong to its GitHub id, not to its name (ADR 0070, THREATS.md attack 23).
--
-- Every row a repository owns carries `repository_id`, its immutable GitHub id. `repo` stays, as
-- the name the row is shown and queried by, and always equals the `full_name` of the repository
-- row of that id: a name change of a repository row (a rename, a transfer, a retirement to
-- `<owner/name>#<id>`) moves its rows to the new name in the same statement
-- (repositories_move_rows), Item keys included. So a repository that later takes a freed name
-- finds none of the old one's rows under it, and a name read from any row names one id.

ALTER TABLE "repositories" ADD COLUMN "retired_at" TIMESTAMP(3);
ALTER TABLE "items" ADD COLUMN "repository_id" BIGINT;
ALTER TABLE "events" ADD COLUMN "repository_id" BIGINT;
ALTER TABLE "runs" ADD COLUMN "repository_id" BIGINT;
ALTER TABLE "cycle_budgets" ADD COLUMN "repository_id" BIGINT;
ALTER TABLE "audit_log" ADD COLUMN "repository_id" BIGINT;
ALTER TABLE "loop_runtime" ADD COLUMN "repository_id" BIGINT;
ALTER TABLE "outbound_hooks" ADD COLUMN "repository_id" BIGINT;

-- An Item key (lib/engine/ids.ts: ["github","owner/name",number], or a Tick's ["github","owner/name"])
-- of the repository named `old`, rewritten for the name `new`, any other text as it is.
CREATE FUNCTION "item_key_moved"(key text, old text, new text) RETURNS text
  LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN left(key, length('["github",' || to_json(old)::text) + 1) IN ('["github",' || to_json(old)::text || ',', '["github",' || to_json(old)::text || ']')
              THEN '["github",' || to_json(new)::text || substr(key, length('["github",' || to_json(old)::text) + 1)
              ELSE key END
$$;

-- (the bodies of the plpgsql functions are escape strings that write each semicolon as \073: the
-- migration engine cuts a script at every semicolon, as 20261201490000_item_current_run says)

-- Moves the rows of repository `rid` from the name `old` to `new`: the display names, the Item
-- keys derived from them (only keys of the old name's form are rewritten), and the month and
-- rate counters scoped by name (left where they are if the new name has its own already).
CREATE FUNCTION "repository_rows_rename"(rid bigint, old text, new text) RETURNS void
  LANGUAGE plpgsql AS E'
BEGIN
  UPDATE "items" SET "repo" = new,
         "key" = item_key_moved("key", old, new)
   WHERE "repository_id" = rid\073
  UPDATE "events" SET "repo" = new,
         "item_key" = item_key_moved("item_key", old, new)
   WHERE "repository_id" = rid\073
  UPDATE "runs" SET "repo" = new,
         "item_key" = item_key_moved("item_key", old, new)
   WHERE "repository_id" = rid\073
  UPDATE "cycle_budgets" SET "repo" = new,
         "item_key" = item_key_moved("item_key", old, new)
   WHERE "repository_id" = rid\073
  UPDATE "loop_runtime" SET "repo" = new WHERE "repository_id" = rid\073
  UPDATE "audit_log" SET "repo" = new WHERE "repository_id" = rid\073
  UPDATE "outbound_hooks" SET "repo" = new WHERE "repository_id" = rid\073
  UPDATE "usage_counters" u SET "scope" = ''repo:'' || new
   WHERE u."scope" = ''repo:'' || old
     AND NOT EXISTS (SELECT 1 FROM "usage_counters" n WHERE n."scope" = ''repo:'' || new AND n."month" = u."month")\073
  UPDATE "rate_buckets" SET "scope" = ''repo:'' || new
   WHERE "scope" = ''repo:'' || old AND NOT EXISTS (SELECT 1 FROM "rate_buckets" n WHERE n."scope" = ''repo:'' || new)\073
END';

CREATE FUNCTION "repositories_move_rows"() RETURNS trigger
  LANGUAGE plpgsql AS E'
BEGIN
  PERFORM repository_rows_rename(NEW."id", OLD."full_name", NEW."full_name")\073
  RETURN NULL\073
END';

CREATE TRIGGER "repositories_move_rows" AFTER UPDATE OF "full_name" ON "repositories"
  FOR EACH ROW WHEN (OLD."full_name" IS DISTINCT FROM NEW."full_name") EXECUTE FUNCTION repositories_move_rows();

-- A row written without its repository's id gets the id of the repository that holds its name now.
CREATE FUNCTION "stamp_repository_id"() RETURNS trigger
  LANGUAGE plpgsql AS E'
BEGIN
  IF NEW."repository_id" IS NULL AND NEW."repo" IS NOT NULL THEN
    NEW."repository_id" := (SELECT r."id" FROM "repositories" r WHERE r."full_name" = lower(NEW."repo"))\073
  END IF\073
  RETURN NEW\073
END';

CREATE TRIGGER "items_stamp_repository_id" BEFORE INSERT ON "items" FOR EACH ROW WHEN (NEW."repository_id" IS NULL) EXECUTE FUNCTION stamp_repository_id();
CREATE TRIGGER "events_stamp_repository_id" BEFORE INSERT ON "events" FOR EACH ROW WHEN (NEW."repository_id" IS NULL) EXECUTE FUNCTION stamp_repository_id();
CREATE TRIGGER "runs_stamp_repository_id" BEFORE INSERT ON "runs" FOR EACH ROW WHEN (NEW."repository_id" IS NULL) EXECUTE FUNCTION stamp_repository_id();
CREATE TRIGGER "cycle_budgets_stamp_repository_id" BEFORE INSERT ON "cycle_budgets" FOR EACH ROW WHEN (NEW."repository_id" IS NULL) EXECUTE FUNCTION stamp_repository_id();
CREATE TRIGGER "audit_log_stamp_repository_id" BEFORE INSERT ON "audit_log" FOR EACH ROW WHEN (NEW."repository_id" IS NULL) EXECUTE FUNCTION stamp_repository_id();
CREATE TRIGGER "loop_runtime_stamp_repository_id" BEFORE INSERT ON "loop_runtime" FOR EACH ROW WHEN (NEW."repository_id" IS NULL) EXECUTE FUNCTION stamp_repository_id();
CREATE TRIGGER "outbound_hooks_stamp_repository_id" BEFORE INSERT ON "outbound_hooks" FOR EACH ROW WHEN (NEW."repository_id" IS NULL) EXECUTE FUNCTION stamp_repository_id();

-- Backfill. A repository row retired before this migration kept its rows under the bare name
-- (registerRepositories named only the repository row `<name>#<id>`): a row goes to the
-- repository, of those that held its name, registered last before the row was written (else the
-- first one registered).
CREATE FUNCTION "repository_id_at"(name text, at timestamp) RETURNS bigint
  LANGUAGE sql STABLE AS $$
  SELECT r."id" FROM "repositories" r
   WHERE split_part(r."full_name", '#', 1) = lower(name)
   ORDER BY (r."created_at" <= at) DESC, CASE WHEN r."created_at" <= at THEN r."created_at" END DESC NULLS LAST, r."created_at", r."id"
   LIMIT 1
$$;

UPDATE "items" SET "repository_id" = repository_id_at("repo", "observed_at");
UPDATE "events" SET "repository_id" = repository_id_at("repo", "received_at");
UPDATE "runs" SET "repository_id" = repository_id_at("repo", "created_at");
UPDATE "cycle_budgets" b SET "repository_id" = COALESCE((SELECT i."repository_id" FROM "items" i WHERE i."key" = b."item_key"), repository_id_at(b."repo", COALESCE(b."asked_at", now()::timestamp)));
UPDATE "audit_log" SET "repository_id" = repository_id_at("repo", "at") WHERE "repo" IS NOT NULL;
UPDATE "loop_runtime" SET "repository_id" = repository_id_at("repo", "updated_at");
UPDATE "outbound_hooks" SET "repository_id" = repository_id_at("repo", "created_at") WHERE "repo" IS NOT NULL;
DROP FUNCTION "repository_id_at"(text, timestamp);

-- Retired repositories: named `<owner/name>#<id>` already, their rows follow that name now.
UPDATE "repositories" SET "retired_at" = COALESCE("removed_at", now()) WHERE "full_name" LIKE '%#%';
SELECT repository_rows_rename(r."id", split_part(r."full_name", '#', 1), r."full_name")
  FROM "repositories" r WHERE r."full_name" LIKE '%#%';

-- A row no registered repository ever held the name of is kept, under `<owner/name>#unowned`:
-- no repository registered later under that name finds it, instance admins still read it.
UPDATE "items" SET "repo" = "repo" || '#unowned', "key" = item_key_moved("key", "repo", "repo" || '#unowned') WHERE "repository_id" IS NULL;
UPDATE "events" SET "repo" = "repo" || '#unowned', "item_key" = item_key_moved("item_key", "repo", "repo" || '#unowned') WHERE "repository_id" IS NULL;
UPDATE "runs" SET "repo" = "repo" || '#unowned', "item_key" = item_key_moved("item_key", "repo", "repo" || '#unowned') WHERE "repository_id" IS NULL;
UPDATE "cycle_budgets" SET "repo" = "repo" || '#unowned', "item_key" = item_key_moved("item_key", "repo", "repo" || '#unowned') WHERE "repository_id" IS NULL;
UPDATE "loop_runtime" SET "repo" = "repo" || '#unowned' WHERE "repository_id" IS NULL;
UPDATE "audit_log" SET "repo" = "repo" || '#unowned' WHERE "repository_id" IS NULL AND "repo" IS NOT NULL;
UPDATE "outbound_hooks" SET "repo" = "repo" || '#unowned' WHERE "repository_id" IS NULL AND "repo" IS NOT NULL;

CREATE INDEX "items_repository_id_idx" ON "items"("repository_id");
CREATE INDEX "events_repository_id_idx" ON "events"("repository_id");
CREATE INDEX "runs_repository_id_idx" ON "runs"("repository_id");
CREATE INDEX "cycle_budgets_repository_id_idx" ON "cycle_budgets"("repository_id");
CREATE INDEX "audit_log_repository_id_idx" ON "audit_log"("repository_id");
CREATE INDEX "loop_runtime_repository_id_idx" ON "loop_runtime"("repository_id");
CREATE INDEX "outbound_hooks_repository_id_idx" ON "outbound_hooks"("repository_id");
