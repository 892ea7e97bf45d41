import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMirrorWorker, type MirrorWorker } from "../../jobs/processors/mirror";
import { bullConnection } from "../../jobs/queues";
import { checkRunName } from "../../lib/mirror/check-run-view";
import { runsBehindTheirMirror } from "../../lib/store/github/run-mirrors";
import { syncRunMirror } from "../../lib/mirror/sync-run";
import { approve, parkForApproval } from "../../lib/store/runs/approvals";
import { recordAndClaim } from "../../lib/store/runs/claim";
import { testDb } from "../support/db";
import { checkRunsOn, commentsOn, latestCheckRun, loopEvent, openIssue, openPullRequest, startMirrorWorld, type MirrorWorld } from "./support";

const db = testDb();
const prefix = `mirror-test-${randomBytes(4).toString("hex")}`;
const LOOP = "review";
const NAME = checkRunName(LOOP);
let world: MirrorWorld;
const workers: MirrorWorker[] = [];
const connection = bullConnection();

beforeAll(async () => {
  world = await startMirrorWorld(db);
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.close()));
  await world?.close();
  await db.close();
});

async function startWorker(): Promise<MirrorWorker> {
  const worker = await createMirrorWorker(connection, world.deps, { prefix, sweepEveryMs: 0 });
  workers.push(worker);
  return worker;
}

async function stopWorker(worker: MirrorWorker): Promise<void> {
  await worker.close();
  workers.splice(workers.indexOf(worker), 1);
}

async function claim(number: number, approval = true): Promise<string> {
  const result = await recordAndClaim(db, loopEvent(world.repo, number, "h1", LOOP, approval));
  if (result.tag !== "Claimed") throw new Error("expected a Run");
  return result.runId;
}

const poll = { timeout: 15_000, interval: 50 };

describe("the mirror worker follows Run changes on its own queue", () => {
  it("syncs a Run when Postgres notifies its change, and keeps one comment across a worker restart", async () => {
    const worker = await startWorker();
    const issue = await openIssue(db, world, "Restart me");
    const runId = await claim(issue);
    await expect.poll(() => commentsOn(world.sim, world.repo, issue).map((c) => c.body.includes("**Opened**")), poll).toEqual([true]);
    const id = commentsOn(world.sim, world.repo, issue)[0]!.id;

    await parkForApproval(db, runId);
    await expect.poll(() => commentsOn(world.sim, world.repo, issue)[0]!.body, poll).toContain("**Waiting for approval**");

    // the worker dies; its last sync had created the comment but never stored the id
    await stopWorker(worker);
    await db.pool.query(`UPDATE run_mirrors SET comment_id = NULL WHERE run_id = $1`, [runId]);
    await approve(db, runId, "octo-writer"); // nobody listens: this notification is lost
    expect(await runsBehindTheirMirror(db, 10_000)).toContain(runId);

    await startWorker(); // its first sweep finds the Run the lost notification left behind
    await expect.poll(() => commentsOn(world.sim, world.repo, issue).map((c) => [c.id, c.body.includes("**Queued**")]), poll).toEqual([[id, true]]);
    await expect.poll(async () => (await runsBehindTheirMirror(db, 10_000)).includes(runId), poll).toBe(false);
  });

  it("sweeps the newest changes first: a backlog behind its mirror never holds back the Run changed last", async () => {
    // no worker of this file may catch these Runs up while the test reads what is behind
    await Promise.all([...workers].map(stopWorker));
    const older = await claim(await openIssue(db, world, "Changed long ago"));
    const newest = await claim(await openIssue(db, world, "Changed last"));
    // both later than any Run another file changes meanwhile (files run side by side, and may
    // leave thousands of Runs behind their mirror): the order between the two is the sweep's
    await db.pool.query(`UPDATE runs SET updated_at = now() + interval '1 minute' WHERE id = $1`, [older]);
    await db.pool.query(`UPDATE runs SET updated_at = now() + interval '2 minutes' WHERE id = $1`, [newest]);
    expect(await runsBehindTheirMirror(db, 1)).toEqual([newest]);
    expect(await runsBehindTheirMirror(db, 2)).toEqual([newest, older]);
  });

  it("retries GitHub's 5xx and secondary rate limits with backoff until the check run shows", async () => {
    await startWorker();
    const pr = await openPullRequest(db, world, "feature-flaky");
    world.sim.failNext({ method: "POST", path: "/repos/{owner}/{repo}/check-runs", status: 502, count: 1 });
    world.sim.failNext({ method: "GET", path: "/repos/{owner}/{repo}/commits/{ref}/check-runs", status: "secondary-rate-limit", retryAfter: 1 });
    const before = world.sim.counters.injectedFailures;
    const runId = await claim(pr.number, false);
    await expect.poll(() => checkRunsOn(world.sim, pr.sha, NAME).length, poll).toBe(1);
    expect(latestCheckRun(world.sim, pr.sha, NAME)).toMatchObject({ externalId: runId, status: "queued" });
    expect(world.sim.counters.injectedFailures - before).toBe(2);
    // the mirror caught up: one more sync has nothing to write
    expect(await syncRunMirror(world.deps, runId)).toEqual({ tag: "Synced", check: "unchanged", comment: "unchanged" });
  });
});
