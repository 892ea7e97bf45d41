import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { execFile } from "node:child_process";
import { lchown, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import { join, resolve } from "node:path";
import { copyTree, emptyTally, OverCapError, pathProblem, type TreeTally } from "./snapshot-tree";
import { toolchainsIdentity, type MountedToolchain } from "./toolchains";

/**
 * Environment snapshots: the cache paths a good setup filled, kept per repository (by its
 * GitHub id, never its name) under a key of the setup's text, the key files' content and the
 * worker's toolchain. Layout of the store's folder (shareable between workers):
 *
 *   <dir>/<repository id>/<key>/meta.json     what it holds (EnvironmentSnapshot)
 *   <dir>/<repository id>/<key>/usage.json    hits and last use (rewritten whole on each restore)
 *   <dir>/<repository id>/<key>/paths/<i>/    the i-th cache path, read-only files
 *   <dir>/<repository id>/.tmp-*              a snapshot being written: renamed whole when done
 */

export interface SnapshotStore {
  dir: string;
  /** Total size of all snapshots (ATELIER_ENV_CACHE_GB); least recently used evicted past it. */
  capBytes: number;
}

export const DEFAULT_ENV_CACHE_GB = 20;

/**
 * The instance's store: ATELIER_ENV_CACHE_DIR (default <ATELIER_WORKSPACE>/environments)
 * capped at ATELIER_ENV_CACHE_GB. The worker writes it; the dashboard lists and removes.
 */
export function snapshotStoreFromEnv(env: NodeJS.ProcessEnv = process.env): SnapshotStore {
  const gb = Number(env.ATELIER_ENV_CACHE_GB ?? DEFAULT_ENV_CACHE_GB);
  return {
    dir: resolve(/* turbopackIgnore: true */ env.ATELIER_ENV_CACHE_DIR || join(env.ATELIER_WORKSPACE ?? ".atelier/workspaces", "environments")),
    capBytes: Math.round((Number.isFinite(gb) && gb >= 0 ? gb : DEFAULT_ENV_CACHE_GB) * 1024 ** 3),
  };
}

export interface EnvironmentSnapshot {
  repositoryId: string;
  key: string;
  /** The cache paths, in order (paths/<i>). */
  cache: string[];
  bytes: number;
  files: number;
  createdAt: string;
}

export interface SnapshotUsage {
  hits: number;
  lastUsedAt: string;
}

export type SnapshotInfo = EnvironmentSnapshot & SnapshotUsage & { dir: string };

/** Where a cache path lives: `~/…` in the sandbox's home, anything else in the checkout. */
export function cacheRoot(path: string, roots: { worktree: string; home: string }): { root: string; rel: string } {
  return path.startsWith("~/") ? { root: roots.home, rel: path.slice(2) } : { root: roots.worktree, rel: path };
}

/** What the worker's toolchain is: the system and node it runs, the tools the agent is given, and the repository's toolchains. */
export function toolchainIdentity(readOnlyPaths: readonly string[] = [], toolchains: readonly MountedToolchain[] = []): string {
  let os = "";
  try {
    os = readFileSync("/etc/os-release", "utf8");
  } catch {
    // no os-release: the platform says enough
  }
  return JSON.stringify([process.platform, process.arch, process.version, createHash("sha256").update(os).digest("hex"), [...readOnlyPaths].sort(), ...(toolchains.length ? [toolchainsIdentity(toolchains)] : [])]);
}

/** The snapshot's key: sha256 of everything that decides what setup produces. */
export function snapshotKey(parts: { setup: string; cache: readonly string[]; env: Record<string, string>; keyFiles: readonly { path: string; content: Buffer | null }[]; toolchain: string }): string {
  const h = createHash("sha256");
  const field = (s: string | Buffer) => h.update(`${s.length}:`).update(s);
  field(parts.setup);
  field(JSON.stringify(parts.cache));
  field(JSON.stringify(Object.entries(parts.env).sort()));
  for (const f of parts.keyFiles) {
    field(f.path);
    field(f.content === null ? "(missing)" : createHash("sha256").update(f.content).digest("hex"));
  }
  field(parts.toolchain);
  return h.digest("hex");
}

const run = promisify(execFile);
const ID = /^[0-9]+$/;
const KEY = /^[0-9a-f]{64}$/;

function snapshotDir(store: SnapshotStore, repositoryId: string, key: string): string {
  if (!ID.test(repositoryId) || !KEY.test(key)) throw new Error(`not a snapshot: ${repositoryId}/${key}`);
  return join(store.dir, repositoryId, key);
}

async function readJson<T>(file: string): Promise<T | null> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as T;
  } catch {
    return null;
  }
}

