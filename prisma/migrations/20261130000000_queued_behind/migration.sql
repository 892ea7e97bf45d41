-- Set on an open Run when an Event is queued behind it (in the transaction that queues it, under
-- the Run's row lock), so the statement that records the Run's last outcome knows whether the
-- newest queued Event must be read at all.
ALTER TABLE "runs" ADD COLUMN "queued_behind" BOOLEAN NOT NULL DEFAULT false;
