import { metrics } from "../metrics/metrics";
import { describeError, GitHubRateLimitedError } from "../github/rate-limit-errors";
import type { ItemSliceRef } from "../github/graphql-items";
import { marksAgree, pullMark, type RepositoryProbe } from "../github/repository-probe";
import { isListedPullRequest, listChangedItems, type ListedItem } from "../github/issues-listing";
import { ensureLabels, labelsEtagCovers } from "../github/ensure-labels";
import { changesFromGraphql } from "../loops/timeline-events";
import { submittedReviews, type SubmittedReview } from "../loops/pull-feedback";
import { projectionFromGraphql, projectionFromRest, type GraphqlItemNode } from "../loops/projection";
import { AtelierError, BadInputError } from "../errors";
import type { StoredConfig } from "../loops/stored-config";
import { alreadyJudged, itemGenerations } from "../store/items/stored-items";
import { pausedLoops, recordLoopEvaluations } from "../store/items/loop-runtimes";
import { EMPTY_CURSOR, readPollState, recordPollFailure, storeLabelsEtag, writeCursor, type PollCursor } from "../store/items/poll-cursors";
import { polledRepositories, polledRepository, type RegisteredRepository } from "../store/github/repository-rows";
import { activeLoopSignature, listingSince, startsFromEmptyCursor } from "./cursor";
import type { ActorLookup } from "./actor";
import type { TriggerDeps } from "./deps";
import { activeItemLoops, evaluateItem, openWork } from "./evaluate-item";
import { observation, storeObservations, type Observation } from "./observe-item";
import { pollComments } from "./poll-comments";
import { appBotLogin, slugOfBot } from "./own-items";
import { forEachLimit, mapSettledLimit } from "./parallel";
import { ensureConfig } from "./repository-config";

export type PollOutcome =
  | {
      status: "polled";
      repo: string;
      /** the cycle started from an empty cursor (Loops changed, or a budget reset) */
      fresh: boolean;
      /** false when GitHub answered the listing with 304 */
      listingModified: boolean;
      /** Items read and judged this cycle */
      observed: number;
      opened: string[];
      revoked: string[];
      labelsCreated: string[];
      /** false when another cycle of the repository wrote the cursor first */
      cursorWritten: boolean;
    }
  | { status: "failed"; repo: string; token: string; error: string; nextAllowedAt: Date | null }
  | { status: "skipped"; repo: string; reason: "not_polled" | "rate_limited" | "name_taken"; nextAllowedAt: Date | null }
  /** the change probe found nothing to read (ADR 0020) */
  | { status: "quiet"; repo: string };

/**
 * One poll cycle of a repository: label preflight, change detection (a conditional issues
 * listing since the watermark), every known open pull request read again, payload slices by
 * GraphQL, each Item judged by every Loop, the comments written or edited on them judged by
 * the comments Loops (poll-comments.ts), then — only once every Item finished — the cursor.
 * Any failure keeps the old cursor and is recorded as the repository's poll error — a Loop's
 * `if:` that fails to evaluate on an Item too (a prompt that fails to render fails only its
 * Loop: the cursor moves on). After a
 * change probe (`probe`), only the open pull requests whose mark changed or that the listing
 * names are read again.
 */
export async function pollRepository(deps: TriggerDeps, fullName: string, probe?: RepositoryProbe): Promise<PollOutcome> {
  const repo = await polledRepository(deps.db, fullName);
  if (!repo) return { status: "skipped", repo: fullName.toLowerCase(), reason: "not_polled", nextAllowedAt: null };
  const waitUntil = deps.github.nextAllowedAt(repo.installationId);
  if (waitUntil) return { status: "skipped", repo: repo.fullName, reason: "rate_limited", nextAllowedAt: waitUntil };
  const startedAt = new Date();
  try {
    const outcome = await pollCycle(deps, repo, startedAt, probe ?? null);
    metrics.polls.inc({ outcome: outcome.status });
    return outcome;
  } catch (err) {
    metrics.polls.inc({ outcome: "failed" });
    const error = describeError(err);
    await recordPollFailure(deps.db, repo.fullName, error, new Date());
    deps.log.warn({ installation_id: repo.installationId, repo: repo.fullName, err: error }, "poll failed; the cursor stays");
    return {
      status: "failed",
      repo: repo.fullName,
      token: err instanceof AtelierError ? err.token : "poll_failed",
      error,
      nextAllowedAt: err instanceof GitHubRateLimitedError ? err.nextAllowedAt : null,
    };
  }
}

