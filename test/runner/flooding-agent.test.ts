import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTranscriptPage } from "../../lib/dashboard/transcript";
import { testDb } from "../support/db";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { agents, attemptsOf, issueEvent, openRun, runState, startRunner, uniquePrefix, waitFor, type RunnerUnderTest } from "./support/runner-fixture";

/**
 * An agent that floods its output (12 MB, six times its cap, in its sandbox) through the whole runner: the
 * Attempt's transcript keeps at most its cap, says what it cut, and the transcript API still
 * answers in pages of a bounded size.
 */

const CAP = 2 * 1024 * 1024;
const FLOOD = 12 * 1024 * 1024;
const db = testDb();
const prefix = uniquePrefix("flood");
let world: SimWorld;
let runner: RunnerUnderTest;
let workspaceRoot: string;

beforeAll(async () => {
  world = await startSimWorld(db);
  workspaceRoot = mkdtempSync(join(tmpdir(), "atelier-flood-ws-"));
  runner = await startRunner({
    db,
    prefix,
    github: world.github,
    workspaceRoot,
    transcriptMaxBytes: CAP,
    // a 12 MB flood keeps a busy machine busier: the lease of production, not the fixture's short one
    leaseTtlMs: 30_000,
    roster: agents({ flood: { kind: "command", command: ["sh", "-c", `yes 'flooding the transcript with one line after another' | head -c ${FLOOD}`], maxAttemptMinutes: 3 } }),
  });
});
afterAll(async () => {
  await runner?.close();
  await world?.close();
  await db.close();
  if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
});

describe("an agent printing 12 MB", () => {
  it("leaves at most the cap in its transcript, says what was cut, and the transcript pages stay small", async () => {
    const repo = await world.addRepo("flood");
    const run = await openRun(db, issueEvent(repo, 7, "f1", "Print a lot.", { agent: "flood" }));
    await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
    await waitFor("the Run to end", async () => ["Succeeded", "Failed", "Canceled"].includes(await runState(db, run.runId)), 150_000, 500).catch(async (err: unknown) => {
      throw new Error(`${String(err)}: ${JSON.stringify(await attemptsOf(db, run.runId))}`);
    });

    const { rows } = await db.pool.query<{ agent_bytes: string; notes: string[] }>(
      `SELECT coalesce(sum(octet_length(text)) FILTER (WHERE stream <> 'system'), 0)::text AS agent_bytes,
              coalesce(array_agg(text) FILTER (WHERE stream = 'system' AND text LIKE 'the transcript %'), '{}') AS notes
         FROM transcript_entries WHERE run_id = $1`,
      [run.runId],
    );
    const kept = Number(rows[0]!.agent_bytes);
    expect(kept).toBeLessThanOrEqual(CAP);
    expect(kept).toBeGreaterThan(CAP / 2);
    const notes = rows[0]!.notes;
    expect(notes.filter((n) => n.startsWith("the transcript is full"))).toHaveLength(1);
    const summary = notes.find((n) => n.startsWith("the transcript kept"));
    expect(summary).toMatch(/^the transcript kept \d+ bytes of the agent's output and cut \d+ more$/);
    const [, keptSaid, cutSaid] = /kept (\d+) bytes .* cut (\d+) more/.exec(summary!)!;
    expect(Number(keptSaid)).toBe(kept);
    expect(Number(keptSaid) + Number(cutSaid)).toBe(FLOOD);

    const page = await readTranscriptPage(db, run.runId, { limit: 5 });
    expect(page.entries).toHaveLength(5);
    expect(page.next).not.toBeNull();
  }, 200_000);
});
