import type { CommentRef } from "../loops/comment-context";
import type { Db } from "../store/kernel/db";
import { countQuotaRefusalRows, listQuotaRefusalRows, type RefusalScope } from "../store/metering/held-work";
import { installationsOfRepositories } from "../store/github/registrations";
import { ADMISSION_ORDER, tokenSentence, type AdmissionToken } from "./refusal";
import type { Hint } from "../work/work-queue";
import { quotaTokenOf } from "./waiting-reason";

/**
 * Needs you: the work a limit is holding, for a person who can lift it. Two kinds:
 * - "run": an open Run the gate keeps from starting (`runs.waiting_reason = quota:<token>`);
 * - "event": an Item a Loop matched whose Run was never opened (the Event is Blocked with the
 *   token as its reason), listed while it is the Item's latest Event for that Loop and no Run
 *   of the Loop is open on it.
 */
export interface QuotaRefusal {
  kind: "run" | "event";
  token: AdmissionToken;
  message: string;
  repo: string;
  loop: string;
  number: number | null;
  itemKey: string;
  eventId: string;
  runId: string | null;
  at: Date;
  /** an Event's comment (a comments Loop's), and the actor it was judged with */
  comment: CommentRef | null;
  actor: string | null;
}

const scopeOf = (repos: string[] | null | undefined): RefusalScope => ({
  reasons: ADMISSION_ORDER,
  repos: repos ? repos.map((r) => r.toLowerCase()) : null,
});

/**
 * What the Needs you page lists for quotas: `listQuotaRefusals(db, { repos })` with the
 * repositories the viewer can see (null for an admin, who sees all). Newest first.
 */
export async function listQuotaRefusals(
  db: Db,
  opts: { repos?: string[] | null; limit?: number } = {},
): Promise<QuotaRefusal[]> {
  const rows = await listQuotaRefusalRows(db, scopeOf(opts.repos), opts.limit ?? 200);
  return rows.flatMap((r) => {
    const token = r.kind === "run" ? quotaTokenOf(r.reason) : (r.reason as AdmissionToken);
    if (!token) return [];
    return [
      {
        kind: r.kind,
        token,
        message: tokenSentence(token),
        repo: r.repo,
        loop: r.loop,
        number: r.number,
        itemKey: r.item_key,
        eventId: r.event_id,
        runId: r.run_id,
        at: r.at,
        comment: r.comment,
        actor: r.actor_login,
      },
    ];
  });
}

/** How many quota refusals wait (for the navigation's Needs you count); same scope as the list. */
export async function countQuotaRefusals(db: Db, opts: { repos?: string[] | null } = {}): Promise<number> {
  return countQuotaRefusalRows(db, scopeOf(opts.repos));
}

/**
 * The Items whose latest Event a quota blocked: re-reading them (a Hint each) lets the same
 * Event be claimed again once the limit lifts — the month turned, a Run finished, an admin
 * raised the quota. The poll cursor has moved past them, so nothing else would. A comments
 * Loop's Event is re-read with its comment, as its webhook's Hint was, and with the actor it
 * was judged with as the sender (so the comment's actor is still the weaker of its author and
 * whoever edited it). Schedule Ticks are left out: the next Tick comes on its own.
 */
export async function quotaBlockedItems(db: Db, limit = 500): Promise<Hint[]> {
  const refusals = await listQuotaRefusals(db, { limit });
  const items = refusals.filter((r) => r.kind === "event" && r.number !== null);
  if (!items.length) return [];
  const rows = await installationsOfRepositories(db, [...new Set(items.map((i) => i.repo))]);
  const installationOf = new Map(rows.map((r) => [r.full_name, r.installation_id]));
  const seen = new Set<string>();
  return items.flatMap((i) => {
    const installationId = installationOf.get(i.repo);
    const key = i.comment ? `${i.itemKey} ${i.comment.kind} ${i.comment.id}` : i.itemKey;
    if (installationId === undefined || seen.has(key)) return [];
    seen.add(key);
    const hint: Hint = { installationId, repo: i.repo, number: i.number! };
    return [i.comment ? { ...hint, comment: i.comment, ...(i.actor ? { sender: i.actor } : {}) } : hint];
  });
}
