import type { SimCore } from "../core";
import type { SimIssue, SimRepo } from "../model";

/** One file of a pull request's diff. */
export interface ChangedFile {
  path: string;
  /** null for a binary file. */
  additions: number | null;
  deletions: number | null;
}

/** The diff is cut here on the page: a sandbox PR is small, a runaway one must not stall it. */
const MAX_PATCH_CHARS = 200_000;

/**
 * What a pull request changes, from git: its head against where it branched from the base
 * (for a merged one, against the base just before the merge), as GitHub's "Files changed".
 */
export async function pullDiff(core: SimCore, repo: SimRepo, item: SimIssue): Promise<{ files: ChangedFile[]; patch: string; truncated: boolean }> {
  const pull = item.pull;
  if (!pull) return { files: [], patch: "", truncated: false };
  const from = pull.merged && pull.mergeCommitSha ? `${pull.mergeCommitSha}^1` : pull.baseSha;
  const range = `${from}...${pull.headSha}`;
  const run = (args: string[]) => core.processes.run(["diff", "--no-color", "--no-renames", ...args, range, "--"], { cwd: repo.gitDir }).then((r) => r.stdout.toString("utf8"));
  const [numstat, patch] = await Promise.all([run(["--numstat"]), run([])]).catch(() => ["", ""]);
  const files = numstat
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [added = "-", deleted = "-", ...path] = line.split("\t");
      return { path: path.join("\t"), additions: added === "-" ? null : Number(added), deletions: deleted === "-" ? null : Number(deleted) };
    });
  return { files, patch: patch.slice(0, MAX_PATCH_CHARS), truncated: patch.length > MAX_PATCH_CHARS };
}

/** Every file path on `branch`, sorted; empty when there is no such branch. */
export async function filesOn(core: SimCore, repo: SimRepo, branch: string): Promise<string[]> {
  const sha = await core.git.branchSha(repo.gitDir, branch);
  if (!sha) return [];
  const { stdout } = await core.processes.run(["ls-tree", "-r", "--name-only", sha], { cwd: repo.gitDir });
  return stdout.toString("utf8").split("\n").filter(Boolean).sort();
}

/** A file's text on `branch`, or null when it has none there. */
export async function fileOn(core: SimCore, repo: SimRepo, branch: string, path: string): Promise<string | null> {
  const found = path ? await core.git.entries(repo.gitDir, `refs/heads/${branch}`, path) : null;
  const entry = found?.kind === "file" ? found.entries[0] : undefined;
  return entry ? (await core.git.blob(repo.gitDir, entry.sha)).toString("utf8") : null;
}
