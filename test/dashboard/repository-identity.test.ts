import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgetAccess } from "../../lib/auth/authorize";
import { viewerFromCookieHeader } from "../../lib/auth/current-viewer";
import { setInstanceConfigForTests } from "../../lib/auth/instance-config";
import { defaultInstanceConfig } from "../../lib/config/roster";
import { getRun } from "../../lib/dashboard/queries";
import type { DashboardServices } from "../../lib/dashboard/services";
import { git } from "../../lib/executor/git";
import { cacheDir } from "../../lib/executor/workspace-paths";
import { prepareWorkspace, removeWorkspace } from "../../lib/executor/workspace";
import { createGitHubApp } from "../../lib/github/app-client";
import { applyInstallationWebhook, followRepository, reconcileInstallations } from "../../lib/github/installation-sync";
import { silentLog } from "../../lib/github/log";
import { collectRetired } from "../../lib/runner/collect-retired";
import { startSimulator, type Simulator } from "../../lib/sandbox/index";
import type { Db } from "../../lib/store/kernel/db";
import { transaction } from "../../lib/store/kernel/transaction";
import { recordTerminalDeliveries } from "../../lib/store/outbound/terminal-deliveries";
import { testDb } from "../support/db";
import { call, type RouteHandler } from "./support/api-client";
import { cookieFor, seedItem, seedRun, seedUser } from "./support/seed";

/**
 * THREATS.md attack 23, on the simulator's GitHub: a private repository is renamed (another
 * transferred, another deleted) and an organization member creates a repository under the old
 * name. What Atelier keeps of the old one (its Runs and transcripts, its retries and kept
 * sessions, its Loop webhooks, its bare cache) belongs to the old one's GitHub id: the
 * newcomer reaches none of it, and the old repository's people still do.
 */

process.env.DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test";
const SECRET = "repository-identity-test-secret-0123456789";
process.env.AUTH_SECRET = SECRET;

const routes = {
  run: await import("../../app/api/v1/runs/[id]/route"),
  runs: await import("../../app/api/v1/runs/route"),
  transcript: await import("../../app/api/v1/runs/[id]/transcript/route"),
  retry: await import("../../app/api/v1/runs/[id]/retry/route"),
  hooks: await import("../../app/api/v1/outbound/hooks/route"),
};
const { setDashboardServicesForTests } = await import("../../app/_server/services");

const tag = randomBytes(3).toString("hex");
const ORG = `rid-${tag}`;
const OTHER_ORG = `rid2-${tag}`;
const OWNER = `owner-${tag}`;
const MALLORY = `mallory-${tag}`;

let sim: Simulator;
let db: Db;
let root: string;
const cookies: Record<string, string> = {};
const retried: string[] = [];

const refused = async () => {
  throw new Error("not reached by this test");
};
const services: DashboardServices = {
  approveRun: refused,
  async retryRun(runId) {
    retried.push(runId);
    return { tag: "Retried" } as never;
  },
  editAndRetryRun: refused,
  cancelRun: refused,
  resolveFailure: refused,
  intervene: refused,
  pushReviewed: refused,
  discardReviewed: refused,
  resetCycleBudget: refused,
  setLoopPaused: refused,
  dispatchLoop: refused,
  checkConfig: refused,
  moveCard: refused,
};

async function signIn(login: string): Promise<string> {
  const account = sim.state.findAccount(login)!;
  const { token } = sim.createUserToken({ login });
  return cookieFor(await seedUser(db, { id: account.id, login: account.login, token }, SECRET));
}

/** Applies what the simulator last sent for `event.action` as the Probot app does (installation-sync). */
async function applyLast(event: string, action: string): Promise<void> {
  await sim.waitForWebhooks();
  const delivery = sim.deliveries().filter((d) => d.event === event && d.action === action).at(-1);
  expect(delivery, `${event}.${action} delivered`).toBeDefined();
  await applyInstallationWebhook(db, event, delivery!.payload);
}

/** What the hourly reconcile does: GitHub's installations and their repositories, by id. */
const reconcile = () => reconcileInstallations({ db, github: createGitHubApp(sim.appSettings(), { log: silentLog }) });

