import type { Db } from "../store/kernel/db";
import { intentOf, isRequest } from "../engine/claim-decision";
import { claimQueued, nextQueuedEvent } from "../store/runs/claim-queued";
import { loopItemLock } from "../store/kernel/locks";
import type { Admission } from "../store/runs/claim";
import { ignoreQueuedEvents, QUEUED_READS } from "../store/runs/revoke";
import { runReceivedAt } from "../store/runs/runs-to-move";
import { transaction } from "../store/kernel/transaction";
import type { WorkQueue } from "../work/work-queue";
import { SILENT_LOG, type ConditionSubject, type RecheckCondition, type RunnerLog } from "./runner-deps";

/**
 * After a Run of a Loop closes on an Item, the Event queued behind it first gets its turn (the
 * queue holds the newest read of the Item and each person's request, in the order they came:
 * ADR 0073). A read of the Item opens its Run only when the Loop's `if:` holds on a fresh read
 * of the Item; when it no longer holds, the queued reads are marked ignored and the next Event
 * gets the turn. A person's request (a comment's ask, an operator's dispatch) is not asked the
 * `if:`. An Event that opens its Run ends the turn (that Run is moved; its outcome hands over to
 * the next); one that is ignored (an older generation) or blocked (the cycle budget, a quota,
 * which keep it for the operator's answer) hands the turn on. A failing or slow check counts as
 * true: the worst case is a Run that the next poll revokes, never a lost one.
 */

export const RECHECK_TIMEOUT_MS = 5_000;

export interface ContinueDeps {
  db: Db;
  workQueue: Pick<WorkQueue, "moveRun">;
  recheckCondition: RecheckCondition;
  admission?: Admission;
  recheckTimeoutMs?: number;
  log?: RunnerLog;
}

export type ContinueResult =
  | { tag: "NothingQueued" }
  | { tag: "Opened"; runId: string; eventId: string }
  | { tag: "Revoked"; eventId: string }
  | { tag: "NotOpened"; eventId: string; reason: string };

/** The condition, with a timeout; an error or a timeout counts as true. */
export async function conditionHolds(deps: Pick<ContinueDeps, "recheckCondition" | "recheckTimeoutMs" | "log">, subject: ConditionSubject): Promise<boolean> {
  const log = deps.log ?? SILENT_LOG;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), deps.recheckTimeoutMs ?? RECHECK_TIMEOUT_MS)));
  try {
    const answer = await Promise.race([deps.recheckCondition(subject), timeout]);
    if (answer === "timeout") {
      log.warn({ ...subject }, "the condition re-check timed out; counting it as true");
      return true;
    }
    return answer;
  } catch (err) {
    log.warn({ ...subject, err }, "the condition re-check failed; counting it as true");
    return true;
  } finally {
    clearTimeout(timer);
  }
}

/** How many queued Events one turn looks at, at most, before it leaves the rest to the next one (reconcile's). */
const TURNS = 50;

export async function continueWithNewest(deps: ContinueDeps, scope: { loop: string; itemKey: string }): Promise<ContinueResult> {
  let result: ContinueResult = { tag: "NothingQueued" };
  for (let turn = 0; turn < TURNS; turn++) {
    const event = await nextQueuedEvent(deps.db, scope.loop, scope.itemKey);
    if (!event) return result;
    if (!isRequest(intentOf(event.submission)) && !(await conditionHolds(deps, { loop: event.loop, repo: event.repo, itemKey: event.itemKey, number: event.number }))) {
      await transaction(deps.db, (sql) => ignoreQueuedEvents(sql, scope.loop, scope.itemKey, "revoked", QUEUED_READS), {
        lockKey: loopItemLock(scope.loop, scope.itemKey),
      });
      result = { tag: "Revoked", eventId: event.id };
      continue;
    }
    const claim = await claimQueued(deps.db, event, deps.admission);
    if (!claim) return { tag: "NotOpened", eventId: event.id, reason: "already_claimed_or_run_open" };
    if (claim.tag === "Queued") return { tag: "NotOpened", eventId: event.id, reason: "queued_behind_running_run" };
    if (claim.tag === "Claimed") {
      await deps.workQueue.moveRun(claim.runId, { receivedAt: await runReceivedAt(deps.db, claim.runId) });
      return { tag: "Opened", runId: claim.runId, eventId: event.id };
    }
    result = { tag: "NotOpened", eventId: event.id, reason: claim.reason };
  }
  return result;
}
