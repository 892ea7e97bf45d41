import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFailure } from "../../lib/engine/failure";
import { checkRunName } from "../../lib/mirror/check-run-view";
import { syncRunMirror } from "../../lib/mirror/sync-run";
import { approve, parkForApproval } from "../../lib/store/runs/approvals";
import { finishAttempt, type AttemptRef } from "../../lib/store/runs/attempts";
import { beginAttempt } from "../support/attempts";
import { retryRun } from "../../lib/store/runs/operator-actions";
import { recordAndClaim } from "../../lib/store/runs/claim";
import { testDb } from "../support/db";
import { checkRunsOn, latestCheckRun, loopEvent, openPullRequest, PUBLIC_URL, startMirrorWorld, type MirrorWorld } from "./support";

const db = testDb();
let world: MirrorWorld;
const LOOP = "review";
const NAME = checkRunName(LOOP);
const usage = { durationMs: 65_000, tokensIn: null, tokensOut: null, costUsd: 0.42, costEstimated: false };

beforeAll(async () => {
  world = await startMirrorWorld(db);
});
afterAll(async () => {
  await world?.close();
  await db.close();
});

async function claim(number: number, hash: string): Promise<string> {
  const result = await recordAndClaim(db, loopEvent(world.repo, number, hash, LOOP, true));
  if (result.tag !== "Claimed") throw new Error(`expected a Run, got ${result.tag}`);
  return result.runId;
}

async function begin(runId: string): Promise<AttemptRef> {
  const begun = await beginAttempt(db, runId, { token: `lease-${Math.random()}`, workerId: "test" });
  if (begun.tag !== "Started") throw new Error("expected an Attempt");
  return begun.attempt;
}

