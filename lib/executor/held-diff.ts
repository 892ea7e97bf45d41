import { git } from "./git";
import type { Redactor } from "../secrets/redact";

/**
 * What a writer reads before pushing a Run's held commits (ADR 0058): every file the commits
 * change with its added and deleted lines, and the patch, both bounded (a cut says so). Read by
 * the worker's git from the harvest repository, which the agent never saw; secrets masked.
 */

export interface ChangedFile {
  path: string;
  /** null for a binary file */
  additions: number | null;
  deletions: number | null;
}

export interface HeldDiff {
  files: ChangedFile[];
  /** more files changed than `files` lists */
  filesCut: boolean;
  patch: string;
  /** the patch is longer than what is kept */
  patchCut: boolean;
}

/** The most files listed, and the most bytes of patch kept. */
export const HELD_DIFF_LIMITS = { files: 1_000, patchBytes: 512 * 1024 } as const;

/** `git diff --numstat -z` output: `added\tdeleted\tpath\0`, or for a rename `added\tdeleted\t\0from\0to\0`. */
export function parseNumstat(out: string, max: number): { files: ChangedFile[]; cut: boolean } {
  const parts = out.split("\0");
  const files: ChangedFile[] = [];
  let i = 0;
  while (i < parts.length) {
    const head = parts[i++] ?? "";
    if (head === "") continue;
    // a path may hold tabs itself: only the first two separate the counts
    const first = head.indexOf("\t");
    const second = head.indexOf("\t", first + 1);
    const added = head.slice(0, first);
    const deleted = head.slice(first + 1, second);
    const path = head.slice(second + 1);
    const name = path !== "" ? path : `${parts[i++] ?? ""} → ${parts[i++] ?? ""}`;
    if (files.length === max) return { files, cut: true };
    files.push({ path: name, additions: added === "-" ? null : Number(added), deletions: deleted === "-" ? null : Number(deleted) });
  }
  return { files, cut: false };
}

export async function heldDiff(repo: string, baseSha: string, headSha: string, redactor: Redactor, signal?: AbortSignal): Promise<HeldDiff> {
  const range = [baseSha, headSha, "--"];
  const flags = ["--no-color", "--no-ext-diff", "--no-textconv", "-M"];
  const numstat = await git(["diff", ...flags, "--numstat", "-z", ...range], { cwd: repo, signal, maxStdoutBytes: 4 * 1024 * 1024 });
  const listed = parseNumstat(numstat.stdout, HELD_DIFF_LIMITS.files);
  const patch = await git(["diff", ...flags, ...range], { cwd: repo, signal, maxStdoutBytes: HELD_DIFF_LIMITS.patchBytes });
  return {
    files: listed.files.map((f) => ({ ...f, path: redactor.redact(f.path) })),
    filesCut: listed.cut || numstat.cut === true,
    patch: redactor.redact(patch.stdout),
    patchCut: patch.cut === true,
  };
}
