import { commentEventKey, itemEventKey } from "../engine/ids";
import type { CommentFacts } from "../loops/comment-context";
import type { LoopDefinition } from "../loops/config-schema";
import { DEFAULT_MAX_CHAIN_DEPTH } from "../loops/config-schema";
import { continuesSameBranch, evaluateLoopsForItem, isOwnItem, readsActor, triggerKindFor, unseenItem, type RepositoryContext } from "../loops/evaluate";
import type { ActorContext } from "../loops/item-context";
import type { Db } from "../store/kernel/db";
import { recordedActors, textsSeenByLoops } from "../store/runs/event-actors";
import { authoredTexts, newTexts } from "../loops/authored-texts";
import { newerReadStored } from "../store/items/stored-items";
import { recordAndClaim, type ClaimResult, type EventInput } from "../store/runs/claim";
import { loopItemsWithOpenRuns, revoke } from "../store/runs/revoke";
import { ACTOR_LOOKUP_WAIT_MS } from "../github/repository-roles";
import { changesFromGraphql } from "../loops/timeline-events";
import { approvalFor, bodyEditOf, resolveActor, weakestWithAuthors, type ActorFacts, type ActorLookup } from "./actor";
import { reviewReasonFor, type ReviewReason } from "../loops/steering";
import { steeringCheck } from "./steering-check";
import type { TriggerDeps } from "./deps";
import { appBotLogin, chainDepth, continuationsOf, type PullRequestOrigin } from "./own-items";
import { isDashboardIssue } from "../store/github/dashboard-issues";
import type { ItemChanges, Observation } from "./observe-item";
import type { RegisteredRepository } from "../store/github/repository-rows";

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
  /** Loops whose `if:` failed to evaluate on this Item: a poll cycle keeps its cursor for them (the Item is read again). */
  conditionFailed: string[];
  /** true when a newer read of the Item judged it instead. */
  stale: boolean;
}

/**
 * Who changed the Item, from one GraphQL read of it (deps.slices), read once: in a poll cycle it
 * waits as long as a role read for company; a Hint's, alone anyway, asks at once.
 */
function changesByGraphql(deps: TriggerDeps, repo: RegisteredRepository, waitMs: number): NonNullable<ActorLookup["changes"]> {
  let read: Promise<ItemChanges | undefined> | null = null;
  return (item) =>
    (read ??= deps.slices
      .read(repo.installationId, [{ repo: repo.fullName, number: item.number, kind: item.projection.kind }], waitMs)
      .then(([node]) => (node ? changesFromGraphql(node) : undefined)));
}

/** The `repository` an expression sees. */
export function repositoryContext(repo: Pick<RegisteredRepository, "fullName" | "defaultBranch" | "private">): RepositoryContext {
  return { full_name: repo.fullName, default_branch: repo.defaultBranch, private: repo.private };
}

/** What an Item is judged by: its repository, the repository's Loops and which are paused, the Item's read and its generation. */
export interface ItemJudging {
  repo: RegisteredRepository;
  loops: readonly LoopDefinition[];
  paused: ReadonlySet<string>;
  item: Observation;
  generation: number;
}

/**
 * Evaluates every Loop watching the Item's kind: a false `if:` revokes the Loop's unstarted
 * work on the Item, a true one submits an Event keyed by the content hash (and the Item's cycle
 * generation) through recordAndClaim; a Run that opens is handed to the work queue. Paused
 * Loops do neither; the App's own Items only reach Loops with `allow_bot_items`. Before each
 * write, a newer read of the same Item (a Hint racing this poll) wins and this one stops.
 *
 * A new Event records who caused the match (ADR 0009): looked up on GitHub once per Item and
 * only when some Loop submits an Event not recorded yet (or reads `item.actor`…), so polls of
 * unchanged Items cost no call. An actor below the Loop's `trigger_permission` makes the Run wait
 * for a writer's approval.
 */
