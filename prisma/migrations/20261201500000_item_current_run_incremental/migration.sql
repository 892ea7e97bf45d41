-- The current Run of an Item (migration 20261201490000) kept incrementally: the trigger compares
-- the Run it fires for with the Item's current Run, and scans the Item's Runs only when the
-- current Run itself closed (and no newer open Run superseded it), moved in time or was removed
-- (ADR 0024, the claim's speed). In the order of item_current_run (open first, then the newest
-- received_at, then the id):
--   a Run inserted, opened or moved in time becomes current when it comes before the current Run
--   the current Run superseded by a newer open Run hands over to that Run (the claim's supersede)
--   the current Run changing otherwise (its pull request, or reopened) updates what is kept of it
--   any other Run closing, changing its pull request, or removed, changes nothing
-- The Item's row is locked first, as before, so the statements after it see a concurrent
-- claim's Run once that claim committed. (The body is an escape string that writes each
-- semicolon as \073: the migration engine cuts a script at every semicolon.)
CREATE OR REPLACE FUNCTION "runs_keep_item_current_run"() RETURNS trigger LANGUAGE plpgsql AS E'
DECLARE
  item text := CASE WHEN TG_OP = ''DELETE'' THEN OLD."item_key" ELSE NEW."item_key" END\073
  was_open boolean := TG_OP <> ''INSERT'' AND OLD."phase" IN (''Active'', ''Waiting'')\073
  is_open boolean := TG_OP <> ''DELETE'' AND NEW."phase" IN (''Active'', ''Waiting'')\073
  moved boolean := TG_OP = ''UPDATE'' AND OLD."received_at" <> NEW."received_at"\073
  cur_id text\073
  cur_open boolean\073
  cur_at timestamp(3)\073
  heir text\073
BEGIN
  SELECT "current_run_id", "current_run_open" INTO cur_id, cur_open FROM "items" WHERE "key" = item FOR NO KEY UPDATE\073
  IF NOT FOUND THEN
    RETURN NULL\073
  END IF\073
  IF TG_OP = ''DELETE'' THEN
    IF OLD."id" IS DISTINCT FROM cur_id THEN
      RETURN NULL\073
    END IF\073
  ELSIF NEW."id" = cur_id THEN
    IF NOT (was_open AND NOT is_open) AND NOT moved THEN
      UPDATE "items" SET "current_run_open" = is_open, "current_run_pull_request" = NEW."pull_request_number"
       WHERE "key" = item AND ("current_run_open", "current_run_pull_request") IS DISTINCT FROM (is_open, NEW."pull_request_number")\073
      RETURN NULL\073
    END IF\073
    IF NOT moved AND NEW."superseded_by" IS NOT NULL THEN
      SELECT r."id" INTO heir FROM "events" e JOIN "runs" r ON r."id" = e."run_id"
       WHERE e."id" = NEW."superseded_by" AND r."item_key" = item AND r."phase" IN (''Active'', ''Waiting'')
         AND (r."received_at", r."id") > (NEW."received_at", NEW."id")\073
      IF FOUND THEN
        UPDATE "items" i SET "current_run_id" = r."id", "current_run_open" = true, "current_run_pull_request" = r."pull_request_number"
          FROM "runs" r WHERE i."key" = item AND r."id" = heir\073
        RETURN NULL\073
      END IF\073
    END IF\073
  ELSE
    IF TG_OP = ''UPDATE'' AND was_open = is_open AND NOT moved THEN
      RETURN NULL\073
    END IF\073
    IF cur_id IS NOT NULL AND cur_open AND NOT is_open THEN
      RETURN NULL\073
    END IF\073
    IF cur_id IS NOT NULL AND cur_open = is_open THEN
      SELECT "received_at" INTO cur_at FROM "runs" WHERE "id" = cur_id\073
      IF FOUND AND (NEW."received_at", NEW."id") <= (cur_at, cur_id) THEN
        RETURN NULL\073
      END IF\073
    END IF\073
    IF cur_id IS NULL OR cur_at IS NOT NULL OR (is_open AND NOT cur_open) THEN
      UPDATE "items" SET "current_run_id" = NEW."id", "current_run_open" = is_open, "current_run_pull_request" = NEW."pull_request_number"
       WHERE "key" = item\073
      RETURN NULL\073
    END IF\073
  END IF\073
  UPDATE "items" i SET "current_run_id" = c."id", "current_run_open" = COALESCE(c."open", false),
         "current_run_pull_request" = c."pull_request_number"
    FROM "item_current_run"(item) c
   WHERE i."key" = item AND (i."current_run_id", i."current_run_open", i."current_run_pull_request")
         IS DISTINCT FROM (c."id", COALESCE(c."open", false), c."pull_request_number")\073
  RETURN NULL\073
END';
