import { polledRepository } from "../github/installations";
import { evaluateLoopsForItem } from "../loops/evaluate";
import type { TriggerDeps } from "./deps";
import { repositoryContext } from "./evaluate-item";
import { readItem } from "./handle-hint";
import { ensureConfig } from "./repository-config";

export interface ConditionSubject {
  loop: string;
  repo: string;
  number: number | null;
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
  const [decision] = evaluateLoopsForItem({ loops: [loop], projection: item.projection, repository: repositoryContext(repo) });
  return decision?.outcome !== "revoke";
}
