import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedis } from "../../lib/config/redis";
import { DEMO_AGENT, defaultInstanceConfig } from "../../lib/config/roster";
import { subscribeControl, type ControlSubscription } from "../../lib/runner/control-channel";
import { readAuditedIntervention } from "../../lib/store/people/audit-log";
import { redisNames } from "../../lib/runner/redis-names";
import { forgetAccess } from "../../lib/auth/authorize";
import { setInstanceConfigForTests } from "../../lib/auth/instance-config";
import type { BoardMove } from "../../lib/dashboard/services";
import type { Db } from "../../lib/store/kernel/db";
import { testDb } from "../support/db";
import { call, type RouteHandler } from "./support/api-client";
import { FakeGitHub } from "./support/fake-github";
import { cookieFor, seedItem, seedRepo, seedRun, seedUser, uniqueInstallationId } from "./support/seed";

// The route handlers read these when called (DATABASE_URL on first use of the pool).
process.env.DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test";
process.env.AUTH_SECRET = "dashboard-api-test-secret-0123456789";
process.env.GITHUB_WEB_URL = "http://github.test";

const { createLiveServices, setDashboardServicesForTests } = await import("../../app/_server/services");
const routes = {
  me: await import("../../app/api/v1/me/route"),
  board: await import("../../app/api/v1/board/route"),
  move: await import("../../app/api/v1/board/move/route"),
  run: await import("../../app/api/v1/runs/[id]/route"),
  runs: await import("../../app/api/v1/runs/route"),
  approve: await import("../../app/api/v1/runs/[id]/approve/route"),
  retry: await import("../../app/api/v1/runs/[id]/retry/route"),
  editAndRetry: await import("../../app/api/v1/runs/[id]/edit-and-retry/route"),
  cancel: await import("../../app/api/v1/runs/[id]/cancel/route"),
  resolve: await import("../../app/api/v1/runs/[id]/resolve-failure/route"),
  intervene: await import("../../app/api/v1/runs/[id]/intervene/route"),
  needs: await import("../../app/api/v1/needs-you/route"),
  loops: await import("../../app/api/v1/loops/route"),
  pause: await import("../../app/api/v1/loops/pause/route"),
  budgets: await import("../../app/api/v1/budgets/route"),
  reset: await import("../../app/api/v1/budgets/reset/route"),
  audit: await import("../../app/api/v1/audit/route"),
  installations: await import("../../app/api/v1/installations/route"),
};

const tag = randomBytes(3).toString("hex");
const REPO = `dash-${tag}/app`;
const OTHER = `dash-${tag}/secret`;
const github = new FakeGitHub();
let db: Db;
const users = {
  writer: { id: 0, login: `writer-${tag}`, token: `tok-w-${tag}` },
  reader: { id: 0, login: `reader-${tag}`, token: `tok-r-${tag}` },
  stranger: { id: 0, login: `stranger-${tag}`, token: `tok-s-${tag}` },
  admin: { id: 0, login: `admin-${tag}`, token: `tok-a-${tag}` },
};
const cookies: Record<keyof typeof users, string> = { writer: "", reader: "", stranger: "", admin: "" };
const interventions: unknown[] = [];
const cancels: unknown[] = [];
let control: ControlSubscription;
let live: Awaited<ReturnType<typeof createLiveServices>>;
const moves: BoardMove[] = [];