/** Polls several repositories (every polled one by default), a few at once. */
export async function pollRepositories(deps: TriggerDeps, fullNames?: readonly string[]): Promise<PollOutcome[]> {
  const names = fullNames ?? (await polledRepositories(deps.db)).map((r) => r.fullName);
  const settled = await mapSettledLimit(names, deps.repositoryConcurrency, (name) => pollRepository(deps, name));
  return settled.map((s, i) =>
    s.status === "fulfilled" ? s.value : { status: "failed", repo: names[i]!, token: "poll_failed", error: describeError(s.reason), nextAllowedAt: null },
  );
}

async function pollCycle(deps: TriggerDeps, repo: RegisteredRepository, startedAt: Date, probe: RepositoryProbe | null): Promise<PollOutcome> {
  const octokit = deps.github.installationOctokit(repo.installationId);
  const state = await readPollState(deps.db, repo.fullName);
  // read again when its files changed (the probe's mark), and after a budget reset
  const [config, paused] = await Promise.all([
    ensureConfig(deps, repo, { ...(probe ? { probeMark: probe.configMark } : {}), ...(state.resetPending ? { maxAgeMs: 0 } : {}) }),
    pausedLoops(deps.db, repo.fullName),
  ]);
  const active = activeItemLoops(config.loops, paused);
  const signature = activeLoopSignature(active);
  const fresh = startsFromEmptyCursor(state, signature);
  const base: PollCursor = fresh ? EMPTY_CURSOR : state.cursor;

  const marks: PullMarks = { asked: new Set(), read: new Map(), reviews: new Map() };
  // without a probe the known open pull requests are read again (mergeability changes without
  // updated_at): their GraphQL batches go first, so that repositories polled together share them
  const known = probe ? [] : readPulls(deps, repo, base.openPulls, marks);

  // label preflight (a conditional request: 304 while nothing changed): when the labels are not
  // known complete, the Loops changed, or the config was read again (every configTtlMs)
  const preflight = config.labels.length > 0 && (fresh || !labelsEtagCovers(config.labels, state.labelsEtag) || Date.parse(config.readAt) >= startedAt.getTime());
  const labels = preflight ? await ensureLabels(octokit, repo.fullName, config.labels, state.labelsEtag) : { etag: config.labels.length ? state.labelsEtag : null, created: [] };
  if (labels.etag !== state.labelsEtag) await storeLabelsEtag(deps.db, repo.fullName, labels.etag);

  const listedAt = new Date();
  const listing = await listChangedItems(octokit, repo.fullName, { since: listingSince(base), etag: base.etag });
  const listed = listing.modified ? latestByNumber(listing.items) : [];
  const listedPulls = new Map(listed.filter(isListedPullRequest).map((i) => [i.number, Date.parse(i.updated_at)]));
  const issues = listed.filter((i) => !isListedPullRequest(i)).map((i) => observation(repo.fullName, projectionFromRest(i), listedAt, i.author_association));
  // closed pull requests listed again by the overlap, in a version already judged, are not read again
  const others = listed.filter((i) => isListedPullRequest(i) && !base.openPulls.includes(i.number));
  // after a probe: the open pull requests whose mark changed or that the listing names
  const changedPulls = probe ? base.openPulls.filter((n) => listedPulls.has(n) || !marksAgree(probe.pullMarks?.[n], base.pullMarks[n])) : [];
  known.push(...readPulls(deps, repo, changedPulls, marks));
  // the listed issues' timelines (who caused a change, ADR 0025) ride in that query when it has room
  const timelines = changedPulls.length > 0 && changedPulls.length + issues.length <= deps.slices.batchSize ? readTimelines(deps, repo, issues) : null;
  const judgedBefore = fresh ? new Set<number>() : await alreadyJudged(deps.db, repo.fullName, others.map((i) => ({ number: i.number, updatedAt: i.updated_at })), state.lastCompletedAt);
  const unknown = readPulls(deps, repo, others.map((i) => i.number).filter((n) => !judgedBefore.has(n)), marks);

  const hasOpenWork = await openWork(deps.db, repo.fullName);
  const judged: JudgeTotals = { observed: 0, opened: [], revoked: [], failures: new Map(), conditionFailed: [], roles: new Map() };
  const readItems = new Map<number, Observation>();
  const judge = (items: Observation[]) => {
    for (const o of items) readItems.set(o.number, o);
    return judgeItems(deps, repo, config.loops, paused, items, hasOpenWork, judged);
  };
  const failures: unknown[] = [];
  const openPulls: number[] = [];
  const judgeBatches = async (batches: Promise<Observation[]>[], reread: number[] | null) => {
    for (const batch of batches) {
      try {
        let pulls = await batch;
        if (reread) {
          // changed since it was read (the listing says so): read it again below
          const stale = pulls.filter((p) => (listedPulls.get(p.number) ?? 0) > Date.parse(p.projection.updatedAt));
          reread.push(...stale.map((p) => p.number));
          pulls = pulls.filter((p) => !stale.includes(p));
        }
        for (const p of pulls) if (p.projection.state === "open") openPulls.push(p.number);
        await judge(pulls);
      } catch (err) {
        failures.push(err);
      }
    }
  };

  await judge(await withTimelines(issues, timelines)).catch((err: unknown) => failures.push(err));
  const reread: number[] = [];
  await judgeBatches(known, reread);
  await judgeBatches([...unknown, ...readPulls(deps, repo, reread, marks)], null);
  // the comments written or edited on the Items it read (since the watermark it started from)
  const commentsSince = listingSince(state.cursor);
  if (listing.modified && commentsSince) {
    try {
      for (const answered of await pollComments(deps, { repo, loops: config.loops, paused }, commentsSince, { items: readItems, reviews: marks.reviews })) {
        judged.opened.push(...answered.opened);
        for (const [loop, message] of answered.failures) if (!judged.failures.has(loop)) judged.failures.set(loop, message);
      }
    } catch (err) {
      failures.push(err);
    }
  }
  // every Item finished; only now may a failure decide that the cursor stays
  if (failures.length) throw failures[0];
  if (judged.conditionFailed.length) {
    // an `if:` that failed to evaluate fails the cycle: the cursor stays, so the next cycle reads those Items again
    await recordLoopEvaluations(deps.db, repo.fullName, active, judged.failures, new Date());
    const where = judged.conditionFailed;
    const more = where.length > 5 ? ` and ${where.length - 5} more` : "";
    throw new BadInputError(
      "expression_evaluation_failed",
      `The if: of ${where.slice(0, 5).join(", ")}${more} failed to evaluate; the cursor stays, so the next poll reads those Items again.`,
    );
  }

  // the open pull requests not read again keep their marks
  for (const n of base.openPulls) if (!marks.asked.has(n) && base.pullMarks[n] !== undefined) openPulls.push(n);
  const newest = newestUpdate(listed);
  const next: PollCursor = {
    since: newest ?? base.since,
    etag: listing.modified ? listing.etag : base.etag,
    openPulls: [...new Set(openPulls)].sort((a, b) => a - b),
    pullMarks: Object.fromEntries([...new Set(openPulls)].map((n) => [String(n), marks.read.get(n) ?? base.pullMarks[n]!])),
    settled: !fresh && (newest === null || (base.since !== null && newest.getTime() <= base.since.getTime())),
    loops: signature,
  };
  const completedAt = new Date();
  const cursorWritten = await writeCursor(deps.db, repo.fullName, state.cursor, next, { startedAt, clearsReset: state.resetPending, completedAt });
  await recordLoopEvaluations(deps.db, repo.fullName, active, judged.failures, completedAt);
  return {
    status: "polled",
    repo: repo.fullName,
    fresh,
    listingModified: listing.modified,
    observed: judged.observed,
    opened: judged.opened,
    revoked: judged.revoked,
    labelsCreated: labels.created,
    cursorWritten,
  };
}

