import type { Db } from "../store/db";
import { listLoopsOf } from "../triggers/loops";

/**
 * The Loops page: every Loop of the repositories in scope (the triggers' own view of each
 * repository's Loops) with its pause, last poll, error, and the repository's poll failure.
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
}

export async function loadLoops(db: Db, repos: string[]): Promise<LoopView[]> {
  if (!repos.length) return [];
  const [polls, byRepo] = await Promise.all([
    db.pool.query<{ full_name: string; last_polled_at: Date | null; poll_error: string | null }>(
      `SELECT full_name, last_polled_at, poll_error FROM repositories WHERE full_name = ANY($1)`,
      [repos],
    ),
    listLoopsOf(db, repos),
  ]);
  const poll = new Map(polls.rows.map((r) => [r.full_name, r]));
  return [...byRepo]
    .flatMap(([repo, loops]) =>
      loops.map((l) => ({
        repo,
        loop: l.name,
        trigger: l.trigger,
        paused: l.paused,
        pausedBy: l.pausedBy,
        lastPolledAt: (l.lastPolledAt ?? poll.get(repo)?.last_polled_at ?? null)?.toISOString() ?? null,
        error: l.error,
        errorLine: l.errorLine,
        pollError: poll.get(repo)?.poll_error ?? null,
      })),
    )
    .sort((a, b) => a.repo.localeCompare(b.repo) || a.loop.localeCompare(b.loop));
}
