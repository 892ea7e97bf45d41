import { countRunTransition } from "../metrics/metrics";
import { budgetAdmits, decideClaim, type BlockingRun } from "../engine/claim";
import { runId as runIdOf } from "../engine/ids";
import { FROM, type RunStateName } from "../engine/run-state";
import { repoMeteringSql, type RepoMetering } from "../metering/admission-facts";
import { countOpenSql, openScopes, openScopesSql } from "../metering/usage-counters";
import { hasOutboundHooks, recordTerminalDeliveries } from "../outbound/record-terminal-deliveries";
import type { Db } from "./db";
import { loopItemLock } from "./locks";
import { inPhase } from "./run-phase";
import type { OpenedRun } from "./run-snapshot";
import { announceRunsChanged, markRunsChanged } from "./run-changed";
import { transaction, withStoreRetry, type Sql } from "./transaction";

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
}

/** Who caused a match: the webhook's sender, else the actor of the Item's last timeline event, else its author. */
export interface EventActor {
  login: string;
  /** GitHub's role of the actor on the repository when the Event was recorded */
  permission: string;
  /** "board": the App's bot labeled the Item for a person who moved its card on the Board; "comment": who wrote or edited the comment a comments Loop answers; "operator": who asked for the Run on the dashboard or the API; "origin": who started the Run whose pull request a same-branch Loop continues */
  source: "webhook" | "timeline" | "author" | "board" | "comment" | "operator" | "origin";
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
      /** the Run as this claim opened it, when it did so in one statement (its first job carries it) */
      openedRun?: OpenedRun;
    }
  | { tag: "Queued"; behind: string }
  | { tag: "Ignored"; reason: "ignored_event" | "old_generation" }
  | { tag: "Blocked"; reason: string; superseded: string | null };

/** A refusal from the admission gate (quotas), asked inside the claim's transaction. */
export interface AdmissionRefusal {
  token: string;
  message: string;
}
export type Admission = (sql: Sql, event: EventInput) => Promise<AdmissionRefusal | null>;

/** What the claim decision reads, in one statement. */
export interface ClaimSnapshot {
  event: { status: string; ignored: boolean } | null;
  event_run: { id: string; state: RunStateName } | null;
  blocking: (BlockingRun & { reserved_generation: number | null }) | null;
  generation: number;
  ask: boolean;
  reserved: number;
  metering: RepoMetering | null;
}

/**
 * "locked": under the (Loop, Item) lock, the blocking Run locked too, so a concurrent start or
 * cancel of it waits for this decision and the state read is the latest committed one.
 * "read": the first, unlocked look of an optimistic claim.
 */
const snapshotSql = (mode: "locked" | "read") => `
WITH budget AS (
  SELECT generation, ask IS NOT NULL AS ask FROM cycle_budgets WHERE item_key = $3
), blocking AS (
  SELECT id, state, reserved_generation FROM runs WHERE loop = $2 AND item_key = $3 AND ${inPhase("runs", "Active", "Waiting")} LIMIT 1
  ${mode === "locked" ? "FOR UPDATE" : ""}
)
SELECT
  (SELECT json_build_object('status', status, 'ignored', ignored_at IS NOT NULL) FROM events WHERE id = $1) AS event,
  (SELECT json_build_object('id', id, 'state', state) FROM runs WHERE id = $5) AS event_run,
  (SELECT row_to_json(blocking) FROM blocking) AS blocking,
  COALESCE((SELECT generation FROM budget), 0) AS generation,
  COALESCE((SELECT ask FROM budget), false) AS ask,
  (SELECT count(*)::int FROM runs WHERE loop = $2 AND item_key = $3
     AND reserved_generation = COALESCE((SELECT generation FROM budget), 0)) AS reserved,
  ${repoMeteringSql("$4")} AS metering`;

const SNAPSHOT = (mode: "locked" | "read") => ({ name: `atelier-claim-snapshot-${mode}`, text: snapshotSql(mode) });

/** The snapshot's parameters, $1 to $5 of the reads and of OPEN_IF_FRESH. */
const snapshotValues = (e: EventInput): unknown[] => [e.id, e.loop, e.itemKey, e.repo, runIdOf(e.id)];

/** Reads what the claim decision needs (a prepared statement). */
async function claimSnapshot(sql: Sql | Db["pool"], event: EventInput, mode: "locked" | "read"): Promise<ClaimSnapshot> {
  const { rows } = await sql.query<ClaimSnapshot>({ ...SNAPSHOT(mode), values: snapshotValues(event) });
  return rows[0]!;
}

