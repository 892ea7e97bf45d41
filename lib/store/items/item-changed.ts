import type pg from "pg";
import { announce } from "../kernel/announce";

/**
 * Every stored change of an Item's content (its labels, state, title, body … — what its content
 * hash covers) is announced on this Postgres channel with the Item's key, whether or not a Loop
 * matches it, batched and off the writer's path (announce.ts). The dashboard's live views
 * listen, so a card moves when its Item does, not only when a Run changes.
 */
export const ITEM_CHANGED_CHANNEL = "atelier_item_changed";

type Queryable = Pick<pg.PoolClient, "query">;

/** Announces Items whose stored content changed, by key, within a few milliseconds. */
export function announceItemsChanged(pool: Queryable, keys: readonly string[]): void {
  if (keys.length) announce(pool, ITEM_CHANGED_CHANNEL, keys);
}
