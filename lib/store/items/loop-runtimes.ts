import { audit } from "../people/audit-log";
import type { Db } from "../kernel/db";
import { query, rows, sql } from "../kernel/sql";
import { transaction, type Sql } from "../kernel/transaction";

/** What `loop_runtime` keeps of a Loop of a repository: whether it is paused, its current error, its last evaluation. */
export interface LoopRuntime {
  repo: string;
  loop: string;
  paused: boolean;
  paused_by: string | null;
  error: string | null;
  error_line: number | null;
  last_polled_at: Date | null;
}

/** The runtime rows of the Loops of these repositories (lower-cased owner/name). */
export async function loopRuntimesOf(db: Db, repos: readonly string[]): Promise<LoopRuntime[]> {
  return rows<LoopRuntime>(
    db.pool,
    sql`SELECT repo, loop, paused, paused_by, error, error_line, last_polled_at FROM loop_runtime WHERE repo = ANY(${repos})`,
  );
}

/** Pauses or unpauses a Loop, audited in the same transaction. */
export async function recordLoopPaused(db: Db, repo: string, loop: string, paused: boolean, actor: string): Promise<void> {
  await transaction(db, async (tx) => {
    await query(
      tx,
      sql`INSERT INTO loop_runtime (repo, loop, paused, paused_by, updated_at) VALUES (${repo}, ${loop}, ${paused}, ${paused ? actor : null}, now())
       ON CONFLICT (repo, loop) DO UPDATE SET paused = EXCLUDED.paused, paused_by = EXCLUDED.paused_by, updated_at = now()`,
    );
    await audit(tx, { actor, action: paused ? "pause_loop" : "unpause_loop", repo, detail: { loop } });
  });
}

/** Names of the repository's paused Loops. */
export async function pausedLoops(db: Db, repo: string): Promise<Set<string>> {
  const paused = await rows<{ loop: string }>(db.pool, sql`SELECT loop FROM loop_runtime WHERE repo = ${repo.toLowerCase()} AND paused`);
  return new Set(paused.map((r) => r.loop));
}

/**
 * A read config's errors, each on its Loop (with the line of the file), in the transaction
 * that stores the config: the Loops it gives no error lose theirs.
 */
export async function storeConfigErrors(tx: Sql, repo: string, errors: readonly { loop: string; error: string; line: number | null }[]): Promise<void> {
  await query(
    tx,
    sql`INSERT INTO loop_runtime (repo, loop, error, error_line, updated_at)
       SELECT ${repo}, r.loop, r.error, r.line, now() FROM json_to_recordset(${JSON.stringify(errors)}::json) AS r(loop text, error text, line int)
       ON CONFLICT (repo, loop) DO UPDATE SET error = EXCLUDED.error, error_line = EXCLUDED.error_line, updated_at = now()`,
  );
  await query(
    tx,
    sql`UPDATE loop_runtime SET error = NULL, error_line = NULL, updated_at = now()
        WHERE repo = ${repo} AND NOT (loop = ANY(${errors.map((r) => r.loop)}::text[])) AND error IS NOT NULL`,
  );
}

/**
 * After a poll cycle (or a schedule Loop's wake): each evaluated Loop's last run time and its
 * evaluation failure (a prompt that does not render, an `if:` that fails), or none. Loops whose
 * definition is broken keep their config error.
 */
export async function recordLoopEvaluations(
  db: Db,
  repo: string,
  loops: readonly { name: string }[],
  failures: ReadonlyMap<string, string>,
  at: Date,
): Promise<void> {
  if (loops.length === 0) return;
  const evaluated = loops.map((l) => ({ loop: l.name, error: failures.get(l.name) ?? null }));
  await query(
    db.pool,
    sql`INSERT INTO loop_runtime (repo, loop, error, error_line, last_polled_at, updated_at)
     SELECT ${repo.toLowerCase()}, r.loop, r.error, NULL, ${at}, now() FROM json_to_recordset(${JSON.stringify(evaluated)}::json) AS r(loop text, error text)
     ON CONFLICT (repo, loop) DO UPDATE SET error = EXCLUDED.error, error_line = NULL,
       last_polled_at = EXCLUDED.last_polled_at, updated_at = now()`,
  );
}

/** A Hint records failures it met, and clears nothing (a poll judges the whole repository). */
export async function recordLoopFailures(db: Db, repo: string, failures: ReadonlyMap<string, string>): Promise<void> {
  if (failures.size === 0) return;
  const failed = [...failures.entries()].map(([loop, error]) => ({ loop, error }));
  await query(
    db.pool,
    sql`INSERT INTO loop_runtime (repo, loop, error, updated_at)
     SELECT ${repo.toLowerCase()}, r.loop, r.error, now() FROM json_to_recordset(${JSON.stringify(failed)}::json) AS r(loop text, error text)
     ON CONFLICT (repo, loop) DO UPDATE SET error = EXCLUDED.error, error_line = NULL, updated_at = now()`,
  );
}