/** What an Event already recorded says, with no decision to take: its Run, or its having been ignored. */
function recordedClaim(snap: ClaimSnapshot): ClaimResult | null {
  if (snap.event_run) return { tag: "Claimed", runId: snap.event_run.id, state: snap.event_run.state, opened: false, superseded: null };
  if (snap.event?.ignored) return { tag: "Ignored", reason: "ignored_event" };
  return null;
}

/**
 * Records an Event in the ledger and decides what it does: Claimed (a Run exists for it, or a
 * new one opens), Queued behind a Running Run, Ignored, or Blocked by the cycle budget or a
 * quota. An unstarted Run of the same Loop and Item is superseded, and that supersede commits
 * even when the budget then blocks.
 *
 * Optimistic first: on an unlocked read, a new Event with nothing open on its Item, within its
 * budget and with nothing for the gate to ask, opens its Run in one statement (openAtOnce),
 * whose constraints refuse what a concurrent claim changed meanwhile. Everything else — and a
 * refused open — is decided again in one transaction serialized per (Loop, Item).
 *
 * The read itself opens the Run when the Item is fresh (openIfFresh): the decision is taken
 * beforehand on an Item with no history, and the read writes only if that is what it finds.
 */
export async function recordAndClaim(db: Db, event: EventInput, admission?: Admission): Promise<ClaimResult> {
  const result = await claimOnce(db, event, admission);
  if (result.tag === "Claimed" && result.opened) countRunTransition(result.state);
  if ((result.tag === "Claimed" || result.tag === "Blocked") && result.superseded) countRunTransition("Canceled");
  return result;
}

async function claimOnce(db: Db, event: EventInput, admission?: Admission): Promise<ClaimResult> {
  const item = `${event.loop}\u0000${event.itemKey}`;
  const fresh = !historied.has(item) && opensAtOnce(event, FRESH, admission) ? await openIfFresh(db, event, admission) : null;
  if (fresh?.tag === "Opened") return fresh.claim;
  const seen = fresh?.seen ?? (await claimSnapshot(db.pool, event, "read"));
  noteHistory(item, hasHistory(seen));
  const recorded = recordedClaim(seen);
  if (recorded) return recorded;
  const atOnce = opensAtOnce(event, seen, admission);
  if (atOnce) {
    const opened = await openAtOnce(db, event, seen, atOnce.superseded, admission);
    if (opened) return opened;
  }
  return againIfClaimedMeanwhile(() => lockedClaim(db, event, admission));
}

/** An Item with something the fresh open would not find: an open Run, a later generation, an ask, a reservation. */
const hasHistory = (seen: ClaimSnapshot): boolean => seen.blocking !== null || seen.generation !== 0 || seen.ask || seen.reserved !== 0;

/**
 * The (Loop, Item) pairs whose last claim in this process found history (at most 4,096, the
 * oldest forgotten first): their next claim reads first instead of trying openIfFresh, whose
 * writes would be prepared for nothing. A read that finds the Item fresh again forgets it. It
 * only picks which statement goes first: the outcome is the same either way.
 */
const historied = new Set<string>();
const HISTORIED_MAX = 4096;

function noteHistory(item: string, history: boolean): void {
  historied.delete(item);
  if (!history) return;
  historied.add(item);
  if (historied.size > HISTORIED_MAX) historied.delete(historied.values().next().value!);
}

/** What the claim reads of an Item with no history: no Event, no open Run, nothing reserved or asked, no gate. */
const FRESH: ClaimSnapshot = { event: null, event_run: null, blocking: null, generation: 0, ask: false, reserved: 0, metering: null };

/**
 * The claim's read, which also opens the Event's Run and records the Event when it reads what
 * FRESH says, on which the caller decided to open: no Event recorded, no history (nothing
 * open on the Item, generation 0 with nothing reserved or asked: hasHistory in SQL), and, where
 * the gate is asked, nothing for it to ask (the open is then counted). `metered`: an admission
 * gate is given.
 */
const OPEN_IF_FRESH = (metered: boolean) => ({
  name: `atelier-claim-open-if-fresh${metered ? "-metered" : ""}`,
  text: `
WITH seen AS (${snapshotSql("read")}
), run AS (
  INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, reserved_generation, agent, prompt,
                    approval_required, received_at, model)
  SELECT $5, $1, $2, $4, $3, $7, 'Pending', $10, $11, $12, $13, now(), $14::jsonb->>'model' FROM seen
   WHERE seen.event IS NULL AND seen.event_run IS NULL AND seen.blocking IS NULL
     AND seen.generation = 0 AND NOT seen.ask AND seen.reserved = 0
     AND NOT (${metered} AND COALESCE((seen.metering->>'gated')::boolean, false))
  RETURNING xmin::text AS version
), counted AS (${countOpenSql(`(SELECT ${openScopesSql("(seen.metering->>'installationId')", "$4")} FROM seen, run WHERE ${metered} AND seen.metering IS NOT NULL)`)}
), recorded AS (
  INSERT INTO events (id, kind, loop, repo, item_key, number, content_hash, generation, status, reason, submission, run_id)
  SELECT $1, $6, $2, $4, $3, $7, $8, $9, 'Claimed', NULL, $14, $5 FROM run
)
SELECT seen.*, (SELECT version FROM run) AS opened_version FROM seen`,
});

