import { RUN_STATE_SQL } from "../../engine/run-predicates";
import { countRunTransition } from "../../metrics/metrics";
import { decideClaim, intentOf, type BlockingRun, type ClaimFacts, type decideOpening, type Intent } from "../../engine/claim-decision";
import { runId as runIdOf } from "../../engine/ids";
import { TRANSITIONS, type RunStateName } from "../../engine/run-state";
import { hasOutboundHooks, recordTerminalDeliveries } from "../outbound/terminal-deliveries";
import type { ErrorToken } from "../../error-tokens";
import type { EnvironmentSpec } from "../../executor/environment/environment-spec";
import type { ReviewReason } from "../../loops/steering";
import type { Db } from "../kernel/db";
import { loopItemLock } from "../kernel/locks";
import { intentSql, replacedBySql } from "./event-intent";
import { ignoreQueuedSql } from "./revoke";
import { markRunsChanged } from "./run-changed";
import { first, literal, query, raw, sql, type Statement } from "../kernel/sql";
import { transaction, type Sql } from "../kernel/transaction";

/** What the Loop asked for at the time of the observation. */
export interface Submission {
  prompt: string;
  agent: string;
  /** the model the Loop picked among its agent's (`model:`); absent: the agent's default */
  model?: string | null;
  approvalRequired: boolean;
  /** the cycle budget; null for schedule Loops, which have none */
  maxCycles: number | null;
  /** the repository whose `.github/atelier.yml` declares the Loop (a schedule Loop may act elsewhere in its installation) */
  declaredIn?: string;
  /** who caused the match; null for a Tick (the schedule, declared by a writer of `declaredIn`) */
  actor?: EventActor | null;
  /** GitHub's author_association of the Item when the Event was recorded */
  authorAssociation?: string | null;
  /** why the Run waits for approval beyond the Loop's `approval:` (the actor cannot write, a public repository) */
  approvalReason?: ApprovalReason | null;
  /** how many Runs led to this Item: 0 for a person's Item, n + 1 for an Item a Run of depth n created */
  chainDepth?: number;
  /** the comment a comments Loop's Event answers */
  comment?: { kind: string; id: number; url: string; author: string | null };
  /** the branch the Run works on when its Loop continues the App's pull request (`continue: same-branch`) */
  branch?: string;
  /** the fingerprints of the Item's authored texts the Event saw (loops/authored-texts.ts): the next Event's new texts are the others */
  texts?: string[];
  /** the Loop's `environment:` (the file's with the Loop's own over it); absent: none declared */
  environment?: EnvironmentSpec;
  /** why a writer reviews the Run's commits before they are pushed (ADR 0058); null or absent: pushed as made */
  review?: ReviewReason | null;
}

/** Who caused a match: the webhook's sender, else the actor of the Item's last timeline event, else its author. */
export interface EventActor {
  login: string;
  /** GitHub's role of the actor on the repository when the Event was recorded */
  permission: string;
  /** "board": the App's bot labeled the Item for a person who moved its card on the Board; "comment": who wrote or edited the comment a comments Loop answers; "operator": who asked for the Run on the dashboard or the API; "origin": who started the Run whose pull request a same-branch Loop continues; "text": who wrote a review, a review thread comment or the body new since the Loop's last Event; "editor": who last edited the body, by GitHub's read */
  source: "webhook" | "timeline" | "author" | "board" | "comment" | "operator" | "origin" | "text" | "editor";
}

export type ApprovalReason =
  | { token: "actor_cannot_write"; login: string; permission: string; needs: string }
  | { token: "public_repository" };

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
  | {
      tag: "Claimed";
      runId: string;
      state: RunStateName;
      opened: boolean;
      superseded: string | null;
    }
  | { tag: "Queued"; behind: string }
  | { tag: "Ignored"; reason: "ignored_event" | "old_generation" }
  | { tag: "Blocked"; reason: ErrorToken; superseded: string | null };

/** A refusal from the admission gate (quotas), asked inside the claim's transaction. */
export interface AdmissionRefusal {
  token: ErrorToken;
  message: string;
}
export type Admission = (sql: Sql, event: EventInput) => Promise<AdmissionRefusal | null>;

/** What the claim decision reads, under the (Loop, Item) lock. */
export interface ClaimSnapshot {
  event: { status: string; ignored: boolean } | null;
  event_run: { id: string; state: RunStateName } | null;
  blocking: (BlockingRun & { reserved_generation: number | null; intent: Intent }) | null;
  generation: number;
  ask: boolean;
  reserved: number;
}

/**
 * The facts of the claim, read under the (Loop, Item) lock, the blocking Run locked too, so a
 * concurrent start or cancel of it waits for this decision and the state read is the latest
 * committed one.
 */
