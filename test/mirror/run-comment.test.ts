import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadRunDetail } from "../../lib/dashboard/run-detail";
import { checkRunName } from "../../lib/mirror/check-run-view";
import { runCommentMarker } from "../../lib/mirror/run-comment-view";
import { syncRunMirror } from "../../lib/mirror/sync-run";
import { approve, parkForApproval } from "../../lib/store/runs/approvals";
import { finishAttempt, recordPullRequest } from "../../lib/store/runs/attempts";
import { beginAttempt } from "../support/attempts";
import { recordAndClaim } from "../../lib/store/runs/claim";
import { testDb } from "../support/db";
import { commentsOn, latestCheckRun, loopEvent, openIssue, startMirrorWorld, type MirrorWorld } from "./support";

const db = testDb();
let world: MirrorWorld;

beforeAll(async () => {
  world = await startMirrorWorld(db);
});
afterAll(async () => {
  await world?.close();
  await db.close();
});

async function claim(number: number, loop: string, approval = true): Promise<string> {
  const result = await recordAndClaim(db, loopEvent(world.repo, number, "h1", loop, approval));
  if (result.tag !== "Claimed") throw new Error("expected a Run");
  return result.runId;
}

describe("a Run keeps one comment on its Item, edited in place", () => {
  it("edits the same comment as the Run moves, also after its id was lost, and ends with duration, cost and the pull request", async () => {
    const issue = await openIssue(db, world, "Add a dark mode");
    const runId = await claim(issue, "start-dev");

    await syncRunMirror(world.deps, runId);
    let comments = commentsOn(world.sim, world.repo, issue);
    expect(comments).toHaveLength(1);
    const id = comments[0]!.id;
    expect(comments[0]!.body).toContain(runCommentMarker(runId));
    expect(comments[0]!.body).toContain("**Opened**");

    await parkForApproval(db, runId);
    await syncRunMirror(world.deps, runId);
    comments = commentsOn(world.sim, world.repo, issue);
    expect(comments.map((c) => c.id)).toEqual([id]);
    expect(comments[0]!.body).toContain("**Waiting for approval**");

    // a worker died between creating the comment and storing its id
    await db.pool.query(`UPDATE run_mirrors SET comment_id = NULL WHERE run_id = $1`, [runId]);
    await approve(db, runId, "octo-writer");
    const begun = await beginAttempt(db, runId, { token: "lease", workerId: "test" });
    if (begun.tag !== "Started") throw new Error("expected an Attempt");
    await syncRunMirror(world.deps, runId);
    comments = commentsOn(world.sim, world.repo, issue);
    expect(comments.map((c) => c.id)).toEqual([id]);
    expect(comments[0]!.body).toContain("**Running** — Attempt 1.");
    const { rows } = await db.pool.query(`SELECT comment_id FROM run_mirrors WHERE run_id = $1`, [runId]);
    expect(rows[0].comment_id).toBe(id);

    // the Run opened a pull request: its check goes on that pull request's head
    const pr = await world.sim.openPullRequest({ repo: world.repo, head: "atelier/dark-mode", title: "Dark mode", login: "octo-writer" });
    await recordPullRequest(db, runId, { branch: "atelier/dark-mode", number: pr.number, headSha: pr.head.sha });
    await syncRunMirror(world.deps, runId);
    expect(latestCheckRun(world.sim, pr.head.sha, checkRunName("start-dev"))).toMatchObject({ status: "in_progress", externalId: runId });

    const usage = { durationMs: 192_000, tokensIn: 10, tokensOut: 20, costUsd: 0.42, costEstimated: false };
    await finishAttempt(db, begun.attempt, {
      tag: "Succeeded",
      summary: "done",
      usage,
      branch: "atelier/dark-mode",
      pullRequestNumber: pr.number,
      headSha: pr.head.sha,
    });
    await syncRunMirror(world.deps, runId);
    comments = commentsOn(world.sim, world.repo, issue);
    expect(comments.map((c) => c.id)).toEqual([id]);
    expect(comments[0]!.body).toContain(`**Succeeded** — duration 3m 12s · cost $0.42 · pull request #${pr.number}.`);
    expect(latestCheckRun(world.sim, pr.head.sha, checkRunName("start-dev"))).toMatchObject({ conclusion: "success" });
  });

  it("shows what the agent reported of a finished Attempt: model, turns, duration and exact cost, kept on the Attempt", async () => {
    const issue = await openIssue(db, world, "Add a README badge");
    const runId = await claim(issue, "start-dev", false);
    const begun = await beginAttempt(db, runId, { token: "lease", workerId: "test" });
    if (begun.tag !== "Started") throw new Error("expected an Attempt");
    const usage = {
      durationMs: 12_000,
      tokensIn: 1_200,
      tokensOut: 300,
      costUsd: 0.4012,
      costEstimated: false,
      costExact: true,
      model: "claude-sonnet-4-5",
      turns: 3,
      sessionId: "5f0c7a4e-session",
    };
    await finishAttempt(db, begun.attempt, { tag: "Succeeded", summary: "done", usage, branch: null, pullRequestNumber: null, headSha: null });
    const { rows } = await db.pool.query(`SELECT session_id, model, turns, cost_exact FROM attempts WHERE id = $1`, [begun.attempt.id]);
    expect(rows[0]).toEqual({ session_id: "5f0c7a4e-session", model: "claude-sonnet-4-5", turns: 3, cost_exact: true });
    await syncRunMirror(world.deps, runId);
    const comments = commentsOn(world.sim, world.repo, issue);
    expect(comments[0]!.body).toContain("**Succeeded** — model `claude-sonnet-4-5` · 3 turns · duration 12s · cost $0.40 (exact).");
    // the Run page shows them too
    const detail = await loadRunDetail(db, runId);
    expect(detail.attempts[0]).toMatchObject({ model: "claude-sonnet-4-5", turns: 3, costExact: true, costUsd: "0.401200", sessionId: "5f0c7a4e-session" });
  });

  it("finds the comment a crashed sync created before it could store the id", async () => {
    const issue = await openIssue(db, world, "Fix the login typo");
    const runId = await claim(issue, "start-dev");
    // the create call went through; the process died before the id was stored
    const body = `${runCommentMarker(runId)}\nAtelier · half-written`;
    const orphan = world.sim.comment({ repo: world.repo, number: issue, body, login: "octo-admin" });
    await syncRunMirror(world.deps, runId);
    const comments = commentsOn(world.sim, world.repo, issue);
    expect(comments.map((c) => c.id)).toEqual([orphan.id]);
    expect(comments[0]!.body).toContain("**Opened**");
  });

  it("does not comment when the Loop says feedback: { comment: false }", async () => {
    await db.pool.query(`UPDATE repositories SET config = $2 WHERE full_name = $1`, [
      world.repo,
      JSON.stringify({ loops: [{ name: "quiet", feedback: { comment: false } }] }),
    ]);
    const issue = await openIssue(db, world, "Quiet please");
    const runId = await claim(issue, "quiet", false);
    expect(await syncRunMirror(world.deps, runId)).toEqual({ tag: "Synced", check: "none", comment: "none" });
    expect(commentsOn(world.sim, world.repo, issue)).toHaveLength(0);
  });
});
