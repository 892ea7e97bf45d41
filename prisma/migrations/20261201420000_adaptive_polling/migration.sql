-- Adaptive polling (ADR 0020): each repository's current poll interval and when it is next due,
-- kept in Postgres so a flushed Redis loses nothing (the schedulers only tick). A quiet
-- repository's interval doubles up to the maximum, a change or a webhook brings it back.
-- cursor_pull_marks holds, per open pull request, what the change probe compares
-- (mergeability and head commit), so an unchanged one is not read again. cursor_settled says the
-- last cycle's listing found nothing past the watermark it started from: only then may a probe
-- that sees no newer update skip the repository (an Item changed in the watermark's own second
-- after that listing is listed by the next cycle).
ALTER TABLE "repositories" ADD COLUMN "poll_interval_s" INTEGER;
ALTER TABLE "repositories" ADD COLUMN "next_poll_at" TIMESTAMP(3);
ALTER TABLE "repositories" ADD COLUMN "cursor_pull_marks" JSONB NOT NULL DEFAULT '{}';
ALTER TABLE "repositories" ADD COLUMN "cursor_settled" BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX "repositories_next_poll_at" ON "repositories" ("installation_id", "next_poll_at");
