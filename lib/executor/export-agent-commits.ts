import { spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { AttemptBox } from "./agent-sandbox/box";
import { DEFAULT_SANDBOX_LIMITS } from "./agent-sandbox/policy";
import { spawnSandboxed } from "./agent-sandbox/spawn-sandboxed";
import { SANDBOX_OUT } from "./agent-sandbox/bwrap-args";
import { agentFileFits, readAgentFile } from "./agent-file";
import { AGENT_IDENTITY, baseGitEnv, hardenedGitConfigEnv } from "./git";
import { cacheObjects } from "./workspace";

/**
 * Takes the agent's work out of its clone without trusting the clone: git runs on it only
 * inside a sandbox like the agent's own (the clone's config, hooks, filters and refs can steer
 * nothing but that sandbox), for a bounded time. There it commits what the agent left
 * uncommitted, after refusing a nested repository (a `.git` directory, gitfile or link below
 * the top: the worker's git would have read another repository through it), more new files than
 * the limit or a file larger than it (an 8 TB sparse file is refused by its size, never read);
 * what comes out is a bundle file — data that the worker's git then reads, checking every
 * object (harvest.ts). The agent itself is gone by then: its sandbox died with it.
 */

export interface HarvestLimits {
  /** A file larger than this is not taken. */
  maxFileBytes: number;
  /** More files than this, added, changed or deleted, are not taken. */
  maxEntries: number;
  /** The harvest sandbox is stopped after this long. */
  timeoutMs: number;
}

/** GitHub refuses a file over 100 MB; a harvest of more than 100,000 files is not an agent's change. */
export const DEFAULT_HARVEST_LIMITS: Readonly<HarvestLimits> = Object.freeze({ maxFileBytes: 100 * 1024 * 1024, maxEntries: 100_000, timeoutMs: 120_000 });

export interface ExportedCommits {
  /** The agent's HEAD, when its history could be read. */
  head: string | null;
  /** The commit of the agent's uncommitted files on `head`, when there were any and they were taken. */
  leftovers: string | null;
  /** A bundle of base..(leftovers ?? head), when that is not the base. */
  bundle: string | null;
  /** Why the history could not be read; nothing of the agent's is taken then. */
  problem: string | null;
  /** Why the uncommitted files were not taken (the agent's commits still were). */
  leftoversRefused: string | null;
}

/** A bundle larger than this is not taken (the agent's own history, not a dump). */
export const MAX_BUNDLE_BYTES = 512 * 1024 * 1024;
const HEAD_FILE = ".atelier-head";
const BUNDLE_FILE = ".atelier-harvest.bundle";
const INDEX_FILE = ".atelier-harvest.index";
export const HARVEST_REF = "refs/atelier/harvest";

/** Why the script refused the uncommitted files, by the word it writes. */
const REFUSALS: Readonly<Record<string, (limits: HarvestLimits) => string>> = {
  "nested-git": () => "a nested repository (a .git directory, gitfile or link below the top of the clone) is never taken",
  "too-many-files": (l) => `more than ${l.maxEntries} files were left uncommitted`,
  "file-too-large": (l) => `a file larger than ${l.maxFileBytes} bytes was left uncommitted`,
};

const SCRIPT = [
  "set -e",
  'h=$(git rev-parse --verify --quiet "HEAD^{commit}")',
  'c=$h; why=""',
  `export GIT_INDEX_FILE="$OUT/${INDEX_FILE}"`,
  // the environment's cache paths are never committed from what the agent left (gitignore patterns)
  'printf \'%s\\n\' "$ATELIER_EXCLUDE" > "$GIT_INDEX_FILE.exclude"',
  'gx() { git -c core.excludesFile="$GIT_INDEX_FILE.exclude" "$@"; }',
  'if [ -n "$(find . -path ./.git -prune -o -name .git -print | head -n 1)" ]; then why=nested-git',
  "else",
  '  git read-tree "$h"',
  '  gx ls-files -z --others --modified --exclude-standard > "$GIT_INDEX_FILE.list"',
  `  n=$(tr -cd '\\000' < "$GIT_INDEX_FILE.list" | wc -c)`,
  '  if [ "$n" -gt "$ATELIER_MAX_ENTRIES" ]; then why=too-many-files',
  `  elif xargs -0 -r stat -c %s -- < "$GIT_INDEX_FILE.list" 2>/dev/null | awk -v max="$ATELIER_MAX_FILE_BYTES" '$1 > max { found = 1 } END { exit !found }'; then why=file-too-large`,
  "  else",
  "    gx add --all -- .",
  "    t=$(git write-tree)",
  '    if [ "$t" != "$(git rev-parse "$h^{tree}")" ]; then c=$(git commit-tree "$t" -p "$h" -m "$ATELIER_LEFTOVER_MESSAGE"); fi',
  "  fi",
  "fi",
  `printf '%s\\n%s\\n%s\\n' "$h" "$c" "$why" > "$OUT/${HEAD_FILE}"`,
  `if [ "$c" != "$ATELIER_BASE" ]; then git update-ref ${HARVEST_REF} "$c"; git bundle create --quiet "$OUT/${BUNDLE_FILE}" "$ATELIER_BASE..${HARVEST_REF}"; fi`,
].join("\n");

export interface ExportRequest {
  name: string;
  box: AttemptBox;
  cacheDir: string;
  baseSha: string;
  /** false: the agent ran unconfined (sandbox: off), so git reads its clone directly. */
  sandboxed: boolean;
  /** Subject of the commit made from uncommitted changes. */
  leftoverMessage: string;
  /** gitignore patterns of paths never committed from what the agent left (the environment's cache paths). */
  exclude: readonly string[];
  limits: HarvestLimits;
  signal?: AbortSignal;
}

type Exit = { code: number | null; stderr: string; timedOut: boolean };

function waitExit(child: ReturnType<typeof spawn>, timeoutMs: number, signal: AbortSignal | undefined, stop: () => void): Promise<Exit> {
  let stderr = "";
  let timedOut = false;
  child.stderr?.setEncoding("utf8").on("data", (c: string) => {
    if (stderr.length < 4_000) stderr += c;
  });
  child.stdout?.resume();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, timeoutMs);
    const onAbort = () => stop();
    signal?.addEventListener("abort", onAbort, { once: true });
    child.once("close", (code) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve({ code, stderr, timedOut });
    });
  });
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

