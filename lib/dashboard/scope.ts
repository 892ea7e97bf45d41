import { visibleToViewer } from "../auth/authorize";
import type { Viewer } from "../auth/viewer";
import type { Db } from "../store/db";

/**
 * The registered repositories a viewer may see: every one for an instance admin, else those
 * their GitHub token can see through the App's installations (cached 30 s by lib/auth).
 */
export async function scopeRepos(db: Db, viewer: Viewer): Promise<string[]> {
  if (viewer.admin) {
    const { rows } = await db.pool.query<{ full_name: string }>(
      `SELECT full_name FROM repositories WHERE removed_at IS NULL ORDER BY full_name`,
    );
    return rows.map((r) => r.full_name);
  }
  const { repositories } = await visibleToViewer(viewer);
  if (!repositories.length) return [];
  const { rows } = await db.pool.query<{ full_name: string }>(
    `SELECT full_name FROM repositories WHERE removed_at IS NULL AND full_name = ANY($1::text[]) ORDER BY full_name`,
    [repositories.map((r) => r.fullName)],
  );
  return rows.map((r) => r.full_name);
}

/** Narrows the scope to one repository when asked (and visible), else keeps all of it. */
export function narrow(scope: string[], repo: string | null | undefined): string[] {
  if (!repo) return scope;
  const wanted = repo.toLowerCase();
  return scope.filter((r) => r === wanted);
}
