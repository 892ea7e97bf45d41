import type { Db } from "../store/kernel/db";
import { repositoryPolls } from "../store/reads/repository-list";
import { listLoopsOf } from "../triggers/loop-status";

/**
 * The Loops page: each repository in scope with its `.github/atelier.yml` as last read (when,
 * and the file's own error), and every Loop of it (the triggers' own view of each repository's
 * Loops, broken ones included) with its pause, last poll, error, and the repository's poll failure.
 */
export interface LoopView {
  repo: string;
  loop: string;
  trigger: string | null;
  /** false when the config gives this Loop an error: it does not run until fixed */
  valid: boolean;
  paused: boolean;
  pausedBy: string | null;
  lastPolledAt: string | null;
  error: string | null;
  errorLine: number | null;
  /** The repository's own poll failure, if any. */
  pollError: string | null;
}

export interface RepositoryConfigView {
  repo: string;
  /** when `.github/atelier.yml` was last read; null before the first read */
  readAt: string | null;
  /** the file's own error (YAML that does not parse, not a mapping…), with its line */
  configError: string | null;
}

/** A Loop that does not run because of its config: broken definition or a recorded error. */
export function isLoopBroken(loop: Pick<LoopView, "valid" | "error">): boolean {
  return !loop.valid || loop.error !== null;
}

export async function loadLoops(db: Db, repos: string[]): Promise<{ repositories: RepositoryConfigView[]; loops: LoopView[] }> {
  if (!repos.length) return { repositories: [], loops: [] };
  const [polls, byRepo] = await Promise.all([
    repositoryPolls(db, repos),
    listLoopsOf(db, repos),
  ]);
  const poll = new Map(polls.map((r) => [r.full_name, r]));
  const loops = [...byRepo]
    .flatMap(([repo, list]) =>
      list.map((l) => ({
        repo,
        loop: l.name,
        trigger: l.trigger,
        valid: l.valid,
        paused: l.paused,
        pausedBy: l.pausedBy,
        lastPolledAt: (l.lastPolledAt ?? poll.get(repo)?.last_polled_at ?? null)?.toISOString() ?? null,
        error: l.error,
        errorLine: l.errorLine,
        pollError: poll.get(repo)?.poll_error ?? null,
      })),
    )
    .sort((a, b) => a.repo.localeCompare(b.repo) || a.loop.localeCompare(b.loop));
  const repositories = polls.map((r) => ({
    repo: r.full_name,
    // markConfigStale writes the epoch to make the next poll read again: not a read time
    readAt: r.read_at && !r.read_at.startsWith("1970-") ? r.read_at : null,
    configError: r.config_error,
  }));
  return { repositories, loops };
}
