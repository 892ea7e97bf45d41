import { sign } from "@octokit/webhooks-methods";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Simulator } from "../../lib/sandbox/index";
import { webhookRouteUnderTest } from "./support/route-under-test";
import { getDb } from "../../lib/store/kernel/db";

// The Next route handler itself, on the shared test database, configured the way `npm start`
// configures the sandbox (ATELIER_SANDBOX_APP_FILE).
let sim: Simulator;
let POST: (request: Request) => Promise<Response>;

beforeAll(async () => {
  ({ sim, POST } = await webhookRouteUnderTest());
});
afterAll(async () => {
  await sim.close();
  await getDb().close();
});

const post = (body: string, headers: Record<string, string>) =>
  POST(new Request("http://localhost/api/github/webhooks", { method: "POST", body, headers: { "content-type": "application/json", ...headers } }));

describe("POST /api/github/webhooks", () => {
  it("refuses a delivery signed with another secret, and takes a signed one", async () => {
    const body = JSON.stringify({ zen: "Design for failure.", hook_id: 1 });
    const forgedId = randomUUID();
    const forged = await post(body, { "x-github-event": "ping", "x-github-delivery": forgedId, "x-hub-signature-256": await sign("wrong", body) });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ error: "webhook_signature_invalid" });
    const { rows } = await getDb().pool.query(`SELECT id FROM webhook_deliveries WHERE id = $1`, [forgedId]);
    expect(rows).toEqual([]);

    const id = randomUUID();
    const ok = await post(body, { "x-github-event": "ping", "x-github-delivery": id, "x-hub-signature-256": await sign(sim.app.webhookSecret, body) });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: "filtered", id });
  });
});
