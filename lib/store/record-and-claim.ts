import { countRunTransition } from "../metrics/metrics";
import { decideClaim, type BlockingRun, type ClaimDecision, type ClaimFacts, type decideOpening } from "../engine/claim";
import { runId as runIdOf } from "../engine/ids";
import { TRANSITIONS, UNSTARTED, type RunStateName } from "../engine/run-state";
import { DEFAULT_REPO_OPEN_RATE_PER_MINUTE, repoMeteringSql, takeDefaultRateTokenSql, type RepoMetering } from "./repo-metering";
import { countOpenSql, repoScopeSql } from "./usage-counters";
import { hasOutboundHooks, recordTerminalDeliveries } from "./terminal-deliveries";
import type { ErrorToken } from "../error-tokens";
import type { Db } from "./db";
import { atOnceSql } from "./claim-sql";
import { loopItemLock } from "./locks";
import { inPhase } from "./run-phase";
import { refreshCurrentRun } from "./items";
import { ignoreQueuedSql } from "./revoke";
import type { OpenedRun } from "./run-snapshot";
import { announceRunsChanged, markRunsChanged } from "./run-changed";
import { firstPrepared, literal, prepared, query, raw, sql, type Queryable, type Statement } from "./sql";
import { transaction, type Sql } from "./transaction";
import { groupCommit, perObject } from "./group-commit";

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
  | { tag: "Blocked"; reason: ErrorToken; superseded: string | null };

/** A refusal from the admission gate (quotas), asked inside the claim's transaction. */
export interface AdmissionRefusal {
  token: ErrorToken;
  message: string;
}
export type Admission = (sql: Sql, event: EventInput) => Promise<AdmissionRefusal | null>;

/** What the claim decision reads, in one statement. */
export interface ClaimSnapshot {
  event: { status: string; ignored: boolean } | null;
  event_run: { id: string; state: RunStateName } | null;
  blocking: (BlockingRun & { reserved_generation: number | null; hooked: boolean }) | null;
  generation: number;
  ask: boolean;
  reserved: number;
  metering: RepoMetering | null;
}

/** What the claim snapshot looks an Event up by: values, or columns of the claim's calls. */
interface EventKeys {
  id: Statement;
  runId: Statement;
  loop: Statement;
  itemKey: Statement;
  repo: Statement;
}

const keysOf = (e: EventInput): EventKeys => ({
  id: sql`${e.id}`,
  runId: sql`${runIdOf(e.id)}`,
  loop: sql`${e.loop}`,
  itemKey: sql`${e.itemKey}`,
  repo: sql`${e.repo}`,
});

/**
 * "locked": under the (Loop, Item) lock, the blocking Run locked too, so a concurrent start or
 * cancel of it waits for this decision and the state read is the latest committed one.
 * "read": the look of the optimistic claim, in the statement that acts on it.
 */
const snapshotSql = (mode: "locked" | "read", e: EventKeys): Statement => sql`
WITH budget AS (
  SELECT generation, ask IS NOT NULL AS ask FROM cycle_budgets WHERE item_key = ${e.itemKey}
), blocking AS (
  SELECT id, state, reserved_generation, ${raw(hasOutboundHooks("runs"))} AS hooked
    FROM runs WHERE loop = ${e.loop} AND item_key = ${e.itemKey} AND ${raw(inPhase("runs", "Active", "Waiting"))} LIMIT 1
  ${raw(mode === "locked" ? "FOR UPDATE" : "")}
)
SELECT
  (SELECT json_build_object('status', status, 'ignored', ignored_at IS NOT NULL) FROM events WHERE id = ${e.id}) AS event,
  (SELECT json_build_object('id', id, 'state', state) FROM runs WHERE id = ${e.runId}) AS event_run,
  (SELECT row_to_json(blocking) FROM blocking) AS blocking,
  COALESCE((SELECT generation FROM budget), 0) AS generation,
  COALESCE((SELECT ask FROM budget), false) AS ask,
  (SELECT count(*)::int FROM runs WHERE loop = ${e.loop} AND item_key = ${e.itemKey}
     AND reserved_generation = COALESCE((SELECT generation FROM budget), 0)) AS reserved,
  ${repoMeteringSql(e.repo)} AS metering`;

/** The decision's facts, of an Event and what the snapshot read; `metered`: the admission gate is given. */
export function claimFacts(event: EventInput, snap: ClaimSnapshot, metered: boolean): ClaimFacts {
  const b = snap.blocking;
  return {
    event: { kind: event.kind, generation: event.generation, maxCycles: event.submission.maxCycles },
    recorded: snap.event_run
      ? { tag: "Run", runId: snap.event_run.id, state: snap.event_run.state }
      : snap.event?.ignored
        ? { tag: "Ignored" }
        : snap.event
          ? { tag: "Undecided" }
          : null,
    blocking: b ? { id: b.id, state: b.state, reservedGeneration: b.reserved_generation, hooked: b.hooked } : null,
    generation: snap.generation,
    ask: snap.ask,
    reserved: snap.reserved,
    gated: metered && (snap.metering?.gated ?? false),
  };
}

