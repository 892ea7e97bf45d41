import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { projectionFromRest, type RestItem } from "../../lib/loops/projection";
import type { Db } from "../../lib/store/kernel/db";
import { ITEM_CHANGED_CHANNEL } from "../../lib/store/items/item-changed";
import { observation, storeObservations } from "../../lib/triggers/observe-item";
import { testDb, uniqueRepo } from "../support/db";

// An Item whose stored content changes — with or without a Run: a label no Loop matches, a
// close, an edit — is announced on its own channel, once per change (the live views listen).
let db: Db;
let listener: pg.Client;
const heard: string[] = [];

beforeAll(async () => {
  db = testDb(2);
  listener = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test" });
  await listener.connect();
  listener.on("notification", (msg) => {
    if (msg.channel === ITEM_CHANGED_CHANNEL && msg.payload) heard.push(msg.payload);
  });
  await listener.query(`LISTEN ${ITEM_CHANGED_CHANNEL}`);
});
afterAll(async () => {
  await listener.end();
  await db.close();
});

function issue(number: number, labels: string[], updatedAt: string): RestItem {
  return {
    number,
    title: `Issue ${number}`,
    body: "",
    state: "open",
    html_url: `https://github.com/x/y/issues/${number}`,
    created_at: "2026-01-01T00:00:00Z",
    updated_at: updatedAt,
    labels,
  };
}

const read = (repo: string, item: RestItem) => observation(repo, projectionFromRest(item), new Date());

it("an Item is announced when it is new or its content changed, not when it is read again unchanged", async () => {
  const repo = uniqueRepo("items");
  const [a, b] = [read(repo, issue(1, [], "2026-01-01T00:00:00Z")), read(repo, issue(2, [], "2026-01-01T00:00:00Z"))];
  await storeObservations(db, [a]);
  await expect.poll(() => heard.filter((k) => k === a.key)).toHaveLength(1);

  // read again (a later poll, a newer updated_at) with the same content: not announced. Item 2,
  // new, is stored after it through the same announcer: once it is heard, item 1 would have been
  await storeObservations(db, [read(repo, issue(1, [], "2026-01-02T00:00:00Z"))]);
  await storeObservations(db, [b]);
  await expect.poll(() => heard.includes(b.key)).toBe(true);
  expect(heard.filter((k) => k === a.key)).toHaveLength(1);

  // a label no Loop matches: announced
  await storeObservations(db, [read(repo, issue(1, ["docs"], "2026-01-03T00:00:00Z"))]);
  await expect.poll(() => heard.filter((k) => k === a.key)).toHaveLength(2);
});
