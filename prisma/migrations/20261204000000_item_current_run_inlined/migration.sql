-- The current Run of an Item, looked up by a function Postgres inlines. item_current_run returned
-- one record (OUT parameters), and Postgres inlines only a set-returning SQL function into the
-- query that calls it: every call planned its body anew. That call is the current-Run
-- trigger's scan, made by every close of an Item's current Run, an outcome's among them: with
-- the Item stored, as in the product, an outcome's statement spent about a quarter of its
-- Postgres CPU there (ADR 0024, amendment "The product's path"). As a table function it is
-- planned once, inside each caller's cached plan. It still gives exactly one row, of nulls for
-- an Item without Runs, so its callers (the triggers of 20261201490000 and 20261201500000, and
-- items_refresh_current_runs) are unchanged.
DROP FUNCTION "item_current_run"(text);
CREATE FUNCTION "item_current_run"(item text) RETURNS TABLE ("id" text, "open" boolean, "pull_request_number" integer)
  LANGUAGE sql STABLE AS $$
  SELECT c."id", c."open", c."pull_request_number"
    FROM (SELECT 1) AS one
    LEFT JOIN LATERAL (
      SELECT r."id", r."phase" IN ('Active', 'Waiting') AS "open", r."pull_request_number" FROM "runs" r WHERE r."item_key" = item
       ORDER BY (r."phase" IN ('Active', 'Waiting')) DESC, r."received_at" DESC, r."id" DESC LIMIT 1
    ) c ON true
$$;
