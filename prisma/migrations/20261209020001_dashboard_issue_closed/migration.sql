-- A dashboard issue the App closed because its repository turned `dashboard_issue` off (ADR 0088, amended).
-- The row stays: the issue is still no Item for the Loops, and turning it on again reopens it.
ALTER TABLE "dashboard_issues" ADD COLUMN "closed_at" TIMESTAMPTZ(3);
