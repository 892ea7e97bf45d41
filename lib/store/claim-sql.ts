import type { AtOnceCondition } from "../engine/claim";
import { join, literal, raw, sql, type Statement } from "./sql";

/** The Event's facts the conditions read (values, or columns of the claim's calls), and whether the gate is given. */
export interface AtOnceParams {
  kind: Statement;
  generation: Statement;
  maxCycles: Statement;
  unstarted: readonly string[];
  metered: boolean;
}

/**
 * SQL twins of lib/engine/claim.ts's AT_ONCE conditions, over the claim snapshot `seen` (the
 * row snapshotSql reads: event, event_run, blocking as json, generation, ask, reserved,
 * metering). test/store/claim-at-once.test.ts holds each to its twin on PostgreSQL, over every
 * combination of the facts where a condition could turn.
 */
export const AT_ONCE_SQL: Record<AtOnceCondition, (seen: Statement, p: AtOnceParams) => Statement> = {
  unrecorded: (seen) => sql`${seen}.event IS NULL AND ${seen}.event_run IS NULL`,
  current: (seen, p) => sql`NOT (${p.kind}::text = 'item' AND ${p.generation}::int < ${seen}.generation)`,
  nothingRunning: (seen, p) => sql`(${seen}.blocking IS NULL OR (${seen}.blocking->>'state') = ANY(${unstartedSql(p)}))`,
  withinBudget: (seen, p) =>
    sql`(${p.maxCycles}::int IS NULL OR (NOT ${seen}.ask AND ${reservedAfterSql(seen, p)} < ${p.maxCycles}::int))`,
  ungated: (seen, p) => sql`NOT (${raw(String(p.metered))} AND COALESCE((${seen}.metering->>'gated')::boolean, false))`,
  unhooked: (seen) => sql`NOT COALESCE((${seen}.blocking->>'hooked')::boolean, false)`,
};

/** The unstarted states, a literal of the text (the statement's one parameter is its calls' json). */
const unstartedSql = (p: AtOnceParams): Statement => sql`${literal(`{${p.unstarted.join(",")}}`)}::text[]`;

/** reservedAfter: the superseded Run (an unstarted blocking one) gives its reservation of the current generation back. */
const reservedAfterSql = (seen: Statement, p: AtOnceParams) =>
  sql`(${seen}.reserved - CASE WHEN (${seen}.blocking->>'state') = ANY(${unstartedSql(p)})
                             AND (${seen}.blocking->>'reserved_generation')::int = ${seen}.generation THEN 1 ELSE 0 END)`;

/** SQL: opensAtOnce of the snapshot named `seen`, every condition's twin. */
export const atOnceSql = (seen: string, p: AtOnceParams): Statement =>
  join(
    Object.values(AT_ONCE_SQL).map((twin) => sql`(${twin(raw(seen), p)})`),
    "\n AND ",
  );
