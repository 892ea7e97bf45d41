import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Viewer } from "../../lib/auth/viewer";
import { setInstanceConfigForTests } from "../../lib/auth/instance-config";
import { defaultInstanceConfig } from "../../lib/config/roster";
import { loadBoard } from "../../lib/dashboard/board";
import { loadInsights } from "../../lib/dashboard/insights";
import { loadRunDetail } from "../../lib/dashboard/run-detail";
import { KEPT_TRANSCRIPT_LINES, pruneHistory } from "../../lib/retention/prune-history";
import { prunedReportFor } from "../../lib/retention/pruned-report";
import type { Db } from "../../lib/store/kernel/db";
import { recordAndClaim } from "../../lib/store/runs/claim";
import { testDb } from "../support/db";
import { countedAfresh, rolledUp } from "../support/insights-roll-up";
import { itemEvent } from "../support/events";
import { seedItem, seedRepo, uniqueInstallationId } from "../dashboard/support/seed";

/**
 * Retention on history older than its horizon: transcripts cut to the summary and last lines,
 * Event payloads shed with their keys kept, old audit and delivery rows deleted; what people read
 * of the Runs (the Run page's summary, the Board, Insights) is the same after, and the rows
 * take fewer bytes. The history here is dated 2025, a horizon no other test's rows cross.
 */

const tag = randomBytes(3).toString("hex");
const REPO = `ret-${tag}/app`;
const NOW = new Date("2026-12-07T00:00:00Z");
const OLD = new Date("2025-06-01T10:00:00Z");
// a year of every kind: the 2025 rows are older, the other test files' rows are not
const RETENTION = { transcripts: 365, eventPayloads: 365, audit: 365, deliveries: 365 };
const LINES = 100;
let db: Db;
let runId = "";
let firstEvent = itemEvent(REPO, 1, `a-${tag}`);
const later = itemEvent(REPO, 1, `b-${tag}`);

const bytesOf = async () =>
  Number(
    (
      await db.pool.query<{ bytes: string }>(
        `SELECT (SELECT COALESCE(sum(pg_column_size(t.*)), 0) FROM transcript_entries t WHERE t.run_id = $1)
              + (SELECT COALESCE(sum(pg_column_size(e.*)), 0) FROM events e WHERE e.repo = $2) AS bytes`,
        [runId, REPO],
      )
    ).rows[0]!.bytes,
  );

beforeAll(async () => {
  db = testDb(4);
  setInstanceConfigForTests({ ...defaultInstanceConfig(), retention: RETENTION });
  await seedRepo(db, REPO, uniqueInstallationId());
  await seedItem(db, REPO, 1, { title: "Old work", labels: ["ready-for-agent"] });
  // the Event, claimed as a poll claims it, with a payload worth shedding
  firstEvent = { ...firstEvent, submission: { ...firstEvent.submission, prompt: `Implement it. ${"Context. ".repeat(400)}` } };
  const claimed = await recordAndClaim(db, firstEvent);
  if (claimed.tag !== "Claimed") throw new Error(`expected a Claimed Run, got ${claimed.tag}`);
  runId = claimed.runId;
  // its Attempt ran and succeeded in June 2025, with a long transcript
  await db.pool.query(`UPDATE runs SET state = 'Succeeded', started_at = $2, ended_at = $3 WHERE id = $1`, [runId, new Date(OLD.getTime() + 60_000), new Date(OLD.getTime() + 600_000)]);
  await db.pool.query(
    `INSERT INTO attempts (id, run_id, number, state, started_at, ended_at, summary, duration_ms, tokens_in, tokens_out, cost_usd)
     VALUES ($1, $2, 1, 'Succeeded', $3, $4, 'Added the feature and its test.', 540000, 1200, 800, 0.42)`,
    [`${runId}/agent/1`, runId, new Date(OLD.getTime() + 60_000), new Date(OLD.getTime() + 600_000)],
  );
  await db.pool.query(
    `INSERT INTO transcript_entries (attempt_id, run_id, stream, text, at)
     SELECT $1, $2, 'stdout', 'line ' || n || ' ' || repeat('output ', 40), $3 FROM generate_series(1, ${LINES}) n`,
    [`${runId}/agent/1`, runId, OLD],
  );
  await db.pool.query(`UPDATE events SET received_at = $2 WHERE id = $1`, [firstEvent.id, OLD]);
  await db.pool.query(`UPDATE runs SET received_at = $2 WHERE id = $1`, [runId, OLD]);
  // a newer Event of the same Item: the newest keeps its payload
  await db.pool.query(
    `INSERT INTO events (id, kind, loop, repo, item_key, number, content_hash, status, reason, submission, received_at)
     VALUES ($1, 'item', $2, $3, $4, 1, $5, 'Ignored', 'ignored_event', $6, $7)`,
    [later.id, later.loop, REPO, later.itemKey, later.contentHash, JSON.stringify(later.submission), new Date(OLD.getTime() + 86_400_000)],
  );
  // an old audit row and delivery, and a recent one of each
  await db.pool.query(`INSERT INTO audit_log (at, actor, action, repo) VALUES ($1, 'op', 'approve', $2), (now(), 'op', 'approve', $2)`, [OLD, REPO]);
  await db.pool.query(`INSERT INTO webhook_deliveries (id, event, status, received_at) VALUES ($1, 'issues', 'accepted', $3), ($2, 'issues', 'accepted', now())`, [
    `old-${tag}`,
    `new-${tag}`,
    OLD,
  ]);
});