/** Writes a small file whole: a reader sees the old one or the new one. */
async function writeWhole(file: string, text: string): Promise<void> {
  const tmp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

export async function findSnapshot(store: SnapshotStore, repositoryId: string, key: string): Promise<EnvironmentSnapshot | null> {
  const meta = await readJson<EnvironmentSnapshot>(join(snapshotDir(store, repositoryId, key), "meta.json"));
  return meta && meta.repositoryId === repositoryId && meta.key === key ? meta : null;
}

export type SaveOutcome =
  | { tag: "Saved"; snapshot: EnvironmentSnapshot; evicted: number; tally: TreeTally }
  | { tag: "Refused"; sentence: string }
  | { tag: "Exists" };

const gb = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(bytes < 1024 ** 3 ? 3 : 1)} GB`;

/**
 * Keeps the cache paths (relative to their roots) as the snapshot of `key`: written in a
 * folder of its own, then renamed whole; refused, with the sentence, when it would pass the cap.
 */
export async function saveSnapshot(
  store: SnapshotStore,
  repositoryId: string,
  key: string,
  cache: readonly string[],
  roots: { worktree: string; home: string },
): Promise<SaveOutcome> {
  const final = snapshotDir(store, repositoryId, key);
  if (await findSnapshot(store, repositoryId, key)) return { tag: "Exists" };
  const parent = join(store.dir, repositoryId);
  await mkdir(parent, { recursive: true });
  const tmp = join(parent, `.tmp-${randomBytes(8).toString("hex")}`);
  const tally = emptyTally();
  try {
    await mkdir(join(tmp, "paths"), { recursive: true });
    for (const [i, path] of cache.entries()) {
      const { root, rel } = cacheRoot(path, roots);
      const { problem, missing } = await pathProblem(root, rel);
      if (problem) return { tag: "Refused", sentence: `The cache path ${path}: ${problem}; no snapshot is kept.` };
      if (missing) continue; // setup did not make it: restored as missing
      await copyTree(join(root, rel), join(tmp, "paths", String(i)), { box: root, maxBytes: store.capBytes, tally });
    }
    const snapshot: EnvironmentSnapshot = { repositoryId, key, cache: [...cache], bytes: tally.bytes, files: tally.files, createdAt: new Date().toISOString() };
    await writeFile(join(tmp, "meta.json"), JSON.stringify(snapshot));
    await writeFile(join(tmp, "usage.json"), JSON.stringify({ hits: 0, lastUsedAt: snapshot.createdAt } satisfies SnapshotUsage));
    try {
      await rename(tmp, final);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOTEMPTY" || code === "EEXIST") return { tag: "Exists" }; // another worker's is whole already
      throw err;
    }
    const evicted = await evictSnapshots(store, final);
    return { tag: "Saved", snapshot, evicted, tally };
  } catch (err) {
    if (err instanceof OverCapError) {
      return {
        tag: "Refused",
        sentence: `The environment's cache paths hold more than ${gb(store.capBytes)}, the instance's cap on snapshots (ATELIER_ENV_CACHE_GB): no snapshot is kept, and setup runs on every Attempt; cache less, or ask the instance's admin to raise the cap.`,
      };
    }
    throw err;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/**
 * Restores the snapshot's cache paths into the box with `cp -a` (which never follows a link of
 * its source; the snapshot holds only links that stay in their box, saveSnapshot saw to that):
 * hard links to its read-only files when `link` (the box's uid is not the worker's, so the
 * agent cannot write through them; its folders are handed to `owner`), else copies (reflinks
 * where the filesystem has them, and copies too where the box is another filesystem — a box
 * with a disk quota is a tmpfs, box-quota.ts — handed whole to `owner`). A path whose place in
 * the box is a link, or exists already, is not restored.
 */
