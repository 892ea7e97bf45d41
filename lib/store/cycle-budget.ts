import { budgetResetEventKey } from "../engine/ids";
import { FROM } from "../engine/run-state";
import { ConflictError } from "../errors";
import type { Db } from "./db";
import { audit } from "./audit";
import { transaction } from "./transaction";

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
  return transaction(db, async (sql) => {
    const { rows } = await sql.query<{ repo: string; generation: number; ask: BudgetAsk | null }>(
      `SELECT repo, generation, ask FROM cycle_budgets WHERE item_key = $1 FOR UPDATE`,
      [itemKey],
    );
    const budget = rows[0];
    if (!budget?.ask) throw new ConflictError("no_budget_ask", "This Item has no cycle budget ask to answer.");
    const generation = budget.generation + 1;
    await sql.query(
      `INSERT INTO events (id, kind, loop, repo, item_key, generation, status, submission)
       VALUES ($1, 'budget_reset', $2, $3, $4, $5, 'Claimed', $6)`,
      [budgetResetEventKey(budget.ask.askId), budget.ask.loop, budget.repo, itemKey, generation, JSON.stringify({ resetBy: actor })],
    );
    await sql.query(
      `UPDATE cycle_budgets SET generation = $2, ask = NULL, asked_at = NULL, reset_at = now(), reset_by = $3 WHERE item_key = $1`,
      [itemKey, generation, actor],
    );
    await sql.query(
      `UPDATE runs SET reserved_generation = $2
        WHERE item_key = $1 AND reserved_generation IS NOT NULL AND state::text = ANY($3)`,
      [itemKey, generation, FROM.supersede],
    );
    await sql.query(`UPDATE repositories SET reset_pending = true WHERE full_name = $1`, [budget.repo]);
    await audit(sql, { actor, action: "reset_cycle_budget", repo: budget.repo, detail: { itemKey, generation } });
    return { generation };
  });
}
