import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgetAccess } from "../../lib/auth/authorize";
import { setInstanceConfigForTests } from "../../lib/auth/instance-config";
import { defaultInstanceConfig } from "../../lib/config/roster";
import type { Db } from "../../lib/store/kernel/db";
import { insertOutboundHook } from "../../lib/store/outbound/outbound-hooks";
import { testDb } from "../support/db";
import { startReceiver } from "../outbound/receiver";
import { slackMessageProblems } from "../outbound/slack-limits";
import { call } from "./support/api-client";
import { FakeGitHub } from "./support/fake-github";
import { cookieFor, seedItem, seedRepo, seedRun, seedUser, uniqueInstallationId } from "./support/seed";

/**
 * The outbound webhook API, played by people who may not manage a hook: a stranger to a
 * private repository learns nothing of it (not its name, not whether it is registered, not
 * that hook or delivery ids of it exist), getting the very answer a missing id gets; a reader
 * of the repository is told it takes its admins; only the instance's admins see an
 * installation's hooks.
 */

process.env.DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test";
process.env.AUTH_SECRET = "outbound-access-test-secret-0123456789";

const hooks = await import("../../app/api/v1/outbound/hooks/route");
const hook = await import("../../app/api/v1/outbound/hooks/[id]/route");
const redeliver = await import("../../app/api/v1/outbound/deliveries/[id]/redeliver/route");
const testDelivery = await import("../../app/api/v1/outbound/hooks/[id]/test/route");

const tag = randomBytes(3).toString("hex");
const PRIVATE = `oa-${tag}/private`;
const OPEN = `oa-${tag}/open`;
const github = new FakeGitHub();
let db: Db;
let installation: number;
const users = {
  owner: { id: 0, login: `owner-${tag}`, token: `tok-o-${tag}` },
  reader: { id: 0, login: `reader-${tag}`, token: `tok-r-${tag}` },
  stranger: { id: 0, login: `stranger-${tag}`, token: `tok-s-${tag}` },
  admin: { id: 0, login: `admin-${tag}`, token: `tok-a-${tag}` },
};
const cookies: Record<keyof typeof users, string> = { owner: "", reader: "", stranger: "", admin: "" };
const ids = { privateHook: 0, openHook: 0, installationHook: 0, privateDelivery: 0, missing: 0 };

beforeAll(async () => {
  db = testDb(2);
  await github.start();
  process.env.GITHUB_API_URL = github.url;
  installation = uniqueInstallationId();
  github.installations.set(installation, `oa-${tag}`);
  github.repos.push(
    { fullName: PRIVATE, installationId: installation, roles: { [users.owner.login]: "admin" } },
    { fullName: OPEN, installationId: installation, roles: { [users.owner.login]: "admin", [users.reader.login]: "read", [users.stranger.login]: "read" } },
  );
  let n = Math.floor(Math.random() * 1e9);
  for (const u of Object.values(users)) u.id = ++n;
  github.users.push(...Object.values(users));
  setInstanceConfigForTests({ ...defaultInstanceConfig(), admins: [users.admin.login] });
  forgetAccess();
  await seedRepo(db, PRIVATE, installation);
  await seedRepo(db, OPEN, installation);
  for (const k of Object.keys(users) as (keyof typeof users)[]) cookies[k] = cookieFor(await seedUser(db, users[k], process.env.AUTH_SECRET!));
  const made = (repo: string | null) =>
    insertOutboundHook(db, { installationId: installation, repo, loop: repo ? "start-dev" : null, url: "https://hooks.example.com/in", secret: "s".repeat(32), kind: "webhook", events: [] });
  ids.privateHook = Number((await made(PRIVATE)).id);
  ids.openHook = Number((await made(OPEN)).id);
  ids.installationHook = Number((await made(null)).id);
  ids.missing = ids.installationHook + 1_000_000;
  await seedItem(db, PRIVATE, 1, { labels: [], state: "open", title: "Secret work" });
  const runId = await seedRun(db, { repo: PRIVATE, number: 1, state: "Succeeded" });
  ids.privateDelivery = Number(
    (await db.pool.query<{ id: string }>(`INSERT INTO outbound_deliveries (hook_id, run_id, payload, status) VALUES ($1, $2, '{}', 'failed') RETURNING id`, [ids.privateHook, runId])).rows[0]!.id,
  );
});

afterAll(async () => {
  await db.pool.query(`DELETE FROM outbound_deliveries WHERE id = $1`, [ids.privateDelivery]);
  await db.pool.query(`DELETE FROM outbound_hooks WHERE id = ANY($1)`, [[ids.privateHook, ids.openHook, ids.installationHook]]);
  setInstanceConfigForTests(undefined);
  await github.stop();
  await db.close();
});

