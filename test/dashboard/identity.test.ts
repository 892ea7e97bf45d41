import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgetConfigAccountIds } from "../../lib/auth/config-accounts";
import { mayUseInstance } from "../../lib/auth/allowed-orgs";
import { forgetAccess } from "../../lib/auth/authorize";
import { viewerFromCookieHeader } from "../../lib/auth/current-viewer";
import { setInstanceConfigForTests } from "../../lib/auth/instance-config";
import { defaultInstanceConfig } from "../../lib/config/roster";
import { approveRun } from "../../lib/dashboard/actions";
import { getRun } from "../../lib/dashboard/queries";
import type { DashboardServices } from "../../lib/dashboard/services";
import { startSimulator, type Simulator } from "../../lib/sandbox/index";
import { approve } from "../../lib/store/runs/approvals";
import type { Db } from "../../lib/store/kernel/db";
import { testDb } from "../support/db";
import { cookieFor, seedItem, seedRepo, seedRun, seedUser } from "./support/seed";

/**
 * THREATS.md attack 14 and "permissions live for writes", against the simulator's GitHub: an
 * admin is an account, not a login; a writer whose access GitHub revoked is refused on the
 * next write, whatever a cache remembers; a custom role acts as the role it is based on.
 */

const SECRET = "identity-test-secret-0123456789abcdef";
process.env.AUTH_SECRET = SECRET;
const tag = randomBytes(3).toString("hex");
const ORG = `ident-${tag}`;
const REPO = `${ORG}/app`;
const ADMIN = `boss-${tag}`;

let sim: Simulator;
let db: Db;
const ids: Record<string, number> = {};

/** Signs `login` in as the OAuth flow would (their GitHub id, login and token stored) and returns the viewer (null: refused). */
async function signIn(login: string) {
  const account = sim.state.findAccount(login)!;
  const { token } = sim.createUserToken({ login });
  const session = await seedUser(db, { id: account.id, login: account.login, token }, SECRET);
  return viewerFromCookieHeader(db, cookieFor(session));
}

const unused = async () => {
  throw new Error("not used by this test");
};
const services: DashboardServices = {
  approveRun: (runId, actor) => approve(db, runId, actor),
  retryRun: unused,
  editAndRetryRun: unused,
  cancelRun: unused,
  resolveFailure: unused,
  intervene: unused,
  pushReviewed: unused,
  discardReviewed: unused,
  resetCycleBudget: unused,
  setLoopPaused: unused,
  dispatchLoop: unused,
  checkConfig: unused,
  moveCard: unused,
};

beforeAll(async () => {
  sim = await startSimulator({});
  process.env.GITHUB_API_URL = sim.url;
  db = testDb(4);
  sim.createOrg({ login: ORG });
  for (const login of [ADMIN, `writer-${tag}`, `mallory-${tag}`, `deployer-${tag}`, `helper-${tag}`]) ids[login] = sim.createUser({ login }).id;
  const app = await sim.createRepo({ owner: ORG, name: "app" });
  const installation = sim.createInstallation({ login: ADMIN, account: ORG, repos: ["app"] });
  sim.setUserPermission({ repo: REPO, login: `writer-${tag}`, permission: "write" });
  sim.setCustomRole({ repo: REPO, login: `deployer-${tag}`, role: "deployer", base: "write" });
  sim.setCustomRole({ repo: REPO, login: `helper-${tag}`, role: "issue-helper", base: "triage" });
  await seedRepo(db, REPO, installation.id, { id: app.id });
  setInstanceConfigForTests({ ...defaultInstanceConfig(), admins: [ADMIN] });
  forgetConfigAccountIds();
  forgetAccess();
});

afterAll(async () => {
  setInstanceConfigForTests(undefined);
  await db.close();
  await sim.close();
});

