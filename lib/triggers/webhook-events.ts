import { applyInstallationWebhook, followRepository, type InstallationChange } from "../github/installation-sync";
import type { Log } from "../github/log";
import type { CommentKind, CommentRef } from "../loops/comment-context";
import { CONFIG_PATH } from "../loops/config-schema";
import type { Db } from "../store/kernel/db";
import { repositoriesOfOwner } from "../store/github/repository-rows";
import { markConfigStale } from "../store/items/repository-configs";
import { storeLabelsEtag } from "../store/items/poll-cursors";
import type { Hint, WorkQueue } from "../work/work-queue";

/** What the webhook handlers need: the store and the job system, nothing of GitHub's API. */
export interface WebhookDeps {
  db: Db;
  workQueue: WorkQueue;
  log: Log;
}

interface RepositoryPayload {
  full_name?: string;
  default_branch?: string;
}

/** The Hint an `issues`, `pull_request`, comment or review thread delivery asks for, or null. */
export function hintFromWebhook(event: string, payload: Record<string, unknown>): Hint | null {
  const installationId = (payload.installation as { id?: number } | undefined)?.id;
  const repo = (payload.repository as RepositoryPayload | undefined)?.full_name;
  let number: number | undefined;
  if (event === "issues" || event === "issue_comment") number = (payload.issue as { number?: number } | undefined)?.number;
  else if (event === "pull_request") number = (payload.number as number | undefined) ?? (payload.pull_request as { number?: number } | undefined)?.number;
  else if (event === "pull_request_review" || event === "pull_request_review_comment" || event === "pull_request_review_thread") number = (payload.pull_request as { number?: number } | undefined)?.number;
  if (typeof installationId !== "number" || !repo || typeof number !== "number") return null;
  const sender = (payload.sender as { login?: unknown } | undefined)?.login;
  const comment = commentRefOf(event, payload);
  return { installationId, repo: repo.toLowerCase(), number, ...(typeof sender === "string" && sender ? { sender } : {}), ...(comment ? { comment } : {}) };
}

/** The comment deliveries that may start a comments Loop: a comment written or edited, a review submitted or edited. */
const COMMENT_EVENTS: Record<string, { kind: CommentKind; key: string; actions: readonly string[] }> = {
  issue_comment: { kind: "issue_comment", key: "comment", actions: ["created", "edited"] },
  pull_request_review_comment: { kind: "review_comment", key: "comment", actions: ["created", "edited"] },
  pull_request_review: { kind: "review", key: "review", actions: ["submitted", "edited"] },
};

function commentRefOf(event: string, payload: Record<string, unknown>): CommentRef | null {
  const spec = COMMENT_EVENTS[event];
  if (!spec || !spec.actions.includes(String(payload.action))) return null;
  const id = (payload[spec.key] as { id?: unknown } | undefined)?.id;
  return typeof id === "number" && Number.isSafeInteger(id) && id > 0 ? { kind: spec.kind, id } : null;
}

/**
 * An Item changed on GitHub: re-read it now (the poll would see it later anyway). The delivery's
 * repository, by id, first: a name Atelier holds for another repository is moved or retired
 * before anything is read under it (followRepository).
 */
export async function onItemWebhook(deps: WebhookDeps, event: string, payload: Record<string, unknown>): Promise<Hint | null> {
  const hint = hintFromWebhook(event, payload);
  if (!hint) return null;
  const repository = payload.repository as { id?: unknown; full_name: string; private?: boolean; default_branch?: string };
  if (typeof repository.id === "number" && (await followRepository(deps.db, hint.installationId, { ...repository, id: repository.id }))) {
    deps.log.info({ installation_id: hint.installationId, repo: hint.repo, repository_id: repository.id }, "a repository's name changed hands; registered as GitHub has it now");
    await deps.workQueue.syncSchedulers();
  }
  await deps.workQueue.hint(hint);
  return hint;
}

/** An installation came, went, changed its repositories, or was (un)suspended. */
export async function onInstallationWebhook(deps: WebhookDeps, event: string, payload: Record<string, unknown>): Promise<InstallationChange | null> {
  const change = await applyInstallationWebhook(deps.db, event, payload);
  if (!change) return null;
  deps.log.info({ installation_id: change.installationId, registered: change.registered, removed: change.removed, action: payload.action }, `${event} applied`);
  await deps.workQueue.syncSchedulers();
  for (const repo of change.registered) await deps.workQueue.pollNow(repo);
  return change;
}

/**
 * A repository label was deleted or renamed: the labels are no longer known complete, so the
 * poll that comes now lists them and creates a declared one that is gone.
 */
export async function onLabelWebhook(deps: WebhookDeps, payload: Record<string, unknown>): Promise<void> {
  const repo = (payload.repository as RepositoryPayload | undefined)?.full_name;
  if (!repo || (payload.action !== "deleted" && payload.action !== "edited")) return;
  await storeLabelsEtag(deps.db, repo.toLowerCase(), null);
  await deps.workQueue.pollNow(repo.toLowerCase());
}

/**
 * A push to a default branch that touches `.github/atelier.yml` changes that repository's
 * Loops (a push to an owner's `.github` repository may change every repository of the owner):
 * their configs are read again by the next poll, which comes now (and which brings the
 * schedule Loops' job schedulers in line when they changed).
 */
export async function onPushWebhook(deps: WebhookDeps, payload: Record<string, unknown>): Promise<string[]> {
  const repository = payload.repository as (RepositoryPayload & { name?: string; owner?: { login?: string; name?: string } }) | undefined;
  const fullName = repository?.full_name?.toLowerCase();
  if (!fullName || payload.ref !== `refs/heads/${repository?.default_branch ?? "main"}`) return [];
  const commits = (payload.commits as { added?: string[]; modified?: string[]; removed?: string[] }[] | undefined) ?? [];
  const touched = commits.some((c) => [...(c.added ?? []), ...(c.modified ?? []), ...(c.removed ?? [])].includes(CONFIG_PATH));
  if (!touched) return [];
  const owner = fullName.split("/")[0]!;
  const affected = fullName.endsWith("/.github") ? await repositoriesOfOwner(deps.db, owner) : [fullName];
  await markConfigStale(deps.db, affected);
  for (const repo of affected) await deps.workQueue.pollNow(repo);
  return affected;
}
