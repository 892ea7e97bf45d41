import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { TranscriptWriter } from "../../lib/runner/transcript-writer";
import { testDb } from "../support/db";

const db = testDb();
afterAll(() => db.close());

async function stored(runId: string) {
  const { rows } = await db.pool.query<{ stream: string; text: string }>(`SELECT stream, text FROM transcript_entries WHERE run_id = $1 ORDER BY id`, [runId]);
  return rows;
}

describe("an Attempt's transcript is bounded", () => {
  it("keeps at most its cap of the agent's output, says so once, and counts what it cut; Atelier's own lines still land", async () => {
    const runId = `cap-${randomBytes(6).toString("hex")}`;
    const writer = new TranscriptWriter(db, `${runId}/agent/1`, runId, { maxBytes: 100_000, flushMs: 10 });
    const line = `${"x".repeat(999)}\n`;
    for (let i = 0; i < 2_000; i++) writer.push({ stream: "stdout", text: line }); // 2 MB
    writer.system("the agent exited");
    const tail = await writer.takeTail();
    await db.pool.query(
      `INSERT INTO transcript_entries (attempt_id, run_id, stream, text) SELECT $1, $2, s, t FROM unnest($3::text[], $4::text[]) AS x(s, t)`,
      [`${runId}/agent/1`, runId, tail.map((l) => l.stream), tail.map((l) => l.text)],
    );
    const rows = await stored(runId);
    const agentBytes = rows.filter((r) => r.stream === "stdout").reduce((n, r) => n + Buffer.byteLength(r.text), 0);
    expect(agentBytes).toBeLessThanOrEqual(100_000);
    expect(agentBytes).toBeGreaterThan(90_000);
    const notes = rows.filter((r) => r.stream === "system").map((r) => r.text);
    expect(notes.filter((t) => t.startsWith("the transcript is full"))).toHaveLength(1);
    expect(notes).toContain("the agent exited");
    expect(notes.find((t) => t.startsWith("the transcript kept"))).toBe(`the transcript kept ${agentBytes} bytes of the agent's output and cut ${2_000_000 - agentBytes} more`);
  });
});