/** An old repository's Run (Failed, with a transcript line), a kept session and a cache on this worker. */
async function oldRun(repo: string): Promise<{ runId: string; repositoryId: string }> {
  await seedItem(db, repo, 1, { title: "the old repository's issue" });
  const runId = await seedRun(db, { repo, number: 1, state: "Failed", attempts: [{ state: "Failed", failureKind: "agent", failureCategory: "crash", failureMessage: "the old repository's secret" }] });
  await db.pool.query(`INSERT INTO transcript_entries (attempt_id, run_id, stream, text) VALUES ($1, $2, 'stdout', 'the old repository''s transcript')`, [`${runId}/agent/1`, runId]);
  const { rows } = await db.pool.query<{ id: string }>(`SELECT repository_id::text AS id FROM runs WHERE id = $1`, [runId]);
  const repositoryId = rows[0]!.id;
  await db.pool.query(
    `INSERT INTO agent_sessions (run_id, attempt_id, repository_id, kind, session_id, bytes, chunks) VALUES ($1, $2, $3, 'claude', 'old-session', 0, 0)`,
    [runId, `${runId}/agent/1`, repositoryId],
  );
  mkdirSync(cacheDir(root, repositoryId), { recursive: true });
  return { runId, repositoryId };
}

/** Mallory, a member of the organization, creates a repository under a name another one gave up (Atelier registers it at its reconcile). */
async function takeName(fullName: string, opts: { reconcile: boolean } = { reconcile: true }): Promise<number> {
  const [owner, name] = fullName.split("/") as [string, string];
  const made = await sim.createRepo({ owner, name, files: { "MALLORY.md": "mine\n" } });
  sim.setUserPermission({ repo: fullName, login: MALLORY, permission: "admin" });
  if (opts.reconcile) await reconcile();
  forgetAccess();
  return made.id;
}

const get = <P>(handler: RouteHandler<P>, path: string, params: P, cookie: string, query: Record<string, string> = {}) =>
  call(handler, "GET", path, { params, cookie, query });

/** Everything Mallory tries against the old repository's Run, each answered as a Run that does not exist. */
async function expectUnreachable(runId: string, oldName: string): Promise<void> {
  const cookie = cookies[MALLORY]!;
  const run = await get(routes.run.GET, `/api/v1/runs/${runId}`, { id: runId }, cookie);
  expect(run.status).toBe(404);
  expect(run.body).toMatchObject({ error: "run_not_found" });
  const transcript = await get(routes.transcript.GET, `/api/v1/runs/${runId}/transcript`, { id: runId }, cookie, { limit: "50" });
  expect(transcript.status).toBe(404);
  const retry = await call(routes.retry.POST, "POST", `/api/v1/runs/${runId}/retry`, { params: { id: runId }, cookie, body: {} });
  expect(retry.status).toBe(404);
  expect(retried).not.toContain(runId);
  const list = await get(routes.runs.GET, "/api/v1/runs", {}, cookie, { repo: oldName });
  expect(JSON.stringify(list.body)).not.toContain(runId);
  // the dashboard's page reads the same way
  await expect(getRun({ db }, await viewerFromCookieHeader(db, cookie), runId)).rejects.toMatchObject({ status: 404 });
}

beforeAll(async () => {
  sim = await startSimulator({});
  process.env.GITHUB_API_URL = sim.url;
  db = testDb(4);
  root = mkdtempSync(join(tmpdir(), "atelier-repoid-"));
  sim.createOrg({ login: ORG });
  sim.createOrg({ login: OTHER_ORG });
  for (const login of [OWNER, MALLORY]) sim.createUser({ login });
  sim.setDefaultUser({ login: OWNER });
  for (const name of ["secret", "moved", "gone", "quiet", ".x", "_x"]) {
    await sim.createRepo({ owner: ORG, name, files: { "SECRET.md": `${name}: the old repository's code\n` } });
    sim.setUserPermission({ repo: `${ORG}/${name}`, login: OWNER, permission: "admin" });
  }
  // every repository of both organizations, the new ones too
  sim.createInstallation({ login: OWNER, account: ORG });
  sim.createInstallation({ login: OWNER, account: OTHER_ORG });
  await reconcile();
  // the Loop webhooks of this test point at this machine
  setInstanceConfigForTests({ ...defaultInstanceConfig(), allowPrivateWebhookTargets: true });
  setDashboardServicesForTests(services);
  forgetAccess();
  cookies[OWNER] = await signIn(OWNER);
  cookies[MALLORY] = await signIn(MALLORY);
});

afterAll(async () => {
  setDashboardServicesForTests(undefined);
  setInstanceConfigForTests(undefined);
  await sim.close();
  await db.close();
  rmSync(root, { recursive: true, force: true });
});