export async function evaluateItem(
  deps: TriggerDeps,
  judging: ItemJudging,
  /** false when the Loop surely has no open Run on the Item (a revoke would change nothing) */
  hasOpenWork: (loop: string, itemKey: string) => boolean = () => true,
  /** the logins of the webhooks' senders, when a Hint brought the Item (every Hint it absorbed) */
  senders: readonly string[] = [],
  /** the roles a poll cycle already asked GitHub for (ActorLookup.roles) */
  roles?: ActorLookup["roles"],
): Promise<ItemOutcome> {
  const { repo, loops, paused, item, generation } = judging;
  const outcome: ItemOutcome = { key: item.key, opened: [], revoked: [], claims: [], failures: new Map(), conditionFailed: [], stale: false };
  const kind = triggerKindFor(item.projection.kind);
  const watching = loops.filter((l) => l.trigger.kind === kind && !paused.has(l.name));
  if (watching.length === 0) return outcome;
  const botLogin = await appBotLogin(deps.github);
  const own = isOwnItem(item.projection, botLogin);
  // the App's dashboard issue is no Item for any Loop, allow_bot_items or not (ADR 0088)
  if (own && item.projection.kind === "issue" && (await isDashboardIssue(deps.db, repo.id, item.number))) return outcome;
  const keyOf = (loop: LoopDefinition) => itemEventKey(loop.name, repo.fullName, item.number, item.hash, generation);
  let resolved: Promise<ActorFacts> | null = null;
  const continuation = continuationsOf(deps.db, item);
  // a poll cycle's lookups by GraphQL wait for company (one query for the repositories polled
  // together); a Hint's roles, alone anyway, ask REST as before
  const lookup: ActorLookup = {
    db: deps.db,
    botLogin,
    changes: changesByGraphql(deps, repo, roles ? ACTOR_LOOKUP_WAIT_MS : 1),
    ...(roles ? { roles, roleByGraphql: (fullName, login) => deps.roles.read(repo.installationId, fullName, login) } : {}),
  };
  const octokit = deps.github.installationOctokit(repo.installationId);
  const actorNow = () => (resolved ??= resolveActor(octokit, repo, item, senders, lookup));
  let seen: Promise<Map<string, Set<string>>> | null = null;
  const texts = authoredTexts(item.projection).map((t) => t.fingerprint);
  // who caused a Loop's new Event: the Item's actor — or, for a continuation, whoever started the
  // Run that opened the pull request — or someone weaker whose text is new since the Loop's last Event
  const causeOf = async (loop: LoopDefinition, origin: PullRequestOrigin | undefined): Promise<ActorFacts> => {
    const base = origin?.facts ?? (await actorNow());
    const saw = (await (seen ??= textsSeenByLoops(deps.db, item.key, watching.map((l) => l.name)))).get(loop.name) ?? null;
    const fresh = newTexts(item.projection, saw);
    // a changed body is its author's text, or its last editor's
    const editor = fresh.some((t) => t.part === "body") ? (await bodyEditOf(item, lookup))?.login : undefined;
    return weakestWithAuthors(octokit, repo, base, [...fresh.map((t) => t.author), ...(editor ? [editor] : [])], lookup);
  };
  const steered = steeringCheck(deps, repo, botLogin, lookup);
  // Loops whose if: or prompt reads the actor need it (recorded, or looked up) before they are evaluated
  const readers = watching.filter((l) => readsActor(l) && unseenItem(l, own) === null);
  let recorded = readers.length ? await recordedActors(deps.db, watching.map(keyOf)) : null;
  // a continuation's origin is read once, whichever same-branch Loop asks
  const continuing = readers.find(continuesSameBranch);
  const origin = continuing ? await continuation(continuing) : undefined;
  const readerFacts = new Map<string, ActorFacts>();
  for (const loop of readers) {
    if (recorded!.has(keyOf(loop)) || (continuesSameBranch(loop) && !origin)) continue;
    readerFacts.set(loop.name, await causeOf(loop, continuesSameBranch(loop) ? origin! : undefined));
  }
  const actorOf = (loop: LoopDefinition): ActorContext | null => {
    const known = recorded?.get(keyOf(loop)) ?? readerFacts.get(loop.name);
    return known ? actorContext(known) : null;
  };

  const decisions = evaluateLoopsForItem({ loops, projection: item.projection, repository: repositoryContext(repo), pausedLoops: paused, actorOf, ownItem: own });
  // the others learn which Events are new only when they submit: an Item that matches nothing costs no read
  const submits = decisions.filter((d) => d.outcome === "submit");
  recorded ??= submits.length ? await recordedActors(deps.db, submits.map((d) => keyOf(d.loop))) : new Map();

  for (const decision of decisions) {
    if (decision.outcome === "skip") continue;
    if (decision.outcome === "error") {
      outcome.failures.set(decision.loop.name, decision.message);
      if (decision.where === "if") outcome.conditionFailed.push(decision.loop.name);
      continue;
    }
    if (decision.outcome === "revoke" && !hasOpenWork(decision.loop.name, item.key)) continue;
    if (await newerReadStored(deps.db, item.key, item.readAt)) {
      outcome.stale = true;
      return outcome;
    }
    if (decision.outcome === "revoke") {
      outcome.revoked.push(...(await revoke(deps.db, decision.loop.name, item.key)));
      continue;
    }
    // a same-branch Loop continues only a pull request a Run of this instance opened, on its branch
    const origin = await continuation(decision.loop);
    if (origin === null) continue;
    // an Event recorded before (Blocked by a quota, say, and asked again) keeps who caused it:
    // its Run, when it opens now, waits for approval exactly as it would have then
    const known = recorded.get(keyOf(decision.loop));
    // an Event recorded before keeps its review as it keeps its actor: a poll of an unchanged Item asks GitHub nothing
    let who: EventCause = known ? { facts: known, depth: known.chainDepth, steering: known.review ?? null } : { facts: null, depth: 0, steering: null };
    if (!known) {
      // the depth first (Postgres only): a refused link costs no GitHub call
      const depth = await chainDepth(deps.db, item, own);
      const limit = decision.loop.maxChainDepth ?? DEFAULT_MAX_CHAIN_DEPTH;
      if (depth > limit) {
        outcome.failures.set(
          decision.loop.name,
          `Loop "${decision.loop.name}" did not act on ${repo.fullName}#${item.number}: a Run's work led to it ${depth} Runs deep, past max_chain_depth ${limit} (the App's own Items do not start chains of agents).`,
        );
        continue;
      }
      // a continuation carries on the work of whoever started the Run that opened the pull request,
      // unless someone weaker wrote since; CI's checks are no one's text
      who = { facts: readerFacts.get(decision.loop.name) ?? (await causeOf(decision.loop, origin)), depth, texts, steering: await steered(decision.loop.prompt, item.projection, null) };
    }
    await claimEvent(deps, itemEvent(repo, decision.loop, item, generation, decision.prompt, who, null, origin?.branch ?? null), outcome);
  }
  return outcome;
}

