import { contentHash } from "../engine/content-hash";
import { itemKey } from "../engine/ids";
import type { TimelineEvent } from "../github/timeline-events";
import type { ItemProjection } from "../loops/projection";
import type { Db } from "../store/db";
import { announceItemsChanged } from "../store/item-changed";

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
}

export function observation(repo: string, projection: ItemProjection, readAt: Date, authorAssociation?: string | null, latestEvent?: TimelineEvent | null): Observation {
  const fullName = repo.toLowerCase();
  return {
    key: itemKey(fullName, projection.number),
    repo: fullName,
    number: projection.number,
    projection,
    hash: contentHash(projection),
    readAt,
    ...(authorAssociation !== undefined ? { authorAssociation } : {}),
    ...(latestEvent !== undefined ? { latestEvent } : {}),
  };
}

/**
 * Stores the Items' projections in one statement and announces the Items whose content changed
 * (item-changed.ts). An observation older than the one stored (a Hint read the Item after this
 * poll did) is not stored, and its key is returned among the stale ones: the newer read is the
 * one that judges the Item.
 */
export async function storeObservations(db: Db, observations: readonly Observation[]): Promise<Set<string>> {
  if (observations.length === 0) return new Set();
  const rows = observations.map((o) => ({
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
  }));
  // `before` reads the rows as they were when the statement began (one snapshot for the whole
  // statement): an Item is changed when it is new or its content hash moved
  const { rows: written } = await db.pool.query<{ key: string; changed: boolean }>(
    `WITH r AS (
       SELECT * FROM json_to_recordset($1::json) AS r(key text, repo text, number int, kind text, state text, title text, author text,
            labels json, draft boolean, head_sha text, projection jsonb, content_hash text, github_updated_at timestamptz,
            observed_at timestamptz)
     ), before AS (
       SELECT key, content_hash FROM items WHERE key IN (SELECT key FROM r)
     ), written AS (
       INSERT INTO items (key, repo, number, kind, state, title, author, labels, draft, head_sha, projection, content_hash,
                          github_updated_at, observed_at)
       SELECT r.key, r.repo, r.number, r.kind, r.state, r.title, r.author,
              ARRAY(SELECT json_array_elements_text(r.labels)), r.draft, r.head_sha, r.projection, r.content_hash,
              (r.github_updated_at AT TIME ZONE 'UTC'), (r.observed_at AT TIME ZONE 'UTC')
         FROM r
       ON CONFLICT (key) DO UPDATE SET kind = EXCLUDED.kind, state = EXCLUDED.state, title = EXCLUDED.title,
         author = EXCLUDED.author, labels = EXCLUDED.labels, draft = EXCLUDED.draft, head_sha = EXCLUDED.head_sha,
         projection = EXCLUDED.projection, content_hash = EXCLUDED.content_hash,
         github_updated_at = EXCLUDED.github_updated_at, observed_at = EXCLUDED.observed_at
       WHERE items.observed_at <= EXCLUDED.observed_at
       RETURNING key, content_hash
     )
     SELECT w.key, b.content_hash IS DISTINCT FROM w.content_hash AS changed FROM written w LEFT JOIN before b ON b.key = w.key`,
    [JSON.stringify(rows)],
  );
  announceItemsChanged(db.pool, written.filter((r) => r.changed).map((r) => r.key));
  const stored = new Set(written.map((r) => r.key));
  return new Set(observations.filter((o) => !stored.has(o.key)).map((o) => o.key));
}

/** Whether a newer read of the Item than `readAt` was stored meanwhile (then this one must not act). */
export async function isSuperseded(db: Db, key: string, readAt: Date): Promise<boolean> {
  const { rows } = await db.pool.query<{ newer: boolean }>(
    `SELECT observed_at > ($2::timestamptz AT TIME ZONE 'UTC') AS newer FROM items WHERE key = $1`,
    [key, readAt.toISOString()],
  );
  return rows[0]?.newer ?? false;
}

/** The current cycle generation of each Item (0 until its budget's first reset). */
export async function generations(db: Db, keys: readonly string[]): Promise<Map<string, number>> {
  if (keys.length === 0) return new Map();
  const { rows } = await db.pool.query<{ item_key: string; generation: number }>(
    `SELECT item_key, generation FROM cycle_budgets WHERE item_key = ANY($1::text[])`,
    [keys],
  );
  return new Map(rows.map((r) => [r.item_key, r.generation]));
}

/**
 * The listed Items whose listed version was already read and judged by a completed cycle (the
 * listing's 5-second overlap lists them again): same updated_at stored, observed before that
 * cycle completed. A version stored by a cycle that failed, or by a Hint after the last
 * completed cycle, is not among them.
 */
export async function alreadyJudged(
  db: Db,
  repo: string,
  listed: readonly { number: number; updatedAt: string }[],
  lastCompletedAt: Date | null,
): Promise<Set<number>> {
  if (listed.length === 0 || lastCompletedAt === null) return new Set();
  const { rows } = await db.pool.query<{ number: number }>(
    `SELECT i.number FROM items i
       JOIN json_to_recordset($2::json) AS l(number int, updated_at timestamptz) ON l.number = i.number
      WHERE i.repo = $1 AND i.github_updated_at >= (l.updated_at AT TIME ZONE 'UTC') AND i.observed_at <= $3`,
    [repo.toLowerCase(), JSON.stringify(listed.map((l) => ({ number: l.number, updated_at: l.updatedAt }))), lastCompletedAt],
  );
  return new Set(rows.map((r) => r.number));
}