describe("a private repository renamed, its name taken by another", () => {
  it("keeps its Runs, transcripts, retries and Loop webhooks from the newcomer; its own people still reach them", async () => {
    const { runId, repositoryId } = await oldRun(`${ORG}/secret`);
    const oldHook = await call(routes.hooks.POST, "POST", "/api/v1/outbound/hooks", {
      cookie: cookies[OWNER]!,
      body: { repo: `${ORG}/secret`, loop: "start-dev", url: "http://127.0.0.1:9/owner" },
    });
    expect(oldHook.status).toBe(201);

    sim.renameRepo({ repo: `${ORG}/secret`, to: "secret-renamed", login: OWNER });
    const newId = await takeName(`${ORG}/secret`, { reconcile: false });
    expect(String(newId)).not.toBe(repositoryId);
    // before Atelier hears of the rename its rows still carry the old name: access goes by id
    await expectUnreachable(runId, `${ORG}/secret`);

    await applyLast("repository", "renamed");
    await reconcile();
    // the rows moved with the id, Item keys and all
    const moved = await db.pool.query<{ repo: string; item_key: string }>(`SELECT repo, item_key FROM runs WHERE id = $1`, [runId]);
    expect(moved.rows[0]).toEqual({ repo: `${ORG}/secret-renamed`, item_key: JSON.stringify(["github", `${ORG}/secret-renamed`, 1]) });
    await expectUnreachable(runId, `${ORG}/secret`);

    // Mallory's Loop webhook on the name hears nothing of the old repository's Runs
    const mine = await call(routes.hooks.POST, "POST", "/api/v1/outbound/hooks", {
      cookie: cookies[MALLORY]!,
      body: { repo: `${ORG}/secret`, loop: "start-dev", url: "http://127.0.0.1:9/mallory" },
    });
    expect(mine.status).toBe(201);
    const delivered = await transaction(db, (tx) => recordTerminalDeliveries(tx, runId));
    const { rows: hooks } = await db.pool.query<{ hook_id: string }>(`SELECT hook_id::text FROM outbound_deliveries WHERE id = ANY($1::bigint[])`, [delivered]);
    expect(hooks.map((h) => h.hook_id)).toEqual([String((oldHook.body.hook as { id: number }).id)]);

    // the old repository's owner reads it under its new name, and may retry it
    const own = await get(routes.run.GET, `/api/v1/runs/${runId}`, { id: runId }, cookies[OWNER]!);
    expect(own.status).toBe(200);
    expect(JSON.stringify(own.body)).toContain(`${ORG}/secret-renamed`);
    const retry = await call(routes.retry.POST, "POST", `/api/v1/runs/${runId}/retry`, { params: { id: runId }, cookie: cookies[OWNER]!, body: {} });
    expect(retry.status).toBe(200);
    expect(retried).toContain(runId);
  });

  it("keeps the old repository's objects out of the newcomer's Attempts: each repository has its own cache, by id", async () => {
    const token = sim.createInstallationToken({ account: ORG }).token;
    const ids = await db.pool.query<{ full_name: string; id: string }>(`SELECT full_name, id::text AS id FROM repositories WHERE full_name = ANY($1)`, [
      [`${ORG}/secret`, `${ORG}/secret-renamed`],
    ]);
    const idOf = (name: string) => ids.rows.find((r) => r.full_name === name)!.id;
    const prepare = (repo: string, attempt: string) =>
      prepareWorkspace({
        root,
        repo,
        repositoryId: idOf(repo),
        cloneUrl: sim.cloneUrl(repo),
        token,
        defaultBranch: "main",
        branch: `atelier/start-dev/${attempt}`,
        runId: attempt,
        attemptId: `${attempt}/agent/1`,
        sandboxed: false,
      });
    const old = await prepare(`${ORG}/secret-renamed`, "old1");
    const oldHead = old.base.sha;
    await removeWorkspace(old);
    const theirs = await prepare(`${ORG}/secret`, "new1");
    expect(theirs.cacheDir).not.toBe(old.cacheDir);
    // nothing of the old repository is reachable from the newcomer's clone, alternates included
    const seen = await git(["cat-file", "-e", `${oldHead}^{commit}`], { cwd: theirs.worktree, okExitCodes: [0, 1, 128] });
    expect(seen.exitCode).not.toBe(0);
    await removeWorkspace(theirs);
  });

  it("gives `.x` and `_x` caches of their own", async () => {
    const token = sim.createInstallationToken({ account: ORG }).token;
    const { rows } = await db.pool.query<{ full_name: string; id: string }>(`SELECT full_name, id::text AS id FROM repositories WHERE full_name = ANY($1)`, [[`${ORG}/.x`, `${ORG}/_x`]]);
    expect(rows).toHaveLength(2);
    const dirs = new Set<string>();
    for (const r of rows) {
      const ws = await prepareWorkspace({
        root,
        repo: r.full_name,
        repositoryId: r.id,
        cloneUrl: sim.cloneUrl(r.full_name),
        token,
        defaultBranch: "main",
        branch: "atelier/start-dev/1",
        runId: `x${r.id}`,
        attemptId: `x${r.id}/agent/1`,
        sandboxed: false,
      });
      dirs.add(ws.cacheDir);
      await removeWorkspace(ws);
    }
    expect(dirs.size).toBe(2);
  });
});