beforeAll(async () => {
  db = testDb(4);
  await github.start();
  process.env.GITHUB_API_URL = github.url;
  const installation = uniqueInstallationId();
  github.installations.set(installation, `dash-${tag}`);
  github.repos.push(
    { fullName: REPO, installationId: installation, roles: { [users.writer.login]: "write", [users.reader.login]: "read" } },
    { fullName: OTHER, installationId: installation, roles: { [users.writer.login]: "admin" } },
  );
  let n = Math.floor(Math.random() * 1e9);
  for (const u of Object.values(users)) u.id = ++n;
  github.users.push(...Object.values(users));
  const config = defaultInstanceConfig();
  setInstanceConfigForTests({ ...config, admins: [users.admin.login], agents: {
      ...config.agents,
      talker: { ...DEMO_AGENT, name: "talker", intervene: true },
      modeler: { ...DEMO_AGENT, name: "modeler", model: "m-default", models: ["m-big"] },
    },
  });
  forgetAccess();
  await seedRepo(db, REPO, installation);
  await seedRepo(db, OTHER, installation);
  for (const k of Object.keys(users) as (keyof typeof users)[]) {
    cookies[k] = cookieFor(await seedUser(db, users[k], process.env.AUTH_SECRET!));
  }
  // The real services (runner, triggers, store) under Redis prefixes of this file; a stand-in
  // worker hears the control channel. Board moves would write labels on GitHub: a double.
  live = createLiveServices(db, { bullPrefix: `test-dash-${tag}`, keyPrefix: `test-dash-${tag}:` });
  control = await subscribeControl(createRedis(), redisNames(`test-dash-${tag}:`), {
    cancel: (msg) => cancels.push(msg),
    // what a worker does: the message names the audit row, the row holds the intervention
    intervene: (msg) => void readAuditedIntervention(db, msg.auditId).then((found) => interventions.push(found)),
  });
  setDashboardServicesForTests({
    ...live.services,
    async moveCard(move) {
      moves.push(move);
    },
  });
});