export async function restoreSnapshot(
  store: SnapshotStore,
  snapshot: EnvironmentSnapshot,
  roots: { worktree: string; home: string },
  opts: { link: boolean; owner: number | null },
): Promise<{ skipped: string[]; linked: boolean }> {
  const dir = snapshotDir(store, snapshot.repositoryId, snapshot.key);
  const skipped: string[] = [];
  const made: string[] = [];
  const device = (await stat(dir)).dev;
  let linked = opts.link;
  try {
    for (const [i, path] of snapshot.cache.entries()) {
      if ((await pathProblem(dir, `paths/${i}`)).missing) continue; // setup did not make it
      const { root, rel } = cacheRoot(path, roots);
      const { problem, missing } = await pathProblem(root, rel);
      if (problem || !missing) {
        skipped.push(`${path} (${problem ?? "it exists in the checkout"})`);
        continue;
      }
      const dest = join(root, rel);
      let at = root;
      for (const part of rel.split("/").filter((p) => p && p !== ".").slice(0, -1)) {
        at = join(at, part);
        await mkdir(at).catch((err: NodeJS.ErrnoException) => (err.code === "EEXIST" ? undefined : Promise.reject(err)));
        if (opts.owner !== null) await lchown(at, opts.owner, opts.owner);
      }
      made.push(dest);
      // a hard link cannot cross filesystems: a snapshot folder elsewhere is copied from
      const link = opts.link && (await stat(root)).dev === device;
      linked &&= link;
      await run("cp", ["-a", link ? "--link" : "--reflink=auto", "--no-target-directory", join(dir, "paths", String(i)), dest]);
      // the folders are the agent's (it may add and remove), linked files stay the snapshot's,
      // copies are the agent's; chown -h: a link is changed itself, never what it points to
      if (opts.owner !== null) await run("find", [dest, ...(link ? ["-type", "d"] : []), "-exec", "chown", "-h", `${opts.owner}:${opts.owner}`, "{}", "+"]);
    }
  } catch (err) {
    // evicted or rebuilt meanwhile: no half of it stays in the box
    for (const dest of made) await rm(dest, { recursive: true, force: true });
    throw err;
  }
  const usage = (await readJson<SnapshotUsage>(join(dir, "usage.json"))) ?? { hits: 0, lastUsedAt: snapshot.createdAt };
  await writeWhole(join(dir, "usage.json"), JSON.stringify({ hits: usage.hits + 1, lastUsedAt: new Date().toISOString() } satisfies SnapshotUsage)).catch(() => undefined);
  return { skipped, linked };
}

/** Every whole snapshot of the store (or of one repository), newest use first. */
export async function listSnapshots(store: SnapshotStore, repositoryId?: string): Promise<SnapshotInfo[]> {
  const ids = repositoryId !== undefined ? [repositoryId] : await readdir(store.dir).catch(() => [] as string[]);
  const found: SnapshotInfo[] = [];
  for (const id of ids.filter((i) => ID.test(i))) {
    for (const key of (await readdir(join(store.dir, id)).catch(() => [] as string[])).filter((k) => KEY.test(k))) {
      const dir = join(store.dir, id, key);
      const meta = await readJson<EnvironmentSnapshot>(join(dir, "meta.json"));
      if (!meta) continue;
      const usage = (await readJson<SnapshotUsage>(join(dir, "usage.json"))) ?? { hits: 0, lastUsedAt: meta.createdAt };
      found.push({ ...meta, ...usage, dir });
    }
  }
  return found.sort((a, b) => b.lastUsedAt.localeCompare(a.lastUsedAt));
}

/** Removes one snapshot (Rebuild: the next trusted Attempt runs setup and keeps a new one). */
export async function removeSnapshot(store: SnapshotStore, repositoryId: string, key: string): Promise<void> {
  const dir = snapshotDir(store, repositoryId, key);
  const doomed = join(store.dir, repositoryId, `.tmp-gone-${randomBytes(6).toString("hex")}`);
  // renamed away first: no worker restores half of one
  await rename(dir, doomed).catch((err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? undefined : Promise.reject(err)));
  await rm(doomed, { recursive: true, force: true });
}

/** Evicts the least recently used snapshots until the store is within its cap; `keep` is never evicted. Returns how many went. */
export async function evictSnapshots(store: SnapshotStore, keep?: string): Promise<number> {
  const all = await listSnapshots(store);
  let total = all.reduce((sum, s) => sum + s.bytes, 0);
  let evicted = 0;
  for (const s of [...all].reverse()) {
    if (total <= store.capBytes) break;
    if (s.dir === keep) continue;
    await removeSnapshot(store, s.repositoryId, s.key);
    total -= s.bytes;
    evicted++;
  }
  return evicted;
}
