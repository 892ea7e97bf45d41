-- Invariant 3 held by the database, checked at COMMIT: never two open Runs of one Loop on one
-- Item. Deferred, so the claim can supersede the old Run and open the new one in a single
-- statement (the order of a statement's sub-statements is not defined).
DROP INDEX "runs_one_open_per_loop_item";
ALTER TABLE "runs" ADD CONSTRAINT "runs_one_open_per_loop_item"
  EXCLUDE USING btree ("loop" WITH =, "item_key" WITH =)
  WHERE ("state" IN ('Pending', 'Waiting', 'Queued', 'Running'))
  DEFERRABLE INITIALLY DEFERRED;
