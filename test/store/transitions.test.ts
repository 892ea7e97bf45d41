import { afterAll, describe, expect, it } from "vitest";
import { infraFailure, agentFailure } from "../../lib/engine/failure";
import { approve, parkForApproval } from "../../lib/store/runs/approvals";
import { admitAttempt } from "../../lib/metering/admission";
import { expireAttempt, finishAttempt, startAttempt, type AttemptRef } from "../../lib/store/runs/attempts";
import { readRunSnapshot } from "../../lib/store/runs/start-basis";
import { beginAttempt } from "../support/attempts";
import { cancelRun, editAndRetryRun, resolveFailure, retryRun } from "../../lib/store/runs/operator-actions";
import { recordAndClaim } from "../../lib/store/runs/claim";
import { withStoreRetry } from "../../lib/store/kernel/transaction";
import { ConflictError } from "../../lib/errors";
import { testDb, uniqueRepo } from "../support/db";
import { itemEvent } from "../support/events";

const db = testDb();
afterAll(() => db.close());
const usage = { durationMs: 5, tokensIn: 10, tokensOut: 20, costUsd: 0.01, costEstimated: false };

async function openRun(approvalRequired = false): Promise<string> {
  const r = await recordAndClaim(db, itemEvent(uniqueRepo(), 1, "h", { approvalRequired }));
  if (r.tag !== "Claimed") throw new Error("expected a Run");
  return r.runId;
}

async function start(runId: string, token = "tok"): Promise<AttemptRef> {
  const b = await beginAttempt(db, runId, { token, workerId: "w" });
  if (b.tag !== "Started") throw new Error("expected an Attempt");
  return b.attempt;
}

const state = async (id: string) => (await db.pool.query(`SELECT state FROM runs WHERE id = $1`, [id])).rows[0].state;

describe("approval", () => {
  it("parks, approves once, and refuses a second approval with a 409", async () => {
    const id = await openRun(true);
    await parkForApproval(db, id);
    expect(await state(id)).toBe("Waiting");
    await expect(beginAttempt(db, id, { token: "t", workerId: "w" })).rejects.toMatchObject({ token: "run_state_conflict" });
    await approve(db, id, "octo-writer");
    expect(await state(id)).toBe("Queued");
    await expect(approve(db, id, "octo-writer")).rejects.toBeInstanceOf(ConflictError);
    const { rows } = await db.pool.query(`SELECT approved_by FROM approvals WHERE run_id = $1`, [id]);
    expect(rows).toEqual([{ approved_by: "octo-writer" }]);
    const audit = await db.pool.query(`SELECT actor, action FROM audit_log WHERE run_id = $1`, [id]);
    expect(audit.rows).toEqual([{ actor: "octo-writer", action: "approve" }]);
  });
});

