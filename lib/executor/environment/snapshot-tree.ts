import { constants } from "node:fs";
import { chmod, copyFile, lchown, link, lstat, mkdir, readdir, readlink, symlink } from "node:fs/promises";
import { dirname, isAbsolute, join, normalize, relative, sep } from "node:path";

/**
 * Copying a cache path into a snapshot and back, never through a symbolic link: a link is
 * kept as a link, and only when it points inside its box (or at the read-only system under
 * /usr that every sandbox sees); the path itself, and every folder above it, must not be one.
 */

/** Where a link may point when it is absolute: the host's system, which the sandbox sees read-only. */
const SYSTEM_PREFIXES = ["/usr/"];

export interface TreeTally {
  files: number;
  bytes: number;
  /** Links dropped because they point out of the box. */
  droppedLinks: number;
  /** Sockets, pipes and devices, never kept. */
  skippedSpecial: number;
}

export const emptyTally = (): TreeTally => ({ files: 0, bytes: 0, droppedLinks: 0, skippedSpecial: 0 });

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
  /** The box a link must stay inside, and which side of the copy lives in it. */
  box: { root: string; side: "src" | "dest" };
  /** "link": hard links to the source's files (restoring); "copy": new files (saving). */
  files: "link" | "copy";
  /** Owner of what is made (the box's uid when restoring as root); null: the worker. */
  owner: number | null;
  /** Files lose their write bits (a snapshot's are read-only). */
  readOnly: boolean;
  /** Stops the copy when the bytes pass this (a snapshot over the cap). */
  maxBytes?: number;
  tally: TreeTally;
}

export class OverCapError extends Error {}

/** Copies the tree at `src` (a folder or a file, not a link) to `dest`, which must not exist. */
export async function copyTree(src: string, dest: string, o: CopyTreeOptions): Promise<void> {
  const st = await lstat(src);
  if (st.isDirectory()) {
    await mkdir(dest);
    if (o.owner !== null) await lchown(dest, o.owner, o.owner);
    for (const entry of await readdir(src)) await copyTree(join(src, entry), join(dest, entry), o);
    return;
  }
  if (st.isSymbolicLink()) {
    const target = await readlink(src);
    if (!linkStaysInside(o.box.root, o.box.side === "src" ? src : dest, target)) {
      o.tally.droppedLinks++;
      return;
    }
    await symlink(target, dest);
    if (o.owner !== null) await lchown(dest, o.owner, o.owner);
    return;
  }
  if (!st.isFile()) {
    o.tally.skippedSpecial++;
    return;
  }
  o.tally.files++;
  o.tally.bytes += st.size;
  if (o.maxBytes !== undefined && o.tally.bytes > o.maxBytes) throw new OverCapError();
  if (o.files === "link") {
    try {
      await link(src, dest);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
    }
  }
  // a reflink where the filesystem has them, else a copy; never through a link (src is a file)
  await copyFile(src, dest, constants.COPYFILE_FICLONE | constants.COPYFILE_EXCL);
  if (o.owner !== null) await lchown(dest, o.owner, o.owner);
  await chmod(dest, o.readOnly ? st.mode & 0o555 : st.mode & 0o7777);
}