const failed = (problem: string): ExportedCommits => ({ head: null, leftovers: null, bundle: null, problem, leftoversRefused: null });

export async function exportAgentCommits(req: ExportRequest): Promise<ExportedCommits> {
  const headFile = join(req.box.out, HEAD_FILE);
  const bundleFile = join(req.box.out, BUNDLE_FILE);
  for (const file of [headFile, bundleFile, join(req.box.out, INDEX_FILE), join(req.box.out, `${INDEX_FILE}.list`), join(req.box.out, `${INDEX_FILE}.exclude`)]) await rm(file, { force: true });
  const env = {
    ...baseGitEnv(),
    ...AGENT_IDENTITY,
    PATH: "/usr/local/bin:/usr/bin:/bin",
    ATELIER_BASE: req.baseSha,
    ATELIER_MAX_ENTRIES: String(req.limits.maxEntries),
    ATELIER_MAX_FILE_BYTES: String(req.limits.maxFileBytes),
    ATELIER_LEFTOVER_MESSAGE: req.leftoverMessage,
    ATELIER_EXCLUDE: req.exclude.join("\n"),
    ...hardenedGitConfigEnv(),
  };
  let result: Exit;
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
    result = await waitExit(sandbox.child, req.limits.timeoutMs, req.signal, () => void sandbox.terminate(0));
    await sandbox.dispose();
  } else {
    const child = spawn("/bin/sh", ["-c", SCRIPT], { cwd: req.box.worktree, env: { ...env, OUT: req.box.out }, stdio: ["ignore", "pipe", "pipe"], detached: true });
    result = await waitExit(child, req.limits.timeoutMs, req.signal, () => {
      try {
        process.kill(-(child.pid ?? 0), "SIGKILL");
      } catch {
        // already gone
      }
    });
  }
  if (result.timedOut) return failed(`taking the agent's work out of its clone was stopped after ${Math.round(req.limits.timeoutMs / 1000)} s`);
  const file = await readAgentFile(headFile, 400);
  const [head = "", leftovers = "", why = ""] = file.tag === "Read" ? file.data.toString("utf8").split("\n") : [];
  if (result.code !== 0 || !SHA.test(head) || !SHA.test(leftovers)) {
    const last = result.stderr.trim().split("\n").pop();
    return failed(`the agent's git history could not be read (${last ? last.slice(0, 300) : `exit ${result.code}`})`);
  }
  const refusal = REFUSALS[why];
  const leftoversRefused = why === "" ? null : refusal ? refusal(req.limits) : "its uncommitted files could not be read";
  const taken = leftovers === head ? null : leftovers;
  if ((taken ?? head) === req.baseSha) return { head, leftovers: taken, bundle: null, problem: null, leftoversRefused };
  if (!(await agentFileFits(bundleFile, MAX_BUNDLE_BYTES))) return failed("the agent's commits could not be bundled (too large, or not written)");
  return { head, leftovers: taken, bundle: bundleFile, problem: null, leftoversRefused };
}
