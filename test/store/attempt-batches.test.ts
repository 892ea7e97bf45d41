import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRANSITIONS } from "../../lib/engine/run-state";
import { finishAttempt, type AttemptRef } from "../../lib/store/attempts";
import { writeOutcomes, type OutcomeCall } from "../../lib/store/attempt-outcomes";
import { writeStarts, type StartCall } from "../../lib/store/attempt-starts";
import type { Db } from "../../lib/store/db";
import { recordAndClaim } from "../../lib/store/record-and-claim";
import { readRunSnapshot } from "../../lib/store/run-snapshot";
import { beginAttempt } from "../support/attempts";
import { testDb, uniqueRepo } from "../support/db";
import { itemEvent } from "../support/events";
import { emptyGenericDb, wholeScans } from "../support/generic-plans";

// Group commit (ADR 0030): one statement records the outcomes, or starts the Attempts, of
// several Runs. Each call keeps its own guard: a call fenced off must not be carried through by
// the others sharing its statement.

let db: Db;
beforeAll(() => {
  db = testDb();
});
afterAll(async () => {
  await db.close();
});

async function openRun(on: Db, repo: string, number: number): Promise<string> {
  const claim = await recordAndClaim(on, itemEvent(repo, number, "h", { maxCycles: null }));
  if (claim.tag !== "Claimed") throw new Error(claim.tag);
  return claim.runId;
}

async function runningAttempt(on: Db, repo: string, number: number): Promise<AttemptRef> {
  const begun = await beginAttempt(on, await openRun(on, repo, number), { token: `lease-${number}`, workerId: "w" });
  if (begun.tag !== "Started") throw new Error(begun.tag);
  return begun.attempt;
}

/** An outcome call that succeeds the Attempt `ref` under `leaseToken` after `minutes`, costing `costUsd`, with one line of output. */
function succeeded(ref: AttemptRef, leaseToken: string, minutes: number, costUsd: number): OutcomeCall {
  return {
    attemptId: ref.id,
    runId: ref.runId,
    leaseToken,
    result: "Succeeded",
    from: TRANSITIONS.succeed.from,
    to: TRANSITIONS.succeed.to,
    ends: true,
    failure: null,
    summary: "done",
    branch: null,
    pullRequestNumber: null,
    headSha: null,
    usage: { durationMs: minutes * 60_000, tokensIn: 1, tokensOut: 2, costUsd, costEstimated: false, costExact: true, model: null, turns: 1, sessionId: null },
    tail: [{ stream: "stdout", text: `last line of ${ref.id}`, at: new Date() }],
  };
}

async function counter(repo: string): Promise<{ cost: number; minutes: number } | undefined> {
  const { rows } = await db.pool.query<{ cost: number; minutes: number }>(
    `SELECT cost_usd::float8 AS cost, minutes::float8 AS minutes FROM usage_counters WHERE scope = $1`,
    [`repo:${repo.toLowerCase()}`],
  );
  return rows[0];
}

const attemptState = async (id: string) => (await db.pool.query(`SELECT state FROM attempts WHERE id = $1`, [id])).rows[0]?.state;
const runState = async (id: string) => (await db.pool.query(`SELECT state FROM runs WHERE id = $1`, [id])).rows[0]?.state;

describe("outcomes in one statement", () => {
  it("write exactly the one whose lease holds: an outcome fenced off by a lost lease is not carried through by the other", async () => {
    const repo = uniqueRepo("batch");
    const stolen = await runningAttempt(db, repo, 1);
    const honest = await runningAttempt(db, repo, 2);
    const answers = await writeOutcomes(db.batch, [succeeded(stolen, "not-the-lease", 3, 5), succeeded(honest, honest.leaseToken, 2, 1.25)], false);
    expect(answers[0]).toMatchObject({ current_state: "Running" });
    expect(answers[0]!.id).toBeNull();
    expect(answers[1]).toMatchObject({ id: honest.runId, state: "Succeeded", current_state: "Running" });
    expect([await attemptState(stolen.id), await runState(stolen.runId)]).toEqual(["Running", "Running"]);
    expect([await attemptState(honest.id), await runState(honest.runId)]).toEqual(["Succeeded", "Succeeded"]);
    // only the written outcome's usage counts
    expect(await counter(repo)).toEqual({ cost: 1.25, minutes: 2 });
    // the transcript lines are stored either way, as a refused outcome's are
    const { rows } = await db.pool.query(`SELECT attempt_id FROM transcript_entries WHERE run_id = ANY($1) ORDER BY id`, [[stolen.runId, honest.runId]]);
    expect(rows.map((r) => r.attempt_id).sort()).toEqual([stolen.id, honest.id].sort());
    // and the fenced worker, recording its outcome through the store, is told it lost its lease
    await expect(
      finishAttempt(db, { ...stolen, leaseToken: "not-the-lease" }, { tag: "Succeeded", summary: null, usage: { durationMs: 0, tokensIn: null, tokensOut: null, costUsd: null, costEstimated: false }, branch: null, pullRequestNumber: null, headSha: null }),
    ).rejects.toMatchObject({ token: "lease_lost" });
  });

  it("sum the usage of one repository's Attempts onto its month counter, once per statement", async () => {
    const repo = uniqueRepo("batch");
    const refs = [await runningAttempt(db, repo, 1), await runningAttempt(db, repo.toUpperCase(), 2), await runningAttempt(db, repo, 3)];
    const answers = await writeOutcomes(db.batch, refs.map((r, i) => succeeded(r, r.leaseToken, i + 1, 0.5)), false);
    expect(answers.map((a) => a?.state)).toEqual(["Succeeded", "Succeeded", "Succeeded"]);
    expect(await counter(repo)).toEqual({ cost: 1.5, minutes: 6 });
  });

  it("answer null for a Run that does not exist, beside one that does", async () => {
    const ref = await runningAttempt(db, uniqueRepo("batch"), 1);
    const ghost = { ...ref, id: "no-such-run/agent/1", runId: "no-such-run" };
    const answers = await writeOutcomes(db.batch, [succeeded(ghost, "x", 1, 0), succeeded(ref, ref.leaseToken, 1, 0)], false);
    expect(answers[0]).toBeNull();
    expect(answers[1]).toMatchObject({ state: "Succeeded" });
  });
});

