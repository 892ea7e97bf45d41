import type pg from "pg";
import type { AtOnceCondition } from "../engine/claim";
import { compile, type Queryable, type Statement } from "./sql";

/**
 * The first row of a statement of the claim sent as the named prepared statement `name`: its
 * text is the same on every call, so each connection plans it once (planned anew, the claim's
 * statement spent as long planning as running). Only for a statement whose text does not
 * depend on its values.
 */
export async function firstPrepared<R extends pg.QueryResultRow>(on: Queryable, name: string, statement: Statement): Promise<R | undefined> {
  return (await (on as pg.Pool).query<R>({ name, ...compile(statement) })).rows[0];
}

/** The parameters of the claim's statement the conditions read (SQL expressions), and whether the gate is given. */
export interface AtOnceParams {
  kind: string;
  generation: string;
  maxCycles: string;
  /** UNSTARTED, as a text[] expression */
  unstarted: string;
  metered: boolean;
}

/**
 * SQL twins of lib/engine/claim.ts's AT_ONCE conditions, over the claim snapshot `seen` (the
 * row snapshotSql reads: event, event_run, blocking as json, generation, ask, reserved,
 * metering). test/store/claim-at-once.test.ts checks each against its twin on a database.
 */
const AT_ONCE_SQL: Record<AtOnceCondition, (seen: string, p: AtOnceParams) => string> = {
  unrecorded: (seen) => `${seen}.event IS NULL AND ${seen}.event_run IS NULL`,
  current: (seen, p) => `NOT (${p.kind}::text = 'item' AND ${p.generation}::int < ${seen}.generation)`,
  nothingRunning: (seen, p) => `(${seen}.blocking IS NULL OR (${seen}.blocking->>'state') = ANY(${p.unstarted}::text[]))`,
  withinBudget: (seen, p) =>
    `(${p.maxCycles}::int IS NULL OR (NOT ${seen}.ask AND ${reservedAfterSql(seen, p)} < ${p.maxCycles}::int))`,
  ungated: (seen, p) => `NOT (${p.metered} AND COALESCE((${seen}.metering->>'gated')::boolean, false))`,
  unhooked: (seen) => `NOT COALESCE((${seen}.blocking->>'hooked')::boolean, false)`,
};

/** reservedAfter: the superseded Run (an unstarted blocking one) gives its reservation of the current generation back. */
const reservedAfterSql = (seen: string, p: AtOnceParams) =>
  `(${seen}.reserved - CASE WHEN (${seen}.blocking->>'state') = ANY(${p.unstarted}::text[])
                             AND (${seen}.blocking->>'reserved_generation')::int = ${seen}.generation THEN 1 ELSE 0 END)`;

/** SQL: opensAtOnce of the snapshot `seen`, every condition's twin. */
export const atOnceSql = (seen: string, p: AtOnceParams): string =>
  Object.values(AT_ONCE_SQL)
    .map((twin) => `(${twin(seen, p)})`)
    .join("\n AND ");
