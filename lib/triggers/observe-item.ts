import { contentHash } from "../engine/content-hash";
import { itemKey } from "../engine/ids";
import type { BodyEdit, TimelineEvent } from "../loops/timeline-events";
import type { ItemProjection } from "../loops/projection";
import type { Db } from "../store/kernel/db";
import { storeItems } from "../store/items/stored-items";
import { recordPullRequestStates } from "../store/runs/pull-request-outcomes";
import { countRunOutcome, metrics } from "../metrics/metrics";

/** One read of an Item: its projection, content hash, and when the read was sent. */
export interface Observation {
  key: string;
  repo: string;
  number: number;
  projection: ItemProjection;
  hash: string;
  /** when the GitHub read that produced it began (orders concurrent polls and Hints) */
  readAt: Date;
  /** GitHub's author_association as that read gave it (not in the projection: no content of the Item); undefined when it did not */
  authorAssociation?: string | null;
  /** the Item's latest timeline event with an actor, when that read carried its timeline (GraphQL); undefined when it did not */
  latestEvent?: TimelineEvent | null;
  /** who last edited the body, when that read carried it (GraphQL); null: no one; undefined when it did not */
  bodyEdit?: BodyEdit | null;
}

/** Who changed an Item, as a GraphQL read of it tells (undefined: it cannot tell). */
export interface ItemChanges {
  latestEvent?: TimelineEvent | null;
  bodyEdit?: BodyEdit | null;
}

export function observation(repo: string, projection: ItemProjection, readAt: Date, authorAssociation?: string | null, changes: ItemChanges = {}): Observation {
  const fullName = repo.toLowerCase();
  return {
    key: itemKey(fullName, projection.number),
    repo: fullName,
    number: projection.number,
    projection,
    hash: contentHash(projection),
    readAt,
    ...(authorAssociation !== undefined ? { authorAssociation } : {}),
    ...(changes.latestEvent !== undefined ? { latestEvent: changes.latestEvent } : {}),
    ...(changes.bodyEdit !== undefined ? { bodyEdit: changes.bodyEdit } : {}),
  };
}

/**
 * Stores the Items' projections in one statement and announces the Items whose content changed
 * (lib/store/items/stored-items.ts). An observation older than the one stored (a Hint read the Item after this
 * poll did) is not stored, and its key is returned among the stale ones: the newer read is the
 * one that judges the Item.
 */
export async function storeObservations(db: Db, observations: readonly Observation[]): Promise<Set<string>> {
  const stored = await storeItems(
    db,
    observations.map((o) => ({
      key: o.key,
      repo: o.repo,
      number: o.number,
      kind: o.projection.kind,
      state: o.projection.state,
      title: o.projection.title,
      author: o.projection.author,
      labels: o.projection.labels,
      draft: o.projection.draft,
      head_sha: o.projection.headRefOid,
      projection: o.projection,
      content_hash: o.hash,
      github_updated_at: o.projection.updatedAt,
      observed_at: o.readAt.toISOString(),
    })),
  );
  await notePullRequestOutcomes(db, observations.filter((o) => stored.has(o.key)));
  return new Set(observations.filter((o) => !stored.has(o.key)).map((o) => o.key));
}

/** Writes on their Runs what became of the pull requests just stored, and counts the merges and closes (docs/insights.md). */
async function notePullRequestOutcomes(db: Db, stored: readonly Observation[]): Promise<void> {
  const pulls = stored.filter((o) => o.projection.kind === "pull_request");
  const outcomes = await recordPullRequestStates(
    db,
    pulls.map((o) => ({ repo: o.repo, number: o.number, state: o.projection.state, closedAt: o.projection.mergedAt ?? o.projection.closedAt })),
  );
  for (const o of outcomes) {
    countRunOutcome(o.state);
    if (o.state === "merged") metrics.triggerToMerge.observe(o.triggerToCloseS);
  }
}
