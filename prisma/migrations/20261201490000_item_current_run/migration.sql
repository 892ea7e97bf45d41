-- The Board's lane follows each Item's current Run: its open Run, else its newest. It looked
-- that Run up for every Item of the Board (50,000 of them, by an order no index serves), so
-- the Item now keeps the id of its current Run, written by Postgres itself in the statement
-- that changes it (the open of a Run, its end, its removal, the Item's own insert), whatever
-- code path or process wrote the Run, so the two can never disagree (ADR 0024).
-- The column is in no index, so the Item's update is HOT. A Run's start (Pending or Queued to
-- Running) leaves it open, so it fires nothing and stays a HOT update itself (ADR 0008).
ALTER TABLE "items" ADD COLUMN "current_run_id" TEXT;

-- the current Run of one Item, after the Item's row is locked (a concurrent open of another
-- Loop's Run on the same Item commits first, and this statement's snapshot then sees it)
CREATE FUNCTION "item_current_run"(item text) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT r."id" FROM "runs" r WHERE r."item_key" = item
   ORDER BY (r."phase" IN ('Active', 'Waiting')) DESC, r."received_at" DESC, r."id" DESC LIMIT 1
$$;

-- (the bodies of the two trigger functions are escape strings that write each semicolon as
-- \073: the migration engine cuts a script at every semicolon, even inside a string)
CREATE FUNCTION "runs_keep_item_current_run"() RETURNS trigger LANGUAGE plpgsql AS E'
DECLARE
  item text := CASE WHEN TG_OP = ''DELETE'' THEN OLD."item_key" ELSE NEW."item_key" END\073
BEGIN
  PERFORM 1 FROM "items" WHERE "key" = item FOR NO KEY UPDATE\073
  UPDATE "items" SET "current_run_id" = "item_current_run"(item)
   WHERE "key" = item AND "current_run_id" IS DISTINCT FROM "item_current_run"(item)\073
  RETURN NULL\073
END';

CREATE TRIGGER "runs_item_current_run_insert" AFTER INSERT ON "runs"
  FOR EACH ROW EXECUTE FUNCTION "runs_keep_item_current_run"();
-- only when the Run opens or closes (or its time moves): a start, or any other column, leaves
-- the current Run as it was (a Run never moves to another Item)
CREATE TRIGGER "runs_item_current_run_update" AFTER UPDATE OF "state", "received_at" ON "runs"
  FOR EACH ROW WHEN ((OLD."phase" IN ('Active', 'Waiting')) IS DISTINCT FROM (NEW."phase" IN ('Active', 'Waiting'))
                     OR OLD."received_at" IS DISTINCT FROM NEW."received_at")
  EXECUTE FUNCTION "runs_keep_item_current_run"();
CREATE TRIGGER "runs_item_current_run_delete" AFTER DELETE ON "runs"
  FOR EACH ROW EXECUTE FUNCTION "runs_keep_item_current_run"();

-- an Item stored after its Runs (an Item forgotten and seen again) finds its current Run
CREATE FUNCTION "items_find_current_run"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  NEW."current_run_id" := "item_current_run"(NEW."key")\073
  RETURN NEW\073
END';
CREATE TRIGGER "items_current_run_insert" BEFORE INSERT ON "items"
  FOR EACH ROW EXECUTE FUNCTION "items_find_current_run"();

UPDATE "items" i SET "current_run_id" = "item_current_run"(i."key")
 WHERE EXISTS (SELECT 1 FROM "runs" r WHERE r."item_key" = i."key");
