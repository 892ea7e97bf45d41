import { OPEN } from "../engine/run-state";
import type { Db } from "../store/db";
import { ADMISSION_ORDER, tokenSentence, type AdmissionToken } from "./refusal";
import { QUOTA_WAITING_PREFIX } from "../store/repo-metering";
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
}

interface Row {
  kind: "run" | "event";
  reason: string;
  repo: string;
  loop: string;
  number: number | null;
  item_key: string;
  event_id: string;
  run_id: string | null;
  at: Date;
}

const REFUSALS = `
SELECT 'run' AS kind, r.waiting_reason AS reason, r.repo, r.loop, r.number, r.item_key, r.event_id, r.id AS run_id,
       r.updated_at AS at
  FROM runs r
 WHERE starts_with(r.waiting_reason, $1) AND r.state::text = ANY($2) AND ($4::text[] IS NULL OR r.repo = ANY($4))
UNION ALL
SELECT 'event', e.reason, e.repo, e.loop, e.number, e.item_key, e.id, NULL, e.received_at
  FROM events e
 WHERE e.status = 'Blocked' AND e.reason = ANY($3) AND ($4::text[] IS NULL OR e.repo = ANY($4))
   AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.loop = e.loop AND o.item_key = e.item_key AND o.state::text = ANY($2))
   AND NOT EXISTS (SELECT 1 FROM events n WHERE n.loop = e.loop AND n.item_key = e.item_key AND n.id <> e.id
                     AND n.received_at > e.received_at)`;
const LIST = `${REFUSALS} ORDER BY at DESC LIMIT $5`;
const COUNT = `SELECT count(*)::int AS n FROM (${REFUSALS}) AS refusals`;

const params = (repos: string[] | null | undefined) => [
  QUOTA_WAITING_PREFIX,
  OPEN,
  ADMISSION_ORDER,
  repos ? repos.map((r) => r.toLowerCase()) : null,
];

/**
 * What the Needs you page lists for quotas: `listQuotaRefusals(db, { repos })` with the
 * repositories the viewer can see (null for an admin, who sees all). Newest first.
 */
export async function listQuotaRefusals(
  db: Db,
  opts: { repos?: string[] | null; limit?: number } = {},
): Promise<QuotaRefusal[]> {
  const { rows } = await db.pool.query<Row>(LIST, [...params(opts.repos), opts.limit ?? 200]);
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
      },
    ];
  });
}

/** How many quota refusals wait (for the navigation's Needs you count); same scope as the list. */
export async function countQuotaRefusals(db: Db, opts: { repos?: string[] | null } = {}): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(COUNT, params(opts.repos));
  return rows[0]!.n;
}

/**
 * The Items whose latest Event a quota blocked: re-reading them (a Hint each) lets the same
 * Event be claimed again once the limit lifts — the month turned, a Run finished, an admin
 * raised the quota. The poll cursor has moved past them, so nothing else would. Schedule
 * Ticks are left out: the next Tick comes on its own.
 */
export async function quotaBlockedItems(db: Db, limit = 500): Promise<{ installationId: number; repo: string; number: number }[]> {
  const refusals = await listQuotaRefusals(db, { limit });
  const items = refusals.filter((r) => r.kind === "event" && r.number !== null);
  if (!items.length) return [];
  const { rows } = await db.pool.query<{ full_name: string; installation_id: number }>(
    `SELECT full_name, installation_id FROM repositories WHERE full_name = ANY($1)`,
    [[...new Set(items.map((i) => i.repo))]],
  );
  const installationOf = new Map(rows.map((r) => [r.full_name, r.installation_id]));
  const seen = new Set<string>();
  return items.flatMap((i) => {
    const installationId = installationOf.get(i.repo);
    if (installationId === undefined || seen.has(i.itemKey)) return [];
    seen.add(i.itemKey);
    return [{ installationId, repo: i.repo, number: i.number! }];
  });
}