describe("instance admins are GitHub accounts (attack 14)", () => {
  it("the config's login is resolved once to its account id; a renamed admin stays admin, a newcomer on the old login is none", async () => {
    expect((await signIn(ADMIN))?.admin).toBe(true);
    const { rows } = await db.pool.query(`SELECT host, github_id FROM account_resolutions WHERE login = $1`, [ADMIN.toLowerCase()]);
    expect(rows).toEqual([{ host: new URL(sim.url).host, github_id: String(ids[ADMIN]) }]);

    // the admin renames; someone new takes the old login
    sim.renameUser({ login: ADMIN, to: `boss-renamed-${tag}` });
    const newcomer = sim.createUser({ login: ADMIN });
    forgetConfigAccountIds(); // as 30 s later
    const impostor = (await signIn(ADMIN))!;
    expect(impostor.id).toBe(String(newcomer.id));
    expect(impostor.admin).toBe(false);
    expect((await signIn(`boss-renamed-${tag}`))?.admin).toBe(true);
  });

  it("a user who renames themselves to an admin's login is no admin", async () => {
    sim.renameUser({ login: `mallory-${tag}`, to: `${ADMIN}-x` });
    forgetConfigAccountIds();
    setInstanceConfigForTests({ ...defaultInstanceConfig(), admins: [ADMIN, `boss-renamed-${tag}`] });
    const mallory = (await signIn(`${ADMIN}-x`))!;
    expect(mallory.admin).toBe(false);
  });
});

describe("allowed_orgs restricts who may sign in", () => {
  it("a member of an allowed organization signs in; an outsider's session is no viewer, and the sign-in refuses them", async () => {
    sim.createUser({ login: `outsider-${tag}` });
    setInstanceConfigForTests({ ...defaultInstanceConfig(), admins: [], allowedOrgs: [ORG.toLowerCase()] });
    forgetConfigAccountIds();
    forgetAccess();
    expect((await signIn(`writer-${tag}`))?.login).toBe(`writer-${tag}`);
    expect(await signIn(`outsider-${tag}`)).toBeNull();
    const outsider = sim.state.findAccount(`outsider-${tag}`)!;
    const { token } = sim.createUserToken({ login: `outsider-${tag}` });
    expect(await mayUseInstance(db, { allowedOrgs: [ORG.toLowerCase()] }, String(outsider.id), token, sim.url)).toBe(false);
    expect(await mayUseInstance(db, {}, String(outsider.id), token, sim.url)).toBe(true);
    setInstanceConfigForTests({ ...defaultInstanceConfig(), admins: [ADMIN, `boss-renamed-${tag}`] });
  });

  it("is held by account id: an organization created later under an allowed one's old login lets nobody in (attack 23)", async () => {
    const allowed = `allowed-${tag}`;
    sim.createOrg({ login: allowed });
    for (const login of [`member-${tag}`, `squatter-${tag}`]) sim.createUser({ login });
    await sim.createRepo({ owner: allowed, name: "app" });
    sim.setUserPermission({ repo: `${allowed}/app`, login: `member-${tag}`, permission: "write" });
    sim.createInstallation({ login: `member-${tag}`, account: allowed, repos: ["app"] });
    setInstanceConfigForTests({ ...defaultInstanceConfig(), admins: [], allowedOrgs: [allowed] });
    forgetConfigAccountIds();
    forgetAccess();
    expect((await signIn(`member-${tag}`))?.login).toBe(`member-${tag}`);

    // the organization renames; someone creates a new one under its old login and installs the App there
    sim.renameUser({ login: allowed, to: `${allowed}-renamed` });
    sim.createOrg({ login: allowed });
    await sim.createRepo({ owner: allowed, name: "bait" });
    sim.setUserPermission({ repo: `${allowed}/bait`, login: `squatter-${tag}`, permission: "admin" });
    sim.createInstallation({ login: `squatter-${tag}`, account: allowed, repos: ["bait"] });
    forgetConfigAccountIds();
    forgetAccess();
    expect(await signIn(`squatter-${tag}`)).toBeNull();
    const squatter = sim.state.findAccount(`squatter-${tag}`)!;
    expect(await mayUseInstance(db, { allowedOrgs: [allowed] }, String(squatter.id), sim.createUserToken({ login: `squatter-${tag}` }).token, sim.url)).toBe(false);
    // the renamed organization's people still sign in
    expect((await signIn(`member-${tag}`))?.login).toBe(`member-${tag}`);
    setInstanceConfigForTests({ ...defaultInstanceConfig(), admins: [ADMIN, `boss-renamed-${tag}`] });
  });
});