/**
 * Records an Event in the ledger and decides what it does (lib/engine/claim.ts decideClaim):
 * Claimed (a Run exists for it, or a new one opens), Queued behind a Running Run, Ignored, or
 * Blocked by the cycle budget or a quota. An unstarted Run of the same Loop and Item is
 * superseded, and that supersede commits even when the budget then blocks.
 *
 * Optimistic first: one statement (CLAIM_AT_ONCE) reads the facts and, where the decision
 * opens a Run at once (opensAtOnce: its conditions in SQL, claim-sql.ts), supersedes, opens
 * and records in that same statement; its constraints refuse what a concurrent claim changed
 * meanwhile. What it read and did not act on — and a refused open — is decided again in one
 * transaction serialized per (Loop, Item).
 */
export async function recordAndClaim(db: Db, event: EventInput, admission?: Admission): Promise<ClaimResult> {
  const result = await claimOnce(db, event, admission);
  if (result.tag === "Claimed" && result.opened) countRunTransition(result.state);
  if ((result.tag === "Claimed" || result.tag === "Blocked") && result.superseded) countRunTransition("Canceled");
  return result;
}

async function claimOnce(db: Db, event: EventInput, admission?: Admission): Promise<ClaimResult> {
  const atOnce = await claimAtOnce(db, event, admission !== undefined);
  if (atOnce.tag !== "Undecided") return atOnce;
  return againIfClaimedMeanwhile(() => lockedClaim(db, event, admission));
}

/** What the optimistic claim left to the locked one: it wrote nothing. */
type Undecided = { tag: "Undecided" };
const UNDECIDED: Undecided = { tag: "Undecided" };

type Writeless = Extract<ClaimDecision, { tag: "Recorded" }> | (Extract<ClaimDecision, { tag: "Ignore" }> & { record: false });

/** A decision that needs no write: the Event's Run, or its having been ignored before. */
const isWriteless = (d: ClaimDecision): d is Writeless => d.tag === "Recorded" || (d.tag === "Ignore" && !d.record);

function recordedClaim(d: Writeless): ClaimResult {
  return d.tag === "Recorded" ? { tag: "Claimed", runId: d.runId, state: d.state, opened: false, superseded: null } : { tag: "Ignored", reason: d.reason };
}

/**
 * SQL (a CTE of a claim's statement): continue with newest. The claim's Event, received at
 * `receivedAt` (an expression: its received_at as recorded; NULL: nothing is superseded),
 * supersedes the Events of its Loop and Item queued before it (received no later; itself
 * aside): they are ignored as superseded_by_newer, so none of them opens a Run on stale input
 * once the Run in front of them closed. A Run opened for an Event, whatever path opens it,
 * leaves no older Event queued.
 */
const supersedeQueuedSql = (event: EventInput, receivedAt: Statement): Statement =>
  ignoreQueuedSql(keysOf(event), "superseded_by_newer", sql`id <> ${event.id} AND received_at <= ${receivedAt}`);

/** The columns of the claims' input (one row per Event: claimInputOf). */
const CALL_COLUMNS = `k int, id text, kind text, loop text, repo text, item_key text, number int, content_hash text, generation int,
  max_cycles int, submission jsonb, run_id text`;

const claimInputOf = (e: EventInput, k: number) => ({
  k,
  id: e.id,
  kind: e.kind,
  loop: e.loop,
  repo: e.repo,
  item_key: e.itemKey,
  number: e.number,
  content_hash: e.contentHash,
  generation: e.generation,
  max_cycles: e.submission.maxCycles,
  submission: e.submission,
  run_id: runIdOf(e.id),
});

/** The snapshot's keys, as columns of the claims' input. */
const CALL_KEYS: EventKeys = { id: raw("calls.id"), runId: raw("calls.run_id"), loop: raw("calls.loop"), itemKey: raw("calls.item_key"), repo: raw("calls.repo") };

