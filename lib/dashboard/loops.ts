import type { Db } from "../store/db";

/**
 * The Loops page: every Loop of the repositories in scope — from the repository's stored config
 * and from loop_runtime (a Loop that errored or was paused may be in only one of them) — with
 * its pause, last poll and error.
 */
export interface LoopView {
  repo: string;
  loop: string;
  trigger: string | null;
  paused: boolean;
  pausedBy: string | null;
  lastPolledAt: string | null;
  error: string | null;
  errorLine: number | null;
  /** The repository's own poll failure, if any. */
  pollError: string | null;
  updatedAt: string | null;
}

interface StoredLoop {
  name?: unknown;
  trigger?: { kind?: unknown } | null;
}

function configLoops(config: unknown): { name: string; trigger: string | null }[] {
  const loops = (config as { loops?: unknown } | null)?.loops;
  if (Array.isArray(loops)) {
    return loops
      .filter((l): l is StoredLoop => !!l && typeof (l as StoredLoop).name === "string")
      .map((l) => ({ name: l.name as string, trigger: typeof l.trigger?.kind === "string" ? (l.trigger.kind as string) : null }));
  }
  if (loops && typeof loops === "object") {
    return Object.keys(loops).map((name) => ({ name, trigger: null }));
  }
  return [];
}

export async function loadLoops(db: Db, repos: string[]): Promise<LoopView[]> {
  if (!repos.length) return [];
  const [repoRows, runtimeRows] = await Promise.all([
    db.pool.query<{ full_name: string; config: unknown; last_polled_at: Date | null; poll_error: string | null }>(
      `SELECT full_name, config, last_polled_at, poll_error FROM repositories WHERE full_name = ANY($1)`,
      [repos],
    ),
    db.pool.query<{
      repo: string;
      loop: string;
      paused: boolean;
      paused_by: string | null;
      error: string | null;
      error_line: number | null;
      last_polled_at: Date | null;
      updated_at: Date;
    }>(`SELECT repo, loop, paused, paused_by, error, error_line, last_polled_at, updated_at FROM loop_runtime WHERE repo = ANY($1)`, [repos]),
  ]);
  const byKey = new Map<string, LoopView>();
  const repoInfo = new Map(repoRows.rows.map((r) => [r.full_name, r]));
  for (const r of repoRows.rows) {
    for (const l of configLoops(r.config)) {
      byKey.set(`${r.full_name}\u0000${l.name}`, {
        repo: r.full_name,
        loop: l.name,
        trigger: l.trigger,
        paused: false,
        pausedBy: null,
        lastPolledAt: r.last_polled_at?.toISOString() ?? null,
        error: null,
        errorLine: null,
        pollError: r.poll_error,
        updatedAt: null,
      });
    }
  }
  for (const rt of runtimeRows.rows) {
    const key = `${rt.repo}\u0000${rt.loop}`;
    const repo = repoInfo.get(rt.repo);
    const base = byKey.get(key);
    byKey.set(key, {
      repo: rt.repo,
      loop: rt.loop,
      trigger: base?.trigger ?? null,
      paused: rt.paused,
      pausedBy: rt.paused_by,
      lastPolledAt: (rt.last_polled_at ?? repo?.last_polled_at ?? null)?.toISOString() ?? null,
      error: rt.error,
      errorLine: rt.error_line,
      pollError: repo?.poll_error ?? null,
      updatedAt: rt.updated_at.toISOString(),
    });
  }
  return [...byKey.values()].sort((a, b) => a.repo.localeCompare(b.repo) || a.loop.localeCompare(b.loop));
}
