import type { Db } from "../store/db";

/**
 * The Budgets page: every Item with a cycle budget — a Loop with max_cycles opened a Run on it
 * (the Run holds a reservation), or an operator reset it — one row per (Item, Loop), since a
 * Loop's reservations count against its own max_cycles in the Item's current generation.
 * A `cycle_budgets` row exists only once an Item's budget was used up or reset, so the page
 * reads the Runs' reservations, not that table alone.
 */
export interface BudgetView {
  itemKey: string;
  repo: string;
  /** the Loop whose reservations `used` counts; null for a budget no Run holds any more */
  loop: string | null;
  number: number | null;
  title: string | null;
  generation: number;
  /** Runs of the Loop holding a reservation in the Item's current generation */
  used: number;
  /** the Loop's max_cycles in the repository's config as last read (or as the ask said); null when unknown */
  maxCycles: number | null;
  ask: { loop: string | null; maxCycles: number | null } | null;
  askedAt: string | null;
  resetAt: string | null;
  resetBy: string | null;
}

export const BUDGETS_LIMIT = 200;

/** Asks first, then the most recently used; at most `limit`. */
export async function loadBudgets(db: Db, repos: string[], limit = BUDGETS_LIMIT): Promise<BudgetView[]> {
  if (!repos.length) return [];
  const { rows } = await db.pool.query(
    `WITH pairs AS (
       SELECT item_key, loop, min(repo) AS repo, max(received_at) AS last_at
         FROM runs WHERE repo = ANY($1) AND reserved_generation IS NOT NULL
        GROUP BY item_key, loop
       UNION ALL
       SELECT b.item_key, b.ask->>'loop', b.repo, GREATEST(b.asked_at, b.reset_at)
         FROM cycle_budgets b
        WHERE b.repo = ANY($1) AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.item_key = b.item_key AND r.reserved_generation IS NOT NULL)
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
      LIMIT $2`,
    [repos, limit],
  );
  return rows.map((r) => {
    const ask = r.ask as { loop?: string; maxCycles?: number } | null;
    const askMax = typeof ask?.maxCycles === "number" ? ask.maxCycles : null;
    return {
      itemKey: r.item_key,
      repo: r.repo,
      loop: r.loop,
      number: r.number,
      title: r.title,
      generation: r.generation,
      used: Number(r.used),
      maxCycles: r.max_cycles ?? (ask?.loop === r.loop ? askMax : null),
      ask: ask ? { loop: ask.loop ?? null, maxCycles: askMax } : null,
      askedAt: r.asked_at?.toISOString() ?? null,
      resetAt: r.reset_at?.toISOString() ?? null,
      resetBy: r.reset_by,
    };
  });
}
