import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isProcessAlive } from "../executor/process-group";

/**
 * What `npm start` wrote for the processes that join it (`npm run worker` on the same host):
 * the settings it chose — the databases, the public URL, the sandbox App file — and its pid.
 * The file lives only while that supervisor does: it is removed at its stop, and ignored once
 * its pid is gone, so a worker meant for GitHub never joins a sandbox by accident.
 */
export const RUNNING_INSTANCE_FILE = join(".atelier", "instance.json");

/** The settings a joining process takes over (those it does not set itself). */
const SHARED_SETTINGS = [
  "DATABASE_URL",
  "REDIS_URL",
  "ATELIER_PUBLIC_URL",
  "ATELIER_SANDBOX_APP_FILE",
  "ATELIER_REDIS_PREFIX",
  "ATELIER_CONFIG",
  "ATELIER_WORKSPACE",
] as const;

interface RunningInstance {
  pid: number;
  settings: Record<string, string>;
}

export function writeRunningInstance(root: string, env: NodeJS.ProcessEnv, pid: number): void {
  const settings: Record<string, string> = {};
  for (const name of SHARED_SETTINGS) {
    const value = env[name];
    if (value) settings[name] = value;
  }
  const path = join(root, RUNNING_INSTANCE_FILE);
  const partial = `${path}.${pid}.tmp`;
  // it may hold a database password: readable by this user only
  writeFileSync(partial, JSON.stringify({ pid, settings } satisfies RunningInstance, null, 2), { mode: 0o600 });
  renameSync(partial, path);
}

export function removeRunningInstance(root: string): void {
  rmSync(join(root, RUNNING_INSTANCE_FILE), { force: true });
}

function readRunningInstance(root: string): RunningInstance | null {
  try {
    const parsed = JSON.parse(readFileSync(join(root, RUNNING_INSTANCE_FILE), "utf8")) as Partial<RunningInstance>;
    if (typeof parsed.pid !== "number" || typeof parsed.settings !== "object" || parsed.settings === null) return null;
    return { pid: parsed.pid, settings: parsed.settings };
  } catch {
    return null;
  }
}

/**
 * Joins the instance `npm start` runs from `root`, when this process has no GitHub App of its
 * own (no GITHUB_APP_ID, no ATELIER_SANDBOX_APP_FILE) and that supervisor is alive: copies
 * into `env` the settings it does not set itself. Returns the supervisor's pid, or null.
 */
export function joinRunningInstance(root: string, env: NodeJS.ProcessEnv): number | null {
  if (env.GITHUB_APP_ID || env.ATELIER_SANDBOX_APP_FILE) return null;
  const running = readRunningInstance(root);
  if (!running || !isProcessAlive(running.pid)) return null;
  for (const name of SHARED_SETTINGS) {
    const value = running.settings[name];
    if (value && !env[name]) env[name] = value;
  }
  return running.pid;
}