afterAll(async () => {
  setInstanceConfigForTests(undefined);
  await db.close();
});

const admin: Viewer = { id: "1", login: "admin", name: null, avatarUrl: null, admin: true };
const reader: Viewer = { id: "2", login: "reader", name: null, avatarUrl: null, admin: false };

describe("retention", () => {
  it("prunes the old history and leaves what people read of it as it was", async () => {
    const lanes = defaultInstanceConfig().board.lanes;
    const range = { loop: null, agent: null, from: new Date("2025-05-01T00:00:00Z"), to: new Date("2025-07-01T00:00:00Z") };
    const boardBefore = await loadBoard(db, { repos: [REPO], lanes });
    const insightsBefore = await loadInsights(db, [REPO], range);
    const rollUpBefore = await rolledUp(db, [REPO]);
    const bytesBefore = await bytesOf();

    const pruned = await pruneHistory(db, RETENTION, { now: NOW, batch: 2 });
    expect(pruned.transcripts).toBeGreaterThanOrEqual(1);
    expect(pruned.event_payloads).toBeGreaterThanOrEqual(1);

    // the Run page: the Run and its Attempt, their summary and usage, and the last lines
    const run = await loadRunDetail(db, runId);
    expect(run.state).toBe("Succeeded");
    expect(run.attempts).toHaveLength(1);
    expect(run.attempts[0]).toMatchObject({ summary: "Added the feature and its test.", durationMs: 540000, tokensIn: 1200, tokensOut: 800, costUsd: "0.420000" });
    expect(run.attempts[0]!.transcriptPrunedAt).not.toBeNull();
    const kept = (await db.pool.query<{ text: string }>(`SELECT text FROM transcript_entries WHERE run_id = $1 ORDER BY id`, [runId])).rows;
    expect(kept).toHaveLength(KEPT_TRANSCRIPT_LINES);
    expect(kept[0]!.text.startsWith(`line ${LINES - KEPT_TRANSCRIPT_LINES + 1} `)).toBe(true);
    expect(kept.at(-1)!.text.startsWith(`line ${LINES} `)).toBe(true);

    // the Board and Insights read the same
    expect(await loadBoard(db, { repos: [REPO], lanes })).toEqual(boardBefore);
    expect(await loadInsights(db, [REPO], range)).toEqual(insightsBefore);
    expect(insightsBefore.totals.runs).toBe(1);
    // the roll-up Insights read is untouched, and still what the Runs give (ADR 0092)
    expect(await rolledUp(db, [REPO])).toEqual(rollUpBefore);
    expect(rollUpBefore).toEqual(await countedAfresh(db, [REPO]));
    expect(rollUpBefore).toEqual([expect.objectContaining({ runs: 1, succeeded: 1, cost_usd: "0.420000", agent_ms: "540000" })]);

    // the ledger keeps the key: the same content is still recognized, and opens nothing
    const events = (await db.pool.query(`SELECT id, submission, payload_pruned_at FROM events WHERE repo = $1 ORDER BY received_at`, [REPO])).rows;
    expect(events.map((e) => e.id)).toEqual([firstEvent.id, later.id]);
    expect(events[0].submission).toEqual({});
    expect(events[0].payload_pruned_at).not.toBeNull();
    expect(events[1].submission).toEqual(later.submission);
    expect(await recordAndClaim(db, firstEvent)).toMatchObject({ tag: "Claimed", runId, opened: false });

    // the old audit row and delivery went, the recent ones stay
    expect((await db.pool.query(`SELECT at FROM audit_log WHERE repo = $1`, [REPO])).rows).toHaveLength(1);
    expect((await db.pool.query(`SELECT id FROM webhook_deliveries WHERE id = ANY($1)`, [[`old-${tag}`, `new-${tag}`]])).rows.map((r) => r.id)).toEqual([`new-${tag}`]);

    // measured: the rows of this history take fewer bytes
    const bytesAfter = await bytesOf();
    expect(bytesAfter).toBeLessThan(bytesBefore * 0.5);

    // a second sweep leaves what the first kept
    await pruneHistory(db, RETENTION, { now: NOW });
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM transcript_entries WHERE run_id = $1`, [runId])).rows[0].n).toBe(KEPT_TRANSCRIPT_LINES);
    expect((await db.pool.query(`SELECT submission FROM events WHERE id = $1`, [later.id])).rows[0].submission).toEqual(later.submission);
  });

  it("tells an instance admin on the Usage page what was pruned, and no one else", async () => {
    const report = await prunedReportFor(db, admin);
    expect(report?.days).toEqual(RETENTION);
    const transcripts = report!.pruned.find((p) => p.kind === "transcripts");
    expect(transcripts?.total).toBeGreaterThanOrEqual(1);
    expect(transcripts?.lastAt).not.toBeNull();
    expect(await prunedReportFor(db, reader)).toBeNull();
  });
});
