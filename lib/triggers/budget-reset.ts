import { resetCycleBudget } from "../store/runs/cycle-budget";
import type { TriggerDeps } from "./deps";

/**
 * An operator's reset of an Item's cycle budget, judged again at once: the store bumps the
 * generation and makes the repository due (its next poll reads every Item from an empty
 * cursor); the Item is read again now (a Hint), and so is every comment whose ask the budget
 * blocked or that queued behind a Run — comments are not polled, and an ask kept for the
 * operator's answer would otherwise never be judged again (ADR 0073).
 */
export async function answerBudgetAsk(deps: Pick<TriggerDeps, "db" | "workQueue">, itemKey: string, actor: string): Promise<{ generation: number }> {
  const { generation, installationId, repo, number, comments } = await resetCycleBudget(deps.db, itemKey, actor);
  if (installationId !== null && number !== null) {
    await deps.workQueue.hint({ installationId, repo, number });
    for (const comment of comments) await deps.workQueue.hint({ installationId, repo, number, comment });
  }
  return { generation };
}