/** Records a matching Loop's Event and claims its Run; a Run that opens goes to the work queue at once. */
export async function claimEvent(deps: Pick<TriggerDeps, "db" | "admission" | "workQueue">, event: EventInput, outcome: Pick<ItemOutcome, "opened" | "claims">): Promise<void> {
  const result = await recordAndClaim(deps.db, event, deps.admission);
  outcome.claims.push({ loop: event.loop, result });
  if (result.tag === "Claimed" && result.opened) {
    outcome.opened.push(result.runId);
    await deps.workQueue.moveRun(result.runId, { receivedAt: new Date() });
  }
}

/**
 * The Event of a matching Loop on an Item, with who caused it and the approval that follows.
 * A comments Loop's Event is the comment it answers (its id and content hash), not the Item's content.
 * `branch`: the App's pull request branch a same-branch Loop's Run continues.
 */
export function itemEvent(
  repo: Pick<RegisteredRepository, "fullName" | "private">,
  loop: LoopDefinition,
  item: Observation,
  generation: number,
  prompt: string,
  who: EventCause = { facts: null, depth: 0, steering: null },
  comment: (CommentFacts & { hash: string }) | null = null,
  branch: string | null = null,
): EventInput {
  const { approvalRequired, approvalReason } = approvalFor(loop, repo, who.facts?.actor ?? null);
  return {
    id: comment
      ? commentEventKey(loop.name, repo.fullName, item.number, comment, generation)
      : itemEventKey(loop.name, repo.fullName, item.number, item.hash, generation),
    kind: "item",
    loop: loop.name,
    repo: repo.fullName.toLowerCase(),
    itemKey: item.key,
    number: item.number,
    contentHash: comment?.hash ?? item.hash,
    generation,
    submission: {
      prompt,
      agent: loop.agent,
      ...(loop.model ? { model: loop.model } : {}),
      approvalRequired,
      maxCycles: loop.maxCycles,
      declaredIn: repo.fullName.toLowerCase(),
      actor: who.facts?.actor ?? null,
      authorAssociation: who.facts?.authorAssociation ?? null,
      approvalReason,
      chainDepth: who.depth,
      review: reviewReasonFor(loop, who.steering),
      ...(comment ? { comment: { kind: comment.kind, id: comment.id, url: comment.url, author: comment.author } } : {}),
      ...(branch ? { branch } : {}),
      ...(who.texts ? { texts: who.texts } : {}),
      ...(loop.environment ? { environment: loop.environment } : {}),
    },
  };
}

/**
 * Who caused an Event, its chain depth, the fingerprints of the Item's authored texts it saw (an
 * Item Loop's), and whether a non-writer's (or hidden) text in the prompt may have steered the
 * agent (lib/loops/steering.ts).
 */
export interface EventCause {
  facts: ActorFacts | null;
  depth: number;
  texts?: string[];
  steering: ReviewReason | null;
}

/** The `item` context of who caused the match. */
const actorContext = (facts: ActorFacts): ActorContext => ({
  authorAssociation: facts.authorAssociation,
  login: facts.actor.login,
  permission: facts.actor.permission,
});

/** Whether a (Loop, Item) pair of the repository has an open Run, read once for a poll cycle (nothing else has anything to revoke). */
export async function openWork(db: Db, repo: string): Promise<(loop: string, itemKey: string) => boolean> {
  const pairs = new Set((await loopItemsWithOpenRuns(db, repo)).map((r) => `${r.loop}\u0000${r.itemKey}`));
  return (loop, itemKey) => pairs.has(`${loop}\u0000${itemKey}`);
}

/** The Loops that act on Items' state and are not paused (the cursor is written for these; comments Loops judge comments, not the Items). */
export function activeItemLoops(loops: readonly LoopDefinition[], paused: ReadonlySet<string>): LoopDefinition[] {
  return loops.filter((l) => (l.trigger.kind === "issues" || l.trigger.kind === "pull_requests") && !paused.has(l.name));
}
