import { itemEventKey } from "../engine/ids";
import type { RegisteredRepository } from "../github/installations";
import type { LoopDefinition } from "../loops/config-schema";
import { evaluateLoopsForItem, type RepositoryContext } from "../loops/evaluate";
import type { Db } from "../store/db";
import { inPhase } from "../store/run-phase";
import { recordAndClaim, type ClaimResult, type EventInput } from "../store/record-and-claim";
import { revoke } from "../store/revoke";
import type { TriggerDeps } from "./deps";
import { isSuperseded, type Observation } from "./observe-item";

/** What judging one Item did. */
export interface ItemOutcome {
  key: string;
  /** Runs this Item opened. */
  opened: string[];
  /** Runs canceled because the Item stopped matching. */
  revoked: string[];
  claims: { loop: string; result: ClaimResult }[];
  /** Loop → why its `if:` or prompt failed on this Item. */
  failures: Map<string, string>;
  /** true when a newer read of the Item judged it instead. */
  stale: boolean;
}

/** The `repository` an expression sees. */
export function repositoryContext(repo: Pick<RegisteredRepository, "fullName" | "defaultBranch" | "private">): RepositoryContext {
  return { full_name: repo.fullName, default_branch: repo.defaultBranch, private: repo.private };
}

/**
 * Evaluates every Loop watching the Item's kind: a false `if:` revokes the Loop's unstarted
 * work on the Item, a true one submits an Event keyed by the content hash (and the Item's cycle
 * generation) through recordAndClaim; a Run that opens is handed to the work queue. Paused
 * Loops do neither. Before each write, a newer read of the same Item (a Hint racing this poll)
 * wins and this one stops.
 */
export async function evaluateItem(
  deps: TriggerDeps,
  repo: RegisteredRepository,
  loops: readonly LoopDefinition[],
  paused: ReadonlySet<string>,
  item: Observation,
  generation: number,
  /** false when the Loop surely has no open Run on the Item (a revoke would change nothing) */
  hasOpenWork: (loop: string, itemKey: string) => boolean = () => true,
): Promise<ItemOutcome> {
  const outcome: ItemOutcome = { key: item.key, opened: [], revoked: [], claims: [], failures: new Map(), stale: false };
  const decisions = evaluateLoopsForItem({ loops, projection: item.projection, repository: repositoryContext(repo), pausedLoops: paused });
  for (const decision of decisions) {
    if (decision.outcome === "skip") continue;
    if (decision.outcome === "error") {
      outcome.failures.set(decision.loop.name, decision.message);
      continue;
    }
    if (decision.outcome === "revoke" && !hasOpenWork(decision.loop.name, item.key)) continue;
    if (await isSuperseded(deps.db, item.key, item.readAt)) {
      outcome.stale = true;
      return outcome;
    }
    if (decision.outcome === "revoke") {
      outcome.revoked.push(...(await revoke(deps.db, decision.loop.name, item.key)));
      continue;
    }
    const event = itemEvent(repo.fullName, decision.loop, item, generation, decision.prompt);
    const result = await recordAndClaim(deps.db, event, deps.admission);
    outcome.claims.push({ loop: decision.loop.name, result });
    if (result.tag === "Claimed" && result.opened) {
      outcome.opened.push(result.runId);
      await deps.workQueue.moveRun(result.runId, { receivedAt: new Date(), opened: result.openedRun });
    }
  }
  return outcome;
}

/** The Event of a matching Loop on an Item. */
export function itemEvent(repo: string, loop: LoopDefinition, item: Observation, generation: number, prompt: string): EventInput {
  return {
    id: itemEventKey(loop.name, repo, item.number, item.hash, generation),
    kind: "item",
    loop: loop.name,
    repo: repo.toLowerCase(),
    itemKey: item.key,
    number: item.number,
    contentHash: item.hash,
    generation,
    submission: { prompt, agent: loop.agent, approvalRequired: loop.approval === "required", maxCycles: loop.maxCycles },
  };
}

/**
 * The (Loop, Item) pairs of a repository with an open Run (whose queued Events a revoke would
 * also drop); any other pair has nothing to revoke.
 */
export async function openWork(db: Db, repo: string): Promise<(loop: string, itemKey: string) => boolean> {
  const { rows } = await db.pool.query<{ loop: string; item_key: string }>(
    `SELECT DISTINCT loop, item_key FROM runs WHERE repo = $1 AND ${inPhase("runs", "Active", "Waiting")}`,
    [repo.toLowerCase()],
  );
  const pairs = new Set(rows.map((r) => `${r.loop}\u0000${r.item_key}`));
  return (loop, itemKey) => pairs.has(`${loop}\u0000${itemKey}`);
}

/** The Loops that act on Items and are not paused (the cursor is written for these). */
export function activeItemLoops(loops: readonly LoopDefinition[], paused: ReadonlySet<string>): LoopDefinition[] {
  return loops.filter((l) => l.trigger.kind !== "schedule" && !paused.has(l.name));
}
