import { openPullRequestsAt } from "../store/items/stored-items";
import type { Hint } from "../work/work-queue";
import type { WebhookDeps } from "./webhook-events";

/**
 * A check finished on a commit (`check_run` or `check_suite` completed, a `status` that is not
 * pending): the open pull requests whose head it is are re-read now, so their `item.checks`
 * judge the Loops (a fix-CI Loop). GitHub does not touch a pull request's `updated_at` for a
 * check, so the poll sees a check only with the pull request's next change: this Hint is how a
 * red check reaches a Loop at once. CI is no person: the Hint names no sender.
 */

interface CheckedCommit {
  installationId: number;
  repo: string;
  sha: string;
  /** the pull requests the payload names (GitHub names only those of the same repository) */
  named: number[];
}

type Payload = Record<string, unknown>;

/** The commit a check delivery is about, or null for one that says nothing final. */
export function checkedCommit(event: string, payload: Payload): CheckedCommit | null {
  const installationId = (payload.installation as { id?: number } | undefined)?.id;
  const repo = (payload.repository as { full_name?: string } | undefined)?.full_name;
  if (typeof installationId !== "number" || !repo) return null;
  let subject: { head_sha?: string; pull_requests?: { number?: number }[] } | undefined;
  if (event === "check_run" && payload.action === "completed") subject = payload.check_run as typeof subject;
  else if (event === "check_suite" && payload.action === "completed") subject = payload.check_suite as typeof subject;
  else if (event === "status" && payload.state !== "pending") subject = { head_sha: payload.sha as string };
  if (!subject?.head_sha) return null;
  const named = (subject.pull_requests ?? []).map((p) => p.number).filter((n): n is number => typeof n === "number");
  return { installationId, repo: repo.toLowerCase(), sha: subject.head_sha, named };
}

/** Hints the open pull requests a finished check is about: those it names, and those whose stored head is its commit. */
export async function onCheckWebhook(deps: WebhookDeps, event: string, payload: Payload): Promise<Hint[]> {
  const commit = checkedCommit(event, payload);
  if (!commit) return [];
  const atHead = await openPullRequestsAt(deps.db, commit.repo, commit.sha);
  const numbers = [...new Set([...commit.named, ...atHead])].sort((a, b) => a - b);
  const hints = numbers.map((number): Hint => ({ installationId: commit.installationId, repo: commit.repo, number }));
  for (const hint of hints) await deps.workQueue.hint(hint);
  return hints;
}
