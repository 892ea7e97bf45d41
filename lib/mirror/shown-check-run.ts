import { isCompletedView, type CheckRunView } from "./check-run-view";
import { callGitHub, repoParams, type GitHubClient } from "./github-client";

/** The check run a Run shows on: its id, its commit, and whether it is completed. */
export interface ShownCheckRun {
  id: number;
  sha: string;
  completed: boolean;
}

/** The REST body of a check run create or update. */
export function checkRunBody(view: CheckRunView): Record<string, unknown> {
  return {
    name: view.name,
    details_url: view.detailsUrl,
    external_id: view.externalId,
    status: view.status,
    ...(view.conclusion ? { conclusion: view.conclusion } : {}),
    ...(view.startedAt ? { started_at: view.startedAt } : {}),
    ...(view.completedAt ? { completed_at: view.completedAt } : {}),
    output: view.output,
    actions: view.actions,
  };
}

/**
 * Whether the shown check run can take the view by an update: GitHub keeps a completed check
 * run's conclusion when its status goes back to queued or in_progress, so a Run that reopens
 * (approved, retried) gets a new check run, as a re-run on GitHub does.
 */
export const canUpdateInPlace = (shown: ShownCheckRun, sha: string, view: CheckRunView): boolean =>
  shown.sha === sha && !(shown.completed && !isCompletedView(view));

/**
 * A check run of this Run on this commit that a previous sync created but could not remember
 * (it stopped between the create call and the store): found by name and external_id.
 */
export async function findCheckRunOfRun(client: GitHubClient, repo: string, sha: string, view: CheckRunView): Promise<ShownCheckRun | null> {
  const { data } = await callGitHub("list the check runs of a commit", () =>
    client.request("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", {
      ...repoParams(repo),
      ref: sha,
      check_name: view.name,
      filter: "all",
      per_page: 100,
    }),
  );
  const runs = ((data?.check_runs ?? []) as Array<{ id: number; external_id: string | null; status: string }>)
    .filter((r) => r.external_id === view.externalId)
    .sort((a, b) => b.id - a.id);
  const found = runs[0];
  return found ? { id: found.id, sha, completed: found.status === "completed" } : null;
}

async function updateCheckRun(client: GitHubClient, repo: string, id: number, body: Record<string, unknown>): Promise<void> {
  await callGitHub("update a check run", () =>
    client.request("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", { ...repoParams(repo), check_run_id: id, ...body }),
  );
}

/** Closes the check run a Run left on an older commit when its pull request moved on. */
async function concludeMoved(client: GitHubClient, repo: string, old: ShownCheckRun, sha: string): Promise<void> {
  await updateCheckRun(client, repo, old.id, {
    status: "completed",
    conclusion: "neutral",
    output: { title: "Moved", summary: `This Run's pull request moved to ${sha.slice(0, 7)}; its check follows the new head.` },
    actions: [],
  });
}

/**
 * Makes the Run's check run on `sha` say `view`: updates the shown one, or creates one (after
 * closing the one left on an older commit, and adopting one a crashed sync created). Returns
 * the check run now shown, which the caller remembers at once.
 */
export async function showCheckRun(
  client: GitHubClient,
  repo: string,
  shown: ShownCheckRun | null,
  sha: string,
  view: CheckRunView,
): Promise<{ shown: ShownCheckRun }> {
  let current = shown;
  if (current && current.sha !== sha) {
    if (!current.completed) await concludeMoved(client, repo, current, sha);
    current = null;
  }
  const adopted = current === null ? await findCheckRunOfRun(client, repo, sha, view) : null;
  current ??= adopted;
  const body = checkRunBody(view);
  const completed = isCompletedView(view);
  if (current && canUpdateInPlace(current, sha, view)) {
    await updateCheckRun(client, repo, current.id, body);
    return { shown: { id: current.id, sha, completed } };
  }
  const { data } = await callGitHub("create a check run", () =>
    client.request("POST /repos/{owner}/{repo}/check-runs", { ...repoParams(repo), head_sha: sha, ...body }),
  );
  return { shown: { id: Number(data.id), sha, completed } };
}
