import { requireRepoPermission } from "../auth/authorize";
import type { Viewer } from "../auth/viewer";
import { NotFoundError } from "../errors";
import { findSnapshot, listSnapshots, removeSnapshot, snapshotStoreFromEnv, type SnapshotStore } from "../executor/environment/snapshot-store";
import { transaction } from "../store/kernel/transaction";
import { audit } from "../store/people/audit-log";
import { repositoryIdsByName } from "../store/reads/repository-list";
import type { DashboardContext } from "./services";

/**
 * The Repositories page's environment snapshots (docs/environments.md): each one's size, key,
 * age and hits, read from the instance's snapshot folder (the worker's, on this host or a shared
 * filesystem), and Rebuild: a writer's removal of one, so the next trusted Attempt runs setup.
 */

export interface SnapshotView {
  key: string;
  bytes: number;
  files: number;
  hits: number;
  createdAt: string;
  lastUsedAt: string;
}

const storeOf = (ctx: DashboardContext): SnapshotStore => ctx.snapshots ?? snapshotStoreFromEnv();

/** The snapshots of each of `repos` (registered ones; the viewer already sees them), by name. */
export async function snapshotsOfRepositories(ctx: DashboardContext, repos: readonly string[]): Promise<Map<string, SnapshotView[]>> {
  const ids = await repositoryIdsByName(ctx.db, repos);
  const out = new Map<string, SnapshotView[]>();
  for (const [name, id] of ids) {
    const found = await listSnapshots(storeOf(ctx), id);
    if (found.length) out.set(name, found.map((s) => ({ key: s.key, bytes: s.bytes, files: s.files, hits: s.hits, createdAt: s.createdAt, lastUsedAt: s.lastUsedAt })));
  }
  return out;
}

/** Rebuild: removes the repository's snapshot of `key`, audited. Only the repository's writers may. */
export async function rebuildEnvironment(ctx: DashboardContext, viewer: Viewer | null, input: { repo: string; key: string }) {
  const who = await requireRepoPermission(viewer, input.repo, "write");
  const repo = input.repo.toLowerCase();
  const id = (await repositoryIdsByName(ctx.db, [repo])).get(repo);
  const store = storeOf(ctx);
  // the key is looked up under this repository's own id: another repository's never answers
  if (!id || !(await findSnapshot(store, id, input.key))) {
    throw new NotFoundError("environment_snapshot_not_found", `${repo} has no environment snapshot ${input.key.slice(0, 12)}.`);
  }
  await removeSnapshot(store, id, input.key);
  await transaction(ctx.db, (tx) => audit(tx, { actor: who.login, action: "rebuild_environment", repo, detail: { key: input.key } }));
  return { ok: true as const, repo, key: input.key };
}
