import type { Db } from "../store/db";

/** The Budgets page: each Item's cycle budget — generation, Runs reserved in it, the ask. */
export interface BudgetView {
  itemKey: string;
  repo: string;
  number: number | null;
  title: string | null;
  generation: number;
  /** Runs holding a reservation in the current generation. */
  used: number;
  ask: { loop: string | null; maxCycles: number | null } | null;
  askedAt: string | null;
  resetAt: string | null;
  resetBy: string | null;
}

export const BUDGETS_LIMIT = 200;

/** Asks first, then the most recently touched; at most `limit`. */
export async function loadBudgets(db: Db, repos: string[], limit = BUDGETS_LIMIT): Promise<BudgetView[]> {
  if (!repos.length) return [];
  const { rows } = await db.pool.query(
    `SELECT b.item_key, b.repo, b.generation, b.ask, b.asked_at, b.reset_at, b.reset_by, i.number, i.title,
            (SELECT count(*) FROM runs r WHERE r.item_key = b.item_key AND r.reserved_generation = b.generation) AS used
       FROM cycle_budgets b LEFT JOIN items i ON i.key = b.item_key
      WHERE b.repo = ANY($1)
      ORDER BY (b.ask IS NOT NULL) DESC, GREATEST(b.asked_at, b.reset_at) DESC NULLS LAST, b.item_key
      LIMIT $2`,
    [repos, limit],
  );
  return rows.map((r) => {
    const ask = r.ask as { loop?: string; maxCycles?: number } | null;
    return {
      itemKey: r.item_key,
      repo: r.repo,
      number: r.number,
      title: r.title,
      generation: r.generation,
      used: Number(r.used),
      ask: ask ? { loop: ask.loop ?? null, maxCycles: typeof ask.maxCycles === "number" ? ask.maxCycles : null } : null,
      askedAt: r.asked_at?.toISOString() ?? null,
      resetAt: r.reset_at?.toISOString() ?? null,
      resetBy: r.reset_by,
    };
  });
}
