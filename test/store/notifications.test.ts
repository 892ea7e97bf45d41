import { randomBytes } from "node:crypto";
import { afterAll, expect, it } from "vitest";
import { createNotifications } from "../../lib/store/kernel/notifications";
import { testDb } from "../support/db";

// One LISTEN connection, many subscribers: payloads reach the subscribers of their channel
// only; a lost connection comes back with every channel, says so, and is gone once nobody listens.
const db = testDb(2);
const tag = randomBytes(3).toString("hex");
const A = `test_notify_a_${tag}`;
const B = `test_notify_b_${tag}`;

afterAll(async () => {
  await db.close();
});

const notify = (channel: string, payload: string) => db.pool.query(`SELECT pg_notify($1, $2)`, [channel, payload]);

/** Waits (up to 20 s) until `check` holds, notifying `poke` meanwhile when given. */
async function eventually(check: () => boolean | Promise<boolean>, poke?: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("not within 20 s");
    await poke?.();
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The backends listening to `channel`, by the text of the statement they last ran. */
async function listenerPids(channel: string): Promise<number[]> {
  const { rows } = await db.pool.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE query LIKE $1`, [`%LISTEN ${channel}%`]);
  return rows.map((r) => r.pid);
}

it("hands each channel's payloads to its subscribers, over one connection", async () => {
  const notifications = createNotifications({ ...db.pool.options }, { retryMs: 100 });
  const heard: string[] = [];
  const a1 = notifications.subscribe(A, (p) => heard.push(`a1:${p}`));
  const a2 = notifications.subscribe(A, (p) => heard.push(`a2:${p}`));
  const b = notifications.subscribe(B, (p) => heard.push(`b:${p}`));
  await Promise.all([a1.ready, a2.ready, b.ready]);
  expect(notifications.listening).toBe(true);
  await notify(A, "x");
  await notify(B, "y");
  await eventually(() => heard.length === 3);
  expect(heard.sort()).toEqual(["a1:x", "a2:x", "b:y"]);

  // a subscriber of a channel already listened to is ready at once, on the same connection
  const a3 = notifications.subscribe(A, (p) => heard.push(`a3:${p}`));
  await a3.ready;
  a3.close();
  a1.close();
  heard.length = 0;
  await notify(A, "z");
  await eventually(() => heard.length === 1);
  expect(heard).toEqual(["a2:z"]);
  a2.close();
  b.close();
  await eventually(() => !notifications.listening);
  await notifications.close();
});

it("comes back after a lost connection with every channel, and tells the subscribers", async () => {
  const notifications = createNotifications({ ...db.pool.options }, { retryMs: 100 });
  const heard: string[] = [];
  let reconnects = 0;
  const errors: Error[] = [];
  const a = notifications.subscribe(A, (p) => heard.push(p), { onReconnect: () => reconnects++, onError: (e) => errors.push(e) });
  await a.ready;
  const pids = await listenerPids(A);
  expect(pids).toHaveLength(1);
  await db.pool.query(`SELECT pg_terminate_backend($1)`, [pids[0]]);
  await eventually(() => reconnects === 1);
  expect(notifications.listening).toBe(true);
  expect(errors.length).toBeGreaterThan(0);
  // a channel first subscribed after the loss is listened to on the new connection too
  const b = notifications.subscribe(B, (p) => heard.push(`b:${p}`));
  await b.ready;
  await eventually(
    () => heard.includes("after") && heard.includes("b:after"),
    () => Promise.all([notify(A, "after"), notify(B, "after")]),
  );
  a.close();
  b.close();
  await notifications.close();
  await eventually(async () => (await listenerPids(A)).length === 0);
});