/**
 * OPEN_IF_FRESH: the Run opened, or what was read instead, for the decision to be taken on it;
 * null when a concurrent claim of the same Item or Event refused the open.
 */
async function openIfFresh(
  db: Db,
  event: EventInput,
  admission: Admission | undefined,
): Promise<{ tag: "Opened"; claim: ClaimResult } | { tag: "Read"; seen: ClaimSnapshot } | null> {
  const s = event.submission;
  try {
    const { rows } = await withStoreRetry(() =>
      db.pool.query<ClaimSnapshot & { opened_version: string | null }>({
        ...OPEN_IF_FRESH(admission !== undefined),
        values: [
          ...snapshotValues(event),
          event.kind,
          event.number,
          event.contentHash,
          event.generation,
          s.maxCycles === null ? null : 0,
          s.agent,
          s.prompt,
          s.approvalRequired,
          JSON.stringify(s),
        ],
      }),
    );
    const { opened_version: version, ...seen } = rows[0]!;
    if (version === null) return { tag: "Read", seen };
    return { tag: "Opened", claim: openedInOneStatement(db, event, version, seen.metering, null) };
  } catch (err) {
    if (isClaimedMeanwhile(err)) return null;
    throw err;
  }
}

/** A Run a single statement opened (announced): its first job carries it as written (`openedRun`). */
function openedInOneStatement(db: Db, event: EventInput, version: string, metering: RepoMetering | null, superseded: string | null): ClaimResult {
  const runId = runIdOf(event.id);
  announceRunsChanged(db.pool, superseded ? [runId, superseded] : [runId]);
  const openedRun = { version, repo: event.repo, approvalRequired: event.submission.approvalRequired, admissionGated: metering?.gated ?? false };
  return { tag: "Claimed", runId, state: "Pending", opened: true, superseded, openedRun };
}

/** How many times a locked claim is taken again after an optimistic open beat it. */
const LOCKED_TRIES = 5;

/**
 * Runs a claim decided under the (Loop, Item) lock, again when an optimistic open of the same
 * Item (or Event) committed between its read and its commit: the constraints refused it, and
 * the decision is taken again on what that open did.
 */
export async function againIfClaimedMeanwhile<T>(claim: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await claim();
    } catch (err) {
      if (tries < LOCKED_TRIES && isClaimedMeanwhile(err)) continue;
      throw err;
    }
  }
}

