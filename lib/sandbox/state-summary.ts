import { isoOrNull, isoSeconds } from "./sim-clock";
import type { SimCore } from "./core";
import { labelsOf } from "./state/labels";

/** GET /_sim/state: what is in the simulator, compactly (never the private key). */
export function stateSummary(core: SimCore) {
  const { state } = core;
  return {
    now: isoSeconds(core.clock.now()),
    app: { id: state.app.id, slug: state.app.slug, webhookUrl: state.app.webhookUrl, webhooksPaused: core.webhooks.isPaused },
    accounts: [...state.accounts.values()].map((a) => ({ id: a.id, login: a.login, type: a.type })),
    installations: [...state.installations.values()].map((i) => ({
      id: i.id,
      account: state.account(i.accountId).login,
      repositorySelection: i.repositorySelection,
      repositories: state.installationRepos(i).map((r) => state.fullName(r)),
      permissions: i.permissions,
      suspended: i.suspendedAt !== null,
    })),
    repositories: [...state.repos.values()].map((repo) => ({
      id: repo.id,
      fullName: state.fullName(repo),
      labels: [...repo.labels.values()].map((l) => l.name),
      collaborators: Object.fromEntries([...repo.collaborators].map(([id, p]) => [state.account(id).login, p])),
      items: state.itemsOf(repo).map((item) => ({
        number: item.number,
        kind: item.pull ? "pull_request" : "issue",
        title: item.title,
        state: item.state,
        labels: labelsOf(repo, item).map((l) => l.name),
        updatedAt: isoSeconds(item.updatedAt),
        closedAt: isoOrNull(item.closedAt),
        ...(item.pull ? { head: item.pull.headRef, headSha: item.pull.headSha, draft: item.pull.draft, mergeable: item.pull.mergeable, merged: item.pull.merged } : {}),
      })),
    })),
    checkRuns: [...state.checkRuns.values()].map((r) => ({ id: r.id, repo: state.fullName(state.repo(r.repoId)), name: r.name, headSha: r.headSha, status: r.status, conclusion: r.conclusion, actions: r.actions })),
  };
}
