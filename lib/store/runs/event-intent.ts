import type { Intent } from "../../engine/claim-decision";
import { raw, sql, type Statement } from "../kernel/sql";

/**
 * SQL twins of lib/engine/claim-decision.ts `intentOf` and `isRequest`, over an Event's
 * submission (`submission`: a jsonb expression, such as `e.submission`). A test asks Postgres
 * and the TypeScript the same submissions (test/triggers/requests.test.ts).
 */

/** SQL: whether a person asked for the Event's work (an operator's dispatch, a comment). */
export const isRequestSql = (submission: string): string =>
  `(COALESCE(${submission}->'actor'->>'source' = 'operator', false) OR COALESCE(jsonb_typeof(${submission}->'comment') = 'object', false))`;

/** SQL: the Event's intent, as text (`state`, `dispatch`, `comment:<kind>:<id>`). */
export const intentSql = (submission: string): string =>
  `(CASE WHEN ${submission}->'actor'->>'source' = 'operator' THEN 'dispatch'
         WHEN jsonb_typeof(${submission}->'comment') = 'object'
           THEN 'comment:' || (${submission}->'comment'->>'kind') || ':' || (${submission}->'comment'->>'id')
         ELSE 'state' END)`;

/**
 * SQL: whether an Event of intent `newer` replaces the Event whose submission is `submission` —
 * `replaces(newer, older)`'s twin.
 */
export const replacedBySql = (submission: string, newer: Intent): Statement => {
  const older = raw(intentSql(submission));
  return sql`(${older} = 'state' OR (${older} <> 'dispatch' AND ${older} = ${newer}::text))`;
};