/**
 * Pull requests by GraphQL (their head, base and mergeability are not in the listing), one
 * promise per query batch so each batch is judged as soon as it arrives.
 */
function readPulls(deps: TriggerDeps, repo: RegisteredRepository, numbers: number[], marks: PullMarks): Promise<Observation[]>[] {
  const batches: Promise<Observation[]>[] = [];
  for (const n of numbers) marks.asked.add(n);
  for (let i = 0; i < numbers.length; i += deps.slices.batchSize) {
    const readAt = new Date();
    const refs: ItemSliceRef[] = numbers.slice(i, i + deps.slices.batchSize).map((number) => ({ repo: repo.fullName, number, kind: "pull_request" }));
    const batch = Promise.all([deps.slices.read(repo.installationId, refs), appBotLogin(deps.github)]).then(([nodes, botLogin]) =>
      // null: GitHub no longer has it (deleted, transferred); it leaves the open pull requests
      nodes.flatMap((node) => {
        if (!node) return [];
        marks.read.set(node.number, pullMark(node));
        marks.reviews.set(node.number, submittedReviews(node));
        return [observation(repo.fullName, projectionFromGraphql(node, "pull_request", slugOfBot(botLogin)), readAt, node.authorAssociation, changesFromGraphql(node))];
      }),
    );
    batch.catch(() => undefined); // awaited in turn by the cycle
    batches.push(batch);
  }
  return batches;
}