/** The claim decided under the (Loop, Item) lock, in one transaction. */
function lockedClaim(db: Db, event: EventInput, admission: Admission | undefined): Promise<ClaimResult> {
  return transaction(
    db,
    async (sql) => {
      const snap = await claimSnapshot(sql, event, "locked");
      const recordedMeanwhile = recordedClaim(snap);
      if (recordedMeanwhile) return recordedMeanwhile;
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

/**
 * Whether an unlocked read lets the Event open its Run at once — new, within budget, nothing for
 * the gate to ask, and nothing open on its Item but an unstarted Run it supersedes — and which.
 */
function opensAtOnce(event: EventInput, snap: ClaimSnapshot, admission: Admission | undefined): { superseded: Superseded | null } | null {
  if (snap.event) return null;
  if (event.kind === "item" && event.generation < snap.generation) return null;
  if (admission && snap.metering?.gated) return null;
  const decision = decideClaim(snap.blocking);
  if (decision.tag === "QueueEvent") return null;
  const superseded = decision.tag === "SupersedeRun" ? { id: decision.runId, reservedGeneration: snap.blocking!.reserved_generation } : null;
  const { maxCycles } = event.submission;
  if (maxCycles !== null && !budgetAdmits(reservedAfter(snap, superseded), maxCycles, snap.ask)) return null;
  return { superseded };
}

/** The Runs holding the Item's current generation once `superseded` (unstarted) gave its reservation back. */
const reservedAfter = (snap: Pick<ClaimSnapshot, "generation" | "reserved">, superseded: Superseded | null): number =>
  superseded?.reservedGeneration === snap.generation ? snap.reserved - 1 : snap.reserved;

/**
 * Supersedes the unstarted Run the read found (when it found one), opens the Event's Run and
 * records the Event, in one statement, only while the Item's budget is as read and the
 * superseded Run is still unstarted with no outbound hook listening to it. The Event's key,
 * the Run's key and the one-open-Run constraint refuse it when a concurrent claim recorded the
 * Event or opened a Run meanwhile. Charges the open on the month's counters when the gate
 * counts this repository.
 */
const OPEN_AT_ONCE = (shape: { supersede: boolean; budget: boolean }) => ({
  // One prepared statement per shape, its branches switched by literals the planner folds away:
  // a generic plan then costs what a custom one does, and Postgres stops planning each call.
  name: `atelier-claim-open-at-once-${shape.supersede ? "s" : "n"}${shape.budget ? "b" : "n"}`,
  text: `
WITH sup AS (
  UPDATE runs AS s SET state = 'Canceled', cancel_reason = 'Superseded', superseded_by = $1, reserved_generation = NULL,
         ended_at = now(), updated_at = now()
   WHERE ${shape.supersede} AND s.id = $18 AND s.state::text = ANY($19) AND NOT ${hasOutboundHooks("s")}
  RETURNING s.id
), run AS (
  INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, reserved_generation, agent, prompt,
                    approval_required, received_at, model)
  SELECT $10, $1, $3, $4, $5, $6, 'Pending', $11, $12, $13, $14, now(), $9::jsonb->>'model'
   WHERE (NOT ${shape.supersede} OR EXISTS (SELECT 1 FROM sup))
     AND (NOT ${shape.budget}
          OR (COALESCE((SELECT generation FROM cycle_budgets WHERE item_key = $5), 0) = $15
              AND NOT COALESCE((SELECT ask IS NOT NULL FROM cycle_budgets WHERE item_key = $5), false)
              AND (SELECT count(*) FROM runs WHERE loop = $3 AND item_key = $5 AND reserved_generation = $15) = $16))
  RETURNING id, xmin::text AS version
), counted AS (${countOpenSql("(SELECT $17::text[] FROM run)")}
)
INSERT INTO events (id, kind, loop, repo, item_key, number, content_hash, generation, status, reason, submission, run_id)
SELECT $1, $2, $3, $4, $5, $6, $7, $8, 'Claimed', NULL, $9, id FROM run
RETURNING (SELECT version FROM run) AS version`,
});

/** The Event's own columns, $1 to $8 of both claim writes (id, kind, loop, repo, item_key, number, content_hash, generation). */
const eventValues = (e: EventInput): unknown[] => [e.id, e.kind, e.loop, e.repo, e.itemKey, e.number, e.contentHash, e.generation];

/** Postgres refusals of a claim that another one beat: a key taken (23505), a second open Run (23P01). */
const CLAIMED_MEANWHILE = new Set(["23505", "23P01"]);
const isClaimedMeanwhile = (err: unknown): boolean => CLAIMED_MEANWHILE.has((err as { code?: string } | null)?.code ?? "");

async function openAtOnce(
  db: Db,
  event: EventInput,
  snap: ClaimSnapshot,
  superseded: Superseded | null,
  admission: Admission | undefined,
): Promise<ClaimResult | null> {
  const s = event.submission;
  const runId = runIdOf(event.id);
  const counted = admission && snap.metering ? openScopes(snap.metering.installationId, event.repo) : [];
  try {
    const { rows } = await withStoreRetry(() =>
      db.pool.query<{ version: string }>({
        ...OPEN_AT_ONCE({ supersede: superseded !== null, budget: s.maxCycles !== null }),
        values: [
          ...eventValues(event),
          JSON.stringify(s),
          runId,
          s.maxCycles === null ? null : snap.generation,
          s.agent,
          s.prompt,
          s.approvalRequired,
          snap.generation,
          snap.reserved,
          counted,
          superseded?.id ?? null,
          FROM.supersede,
        ],
      }),
    );
    if (!rows[0]) return null; // the budget or the superseded Run changed meanwhile
    return openedInOneStatement(db, event, rows[0].version, snap.metering, superseded?.id ?? null);
  } catch (err) {
    if (isClaimedMeanwhile(err)) return null;
    throw err;
  }
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
  const reserved = reservedAfter(snap, superseded);
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
  RETURNING s.id, ${hasOutboundHooks("s")} AS hooked
), behind AS (
  UPDATE runs SET queued_behind = true WHERE id = $19 AND NOT queued_behind
), run AS (
  INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, reserved_generation, agent, prompt,
                    approval_required, received_at, model)
  SELECT $12, $1, $3, $4, $5, $6, 'Pending', $13, $14, $15, $16,
         COALESCE((SELECT received_at FROM events WHERE id = $1), now()), $11::jsonb->>'model'
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
      ...eventValues(event),
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
