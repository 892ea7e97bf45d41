import { decideClaim, budgetAdmits, type BlockingRun } from "../engine/claim";
import { runId as runIdOf } from "../engine/ids";
import { FROM, OPEN, type RunStateName } from "../engine/run-state";
import type { Db } from "./db";
import { loopItemLock } from "./locks";
import { transaction, type Sql } from "./transaction";

/** What the Loop asked for at the time of the observation. */
export interface Submission {
  prompt: string;
  agent: string;
  approvalRequired: boolean;
  /** the cycle budget; null for schedule Loops, which have none */
  maxCycles: number | null;
}

export interface EventInput {
  /** the dedup key */
  id: string;
  kind: "item" | "tick";
  loop: string;
  repo: string;
  itemKey: string;
  number: number | null;
  contentHash: string | null;
  generation: number;
  submission: Submission;
}

export type ClaimResult =
  | { tag: "Claimed"; runId: string; state: RunStateName; opened: boolean; superseded: string | null }
  | { tag: "Queued"; behind: string }
  | { tag: "Ignored"; reason: "ignored_event" | "old_generation" }
  | { tag: "Blocked"; reason: string; superseded: string | null };

/** A refusal from the admission gate (quotas), asked inside the claim's transaction. */
export interface AdmissionRefusal {
  token: string;
  message: string;
}
export type Admission = (sql: Sql, event: EventInput) => Promise<AdmissionRefusal | null>;

interface ClaimSnapshot {
  inserted: boolean;
  event: { status: string; ignored: boolean; generation: number } | null;
  event_run: { id: string; state: RunStateName } | null;
  blocking: BlockingRun | null;
  budget: { generation: number; ask: boolean } | null;
  reserved: number;
}

const SNAPSHOT_SQL = `
WITH ins AS (
  INSERT INTO events (id, kind, loop, repo, item_key, number, content_hash, generation, status, submission, received_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'Claimed', $9, now())
  ON CONFLICT (id) DO NOTHING RETURNING id
), budget AS (
  SELECT generation, ask IS NOT NULL AS ask FROM cycle_budgets WHERE item_key = $5
)
SELECT
  EXISTS (SELECT 1 FROM ins) AS inserted,
  (SELECT json_build_object('status', status, 'ignored', ignored_at IS NOT NULL, 'generation', generation)
     FROM events WHERE id = $1) AS event,
  (SELECT json_build_object('id', id, 'state', state) FROM runs WHERE event_id = $1) AS event_run,
  (SELECT json_build_object('id', id, 'state', state) FROM runs
     WHERE loop = $3 AND item_key = $5 AND state::text = ANY($10) LIMIT 1) AS blocking,
  (SELECT row_to_json(budget) FROM budget) AS budget,
  (SELECT count(*)::int FROM runs WHERE loop = $3 AND item_key = $5
     AND reserved_generation = COALESCE((SELECT generation FROM budget), 0)) AS reserved`;

/**
 * Records an Event in the ledger and decides, in one transaction serialized per (Loop, Item),
 * what it does: Claimed (a Run exists for it, or a new one opens), Queued behind a Running
 * Run, Ignored, or Blocked by the cycle budget or a quota. An unstarted Run of the same Loop
 * and Item is superseded, and that supersede commits even when the budget then blocks.
 */
export async function recordAndClaim(db: Db, event: EventInput, admission?: Admission): Promise<ClaimResult> {
  return transaction(
    db,
    async (sql) => {
      const { rows } = await sql.query<ClaimSnapshot>(SNAPSHOT_SQL, [
        event.id,
        event.kind,
        event.loop,
        event.repo,
        event.itemKey,
        event.number,
        event.contentHash,
        event.generation,
        JSON.stringify(event.submission),
        OPEN,
      ]);
      const snap = rows[0]!;
      if (snap.event_run) {
        return { tag: "Claimed", runId: snap.event_run.id, state: snap.event_run.state, opened: false, superseded: null };
      }
      const generation = snap.budget?.generation ?? 0;
      if (snap.event?.ignored) return { tag: "Ignored", reason: "ignored_event" };
      if (event.kind === "item" && event.generation < generation) {
        await setEventStatus(sql, event.id, "Ignored", "old_generation");
        return { tag: "Ignored", reason: "old_generation" };
      }

      const decision = decideClaim(snap.blocking);
      if (decision.tag === "QueueEvent") {
        await setEventStatus(sql, event.id, "Queued", null);
        return { tag: "Queued", behind: decision.behind };
      }
      let reserved = snap.reserved;
      let superseded: string | null = null;
      if (decision.tag === "SupersedeRun") {
        const gaveBack = await supersedeRun(sql, decision.runId, event.id, generation);
        superseded = decision.runId;
        if (gaveBack) reserved -= 1;
      }
      return openOrBlock(sql, event, { generation, reserved, askPending: snap.budget?.ask ?? false, superseded }, admission);
    },
    loopItemLock(event.loop, event.itemKey),
  );
}

