import type { Db } from "../kernel/db";
import { rows, sql } from "../kernel/sql";

/** The choices of the dashboard's filters: the Loops and the agents the repositories in scope know. */

/** The Loops of the repositories, as their runtime rows and their configs name them, sorted. */
export async function loopNamesOf(db: Db, repos: string[]): Promise<string[]> {
  if (!repos.length) return [];
  const found = await rows<{ loop: string }>(
    db.pool,
    sql`SELECT DISTINCT loop FROM (
       SELECT loop FROM loop_runtime WHERE repo = ANY(${repos})
       UNION ALL
       SELECT l->>'name' FROM repositories p, jsonb_array_elements(CASE WHEN jsonb_typeof(p.config->'loops') = 'array' THEN p.config->'loops' ELSE '[]'::jsonb END) l
        WHERE p.full_name = ANY(${repos})
     ) x WHERE loop IS NOT NULL ORDER BY loop`,
  );
  return found.map((r) => r.loop);
}

/** The agents of the repositories' Runs, sorted. */
export async function agentsOfRuns(db: Db, repos: string[]): Promise<string[]> {
  if (!repos.length) return [];
  const found = await rows<{ agent: string }>(db.pool, sql`SELECT DISTINCT agent FROM runs WHERE repo = ANY(${repos}) ORDER BY agent`);
  return found.map((r) => r.agent);
}
