import { chown, lstat, mkdir, opendir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { AgentKind } from "./adapters/types";
import { readAgentFile } from "./agent-file";
import { sanitizeName } from "./workspace-paths";

/**
 * An agent's session, kept between the Attempts of a Run so that an operator's retry can
 * resume it (Claude's --resume, `codex exec resume`). The CLIs keep their sessions under
 * $HOME, and each Attempt's $HOME is its own and removed with its box: after the agent has
 * exited (every process of its sandbox gone), the worker copies the kind's session directory
 * out of that home to `<root>/sessions/<run>/`, and into the next Attempt's home before it
 * starts. Only directories and regular files are copied (a link the agent planted is not
 * followed, a file is read as hostile input: agent-file.ts), at most `maxBytes` in `maxFiles`
 * entries (a directory is read one entry at a time, so three million files cost the worker no
 * more than the first `maxFiles` of them). A session lives on the worker that ran it: a retry on
 * another worker starts the conversation afresh, and says so.
 */

/** Where each kind keeps its sessions, under $HOME. */
export const SESSION_DIRS: Readonly<Record<AgentKind, string | null>> = Object.freeze({
  claude: ".claude/projects",
  codex: ".codex/sessions",
  command: null,
});

export interface SessionLimits {
  /** A session larger than this is not kept. */
  maxBytes: number;
  /** A session of more files and directories than this is not kept. */
  maxFiles: number;
}

export const DEFAULT_SESSION_LIMITS: Readonly<SessionLimits> = Object.freeze({ maxBytes: 64 * 1024 * 1024, maxFiles: 10_000 });
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

type Budget = { bytes: number; files: number };

/** Copies directories and regular files only; the reason it stopped when the tree is over `budget`, else null. */
async function copyTree(from: string, to: string, budget: Budget, owner: number | null): Promise<string | null> {
  await mkdir(to, { recursive: true, mode: 0o700 });
  if (owner !== null) await chown(to, owner, owner);
  for await (const entry of await opendir(from)) {
    if (--budget.files < 0) return "files";
    const src = join(from, entry.name);
    const dst = join(to, entry.name);
    if (entry.isDirectory()) {
      const over = await copyTree(src, dst, budget, owner);
      if (over) return over;
    } else if (entry.isFile()) {
      const file = await readAgentFile(src, Math.max(budget.bytes, 0));
      if (file.tag === "TooLarge") return "bytes";
      if (file.tag !== "Read") continue;
      budget.bytes -= file.data.length;
      await writeFile(dst, file.data, { mode: 0o600 });
      if (owner !== null) await chown(dst, owner, owner);
    }
  }
  return null;
}

/**
 * Keeps the session the agent reported, after it exited: its kind's session directory from the
 * Attempt's home. Returns why it was not kept, or null.
 */
export async function keepAgentSession(
  root: string,
  runId: string,
  kind: AgentKind,
  home: string,
  limits: SessionLimits = DEFAULT_SESSION_LIMITS,
): Promise<string | null> {
  const rel = SESSION_DIRS[kind];
  if (!rel) return "this kind of agent keeps no session";
  const from = await realDirUnder(home, rel);
  if (!from) return `the agent left no ${rel} in its home`;
  await pruneSessions(root).catch(() => undefined);
  const dir = sessionDir(root, runId);
  const next = `${dir}.new`;
  await rm(next, { recursive: true, force: true });
  const over = await copyTree(from, join(next, rel), { bytes: limits.maxBytes, files: limits.maxFiles }, null);
  if (over) {
    await rm(next, { recursive: true, force: true });
    return over === "files" ? `its session holds more than ${limits.maxFiles} files` : `its session is larger than ${limits.maxBytes / 1024 / 1024} MB`;
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
  return (await copyTree(kept, path, { bytes: DEFAULT_SESSION_LIMITS.maxBytes, files: DEFAULT_SESSION_LIMITS.maxFiles }, uid)) === null;
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
