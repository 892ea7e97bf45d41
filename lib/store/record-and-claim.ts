import { budgetAdmits, decideClaim, type BlockingRun } from "../engine/claim";
import { runId as runIdOf } from "../engine/ids";
import { FROM, OPEN, type RunStateName } from "../engine/run-state";
import { hasOutboundHooks, recordTerminalDeliveries } from "../outbound/record-terminal-deliveries";
import type { Db } from "./db";
import { loopItemLock } from "./locks";
import { markRunsChanged } from "./run-changed";
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

/** What the claim decision reads, in one statement, under the (Loop, Item) lock. */
export interface ClaimSnapshot {
  event: { status: string; ignored: boolean } | null;
  event_run: { id: string; state: RunStateName } | null;
  blocking: (BlockingRun & { reserved_generation: number | null }) | null;
  generation: number;
  ask: boolean;
  reserved: number;
}

const SNAPSHOT = {
  name: "atelier-claim-snapshot",
  text: `
WITH budget AS (
  SELECT generation, ask IS NOT NULL AS ask FROM cycle_budgets WHERE item_key = $3
), blocking AS (
  -- locked: a concurrent start or cancel of that Run waits for this decision, and the state
  -- read here is the latest committed one
  SELECT id, state, reserved_generation FROM runs WHERE loop = $2 AND item_key = $3 AND state::text = ANY($4) LIMIT 1 FOR UPDATE
)
SELECT
  (SELECT json_build_object('status', status, 'ignored', ignored_at IS NOT NULL) FROM events WHERE id = $1) AS event,
  (SELECT json_build_object('id', id, 'state', state) FROM runs WHERE event_id = $1) AS event_run,
  (SELECT row_to_json(blocking) FROM blocking) AS blocking,
  COALESCE((SELECT generation FROM budget), 0) AS generation,
  COALESCE((SELECT ask FROM budget), false) AS ask,
  (SELECT count(*)::int FROM runs WHERE loop = $2 AND item_key = $3
     AND reserved_generation = COALESCE((SELECT generation FROM budget), 0)) AS reserved`,
};

/** Reads what the claim decision needs (a prepared statement); the caller holds the (Loop, Item) lock. */
async function claimSnapshot(sql: Sql, eventId: string, loop: string, itemKey: string): Promise<ClaimSnapshot> {
  const { rows } = await sql.query<ClaimSnapshot>({ ...SNAPSHOT, values: [eventId, loop, itemKey, OPEN] });
  return rows[0]!;
}

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
      const snap = await claimSnapshot(sql, event.id, event.loop, event.itemKey);
      if (snap.event_run) {
        return { tag: "Claimed", runId: snap.event_run.id, state: snap.event_run.state, opened: false, superseded: null };
      }
      if (snap.event?.ignored) return { tag: "Ignored", reason: "ignored_event" };
      if (event.kind === "item" && event.generation < snap.generation) {
        await writeClaim(sql, event, { status: "Ignored", reason: "old_generation" });
        return { tag: "Ignored", reason: "old_generation" };
      }
      const decision = decideClaim(snap.blocking);
      if (decision.tag === "QueueEvent") {
        await writeClaim(sql, event, { status: "Queued", reason: null, behind: decision.behind });
        return { tag: "Queued", behind: decision.behind };
      }
      const superseded = decision.tag === "SupersedeRun" ? { id: decision.runId, reservedGeneration: snap.blocking!.reserved_generation } : null;
      return openOrBlock(sql, event, snap, superseded, admission);
    },
    { lockKey: loopItemLock(event.loop, event.itemKey) },
  );
}

/** An unstarted Run the decision supersedes (locked by the snapshot). */
export interface Superseded {
  id: string;
  reservedGeneration: number | null;
}

/**
 * Opens the Event's Run if the cycle budget and the admission gate allow it, else records why
 * not; `superseded` is canceled either way, in the same statement that records the Event.
 */
