import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgetAccess } from "../../lib/auth/authorize";
import { setInstanceConfigForTests } from "../../lib/auth/instance-config";
import { defaultInstanceConfig } from "../../lib/config/roster";
import type { DashboardServices } from "../../lib/dashboard/services";
import { admission } from "../../lib/metering/admission";
import { setQuota } from "../../lib/metering/quota-settings";
import { checkConfigNow } from "../../lib/triggers/check-config";
import { dispatchLoop } from "../../lib/triggers/dispatch";
import { handleHint } from "../../lib/triggers/handle-hint";
import { listLoops } from "../../lib/triggers/loop-status";
import { pollRepository } from "../../lib/triggers/poll-repository";
import { installRepository, START_DEV_CONFIG, startFixture, type Fixture } from "../github/support/fixture";
import { beginAttempt } from "../support/attempts";
import { call } from "./support/api-client";
import { pointRoutesAt } from "./support/route-env";
import { cookieFor, seedUser } from "./support/seed";

/**
 * "Run Loop X on #N now" over the JSON API with personal API tokens, against the simulator's
 * GitHub (the App reads the Item, the person's GitHub token says their role): 201 with the Run,
 * 402 over the monthly run quota with reset_at, 429 over the concurrency cap with Retry-After,
 * 403 for a read token, a reader, or a suspended installation; 401 for a bad or revoked token.
 */

const SECRET = "dispatch-test-secret-0123456789abcdef";
process.env.AUTH_SECRET = SECRET;

let fx: Fixture;
let repo: string;
let installationId: number;
const cookies: Record<string, string> = {};
type Routes = {
  dispatch: typeof import("../../app/api/v1/loops/dispatch/route");
  checkConfig: typeof import("../../app/api/v1/loops/check-config/route");
  tokens: typeof import("../../app/api/v1/tokens/route");
  token: typeof import("../../app/api/v1/tokens/[id]/route");
  me: typeof import("../../app/api/v1/me/route");
};
let routes: Routes;

const unused = async () => {
  throw new Error("not used by this test");
};

beforeAll(async () => {
  fx = await startFixture();
  pointRoutesAt(fx);
  ({ fullName: repo, installationId } = await installRepository(fx, { owner: "ops", name: "site" }));
  for (const login of ["writer", "reader"]) {
    const { id } = fx.sim.createUser({ login });
    fx.sim.setUserPermission({ repo, login, permission: login === "writer" ? "write" : "read" });
    cookies[login] = cookieFor(await seedUser(fx.db, { id, login, token: fx.sim.createUserToken({ login }).token }, SECRET));
  }
  await pollRepository(fx.deps, repo);
  setInstanceConfigForTests({ ...defaultInstanceConfig(), admins: [] });
  forgetAccess();
  const services: DashboardServices = {
    approveRun: unused,
    retryRun: unused,
    editAndRetryRun: unused,
    cancelRun: unused,
    resolveFailure: unused,
    intervene: unused,
    pushReviewed: unused,
    discardReviewed: unused,
    resetCycleBudget: unused,
    setLoopPaused: unused,
    moveCard: unused,
    dispatchLoop: (input) => dispatchLoop({ ...fx.deps, admission: admission() }, input),
    checkConfig: (name, actor) => checkConfigNow(fx.deps, name, actor),
  };
  const { setDashboardServicesForTests } = await import("../../app/_server/services");
  setDashboardServicesForTests(services);
  routes = {
    dispatch: await import("../../app/api/v1/loops/dispatch/route"),
    checkConfig: await import("../../app/api/v1/loops/check-config/route"),
    tokens: await import("../../app/api/v1/tokens/route"),
    token: await import("../../app/api/v1/tokens/[id]/route"),
    me: await import("../../app/api/v1/me/route"),
  };
});
afterAll(async () => {
  setInstanceConfigForTests(undefined);
  await fx.close();
});