describe("starts in one statement", () => {
  it("start exactly the Run still at the version its start was decided on", async () => {
    const repo = uniqueRepo("batch");
    const moved = await openRun(db, repo, 1);
    const still = await openRun(db, repo, 2);
    const call = async (runId: string): Promise<StartCall> => {
      const snap = (await readRunSnapshot(db, runId))!;
      return { id: `${runId}/agent/1`, runId, number: 1, lease: { token: `t-${runId}`, workerId: "w" }, from: TRANSITIONS.start.from, version: snap.version };
    };
    const calls = [await call(moved), await call(still)];
    // the first Run changes after its start was decided
    await db.pool.query(`UPDATE runs SET updated_at = now() WHERE id = $1`, [moved]);
    const answers = await writeStarts(db.batch, calls);
    expect(answers[0]).toBeNull();
    expect(answers[1]).toMatchObject({ id: still, state: "Running", submitted_branch: null });
    const { rows } = await db.pool.query(`SELECT run_id FROM attempts WHERE run_id = ANY($1)`, [[moved, still]]);
    expect(rows).toEqual([{ run_id: still }]);
    expect(await runState(moved)).toBe("Pending");
  });
});

describe("a batch behind a locked Run", () => {
  it("gives up waiting, and the calls queued behind it are written while the lock is still held", async () => {
    const repo = uniqueRepo("batch");
    const locked = await runningAttempt(db, repo, 1);
    const free = await runningAttempt(db, repo, 2);
    const usage = { durationMs: 0, tokensIn: null, tokensOut: null, costUsd: null, costEstimated: false };
    const result = { tag: "Succeeded" as const, summary: null, usage, branch: null, pullRequestNumber: null, headSha: null };
    const holder = await db.pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM runs WHERE id = $1 FOR UPDATE`, [locked.runId]);
      const waiting = finishAttempt(db, locked, result);
      const behind = finishAttempt(db, free, result);
      // the second outcome is recorded while the first Run is still locked
      await expect(behind).resolves.toMatchObject({ run: { state: "Succeeded" } });
      expect(await attemptState(locked.id)).toBe("Running");
      await holder.query("COMMIT");
      await expect(waiting).resolves.toMatchObject({ run: { state: "Succeeded" } });
    } finally {
      holder.release();
    }
  });
});

describe("planned on an empty database", () => {
  let empty: Awaited<ReturnType<typeof emptyGenericDb>>;
  beforeAll(async () => {
    empty = await emptyGenericDb("batch_plan");
  });
  afterAll(async () => {
    await empty.drop();
  });
  const TABLES = ["runs", "attempts", "events", "transcript_entries", "usage_counters"];

  it("keeps index scans once the tables are large, with no ANALYZE between", async () => {
    const client = await empty.generic.batch.connect();
    try {
      const ref: AttemptRef = { id: "r/agent/1", runId: "r", number: 1, leaseToken: "t" };
      const start: StartCall = { id: ref.id, runId: ref.runId, number: 1, lease: { token: "t", workerId: "w" }, from: TRANSITIONS.start.from, version: null };
      // prepared and planned while every table is empty
      expect(await writeOutcomes(client, [succeeded(ref, "t", 1, 0)], false)).toEqual([null]);
      expect(await writeStarts(client, [start])).toEqual([null]);
      await empty.priv.db.pool.query(`
        INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required, received_at)
        SELECT 'run-' || g, 'event-' || g, 'start-dev', 'plan/repo', 'plan/repo#' || g, g, 'Running', 'demo', 'p', false, now()
          FROM generate_series(1, 20000) g;
        INSERT INTO attempts (id, run_id, step, number, state, lease_token, worker_id, agent)
        SELECT 'run-' || g || '/agent/1', 'run-' || g, 'agent', 1, 'Running', 't', 'w', 'demo' FROM generate_series(1, 20000) g`);
      const outcomeInput = [{ k: 0, attempt_id: "run-7/agent/1", run_id: "run-7", lease_token: "t", result: "Succeeded", run_from: ["Running"], run_to: "Succeeded", ends: true, lines: [] }];
      const startInput = [{ k: 0, attempt_id: "run-8/agent/2", run_id: "run-8", number: 2, lease_token: "t", worker_id: "w", run_from: ["Running"], version: null }];
      expect(await wholeScans(client, "atelier-outcomes", outcomeInput, TABLES)).toEqual([]);
      expect(await wholeScans(client, "atelier-starts", startInput, TABLES)).toEqual([]);
    } finally {
      client.release();
    }
  });
});