describe("attempts", () => {
  it("succeeds and records usage", async () => {
    const id = await openRun();
    const a = await start(id);
    expect(a.id).toBe(`${id}/agent/1`);
    const r = await finishAttempt(db, a, { tag: "Succeeded", summary: "done", usage, branch: "atelier/x/1", pullRequestNumber: 9, headSha: "abc" });
    expect(r.run).toMatchObject({ state: "Succeeded", branch: "atelier/x/1", pull_request_number: 9 });
  });

  it("retries an InfraFailure automatically up to Attempt 3, then fails", async () => {
    const id = await openRun();
    for (let n = 1; n <= 3; n++) {
      const a = await start(id, `t${n}`);
      expect(a.number).toBe(n);
      const r = await finishAttempt(db, a, { tag: "Failed", failure: infraFailure("transport", "502"), usage });
      expect(r.decision.tag).toBe(n < 3 ? "RetryAttempt" : "FailRun");
      expect(r.run.state).toBe(n < 3 ? "Running" : "Failed");
    }
  });

  it("waits for the operator after an AgentFailure; retry starts Attempt n+1", async () => {
    const id = await openRun();
    const a = await start(id);
    const r = await finishAttempt(db, a, { tag: "Failed", failure: agentFailure("agent_exit", "exit 1"), usage });
    expect(r.run.state).toBe("Failed");
    // the Run keeps its latest failed Attempt, which Needs you compares with the resolved one
    const failure = async () => (await db.pool.query(`SELECT failed_attempt_id, resolved_failure_attempt_id FROM runs WHERE id = $1`, [id])).rows[0];
    expect(await failure()).toEqual({ failed_attempt_id: a.id, resolved_failure_attempt_id: null });
    await resolveFailure(db, id, "octo");
    expect(await failure()).toEqual({ failed_attempt_id: a.id, resolved_failure_attempt_id: a.id });
    await retryRun(db, id, "octo");
    expect((await start(id, "t2")).number).toBe(2);
  });

  it("edit-and-retry replaces the task text and agent", async () => {
    const id = await openRun();
    const a = await start(id);
    await finishAttempt(db, a, { tag: "Failed", failure: agentFailure("agent_exit", "exit 1"), usage });
    await expect(editAndRetryRun(db, id, "octo", {})).rejects.toMatchObject({ token: "amendment_empty", status: 400 });
    const run = await editAndRetryRun(db, id, "octo", { prompt: "Try harder", agent: "codex" });
    expect(run).toMatchObject({ state: "Running", prompt: "Try harder", agent: "codex" });
  });

  it("an operator's retry resumes the session the last Attempt reported; edit-and-retry only while the agent stays", async () => {
    const id = await openRun();
    const reported = { ...usage, sessionId: "session-1" };
    await finishAttempt(db, await start(id), { tag: "Failed", failure: agentFailure("agent_exit", "exit 1"), usage: reported });
    expect(await retryRun(db, id, "octo")).toMatchObject({ resume_session: "session-1" });
    // Attempt 2 reports no session (a crash before it said one): the next retry starts afresh
    await finishAttempt(db, await start(id, "t2"), { tag: "Failed", failure: agentFailure("agent_exit", "exit 1"), usage });
    expect(await retryRun(db, id, "octo")).toMatchObject({ resume_session: null });
    await finishAttempt(db, await start(id, "t3"), { tag: "Failed", failure: agentFailure("agent_exit", "exit 1"), usage: { ...usage, sessionId: "session-3" } });
    expect(await editAndRetryRun(db, id, "octo", { prompt: "Now also add tests" })).toMatchObject({ resume_session: "session-3" });
    const other = (await db.pool.query(`SELECT agent FROM runs WHERE id = $1`, [id])).rows[0].agent === "codex" ? "claude" : "codex";
    await finishAttempt(db, await start(id, "t4"), { tag: "Failed", failure: agentFailure("agent_exit", "exit 1"), usage: { ...usage, sessionId: "session-4" } });
    // another agent cannot continue this one's conversation
    expect(await editAndRetryRun(db, id, "octo", { agent: other })).toMatchObject({ resume_session: null, agent: other });
  });

  it("a Run keeps the model its Loop picked, whichever way it opened; edit-and-retry changes it only when it names one", async () => {
    const repo = uniqueRepo();
    const withModel = (hash: string, model: string) => {
      const e = itemEvent(repo, 1, hash);
      return { ...e, submission: { ...e.submission, model } };
    };
    const first = await recordAndClaim(db, withModel("h1", "claude-opus-4-1"));
    if (first.tag !== "Claimed") throw new Error("expected a Run");
    // a newer change of the Item supersedes the unstarted Run: the other statement that opens one
    const second = await recordAndClaim(db, withModel("h2", "claude-haiku-4-5"));
    if (second.tag !== "Claimed") throw new Error("expected a Run");
    const model = async (id: string) => (await db.pool.query(`SELECT model FROM runs WHERE id = $1`, [id])).rows[0].model;
    expect(await model(first.runId)).toBe("claude-opus-4-1");
    expect(await model(second.runId)).toBe("claude-haiku-4-5");
    expect(await model(await openRun())).toBeNull();

    const a = await start(second.runId);
    expect(a.number).toBe(1);
    await finishAttempt(db, a, { tag: "Failed", failure: agentFailure("agent_exit", "exit 1"), usage });
    expect(await editAndRetryRun(db, second.runId, "octo", { prompt: "Again" })).toMatchObject({ model: "claude-haiku-4-5" });
    await finishAttempt(db, await start(second.runId, "t2"), { tag: "Failed", failure: agentFailure("agent_exit", "exit 1"), usage });
    // the store changes the model only when the amendment names one (the operator checked the agent offers it)
    expect(await editAndRetryRun(db, second.runId, "octo", { agent: "codex" })).toMatchObject({ model: "claude-haiku-4-5", agent: "codex" });
    await finishAttempt(db, await start(second.runId, "t3"), { tag: "Failed", failure: agentFailure("agent_exit", "exit 1"), usage });
    expect(await editAndRetryRun(db, second.runId, "octo", { model: "gpt-5.5" })).toMatchObject({ model: "gpt-5.5", agent: "codex" });
    await finishAttempt(db, await start(second.runId, "t4"), { tag: "Failed", failure: agentFailure("agent_exit", "exit 1"), usage });
    expect(await editAndRetryRun(db, second.runId, "octo", { model: null })).toMatchObject({ model: null });
  });

  it("fences a late write from a worker that lost its lease", async () => {
    const id = await openRun();
    const dead = await start(id, "dead-worker");
    // the sweep finds the lease expired: InfraFailure, and the next Attempt runs
    const expired = await expireAttempt(db, dead.id);
    expect(expired?.decision).toEqual({ tag: "RetryAttempt", nextNumber: 2 });
    const next = await start(id, "live-worker");
    await expect(finishAttempt(db, dead, { tag: "Succeeded", summary: null, usage, branch: null, pullRequestNumber: null, headSha: null })).rejects.toMatchObject({
      token: "lease_lost",
    });
    await finishAttempt(db, next, { tag: "Succeeded", summary: null, usage, branch: null, pullRequestNumber: null, headSha: null });
    expect(await state(id)).toBe("Succeeded");
    const { rows } = await db.pool.query(`SELECT number, state, failure_kind, failure_category FROM attempts WHERE run_id = $1 ORDER BY number`, [id]);
    expect(rows).toEqual([
      { number: 1, state: "Failed", failure_kind: "InfraFailure", failure_category: "lease_lost" },
      { number: 2, state: "Succeeded", failure_kind: null, failure_category: null },
    ]);
  });

  it("starts nothing while an Attempt is open; the sweep closing a third one no longer live fails the Run", async () => {
    const id = await openRun();
    for (let n = 1; n <= 2; n++) {
      await finishAttempt(db, await start(id, `t${n}`), { tag: "Failed", failure: infraFailure("transport", "x"), usage });
    }
    const third = await start(id, "t3");
    await expect(beginAttempt(db, id, { token: "t4", workerId: "w" })).rejects.toMatchObject({ token: "attempt_open" });
    expect(await expireAttempt(db, third.id)).toMatchObject({ decision: { tag: "FailRun" }, run: { state: "Failed" } });
    const { rows } = await db.pool.query(`SELECT failed_attempt_id FROM runs WHERE id = $1`, [id]);
    expect(rows[0].failed_attempt_id).toBe(third.id);
    await expect(beginAttempt(db, id, { token: "t4", workerId: "w" })).rejects.toMatchObject({ token: "run_state_conflict" });
  });

  it("stores the last transcript lines with the outcome, and with a refused one too", async () => {
    const id = await openRun();
    const a = await start(id);
    const line = (text: string) => ({ stream: "stdout", text, at: new Date() });
    await finishAttempt(db, a, { tag: "Succeeded", summary: null, usage, branch: null, pullRequestNumber: null, headSha: null }, [line("one"), line("two")]);
    const late = finishAttempt(db, a, { tag: "Failed", failure: agentFailure("agent_exit", "exit 1"), usage }, [line("late")]);
    await expect(late).rejects.toMatchObject({ token: "lease_lost" });
    const { rows } = await db.pool.query(`SELECT text FROM transcript_entries WHERE attempt_id = $1 ORDER BY id`, [a.id]);
    expect(rows.map((r) => r.text)).toEqual(["one", "two", "late"]);
    expect(await state(id)).toBe("Succeeded");
  });

  it("starts an Attempt only on the version of the Run it was decided on", async () => {
    const id = await openRun();
    const seen = (await readRunSnapshot(db, id))!;
    await cancelRun(db, id, "octo");
    const begun = await startAttempt(db, seen, { token: "late", workerId: "w" }, admitAttempt);
    expect(begun).toMatchObject({ tag: "Changed", snapshot: { run: { state: "Canceled" } } });
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM attempts WHERE run_id = $1`, [id]);
    expect(rows[0].n).toBe(0);
  });
});

describe("cancel", () => {
  it("cancels a running Run and closes its Attempt as Canceled; the late outcome is refused", async () => {
    const id = await openRun();
    const a = await start(id);
    const { canceledAttempt } = await cancelRun(db, id, "octo");
    expect(canceledAttempt).toBe(a.id);
    await expect(finishAttempt(db, a, { tag: "Succeeded", summary: null, usage, branch: null, pullRequestNumber: null, headSha: null })).rejects.toMatchObject({
      status: 409,
    });
    await expect(cancelRun(db, id, "octo")).rejects.toMatchObject({ token: "run_state_conflict", status: 409 });
  });

  it("refuses retry while another Run of the Loop is open on the Item", async () => {
    const repo = uniqueRepo();
    const r1 = await recordAndClaim(db, itemEvent(repo, 1, "h1"));
    if (r1.tag !== "Claimed") throw new Error("expected a Run");
    await finishAttempt(db, await start(r1.runId), { tag: "Failed", failure: agentFailure("agent_exit", "x"), usage });
    await recordAndClaim(db, itemEvent(repo, 1, "h2"));
    await expect(retryRun(db, r1.runId, "octo")).rejects.toMatchObject({ token: "open_run_exists", status: 409 });
  });
});

describe("transient store errors", () => {
  it("are retried 4 times with exponential backoff, other errors are not", async () => {
    let calls = 0;
    const t0 = Date.now();
    await expect(
      withStoreRetry(async () => {
        calls++;
        throw Object.assign(new Error("deadlock"), { code: "40P01" });
      }, 4, 5),
    ).rejects.toThrow("deadlock");
    expect(calls).toBe(4);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(5 + 10 + 20);
    calls = 0;
    await expect(withStoreRetry(async () => { calls++; throw new Error("bug"); })).rejects.toThrow("bug");
    expect(calls).toBe(1);
  });
});
