import type { Db } from "../kernel/db";
import { announceItemsChanged } from "./item-changed";
import { first, rows, sql } from "../kernel/sql";

/** The columns of an Item that name and show it (its card, its read). */
export interface ItemColumns {
  key: string;
  repo: string;
  number: number;
  kind: string;
  state: string;
  title: string;
  author: string | null;
  labels: readonly string[];
  draft: boolean;
}

/** One read of an Item as `items` stores it (the columns of its projection the Board and the triggers read). */
export interface ItemRead extends ItemColumns {
  head_sha: string | null;
  projection: unknown;
  content_hash: string;
  github_updated_at: string;
  /** when the GitHub read that produced it began (ISO) */
  observed_at: string;
}

/**
 * Stores the Items' reads in one statement and announces the Items whose content changed
 * (item-changed.ts). A read older than the one stored (observed_at) is not stored. Returns the
 * keys stored.
 */
export async function storeItems(db: Db, items: readonly ItemRead[]): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  // `before` reads the rows as they were when the statement began (one snapshot for the whole
  // statement): an Item is changed when it is new or its content hash moved
  const written = await rows<{ key: string; changed: boolean }>(
    db.pool,
    sql`WITH r AS (
       SELECT * FROM json_to_recordset(${JSON.stringify(items)}::json) AS r(key text, repo text, number int, kind text, state text, title text, author text,
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
  );
  announceItemsChanged(db.pool, written.filter((r) => r.changed).map((r) => r.key));
  return new Set(written.map((r) => r.key));
}

/** Whether a read of the Item newer than `readAt` is stored. */
export async function newerReadStored(db: Db, key: string, readAt: Date): Promise<boolean> {
  const row = await first<{ newer: boolean }>(
    db.pool,
    sql`SELECT observed_at > (${readAt.toISOString()}::timestamptz AT TIME ZONE 'UTC') AS newer FROM items WHERE key = ${key}`,
  );
  return row?.newer ?? false;
}

/** The current cycle generation of each Item (0 until its budget's first reset: no row). */
export async function itemGenerations(db: Db, keys: readonly string[]): Promise<Map<string, number>> {
  if (keys.length === 0) return new Map();
  const found = await rows<{ item_key: string; generation: number }>(
    db.pool,
    sql`SELECT item_key, generation FROM cycle_budgets WHERE item_key = ANY(${keys}::text[])`,
  );
  return new Map(found.map((r) => [r.item_key, r.generation]));
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
  const judged = await rows<{ number: number }>(
    db.pool,
    sql`SELECT i.number FROM items i
       JOIN json_to_recordset(${JSON.stringify(listed.map((l) => ({ number: l.number, updated_at: l.updatedAt })))}::json) AS l(number int, updated_at timestamptz) ON l.number = i.number
      WHERE i.repo = ${repo.toLowerCase()} AND i.github_updated_at >= (l.updated_at AT TIME ZONE 'UTC') AND i.observed_at <= ${lastCompletedAt}`,
  );
  return new Set(judged.map((r) => r.number));
}

/** The stored kind of an Item (issue, pull_request), or null when it was never read. */
export async function itemKind(db: Db, key: string): Promise<string | null> {
  const row = await first<{ kind: string }>(db.pool, sql`SELECT kind FROM items WHERE key = ${key}`);
  return row?.kind ?? null;
}

/** The open pull requests of a repository whose stored head is `sha`. */
export async function openPullRequestsAt(db: Db, repo: string, sha: string): Promise<number[]> {
  const found = await rows<{ number: number }>(
    db.pool,
    sql`SELECT number FROM items WHERE repo = ${repo} AND kind = 'pull_request' AND state = 'open' AND head_sha = ${sha}`,
  );
  return found.map((r) => r.number);
}
