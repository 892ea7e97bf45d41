-- A supersede hands the Item's current Run over to its heir in one trigger call (ADR 0024,
-- amendment "a supersede's one call"). The supersede of a Run (superseded_by set, from null) no
-- longer fires the current-Run trigger: the Run that supersedes it, inserted by the same
-- statement, fires its own, and the store refreshes the Item where a supersede opens nothing
-- (item_refresh_current_run, in the transaction that wrote it). The insert's call so finds the
-- Item still naming the superseded Run, open. It reads the current Run's own row, so a current
-- Run closed without a call of its own is known: the heir takes over when it comes first in
-- the order (it then comes before every open Run, as the superseded Run did), and the Item's
-- Runs are scanned otherwise (an heir older than the Run it supersedes: a queued Event's open).
-- (The bodies are escape strings that write each semicolon as \073: the migration engine cuts a
-- script at every semicolon, even inside a string.)
CREATE OR REPLACE FUNCTION "runs_keep_item_current_run"() RETURNS trigger LANGUAGE plpgsql AS E'
DECLARE
  item text := CASE WHEN TG_OP = ''DELETE'' THEN OLD."item_key" ELSE NEW."item_key" END\073
  was_open boolean := TG_OP <> ''INSERT'' AND OLD."phase" IN (''Active'', ''Waiting'')\073
  is_open boolean := TG_OP <> ''DELETE'' AND NEW."phase" IN (''Active'', ''Waiting'')\073
  moved boolean := TG_OP = ''UPDATE'' AND OLD."received_at" <> NEW."received_at"\073
  cur_id text\073
  cur_open boolean\073
  cur_at timestamp(3)\073
  cur_still_open boolean\073
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
  ELSE
    IF TG_OP = ''UPDATE'' AND was_open = is_open AND NOT moved THEN
      RETURN NULL\073
    END IF\073
    IF cur_id IS NOT NULL THEN
      SELECT "received_at", "phase" IN (''Active'', ''Waiting'') INTO cur_at, cur_still_open FROM "runs" WHERE "id" = cur_id\073
    END IF\073
    IF cur_id IS NULL OR (is_open AND NOT cur_open) OR (cur_at IS NOT NULL AND cur_open = cur_still_open AND cur_open = is_open AND (NEW."received_at", NEW."id") > (cur_at, cur_id))
       OR (cur_at IS NOT NULL AND cur_open AND NOT cur_still_open AND is_open AND (NEW."received_at", NEW."id") > (cur_at, cur_id)) THEN
      -- no current Run, an open Run before a closed one, a Run before the current one in the
      -- order, or the heir of a current Run its supersede closed: this Run is current
      UPDATE "items" SET "current_run_id" = NEW."id", "current_run_open" = is_open, "current_run_pull_request" = NEW."pull_request_number"
       WHERE "key" = item\073
      RETURN NULL\073
    END IF\073
    IF cur_at IS NOT NULL AND cur_open = cur_still_open THEN
      -- the current Run, as the Item says it is, stays before this one
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

-- the supersede of a Run fires nothing: its heir's insert, or the store's refresh, keeps the Item
DROP TRIGGER "runs_item_current_run_update" ON "runs";
CREATE TRIGGER "runs_item_current_run_update" AFTER UPDATE OF "state", "received_at", "pull_request_number" ON "runs"
  FOR EACH ROW WHEN (((OLD."phase" IN ('Active', 'Waiting')) IS DISTINCT FROM (NEW."phase" IN ('Active', 'Waiting'))
                      AND NOT (OLD."superseded_by" IS NULL AND NEW."superseded_by" IS NOT NULL))
                     OR OLD."received_at" IS DISTINCT FROM NEW."received_at"
                     OR OLD."pull_request_number" IS DISTINCT FROM NEW."pull_request_number")
  EXECUTE FUNCTION "runs_keep_item_current_run"();

-- the Item's current Run computed again from its Runs, after its row is locked (a supersede
-- that opened nothing: a budget or quota refused the Event that superseded)
CREATE FUNCTION "item_refresh_current_run"(item text) RETURNS void LANGUAGE plpgsql AS E'
BEGIN
  PERFORM 1 FROM "items" WHERE "key" = item FOR NO KEY UPDATE\073
  IF NOT FOUND THEN
    RETURN\073
  END IF\073
  UPDATE "items" i SET "current_run_id" = c."id", "current_run_open" = COALESCE(c."open", false),
         "current_run_pull_request" = c."pull_request_number"
    FROM "item_current_run"(item) c
   WHERE i."key" = item AND (i."current_run_id", i."current_run_open", i."current_run_pull_request")
         IS DISTINCT FROM (c."id", COALESCE(c."open", false), c."pull_request_number")\073
END';
