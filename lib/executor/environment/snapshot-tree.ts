import { constants } from "node:fs";
import { chmod, copyFile, lstat, mkdir, readdir, readlink, symlink } from "node:fs/promises";
import { dirname, isAbsolute, join, normalize, relative, sep } from "node:path";

/**
 * Copying a cache path into a snapshot, never through a symbolic link: a link is kept as a
 * link, and only when it points inside its box (or at the read-only system under /usr that
 * every sandbox sees); the path itself, and every folder above it, must not be one.
 */

/** Where a link may point when it is absolute: the host's system, which the sandbox sees read-only. */
const SYSTEM_PREFIXES = ["/usr/"];

export interface TreeTally {
  files: number;
  bytes: number;
  /** Links dropped because they point out of the box. */
  droppedLinks: number;
}

export const emptyTally = (): TreeTally => ({ files: 0, bytes: 0, droppedLinks: 0 });

/** Whether `target`, the text of a link at `linkPath` inside `box`, stays inside the box (or is the system's). */
export function linkStaysInside(box: string, linkPath: string, target: string): boolean {
  if (isAbsolute(target)) return SYSTEM_PREFIXES.some((p) => normalize(target).startsWith(p));
  const resolved = normalize(join(dirname(linkPath), target));
  const rel = relative(box, resolved);
  return rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/**
 * Why `rel` under `root` cannot be used (a component is a link, or not a folder); null when it
 * can. `missing` says the last component does not exist (which is fine).
 */
export async function pathProblem(root: string, rel: string): Promise<{ problem: string | null; missing: boolean }> {
  const parts = rel.split("/").filter((p) => p !== "" && p !== ".");
  let at = root;
  for (const [i, part] of parts.entries()) {
    at = join(at, part);
    const st = await lstat(at).catch((err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? null : Promise.reject(err)));
    if (!st) return { problem: null, missing: true };
    if (st.isSymbolicLink()) return { problem: `${parts.slice(0, i + 1).join("/")} is a symbolic link: not followed`, missing: false };
    if (i < parts.length - 1 && !st.isDirectory()) return { problem: `${parts.slice(0, i + 1).join("/")} is not a folder`, missing: false };
  }
  return { problem: null, missing: false };
}

export interface CopyTreeOptions {
  /** The box the source lives in: a link is kept only when it stays inside it. */
  box: string;
  /** Stops the copy when the bytes pass this (a snapshot over the cap). */
  maxBytes: number;
  tally: TreeTally;
}

export class OverCapError extends Error {}

/**
 * Copies the tree at `src` (a folder or a file, not a link) into a snapshot at `dest`, which
 * must not exist: new files without their write bits, links as links when they stay inside the
 * box (never followed), nothing else.
 */
export async function copyTree(src: string, dest: string, o: CopyTreeOptions): Promise<void> {
  const st = await lstat(src);
  if (st.isDirectory()) {
    await mkdir(dest);
    for (const entry of await readdir(src)) await copyTree(join(src, entry), join(dest, entry), o);
    return;
  }
  if (st.isSymbolicLink()) {
    const target = await readlink(src);
    if (linkStaysInside(o.box, src, target)) await symlink(target, dest);
    else o.tally.droppedLinks++;
    return;
  }
  if (!st.isFile()) return; // sockets, pipes and devices are never kept
  o.tally.files++;
  o.tally.bytes += st.size;
  if (o.tally.bytes > o.maxBytes) throw new OverCapError();
  // a reflink where the filesystem has them, else a copy; never through a link (src is a file)
  await copyFile(src, dest, constants.COPYFILE_FICLONE | constants.COPYFILE_EXCL);
  await chmod(dest, st.mode & 0o555);
}
