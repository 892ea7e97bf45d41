import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgetAccess } from "../../lib/auth/authorize";
import { setInstanceConfigForTests } from "../../lib/auth/instance-config";
import { defaultInstanceConfig } from "../../lib/config/roster";
import { snapshotsOfRepositories } from "../../lib/dashboard/environment-snapshots";
import { findSnapshot, saveSnapshot, type SnapshotStore } from "../../lib/executor/environment/snapshot-store";
import { installRepository, startFixture, type Fixture } from "../github/support/fixture";
import { call } from "./support/api-client";
import { pointRoutesAt } from "./support/route-env";
import { cookieFor, seedUser } from "./support/seed";

/**
 * The Repositories page's environment snapshots and Rebuild over the JSON API: a writer removes
 * one of the repository's snapshots (audited); a reader cannot; a key of another repository is
 * not found through this one, and that snapshot stays.
 */

const SECRET = "rebuild-test-secret-0123456789abcdef";
process.env.AUTH_SECRET = SECRET;

let fx: Fixture;
let repoA: string;
let repoB: string;
let store: SnapshotStore;
let dir: string;
const cookies: Record<string, string> = {};
let route: typeof import("../../app/api/v1/repositories/environment/rebuild/route");
const ids: Record<string, string> = {};

async function snapshotOf(repo: string, key: string): Promise<void> {
  const box = mkdtempSync(join(dir, "box-"));
  mkdirSync(join(box, "node_modules"));
  writeFileSync(join(box, "node_modules", "index.js"), "module.exports = 1;\n");
  const saved = await saveSnapshot(store, ids[repo]!, key, ["node_modules"], { worktree: box, home: join(box, "home") });
  expect(saved.tag).toBe("Saved");
}

beforeAll(async () => {
  fx = await startFixture();
  pointRoutesAt(fx);
  dir = mkdtempSync(join(tmpdir(), "atelier-rebuild-"));
  store = { dir: join(dir, "environments"), capBytes: 1024 ** 3 };
  process.env.ATELIER_ENV_CACHE_DIR = store.dir;
  ({ fullName: repoA } = await installRepository(fx, { owner: "ops", name: "site" }));
  ({ fullName: repoB } = await installRepository(fx, { owner: "ops", name: "other" }));
  const { rows } = await fx.db.pool.query<{ full_name: string; id: string }>(`SELECT full_name, id::text FROM repositories`);
  for (const r of rows) ids[r.full_name] = r.id;
  for (const login of ["writer", "reader"]) {
    const { id } = fx.sim.createUser({ login });
    for (const repo of [repoA, repoB]) fx.sim.setUserPermission({ repo, login, permission: login === "writer" && repo === repoA ? "write" : "read" });
    cookies[login] = cookieFor(await seedUser(fx.db, { id, login, token: fx.sim.createUserToken({ login }).token }, SECRET));
  }
  setInstanceConfigForTests({ ...defaultInstanceConfig(), admins: [] });
  forgetAccess();
  route = await import("../../app/api/v1/repositories/environment/rebuild/route");
});
afterAll(async () => {
  setInstanceConfigForTests(undefined);
  delete process.env.ATELIER_ENV_CACHE_DIR;
  await fx.close();
  rmSync(dir, { recursive: true, force: true });
});

const rebuild = (login: string, repo: string, key: string) =>
  call(route.POST, "POST", "/api/v1/repositories/environment/rebuild", { cookie: cookies[login]!, body: { repo, key } });

describe("environment snapshots on the Repositories page", () => {
  it("are listed per repository with size, files, hits and ages", async () => {
    await snapshotOf(repoA, "a".repeat(64));
    const listed = await snapshotsOfRepositories({ db: fx.db, services: undefined as never, snapshots: store }, [repoA, repoB]);
    expect([...listed.keys()]).toEqual([repoA]);
    expect(listed.get(repoA)).toEqual([expect.objectContaining({ key: "a".repeat(64), files: 1, bytes: 20, hits: 0 })]);
  });

  it("Rebuild: a reader is refused, a writer removes it (audited), another repository's key is not found through this one", async () => {
    await snapshotOf(repoB, "b".repeat(64));
    expect((await rebuild("reader", repoA, "a".repeat(64))).status).toBe(403);
    expect(await findSnapshot(store, ids[repoA]!, "a".repeat(64))).not.toBeNull();

    const other = await rebuild("writer", repoA, "b".repeat(64));
    expect([other.status, other.body.error]).toEqual([404, "environment_snapshot_not_found"]);
    expect(await findSnapshot(store, ids[repoB]!, "b".repeat(64))).not.toBeNull();

    const done = await rebuild("writer", repoA, "a".repeat(64));
    expect(done.status).toBe(200);
    expect(await findSnapshot(store, ids[repoA]!, "a".repeat(64))).toBeNull();
    const { rows } = await fx.db.pool.query(`SELECT actor, repo, detail FROM audit_log WHERE action = 'rebuild_environment'`);
    expect(rows).toEqual([{ actor: "writer", repo: repoA, detail: { key: "a".repeat(64) } }]);

    const bad = await rebuild("writer", repoA, "../../etc");
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_body"]);
  });
});
