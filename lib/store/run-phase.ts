import type { RunStateName } from "../engine/run-state";

/**
 * `runs.phase`, a column Postgres computes from `state` (migration 20261201000000_hot_run_start):
 * the state, with the three states a worker moves a Run through (Pending, Queued, Running)
 * folded into 'Active'. The indexes of `runs` key on it rather than on `state`, so that a Run's
 * start, which leaves its phase as it was, rewrites no index entry. A query that wants one of
 * those indexes filters on the phase; test/store/run-phase.test.ts keeps the two in step.
 */
export type RunPhase = "Active" | Exclude<RunStateName, "Pending" | "Queued" | "Running">;

/** SQL: the Run `alias` is in one of `phases`. */
export const inPhase = (alias: string, ...phases: RunPhase[]): string => `${alias}.phase IN (${phases.map((p) => `'${p}'`).join(", ")})`;
