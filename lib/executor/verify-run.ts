import { spawn } from "node:child_process";
import { metrics } from "../metrics/metrics";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { boxPaths, makeBox, type AttemptBox } from "./agent-sandbox/box";
import type { EgressRule, SandboxLimits } from "./agent-sandbox/policy";
import { spawnSandboxed } from "./agent-sandbox/spawn-sandboxed";
import type { OutputSink } from "./agent-spec";
import { watchChild } from "./child-watch";
import { LineBuffer } from "./line-buffer";
import { terminateProcessGroup } from "./process-group";
import { Redactor } from "../secrets/redact";
import { VERIFY_TAIL_CHARS, VERIFY_TAIL_LINES, type VerifyCheck } from "./verify-spec";
import { cacheObjects, checkoutInBox } from "./workspace";
import { SANDBOX_PATH } from "./agent-command";
import { toolchainPath, type MountedToolchain } from "./environment/toolchains";

/**
 * Runs a repository's `verify:` on the commit the harvest made (the one that will be pushed),
 * in a box of its own the agent never saw: a fresh checkout of that commit, made by the worker
 * from the harvest repository, a new $HOME and /tmp, a uid of its own, no model key and no
 * secret, the network the caller allows (none by default), and a wall-clock limit. Nothing the
 * agent left outside the commit (its home, its /tmp, an ignored file, its .git) reaches it.
 */

/** verify's wall-clock limit when the caller gives none. */
export const DEFAULT_VERIFY_TIMEOUT_MS = 15 * 60_000;
/** Between SIGTERM and SIGKILL when verify runs over its limit. */
const VERIFY_KILL_GRACE_MS = 2_000;
/** setTimeout's ceiling. */
const MAX_TIMER_MS = 2_147_483_647;

export interface VerifyRequest {
  /** The Attempt's directory: verify's box is made beside the agent's. */
  attemptDir: string;
  /** The Attempt's sanitized name. */
  name: string;
  /** 1 for the first run of verify, n for the agent's n-1-th resumed round. */
  round: number;
  /** The repository's bare clone (the checkout borrows its objects). */
  cacheDir: string;
  /** The worker's repository that holds `sha` (the harvest repository). */
  source: string;
  sha: string;
  branch: string;
  command: string;
  sandboxed: boolean;
  /** Hosts verify may reach: the instance's registry allowlist; empty: no network. */
  egress: readonly EgressRule[];
  limits: SandboxLimits;
  /** Host paths bound read-only (the roster's tools outside /usr). */
  readOnlyPaths: readonly string[];
  /** The repository's toolchains, as the agent had them: mounted, their bin first on PATH. */
  toolchains?: readonly MountedToolchain[];
  timeoutMs: number;
  /** Values that are not secrets, for verify's shell. */
  env?: Readonly<Record<string, string>>;
  /**
   * Fills the fresh box before verify runs: where a restored environment (cached dependencies)
   * is linked in. Absent: verify runs on the checkout alone.
   */
  restoreEnvironment?: (box: AttemptBox) => Promise<void>;
  redactor: Redactor;
  onOutput: OutputSink;
  /** Cancel or lease lost: verify is stopped and its result is not used. */
  signal?: AbortSignal;
  onNote?: (text: string) => void;
}

/** The last lines of verify's output, at most VERIFY_TAIL_LINES and VERIFY_TAIL_CHARS. */
export class OutputTail {
  private lines: string[] = [];
  private partial = "";

  push(text: string): void {
    const parts = (this.partial + text).split("\n");
    this.partial = parts.pop() ?? "";
    this.lines.push(...parts);
    if (this.lines.length > VERIFY_TAIL_LINES * 2) this.lines = this.lines.slice(-VERIFY_TAIL_LINES);
  }

  text(): string {
    const all = [...this.lines, ...(this.partial ? [this.partial] : [])].slice(-VERIFY_TAIL_LINES).join("\n");
    return all.length > VERIFY_TAIL_CHARS ? `…${all.slice(-(VERIFY_TAIL_CHARS - 1))}` : all;
  }
}

interface Started {
  child: ReturnType<typeof spawn>;
  terminate(graceMs: number): Promise<void>;
  dispose(): Promise<void>;
}

