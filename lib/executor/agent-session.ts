import { chown, lstat, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { AgentKind } from "./adapters/types";
import { sanitizeName } from "./workspace-paths";

/**
 * An agent's session, kept between the Attempts of a Run so that an operator's retry can
 * resume it (Claude's --resume, `codex exec resume`). The CLIs keep their sessions under
 * $HOME, and each Attempt's $HOME is its own and removed with its box: after the agent has
 * exited (every process of its sandbox gone), the worker copies the kind's session directory
 * out of that home to `<root>/sessions/<run>/`, and into the next Attempt's home before it
 * starts. Only directories and regular files are copied (a link the agent planted is not
 * followed), at most MAX_SESSION_BYTES. A session lives on the worker that ran it: a retry on
 * another worker starts the conversation afresh, and says so.
 */

/** Where each kind keeps its sessions, under $HOME. */
export const SESSION_DIRS: Readonly<Record<AgentKind, string | null>> = Object.freeze({
  claude: ".claude/projects",
  codex: ".codex/sessions",
  command: null,
});

/** A session larger than this is not kept. */
export const MAX_SESSION_BYTES = 64 * 1024 * 1024;
/** Sessions of Runs not touched for this long are removed when another is kept. */
export const SESSION_KEEP_MS = 7 * 24 * 3600_000;

export const sessionsRoot = (root: string) => join(root, "sessions");
const sessionDir = (root: string, runId: string) => join(sessionsRoot(root), sanitizeName(runId));

/** The path of `rel` under `base` when every component of it is a real directory (no link). */
async function realDirUnder(base: string, rel: string): Promise<string | null> {
  let path = base;
  for (const part of rel.split("/")) {
    path = join(path, part);
    const st = await lstat(path).catch(() => null);
    if (!st?.isDirectory()) return null;
  }
  return path;
}

/** Copies directories and regular files only; false when the tree is larger than `budget.left`. */
async function copyTree(from: string, to: string, budget: { left: number }, owner: number | null): Promise<boolean> {
  await mkdir(to, { recursive: true, mode: 0o700 });
  if (owner !== null) await chown(to, owner, owner);
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const src = join(from, entry.name);
    const dst = join(to, entry.name);
    if (entry.isDirectory()) {
      if (!(await copyTree(src, dst, budget, owner))) return false;
    } else if (entry.isFile()) {
      const st = await lstat(src);
      budget.left -= st.size;
      if (budget.left < 0) return false;
      await writeFile(dst, await readFile(src), { mode: 0o600 });
      if (owner !== null) await chown(dst, owner, owner);
    }
  }
  return true;
}

/**
 * Keeps the session the agent reported, after it exited: its kind's session directory from the
 * Attempt's home. Returns why it was not kept, or null.
 */
export async function keepAgentSession(root: string, runId: string, kind: AgentKind, home: string): Promise<string | null> {
  const rel = SESSION_DIRS[kind];
  if (!rel) return "this kind of agent keeps no session";
  const from = await realDirUnder(home, rel);
  if (!from) return `the agent left no ${rel} in its home`;
  await pruneSessions(root).catch(() => undefined);
  const dir = sessionDir(root, runId);
  const next = `${dir}.new`;
  await rm(next, { recursive: true, force: true });
  if (!(await copyTree(from, join(next, rel), { left: MAX_SESSION_BYTES }, null))) {
    await rm(next, { recursive: true, force: true });
    return `its session is larger than ${MAX_SESSION_BYTES / 1024 / 1024} MB`;
  }
  await rm(dir, { recursive: true, force: true });
  await rename(next, dir);
  return null;
}

/**
 * Puts the Run's kept session into a new Attempt's home, owned by the Attempt's uid when the
 * worker switches to one; false when this worker keeps none for the Run.
 */
export async function restoreAgentSession(
  root: string,
  runId: string,
  kind: AgentKind,
  home: string,
  owner: { uid: number; switchUser: boolean },
): Promise<boolean> {
  const rel = SESSION_DIRS[kind];
  if (!rel) return false;
  const kept = await realDirUnder(sessionDir(root, runId), rel);
  if (!kept) return false;
  const uid = owner.switchUser ? owner.uid : null;
  // the directories between home and the session directory belong to the agent too
  let path = home;
  for (const part of rel.split("/")) {
    path = join(path, part);
    await mkdir(path, { recursive: true, mode: 0o700 });
    if (uid !== null) await chown(path, uid, uid);
  }
  return copyTree(kept, path, { left: MAX_SESSION_BYTES }, uid);
}

/** Removes the sessions of Runs that have not kept one for SESSION_KEEP_MS. */
async function pruneSessions(root: string): Promise<void> {
  const dir = sessionsRoot(root);
  const names = await readdir(dir).catch(() => [] as string[]);
  const now = Date.now();
  for (const name of names) {
    const path = join(dir, name);
    const st = await stat(path).catch(() => null);
    if (st && now - st.mtimeMs > SESSION_KEEP_MS) await rm(path, { recursive: true, force: true });
  }
}
