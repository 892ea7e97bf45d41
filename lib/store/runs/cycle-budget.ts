import { budgetResetEventKey } from "../../engine/ids";
import { FROM } from "../../engine/run-state";
import { ConflictError } from "../../errors";
import type { Db } from "../kernel/db";
import { audit } from "../people/audit-log";
import { first, query, sql } from "../kernel/sql";
import { transaction } from "../kernel/transaction";

interface BudgetAsk {
  askId: string;
  loop: string;
}

/**
 * The operator's answer to a cycle budget ask: records the answer Event, bumps the Item's
 * generation, clears the ask, moves unstarted Runs' reservations into the new generation and
 * makes the repository's next poll start from an empty cursor, so the Item's current state
 * produces Events keyed with the new generation.
 */
export async function resetCycleBudget(db: Db, itemKey: string, actor: string): Promise<{ generation: number }> {
  return transaction(db, async (tx) => {
    const budget = await first<{ repo: string; generation: number; ask: BudgetAsk | null }>(
      tx,
      sql`SELECT repo, generation, ask FROM cycle_budgets WHERE item_key = ${itemKey} FOR UPDATE`,
    );
    if (!budget?.ask) throw new ConflictError("no_budget_ask", "This Item has no cycle budget ask to answer.");
    const generation = budget.generation + 1;
    await query(
      tx,
      sql`INSERT INTO events (id, kind, loop, repo, item_key, generation, status, submission)
          VALUES (${budgetResetEventKey(budget.ask.askId)}, 'budget_reset', ${budget.ask.loop}, ${budget.repo}, ${itemKey}, ${generation}, 'Claimed',
                  ${JSON.stringify({ resetBy: actor })})`,
    );
    await query(
      tx,
      sql`UPDATE cycle_budgets SET generation = ${generation}, ask = NULL, asked_at = NULL, reset_at = now(), reset_by = ${actor}
           WHERE item_key = ${itemKey}`,
    );
    await query(
      tx,
      sql`UPDATE runs SET reserved_generation = ${generation}
           WHERE item_key = ${itemKey} AND reserved_generation IS NOT NULL AND state::text = ANY(${FROM.supersede})`,
    );
    await query(tx, sql`UPDATE repositories SET reset_pending = true WHERE full_name = ${budget.repo}`);
    await audit(tx, { actor, action: "reset_cycle_budget", repo: budget.repo, detail: { itemKey, generation } });
    return { generation };
  });
}
