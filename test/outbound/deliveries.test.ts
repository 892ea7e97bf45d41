import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bullConnection } from "../../jobs/queues";
import { createOutboundWorker, type OutboundWorker } from "../../jobs/processors/outbound";
import { agentFailure } from "../../lib/engine/failure";
import { TRANSITIONS } from "../../lib/engine/run-state";
import { admission } from "../../lib/metering/admission";
import { attemptDelivery, dueDeliveries } from "../../lib/outbound/attempt-delivery";
import { listDeliveries, resetForRedelivery } from "../../lib/outbound/delivery-log";
import { createHook, deleteHook, listHooks } from "../../lib/outbound/hooks";
import { sendTestDelivery } from "../../lib/outbound/test-delivery";
import { DELIVERY_TIMEOUT_MS } from "../../lib/outbound/post-webhook";
import type { Resolver } from "../../lib/http/resolver";
import type { RunEventPayload } from "../../lib/store/runs/run-event-payload";
import { finishAttempt } from "../../lib/store/runs/attempts";
import { cancelRun } from "../../lib/store/runs/operator-actions";
import { recordAndClaim } from "../../lib/store/runs/claim";
import { guardedRunUpdate } from "../../lib/store/runs/run-rows";
import { sql } from "../../lib/store/kernel/sql";
import { transaction } from "../../lib/store/kernel/transaction";
import { openRun, seedTenant, startAttempt, usage, type Tenant } from "../metering/support";
import { testDb } from "../support/db";
import { itemEvent } from "../support/events";
import { startReceiver, until } from "./receiver";
import { itemKey } from "../../lib/engine/ids";
import { revoke } from "../../lib/store/runs/revoke";

const db = testDb();
const gate = admission();
const open = { allowPrivate: true };
const fast = (tries: number) => (tries < 9 ? 40 : null);

const deliveriesOf = async (runId: string) =>
  (await db.pool.query(`SELECT id, hook_id, status, attempts, last_status, last_error, payload FROM outbound_deliveries WHERE run_id = $1 ORDER BY id`, [runId])).rows;

afterAll(() => db.close());

async function failedRun(t: Tenant, number: number, loop = "start-dev"): Promise<string> {
  const runId = await openRun(db, t.repo, number, gate, loop);
  const a = await startAttempt(db, runId);
  await finishAttempt(db, a, { tag: "Failed", failure: agentFailure("agent_exit", "the agent exited with 2"), usage: usage(0.42, 90_000, true) });
  return runId;
}

