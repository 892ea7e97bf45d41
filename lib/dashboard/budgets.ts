import { listBudgetHolds } from "../store/metering/budget-holds";
import type { Db } from "../store/kernel/db";

/**
 * The Budgets page: every Item with a cycle budget — a Loop with max_cycles opened a Run on it
 * (the Run holds a reservation), or an operator reset it — one row per (Item, Loop), since a
 * Loop's reservations count against its own max_cycles in the Item's current generation
 * (lib/store/metering/budget-holds.ts reads them).
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
  const rows = await listBudgetHolds(db, repos, limit);
  return rows.map((r) => {
    const { ask } = r;
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
