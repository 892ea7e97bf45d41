import type { AppPermissions, SimAccount, SimInstallation, SimRepo } from "../model";
import type { SimState } from "./sim-state";

export interface InstallationInput {
  account: SimAccount;
  /** Repositories to select; omitted = all of the account's repositories. */
  repos?: SimRepo[];
  permissions?: AppPermissions;
  events?: string[];
}

export function createInstallation(state: SimState, input: InstallationInput, senderId: number): SimInstallation {
  const existing = [...state.installations.values()].find((i) => i.accountId === input.account.id);
  if (existing) throw new Error(`the App is already installed on ${input.account.login} (installation ${existing.id})`);
  const now = state.clock.now();
  const installation: SimInstallation = {
    id: state.nextId(),
    accountId: input.account.id,
    repositorySelection: input.repos ? "selected" : "all",
    repoIds: new Set((input.repos ?? []).map((r) => r.id)),
    permissions: { ...(input.permissions ?? state.app.permissions) },
    events: [...(input.events ?? state.app.events)],
    createdAt: now,
    updatedAt: now,
    suspendedAt: null,
    suspendedById: null,
  };
  state.installations.set(installation.id, installation);
  state.emit({ event: "installation", action: "created", installationId: installation.id, senderId });
  return installation;
}

export function deleteInstallation(state: SimState, installation: SimInstallation, senderId: number): void {
  state.emit({ event: "installation", action: "deleted", installationId: installation.id, senderId });
  state.installations.delete(installation.id);
  for (const [key, token] of state.tokens) if (token.installationId === installation.id) state.tokens.delete(key);
}

export function addInstallationRepo(state: SimState, installation: SimInstallation, repo: SimRepo, senderId: number): void {
  if (state.installationRepos(installation).some((r) => r.id === repo.id)) return;
  if (repo.ownerId !== installation.accountId) throw new Error(`${state.fullName(repo)} does not belong to the installation's account`);
  installation.repoIds.add(repo.id);
  installation.updatedAt = state.clock.now();
  state.emit({ event: "installation_repositories", action: "added", installationId: installation.id, senderId, added: [repo.id], removed: [] });
}

export function removeInstallationRepo(state: SimState, installation: SimInstallation, repo: SimRepo, senderId: number): void {
  if (installation.repositorySelection === "all") {
    // Leaving "all" for "selected" keeps every other repository of the account.
    installation.repositorySelection = "selected";
    installation.repoIds = new Set(state.installationRepos({ ...installation, repositorySelection: "all" }).map((r) => r.id));
  }
  if (!installation.repoIds.delete(repo.id)) return;
  installation.updatedAt = state.clock.now();
  state.emit({ event: "installation_repositories", action: "removed", installationId: installation.id, senderId, added: [], removed: [repo.id] });
}

export function setSuspended(state: SimState, installation: SimInstallation, suspended: boolean, senderId: number): void {
  if ((installation.suspendedAt !== null) === suspended) return;
  const now = state.clock.now();
  installation.suspendedAt = suspended ? now : null;
  installation.suspendedById = suspended ? senderId : null;
  installation.updatedAt = now;
  state.emit({ event: "installation", action: suspended ? "suspend" : "unsuspend", installationId: installation.id, senderId });
}