describe("outbound webhooks, with the worker", () => {
  let worker: OutboundWorker;
  beforeAll(async () => {
    worker = await createOutboundWorker(bullConnection(), { db, policy: open, delayFor: fast, publicUrl: "http://atelier.test" }, {
      prefix: `test-outbound-${randomBytes(4).toString("hex")}`,
      sweepEveryMs: 0,
    });
  });
  afterAll(() => worker.close());

  it("writes the delivery with the terminal state, retries a failing receiver and is finally accepted, signed", async () => {
    let secret = "";
    const receiver = await startReceiver(() => secret, [500, 200]);
    try {
      const t = await seedTenant(db, "hook");
      const made = await createHook(db, { installation_id: t.installationId, url: receiver.url }, open);
      secret = made.secret;
      expect(made.hook.secretHint).toBe(secret.slice(-4));

      const runId = await failedRun(t, 1);
      const row = await until("the delivery", async () => {
        const rows = await deliveriesOf(runId);
        return rows[0]?.status === "delivered" ? rows[0] : null;
      });
      expect(row).toMatchObject({ hook_id: made.hook.id, attempts: 2, last_status: 200, last_error: null });

      expect(receiver.received.map((r) => [r.status, r.signatureValid])).toEqual([
        [500, true],
        [200, true],
      ]);
      const last = receiver.received[1]!;
      expect(last.headers["x-atelier-event"]).toBe("run.failed");
      expect(last.headers["x-atelier-delivery"]).toBe(String(row.id));
      expect(receiver.received[0]!.headers["x-atelier-delivery"]).toBe(String(row.id));
      const body = JSON.parse(last.body) as RunEventPayload;
      expect(Buffer.byteLength(last.body)).toBeLessThanOrEqual(64 * 1024);
      expect(body).toMatchObject({
        event: "run.failed",
        installation: { id: t.installationId },
        run: {
          id: runId,
          loop: "start-dev",
          repo: t.repo,
          number: 1,
          state: "Failed",
          cancel_reason: null,
          failure: { kind: "AgentFailure", category: "agent_exit", retryable: false, message: "the agent exited with 2" },
          usage: { attempts: 1, duration_ms: 90_000, tokens_in: 100, tokens_out: 50, cost_usd: 0.42, cost_estimated: true },
          pull_request: null,
        },
      });
      const log = await listDeliveries(db, { installationIds: [t.installationId], repos: [] });
      expect(log.map((d) => [d.id, d.event, d.status, d.attempts])).toEqual([[row.id, "run.failed", "delivered", 2]]);
    } finally {
      await receiver.close();
    }
  });

  it("writes nothing when the terminal state rolls back, and one delivery per matching hook", async () => {
    const receiver = await startReceiver(() => "", [200]);
    try {
      const t = await seedTenant(db, "hook");
      await createHook(db, { installation_id: t.installationId, url: receiver.url }, open);
      await createHook(db, { repo: t.repo, loop: "review", url: receiver.url }, open);
      const runId = await openRun(db, t.repo, 1, gate, "start-dev");
      await expect(
        transaction(db, async (tx) => {
          await guardedRunUpdate(tx, runId, TRANSITIONS.cancel, sql`cancel_reason = 'OperatorCanceled', ended_at = now()`, "cancel");
          expect(await deliveriesOf(runId)).toEqual([]); // not visible outside the transaction yet
          throw new Error("rolled back");
        }),
      ).rejects.toThrow("rolled back");
      expect(await deliveriesOf(runId)).toEqual([]);

      // the Loop hook is for "review" only: a start-dev Run goes to the installation's hook alone
      await cancelRun(db, runId, "octo");
      expect((await deliveriesOf(runId)).map((d) => d.payload.run.cancel_reason)).toEqual(["OperatorCanceled"]);
      const reviewRun = await openRun(db, t.repo, 2, gate, "review");
      await cancelRun(db, reviewRun, "octo");
      expect(await deliveriesOf(reviewRun)).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });

  it("announces a superseded Run as run.canceled with its reason", async () => {
    const t = await seedTenant(db, "hook");
    await createHook(db, { installation_id: t.installationId, url: "http://127.0.0.1:9/none" }, open);
    const first = await recordAndClaim(db, itemEvent(t.repo, 1, "v1"), gate);
    const second = await recordAndClaim(db, itemEvent(t.repo, 1, "v2"), gate);
    expect(second).toMatchObject({ tag: "Claimed", superseded: first.tag === "Claimed" ? first.runId : "?" });
    const rows = await deliveriesOf(first.tag === "Claimed" ? first.runId : "");
    expect(rows.map((r) => [r.payload.event, r.payload.run.cancel_reason])).toEqual([["run.canceled", "Superseded"]]);
  });

  it("announces a revoked Run as run.canceled, and nothing for a repository nobody subscribed to", async () => {
    const t = await seedTenant(db, "hook");
    await createHook(db, { installation_id: t.installationId, url: "http://127.0.0.1:9/none" }, open);
    const opened = await recordAndClaim(db, itemEvent(t.repo, 1, "v1"), gate);
    expect(await revoke(db, "start-dev", itemKey(t.repo, 1))).toEqual([opened.tag === "Claimed" ? opened.runId : "?"]);
    const rows = await deliveriesOf(opened.tag === "Claimed" ? opened.runId : "");
    expect(rows.map((r) => [r.payload.event, r.payload.run.cancel_reason])).toEqual([["run.canceled", "Revoked"]]);

    const quiet = await seedTenant(db, "quiet");
    const other = await recordAndClaim(db, itemEvent(quiet.repo, 1, "v1"), gate);
    await revoke(db, "start-dev", itemKey(quiet.repo, 1));
    expect(await deliveriesOf(other.tag === "Claimed" ? other.runId : "")).toEqual([]);
  });
});

async function canceledRunDelivery(repo: string, loop = "start-dev"): Promise<number> {
  const runId = await openRun(db, repo, 1, gate, loop);
  await cancelRun(db, runId, "octo");
  const { rows } = await db.pool.query<{ id: number }>(`SELECT id FROM outbound_deliveries WHERE run_id = $1`, [runId]);
  expect(rows).toHaveLength(1);
  return rows[0]!.id;
}

const row = async (id: number) =>
  (await db.pool.query(`SELECT status, attempts, last_status, last_error, next_at FROM outbound_deliveries WHERE id = $1`, [id])).rows[0];

// The worker above is closed by now: each try below is driven by hand.
describe("delivery tries, by hand", () => {
  it("backs off after a failure, gives up after the last try, and a redeliver starts again under the same id", async () => {
    let secret = "";
    const receiver = await startReceiver(() => secret, [503, 503, 200]);
    try {
      const t = await seedTenant(db, "tries");
      secret = (await createHook(db, { installation_id: t.installationId, url: receiver.url }, open)).secret;
      const id = await canceledRunDelivery(t.repo);
      // due longer than any delivery a run of the suite leaves pending in this database, so the sweep's page (oldest first) holds it
      await db.pool.query(`UPDATE outbound_deliveries SET next_at = now() - interval '10 years' WHERE id = $1`, [id]);
      expect(await dueDeliveries(db, 1000)).toContain(id);

      const twoTries = { db, policy: open, delayFor: (tries: number) => (tries < 2 ? 60_000 : null) };
      expect(await attemptDelivery(twoTries, id)).toMatchObject({ tag: "Retry", tries: 1, delayMs: 60_000, error: "HTTP 503: receiver is down" });
      // not due for a minute: a second caller (the sweep, a duplicate job) does nothing
      expect(await attemptDelivery(twoTries, id)).toEqual({ tag: "NotDue" });
      expect(await dueDeliveries(db, 1000)).not.toContain(id);
      await db.pool.query(`UPDATE outbound_deliveries SET next_at = now() - interval '1 second' WHERE id = $1`, [id]); // a minute later (a second back: the VM's clock may step)
      expect(await attemptDelivery(twoTries, id)).toMatchObject({ tag: "GaveUp", tries: 2 });
      expect(await row(id)).toMatchObject({ status: "failed", attempts: 2, last_status: 503 });
      expect(await attemptDelivery(twoTries, id)).toEqual({ tag: "NotDue" });

      await resetForRedelivery(db, id);
      expect(await attemptDelivery(twoTries, id)).toMatchObject({ tag: "Delivered", status: 200, tries: 1 });
      expect(await row(id)).toMatchObject({ status: "delivered", attempts: 1, last_status: 200, last_error: null });
      expect(receiver.received.map((r) => [r.status, r.headers["x-atelier-delivery"], r.signatureValid])).toEqual([
        [503, String(id), true],
        [503, String(id), true],
        [200, String(id), true],
      ]);
    } finally {
      await receiver.close();
    }
  });

  it("tries a 408 and a 429 again, but a 4xx that waiting cannot change fails at once with its status", async () => {
    let secret = "";
    const receiver = await startReceiver(() => secret, [429, 408, 404]);
    try {
      const t = await seedTenant(db, "tries");
      secret = (await createHook(db, { installation_id: t.installationId, url: receiver.url }, open)).secret;
      const id = await canceledRunDelivery(t.repo);
      const manyTries = { db, policy: open, delayFor: () => 60_000 };
      const due = () => db.pool.query(`UPDATE outbound_deliveries SET next_at = now() - interval '1 second' WHERE id = $1`, [id]);
      expect(await attemptDelivery(manyTries, id)).toMatchObject({ tag: "Retry", tries: 1, error: "HTTP 429: receiver is down" });
      await due();
      expect(await attemptDelivery(manyTries, id)).toMatchObject({ tag: "Retry", tries: 2, error: "HTTP 408: receiver is down" });
      await due();
      expect(await attemptDelivery(manyTries, id)).toEqual({ tag: "GaveUp", tries: 3, error: "HTTP 404: receiver is down" });
      expect(await row(id)).toMatchObject({ status: "failed", attempts: 3, last_status: 404, last_error: "HTTP 404: receiver is down" });
      // given up for good: nothing tries it again by itself
      expect(await attemptDelivery(manyTries, id)).toEqual({ tag: "NotDue" });
      expect(await dueDeliveries(db, 1000)).not.toContain(id);
      expect(receiver.received.map((r) => r.status)).toEqual([429, 408, 404]);

      // a Slack target's 4xx too (a channel archived): failed after one try, with Slack's status
      const slack = await startReceiver(() => "", [410]);
      try {
        const other = await seedTenant(db, "tries");
        await createHook(db, { installation_id: other.installationId, url: slack.url, kind: "slack", events: ["needs_approval"] }, open);
        const test = await sendTestDelivery({ db, policy: open }, (await listHooks(db, { installationIds: [other.installationId], repos: [] }))[0]!, "http://atelier.test");
        expect(test.outcome).toEqual({ tag: "GaveUp", tries: 1, error: "HTTP 410: receiver is down" });
        expect(await row(test.delivery.id)).toMatchObject({ status: "failed", attempts: 1, last_status: 410 });
        expect(slack.received).toHaveLength(1);
      } finally {
        await slack.close();
      }
    } finally {
      await receiver.close();
    }
  });

  it("checks the target again at delivery time: a name re-pointed at a private address is refused", async () => {
    let secret = "";
    const receiver = await startReceiver(() => secret, [200]);
    try {
      const t = await seedTenant(db, "tries");
      let answer = "93.184.216.34";
      const resolve: Resolver = async () => [{ address: answer, family: 4 }];
      const url = `http://rebind.example.test:${receiver.port}/hook`;
      secret = (await createHook(db, { installation_id: t.installationId, url }, { allowPrivate: false, resolve })).secret;
      const id = await canceledRunDelivery(t.repo);

      answer = "127.0.0.1"; // DNS rebinding: the name now points inside
      const refused = await attemptDelivery({ db, policy: { allowPrivate: false, resolve }, delayFor: () => null }, id);
      expect(refused).toMatchObject({ tag: "GaveUp", error: expect.stringMatching(/^webhook_target_private: .*127\.0\.0\.1/) });
      expect(receiver.received).toEqual([]);

      // the connection goes to the very address the guard checked: allowed, the name reaches 127.0.0.1
      await resetForRedelivery(db, id);
      expect(await attemptDelivery({ db, policy: { allowPrivate: true, resolve }, delayFor: () => null }, id)).toMatchObject({ tag: "Delivered" });
      expect(receiver.received).toHaveLength(1);
      expect(receiver.received[0]!.headers.host).toBe(`rebind.example.test:${receiver.port}`);
      expect(receiver.received[0]!.signatureValid).toBe(true);
    } finally {
      await receiver.close();
    }
  });

  it("a receiver that never answers is cut at the timeout; a deleted hook's delivery gives up", async () => {
    const t = await seedTenant(db, "tries");
    const { createServer } = await import("node:net");
    const silent = createServer(() => undefined); // accepts, never answers
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    try {
      const port = (silent.address() as { port: number }).port;
      const hook = await createHook(db, { installation_id: t.installationId, url: `http://127.0.0.1:${port}/` }, open);
      const id = await canceledRunDelivery(t.repo);
      const started = Date.now();
      const outcome = await attemptDelivery({ db, policy: open, timeoutMs: 200, delayFor: () => 1 }, id);
      expect(outcome).toMatchObject({ tag: "Retry", error: "no answer within 200 ms" });
      // the given 200 ms, not the default ten seconds (a margin a busy machine cannot eat)
      expect(Date.now() - started).toBeLessThan(DELIVERY_TIMEOUT_MS);

      await deleteHook(db, hook.hook.id);
      await db.pool.query(`UPDATE outbound_deliveries SET next_at = now() - interval '1 second' WHERE id = $1`, [id]);
      expect(await attemptDelivery({ db, policy: open }, id)).toMatchObject({ tag: "GaveUp", error: "the webhook was deleted" });
    } finally {
      silent.close();
    }
  });
});