describe("a private repository transferred, its name taken by another", () => {
  it("moves with its id to the new owner's installation; the newcomer reaches none of it", async () => {
    const { runId } = await oldRun(`${ORG}/moved`);
    sim.transferRepo({ repo: `${ORG}/moved`, to: OTHER_ORG, login: OWNER });
    await applyLast("repository", "transferred");
    const { rows } = await db.pool.query<{ repo: string }>(`SELECT repo FROM runs WHERE id = $1`, [runId]);
    expect(rows[0]!.repo).toBe(`${OTHER_ORG}/moved`);
    await takeName(`${ORG}/moved`);
    await expectUnreachable(runId, `${ORG}/moved`);
  });
});

describe("a private repository deleted, its name taken by another", () => {
  it("is retired: its rows leave the name, its cache and kept sessions are collected, the newcomer reaches none of it", async () => {
    const { runId, repositoryId } = await oldRun(`${ORG}/gone`);
    sim.deleteRepo({ repo: `${ORG}/gone`, login: OWNER });
    await applyLast("repository", "deleted");
    const { rows } = await db.pool.query<{ repo: string }>(`SELECT repo FROM runs WHERE id = $1`, [runId]);
    expect(rows[0]!.repo).toBe(`${ORG}/gone#${repositoryId}`);

    expect(existsSync(cacheDir(root, repositoryId))).toBe(true);
    const legacy = join(root, "cache", `${ORG}__gone.git`);
    mkdirSync(legacy, { recursive: true });
    const collected = await collectRetired(db, root);
    // a cache of the layout by name is no repository's any more
    expect(existsSync(legacy)).toBe(false);
    expect(collected).toContain(repositoryId);
    expect(existsSync(cacheDir(root, repositoryId))).toBe(false);
    // its kept session went with it, whatever retired it (ADR 0082)
    const kept = await db.pool.query(`SELECT 1 FROM agent_sessions WHERE run_id = $1`, [runId]);
    expect(kept.rowCount).toBe(0);

    await takeName(`${ORG}/gone`);
    await expectUnreachable(runId, `${ORG}/gone`);
  });
});

describe("an App without the repository event", () => {
  it("learns from an Item's delivery that a name changed hands: the old repository is retired until the reconcile finds its new name", async () => {
    const { runId, repositoryId } = await oldRun(`${ORG}/quiet`);
    sim.renameRepo({ repo: `${ORG}/quiet`, to: "quiet-renamed", login: OWNER });
    await takeName(`${ORG}/quiet`, { reconcile: false });
    sim.createIssue({ repo: `${ORG}/quiet`, title: "an issue of the newcomer's", login: MALLORY });
    await sim.waitForWebhooks();
    const delivery = sim.deliveries().filter((d) => d.event === "issues" && d.action === "opened").at(-1)!;
    const payload = delivery.payload as { installation: { id: number }; repository: { id: number; full_name: string } };
    expect(await followRepository(db, payload.installation.id, payload.repository)).toBe(true);
    const retired = await db.pool.query<{ repo: string }>(`SELECT repo FROM runs WHERE id = $1`, [runId]);
    expect(retired.rows[0]!.repo).toBe(`${ORG}/quiet#${repositoryId}`);
    await expectUnreachable(runId, `${ORG}/quiet`);

    await reconcile();
    const found = await db.pool.query<{ repo: string }>(`SELECT repo FROM runs WHERE id = $1`, [runId]);
    expect(found.rows[0]!.repo).toBe(`${ORG}/quiet-renamed`);
    expect(await followRepository(db, payload.installation.id, payload.repository)).toBe(false);
  });
});
