import { NotFoundError } from "../errors";
import type { LoopDefinition, TriggerKind } from "../loops/config-schema";
import { audit } from "../store/audit";
import type { Db } from "../store/db";
import { transaction } from "../store/transaction";
import { loopNames, storedConfig, type StoredConfig } from "./repository-config";

/** A Loop of a repository as the dashboard and the API show it. */
export interface LoopStatus {
  name: string;
  /** null when the Loop's definition is broken and its trigger unknown */
  trigger: TriggerKind | null;
  schedule: { cron: string; tz: string } | null;
  /** false when the config gives this Loop an error: it does not run until fixed */
  valid: boolean;
  paused: boolean;
  pausedBy: string | null;
  lastPolledAt: Date | null;
  /** The Loop's current problem: a config error (with its line) or its last evaluation failure. */
  error: string | null;
  errorLine: number | null;
}

interface RuntimeRow {
  repo: string;
  loop: string;
  paused: boolean;
  paused_by: string | null;
  error: string | null;
  error_line: number | null;
  last_polled_at: Date | null;
}

/** Every Loop of the repository's config, valid or broken, with its runtime state. */
export async function listLoops(db: Db, repo: string): Promise<LoopStatus[]> {
  return (await listLoopsOf(db, [repo])).get(repo.toLowerCase()) ?? [];
}

/** listLoops for many repositories in two queries (the Loops page shows them all at once). */
export async function listLoopsOf(db: Db, repos: readonly string[]): Promise<Map<string, LoopStatus[]>> {
  const names = repos.map((r) => r.toLowerCase());
  const [configs, runtime] = await Promise.all([
    db.pool.query<{ full_name: string; config: StoredConfig | null }>(`SELECT full_name, config FROM repositories WHERE full_name = ANY($1)`, [names]),
    db.pool.query<RuntimeRow>(
      `SELECT repo, loop, paused, paused_by, error, error_line, last_polled_at FROM loop_runtime WHERE repo = ANY($1)`,
      [names],
    ),
  ]);
  const configOf = new Map(configs.rows.map((r) => [r.full_name, r.config]));
  const runtimeOf = new Map(runtime.rows.map((r) => [`${r.repo}\u0000${r.loop}`, r]));
  return new Map(names.map((repo) => [repo, loopStatuses(configOf.get(repo) ?? null, (loop) => runtimeOf.get(`${repo}\u0000${loop}`))]));
}

function loopStatuses(config: StoredConfig | null, runtimeOf: (loop: string) => RuntimeRow | undefined): LoopStatus[] {
  return loopNames(config).map((name) => {
    const definition = config?.loops.find((l) => l.name === name) ?? null;
    const row = runtimeOf(name);
    const trigger = definition?.trigger ?? null;
    return {
      name,
      trigger: trigger?.kind ?? null,
      schedule: trigger?.kind === "schedule" ? { cron: trigger.cron, tz: trigger.tz } : null,
      valid: definition !== null,
      paused: row?.paused ?? false,
      pausedBy: row?.paused_by ?? null,
      lastPolledAt: row?.last_polled_at ?? null,
      error: row?.error ?? null,
      errorLine: row?.error_line ?? null,
    };
  });
}

/**
 * Pauses or unpauses a Loop (audited). A paused Loop submits and revokes nothing; its Runs go
 * on. The set of active Loops changes, so the repository's next poll starts from an empty cursor.
 */
export async function setLoopPaused(db: Db, repo: string, loop: string, paused: boolean, actor: string): Promise<LoopStatus> {
  const fullName = repo.toLowerCase();
  const config = await storedConfig(db, fullName);
  if (!loopNames(config).includes(loop)) {
    throw new NotFoundError("loop_not_found", `${fullName} has no Loop "${loop}" in its .github/atelier.yml.`);
  }
  await transaction(db, async (sql) => {
    await sql.query(
      `INSERT INTO loop_runtime (repo, loop, paused, paused_by, updated_at) VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (repo, loop) DO UPDATE SET paused = EXCLUDED.paused, paused_by = EXCLUDED.paused_by, updated_at = now()`,
      [fullName, loop, paused, paused ? actor : null],
    );
    await audit(sql, { actor, action: paused ? "pause_loop" : "unpause_loop", repo: fullName, detail: { loop } });
  });
  const status = (await listLoops(db, fullName)).find((l) => l.name === loop);
  return status!;
}

/** Names of the repository's paused Loops. */
export async function pausedLoops(db: Db, repo: string): Promise<Set<string>> {
  const { rows } = await db.pool.query<{ loop: string }>(`SELECT loop FROM loop_runtime WHERE repo = $1 AND paused`, [repo.toLowerCase()]);
  return new Set(rows.map((r) => r.loop));
}

/**
 * After a poll cycle (or a schedule Loop's wake): each evaluated Loop's last run time and its
 * evaluation failure (a prompt that does not render, an `if:` that fails), or none. Loops whose
 * definition is broken keep their config error.
 */
export async function recordLoopEvaluations(db: Db, repo: string, loops: readonly LoopDefinition[], failures: ReadonlyMap<string, string>, at: Date): Promise<void> {
  if (loops.length === 0) return;
  const rows = loops.map((l) => ({ loop: l.name, error: failures.get(l.name) ?? null }));
  await db.pool.query(
    `INSERT INTO loop_runtime (repo, loop, error, error_line, last_polled_at, updated_at)
     SELECT $1, r.loop, r.error, NULL, $3, now() FROM json_to_recordset($2::json) AS r(loop text, error text)
     ON CONFLICT (repo, loop) DO UPDATE SET error = EXCLUDED.error, error_line = NULL,
       last_polled_at = EXCLUDED.last_polled_at, updated_at = now()`,
    [repo.toLowerCase(), JSON.stringify(rows), at],
  );
}

/** A Hint records failures it met, and clears nothing (a poll judges the whole repository). */
export async function recordLoopFailures(db: Db, repo: string, failures: ReadonlyMap<string, string>): Promise<void> {
  if (failures.size === 0) return;
  const rows = [...failures.entries()].map(([loop, error]) => ({ loop, error }));
  await db.pool.query(
    `INSERT INTO loop_runtime (repo, loop, error, updated_at)
     SELECT $1, r.loop, r.error, now() FROM json_to_recordset($2::json) AS r(loop text, error text)
     ON CONFLICT (repo, loop) DO UPDATE SET error = EXCLUDED.error, error_line = NULL, updated_at = now()`,
    [repo.toLowerCase(), JSON.stringify(rows)],
  );
}

/** The Loop names of a config: the valid ones, then the broken ones, in file order where known. */
