import { execFile } from "node:child_process";
import { stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";

/**
 * A disk quota for an Attempt's box: a tmpfs of the roster's `limits.disk_mb` mounted on the box
 * directory (its clone, $HOME, $TMPDIR and result directory) before anything is put there. An
 * agent that writes more gets ENOSPC in its own box, and the disk the worker and Postgres live on
 * never sees its writes. Why tmpfs and not a project quota: ADR 0054. Only a worker that runs as
 * root can mount it (the same condition as the box's own uid); anyone else gets a note instead.
 */

const run = promisify(execFile);

/** The box directory of an Attempt's directory (agent-sandbox/box.ts lays it out). */
const boxOf = (attemptDir: string) => join(attemptDir, "box");

/** Mounts the quota on `boxDir` (which must exist and be empty); the reason there is none, or null. */
export async function mountBoxQuota(boxDir: string, diskMb: number): Promise<string | null> {
  if (process.getuid?.() !== 0) return "the box has no disk quota (the worker does not run as root, so it cannot mount one)";
  try {
    await run("mount", ["-t", "tmpfs", "-o", `size=${Math.floor(diskMb)}m,mode=0711,nodev,nosuid`, "atelier-box", boxDir]);
    return null;
  } catch (err) {
    return `the box has no disk quota (mounting its tmpfs failed: ${(err as { stderr?: string }).stderr?.trim() || String(err)})`;
  }
}

async function isMountPoint(path: string): Promise<boolean> {
  const [here, parent] = await Promise.all([stat(path).catch(() => null), stat(dirname(path)).catch(() => null)]);
  return !!here && !!parent && here.dev !== parent.dev;
}

/** Unmounts the box's quota of an Attempt's directory, when it has one (before the directory is removed). */
export async function unmountBoxQuota(attemptDir: string): Promise<void> {
  const box = boxOf(attemptDir);
  if (!(await isMountPoint(box))) return;
  // lazily: a process of the agent's still holding a file there must not keep the box forever
  await run("umount", ["--lazy", box]);
}