describe("a Run on a pull request shows as the check run `atelier / <loop>` on its head", () => {
  it("passes through every state: queued, approval asked, queued, running, failed, running again, succeeded", async () => {
    const pr = await openPullRequest(db, world, "feature-states");
    const runId = await claim(pr.number, "h1");
    const runPage = `${PUBLIC_URL}/runs/${runId}`;

    await syncRunMirror(world.deps, runId);
    let check = latestCheckRun(world.sim, pr.sha, NAME);
    expect(check).toMatchObject({ status: "queued", conclusion: null, detailsUrl: runPage, externalId: runId });

    await parkForApproval(db, runId);
    await syncRunMirror(world.deps, runId);
    check = latestCheckRun(world.sim, pr.sha, NAME);
    expect(check).toMatchObject({ status: "completed", conclusion: "action_required", detailsUrl: runPage });
    expect(check.actions.map((a) => a.identifier)).toEqual(["approve", "cancel"]);
    expect(check.output.title).toBe("Waiting for approval");

    await approve(db, runId, "octo-writer");
    await syncRunMirror(world.deps, runId);
    check = latestCheckRun(world.sim, pr.sha, NAME);
    // GitHub keeps a completed check run's conclusion: reopening takes a new check run
    expect(check).toMatchObject({ status: "queued", conclusion: null });
    expect(checkRunsOn(world.sim, pr.sha, NAME)).toHaveLength(2);

    const first = await begin(runId);
    await syncRunMirror(world.deps, runId);
    check = latestCheckRun(world.sim, pr.sha, NAME);
    expect(check).toMatchObject({ status: "in_progress", conclusion: null, detailsUrl: runPage });
    expect(check.output.title).toBe("Attempt 1");
    expect(check.output.summary).toContain(runPage);

    await finishAttempt(db, first, { tag: "Failed", failure: agentFailure("agent_exit", "The agent exited with code 2."), usage });
    await syncRunMirror(world.deps, runId);
    check = latestCheckRun(world.sim, pr.sha, NAME);
    expect(check).toMatchObject({ status: "completed", conclusion: "failure" });
    expect(check.output.title).toBe("Failed: AgentFailure (agent_exit)");
    // the agent's own words stay on the Run page: GitHub gets the category in Atelier's words
    expect(check.output.summary).toContain("The agent exited with an error (not retryable: Atelier does not retry it by itself); the details are on the Run page.");
    expect(check.output.summary).not.toContain("The agent exited with code 2.");
    expect(check.actions.map((a) => a.identifier)).toEqual(["retry"]);

    await retryRun(db, runId, "octo-writer");
    await syncRunMirror(world.deps, runId);
    check = latestCheckRun(world.sim, pr.sha, NAME);
    expect(check).toMatchObject({ status: "in_progress", conclusion: null });
    expect(check.output.title).toBe("Attempt 2");

    const second = await begin(runId);
    expect(second.number).toBe(2);
    await finishAttempt(db, second, { tag: "Succeeded", summary: "done", usage, branch: null, pullRequestNumber: null, headSha: null });
    await syncRunMirror(world.deps, runId);
    check = latestCheckRun(world.sim, pr.sha, NAME);
    expect(check).toMatchObject({ status: "completed", conclusion: "success", actions: [] });
    expect(check.output.summary).toContain("cost $0.84");
    // approve, retry: two reopenings, so three check runs in all on the head
    expect(checkRunsOn(world.sim, pr.sha, NAME)).toHaveLength(3);
  });

  it("marks a Run superseded by newer content as skipped", async () => {
    const pr = await openPullRequest(db, world, "feature-superseded");
    const older = await claim(pr.number, "h1");
    await syncRunMirror(world.deps, older);
    expect(latestCheckRun(world.sim, pr.sha, NAME).status).toBe("queued");

    const newer = await claim(pr.number, "h2");
    await syncRunMirror(world.deps, older);
    const skipped = checkRunsOn(world.sim, pr.sha, NAME).find((r) => r.externalId === older)!;
    expect(skipped).toMatchObject({ status: "completed", conclusion: "skipped" });
    expect(skipped.output.title).toBe("Superseded");

    await syncRunMirror(world.deps, newer);
    expect(latestCheckRun(world.sim, pr.sha, NAME)).toMatchObject({ externalId: newer, status: "queued" });
  });

  it("makes no API call when the Run's view did not change", async () => {
    const pr = await openPullRequest(db, world, "feature-coalesce");
    const runId = await claim(pr.number, "h1");
    expect(await syncRunMirror(world.deps, runId)).toMatchObject({ check: "written" });
    world.sim.resetCounters();
    expect(await syncRunMirror(world.deps, runId)).toEqual({ tag: "Synced", check: "unchanged", comment: "unchanged" });
    expect(world.sim.counters.rest).toBe(0);
  });

  it("follows the Run's own commits: a new head gets the check, the old one is closed", async () => {
    const pr = await openPullRequest(db, world, "feature-moves");
    const runId = await claim(pr.number, "h1");
    await approveAndBegin(runId);
    await syncRunMirror(world.deps, runId);
    expect(latestCheckRun(world.sim, pr.sha, NAME).status).toBe("in_progress");

    const pushed = await world.sim.pushCommit({ repo: world.repo, branch: "feature-moves", login: "octo-writer" });
    await db.pool.query(`UPDATE runs SET pull_request_number = $2, head_sha = $3, updated_at = now() WHERE id = $1`, [
      runId,
      pr.number,
      pushed.after,
    ]);
    await syncRunMirror(world.deps, runId);
    expect(latestCheckRun(world.sim, pushed.after, NAME)).toMatchObject({ status: "in_progress", externalId: runId });
    expect(latestCheckRun(world.sim, pr.sha, NAME)).toMatchObject({ status: "completed", conclusion: "neutral" });
    const { rows } = await db.pool.query(`SELECT check_sha FROM run_mirrors WHERE run_id = $1`, [runId]);
    expect(rows[0].check_sha).toBe(pushed.after);
  });
});

async function approveAndBegin(runId: string): Promise<AttemptRef> {
  await parkForApproval(db, runId);
  await approve(db, runId, "octo-writer");
  return begin(runId);
}