afterAll(async () => {
  setDashboardServicesForTests(undefined);
  await live.close();
  await control.close();
  const redis = createRedis();
  const keys = await redis.keys(`test-dash-${tag}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
  setInstanceConfigForTests(undefined);
  await github.stop();
  await db.close();
  expect(github.unexpected).toEqual([]);
});

let next = 100;
async function item(labels: string[] = [], state = "open") {
  const number = ++next;
  await seedItem(db, REPO, number, { labels, state, title: `Item ${number}` });
  return number;
}

async function runIn(state: Parameters<typeof seedRun>[1]["state"], attempts: Parameters<typeof seedRun>[1]["attempts"] = []) {
  return seedRun(db, { repo: REPO, number: await item(), state, attempts });
}

const post = <P>(handler: RouteHandler<P>, path: string, opts: Parameters<typeof call<P>>[3] = {}) => call(handler, "POST", path, opts);
const get = <P>(handler: RouteHandler<P>, path: string, opts: Parameters<typeof call<P>>[3] = {}) => call(handler, "GET", path, opts);

async function stateOf(runId: string): Promise<string> {
  return (await db.pool.query<{ state: string }>(`SELECT state::text AS state FROM runs WHERE id = $1`, [runId])).rows[0]!.state;
}

describe("run actions", () => {
  const cases = [
    { name: "approve", route: routes.approve, from: "Waiting", to: "Queued", illegal: "Running", body: {} },
    { name: "retry", route: routes.retry, from: "Failed", to: "Running", illegal: "Succeeded", body: {} },
    { name: "edit-and-retry", route: routes.editAndRetry, from: "Failed", to: "Running", illegal: "Queued", body: { prompt: "Do it better" } },
    { name: "cancel", route: routes.cancel, from: "Queued", to: "Canceled", illegal: "Succeeded", body: {} },
    { name: "resolve-failure", route: routes.resolve, from: "Failed", to: "Failed", illegal: "Running", body: {} },
  ] as const;

  for (const c of cases) {
    describe(c.name, () => {
      const failed = [{ state: "Failed" as const, failureKind: "AgentFailure", failureCategory: "agent_exit" }];
      const attemptsFor = (s: string) => (s === "Failed" ? failed : s === "Running" || s === "Succeeded" ? [{ state: s === "Running" ? ("Running" as const) : ("Succeeded" as const) }] : []);

      it(`200: a writer can ${c.name} a ${c.from} Run, and it is audited`, async () => {
        const id = await runIn(c.from, attemptsFor(c.from));
        const res = await post(c.route.POST, `/api/v1/runs/${id}/${c.name}`, { params: { id }, body: c.body, cookie: cookies.writer });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body).toMatchObject({ ok: true, run: { id, state: c.to } });
        expect(await stateOf(id)).toBe(c.to);
        const audit = await db.pool.query(`SELECT actor FROM audit_log WHERE run_id = $1`, [id]);
        expect(audit.rows.map((r) => r.actor)).toContain(users.writer.login);
      });

      it(`409: ${c.name} on a ${c.illegal} Run is a state conflict`, async () => {
        const id = await runIn(c.illegal, attemptsFor(c.illegal));
        const res = await post(c.route.POST, `/api/v1/runs/${id}/${c.name}`, { params: { id }, body: c.body, cookie: cookies.writer });
        expect(res.status).toBe(409);
        expect(res.body.error).toBe("run_state_conflict");
        expect(await stateOf(id)).toBe(c.illegal);
      });

      it(`403: a reader cannot ${c.name}`, async () => {
        const id = await runIn(c.from, attemptsFor(c.from));
        const res = await post(c.route.POST, `/api/v1/runs/${id}/${c.name}`, { params: { id }, body: c.body, cookie: cookies.reader });
        expect(res.status).toBe(403);
        expect(res.body.error).toBe("permission_denied");
        expect(await stateOf(id)).toBe(c.from);
      });

      it(`400: an unknown field in the body of ${c.name}`, async () => {
        const id = await runIn(c.from, attemptsFor(c.from));
        const res = await post(c.route.POST, `/api/v1/runs/${id}/${c.name}`, { params: { id }, body: { ...c.body, force: true }, cookie: cookies.writer });
        expect(res.status).toBe(400);
        expect(res.body.error).toBe("invalid_body");
        expect(await stateOf(id)).toBe(c.from);
      });

      it(`401: signed out, ${c.name} is refused`, async () => {
        const id = await runIn(c.from, attemptsFor(c.from));
        const res = await post(c.route.POST, `/api/v1/runs/${id}/${c.name}`, { params: { id }, body: c.body });
        expect(res.status).toBe(401);
        expect(res.body.error).toBe("signed_out");
      });
    });
  }

  it("cancel of a Running Run reaches the worker that runs its Attempt", async () => {
    const id = await runIn("Running", [{ state: "Running" }]);
    const res = await post(routes.cancel.POST, `/api/v1/runs/${id}/cancel`, { params: { id }, cookie: cookies.writer });
    expect(res.status).toBe(200);
    await expect.poll(() => cancels).toContainEqual({ runId: id, attemptId: `${id}/agent/1` });
  });

  it("approve and retry enqueue the Run's job", async () => {
    const id = await runIn("Waiting");
    await post(routes.approve.POST, `/api/v1/runs/${id}/approve`, { params: { id }, cookie: cookies.writer });
    const redis = createRedis();
    try {
      const keys = await redis.keys(`test-dash-${tag}:*run-${id}*`);
      expect(keys.length).toBeGreaterThan(0);
    } finally {
      await redis.quit();
    }
  });

  it("approving takes the Loop's trigger_permission: a writer cannot approve a Run of a Loop kept for maintainers (attack 27)", async () => {
    const id = await runIn("Waiting");
    await db.pool.query(
      `UPDATE events SET submission = jsonb_build_object('approvalReason', jsonb_build_object('token', 'actor_cannot_write', 'login', 'x', 'permission', 'write', 'needs', 'maintain')) WHERE run_id = $1`,
      [id],
    );
    const res = await post(routes.approve.POST, `/api/v1/runs/${id}/approve`, { params: { id }, cookie: cookies.writer });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe("permission_denied");
    expect(await stateOf(id)).toBe("Waiting");
    // an instance admin acts as a repository admin: above maintain
    expect((await post(routes.approve.POST, `/api/v1/runs/${id}/approve`, { params: { id }, cookie: cookies.admin })).status).toBe(200);
  });

  it("404: an action on a Run that does not exist", async () => {
    const res = await post(routes.approve.POST, `/api/v1/runs/nope/approve`, { params: { id: "nope" }, cookie: cookies.writer });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe("run_not_found");
  });

  it("an instance admin acts without any GitHub role", async () => {
    const id = await runIn("Waiting");
    const res = await post(routes.approve.POST, `/api/v1/runs/${id}/approve`, { params: { id }, cookie: cookies.admin });
    expect(res.status).toBe(200);
  });

  it("edit-and-retry: 400 without a prompt or an agent; the amendment is stored", async () => {
    const id = await runIn("Failed", [{ state: "Failed", failureKind: "AgentFailure" }]);
    const empty = await post(routes.editAndRetry.POST, `/api/v1/runs/${id}/edit-and-retry`, { params: { id }, body: {}, cookie: cookies.writer });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe("invalid_body");
    const ok = await post(routes.editAndRetry.POST, `/api/v1/runs/${id}/edit-and-retry`, { params: { id }, body: { prompt: "New task" }, cookie: cookies.writer });
    expect(ok.status).toBe(200);
    expect((await db.pool.query(`SELECT prompt FROM runs WHERE id = $1`, [id])).rows[0].prompt).toBe("New task");
  });

  it("edit-and-retry with a model: the agent must offer it; the agent and the model are stored; the Run API says how it ended", async () => {
    const id = await runIn("Failed", [{ state: "Failed", failureKind: "AgentFailure", failureCategory: "agent_exit" }]);
    const seen = await get(routes.run.GET, `/api/v1/runs/${id}`, { params: { id }, cookie: cookies.writer });
    expect(seen.body).toMatchObject({ state: "Failed", closed: true, category: "agent_exit", retryable: false });
    const edit = (body: unknown) => post(routes.editAndRetry.POST, `/api/v1/runs/${id}/edit-and-retry`, { params: { id }, body, cookie: cookies.writer });
    // the demo agent offers no m-big; modeler does
    const refused = await edit({ model: "m-big" });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: "model_not_offered", agent: "demo", models: [] });
    expect((await edit({ agent: "modeler", model: "m-nope" })).body).toMatchObject({ error: "model_not_offered", models: ["m-default", "m-big"] });
    // a writer cannot smuggle a flag into the CLI's argv as a model: only the roster's models pass
    expect((await edit({ agent: "modeler", model: "--dangerously-skip-permissions" })).body).toMatchObject({ error: "model_not_offered" });
    expect((await edit({ model: "" })).body).toMatchObject({ error: "invalid_body" });
    expect(await stateOf(id)).toBe("Failed");
    const ok = await edit({ agent: "modeler", model: "m-big", prompt: "Bigger" });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ ok: true, run: { id, state: "Running", closed: false } });
    expect((await db.pool.query(`SELECT agent, model, prompt FROM runs WHERE id = $1`, [id])).rows[0]).toEqual({ agent: "modeler", model: "m-big", prompt: "Bigger" });
    const open = await get(routes.run.GET, `/api/v1/runs/${id}`, { params: { id }, cookie: cookies.writer });
    expect(open.body).toMatchObject({ state: "Running", closed: false, category: null, retryable: null, model: "m-big" });
  });

  it("resolve-failure takes the Run out of Needs you", async () => {
    const id = await runIn("Failed", [{ state: "Failed", failureKind: "AgentFailure" }]);
    const before = await get(routes.needs.GET, "/api/v1/needs-you", { cookie: cookies.writer });
    expect((before.body.needs as { runId: string }[]).some((n) => n.runId === id)).toBe(true);
    await post(routes.resolve.POST, `/api/v1/runs/${id}/resolve-failure`, { params: { id }, cookie: cookies.writer });
    const after = await get(routes.needs.GET, "/api/v1/needs-you", { cookie: cookies.writer });
    expect((after.body.needs as { runId: string }[]).some((n) => n.runId === id)).toBe(false);
  });
});

describe("intervene", () => {
  it("200: reaches the worker that runs the open Attempt", async () => {
    const id = await seedRun(db, { repo: REPO, number: await item(), state: "Running", attempts: [{ state: "Running" }], agent: "talker" });
    const res = await post(routes.intervene.POST, `/api/v1/runs/${id}/intervene`, {
      params: { id },
      body: { attemptId: `${id}/agent/1`, text: "Use the existing helper" },
      cookie: cookies.writer,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await expect.poll(() => interventions).toContainEqual({ runId: id, actor: users.writer.login, attemptId: `${id}/agent/1`, text: "Use the existing helper" });
  });

  it("409: not on a Run that is not Running", async () => {
    const id = await runIn("Failed", [{ state: "Failed", failureKind: "AgentFailure" }]);
    const res = await post(routes.intervene.POST, `/api/v1/runs/${id}/intervene`, { params: { id }, body: { attemptId: `${id}/agent/1`, text: "hi" }, cookie: cookies.writer });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("attempt_not_live");
  });

  it("403: a reader cannot intervene", async () => {
    const id = await runIn("Running", [{ state: "Running" }]);
    const res = await post(routes.intervene.POST, `/api/v1/runs/${id}/intervene`, { params: { id }, body: { attemptId: `${id}/agent/1`, text: "hi" }, cookie: cookies.reader });
    expect(res.status).toBe(403);
  });

  it("400: the text is required", async () => {
    const id = await runIn("Running", [{ state: "Running" }]);
    const res = await post(routes.intervene.POST, `/api/v1/runs/${id}/intervene`, { params: { id }, body: { attemptId: `${id}/agent/1` }, cookie: cookies.writer });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_body");
  });
});

describe("loops: pause and unpause", () => {
  it("200: a writer pauses then unpauses a Loop; the Loops page shows it", async () => {
    const paused = await post(routes.pause.POST, "/api/v1/loops/pause", { body: { repo: REPO, loop: "start-dev", paused: true }, cookie: cookies.writer });
    expect(paused.status).toBe(200);
    let loops = await get(routes.loops.GET, "/api/v1/loops", { cookie: cookies.writer, query: { repo: REPO } });
    expect(loops.body.loops).toMatchObject([{ repo: REPO, loop: "start-dev", paused: true, pausedBy: users.writer.login }]);
    expect(loops.body.writable).toEqual([REPO]);
    await post(routes.pause.POST, "/api/v1/loops/pause", { body: { repo: REPO, loop: "start-dev", paused: false }, cookie: cookies.writer });
    loops = await get(routes.loops.GET, "/api/v1/loops", { cookie: cookies.reader, query: { repo: REPO } });
    expect(loops.body.loops).toMatchObject([{ paused: false }]);
    expect(loops.body.writable).toEqual([]);
  });

  it("404: a Loop the repository does not have", async () => {
    const res = await post(routes.pause.POST, "/api/v1/loops/pause", { body: { repo: REPO, loop: "nightly", paused: true }, cookie: cookies.writer });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe("loop_not_found");
  });

  it("403: a reader cannot pause; 404: a repository they cannot see is one that does not exist", async () => {
    expect((await post(routes.pause.POST, "/api/v1/loops/pause", { body: { repo: REPO, loop: "start-dev", paused: true }, cookie: cookies.reader })).status).toBe(403);
    const hidden = await post(routes.pause.POST, "/api/v1/loops/pause", { body: { repo: OTHER, loop: "start-dev", paused: true }, cookie: cookies.reader });
    const missing = await post(routes.pause.POST, "/api/v1/loops/pause", { body: { repo: `dash-${tag}/nothing`, loop: "start-dev", paused: true }, cookie: cookies.reader });
    expect([hidden.status, hidden.body]).toEqual([404, { error: "repository_not_found", message: expect.stringContaining(OTHER) }]);
    expect([missing.status, missing.body.error]).toEqual([404, "repository_not_found"]);
  });

  it("400: paused must be a boolean, and nothing else is accepted", async () => {
    const res = await post(routes.pause.POST, "/api/v1/loops/pause", { body: { repo: REPO, loop: "start-dev", paused: "yes" }, cookie: cookies.writer });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_body");
    const extra = await post(routes.pause.POST, "/api/v1/loops/pause", { body: { repo: REPO, loop: "start-dev", paused: true, until: "x" }, cookie: cookies.writer });
    expect(extra.status).toBe(400);
  });
});

describe("cycle budgets", () => {
  async function askOn(number: number) {
    const key = JSON.stringify(["github", REPO, number]);
    await db.pool.query(
      `INSERT INTO cycle_budgets (item_key, repo, generation, ask, asked_at) VALUES ($1, $2, 0, $3, now())`,
      [key, REPO, JSON.stringify({ askId: `ask-${tag}-${number}`, loop: "start-dev", maxCycles: 3 })],
    );
    return key;
  }

  it("200: a writer resets an asking budget; the generation moves on", async () => {
    const key = await askOn(await item());
    const needs = await get(routes.needs.GET, "/api/v1/needs-you", { cookie: cookies.writer });
    expect((needs.body.needs as { itemKey: string; kind: string }[]).some((n) => n.kind === "budget_ask" && n.itemKey === key)).toBe(true);
    const res = await post(routes.reset.POST, "/api/v1/budgets/reset", { body: { itemKey: key }, cookie: cookies.writer });
    expect(res.status).toBe(200);
    const budgets = await get(routes.budgets.GET, "/api/v1/budgets", { cookie: cookies.writer });
    expect((budgets.body.budgets as { itemKey: string; generation: number; ask: unknown }[]).find((b) => b.itemKey === key)).toMatchObject({ generation: 1, ask: null });
  });

  it("409: no ask to answer", async () => {
    const key = await askOn(await item());
    await post(routes.reset.POST, "/api/v1/budgets/reset", { body: { itemKey: key }, cookie: cookies.writer });
    const again = await post(routes.reset.POST, "/api/v1/budgets/reset", { body: { itemKey: key }, cookie: cookies.writer });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("no_budget_ask");
  });

  it("403 for a reader, 400 for a bad body, 404 for an unknown Item", async () => {
    const key = await askOn(await item());
    expect((await post(routes.reset.POST, "/api/v1/budgets/reset", { body: { itemKey: key }, cookie: cookies.reader })).status).toBe(403);
    const bad = await post(routes.reset.POST, "/api/v1/budgets/reset", { body: { item: key }, cookie: cookies.writer });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("invalid_body");
    expect((await post(routes.reset.POST, "/api/v1/budgets/reset", { body: { itemKey: "nope" }, cookie: cookies.writer })).status).toBe(404);
  });
});

describe("board", () => {
  it("lists the visible repositories' Items in lanes, each with its open Run", async () => {
    const ready = await item(["Ready-For-Agent"]);
    const runId = await seedRun(db, { repo: REPO, number: ready, state: "Waiting" });
    const done = await item([], "closed");
    const res = await get(routes.board.GET, "/api/v1/board", { cookie: cookies.reader, query: { repo: REPO } });
    expect(res.status).toBe(200);
    const lanes = (res.body.board as { lanes: { name: string; cards: { number: number; run: { id: string; state: string; waitsFor: string } | null }[] }[] }).lanes;
    const readyLane = lanes.find((l) => l.name === "Ready for agent")!;
    expect(readyLane.cards.find((c) => c.number === ready)?.run).toMatchObject({ id: runId, state: "Waiting", waitsFor: "an operator's approval" });
    expect(lanes.find((l) => l.name === "Done")!.cards.some((c) => c.number === done)).toBe(true);
    expect(res.body.writable).toEqual([]);
  });

  it("a stranger sees no repository, hence no card", async () => {
    const res = await get(routes.board.GET, "/api/v1/board", { cookie: cookies.stranger });
    expect(res.status).toBe(200);
    expect(res.body.repos).toEqual([]);
  });

  it("400 on an unknown query parameter; 401 signed out", async () => {
    expect((await get(routes.board.GET, "/api/v1/board", { cookie: cookies.writer, query: { lane: "x" } })).body.error).toBe("invalid_query");
    expect((await get(routes.board.GET, "/api/v1/board")).status).toBe(401);
  });

  it("200: moving a card asks for the lane labels on GitHub", async () => {
    const n = await item(["ready-for-agent", "bug"]);
    const res = await post(routes.move.POST, "/api/v1/board/move", { body: { repo: REPO, number: n, lane: "In review" }, cookie: cookies.writer });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(moves.at(-1)).toEqual({ repo: REPO, number: n, add: ["in-review"], remove: ["ready-for-agent"], actor: users.writer.login, lane: "In review" });
  });

  it("409: a closed Item's card does not move; 400: no such lane; 403: a reader", async () => {
    const closed = await item([], "closed");
    const c = await post(routes.move.POST, "/api/v1/board/move", { body: { repo: REPO, number: closed, lane: "Backlog" }, cookie: cookies.writer });
    expect(c.status).toBe(409);
    expect(c.body.error).toBe("item_closed");
    const open = await item();
    const lane = await post(routes.move.POST, "/api/v1/board/move", { body: { repo: REPO, number: open, lane: "Nowhere" }, cookie: cookies.writer });
    expect(lane.status).toBe(400);
    expect(lane.body.error).toBe("unknown_lane");
    const extra = await post(routes.move.POST, "/api/v1/board/move", { body: { repo: REPO, number: open, lane: "Backlog", drag: 1 }, cookie: cookies.writer });
    expect(extra.body.error).toBe("invalid_body");
    expect((await post(routes.move.POST, "/api/v1/board/move", { body: { repo: REPO, number: open, lane: "In review" }, cookie: cookies.reader })).status).toBe(403);
  });
});

describe("reads", () => {
  it("a Run: a reader sees it without acting; a stranger gets the 404 of a Run that does not exist", async () => {
    const id = await runIn("Waiting");
    const seen = await get(routes.run.GET, `/api/v1/runs/${id}`, { params: { id }, cookie: cookies.reader });
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ id, state: "Waiting", canAct: false, actions: ["approve", "cancel"] });
    const writer = await get(routes.run.GET, `/api/v1/runs/${id}`, { params: { id }, cookie: cookies.writer });
    expect(writer.body.canAct).toBe(true);
    const denied = await get(routes.run.GET, `/api/v1/runs/${id}`, { params: { id }, cookie: cookies.stranger });
    const missing = await get(routes.run.GET, `/api/v1/runs/nope`, { params: { id: "nope" }, cookie: cookies.stranger });
    expect([denied.status, denied.body.error]).toEqual([404, "run_not_found"]);
    expect([missing.status, missing.body.error]).toEqual([404, "run_not_found"]);
    const act = await post(routes.approve.POST, `/api/v1/runs/${id}/approve`, { params: { id }, cookie: cookies.stranger });
    expect([act.status, act.body.error]).toEqual([404, "run_not_found"]);
  });

  it("the Runs list shows each person the Runs of the repositories they can see, and nothing else", async () => {
    const mine = await runIn("Failed");
    const hidden = await seedRun(db, { repo: OTHER, number: 1, state: "Failed" });
    const idsFor = async (who: keyof typeof users, query: Record<string, string> = {}) => {
      const res = await get(routes.runs.GET, "/api/v1/runs", { cookie: cookies[who], query: { state: "Failed", limit: "200", ...query } });
      expect(res.status).toBe(200);
      return (res.body.runs as { id: string }[]).map((r) => r.id);
    };
    expect(await idsFor("reader")).toContain(mine);
    expect(await idsFor("reader")).not.toContain(hidden);
    expect(await idsFor("writer")).toEqual(expect.arrayContaining([mine, hidden]));
    expect(await idsFor("writer", { repo: REPO })).not.toContain(hidden);
    // a repository the reader cannot see, asked by name, is an empty list, not its Runs
    expect(await idsFor("reader", { repo: OTHER })).toEqual([]);
    expect(await idsFor("stranger")).toEqual([]);
    expect(await idsFor("stranger", { q: hidden })).toEqual([]);
    const signedOut = await get(routes.runs.GET, "/api/v1/runs");
    expect(signedOut.status).toBe(401);
    const bad = await get(routes.runs.GET, "/api/v1/runs", { cookie: cookies.reader, query: { state: "Exploded" } });
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_query"]);
  });

  it("needs you lists approvals and failures, newest first, with exact counts", async () => {
    const res = await get(routes.needs.GET, "/api/v1/needs-you", { cookie: cookies.writer, query: { repo: REPO } });
    expect(res.status).toBe(200);
    const needs = res.body.needs as { at: string; kind: string }[];
    expect(needs.length).toBeGreaterThan(0);
    expect([...needs].sort((a, b) => b.at.localeCompare(a.at)).map((n) => n.at)).toEqual(needs.map((n) => n.at));
    const counts = res.body.counts as Record<string, number>;
    expect(counts.approval).toBe(needs.filter((n) => n.kind === "approval").length);
  });

  it("me, installations and audit", async () => {
    expect((await get(routes.me.GET, "/api/v1/me", { cookie: cookies.writer })).body).toMatchObject({ login: users.writer.login, admin: false });
    expect((await get(routes.me.GET, "/api/v1/me")).status).toBe(401);
    const inst = await get(routes.installations.GET, "/api/v1/installations", { cookie: cookies.reader });
    expect(inst.body.installations).toMatchObject([{ account: `dash-${tag}`, repositories: [{ fullName: REPO, registered: true }] }]);
    const audit = await get(routes.audit.GET, "/api/v1/audit", { cookie: cookies.writer, query: { repo: REPO, limit: "5" } });
    expect(audit.status).toBe(200);
    expect((audit.body.entries as unknown[]).length).toBeLessThanOrEqual(5);
  });

  it("asks GitHub once per person and repository within the cache time", async () => {
    forgetAccess();
    const before = github.calls.length;
    for (let i = 0; i < 3; i++) {
      const id = await runIn("Waiting");
      await get(routes.run.GET, `/api/v1/runs/${id}`, { params: { id }, cookie: cookies.reader });
    }
    const asked = github.calls.slice(before).filter((c) => c.includes("/collaborators/"));
    expect(asked).toEqual([`GET /repos/${REPO.split("/")[0]}/app/collaborators/${users.reader.login}/permission`]);
  });

  it("never sends the GitHub token in an answer", async () => {
    const res = await get(routes.me.GET, "/api/v1/me", { cookie: cookies.writer });
    expect(JSON.stringify(res.body)).not.toContain(users.writer.token);
    const stored = await db.pool.query(`SELECT token FROM users WHERE id = $1`, [String(users.writer.id)]);
    expect(stored.rows[0].token).not.toContain(users.writer.token);
  });
});

describe("CSRF", () => {
  it("403: a write from another origin is refused before anything happens", async () => {
    const id = await runIn("Waiting");
    const res = await post(routes.approve.POST, `/api/v1/runs/${id}/approve`, { params: { id }, cookie: cookies.writer, origin: "http://evil.example" });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe("cross_origin_request");
    const site = await post(routes.approve.POST, `/api/v1/runs/${id}/approve`, {
      params: { id },
      cookie: cookies.writer,
      origin: null,
      headers: { "sec-fetch-site": "cross-site" },
    });
    expect(site.status).toBe(403);
    expect(await stateOf(id)).toBe("Waiting");
  });

  it("400: a body that is not JSON", async () => {
    const id = await runIn("Waiting");
    const res = await post(routes.approve.POST, `/api/v1/runs/${id}/approve`, { params: { id }, cookie: cookies.writer, raw: "a=1", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("unsupported_content_type");
  });
});

describe("limits before work", () => {
  /** A JSON body of `total` bytes made as it is pulled, so the test knows how much was read. */
  function streamed(total: number) {
    const seen = { pulled: 0 };
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (seen.pulled >= total) return controller.close();
        const chunk = new TextEncoder().encode(seen.pulled === 0 ? `{"attemptId":"x","text":"` : "a".repeat(16 * 1024));
        seen.pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    return { stream, seen };
  }
  const request = (id: string, body: ReadableStream<Uint8Array>, headers: Record<string, string>) =>
    new Request(`http://localhost:3999/api/v1/runs/${id}/intervene`, {
      method: "POST",
      body,
      headers: { host: "localhost:3999", origin: "http://localhost:3999", "content-type": "application/json", ...headers },
      duplex: "half",
    } as RequestInit);

  it("413: a body declared over 64 KiB is refused before it is read", async () => {
    const id = await runIn("Running", [{ state: "Running" }]);
    const { stream, seen } = streamed(1024 * 1024);
    const res = await routes.intervene.POST(request(id, stream, { cookie: cookies.writer, "content-length": String(1024 * 1024) }), { params: Promise.resolve({ id }) });
    expect(res.status).toBe(413);
    expect((await res.json()).error).toBe("body_too_large");
    expect(seen.pulled).toBeLessThan(64 * 1024);
  });

  it("413: a body with no length is counted while read and abandoned past 64 KiB", async () => {
    const id = await runIn("Running", [{ state: "Running" }]);
    const { stream, seen } = streamed(10 * 1024 * 1024);
    const res = await routes.intervene.POST(request(id, stream, { cookie: cookies.writer }), { params: Promise.resolve({ id }) });
    expect(res.status).toBe(413);
    expect((await res.json()).error).toBe("body_too_large");
    expect(seen.pulled).toBeLessThan(200 * 1024);
  });

  it("401: a write without a session is refused before its body is read", async () => {
    const id = await runIn("Running", [{ state: "Running" }]);
    const { stream, seen } = streamed(32 * 1024);
    const res = await routes.intervene.POST(request(id, stream, {}), { params: Promise.resolve({ id }) });
    expect(res.status).toBe(401);
    expect((await res.json()).error).toBe("signed_out");
    expect(seen.pulled).toBeLessThan(32 * 1024);
  });
});
