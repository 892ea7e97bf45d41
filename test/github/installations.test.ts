import { sign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileInstallations } from "../../lib/github/installation-sync";
import { eventually, startFixture, startWebhookEndpoint, type Fixture } from "./support/fixture";
import { polledRepositories } from "../../lib/store/github/repository-rows";

let fx: Fixture;
let endpoint: { url: string; close(): Promise<void> };

beforeAll(async () => {
  fx = await startFixture();
  endpoint = await startWebhookEndpoint(fx);
});
afterAll(async () => {
  await endpoint.close();
  await fx.close();
});

async function deliveries(id?: string) {
  const { rows } = await fx.db.pool.query(`SELECT id, event, action, status FROM webhook_deliveries ${id ? "WHERE id = $1" : ""} ORDER BY received_at`, id ? [id] : []);
  return rows;
}

describe("installation lifecycle from webhooks", () => {
  it("registers the repositories of an installation the simulator announces", async () => {
    fx.sim.createOrg({ login: "acme" });
    await fx.sim.createRepo({ owner: "acme", name: "api" });
    await fx.sim.createRepo({ owner: "acme", name: "web" });
    const installation = fx.sim.createInstallation({ account: "acme", repos: ["api", "web"] });
    await fx.sim.waitForWebhooks();
    const repos = await polledRepositories(fx.db);
    expect(repos.filter((r) => r.installationId === installation.id).map((r) => r.fullName)).toEqual(["acme/api", "acme/web"]);
    const [delivery] = fx.sim.deliveries({ event: "installation", action: "created" });
    expect(await deliveries(delivery!.id)).toEqual([{ id: delivery!.id, event: "installation", action: "created", status: "accepted" }]);
  });

  it("follows repositories added and removed, and a suspension", async () => {
    await fx.sim.createRepo({ owner: "acme", name: "docs" });
    fx.sim.addRepository({ repo: "acme/docs" });
    fx.sim.removeRepository({ repo: "acme/web" });
    await fx.sim.waitForWebhooks();
    expect((await polledRepositories(fx.db)).map((r) => r.fullName)).toEqual(["acme/api", "acme/docs"]);
    fx.sim.suspendInstallation({ account: "acme" });
    await fx.sim.waitForWebhooks();
    expect(await polledRepositories(fx.db)).toEqual([]);
    fx.sim.unsuspendInstallation({ account: "acme" });
    await fx.sim.waitForWebhooks();
    expect((await polledRepositories(fx.db)).map((r) => r.fullName)).toEqual(["acme/api", "acme/docs"]);
  });

  it("refuses a forged delivery with 401 and stores nothing", async () => {
    const body = JSON.stringify({ action: "created", installation: { id: 999001, account: { login: "evil" } }, repositories: [{ id: 999002, full_name: "evil/repo" }] });
    const forged = await fetch(endpoint.url, {
      method: "POST",
      body,
      headers: {
        "content-type": "application/json",
        "x-github-event": "installation",
        "x-github-delivery": "forged-1",
        "x-hub-signature-256": await sign("not-the-secret", body),
      },
    });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ error: "webhook_signature_invalid" });
    const unsigned = await fetch(endpoint.url, { method: "POST", body, headers: { "x-github-event": "installation", "x-github-delivery": "forged-2" } });
    expect(unsigned.status).toBe(401);
    expect(await deliveries("forged-1")).toEqual([]);
    expect(await deliveries("forged-2")).toEqual([]);
    const { rows } = await fx.db.pool.query(`SELECT id FROM installations WHERE id = 999001`);
    expect(rows).toEqual([]);
  });

  it("answers a redelivery as a duplicate and an unwanted event as filtered", async () => {
    const [delivery] = fx.sim.deliveries({ event: "installation", action: "created" });
    fx.sim.redeliver({ id: delivery!.id });
    await fx.sim.waitForWebhooks();
    const again = fx.sim.deliveries().filter((d) => d.id === delivery!.id && d.redelivery);
    expect(again.map((d) => d.statusCode)).toEqual([200]);
    expect(await deliveries(delivery!.id)).toEqual([{ id: delivery!.id, event: "installation", action: "created", status: "accepted" }]);

    const body = JSON.stringify({ zen: "Keep it logically awesome.", hook_id: 1 });
    const ping = await fetch(endpoint.url, {
      method: "POST",
      body,
      headers: { "x-github-event": "ping", "x-github-delivery": "ping-1", "x-hub-signature-256": await sign(fx.settings.webhookSecret, body) },
    });
    expect(await ping.json()).toEqual({ status: "filtered", id: "ping-1" });
    expect(await deliveries("ping-1")).toEqual([{ id: "ping-1", event: "ping", action: null, status: "filtered" }]);
  });

  it("reconciles with GitHub: an installation whose webhook was lost is registered, a deleted one is not", async () => {
    fx.sim.createOrg({ login: "globex" });
    await fx.sim.createRepo({ owner: "globex", name: "site" });
    fx.sim.dropNextWebhook();
    fx.sim.createInstallation({ account: "globex" });
    await fx.sim.waitForWebhooks();
    expect((await polledRepositories(fx.db)).map((r) => r.fullName)).not.toContain("globex/site");
    const result = await reconcileInstallations(fx.deps);
    expect(result.registered).toEqual(["globex/site"]);
    expect((await polledRepositories(fx.db)).map((r) => r.fullName)).toEqual(["acme/api", "acme/docs", "globex/site"]);

    fx.sim.dropNextWebhook();
    fx.sim.deleteInstallation({ account: "globex" });
    await fx.sim.waitForWebhooks();
    const after = await reconcileInstallations(fx.deps);
    expect(after.removed).toEqual(["globex/site"]);
    await eventually(async () => ((await polledRepositories(fx.db)).some((r) => r.fullName === "globex/site") ? undefined : true));
  });
});
