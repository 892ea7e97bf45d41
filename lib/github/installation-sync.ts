import type { Db } from "../store/kernel/db";
import { holdsRepositoryAs, isInstallationRegistered } from "../store/github/registrations";
import { markInstallationDeleted, markInstallationsDeletedExcept, upsertInstallation, type InstallationInput } from "../store/github/installation-rows";
import { registerRepositories, removeRepositories, removeRepositoriesExcept, retireRepository, type RepositoryInput } from "../store/github/repository-rows";
import { transaction } from "../store/kernel/transaction";
import type { GitHubApp, Octokit } from "./app-client";
import { describeError } from "./rate-limit-errors";
import { followPages, nextPageUrl } from "./conditional-request";
import type { Log } from "./log";

/**
 * The installations and repositories Atelier knows, kept from webhooks (installation,
 * installation_repositories) and from reconcileInstallations at start: webhooks are hints,
 * GitHub's answer to GET /app/installations is the truth.
 */

export interface InstallationChange {
  installationId: number;
  /** Repositories registered (or registered again) by this change, lower-cased owner/name. */
  registered: string[];
  /** Repositories no longer covered. */
  removed: string[];
}

/**
 * Applies an `installation`, `installation_repositories` or `repository` webhook; other events
 * change nothing. A repository renamed or transferred keeps its id: it is registered under its
 * new name, and what it owns moves with it (another repository that held that name is retired);
 * one deleted is retired (ADR 0070). The hourly reconcile sees the same through the
 * installations' listings when a webhook is lost.
 */
export async function applyInstallationWebhook(db: Db, event: string, payload: Record<string, unknown>): Promise<InstallationChange | null> {
  const installation = payload.installation as InstallationInput | undefined;
  if (!installation || typeof installation.id !== "number") return null;
  const action = String(payload.action ?? "");
  if (event === "installation") {
    switch (action) {
      case "created":
      case "new_permissions_accepted":
        return transaction(db, async (sql) => {
          await upsertInstallation(sql, installation);
          const repos = (payload.repositories as RepositoryInput[] | undefined) ?? [];
          return { installationId: installation.id, registered: await registerRepositories(sql, installation.id, repos), removed: [] };
        });
      case "deleted":
        return transaction(db, async (sql) => {
          await markInstallationDeleted(sql, installation.id);
          const removed = await removeRepositoriesExcept(sql, installation.id, []);
          return { installationId: installation.id, registered: [], removed };
        });
      case "suspend":
      case "unsuspend":
        await transaction(db, (sql) => upsertInstallation(sql, { ...installation, suspended_at: action === "suspend" ? (installation.suspended_at ?? new Date().toISOString()) : null }));
        return { installationId: installation.id, registered: [], removed: [] };
      default:
        return null;
    }
  }
  if (event === "repository") {
    const repository = payload.repository as RepositoryInput;
    switch (action) {
      case "renamed":
      case "transferred":
        // an installation Atelier does not know yet comes with the reconcile, its repositories with it
        if (!(await isInstallationRegistered(db, installation.id))) return null;
        return transaction(db, async (sql) => {
          await registerRepositories(sql, installation.id, [repository]);
          return { installationId: installation.id, registered: [repository.full_name.toLowerCase()], removed: [] };
        });
      case "deleted":
        return transaction(db, async (sql) => {
          const retired = await retireRepository(sql, repository.id);
          return { installationId: installation.id, registered: [], removed: retired ? [retired] : [] };
        });
      default:
        return null;
    }
  }
  if (event === "installation_repositories") {
    return transaction(db, async (sql) => {
      await upsertInstallation(sql, installation);
      const added = (payload.repositories_added as RepositoryInput[] | undefined) ?? [];
      const gone = ((payload.repositories_removed as RepositoryInput[] | undefined) ?? []).map((r) => r.id);
      const registered = await registerRepositories(sql, installation.id, added);
      const removed = await removeRepositories(sql, installation.id, gone);
      return { installationId: installation.id, registered, removed };
    });
  }
  return null;
}

/**
 * What an Item's delivery says of its repository: its id, under its name now. When Atelier holds
 * that name for another id, or the id under another name, GitHub renamed, transferred or replaced
 * a repository before Atelier heard of it (an App registered without the `repository` event): it
 * is registered as GitHub has it now, and the rows follow (ADR 0070). True when it was.
 */
export async function followRepository(db: Db, installationId: number, repository: RepositoryInput): Promise<boolean> {
  if (await holdsRepositoryAs(db, repository.id, repository.full_name)) return false;
  if (!(await isInstallationRegistered(db, installationId))) return false;
  await transaction(db, (sql) => registerRepositories(sql, installationId, [repository]));
  return true;
}

export interface ReconcileResult {
  installations: number;
  registered: string[];
  removed: string[];
  /** installations whose repositories could not be listed this time (left as they were) */
  failed: number[];
}

/**
 * Brings the installations and repositories tables in line with GitHub: every installation of
 * the App (GET /app/installations) and the repositories each one covers
 * (GET /installation/repositories); installations GitHub no longer lists are marked deleted.
 */
export async function reconcileInstallations(deps: { db: Db; github: GitHubApp; log?: Log }): Promise<ReconcileResult> {
  const app = await deps.github.appOctokit();
  const first = await app.request("GET /app/installations", { per_page: 100 });
  const { items: installations } = await followPages(app, { data: first.data as InstallationInput[], link: (first.headers.link as string | undefined) ?? null }, 100);
  const registered: string[] = [];
  const removed: string[] = [];
  const failed: number[] = [];
  for (const installation of installations) {
    let repos: RepositoryInput[] = [];
    const suspended = Boolean(installation.suspended_at);
    if (!suspended) {
      try {
        repos = await listInstallationRepositories(deps.github.installationOctokit(installation.id));
      } catch (err) {
        // one installation GitHub cannot answer for now (rate limit, outage) keeps what is known
        failed.push(installation.id);
        deps.log?.warn({ installationId: installation.id, err: describeError(err) }, "could not list the installation's repositories; kept as known");
        continue;
      }
    }
    const change = await transaction(deps.db, async (sql) => {
      await upsertInstallation(sql, installation);
      if (suspended) return { registered: [], removed: [] };
      return {
        registered: await registerRepositories(sql, installation.id, repos),
        removed: await removeRepositoriesExcept(sql, installation.id, repos.map((r) => r.id)),
      };
    });
    registered.push(...change.registered);
    removed.push(...change.removed);
  }
  const known = installations.map((i) => i.id);
  const gone = await transaction(deps.db, async (sql) => {
    const out: string[] = [];
    for (const id of await markInstallationsDeletedExcept(sql, known)) out.push(...(await removeRepositoriesExcept(sql, id, [])));
    return out;
  });
  removed.push(...gone);
  deps.log?.info({ installations: installations.length, registered: registered.length, removed: removed.length }, "installations reconciled");
  return { installations: installations.length, registered, removed, failed };
}

/** GET /installation/repositories, every page. */
async function listInstallationRepositories(octokit: Octokit): Promise<RepositoryInput[]> {
  const repos: RepositoryInput[] = [];
  let url: string | null = "/installation/repositories?per_page=100";
  for (let page = 0; url && page < 100; page++) {
    const response = await octokit.request(`GET ${url}`);
    repos.push(...(response.data as { repositories: RepositoryInput[] }).repositories);
    url = nextPageUrl(response.headers.link as string | undefined);
  }
  return repos;
}
