import { randomBytes } from "node:crypto";
import { createGitHubApp, type GitHubApp } from "../../lib/github/app-client";
import { silentLog } from "../../lib/github/log";
import { itemEventKey, itemKey } from "../../lib/engine/ids";
import type { MirrorDeps } from "../../lib/mirror/sync-run";
import { startSimulator, type Simulator } from "../../lib/sandbox";
import type { Db } from "../../lib/store/kernel/db";
import type { EventInput } from "../../lib/store/runs/claim";

export const PUBLIC_URL = "http://atelier.test";

/** A simulator seeded with the demo world, and a fresh repository of the demo org in it. */
export interface MirrorWorld {
  sim: Simulator;
  app: GitHubApp;
  /** owner/name, lower-cased: the same in the simulator and in Postgres */
  repo: string;
  installationId: number;
  deps: MirrorDeps;
  close(): Promise<void>;
}

/**
 * Starts the simulator, creates a repository whose name no other test file uses (the database
 * is shared), installs the App on it and registers it in Postgres.
 */
export async function startMirrorWorld(db: Db): Promise<MirrorWorld> {
  const sim = await startSimulator({ seed: "demo" });
  const name = `mirror-${randomBytes(4).toString("hex")}`;
  const repo = `demo-org/${name}`;
  await sim.createRepo({ owner: "demo-org", name });
  sim.addRepository({ repo });
  sim.setUserPermission({ repo, login: "octo-admin", permission: "admin" });
  sim.setUserPermission({ repo, login: "octo-writer", permission: "write" });
  sim.setUserPermission({ repo, login: "octo-reader", permission: "read" });
  const installationId = sim.state.installationForRepo(sim.state.repoByFullName(repo))!.id;
  await db.pool.query(
    `INSERT INTO installations (id, account_login, updated_at) VALUES ($1, 'demo-org', now()) ON CONFLICT (id) DO NOTHING`,
    [installationId],
  );
  // registered under the simulator's id, as GitHub's deliveries name it (ids start at a random base per simulator)
  await db.pool.query(
    `INSERT INTO repositories (id, installation_id, full_name, updated_at) VALUES ($1, $2, $3, now())`,
    [sim.state.repoByFullName(repo).id, installationId, repo],
  );
  const app = createGitHubApp(
    sim.appSettings(),
    { log: silentLog },
  );
  const deps: MirrorDeps = { db, github: async (id) => app.installationOctokit(id), publicUrl: PUBLIC_URL };
  return { sim, app, repo, installationId, deps, close: () => sim.close() };
}

/** Opens a pull request in the simulator and records its Item in Postgres. */
export async function openPullRequest(db: Db, world: MirrorWorld, head: string): Promise<{ number: number; sha: string }> {
  const pr = await world.sim.openPullRequest({ repo: world.repo, head, title: `Change ${head}`, login: "octo-writer" });
  await recordItem(db, world.repo, pr.number, "pull_request", pr.head.sha);
  return { number: pr.number, sha: pr.head.sha };
}

/** Opens an issue in the simulator and records its Item in Postgres. */
export async function openIssue(db: Db, world: MirrorWorld, title: string): Promise<number> {
  const issue = world.sim.createIssue({ repo: world.repo, title, login: "octo-writer" });
  await recordItem(db, world.repo, issue.number, "issue", null);
  return issue.number;
}

async function recordItem(db: Db, repo: string, number: number, kind: string, headSha: string | null): Promise<void> {
  await db.pool.query(
    `INSERT INTO items (key, repo, number, kind, state, title, head_sha, projection, content_hash)
     VALUES ($1, $2, $3, $4, 'open', 'x', $5, '{}', 'x')`,
    [itemKey(repo, number), repo, number, kind, headSha],
  );
}

/** An Event of `loop` on `repo#number`. */
export function loopEvent(repo: string, number: number, hash: string, loop: string, approvalRequired = false): EventInput {
  return {
    id: itemEventKey(loop, repo, number, hash, 0),
    kind: "item",
    loop,
    repo,
    itemKey: itemKey(repo, number),
    number,
    contentHash: hash,
    generation: 0,
    submission: { prompt: `Work on #${number}`, agent: "demo", approvalRequired, maxCycles: null },
  };
}

/** The simulator's check runs of a name on a commit, newest first. */
export function checkRunsOn(sim: Simulator, sha: string, name: string) {
  return [...sim.state.checkRuns.values()].filter((r) => r.headSha === sha && r.name === name).sort((a, b) => b.id - a.id);
}

/** The latest check run of a name on a commit: what GitHub shows on the pull request. */
export function latestCheckRun(sim: Simulator, sha: string, name: string) {
  const run = checkRunsOn(sim, sha, name)[0];
  if (!run) throw new Error(`no check run "${name}" on ${sha}`);
  return run;
}

/** The comments on an Item in the simulator. */
export function commentsOn(sim: Simulator, repo: string, number: number) {
  return sim.state.commentsOf(sim.state.repoByFullName(repo), number);
}

/** The last `check_run` webhook the simulator sent (or logged) with this action. */
export function lastCheckRunDelivery(sim: Simulator, action: string) {
  const deliveries = sim.deliveries({ event: "check_run", action });
  const last = deliveries[deliveries.length - 1];
  if (!last) throw new Error(`no check_run.${action} delivery`);
  return last.payload;
}
