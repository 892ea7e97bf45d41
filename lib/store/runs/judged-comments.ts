import type { Db } from "../kernel/db";
import { rows, sql } from "../kernel/sql";

/**
 * Of the comments' content hashes (each on its Item), those some comments Loop already recorded
 * an Event for: judged before (by its webhook's Hint or an earlier poll), nothing to do again.
 */
export async function judgedComments(db: Db, loops: readonly string[], comments: readonly { itemKey: string; hash: string }[]): Promise<Set<string>> {
  if (loops.length === 0 || comments.length === 0) return new Set();
  const found = await rows<{ content_hash: string }>(
    db.pool,
    sql`SELECT DISTINCT e.content_hash FROM events e
         JOIN json_to_recordset(${JSON.stringify(comments.map((c) => ({ item_key: c.itemKey, hash: c.hash })))}::json) AS c(item_key text, hash text)
           ON e.item_key = c.item_key AND e.content_hash = c.hash
        WHERE e.loop = ANY(${[...loops]}::text[])`,
  );
  return new Set(found.map((r) => r.content_hash));
}
