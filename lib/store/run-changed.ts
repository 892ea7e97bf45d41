/**
 * Every change of a Run's state (or of its pull request) notifies this Postgres channel with
 * the Run id, in the transaction that makes it: delivered on commit, never for a rolled-back
 * change. The mirror (check runs, Item comments) and the dashboard's live views listen; a
 * periodic sweep covers notifications missed while nobody listened.
 */
export const RUN_CHANGED_CHANNEL = "atelier_run_changed";

/** SQL fragment: `FROM <alias>` rows are notified; use as `SELECT … FROM x ${notifyEach("x")}`. */
export const notifyEach = (alias: string): string =>
  `CROSS JOIN LATERAL (SELECT pg_notify('${RUN_CHANGED_CHANNEL}', ${alias}.id)) AS notified`;
