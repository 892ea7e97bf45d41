import { budgetResetEventKey, parseItemKey } from "../../engine/ids";
import type { CommentRef } from "../../loops/comment-context";
import { FROM } from "../../engine/run-state";
import { ConflictError } from "../../errors";
import type { Db } from "../kernel/db";
import { audit } from "../people/audit-log";
import { first, query, rows, sql } from "../kernel/sql";
import { transaction } from "../kernel/transaction";

interface BudgetAsk {
  askId: string;
  loop: string;
}

/** What a reset leaves to be judged again at once: the Item, and the comments whose asks waited for it. */
export interface BudgetReset {
  generation: number;
  repo: string;
  installationId: number | null;
  number: number | null;
  /** the comments whose asks of an older generation the budget blocked, or that queued behind a Run (ADR 0073) */
  comments: CommentRef[];
}

/**
 * The operator's answer to a cycle budget ask: records the answer Event, bumps the Item's
 * generation, clears the ask, moves unstarted Runs' reservations into the new generation and
 * makes the repository's next poll start from an empty cursor, due at once, so the Item's
 * current state produces Events keyed with the new generation. The comments whose asks waited
 * (Blocked by the budget, or Queued) are returned: comments are not polled, so the caller has
 * them judged again (lib/triggers/budget-reset.ts).
 */
export async function resetCycleBudget(db: Db, itemKey: string, actor: string): Promise<BudgetReset> {
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
    const repository = await first<{ installation_id: number }>(
      tx,
      sql`UPDATE repositories SET reset_pending = true, next_poll_at = LEAST(next_poll_at, now()) WHERE full_name = ${budget.repo} RETURNING installation_id`,
    );
    const comments = await rows<CommentRef & { number: number }>(
      tx,
      sql`SELECT DISTINCT submission->'comment'->>'kind' AS kind, (submission->'comment'->>'id')::bigint AS id, number FROM events
           WHERE item_key = ${itemKey} AND generation < ${generation} AND jsonb_typeof(submission->'comment') = 'object'
             AND (status = 'Queued' OR (status = 'Blocked' AND reason = 'cycle_budget_exhausted'))
           ORDER BY id`,
    );
    await audit(tx, { actor, action: "reset_cycle_budget", repo: budget.repo, detail: { itemKey, generation } });
    return {
      generation,
      repo: budget.repo,
      installationId: repository?.installation_id ?? null,
      number: parseItemKey(itemKey).number,
      comments: comments.map((c) => ({ kind: c.kind, id: Number(c.id) })),
    };
  });
}
