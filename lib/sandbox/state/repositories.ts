import type { SimAccount, SimRepo } from "../model";
import type { SimState } from "./sim-state";

/**
 * A repository renamed, transferred or deleted, as GitHub does it: the id stays through a rename
 * or a transfer, and the old name is free for anyone to take at once (GitHub's redirects of the
 * old name aside); each sends its `repository` event to the App's installation that covers the
 * repository (a transfer: the new owner's; a deletion: the one that covered it).
 */

function nameFree(state: SimState, owner: SimAccount, name: string): void {
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(name)) throw new Error(`${JSON.stringify(name)} is not a repository name`);
  if (state.findRepo(owner.login, name)) throw new Error(`repository ${owner.login}/${name} already exists`);
}

export function renameRepo(state: SimState, repo: SimRepo, to: string, senderId: number): void {
  nameFree(state, state.account(repo.ownerId), to);
  const from = repo.name;
  repo.name = to;
  repo.updatedAt = state.clock.now();
  state.emit({ event: "repository", action: "renamed", repoId: repo.id, senderId, changes: { repository: { name: { from } } } });
}

export function transferRepo(state: SimState, repo: SimRepo, to: SimAccount, senderId: number): void {
  nameFree(state, to, repo.name);
  const fromId = repo.ownerId;
  // a selected installation of the old owner no longer covers it
  for (const installation of state.installations.values()) installation.repoIds.delete(repo.id);
  repo.ownerId = to.id;
  repo.updatedAt = state.clock.now();
  state.emit({ event: "repository", action: "transferred", repoId: repo.id, senderId, fromOwnerId: fromId });
}

export function deleteRepo(state: SimState, repo: SimRepo, senderId: number): void {
  // rendered while the repository still is, so it reaches the installation that covered it
  state.emit({ event: "repository", action: "deleted", repoId: repo.id, senderId });
  for (const installation of state.installations.values()) installation.repoIds.delete(repo.id);
  for (const [key, item] of state.items) if (item.repoId === repo.id) state.items.delete(key);
  state.repos.delete(repo.id);
}
