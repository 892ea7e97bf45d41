import type { Db } from "../store/kernel/db";
import { agentAllows, type AgentSpec, type AllowIds, type InstanceConfig } from "../config/roster";
import { recordAccountResolution, resolvedAccounts } from "../store/people/account-resolutions";
import { recordRepositoryResolution, resolvedRepositories } from "../store/github/repository-resolutions";
import { installationAccountId, repositoryIdentities, repositoryIdHolding } from "../store/github/registrations";
import { resolveOnce } from "./config-accounts";

/**
 * The roster's `allow:` (THREATS.md attacks 13 and 23) names accounts ("acme") and repositories
 * ("acme/api"); it admits GitHub ids (ADR 0091). Each entry is resolved once, on the GitHub host
 * the App talks to, the first time a door asks about its agent, and stored: an account entry to
 * the account id of the installation on that login (`account_resolutions`, as the config's admins
 * and `allowed_orgs` are), a repository entry to the id of the repository Atelier holds under
 * that name (`repository_resolutions`). Both come from Atelier's registrations, which hold what
 * GitHub said with its ids; an entry that names no registration yet stays unresolved and admits
 * nothing (an agent serves only installations of the App). From then on a repository may use the
 * agent when its id, or its owner's account id, is among the resolved ones: an account or
 * repository that renames keeps the agent, whoever takes the old name does not.
 */

/** The ids the entries of `allow` name on `host`, each resolved once. */
export async function rosterAllowIds(db: Db, host: string, allow: readonly string[]): Promise<AllowIds> {
  const accounts = allow.filter((e) => !e.includes("/"));
  const repositories = allow.filter((e) => e.includes("/"));
  const accountIds = accounts.length
    ? await resolveOnce(accounts, {
        stored: (keys) => resolvedAccounts(db, host, keys),
        lookup: (login) => installationAccountId(db, login),
        record: (login, id) => recordAccountResolution(db, host, login, id),
      })
    : new Map<string, string>();
  const repositoryIds = repositories.length
    ? await resolveOnce(repositories, {
        stored: (keys) => resolvedRepositories(db, host, keys),
        lookup: (fullName) => repositoryIdHolding(db, fullName),
        record: (fullName, id) => recordRepositoryResolution(db, host, fullName, id),
      })
    : new Map<string, string>();
  return { accounts: new Set(accountIds.values()), repositories: new Set(repositoryIds.values()) };
}

/** Those of `names` (owner/name) that may use the agent, decided by their ids; without `allow:`, every one. */
export async function agentAllowedRepositories(db: Db, host: string, agent: Pick<AgentSpec, "allow">, names: readonly string[]): Promise<Set<string>> {
  if (!agent.allow) return new Set(names.map((n) => n.toLowerCase()));
  const ids = await rosterAllowIds(db, host, agent.allow);
  return new Set((await repositoryIdentities(db, names)).filter((r) => agentAllows(ids, r)).map((r) => r.fullName));
}

/** Whether the repository Atelier holds under `repo` (owner/name) may use the agent. */
export async function mayUseAgent(db: Db, host: string, agent: Pick<AgentSpec, "allow">, repo: string): Promise<boolean> {
  return (await agentAllowedRepositories(db, host, agent, [repo])).has(repo.toLowerCase());
}

/** For each agent of the roster with an `allow:`, those of `names` it serves (a Loop's config is checked against it). */
export async function allowedRepositoriesByAgent(db: Db, host: string, roster: Pick<InstanceConfig, "agents">, names: readonly string[]): Promise<Record<string, ReadonlySet<string>>> {
  const fenced = Object.entries(roster.agents).filter(([, agent]) => agent.allow);
  return Object.fromEntries(await Promise.all(fenced.map(async ([name, agent]) => [name, await agentAllowedRepositories(db, host, agent, names)] as const)));
}