describe("a public repository's Runs", () => {
  it("show to its collaborators, and to a stranger (whom GitHub reports as a reader) as a Run that does not exist", async () => {
    const site = await sim.createRepo({ owner: ORG, name: "site", private: false });
    const installation = [...sim.state.installations.values()].find((i) => i.accountId === sim.state.findAccount(ORG)!.id)!;
    sim.addRepository({ login: `writer-${tag}`, installationId: installation.id, repo: `${ORG}/site` });
    await seedRepo(db, `${ORG}/site`, installation.id, { id: site.id });
    sim.createUser({ login: `reader-${tag}` });
    sim.setUserPermission({ repo: `${ORG}/site`, login: `reader-${tag}`, permission: "read" });
    sim.createUser({ login: `passer-by-${tag}` });
    await seedItem(db, `${ORG}/site`, 1);
    const runId = await seedRun(db, { repo: `${ORG}/site`, number: 1, state: "Waiting" });
    const ctx = { db };

    const reader = (await signIn(`reader-${tag}`))!;
    expect(await getRun(ctx, reader, runId)).toMatchObject({ id: runId, canAct: false });
    const passerBy = (await signIn(`passer-by-${tag}`))!;
    await expect(getRun(ctx, passerBy, runId)).rejects.toMatchObject({ status: 404, token: "run_not_found" });
    await expect(getRun(ctx, passerBy, "no-such-run")).rejects.toMatchObject({ status: 404, token: "run_not_found" });
  });
});

describe("permissions live for writes", () => {
  it("a writer whose access GitHub revoked is refused on the next write, though a read a moment ago said write", async () => {
    const writer = (await signIn(`writer-${tag}`))!;
    await seedItem(db, REPO, 1);
    await seedItem(db, REPO, 2);
    const first = await seedRun(db, { repo: REPO, number: 1, state: "Waiting" });
    const second = await seedRun(db, { repo: REPO, number: 2, state: "Waiting" });
    const ctx = { db, services };
    expect(await approveRun(ctx, writer, first)).toMatchObject({ ok: true, run: { state: "Queued" } });

    sim.setUserPermission({ repo: REPO, login: `writer-${tag}`, permission: "read" });
    await expect(approveRun(ctx, writer, second)).rejects.toMatchObject({
      status: 403,
      token: "permission_denied",
      message: `You need write access to ${REPO} on GitHub to do this (you have read access).`,
    });
    const { rows } = await db.pool.query(`SELECT state::text AS state FROM runs WHERE id = $1`, [second]);
    expect(rows).toEqual([{ state: "Waiting" }]);

    // access removed altogether: the Run is as invisible as one that does not exist
    sim.setUserPermission({ repo: REPO, login: `writer-${tag}`, permission: "none" });
    forgetAccess(writer.id); // the 30 s list of visible repositories, expired
    for (const id of [second, "no-such-run"]) {
      await expect(approveRun(ctx, writer, id)).rejects.toMatchObject({ status: 404, token: "run_not_found", message: `There is no Run ${id}.` });
    }
  });

  it("a custom role acts as the role it is based on: one based on write approves, one based on triage is refused", async () => {
    const deployer = (await signIn(`deployer-${tag}`))!;
    const helper = (await signIn(`helper-${tag}`))!;
    await seedItem(db, REPO, 3);
    await seedItem(db, REPO, 4);
    const first = await seedRun(db, { repo: REPO, number: 3, state: "Waiting" });
    const second = await seedRun(db, { repo: REPO, number: 4, state: "Waiting" });
    const ctx = { db, services };
    expect(await approveRun(ctx, deployer, first)).toMatchObject({ ok: true, run: { state: "Queued" } });
    await expect(approveRun(ctx, helper, second)).rejects.toMatchObject({
      status: 403,
      token: "permission_denied",
      message: `You need write access to ${REPO} on GitHub to do this (you have triage access).`,
    });
  });
});
