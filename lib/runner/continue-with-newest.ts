import type { Db } from "../store/kernel/db";
import { claimQueued, newestQueuedEvent } from "../store/runs/claim-queued";
import { loopItemLock } from "../store/kernel/locks";
import type { Admission } from "../store/runs/claim";
import { ignoreQueuedEvents } from "../store/runs/revoke";
import { runReceivedAt } from "../store/runs/runs-to-move";
import { transaction } from "../store/kernel/transaction";
import type { WorkQueue } from "../work/work-queue";
import { SILENT_LOG, type ConditionSubject, type RecheckCondition, type RunnerLog } from "./runner-deps";

/**
 * After a Run of a Loop closes on an Item, the newest Event queued behind it gets its turn:
 * the Loop's `if:` is evaluated again on a fresh read of the Item; when it holds, the Event
 * opens its Run (older queued Events are ignored) and that Run is moved; when it no longer
 * holds, every queued Event is marked ignored. A failing or slow check counts as true: the
 * worst case is a Run that the next poll revokes, never a lost one.
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

export async function continueWithNewest(deps: ContinueDeps, scope: { loop: string; itemKey: string }): Promise<ContinueResult> {
  const event = await newestQueuedEvent(deps.db, scope.loop, scope.itemKey);
  if (!event) return { tag: "NothingQueued" };
  const holds = await conditionHolds(deps, { loop: event.loop, repo: event.repo, itemKey: event.itemKey, number: event.number });
  if (!holds) {
    await transaction(deps.db, (sql) => ignoreQueuedEvents(sql, scope.loop, scope.itemKey, "revoked"), {
      lockKey: loopItemLock(scope.loop, scope.itemKey),
    });
    return { tag: "Revoked", eventId: event.id };
  }
  const claim = await claimQueued(deps.db, event, deps.admission);
  if (!claim) return { tag: "NotOpened", eventId: event.id, reason: "already_claimed_or_run_open" };
  if (claim.tag === "Queued") return { tag: "NotOpened", eventId: event.id, reason: "queued_behind_running_run" };
  if (claim.tag !== "Claimed") return { tag: "NotOpened", eventId: event.id, reason: claim.reason };
  await deps.workQueue.moveRun(claim.runId, { receivedAt: await runReceivedAt(deps.db, claim.runId) });
  return { tag: "Opened", runId: claim.runId, eventId: event.id };
}
