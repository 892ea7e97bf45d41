import { randomBytes, randomInt } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type { AttemptSessions } from "../../lib/executor/agent-session";
import { attemptSessions, postgresSessionStore } from "../../lib/runner/kept-sessions";
import { deleteRunSessions, SESSION_CHUNK_BYTES } from "../../lib/store/runs/agent-sessions";
import { expireAttempt } from "../../lib/store/runs/attempts";
import { recordAndClaim } from "../../lib/store/runs/claim";
import { beginAttempt } from "../support/attempts";
import { testDb, uniqueRepo } from "../support/db";
import { itemEvent } from "../support/events";

/**
 * The Runs' kept sessions in Postgres (ADR 0082): sealed with the instance key and bound to the
 * Run, in chunks, fenced by the saving Attempt's lease, handed to the next Attempt when the sweep
 * closes an interrupted one, gone with the Run's retention and the repository's retirement. The
 * attacker's moves — another Run's blob put under this Run, a flipped byte, another key — are
 * refused: nothing of them is restored.
 */

const db = testDb();
const store = postgresSessionStore(db);
const KEY = "instance-key-for-the-kept-sessions-test";
afterAll(() => db.close());

async function begunRun(repo = uniqueRepo("kept")) {
  const claimed = await recordAndClaim(db, itemEvent(repo, 7, randomBytes(4).toString("hex")));
  if (claimed.tag !== "Claimed") throw new Error(JSON.stringify(claimed));
  const lease = { token: `w/${randomBytes(6).toString("hex")}`, workerId: "w" };
  const begun = await beginAttempt(db, claimed.runId, lease);
  if (begun.tag !== "Started") throw new Error(JSON.stringify(begun));
  const writer = { runId: claimed.runId, attemptId: begun.attempt.id, leaseToken: lease.token };
  return { runId: claimed.runId, attemptId: begun.attempt.id, writer };
}

const sessionsOf = (writer: { runId: string; attemptId: string; leaseToken: string }, key = KEY, repositoryId: string | null = null): AttemptSessions =>
  attemptSessions(store, key, writer, repositoryId, async () => undefined);

const archive = (bytes: number) => randomBytes(bytes);