/** The issues' GraphQL reads, for their timelines only (their projection is the listing's); null when the read failed. */
function readTimelines(deps: TriggerDeps, repo: RegisteredRepository, issues: Observation[]): Promise<(GraphqlItemNode | null)[] | null> {
  const refs: ItemSliceRef[] = issues.map((o) => ({ repo: repo.fullName, number: o.number, kind: "issue" }));
  return deps.slices.read(repo.installationId, refs).catch(() => null);
}

/** The observations with the latest timeline event and body edit their GraphQL read gave (the others look them up when they need them). */
async function withTimelines(issues: Observation[], timelines: Promise<(GraphqlItemNode | null)[] | null> | null): Promise<Observation[]> {
  const nodes = timelines ? await timelines : null;
  return issues.map((o, i) => {
    const node = nodes?.[i];
    if (!node) return o;
    const { latestEvent, bodyEdit } = changesFromGraphql(node);
    return { ...o, ...(latestEvent !== undefined ? { latestEvent } : {}), ...(bodyEdit !== undefined ? { bodyEdit } : {}) };
  });
}

/** The pull requests a cycle asked for, and the marks and submitted reviews of those GitHub returned. */
interface PullMarks {
  asked: Set<number>;
  read: Map<number, string>;
  reviews: Map<number, SubmittedReview[]>;
}

interface JudgeTotals {
  observed: number;
  opened: string[];
  revoked: string[];
  failures: Map<string, string>;
  /** Items on which a Loop's `if:` failed to evaluate, as `loop on item` */
  conditionFailed: string[];
  /** the roles this cycle asked GitHub for, by repository and login */
  roles: NonNullable<ActorLookup["roles"]>;
}

/** Stores a group of observations, then judges each (a few at once); a newer stored read wins. */
async function judgeItems(
  deps: TriggerDeps,
  repo: RegisteredRepository,
  loops: StoredConfig["loops"],
  paused: ReadonlySet<string>,
  items: Observation[],
  hasOpenWork: (loop: string, itemKey: string) => boolean,
  totals: JudgeTotals,
): Promise<void> {
  if (items.length === 0) return;
  const stale = await storeObservations(deps.db, items);
  const gens = await itemGenerations(deps.db, items.map((o) => o.key));
  totals.observed += items.length;
  await forEachLimit(
    items.filter((o) => !stale.has(o.key)),
    deps.itemConcurrency,
    async (item) => {
      const outcome = await evaluateItem(deps, { repo, loops, paused, item, generation: gens.get(item.key) ?? 0 }, hasOpenWork, [], totals.roles);
      totals.opened.push(...outcome.opened);
      totals.revoked.push(...outcome.revoked);
      for (const [loop, message] of outcome.failures) if (!totals.failures.has(loop)) totals.failures.set(loop, message);
      totals.conditionFailed.push(...outcome.conditionFailed.map((loop) => `${loop} on #${item.number}`));
    },
  );
}

/** One entry per Item: pages can overlap when Items change while the listing is read. */
function latestByNumber(items: ListedItem[]): ListedItem[] {
  const byNumber = new Map<number, ListedItem>();
  for (const item of items) {
    const seen = byNumber.get(item.number);
    if (!seen || Date.parse(item.updated_at) >= Date.parse(seen.updated_at)) byNumber.set(item.number, item);
  }
  return [...byNumber.values()];
}

function newestUpdate(items: ListedItem[]): Date | null {
  let newest: number | null = null;
  for (const item of items) {
    const t = Date.parse(item.updated_at);
    if (!Number.isNaN(t) && (newest === null || t > newest)) newest = t;
  }
  return newest === null ? null : new Date(newest);
}

