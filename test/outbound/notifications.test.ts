import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bullConnection } from "../../jobs/queues";
import { createOutboundWorker, type OutboundWorker } from "../../jobs/processors/outbound";
import { agentFailure } from "../../lib/engine/failure";
import { itemKey } from "../../lib/engine/ids";
import { admission } from "../../lib/metering/admission";
import { createHook, updateHook } from "../../lib/outbound/hooks";
import type { NoticePayload } from "../../lib/outbound/notices";
import { sendTestDelivery } from "../../lib/outbound/test-delivery";
import { parkForApproval } from "../../lib/store/runs/approvals";
import { finishAttempt } from "../../lib/store/runs/attempts";
import { openRun, seedTenant, startAttempt, usage, type Tenant } from "../metering/support";
import { createPrivateDb, type PrivateDb } from "../support/private-db";
import type { Db } from "../../lib/store/kernel/db";
import { startReceiver, until, type Receiver } from "./receiver";
import { slackMessageProblems } from "./slack-limits";

// a database of its own: an instance's target hears of every Run, the other files' too
let pdb: PrivateDb;
let db: Db;
const gate = admission();
const open = { allowPrivate: true };
const fast = (tries: number) => (tries < 9 ? 40 : null);
const PUBLIC_URL = "http://atelier.test";

beforeAll(async () => {
  pdb = await createPrivateDb("notices");
  db = pdb.db;
});
afterAll(() => pdb?.drop());

const deliveriesOfHook = async (hookId: number) =>
  (await db.pool.query(`SELECT id, run_id, subject, status, attempts, last_status, payload FROM outbound_deliveries WHERE hook_id = $1 ORDER BY id`, [hookId])).rows;

async function seedItemTitle(t: Tenant, number: number, title: string): Promise<void> {
  await db.pool.query(
    `INSERT INTO items (key, repo, number, kind, state, title, projection, content_hash) VALUES ($1, $2, $3, 'issue', 'open', $4, '{}', 'h') ON CONFLICT (key) DO UPDATE SET title = $4`,
    [itemKey(t.repo, number), t.repo, number, title],
  );
}