describe("a Run's kept session", () => {
  it("is kept sealed, in chunks, and opens for its Run", async () => {
    const { writer } = await begunRun();
    const big = archive(2 * SESSION_CHUNK_BYTES + 1234);
    expect(await sessionsOf(writer).save({ kind: "claude", sessionId: "s-1", archive: big })).toBe(true);
    const { rows } = await db.pool.query<{ chunks: number; n: number; clear: boolean }>(
      `SELECT s.chunks, count(c.*)::int AS n, bool_or(position($2 in c.data) > 0) AS clear
         FROM agent_sessions s JOIN agent_session_chunks c USING (run_id) WHERE s.run_id = $1 GROUP BY s.chunks`,
      [writer.runId, big.subarray(0, 64)],
    );
    expect(rows[0]).toEqual({ chunks: 3, n: 3, clear: false });
    const loaded = await sessionsOf(writer).load();
    expect(loaded.tag).toBe("Found");
    if (loaded.tag === "Found") expect([loaded.kind, loaded.sessionId, loaded.archive.equals(big)]).toEqual(["claude", "s-1", true]);

    // a second save replaces the first, whole
    expect(await sessionsOf(writer).save({ kind: "claude", sessionId: "s-2", archive: archive(10) })).toBe(true);
    const again = await sessionsOf(writer).load();
    expect(again.tag === "Found" && [again.sessionId, again.archive.length]).toEqual(["s-2", 10]);
  });

  it("refuses another Run's blob put under this Run, an altered one, and one sealed under another key", async () => {
    const victim = await begunRun();
    const attacker = await begunRun();
    expect(await sessionsOf(attacker.writer).save({ kind: "claude", sessionId: "planted", archive: archive(100) })).toBe(true);
    expect(await sessionsOf(victim.writer).save({ kind: "claude", sessionId: "mine", archive: archive(100) })).toBe(true);
    // the attacker, with write access to the rows, copies its own session over the victim's
    await db.pool.query(`DELETE FROM agent_session_chunks WHERE run_id = $1`, [victim.runId]);
    await db.pool.query(`INSERT INTO agent_session_chunks (run_id, seq, data) SELECT $1, seq, data FROM agent_session_chunks WHERE run_id = $2`, [victim.runId, attacker.runId]);
    await db.pool.query(`UPDATE agent_sessions SET session_id = 'planted' WHERE run_id = $1`, [victim.runId]);
    const foreign = await sessionsOf(victim.writer).load();
    expect(foreign.tag).toBe("Refused");
    if (foreign.tag === "Refused") expect(foreign.reason).toContain("does not open for this Run");

    // one flipped byte of a blob sealed for this very Run
    expect(await sessionsOf(victim.writer).save({ kind: "claude", sessionId: "mine", archive: archive(100) })).toBe(true);
    const at = randomInt(0, 100);
    await db.pool.query(`UPDATE agent_session_chunks SET data = overlay(data placing decode(lpad(to_hex(get_byte(data, $2) # 1), 2, '0'), 'hex') from $2 + 1 for 1) WHERE run_id = $1`, [victim.runId, at]);
    expect((await sessionsOf(victim.writer).load()).tag).toBe("Refused");

    // sealed under another instance key
    expect(await sessionsOf(victim.writer, "another-instance-key").save({ kind: "claude", sessionId: "mine", archive: archive(100) })).toBe(true);
    expect((await sessionsOf(victim.writer).load()).tag).toBe("Refused");
  });

  it("is written only by the Attempt that holds its lease; the sweep's close hands it to the next Attempt", async () => {
    const { runId, attemptId, writer } = await begunRun();
    // a worker that does not hold the Attempt (a stale token) writes nothing
    expect(await sessionsOf({ ...writer, leaseToken: "w/stale" }).save({ kind: "claude", sessionId: "late", archive: archive(10) })).toBe(false);
    expect(await sessionsOf(writer).save({ kind: "claude", sessionId: "s-kept", archive: archive(10) })).toBe(true);

    const closed = await expireAttempt(db, attemptId, "its worker died");
    expect(closed?.decision.tag).toBe("RetryAttempt");
    const { rows } = await db.pool.query(`SELECT a.session_id, r.resume_session FROM attempts a JOIN runs r ON r.id = a.run_id WHERE a.id = $1`, [attemptId]);
    expect(rows[0]).toEqual({ session_id: "s-kept", resume_session: "s-kept" });
    // the dead worker's late save is refused: the Attempt is closed
    expect(await sessionsOf(writer).save({ kind: "claude", sessionId: "late", archive: archive(10) })).toBe(false);

    // the next Attempt starts knowing why the last one ended
    const next = await beginAttempt(db, runId, { token: "w2/t", workerId: "w2" });
    expect(next.tag === "Started" && [next.run.interrupted_by, next.run.resume_session]).toEqual(["its worker died", "s-kept"]);
  });

  it("is not handed on when an Attempt of another agent kept it (an Edit and retry changed the agent)", async () => {
    const { runId, attemptId, writer } = await begunRun();
    expect(await sessionsOf(writer).save({ kind: "claude", sessionId: "old-agent", archive: archive(10) })).toBe(true);
    await db.pool.query(`UPDATE runs SET agent = 'other' WHERE id = $1`, [runId]);
    await expireAttempt(db, attemptId, "its worker died");
    const { rows } = await db.pool.query(`SELECT resume_session FROM runs WHERE id = $1`, [runId]);
    expect(rows[0].resume_session).toBeNull();
  });

  it("goes with the Run's retention, and with its repository's retirement (by GitHub id)", async () => {
    const a = await begunRun();
    const b = await begunRun();
    const installation = randomInt(1, 2 ** 40);
    const repositoryId = String(randomInt(1, 2 ** 40));
    await db.pool.query(`INSERT INTO installations (id, account_login, updated_at) VALUES ($1, 'kept-org', now())`, [installation]);
    await db.pool.query(`INSERT INTO repositories (id, installation_id, full_name, updated_at) VALUES ($1, $2, $3, now())`, [repositoryId, installation, uniqueRepo("kept-retired")]);
    expect(await sessionsOf(a.writer).save({ kind: "codex", sessionId: "a", archive: archive(10) })).toBe(true);
    expect(await sessionsOf(b.writer, KEY, repositoryId).save({ kind: "codex", sessionId: "b", archive: archive(10) })).toBe(true);

    expect(await deleteRunSessions(db, [a.runId])).toBe(1);
    expect((await sessionsOf(a.writer).load()).tag).toBe("None");

    await db.pool.query(`UPDATE repositories SET removed_at = now() WHERE id = $1`, [repositoryId]);
    expect((await sessionsOf(b.writer).load()).tag).toBe("None");
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM agent_session_chunks WHERE run_id = ANY($1)`, [[a.runId, b.runId]]);
    expect(rows[0].n).toBe(0);
  });
});
