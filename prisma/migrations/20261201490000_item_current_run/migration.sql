-- The Board's lane follows each Item's current Run: its open Run, else its newest. It looked
-- that Run up for every Item of the Board (50,000 of them, by an order no index serves), so
-- the Item now keeps the id of its current Run, whether it is open, and its pull request (what
-- the lane reads of it but whether it runs), written by Postgres itself in the statement
-- that changes it (the open of a Run, its end, its removal, the Item's own insert), whatever
-- code path or process wrote the Run, so the two can never disagree (ADR 0024).
-- The columns are in no index, so the Item's update is HOT. A Run's start (Pending or Queued to
-- Running) leaves it open, so it fires nothing and stays a HOT update itself (ADR 0008).
ALTER TABLE "items" ADD COLUMN "current_run_id" TEXT,
  ADD COLUMN "current_run_open" BOOLEAN NOT NULL DEFAULT false,
  ADD COLUMN "current_run_pull_request" INTEGER;

-- the current Run of one Item, after the Item's row is locked (a concurrent open of another
-- Loop's Run on the same Item commits first, and this statement's snapshot then sees it)
CREATE FUNCTION "item_current_run"(item text, OUT "id" text, OUT "open" boolean, OUT "pull_request_number" integer)
  LANGUAGE sql STABLE AS $$
  SELECT r."id", r."phase" IN ('Active', 'Waiting'), r."pull_request_number" FROM "runs" r WHERE r."item_key" = item
   ORDER BY (r."phase" IN ('Active', 'Waiting')) DESC, r."received_at" DESC, r."id" DESC LIMIT 1
$$;

-- (the bodies of the two trigger functions are escape strings that write each semicolon as
-- \073: the migration engine cuts a script at every semicolon, even inside a string)
CREATE FUNCTION "runs_keep_item_current_run"() RETURNS trigger LANGUAGE plpgsql AS E'
DECLARE
  item text := CASE WHEN TG_OP = ''DELETE'' THEN OLD."item_key" ELSE NEW."item_key" END\073
BEGIN
  PERFORM 1 FROM "items" WHERE "key" = item FOR NO KEY UPDATE\073
  IF NOT FOUND THEN
    RETURN NULL\073
  END IF\073
  UPDATE "items" i SET "current_run_id" = c."id", "current_run_open" = COALESCE(c."open", false),
         "current_run_pull_request" = c."pull_request_number"
    FROM "item_current_run"(item) c
   WHERE i."key" = item AND (i."current_run_id", i."current_run_open", i."current_run_pull_request")
         IS DISTINCT FROM (c."id", COALESCE(c."open", false), c."pull_request_number")\073
  RETURN NULL\073
END';

CREATE TRIGGER "runs_item_current_run_insert" AFTER INSERT ON "runs"
  FOR EACH ROW EXECUTE FUNCTION "runs_keep_item_current_run"();
-- only when the Run opens or closes, or its time or pull request changes: a start, or any other
-- column, leaves the current Run as it was (a Run never moves to another Item)
CREATE TRIGGER "runs_item_current_run_update" AFTER UPDATE OF "state", "received_at", "pull_request_number" ON "runs"
  FOR EACH ROW WHEN ((OLD."phase" IN ('Active', 'Waiting')) IS DISTINCT FROM (NEW."phase" IN ('Active', 'Waiting'))
                     OR OLD."received_at" IS DISTINCT FROM NEW."received_at"
                     OR OLD."pull_request_number" IS DISTINCT FROM NEW."pull_request_number")
  EXECUTE FUNCTION "runs_keep_item_current_run"();
CREATE TRIGGER "runs_item_current_run_delete" AFTER DELETE ON "runs"
  FOR EACH ROW EXECUTE FUNCTION "runs_keep_item_current_run"();

-- an Item stored after its Runs (an Item forgotten and seen again) finds its current Run
CREATE FUNCTION "items_find_current_run"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  SELECT c."id", COALESCE(c."open", false), c."pull_request_number"
    INTO NEW."current_run_id", NEW."current_run_open", NEW."current_run_pull_request"
    FROM "item_current_run"(NEW."key") c\073
  RETURN NEW\073
END';
CREATE TRIGGER "items_current_run_insert" BEFORE INSERT ON "items"
  FOR EACH ROW EXECUTE FUNCTION "items_find_current_run"();

-- every Item's, at once: after this migration, and after a bulk load that set the triggers aside
CREATE FUNCTION "items_refresh_current_runs"() RETURNS void LANGUAGE sql AS $$
  UPDATE "items" i SET "current_run_id" = c."id", "current_run_open" = COALESCE(c."open", false),
         "current_run_pull_request" = c."pull_request_number"
    FROM "items" k CROSS JOIN LATERAL "item_current_run"(k."key") c
   WHERE k."key" = i."key" AND (i."current_run_id", i."current_run_open", i."current_run_pull_request")
         IS DISTINCT FROM (c."id", COALESCE(c."open", false), c."pull_request_number")
$$;
SELECT "items_refresh_current_runs"();