/**
 * The optimistic claim of one Event or several (group-committed: ADR 0030), one statement: for
 * each Event it reads the facts (snapshotSql "read") and, when opensAtOnce holds of them
 * (atOnceSql), takes a token of the repository's default open rate where the gate counts this
 * repository (no token: nothing is written for that Event here, and the locked claim asks the
 * gate), supersedes the unstarted Run found (still unstarted, no outbound hook listening), opens
 * the Event's Run, records the Event and charges the open on the month's counters. A supersede
 * so always comes with the open of its heir, whose insert hands the Item's current Run over
 * (migration 20261204020000). The token is taken before the supersede: a blocking Run that
 * starts between this statement's read and its write costs it a token and opens nothing (the
 * locked claim then queues the Event). The Event recorded supersedes the Events queued before
 * it (continue with newest, as supersedeQueuedSql). The Events of one statement are of
 * distinct Items and, where it is metered, of distinct repositories (the group commit's key):
 * no Item, counter or rate bucket is written twice by one statement.
 * `metered`: the admission gate is given (without it nothing is counted, and the statement has
 * no counting part). One prepared statement per value of it.
 */
function claimsAtOnceSql(events: readonly EventInput[], metered: boolean): Statement {
  const counted = metered
    ? sql` counted AS (${countOpenSql(raw("go.repo"), raw("go JOIN run ON run.id = go.run_id WHERE go.metering IS NOT NULL"))}
),`
    : raw("");
  // a registered repository's default open rate: the open takes its token, or does not happen
  const rated = metered && DEFAULT_REPO_OPEN_RATE_PER_MINUTE > 0;
  const took = rated
    ? sql` took AS (${takeDefaultRateTokenSql(raw("go.repo"), raw("go WHERE go.metering IS NOT NULL"))}
),`
    : raw("");
  const tokenTaken = rated ? sql` AND (go.metering IS NULL OR EXISTS (SELECT 1 FROM took WHERE took.scope = ${repoScopeSql(raw("go.repo"))}))` : raw("");
  const conditions = { kind: raw("calls.kind"), generation: raw("calls.generation"), maxCycles: raw("calls.max_cycles"), unstarted: UNSTARTED, metered };
  return sql`
WITH calls AS (
  SELECT * FROM json_to_recordset(${JSON.stringify(events.map(claimInputOf))}::json) AS c(${raw(CALL_COLUMNS)})
), seen AS (
  SELECT calls.k, s.* FROM calls CROSS JOIN LATERAL (${snapshotSql("read", CALL_KEYS)}) AS s
), go AS (
  SELECT calls.*, seen.blocking, seen.generation AS seen_generation, seen.metering FROM seen JOIN calls ON calls.k = seen.k
   WHERE ${atOnceSql("seen", conditions)}
),${took} sup AS (
  UPDATE runs AS s SET state = ${literal(TRANSITIONS.supersede.to)}, cancel_reason = 'Superseded', superseded_by = go.id, reserved_generation = NULL,
         ended_at = now(), updated_at = now()
    FROM go
   WHERE s.id = ANY (ARRAY(SELECT blocking->>'id' FROM go)) AND s.id = go.blocking->>'id'
     AND s.state::text = ANY(${literal(`{${TRANSITIONS.supersede.from.join(",")}}`)}::text[])${tokenTaken}
  RETURNING s.id, go.k
), run AS (
  INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, reserved_generation, agent, prompt,
                    approval_required, received_at, model)
  SELECT go.run_id, go.id, go.loop, go.repo, go.item_key, go.number, 'Pending', CASE WHEN go.max_cycles IS NOT NULL THEN go.seen_generation END,
         go.submission->>'agent', go.submission->>'prompt', (go.submission->>'approvalRequired')::boolean, now(), go.submission->>'model'
    FROM go WHERE (go.blocking IS NULL OR EXISTS (SELECT 1 FROM sup WHERE sup.k = go.k))${tokenTaken}
   ORDER BY go.run_id
  RETURNING id, xmin::text AS version
),${counted} recorded AS (
  INSERT INTO events (id, kind, loop, repo, item_key, number, content_hash, generation, status, reason, submission, run_id)
  SELECT go.id, go.kind, go.loop, go.repo, go.item_key, go.number, go.content_hash, go.generation, 'Claimed', NULL, go.submission, go.run_id
    FROM go JOIN run ON run.id = go.run_id
  RETURNING id, loop, item_key, received_at
), queue_superseded AS (${ignoreQueuedSql(
    { loop: raw("r.loop"), itemKey: raw("r.item_key"), from: raw("recorded r") },
    "superseded_by_newer",
    raw("events.id <> r.id AND events.received_at <= r.received_at"),
  )}
)
SELECT seen.*, run.version AS opened_version, sup.id AS superseded_id
  FROM seen JOIN calls ON calls.k = seen.k LEFT JOIN run ON run.id = calls.run_id LEFT JOIN sup ON sup.k = seen.k`;
}

type AtOnceRow = ClaimSnapshot & { k: number; opened_version: string | null; superseded_id: string | null };