interface BudgetView {
  generation: number;
  reserved: number;
  askPending: boolean;
  superseded: string | null;
}

/** Opens the Event's Run if the cycle budget and the admission gate allow it; else records why not. */
export async function openOrBlock(sql: Sql, event: EventInput, budget: BudgetView, admission?: Admission): Promise<ClaimResult> {
  const { maxCycles } = event.submission;
  if (maxCycles !== null && !budgetAdmits(budget.reserved, maxCycles, budget.askPending)) {
    await askForBudget(sql, event, budget);
    await setEventStatus(sql, event.id, "Blocked", "cycle_budget_exhausted");
    return { tag: "Blocked", reason: "cycle_budget_exhausted", superseded: budget.superseded };
  }
  const refusal = admission ? await admission(sql, event) : null;
  if (refusal) {
    await setEventStatus(sql, event.id, "Blocked", refusal.token);
    return { tag: "Blocked", reason: refusal.token, superseded: budget.superseded };
  }
  const id = runIdOf(event.id);
  await sql.query(
    `WITH run AS (
       INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, reserved_generation, agent, prompt,
                         approval_required, received_at)
       SELECT $1, $2, $3, $4, $5, $6, 'Pending', $7, $8, $9, $10, received_at FROM events WHERE id = $2
       RETURNING id)
     UPDATE events SET status = 'Claimed', reason = NULL, run_id = (SELECT id FROM run) WHERE id = $2`,
    [
      id,
      event.id,
      event.loop,
      event.repo,
      event.itemKey,
      event.number,
      maxCycles === null ? null : budget.generation,
      event.submission.agent,
      event.submission.prompt,
      event.submission.approvalRequired,
    ],
  );
  return { tag: "Claimed", runId: id, state: "Pending", opened: true, superseded: budget.superseded };
}

async function setEventStatus(sql: Sql, id: string, status: string, reason: string | null): Promise<void> {
  await sql.query(`UPDATE events SET status = $2, reason = $3 WHERE id = $1`, [id, status, reason]);
}

/** Supersedes an unstarted Run; returns whether it gave back a reservation of this generation. */
async function supersedeRun(sql: Sql, id: string, byEvent: string, generation: number): Promise<boolean> {
  const { rows } = await sql.query<{ reserved_generation: number | null }>(
    `UPDATE runs r SET state = 'Canceled', cancel_reason = 'Superseded', superseded_by = $2,
            reserved_generation = NULL, ended_at = now(), updated_at = now()
       FROM (SELECT id, reserved_generation FROM runs WHERE id = $1 FOR UPDATE) old
      WHERE r.id = old.id AND r.state::text = ANY($3)
      RETURNING old.reserved_generation`,
    [id, byEvent, FROM.supersede],
  );
  return rows[0]?.reserved_generation === generation;
}

/** Stores the Item's budget ask (once) so an operator sees it in Needs you. */
async function askForBudget(sql: Sql, event: EventInput, budget: BudgetView): Promise<void> {
  const ask = {
    askId: `${event.itemKey}#${budget.generation}`,
    loop: event.loop,
    reserved: budget.reserved,
    maxCycles: event.submission.maxCycles,
    eventId: event.id,
  };
  await sql.query(
    `INSERT INTO cycle_budgets (item_key, repo, generation, ask, asked_at) VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (item_key) DO UPDATE SET ask = COALESCE(cycle_budgets.ask, EXCLUDED.ask),
       asked_at = COALESCE(cycle_budgets.asked_at, EXCLUDED.asked_at)`,
    [event.itemKey, event.repo, budget.generation, JSON.stringify(ask)],
  );
}