const as = (who: keyof typeof users) => ({ cookie: cookies[who] });
const hookCalls = (id: number, who: keyof typeof users) => [
  call(hook.GET, "GET", `/api/v1/outbound/hooks/${id}`, { params: { id: String(id) }, ...as(who) }),
  call(hook.PATCH, "PATCH", `/api/v1/outbound/hooks/${id}`, { params: { id: String(id) }, body: { rotate_secret: true }, ...as(who) }),
  call(hook.DELETE, "DELETE", `/api/v1/outbound/hooks/${id}`, { params: { id: String(id) }, ...as(who) }),
];
const answers = async (calls: Promise<{ status: number; body: Record<string, unknown> }>[]) => (await Promise.all(calls)).map((r) => [r.status, r.body]);
const withoutId = (id: number) => (body: unknown) => JSON.parse(JSON.stringify(body).replaceAll(String(id), "ID")) as unknown;

describe("outbound webhooks, to those who may not manage them", () => {
  it("a stranger to a private repository gets, for its hook, the answer of a hook that does not exist", async () => {
    const theirs = await answers(hookCalls(ids.privateHook, "stranger"));
    const none = await answers(hookCalls(ids.missing, "stranger"));
    expect(theirs.map(([s]) => s)).toEqual([404, 404, 404]);
    expect(theirs.map(([, b]) => withoutId(ids.privateHook)(b))).toEqual(none.map(([, b]) => withoutId(ids.missing)(b)));
    expect(JSON.stringify(theirs)).not.toContain(PRIVATE);
    // nothing was changed or deleted
    expect((await call(hook.GET, "GET", `/api/v1/outbound/hooks/${ids.privateHook}`, { params: { id: String(ids.privateHook) }, ...as("owner") })).status).toBe(200);
  });

  it("a stranger redelivering a private repository's delivery gets the answer of a missing delivery", async () => {
    const theirs = await call(redeliver.POST, "POST", `/api/v1/outbound/deliveries/${ids.privateDelivery}/redeliver`, { params: { id: String(ids.privateDelivery) }, ...as("stranger") });
    const none = await call(redeliver.POST, "POST", `/api/v1/outbound/deliveries/${ids.missing}/redeliver`, { params: { id: String(ids.missing) }, ...as("stranger") });
    expect([theirs.status, withoutId(ids.privateDelivery)(theirs.body)]).toEqual([404, withoutId(ids.missing)(none.body)]);
    expect((await db.pool.query(`SELECT status FROM outbound_deliveries WHERE id = $1`, [ids.privateDelivery])).rows[0]).toEqual({ status: "failed" });
  });

  it("a stranger adding a hook learns nothing of whether a private repository is registered", async () => {
    const add = (repo: string) => call(hooks.POST, "POST", "/api/v1/outbound/hooks", { body: { repo, loop: "start-dev", url: "https://hooks.example.com/in" }, ...as("stranger") });
    const registered = await add(PRIVATE);
    const unregistered = await add(`oa-${tag}/nothing`);
    expect([registered.status, registered.body.error]).toEqual([404, "repository_not_found"]);
    expect([unregistered.status, unregistered.body.error]).toEqual([404, "repository_not_found"]);
    expect(String(registered.body.message).replace(PRIVATE, "REPO")).toBe(String(unregistered.body.message).replace(`oa-${tag}/nothing`, "REPO"));
  });

  it("one who reads the repository is told only its admins manage its hooks; its admin does", async () => {
    const [read] = await answers(hookCalls(ids.openHook, "reader").slice(0, 1));
    expect(read).toEqual([403, expect.objectContaining({ error: "repo_admin_only" })]);
    const add = await call(hooks.POST, "POST", "/api/v1/outbound/hooks", { body: { repo: OPEN, loop: "x", url: "https://hooks.example.com/in" }, ...as("reader") });
    expect([add.status, add.body.error]).toEqual([403, "repo_admin_only"]);
    const own = await call(hook.GET, "GET", `/api/v1/outbound/hooks/${ids.openHook}`, { params: { id: String(ids.openHook) }, ...as("owner") });
    expect([own.status, own.body.owner]).toEqual([200, expect.objectContaining({ repo: OPEN })]);
  });

  it("an installation's hooks are the instance admins' only: others get a missing hook, and adding one is refused before any lookup", async () => {
    const theirs = await answers(hookCalls(ids.installationHook, "owner"));
    expect(theirs.map(([s, b]) => [s, (b as { error: string }).error])).toEqual(Array(3).fill([404, "webhook_not_found"]));
    const add = (id: number) => call(hooks.POST, "POST", "/api/v1/outbound/hooks", { body: { installation_id: id, url: "https://hooks.example.com/in" }, ...as("owner") });
    const registered = await add(installation);
    const unregistered = await add(uniqueInstallationId());
    expect([registered.status, registered.body.error]).toEqual([403, "admin_only"]);
    expect([unregistered.status, unregistered.body.error]).toEqual([403, "admin_only"]);
    const instance = await call(hooks.POST, "POST", "/api/v1/outbound/hooks", { body: { instance: true, kind: "slack", url: "https://hooks.example.com/in" }, ...as("owner") });
    expect([instance.status, instance.body.error]).toEqual([403, "admin_only"]);
  });

  it("the test-delivery button: a repository's admin sends one to a Slack target now; a reader may not; a stranger finds no target", async () => {
    const slack = await startReceiver(() => "", [200]);
    process.env.ATELIER_ALLOW_PRIVATE_WEBHOOKS = "1";
    try {
      const made = await insertOutboundHook(db, { installationId: installation, repo: OPEN, loop: "start-dev", url: slack.url, secret: "", kind: "slack", events: ["needs_approval"] });
      const press = (id: number, who: keyof typeof users) => call(testDelivery.POST, "POST", `/api/v1/outbound/hooks/${id}/test`, { params: { id: String(id) }, ...as(who) });
      const read = await press(made.id, "reader");
      expect([read.status, read.body.error]).toEqual([403, "repo_admin_only"]);
      const theirs = await press(ids.privateHook, "stranger");
      const none = await press(ids.missing, "stranger");
      expect([theirs.status, withoutId(ids.privateHook)(theirs.body)]).toEqual([404, withoutId(ids.missing)(none.body)]);
      expect(slack.received).toHaveLength(0);

      const sent = await press(made.id, "owner");
      expect(sent.status).toBe(200);
      expect(sent.body).toMatchObject({ outcome: { tag: "Delivered", status: 200 }, delivery: { hookId: made.id, event: "notice.test", status: "delivered" } });
      expect(slack.received).toHaveLength(1);
      expect(slackMessageProblems(JSON.parse(slack.received[0]!.body))).toEqual([]);
      await db.pool.query(`DELETE FROM outbound_deliveries WHERE hook_id = $1`, [made.id]);
      await db.pool.query(`DELETE FROM outbound_hooks WHERE id = $1`, [made.id]);
    } finally {
      delete process.env.ATELIER_ALLOW_PRIVATE_WEBHOOKS;
      await slack.close();
    }
  });

  it("changing a target's notices takes what adding it takes: a reader is refused, a stranger and a repository's admin find no installation's target, an admin may", async () => {
    const events = async (id: number) => (await db.pool.query<{ events: string[] }>(`SELECT events FROM outbound_hooks WHERE id = $1`, [id])).rows[0]!.events;
    const change = (id: number, who: keyof typeof users, body: unknown = { events: ["failed", "verify_failed"] }) =>
      call(hook.PATCH, "PATCH", `/api/v1/outbound/hooks/${id}`, { params: { id: String(id) }, body, ...as(who) });

    const read = await change(ids.openHook, "reader");
    expect([read.status, read.body.error]).toEqual([403, "repo_admin_only"]);
    const theirs = await change(ids.privateHook, "stranger");
    const none = await change(ids.missing, "stranger");
    expect([theirs.status, withoutId(ids.privateHook)(theirs.body)]).toEqual([404, withoutId(ids.missing)(none.body)]);
    const notAdmin = await change(ids.installationHook, "owner");
    expect([notAdmin.status, notAdmin.body.error]).toEqual([404, "webhook_not_found"]);
    expect([await events(ids.openHook), await events(ids.privateHook), await events(ids.installationHook)]).toEqual([[], [], []]);

    // a notice that does not exist is a 400, and changes nothing
    const unknown = await change(ids.openHook, "owner", { events: ["failed", "everything"] });
    expect(unknown.status).toBe(400);
    expect(await events(ids.openHook)).toEqual([]);

    const own = await change(ids.openHook, "owner");
    expect([own.status, (own.body.hook as { events: string[] }).events]).toEqual([200, ["failed", "verify_failed"]]);
    const admin = await change(ids.installationHook, "admin", { events: ["needs_approval"] });
    expect([admin.status, (admin.body.hook as { events: string[] }).events]).toEqual([200, ["needs_approval"]]);
    expect([await events(ids.openHook), await events(ids.installationHook)]).toEqual([["failed", "verify_failed"], ["needs_approval"]]);
    // and back to none
    expect((await change(ids.openHook, "owner", { events: [] })).status).toBe(200);
    expect(await events(ids.openHook)).toEqual([]);
  });
});
