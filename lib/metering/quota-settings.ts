import { numericIdParam, repoParam } from "../http/ids";
import { z } from "zod";
import { NotFoundError } from "../errors";
import type { Db } from "../store/db";
import { UNLIMITED, type Limits } from "./limits";

/**
 * The limits an admin sets, per installation or per repository (`quotas`); 0 = unlimited.
 * Reads and writes go through here; the routes only parse and authorize.
 */

export type QuotaOwner = { kind: "installation"; installationId: number } | { kind: "repository"; repo: string };

/** The owner named by a route's parameters: an installation id, or a repository's owner and name. */
export function quotaOwnerOf(params: { id: string } | { owner: string; name: string }): QuotaOwner {
  if ("id" in params) {
    return { kind: "installation", installationId: numericIdParam(params.id, "installation") };
  }
  return { kind: "repository", repo: repoParam(params.owner, params.name) };
}

export interface QuotaSetting {
  owner: QuotaOwner;
  limits: Limits;
}

/** The body of PUT /api/v1/quotas/…: any subset of the four limits. */
export const quotaInput = z.strictObject({
  monthly_runs: z.number().int("monthly_runs is a whole number of Runs").min(0, "monthly_runs cannot be negative").max(10_000_000).optional(),
  monthly_cost_usd: z
    .number()
    .min(0, "monthly_cost_usd cannot be negative")
    .max(1_000_000_000, "monthly_cost_usd is at most 1,000,000,000")
    .multipleOf(0.01, "monthly_cost_usd has at most two decimals (cents)")
    .optional(),
  max_concurrent: z.number().int("max_concurrent is a whole number of Runs").min(0, "max_concurrent cannot be negative").max(100_000).optional(),
  open_rate_per_minute: z.number().int("open_rate_per_minute is a whole number").min(0, "open_rate_per_minute cannot be negative").max(100_000).optional(),
});
export type QuotaInput = z.infer<typeof quotaInput>;

interface QuotaRow {
  monthly_runs: number;
  monthly_cost_usd: number;
  max_concurrent: number;
  open_rate_per_minute: number;
}

const toLimits = (r: QuotaRow | undefined): Limits =>
  r
    ? { monthlyRuns: r.monthly_runs, monthlyCostUsd: r.monthly_cost_usd, maxConcurrent: r.max_concurrent, openRatePerMinute: r.open_rate_per_minute }
    : { ...UNLIMITED };

const COLUMNS = `monthly_runs, monthly_cost_usd::float8 AS monthly_cost_usd, max_concurrent, open_rate_per_minute`;

/** The owner's key column and id; NotFoundError when the installation or repository is not registered. */
async function ownerKey(db: Db, owner: QuotaOwner): Promise<{ column: "installation_id" | "repository_id"; id: number }> {
  if (owner.kind === "installation") {
    const { rowCount } = await db.pool.query(`SELECT 1 FROM installations WHERE id = $1`, [owner.installationId]);
    if (!rowCount) throw new NotFoundError("installation_not_found", `No installation ${owner.installationId} is registered.`);
    return { column: "installation_id", id: owner.installationId };
  }
  const { rows } = await db.pool.query<{ id: number }>(`SELECT id FROM repositories WHERE full_name = $1`, [owner.repo.toLowerCase()]);
  if (!rows[0]) throw new NotFoundError("repository_not_found", `The repository ${owner.repo} is not registered with Atelier.`);
  return { column: "repository_id", id: rows[0].id };
}

export async function getQuota(db: Db, owner: QuotaOwner): Promise<QuotaSetting> {
  const key = await ownerKey(db, owner);
  const { rows } = await db.pool.query<QuotaRow>(`SELECT ${COLUMNS} FROM quotas WHERE ${key.column} = $1`, [key.id]);
  return { owner, limits: toLimits(rows[0]) };
}

/** Sets the given limits (the others keep their value); returns the whole setting. */
export async function setQuota(db: Db, owner: QuotaOwner, input: QuotaInput): Promise<QuotaSetting> {
  const key = await ownerKey(db, owner);
  const { rows } = await db.pool.query<QuotaRow>(
    `INSERT INTO quotas (${key.column}, monthly_runs, monthly_cost_usd, max_concurrent, open_rate_per_minute)
     VALUES ($1, COALESCE($2::int, 0), COALESCE($3::numeric, 0), COALESCE($4::int, 0), COALESCE($5::int, 0))
     ON CONFLICT (${key.column}) DO UPDATE SET
       monthly_runs = COALESCE($2::int, quotas.monthly_runs),
       monthly_cost_usd = COALESCE($3::numeric, quotas.monthly_cost_usd),
       max_concurrent = COALESCE($4::int, quotas.max_concurrent),
       open_rate_per_minute = COALESCE($5::int, quotas.open_rate_per_minute)
     RETURNING ${COLUMNS}`,
    [key.id, input.monthly_runs ?? null, input.monthly_cost_usd ?? null, input.max_concurrent ?? null, input.open_rate_per_minute ?? null],
  );
  return { owner, limits: toLimits(rows[0]) };
}

/** The limits as the API shows them (snake_case, like the body it accepts). */
export function limitsJson(l: Limits): Required<QuotaInput> {
  return {
    monthly_runs: l.monthlyRuns,
    monthly_cost_usd: l.monthlyCostUsd,
    max_concurrent: l.maxConcurrent,
    open_rate_per_minute: l.openRatePerMinute,
  };
}
