import { createHash } from "node:crypto";
import type { Octokit } from "./app-client";
import { conditionalGet, followPages } from "./conditional-request";
import { httpStatusOf } from "./rate-limit-errors";
import { splitRepo } from "./repo-name";

export interface LabelToEnsure {
  name: string;
  /** six hex digits, no "#" */
  color: string;
  description?: string | null;
}

export interface EnsureLabelsResult {
  /**
   * What to pass next time: the ETag of a listing in which every declared label existed, bound
   * to the declared set (declaring another label makes the next preflight list again).
   */
  etag: string | null;
  created: string[];
  /** false when GitHub answered 304: nothing changed since the ETag. */
  listed: boolean;
}

/**
 * Label preflight: lists the repository's labels with If-None-Match (304 when nothing changed,
 * which costs no rate-limit budget) and creates the declared labels that are missing. A label
 * created meanwhile by someone else (422 already_exists) is fine. The ETag returned is kept only
 * when nothing was missing, so a failed creation is tried again next time.
 */
export async function ensureLabels(
  octokit: Octokit,
  fullName: string,
  labels: readonly LabelToEnsure[],
  previous: string | null,
): Promise<EnsureLabelsResult> {
  const { owner, repo } = splitRepo(fullName);
  const declared = declaredKey(labels);
  const [etag, forSet] = splitToken(previous);
  const first = await conditionalGet<{ name: string }[]>(
    octokit,
    "GET /repos/{owner}/{repo}/labels",
    { owner, repo, per_page: 100 },
    forSet === declared ? etag : null,
  );
  if (!first.modified) return { etag: previous, created: [], listed: false };
  const { items } = await followPages(octokit, first, 10);
  const existing = new Set(items.map((l) => l.name.toLowerCase()));
  const missing = labels.filter((l) => !existing.has(l.name.toLowerCase()));
  const created: string[] = [];
  for (const label of missing) {
    if (await createLabel(octokit, owner, repo, label)) created.push(label.name);
  }
  return { etag: missing.length === 0 && first.etag ? `${first.etag}|${declared}` : null, created, listed: true };
}

/** Whether `etag` is what a preflight that found every one of `labels` returned (none is missing as of then). */
export function labelsEtagCovers(labels: readonly LabelToEnsure[], etag: string | null): boolean {
  const [tag, forSet] = splitToken(etag);
  return tag !== null && forSet === declaredKey(labels);
}

/** A short fingerprint of the declared label names. */
function declaredKey(labels: readonly LabelToEnsure[]): string {
  const names = labels.map((l) => l.name.toLowerCase()).sort().join("\n");
  return createHash("sha256").update(names).digest("hex").slice(0, 12);
}

function splitToken(token: string | null): [string | null, string | null] {
  if (!token) return [null, null];
  const at = token.lastIndexOf("|");
  return at < 0 ? [token, null] : [token.slice(0, at), token.slice(at + 1)];
}

/** Creates a label; false when it already existed (422 already_exists). */
async function createLabel(octokit: Octokit, owner: string, repo: string, label: LabelToEnsure): Promise<boolean> {
  try {
    await octokit.request("POST /repos/{owner}/{repo}/labels", {
      owner,
      repo,
      name: label.name,
      color: label.color.replace(/^#/, ""),
      ...(label.description ? { description: label.description } : {}),
    });
    return true;
  } catch (err) {
    if (isAlreadyExists(err)) return false;
    throw err;
  }
}

function isAlreadyExists(err: unknown): boolean {
  if (httpStatusOf(err)?.status !== 422) return false;
  const errors = (err as { response?: { data?: { errors?: { code?: string }[] } } }).response?.data?.errors ?? [];
  return errors.some((e) => e.code === "already_exists");
}

/** Adds labels to an issue or pull request. */
export async function addLabels(octokit: Octokit, fullName: string, number: number, labels: string[]): Promise<void> {
  if (labels.length === 0) return;
  const { owner, repo } = splitRepo(fullName);
  await octokit.request("POST /repos/{owner}/{repo}/issues/{issue_number}/labels", { owner, repo, issue_number: number, labels });
}

/** Removes a label from an issue or pull request; a label that is not there is fine. */
export async function removeLabel(octokit: Octokit, fullName: string, number: number, label: string): Promise<void> {
  const { owner, repo } = splitRepo(fullName);
  try {
    await octokit.request("DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}", { owner, repo, issue_number: number, name: label });
  } catch (err) {
    if (httpStatusOf(err)?.status !== 404) throw err;
  }
}