const readClaimSnapshot = async (tx: Sql, e: EventInput): Promise<ClaimSnapshot> =>
  (await first<ClaimSnapshot>(
    tx,
    sql`
WITH budget AS (
  SELECT generation, ask IS NOT NULL AS ask FROM cycle_budgets WHERE item_key = ${e.itemKey}
), blocking AS (
  SELECT runs.id, runs.state, runs.reserved_generation, ${raw(intentSql("be.submission"))} AS intent
    FROM runs LEFT JOIN events be ON be.id = runs.event_id
   WHERE runs.loop = ${e.loop} AND runs.item_key = ${e.itemKey} AND ${raw(RUN_STATE_SQL.isOpen("runs.state"))} LIMIT 1
     FOR UPDATE OF runs
)
SELECT
  (SELECT json_build_object('status', status, 'ignored', ignored_at IS NOT NULL) FROM events WHERE id = ${e.id}) AS event,
  (SELECT json_build_object('id', id, 'state', state) FROM runs WHERE id = ${runIdOf(e.id)}) AS event_run,
  (SELECT row_to_json(blocking) FROM blocking) AS blocking,
  COALESCE((SELECT generation FROM budget), 0) AS generation,
  COALESCE((SELECT ask FROM budget), false) AS ask,
  (SELECT count(*)::int FROM runs WHERE loop = ${e.loop} AND item_key = ${e.itemKey}
     AND reserved_generation = COALESCE((SELECT generation FROM budget), 0)) AS reserved`,
  ))!;

/** The decision's facts, of an Event and what the snapshot read. */
export function claimFacts(event: EventInput, snap: ClaimSnapshot): ClaimFacts {
  const b = snap.blocking;
  return {
    event: { kind: event.kind, generation: event.generation, maxCycles: event.submission.maxCycles, intent: intentOf(event.submission) },
    recorded: snap.event_run
      ? { tag: "Run", runId: snap.event_run.id, state: snap.event_run.state }
      : snap.event?.ignored
        ? { tag: "Ignored" }
        : snap.event
          ? { tag: "Undecided" }
          : null,
    blocking: b ? { id: b.id, state: b.state, reservedGeneration: b.reserved_generation, intent: b.intent } : null,
    generation: snap.generation,
    ask: snap.ask,
    reserved: snap.reserved,
  };
}

/**
 * Records an Event in the ledger and decides what it does (lib/engine/claim-decision.ts decideClaim):
 * Claimed (a Run exists for it, or a new one opens), Queued behind a Running Run, Ignored, or
 * Blocked by the cycle budget or a quota. An unstarted Run of the same Loop and Item is
 * superseded when the Event replaces what it asked for (a newer read of the Item, an edit of its
 * comment: lib/engine/claim-decision.ts `replaces`), and that supersede commits even when the
 * budget then blocks; a person's request is never replaced by another's, the Event queues behind it.
 *
 * One transaction, serialized per (Loop, Item) by an advisory lock taken with BEGIN: lock,
 * read the facts, decide, one guarded write. Every path that opens a Run takes the same lock
 * (claimQueued too), so two claims of one Item never race.
 */
export async function recordAndClaim(db: Db, event: EventInput, admission?: Admission): Promise<ClaimResult> {
  const result = await transaction(
    db,
    async (tx): Promise<ClaimResult> => {
      const decision = decideClaim(claimFacts(event, await readClaimSnapshot(tx, event)));
      switch (decision.tag) {
        case "Recorded":
          return { tag: "Claimed", runId: decision.runId, state: decision.state, opened: false, superseded: null };
        case "Ignore":
          if (decision.record) await writeClaim(tx, event, { status: "Ignored", reason: decision.reason });
          return { tag: "Ignored", reason: decision.reason };
        case "Queue":
          await writeClaim(tx, event, { status: "Queued", reason: null, behind: decision.behind });
          return { tag: "Queued", behind: decision.behind };
        case "Block":
        case "Open":
          return openOrBlock(tx, event, decision, admission);
      }
    },
    { lockKey: loopItemLock(event.loop, event.itemKey) },
  );
  if (result.tag === "Claimed" && result.opened) countRunTransition(result.state);
  if ((result.tag === "Claimed" || result.tag === "Blocked") && result.superseded) countRunTransition("Canceled");
  return result;
}

/** A decision that opens a Run or is blocked by the budget. */
export type Opening = ReturnType<typeof decideOpening>;

/**
 * Carries out an Opening: opens the Event's Run if the admission gate allows it, else records
 * why not; the decision's superseded Run is canceled either way, in the same statement that
 * records the Event.
 */