describe("notifications: a Slack target and notices", () => {
  let worker: OutboundWorker;
  const receivers: Receiver[] = [];
  const receiver = async (statuses: number[]) => {
    const r = await startReceiver(() => "", statuses);
    receivers.push(r);
    return r;
  };
  beforeAll(async () => {
    worker = await createOutboundWorker(bullConnection(), { db, policy: open, delayFor: fast, publicUrl: PUBLIC_URL }, {
      prefix: `test-notices-${randomBytes(4).toString("hex")}`,
      sweepEveryMs: 0,
    });
  });
  afterAll(async () => {
    await worker.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  it("sends a subscribed notice to Slack as Block Kit within Slack's limits, and tries again after a 5xx", async () => {
    const slack = await receiver([503, 200]);
    const t = await seedTenant(db, "slack");
    const { hook, secret } = await createHook(db, { installation_id: t.installationId, url: slack.url, kind: "slack", events: ["needs_approval"] }, open);
    expect(secret).toBe("");
    expect(hook).toMatchObject({ kind: "slack", events: ["needs_approval"], secretHint: "" });
    expect(hook.url).not.toContain("/hooks/atelier"); // the path is the credential: masked
    expect(hook.url).toMatch(/\/…lier$/);
    // an attacker's title tries to ping the channel and to pass a link off as Atelier's
    await seedItemTitle(t, 1, "Fix <!channel> now <https://evil.example|Approve here> & more");
    const runId = await openRun(db, t.repo, 1, gate);
    await parkForApproval(db, runId);

    await until("the retried Slack delivery", async () => (slack.received.length >= 2 ? true : null));
    expect(slack.received.map((r) => r.status)).toEqual([503, 200]);
    const [row] = await until("the delivery delivered", async () => {
      const rows = await deliveriesOfHook(hook.id);
      return rows[0]?.status === "delivered" ? rows : null;
    });
    expect(row).toMatchObject({ run_id: runId, subject: `needs_approval:${runId}`, attempts: 2, last_status: 200 });

    const message = JSON.parse(slack.received[1]!.body) as { text: string; blocks: { type: string; text?: { text: string }; elements?: { text: { text: string }; url: string; style?: string }[] }[] };
    expect(slack.received[1]!.headers["x-atelier-signature"]).toBeUndefined();
    expect(slackMessageProblems(message)).toEqual([]);
    expect(message.blocks.map((b) => b.type)).toEqual(["header", "section", "context", "actions"]);
    expect(message.blocks[0]!.text!.text).toBe(`Needs approval · ${t.repo}#1`);
    const section = message.blocks[1]!.text!.text;
    expect(section).toContain("Fix &lt;!channel&gt; now &lt;https://evil.example|Approve here&gt; &amp; more");
    expect(section).toContain("waits for an approval");
    expect(JSON.stringify(message)).not.toContain("<!channel>");
    const buttons = message.blocks[3]!.elements!;
    expect(buttons.map((b) => [b.text.text, b.url, b.style ?? null])).toEqual([
      ["Open the Run", `${PUBLIC_URL}/runs/${runId}`, null],
      ["Approve", `${PUBLIC_URL}/runs/${runId}#actions`, "primary"],
    ]);

    // the sweep finds the same notice again: it is delivered once per target and subject
    await worker.sweep();
    expect(await deliveriesOfHook(hook.id)).toHaveLength(1);
  });

  it("cuts long texts to Slack's limits", async () => {
    const slack = await receiver([200]);
    const t = await seedTenant(db, "slack");
    const { hook } = await createHook(db, { repo: t.repo, loop: "start-dev", url: slack.url, kind: "slack", events: ["failed"] }, open);
    await seedItemTitle(t, 2, "T".repeat(5000));
    const runId = await openRun(db, t.repo, 2, gate);
    const a = await startAttempt(db, runId);
    await finishAttempt(db, a, { tag: "Failed", failure: agentFailure("agent_exit", "x".repeat(10_000)), usage: usage(0.1) });
    await until("the Slack message", async () => (slack.received.length ? true : null));
    const message = JSON.parse(slack.received[0]!.body) as unknown;
    expect(slackMessageProblems(message)).toEqual([]);
    expect((await deliveriesOfHook(hook.id)).map((d) => (d.payload as NoticePayload).event)).toEqual(["notice.failed"]);
  });

  it("tells a target only what it is subscribed to, of what happened after it was made, and never a Slack target a terminal state", async () => {
    const hooks = await receiver([200]);
    const t = await seedTenant(db, "notice");
    const before = await openRun(db, t.repo, 3, gate);
    await parkForApproval(db, before);
    await db.pool.query(`UPDATE runs SET updated_at = now() - interval '1 minute' WHERE id = $1`, [before]);
    const slack = await createHook(db, { installation_id: t.installationId, url: hooks.url, kind: "slack", events: ["pull_request_opened"] }, open);
    const webhook = await createHook(db, { instance: true, url: hooks.url, events: ["config_error", "needs_approval"] }, open);
    await worker.sweep();
    expect(await deliveriesOfHook(slack.hook.id)).toEqual([]);
    expect((await deliveriesOfHook(webhook.hook.id)).filter((d) => d.run_id === before)).toEqual([]);

    // a Run that fails: the webhook gets run.failed (every webhook does), the Slack target nothing
    const failed = await openRun(db, t.repo, 4, gate);
    const a = await startAttempt(db, failed);
    await finishAttempt(db, a, { tag: "Failed", failure: agentFailure("agent_exit", "exit 1"), usage: usage(0.1) });
    await until("the webhook's run.failed", async () => (await deliveriesOfHook(webhook.hook.id)).some((d) => d.run_id === failed) || null);
    expect(await deliveriesOfHook(slack.hook.id)).toEqual([]);

    // a repository's config error reaches the instance's webhook, signed, once
    await db.pool.query(`UPDATE repositories SET config_error = 'loops.start-dev.if: unexpected token', updated_at = now() WHERE full_name = $1`, [t.repo]);
    await worker.sweep();
    await worker.sweep();
    const notices = (await deliveriesOfHook(webhook.hook.id)).filter((d) => d.subject?.startsWith("config_error:"));
    expect(notices.map((d) => (d.payload as NoticePayload).notice)).toEqual([
      expect.objectContaining({ kind: "config_error", repo: t.repo, reason: "loops.start-dev.if: unexpected token", run_id: null }),
    ]);
    await until("the config error delivered, signed", async () => hooks.received.find((r) => r.headers["x-atelier-event"] === "notice.config_error" && r.body.includes(t.repo)) ?? null);
  });

  it("the test delivery reaches the target now and stays in the log; a private address stays refused", async () => {
    const slack = await receiver([200]);
    const t = await seedTenant(db, "test-delivery");
    const { hook } = await createHook(db, { installation_id: t.installationId, url: slack.url, kind: "slack", events: [] }, open);
    const { delivery, outcome } = await sendTestDelivery({ db, policy: open }, hook, PUBLIC_URL);
    expect(outcome).toMatchObject({ tag: "Delivered", status: 200 });
    expect(delivery).toMatchObject({ hookId: hook.id, event: "notice.test", status: "delivered", runId: null });
    expect(delivery.url).toBe(hook.url); // the log masks a Slack URL too
    expect(delivery.url).not.toContain("/hooks/atelier");
    const message = JSON.parse(slack.received[0]!.body) as { blocks: { text?: { text: string } }[] };
    expect(slackMessageProblems(message)).toEqual([]);
    expect(message.blocks[0]!.text!.text).toBe("Test delivery");

    // the SSRF guard holds for Slack targets as for webhooks: at subscription, and at each try
    await expect(createHook(db, { installation_id: t.installationId, url: slack.url, kind: "slack" }, { allowPrivate: false })).rejects.toMatchObject({ token: "webhook_target_private" });
    const closed = await sendTestDelivery({ db, policy: { allowPrivate: false } }, hook, PUBLIC_URL);
    expect(closed.outcome).toMatchObject({ tag: "Retry" });
    expect(closed.delivery.lastError).toMatch(/^webhook_target_private/);
    expect(slack.received).toHaveLength(1);
    // a Slack target takes no secret
    await expect(createHook(db, { installation_id: t.installationId, url: slack.url, kind: "slack", secret: "s".repeat(20) }, open)).rejects.toMatchObject({ token: "slack_target_secret" });
    await expect(updateHook(db, hook.id, { rotate_secret: true }, open)).rejects.toMatchObject({ token: "slack_target_secret" });
    expect((await updateHook(db, hook.id, { events: ["failed", "failed", "verify_failed"] }, open)).hook.events).toEqual(["failed", "verify_failed"]);
  });
});