async function newToken(login: string, scope: "read" | "act") {
  const res = await call(routes.tokens.POST, "POST", "/api/v1/tokens", { cookie: cookies[login]!, body: { name: `${login} ${scope}`, scope, expiresInDays: 30 } });
  expect(res.status).toBe(201);
  return (res.body.token as { id: string; token: string }).token;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const dispatch = (token: string, number: number, loop = "start-dev") =>
  call(routes.dispatch.POST, "POST", "/api/v1/loops/dispatch", { headers: bearer(token), origin: null, body: { repo, loop, number } });

describe("API tokens", () => {
  it("are shown once, stored hashed, listed without their secret, and revocable; a revoked or made-up one is a 401", async () => {
    const token = await newToken("writer", "read");
    expect(token).toMatch(/^atl_[a-f0-9]{12}_/);
    const { rows } = await fx.db.pool.query(`SELECT token_hash FROM api_tokens`);
    expect(JSON.stringify(rows)).not.toContain(token);
    const listed = await call(routes.tokens.GET, "GET", "/api/v1/tokens", { cookie: cookies.writer! });
    // the secret is what follows `atl_<id>_`; base64url may itself hold "_", so not split("_")
    expect(JSON.stringify(listed.body)).not.toContain(token.slice("atl_".length + 12 + 1));

    expect((await call(routes.me.GET, "GET", "/api/v1/me", { headers: bearer(token) })).body).toMatchObject({ login: "writer" });
    const id = token.slice("atl_".length, "atl_".length + 12);
    // a token cannot manage tokens
    expect((await call(routes.token.DELETE, "DELETE", `/api/v1/tokens/${id}`, { headers: bearer(token), params: { id } })).body).toMatchObject({ error: "token_scope_insufficient" });
    expect((await call(routes.tokens.GET, "GET", "/api/v1/tokens", { headers: bearer(token) })).body).toMatchObject({ error: "session_required" });
    const revoked = await call(routes.token.DELETE, "DELETE", `/api/v1/tokens/${id}`, { cookie: cookies.writer!, params: { id } });
    expect(revoked.status).toBe(200);
    for (const bad of [token, `${token.slice(0, -1)}x`, "atl_nope", "Zm9vOmJhcg=="]) {
      const res = await call(routes.me.GET, "GET", "/api/v1/me", { headers: bearer(bad) });
      expect([res.status, res.body.error]).toEqual([401, "invalid_api_token"]);
    }
    const { rows: audited } = await fx.db.pool.query(`SELECT action FROM audit_log WHERE actor = 'writer' AND action LIKE '%api_token' ORDER BY id`);
    expect(audited.map((r) => r.action)).toEqual(["create_api_token", "revoke_api_token"]);
  });
});

describe("work on demand over the API", () => {
  it("an act token's dispatch is 201 with the Run, audited, whatever the Loop's if: says — the next poll and a Hint of the Item leave it open", async () => {
    const token = await newToken("writer", "act");
    const issue = fx.sim.createIssue({ login: "writer", repo, title: "Run it now", body: "no label at all" });
    const res = await dispatch(token, issue.number);
    expect(res.status).toBe(201);
    const run = res.body.run as { id: string; state: string };
    expect(run.state).toBe("Pending");
    const { rows } = await fx.db.pool.query(
      `SELECT r.prompt, e.submission->'actor' AS actor FROM runs r JOIN events e ON e.id = r.event_id WHERE r.id = $1`,
      [run.id],
    );
    expect(rows[0]).toEqual({ prompt: `Implement #${issue.number}: Run it now\nno label at all\n`, actor: { login: "writer", permission: "write", source: "operator" } });
    const { rows: audited } = await fx.db.pool.query(`SELECT actor, run_id FROM audit_log WHERE action = 'dispatch_loop'`);
    expect(audited).toEqual([{ actor: "writer", run_id: run.id }]);

    // the Item's if: is false, and it is read again: the operator's ask is not withdrawn (ADR 0073)
    await pollRepository(fx.deps, repo);
    await handleHint(fx.deps, { installationId, repo, number: issue.number });
    const { rows: after } = await fx.db.pool.query(`SELECT state::text AS state FROM runs WHERE id = $1`, [run.id]);
    expect(after).toEqual([{ state: "Pending" }]);
  });

  it("a read token cannot dispatch (403), nor can a reader's act token; a bad body is a 400", async () => {
    const issue = fx.sim.createIssue({ login: "writer", repo, title: "Not by them" });
    const read = await dispatch(await newToken("writer", "read"), issue.number);
    expect([read.status, read.body.error]).toEqual([403, "token_scope_insufficient"]);
    const reader = await dispatch(await newToken("reader", "act"), issue.number);
    expect(reader.status).toBe(403);
    const token = await newToken("writer", "act");
    const bad = await call(routes.dispatch.POST, "POST", "/api/v1/loops/dispatch", { headers: bearer(token), body: { repo, loop: "start-dev", number: "1; DROP" } });
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_body"]);
    const noLoop = await dispatch(token, issue.number, "nope");
    expect([noLoop.status, noLoop.body.error]).toEqual([404, "loop_not_found"]);
    const { rows } = await fx.db.pool.query(`SELECT count(*)::int AS n FROM runs WHERE number = $1`, [issue.number]);
    expect(rows[0].n).toBe(0);
  });

  it("over the concurrency cap: 429 with Retry-After; over the monthly run quota: 402 with reset_at; suspended: 403", async () => {
    const token = await newToken("writer", "act");
    const first = fx.sim.createIssue({ login: "writer", repo, title: "Running" });
    const opened = await dispatch(token, first.number);
    const begun = await beginAttempt(fx.db, (opened.body.run as { id: string }).id, { token: "lease", workerId: "test" });
    expect(begun.tag).toBe("Started");

    const next = fx.sim.createIssue({ login: "writer", repo, title: "Waits" });
    await setQuota(fx.db, { kind: "repository", repo }, { max_concurrent: 1 });
    const busy = await dispatch(token, next.number);
    expect([busy.status, busy.body.error, busy.headers.get("retry-after")]).toEqual([429, "concurrency_cap_exceeded", "30"]);
    await setQuota(fx.db, { kind: "repository", repo }, { max_concurrent: 0 });

    const { rows } = await fx.db.pool.query(`SELECT count(*)::int AS n FROM runs WHERE repo = $1`, [repo]);
    await setQuota(fx.db, { kind: "installation", installationId }, { monthly_runs: rows[0].n });
    const over = await dispatch(token, next.number);
    expect([over.status, over.body.error]).toEqual([402, "monthly_run_quota_exceeded"]);
    expect(over.body.reset_at).toMatch(/^\d{4}-\d{2}-01T00:00:00.000Z$/);
    await setQuota(fx.db, { kind: "installation", installationId }, { monthly_runs: 0 });

    await fx.db.pool.query(`UPDATE installations SET suspended_at = now() WHERE id = $1`, [installationId]);
    const suspended = await dispatch(token, next.number);
    expect([suspended.status, suspended.body.error]).toEqual([403, "installation_suspended"]);
    await fx.db.pool.query(`UPDATE installations SET suspended_at = NULL WHERE id = $1`, [installationId]);
    expect((await dispatch(token, next.number)).status).toBe(201);
  });
});

describe("check config now", () => {
  const check = (token: string, body: unknown) => call(routes.checkConfig.POST, "POST", "/api/v1/loops/check-config", { headers: bearer(token), origin: null, body });

  it("reads .github/atelier.yml from GitHub at once, audited: a broken Loop stays listed with its error, then clears when fixed", async () => {
    const token = await newToken("writer", "act");
    await fx.sim.pushCommit({ repo, branch: "main", files: { ".github/atelier.yml": "loops:\n  start-dev: [unclosed\n" } });
    const broken = await check(token, { repo });
    expect(broken.status).toBe(200);
    expect(broken.body).toMatchObject({ ok: true, repo, loops: ["start-dev"] });
    expect((broken.body.errors as unknown[]).length).toBeGreaterThan(0);
    expect((await listLoops(fx.db, repo)).find((l) => l.name === "start-dev")).toMatchObject({ valid: false, error: expect.any(String) });

    await fx.sim.pushCommit({ repo, branch: "main", files: { ".github/atelier.yml": START_DEV_CONFIG } });
    const fixed = await check(token, { repo });
    expect(fixed.body).toMatchObject({ ok: true, loops: ["start-dev"], errors: [] });
    expect((await listLoops(fx.db, repo)).find((l) => l.name === "start-dev")).toMatchObject({ valid: true, error: null });
    const { rows } = await fx.db.pool.query(`SELECT actor, repo FROM audit_log WHERE action = 'check_config' ORDER BY id`);
    expect(rows).toEqual([
      { actor: "writer", repo },
      { actor: "writer", repo },
    ]);
  });

  it("is refused to a reader (403) and for a repository that is not one (400 or 404), never a 500", async () => {
    const reader = await check(await newToken("reader", "act"), { repo });
    expect(reader.status).toBe(403);
    const writer = await newToken("writer", "act");
    expect((await check(writer, { repo: "not a repo" })).body).toMatchObject({ error: "invalid_body" });
    expect((await check(writer, { repo, extra: 1 })).body).toMatchObject({ error: "invalid_body" });
    const unknown = await check(writer, { repo: "ops/nowhere" });
    expect([403, 404]).toContain(unknown.status);
  });
});
