import { spawn } from "node:child_process";
import { lstat, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import type { AttemptBox } from "./agent-sandbox/box";
import { DEFAULT_SANDBOX_LIMITS } from "./agent-sandbox/policy";
import { spawnSandboxed } from "./agent-sandbox/spawn-sandboxed";
import { SANDBOX_OUT } from "./agent-sandbox/bwrap-args";
import { baseGitEnv, hardenedGitConfigEnv } from "./git";
import { cacheObjects } from "./workspace";

/**
 * Takes the agent's commits out of its clone without trusting the clone: git runs on it only
 * inside a sandbox like the agent's own (the clone's config, hooks and refs can steer nothing
 * but that sandbox), and what comes out is a bundle file — data that the worker's git then
 * reads, checking every object. The agent itself is gone by then: its sandbox died with it.
 */

export interface ExportedCommits {
  /** The agent's HEAD, when its history could be read. */
  head: string | null;
  /** A bundle of base..head, when head is not the base. */
  bundle: string | null;
  /** Why the history could not be read. */
  problem: string | null;
}

/** A bundle larger than this is not taken (the agent's own history, not a dump). */
export const MAX_BUNDLE_BYTES = 512 * 1024 * 1024;
const EXPORT_TIMEOUT_MS = 120_000;
const HEAD_FILE = ".atelier-head";
const BUNDLE_FILE = ".atelier-harvest.bundle";

const SCRIPT = [
  "set -e",
  'h=$(git rev-parse --verify --quiet "HEAD^{commit}")',
  `printf '%s\\n' "$h" > "$OUT/${HEAD_FILE}"`,
  `if [ "$h" != "$ATELIER_BASE" ]; then git bundle create --quiet "$OUT/${BUNDLE_FILE}" "$ATELIER_BASE..HEAD"; fi`,
].join("\n");

export interface ExportRequest {
  name: string;
  box: AttemptBox;
  cacheDir: string;
  baseSha: string;
  /** false: the agent ran unconfined (sandbox: off), so git reads its clone directly. */
  sandboxed: boolean;
  signal?: AbortSignal;
}

/** A regular file written by the sandbox (never a link it planted), within the size limit. */
async function regularFile(path: string, max: number): Promise<boolean> {
  try {
    const info = await lstat(path);
    return info.isFile() && info.size <= max;
  } catch {
    return false;
  }
}

function waitExit(child: ReturnType<typeof spawn>, signal: AbortSignal | undefined, stop: () => void): Promise<{ code: number | null; stderr: string }> {
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (c: string) => {
    if (stderr.length < 4_000) stderr += c;
  });
  child.stdout?.resume();
  return new Promise((resolve) => {
    const timer = setTimeout(stop, EXPORT_TIMEOUT_MS);
    const onAbort = () => stop();
    signal?.addEventListener("abort", onAbort, { once: true });
    child.once("close", (code) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve({ code, stderr });
    });
  });
}

export async function exportAgentCommits(req: ExportRequest): Promise<ExportedCommits> {
  const headFile = join(req.box.out, HEAD_FILE);
  const bundleFile = join(req.box.out, BUNDLE_FILE);
  await rm(headFile, { force: true });
  await rm(bundleFile, { force: true });
  const env = {
    ...baseGitEnv(),
    PATH: "/usr/local/bin:/usr/bin:/bin",
    ATELIER_BASE: req.baseSha,
    ...hardenedGitConfigEnv(),
  };
  let result: { code: number | null; stderr: string };
  if (req.sandboxed) {
    const sandbox = await spawnSandboxed({
      name: `${req.name}-harvest`,
      box: req.box,
      command: ["/bin/sh", "-c", SCRIPT],
      env: { ...env, OUT: SANDBOX_OUT },
      egress: [],
      limits: DEFAULT_SANDBOX_LIMITS,
      objects: cacheObjects(req.cacheDir),
    });
    sandbox.child.stdin.end();
    result = await waitExit(sandbox.child, req.signal, () => void sandbox.terminate(0));
    await sandbox.dispose();
  } else {
    const child = spawn("/bin/sh", ["-c", SCRIPT], { cwd: req.box.worktree, env: { ...env, OUT: req.box.out }, stdio: ["ignore", "pipe", "pipe"] });
    result = await waitExit(child, req.signal, () => child.kill("SIGKILL"));
  }
  const head = (await regularFile(headFile, 200)) ? (await readFile(headFile, "utf8")).trim() : "";
  if (result.code !== 0 || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(head)) {
    const why = result.stderr.trim().split("\n").pop() || `exit ${result.code}`;
    return { head: null, bundle: null, problem: `the agent's git history could not be read (${why})` };
  }
  if (head === req.baseSha) return { head, bundle: null, problem: null };
  if (!(await regularFile(bundleFile, MAX_BUNDLE_BYTES))) {
    return { head: null, bundle: null, problem: "the agent's commits could not be bundled (too large, or not written)" };
  }
  return { head, bundle: bundleFile, problem: null };
}