export async function openOrBlock(tx: Sql, event: EventInput, decision: Opening, admission?: Admission): Promise<ClaimResult> {
  const supersededId = decision.supersede?.id ?? null;
  if (decision.tag === "Block") {
    await askForBudget(tx, event, decision.generation, decision.reserved);
    await writeClaim(tx, event, { status: "Blocked", reason: "cycle_budget_exhausted", superseded: supersededId });
    return { tag: "Blocked", reason: "cycle_budget_exhausted", superseded: supersededId };
  }
  const refusal = admission ? await admission(tx, event) : null;
  if (refusal) {
    await writeClaim(tx, event, { status: "Blocked", reason: refusal.token, superseded: supersededId });
    return { tag: "Blocked", reason: refusal.token, superseded: supersededId };
  }
  const runId = runIdOf(event.id);
  await writeClaim(tx, event, {
    status: "Claimed",
    reason: null,
    superseded: supersededId,
    open: { runId, reservedGeneration: decision.reservedGeneration },
  });
  await markRunsChanged(tx, [runId]);
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

/**
 * SQL: continue with newest. The claim's Event, received at `receivedAt` (an expression: its
 * received_at as recorded; NULL: nothing is superseded), supersedes the Events of its Loop and
 * Item queued before it (received no later; itself aside) whose ask it replaces (an older read
 * of the Item; an older version of its comment): they are ignored as superseded_by_newer, so
 * none of them opens a Run on stale input once the Run in front of them closed. A person's
 * request queued before it keeps its turn (ADR 0073).
 */
const supersedeQueuedSql = (event: EventInput, receivedAt: Statement): Statement =>
  ignoreQueuedSql(
    { loop: sql`${event.loop}`, itemKey: sql`${event.itemKey}` },
    "superseded_by_newer",
    sql`id <> ${event.id} AND received_at <= ${receivedAt} AND ${replacedBySql("events.submission", intentOf(event.submission))}`,
  );

/**
 * One statement: supersedes the unstarted Run (when the decision says so), opens the new Run,
 * and records the Event with its status; the Event supersedes the Events queued before it that
 * it replaces (supersedeQueuedSql), whether it opens its Run, queues, or the budget or the gate
 * blocks it. The open-Run constraint is checked at COMMIT, so the order of the two Run writes
 * inside the statement does not matter.
 */
async function writeClaim(tx: Sql, event: EventInput, write: ClaimWrite): Promise<void> {
  const s = event.submission;
  const submission = JSON.stringify(s);
  const runId = write.open?.runId ?? null;
  // an ignored Event replaces nothing
  const supersedesQueued = write.status !== "Ignored";
  const row = await first<{ superseded: boolean; superseded_hooked: boolean | null }>(
    tx,
    sql`
WITH sup AS (
  UPDATE runs AS s SET state = ${literal(TRANSITIONS.supersede.to)}, cancel_reason = 'Superseded', superseded_by = ${event.id}, reserved_generation = NULL,
         ended_at = now(), updated_at = now()
   WHERE s.id = ${write.superseded ?? null} AND s.state::text = ANY(${TRANSITIONS.supersede.from})
  RETURNING s.id, ${raw(hasOutboundHooks("s"))} AS hooked
), behind AS (
  UPDATE runs SET queued_behind = true WHERE id = ${write.behind ?? null} AND NOT queued_behind
), run AS (
  INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, reserved_generation, agent, prompt,
                    approval_required, received_at, model, review_reason)
  SELECT ${runId}, ${event.id}, ${event.loop}, ${event.repo}, ${event.itemKey}, ${event.number}, 'Pending', ${write.open?.reservedGeneration ?? null},
         ${s.agent}, ${s.prompt}, ${s.approvalRequired}, COALESCE((SELECT received_at FROM events WHERE id = ${event.id}), now()), ${submission}::jsonb->>'model',
         NULLIF(${submission}::jsonb->'review', 'null'::jsonb)
   WHERE ${runId}::text IS NOT NULL
  RETURNING id
), recorded AS (
  INSERT INTO events (id, kind, loop, repo, item_key, number, content_hash, generation, status, reason, submission, run_id)
  VALUES (${event.id}, ${event.kind}, ${event.loop}, ${event.repo}, ${event.itemKey}, ${event.number}, ${event.contentHash}, ${event.generation},
          ${write.status}, ${write.reason}, ${submission}, (SELECT id FROM run))
  ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, reason = EXCLUDED.reason,
    run_id = COALESCE(EXCLUDED.run_id, events.run_id)
  RETURNING received_at
), queue_superseded AS (${supersedeQueuedSql(event, sql`(SELECT received_at FROM recorded WHERE ${supersedesQueued}::boolean)`)}
)
SELECT (SELECT hooked FROM sup) AS superseded_hooked, EXISTS (SELECT 1 FROM sup) AS superseded`,
  );
  if (write.superseded && row?.superseded) {
    await markRunsChanged(tx, [write.superseded]);
    if (row.superseded_hooked) await recordTerminalDeliveries(tx, write.superseded);
  }
}

/** Stores the Item's budget ask (once) so an operator sees it in Needs you. */
async function askForBudget(tx: Sql, event: EventInput, generation: number, reserved: number): Promise<void> {
  const ask = {
    askId: `${event.itemKey}#${generation}`,
    loop: event.loop,
    reserved,
    maxCycles: event.submission.maxCycles,
    eventId: event.id,
  };
  await query(
    tx,
    sql`INSERT INTO cycle_budgets (item_key, repo, generation, ask, asked_at) VALUES (${event.itemKey}, ${event.repo}, ${generation}, ${JSON.stringify(ask)}, now())
        ON CONFLICT (item_key) DO UPDATE SET ask = COALESCE(cycle_budgets.ask, EXCLUDED.ask),
          asked_at = COALESCE(cycle_budgets.asked_at, EXCLUDED.asked_at)`,
  );
}