export async function openOrBlock(
  sql: Sql,
  event: EventInput,
  snap: Pick<ClaimSnapshot, "generation" | "ask" | "reserved">,
  superseded: Superseded | null,
  admission?: Admission,
): Promise<ClaimResult> {
  const { maxCycles } = event.submission;
  const supersededId = superseded?.id ?? null;
  // a superseded Run was unstarted: its reservation of this generation goes back
  const reserved = superseded?.reservedGeneration === snap.generation ? snap.reserved - 1 : snap.reserved;
  if (maxCycles !== null && !budgetAdmits(reserved, maxCycles, snap.ask)) {
    await askForBudget(sql, event, snap.generation, reserved);
    await writeClaim(sql, event, { status: "Blocked", reason: "cycle_budget_exhausted", superseded: supersededId });
    return { tag: "Blocked", reason: "cycle_budget_exhausted", superseded: supersededId };
  }
  const refusal = admission ? await admission(sql, event) : null;
  if (refusal) {
    await writeClaim(sql, event, { status: "Blocked", reason: refusal.token, superseded: supersededId });
    return { tag: "Blocked", reason: refusal.token, superseded: supersededId };
  }
  const runId = runIdOf(event.id);
  await writeClaim(sql, event, {
    status: "Claimed",
    reason: null,
    superseded: supersededId,
    open: { runId, reservedGeneration: maxCycles === null ? null : snap.generation },
  });
  await markRunsChanged(sql, [runId]);
  return { tag: "Claimed", runId, state: "Pending", opened: true, superseded: supersededId };
}

interface ClaimWrite {
  status: "Claimed" | "Queued" | "Ignored" | "Blocked";
  reason: string | null;
  /** an unstarted Run to cancel as Superseded by this Event */
  superseded?: string | null;
  /** the Running Run this Event is queued behind: marked, so its last outcome hands over */
  behind?: string;
  open?: { runId: string; reservedGeneration: number | null };
}

const WRITE = {
  name: "atelier-claim-write",
  text: `
WITH sup AS (
  UPDATE runs AS s SET state = 'Canceled', cancel_reason = 'Superseded', superseded_by = $1, reserved_generation = NULL,
         ended_at = now(), updated_at = now()
   WHERE s.id = $17 AND s.state::text = ANY($18)
  RETURNING s.id, ${hasOutboundHooks("s.id")} AS hooked
), behind AS (
  UPDATE runs SET queued_behind = true WHERE id = $19 AND NOT queued_behind
), run AS (
  INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, reserved_generation, agent, prompt,
                    approval_required, received_at)
  SELECT $12, $1, $3, $4, $5, $6, 'Pending', $13, $14, $15, $16,
         COALESCE((SELECT received_at FROM events WHERE id = $1), now())
   WHERE $12::text IS NOT NULL
  RETURNING id
)
INSERT INTO events (id, kind, loop, repo, item_key, number, content_hash, generation, status, reason, submission, run_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, (SELECT id FROM run))
ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, reason = EXCLUDED.reason,
  run_id = COALESCE(EXCLUDED.run_id, events.run_id)
RETURNING (SELECT hooked FROM sup) AS superseded_hooked, EXISTS (SELECT 1 FROM sup) AS superseded`,
};

/**
 * One statement: supersedes the unstarted Run (when the decision says so), opens the new Run,
 * and records the Event with its status. The open-Run constraint is checked at COMMIT, so the
 * order of the two Run writes inside the statement does not matter.
 */
async function writeClaim(sql: Sql, event: EventInput, write: ClaimWrite): Promise<void> {
  const s = event.submission;
  const { rows } = await sql.query<{ superseded: boolean; superseded_hooked: boolean | null }>({
    ...WRITE,
    values: [
      event.id,
      event.kind,
      event.loop,
      event.repo,
      event.itemKey,
      event.number,
      event.contentHash,
      event.generation,
      write.status,
      write.reason,
      JSON.stringify(s),
      write.open?.runId ?? null,
      write.open?.reservedGeneration ?? null,
      s.agent,
      s.prompt,
      s.approvalRequired,
      write.superseded ?? null,
      FROM.supersede,
      write.behind ?? null,
    ],
  });
  if (write.superseded && rows[0]?.superseded) {
    await markRunsChanged(sql, [write.superseded]);
    if (rows[0].superseded_hooked) await recordTerminalDeliveries(sql, write.superseded);
  }
}

/** Stores the Item's budget ask (once) so an operator sees it in Needs you. */
async function askForBudget(sql: Sql, event: EventInput, generation: number, reserved: number): Promise<void> {
  const ask = {
    askId: `${event.itemKey}#${generation}`,
    loop: event.loop,
    reserved,
    maxCycles: event.submission.maxCycles,
    eventId: event.id,
  };
  await sql.query(
    `INSERT INTO cycle_budgets (item_key, repo, generation, ask, asked_at) VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (item_key) DO UPDATE SET ask = COALESCE(cycle_budgets.ask, EXCLUDED.ask),
       asked_at = COALESCE(cycle_budgets.asked_at, EXCLUDED.asked_at)`,
    [event.itemKey, event.repo, generation, JSON.stringify(ask)],
  );
}
