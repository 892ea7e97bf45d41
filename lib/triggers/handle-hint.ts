import { itemKey } from "../engine/ids";
import { getListedItem, isListedPullRequest } from "../github/issues-listing";
import { changesFromGraphql } from "../loops/timeline-events";
import { projectionFromGraphql, projectionFromRest } from "../loops/projection";
import { itemGenerations, itemKind } from "../store/items/stored-items";
import { pausedLoops, recordLoopFailures } from "../store/items/loop-runtimes";
import { pollSoon } from "../store/items/poll-schedule";
import { polledRepository, type RegisteredRepository } from "../store/github/repository-rows";
import type { Hint } from "../work/work-queue";
import type { TriggerDeps } from "./deps";
import { evaluateItem, type ItemOutcome } from "./evaluate-item";
import { judgeComment } from "./comment-trigger";
import { observation, storeObservations, type Observation } from "./observe-item";
import { appBotLogin, slugOfBot } from "./own-items";
import { ensureConfig } from "./repository-config";

export type HintOutcome =
  | ({ status: "evaluated"; repo: string; number: number } & Pick<ItemOutcome, "opened" | "revoked" | "claims">)
  | { status: "skipped"; repo: string; number: number; reason: "not_polled" | "gone" | "stale" };

/**
 * A Hint: reads that one Item now and judges it through the same path as a poll (projection,
 * content hash, every Loop) — and, when it names a comment, the comments Loops judge that comment. It never touches the cursor: the next poll still reads what
 * changed, so a lost or duplicated Hint changes nothing.
 */
export async function handleHint(deps: TriggerDeps, hint: Hint): Promise<HintOutcome> {
  const base = { repo: hint.repo.toLowerCase(), number: hint.number };
  const repo = await polledRepository(deps.db, hint.repo);
  if (!repo) return { status: "skipped", ...base, reason: "not_polled" };
  // a webhook says the repository is active: back to the shortest poll interval (not for the App's own doing)
  if (!(await onlyTheApp(deps, hint))) await pollSoon(deps.db, repo.fullName, deps.clock.now());
  const [config, paused, item] = await Promise.all([
    ensureConfig(deps, repo, { maxAgeMs: Number.POSITIVE_INFINITY }),
    pausedLoops(deps.db, repo.fullName),
    readItem(deps, repo, hint.number),
  ]);
  if (!item) return { status: "skipped", ...base, reason: "gone" };
  const stale = (await storeObservations(deps.db, [item])).size > 0;
  const generation = (await itemGenerations(deps.db, [item.key])).get(item.key) ?? 0;
  // a newer read of the Item judges the Item; the comment this Hint names is judged here all the same
  const judging = { repo, loops: config.loops, paused, item, generation };
  const outcome = stale ? null : await evaluateItem(deps, judging, undefined, [...(hint.sender ? [hint.sender] : []), ...(hint.senders ?? [])]);
  const answered = hint.comment ? await judgeComment(deps, judging, hint.comment, hint.sender ?? null) : null;
  await recordLoopFailures(deps.db, repo.fullName, new Map([...(outcome?.failures ?? []), ...(answered?.failures ?? [])]));
  if ((!outcome || outcome.stale) && !answered) return { status: "skipped", ...base, reason: "stale" };
  return {
    status: "evaluated",
    ...base,
    opened: [...(outcome?.stale ? [] : (outcome?.opened ?? [])), ...(answered?.opened ?? [])],
    revoked: outcome?.revoked ?? [],
    claims: [...(outcome?.claims ?? []), ...(answered?.claims ?? [])],
  };
}

/** Whether every sender of the Hint is the App's bot (its own comment, label or edit): no person is active there. */
async function onlyTheApp(deps: TriggerDeps, hint: Hint): Promise<boolean> {
  const senders = [...(hint.sender ? [hint.sender] : []), ...(hint.senders ?? [])];
  if (senders.length === 0) return false;
  const bot = (await appBotLogin(deps.github))?.toLowerCase();
  return bot !== undefined && senders.every((s) => s.toLowerCase() === bot);
}

/**
 * Reads one Item the way a poll would: an issue from the issues API, a pull request by
 * GraphQL (one call when the Item is known to be a pull request, two otherwise).
 */
export async function readItem(deps: TriggerDeps, repo: RegisteredRepository, number: number): Promise<Observation | null> {
  const readAt = new Date();
  if ((await itemKind(deps.db, itemKey(repo.fullName, number))) !== "pull_request") {
    const listed = await getListedItem(deps.github.installationOctokit(repo.installationId), repo.fullName, number);
    if (!listed) return null;
    if (!isListedPullRequest(listed)) return observation(repo.fullName, projectionFromRest(listed), readAt, listed.author_association);
  }
  const [node, botLogin] = await Promise.all([deps.slices.readOne(repo.installationId, { repo: repo.fullName, number, kind: "pull_request" }), appBotLogin(deps.github)]);
  return node ? observation(repo.fullName, projectionFromGraphql(node, "pull_request", slugOfBot(botLogin)), readAt, node.authorAssociation, changesFromGraphql(node)) : null;
}