/** The optimistic claims of `events` (of distinct repositories) on `on`: an answer per Event, in their order. */
export async function writeClaimsAtOnce(on: Queryable, events: readonly EventInput[], metered: boolean): Promise<AtOnceRow[]> {
  const answered = (await prepared<AtOnceRow>(on, `atelier-claims-at-once${metered ? "-metered" : ""}`, claimsAtOnceSql(events, metered))).rows;
  const byEvent = new Map(answered.map((row) => [row.k, row]));
  return events.map((_, k) => byEvent.get(k)!);
}

/**
 * A Db's optimistic claims, group-committed on its batch connections, one kind per value of
 * `metered`: keyed by Item, and metered by repository (whose month counter and rate bucket the
 * open writes). A batch a constraint refused (a concurrent claim of one of its Items or Events)
 * is made again one Event at a time, and each Event so refused again goes to the locked claim.
 */
const claimsAtOnce = perObject((db: Db) => {
  const kind = (metered: boolean) =>
    groupCommit<EventInput, AtOnceRow>({
      key: (event) => (metered ? `repo ${event.repo.toLowerCase()}` : `item ${event.loop} ${event.itemKey}`),
      many: (events) => writeClaimsAtOnce(db.batch, events, metered),
      alone: (event) => transaction(db, async (tx) => (await writeClaimsAtOnce(tx, [event], metered))[0]!, { indexPlanned: true }),
    });
  return { metered: kind(true), unmetered: kind(false) };
});

/**
 * The optimistic claim (claimsAtOnceSql): the Run opened, or the decision needing no write that
 * was read (the Event's Run, its being ignored); Undecided when the rest is for the locked
 * claim to decide, or a concurrent claim of the same Item or Event refused the open.
 */
async function claimAtOnce(db: Db, event: EventInput, metered: boolean): Promise<ClaimResult | Undecided> {
  try {
    const { k: _k, opened_version: version, superseded_id: superseded, ...seen } = await claimsAtOnce(db)[metered ? "metered" : "unmetered"](event);
    if (version !== null) return openedInOneStatement(db, event, version, seen.metering, superseded);
    const decision = decideClaim(claimFacts(event, seen, metered));
    return isWriteless(decision) ? recordedClaim(decision) : UNDECIDED;
  } catch (err) {
    if (isClaimedMeanwhile(err)) return UNDECIDED;
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

/** The claim decided under the (Loop, Item) lock, in one transaction, and carried out there. */
function lockedClaim(db: Db, event: EventInput, admission: Admission | undefined): Promise<ClaimResult> {
  return transaction(
    db,
    async (tx) => {
      const snap = await firstPrepared<ClaimSnapshot>(tx, "atelier-claim-snapshot-locked", snapshotSql("locked", keysOf(event)));
      const decision = decideClaim(claimFacts(event, snap!, admission !== undefined));
      if (isWriteless(decision)) return recordedClaim(decision);
      switch (decision.tag) {
        case "Ignore":
          await writeClaim(tx, event, { status: "Ignored", reason: decision.reason });
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
}

/** Postgres refusals of a claim that another one beat: a key taken (23505), a second open Run (23P01). */
const CLAIMED_MEANWHILE = new Set(["23505", "23P01"]);
const isClaimedMeanwhile = (err: unknown): boolean => CLAIMED_MEANWHILE.has((err as { code?: string } | null)?.code ?? "");

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
 * One statement: supersedes the unstarted Run (when the decision says so), opens the new Run,
 * and records the Event with its status; an Event that opens its Run, or that the budget or the
 * gate blocks in its stead, supersedes the Events queued before it (supersedeQueuedSql). The
 * open-Run constraint is checked at COMMIT, so the order of the two Run writes inside the
 * statement does not matter.
 */
async function writeClaim(tx: Sql, event: EventInput, write: ClaimWrite): Promise<void> {
  const s = event.submission;
  const submission = JSON.stringify(s);
  const runId = write.open?.runId ?? null;
  const supersedesQueued = write.status === "Claimed" || write.status === "Blocked";
  const row = await firstPrepared<{ superseded: boolean; superseded_hooked: boolean | null }>(
    tx,
    "atelier-claim-write",
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
                    approval_required, received_at, model)
  SELECT ${runId}, ${event.id}, ${event.loop}, ${event.repo}, ${event.itemKey}, ${event.number}, 'Pending', ${write.open?.reservedGeneration ?? null},
         ${s.agent}, ${s.prompt}, ${s.approvalRequired}, COALESCE((SELECT received_at FROM events WHERE id = ${event.id}), now()), ${submission}::jsonb->>'model'
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
    // a supersede keeps the Item's current Run through its heir's insert; with no heir, here
    if (!write.open) await refreshCurrentRun(tx, event.itemKey);
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
