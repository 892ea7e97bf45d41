import type { Db } from "../kernel/db";
import { rows, sql } from "../kernel/sql";

/**
 * What holds the Items' cycle budgets: one row per (Item, Loop) whose Runs hold a reservation,
 * and per `cycle_budgets` row no Run holds one for any more (used up or reset). A
 * `cycle_budgets` row exists only once an Item's budget was used up or reset, so this reads the
 * Runs' reservations, not that table alone.
 */

export interface BudgetHoldRow {
  item_key: string;
  repo: string;
  loop: string | null;
  number: number | null;
  title: string | null;
  generation: number;
  ask: { loop?: string; maxCycles?: number } | null;
  asked_at: Date | null;
  reset_at: Date | null;
  reset_by: string | null;
  /** Runs of the Loop holding a reservation in the Item's current generation (bigint text) */
  used: string;
  /** the Loop's max_cycles in the repository's config as last read */
  max_cycles: number | null;
}

/** The repositories' holds, asks first, then the most recently used; at most `limit`. */
export async function listBudgetHolds(db: Db, repos: string[], limit: number): Promise<BudgetHoldRow[]> {
  return rows<BudgetHoldRow>(
    db.pool,
    sql`WITH pairs AS (
       SELECT item_key, loop, min(repo) AS repo, max(received_at) AS last_at
         FROM runs WHERE repo = ANY(${repos}) AND reserved_generation IS NOT NULL
        GROUP BY item_key, loop
       UNION ALL
       SELECT b.item_key, b.ask->>'loop', b.repo, GREATEST(b.asked_at, b.reset_at)
         FROM cycle_budgets b
        WHERE b.repo = ANY(${repos}) AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.item_key = b.item_key AND r.reserved_generation IS NOT NULL)
     )
     SELECT p.item_key, p.repo, p.loop, i.number, i.title, COALESCE(b.generation, 0) AS generation,
            b.ask, b.asked_at, b.reset_at, b.reset_by,
            (SELECT count(*) FROM runs r WHERE r.item_key = p.item_key AND r.loop = p.loop
                AND r.reserved_generation = COALESCE(b.generation, 0)) AS used,
            (SELECT (l->>'maxCycles')::int
               FROM repositories c,
                    jsonb_array_elements(CASE WHEN jsonb_typeof(c.config->'loops') = 'array' THEN c.config->'loops' ELSE '[]'::jsonb END) l
              WHERE c.full_name = p.repo AND l->>'name' = p.loop AND jsonb_typeof(l->'maxCycles') = 'number' LIMIT 1) AS max_cycles
       FROM pairs p LEFT JOIN cycle_budgets b ON b.item_key = p.item_key LEFT JOIN items i ON i.key = p.item_key
      ORDER BY (b.ask IS NOT NULL) DESC, GREATEST(p.last_at, b.asked_at, b.reset_at) DESC NULLS LAST, p.item_key, p.loop
      LIMIT ${limit}`,
  );
}

/** The repository (its name and GitHub id) of an Item's cycle budget, undefined when the Item has none. */
export async function repoOfCycleBudget(db: Db, itemKey: string): Promise<{ repo: string; repositoryId: string | null } | undefined> {
  const found = await db.prisma.cycleBudget.findUnique({ where: { itemKey }, select: { repo: true, repositoryId: true } });
  return found ? { repo: found.repo, repositoryId: found.repositoryId === null ? null : String(found.repositoryId) } : undefined;
}
