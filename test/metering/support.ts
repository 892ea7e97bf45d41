import { randomBytes } from "node:crypto";
import { finishAttempt, type AttemptRef } from "../../lib/store/runs/attempts";
import { beginAttempt } from "../support/attempts";
import { setQuota } from "../../lib/metering/quota-settings";
import type { Db } from "../../lib/store/kernel/db";
import { recordAndClaim, type Admission } from "../../lib/store/runs/claim";
import { itemEvent } from "../support/events";

/** An installation with one registered repository, with ids and names no other test file uses. */
export interface Tenant {
  installationId: number;
  account: string;
  repo: string;
}

export const uniqueId = (): number => 2_000_000_000 + Math.floor(Math.random() * 2_000_000_000);

export async function seedTenant(db: Db, prefix = "meter"): Promise<Tenant> {
  const installationId = uniqueId();
  const account = `${prefix}-${randomBytes(4).toString("hex")}`;
  await db.pool.query(`INSERT INTO installations (id, account_login, updated_at) VALUES ($1, $2, now())`, [installationId, account]);
  const repo = await seedRepository(db, installationId, account);
  return { installationId, account, repo };
}

export async function seedRepository(db: Db, installationId: number, account: string, name = "repo"): Promise<string> {
  const repo = `${account}/${name}`;
  await db.pool.query(`INSERT INTO repositories (id, installation_id, full_name, updated_at) VALUES ($1, $2, $3, now())`, [
    uniqueId(),
    installationId,
    repo,
  ]);
  return repo;
}

export async function setLimits(
  db: Db,
  owner: { installationId: number } | { repo: string },
  limits: Partial<{ monthly_runs: number; monthly_cost_usd: number; max_concurrent: number; open_rate_per_minute: number }>,
): Promise<void> {
  await setQuota(db, "installationId" in owner ? { kind: "installation", installationId: owner.installationId } : { kind: "repository", repo: owner.repo }, limits);
}

/** Opens a Run on `repo#number` through the claim with the gate; throws unless it opened. */
export async function openRun(db: Db, repo: string, number: number, gate: Admission, loop = "start-dev"): Promise<string> {
  const r = await recordAndClaim(db, itemEvent(repo, number, `h${number}`, { loop }), gate);
  if (r.tag !== "Claimed") throw new Error(`expected a Run, got ${JSON.stringify(r)}`);
  return r.runId;
}

export async function startAttempt(db: Db, runId: string): Promise<AttemptRef> {
  const b = await beginAttempt(db, runId, { token: randomBytes(4).toString("hex"), workerId: "w" });
  if (b.tag !== "Started") throw new Error("expected an Attempt");
  return b.attempt;
}

export const usage = (costUsd: number | null, durationMs = 60_000, costEstimated = false) => ({
  durationMs,
  tokensIn: 100,
  tokensOut: 50,
  costUsd,
  costEstimated,
});

/** Runs one Attempt of the Run to success with the given cost. */
export async function succeedWithCost(db: Db, runId: string, costUsd: number | null, durationMs = 60_000, costEstimated = false) {
  const a = await startAttempt(db, runId);
  return finishAttempt(db, a, {
    tag: "Succeeded",
    summary: "done",
    usage: usage(costUsd, durationMs, costEstimated),
    branch: null,
    pullRequestNumber: null,
    headSha: null,
  });
}
