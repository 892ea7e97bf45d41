import { evaluateLoopsForItem, isOwnItem } from "../loops/evaluate";
import type { ActorContext } from "../loops/item-context";
import { newestQueuedCause } from "../store/runs/event-actors";
import type { TriggerDeps } from "./deps";
import { repositoryContext } from "./evaluate-item";
import { readItem } from "./handle-hint";
import { appBotLogin } from "./own-items";
import { ensureConfig } from "./repository-config";
import { polledRepository } from "../store/github/repository-rows";

export interface ConditionSubject {
  loop: string;
  repo: string;
  number: number | null;
  /** the Item's key: its newest queued Event's actor is what `item.actor…` read again */
  itemKey?: string;
}

/**
 * Whether a Loop's `if:` still holds on a fresh read of the Item — asked before an Event
 * queued behind a Run opens its own Run. A Tick, a paused Loop (its queued Events keep their
 * turn) and an `if:` that fails to evaluate count as true; a Loop gone from the config, or an
 * Item gone from GitHub, as false.
 */
export async function loopConditionHolds(deps: TriggerDeps, subject: ConditionSubject): Promise<boolean> {
  if (subject.number === null) return true;
  const repo = await polledRepository(deps.db, subject.repo);
  if (!repo) return false;
  const config = await ensureConfig(deps, repo);
  const loop = config.loops.find((l) => l.name === subject.loop);
  if (!loop) return false;
  const item = await readItem(deps, repo, subject.number);
  if (!item) return false;
  const actor = subject.itemKey ? await queuedActor(deps, subject.loop, subject.itemKey) : null;
  const [decision] = evaluateLoopsForItem({
    loops: [loop],
    projection: item.projection,
    repository: repositoryContext(repo),
    actorOf: () => actor,
    ownItem: isOwnItem(item.projection, await appBotLogin(deps.github)),
  });
  // the App's own Item no longer reaches a Loop without allow_bot_items (nor a person's a same-branch Loop)
  if (decision?.outcome === "skip" && (decision.reason === "own_item" || decision.reason === "not_own_item")) return false;
  return decision?.outcome !== "revoke";
}

/** Who caused the newest Event queued on the Item, as `item.actor…` see it. */
async function queuedActor(deps: Pick<TriggerDeps, "db">, loop: string, itemKey: string): Promise<ActorContext | null> {
  const queued = await newestQueuedCause(deps.db, loop, itemKey);
  return queued?.actor ? { login: queued.actor.login, permission: queued.actor.permission, authorAssociation: queued.authorAssociation } : null;
}
