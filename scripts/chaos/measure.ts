import type pg from "pg";
import { argumentsStartingWith } from "../../test/support/processes";

const TERMINAL = ["Succeeded", "Failed", "Canceled"];

export interface RunTally {
  runs: number;
  /** labeled issues with no Run at all */
  lost: number;
  /** issues with more than one Succeeded Run (the same content worked twice) */
  duplicates: number;
  /** Runs not finished */
  open: number;
}

/** What Postgres says of a scenario's repository now. */
export async function tally(db: pg.Pool, repo: string, issues: number[]): Promise<RunTally> {
  const { rows } = await db.query<{ number: number; state: string }>(`SELECT number, state FROM runs WHERE repo = $1`, [repo]);
  const byNumber = new Map<number, string[]>();
  for (const row of rows) byNumber.set(row.number, [...(byNumber.get(row.number) ?? []), row.state]);
  return {
    runs: rows.length,
    lost: issues.filter((n) => !byNumber.has(n)).length,
    duplicates: [...byNumber.values()].filter((states) => states.filter((s) => s === "Succeeded").length > 1).length,
    open: rows.filter((r) => !TERMINAL.includes(r.state)).length,
  };
}

/** The most Attempts of one Run that Postgres holds as Running at once (one sample). */
export async function concurrentAttempts(db: pg.Pool, repo: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.repo = $1 AND a.state = 'Running' GROUP BY a.run_id ORDER BY n DESC LIMIT 1`,
    [repo],
  );
  return Number(rows[0]?.n ?? 0);
}

/** Attempts of the repository running now. */
export async function runningAttempts(db: pg.Pool, repo: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.repo = $1 AND a.state = 'Running'`, [repo]);
  return Number(rows[0]?.n ?? 0);
}

const CHILD_MARKER = "atelier-demo-child:";

/**
 * The most agents of one Run alive at once, counted on the host (one sample): each Attempt's
 * demo agent leaves a child marked with its Attempt id (`<runId>/<step>/<n>`) that lives as
 * long as the agent's process group.
 */
export function agentsAlivePerRunMax(): number {
  const perRun = new Map<string, Set<string>>();
  for (const arg of argumentsStartingWith(CHILD_MARKER)) {
    const attemptId = arg.slice(CHILD_MARKER.length);
    const runId = attemptId.split("/").slice(0, -2).join("/");
    perRun.set(runId, (perRun.get(runId) ?? new Set()).add(attemptId));
  }
  return Math.max(0, ...[...perRun.values()].map((attempts) => attempts.size));
}
