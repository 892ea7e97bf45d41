-- A Run whose commits wait for a writer's review before any branch has them (ADR 0058). Its own
-- migration: a new enum value can be used only once the statement that adds it has committed.
ALTER TYPE "RunState" ADD VALUE 'Reviewing' AFTER 'Running';