async function start(req: VerifyRequest, box: AttemptBox, env: Record<string, string>): Promise<Started> {
  const command = ["/bin/sh", "-c", req.command];
  if (req.sandboxed) {
    const boxed = await spawnSandboxed({
      name: `${req.name}-verify-${req.round}`,
      box,
      command,
      env: { ...env, PATH: SANDBOX_PATH },
      egress: req.egress,
      limits: req.limits,
      readOnlyPaths: req.readOnlyPaths,
      toolchains: req.toolchains ?? [],
      objects: cacheObjects(req.cacheDir),
      onNote: req.onNote,
      onRefused: (r) => req.onNote?.(`verify: egress refused: ${r.host}:${r.port} (${r.reason})`),
    });
    boxed.child.stdin.end();
    return { child: boxed.child, terminate: (g) => boxed.terminate(g), dispose: () => boxed.dispose() };
  }
  req.onNote?.("verify runs unconfined in its fresh checkout, as the agent did (no sandbox)");
  const child = spawn(command[0]!, command.slice(1), {
    cwd: box.worktree,
    env: { ...env, PATH: toolchainPath(req.toolchains ?? [], process.env.PATH ?? SANDBOX_PATH), HOME: box.home, TMPDIR: box.tmp },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pid = child.pid;
  return { child, terminate: (g) => (pid === undefined ? Promise.resolve() : terminateProcessGroup(pid, g)), dispose: async () => undefined };
}

/** Makes verify's box, runs verify there, removes the box; the check's result (never throws for verify's own failure). */
export async function runVerify(req: VerifyRequest): Promise<VerifyCheck> {
  const started = Date.now();
  const dir = join(req.attemptDir, `verify-${req.round}`);
  const box = boxPaths(dir, `${req.name}-verify-${req.round}`, req.sandboxed);
  const tail = new OutputTail();
  const redactor = req.redactor;
  const emit = (stream: "stdout" | "stderr", text: string) => {
    try {
      req.onOutput({ stream, text });
    } catch {
      // a failing sink must not fail verify
    }
  };
  await rm(dir, { recursive: true, force: true });
  try {
    await makeBox(box);
    await checkoutInBox({ box, cache: req.cacheDir, sha: req.sha, branch: req.branch, sandboxed: req.sandboxed, from: req.source, signal: req.signal });
    // an environment that could not be prepared fails verify with its reason (the work is unchecked)
    const unprepared = await (req.restoreEnvironment?.(box) ?? Promise.resolve()).then(
      () => null,
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    if (unprepared !== null) return { passed: false, exitCode: null, timedOut: false, durationMs: Date.now() - started, tail: redactor.redact(unprepared) };
    const env = { LANG: "C.UTF-8", CI: "true", ATELIER_VERIFY: "1", ...req.env };
    const proc = await start(req, box, env);
    const watch = watchChild(proc.child);
    const spawnError = await watch.spawned;
    if (spawnError) {
      await proc.dispose();
      const text = redactor.redact(`verify could not start: ${spawnError.message}`);
      return { passed: false, exitCode: null, timedOut: false, durationMs: Date.now() - started, tail: text };
    }
    const pipes = (["stdout", "stderr"] as const).map((stream) => {
      const redacting = redactor.stream();
      const lines = new LineBuffer((text) => {
        tail.push(text);
        emit(stream, text);
      });
      const source = proc.child[stream]!;
      source.setEncoding("utf8");
      source.on("data", (chunk: string) => lines.push(redacting.push(chunk)));
      const closed = new Promise<void>((resolve) => source.once("close", () => resolve()));
      return { closed, end: () => (lines.push(redacting.end()), lines.end()), destroy: () => source.destroy() };
    });
    let timedOut = false;
    let stopping: Promise<void> = Promise.resolve();
    const stop = () => (stopping = proc.terminate(VERIFY_KILL_GRACE_MS));
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, Math.min(req.timeoutMs, MAX_TIMER_MS));
    req.signal?.addEventListener("abort", stop, { once: true });
    if (req.signal?.aborted) stop();
    const { code } = await watch.exited;
    clearTimeout(timer);
    req.signal?.removeEventListener("abort", stop);
    await stopping;
    await proc.terminate(VERIFY_KILL_GRACE_MS);
    await proc.dispose();
    let closeTimer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(pipes.map((p) => p.closed)), new Promise<void>((resolve) => (closeTimer = setTimeout(resolve, 1_000)))]);
    clearTimeout(closeTimer);
    for (const p of pipes) p.destroy();
    for (const p of pipes) p.end();
    if (timedOut) tail.push(`\nverify ran longer than its limit (${Math.round(req.timeoutMs / 1000)} s) and was stopped\n`);
    metrics.verifyRuns.inc({ result: timedOut ? "timed_out" : code === 0 ? "passed" : "failed" });
    return { passed: !timedOut && code === 0, exitCode: timedOut ? null : code, timedOut, durationMs: Date.now() - started, tail: tail.text() };
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
