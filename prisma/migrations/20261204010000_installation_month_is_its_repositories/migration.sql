-- An installation's month is the sum of its repositories' counters (ADR 0029): every open and
-- every outcome wrote both its repository's row and its installation's, which made one row that
-- all of an installation's opens and outcomes wait on in turn, through their commits. The
-- installation's rows counted the same opens and the same Attempts as its repositories' rows,
-- so they go, and the rate buckets keep their installation scope.
DELETE FROM "usage_counters" WHERE "scope" LIKE 'installation:%';
