import { spawn } from "node:child_process";
import { agentFailure, infraFailure, type Failure } from "../../engine/failure";
import { spawnSandboxed, type SandboxSpawn } from "../agent-sandbox/spawn-sandboxed";
import type { EgressRefusal } from "../agent-sandbox/egress-proxy";
import type { EgressRule } from "../agent-sandbox/policy";
import type { OutputEntry } from "../agent-spec";
import { watchChild } from "../child-watch";
import { LineBuffer, PARTIAL_LINE_FLUSH_MS } from "../line-buffer";
import { terminateProcessGroup } from "../process-group";
import type { Redactor } from "../../secrets/redact";
import { SANDBOX_PATH } from "../agent-command";
import { SETUP_STREAM } from "./environment-spec";
import { toolchainPath, type MountedToolchain } from "./toolchains";

/**
 * Runs an environment's `setup:` as `/bin/sh -ec <setup>` from the checkout, in a sandbox made
 * like the agent's (the box, its uid, namespaces and cgroup limits) whose egress is the
 * instance's registry allowlist; unconfined only where the agent is (`sandbox: off`). Its
 * output goes to the transcript as stream "setup". A non-zero exit is `setup_failed`
 * (configuration, with its last lines); when an allowed registry could not be reached, an
 * infrastructure failure, retried.
 */

/** How many of setup's last lines a failure quotes. */
export const SETUP_TAIL_LINES = 20;

export interface SetupRequest {
  setup: string;
  env: Record<string, string>;
  /** The sandbox to run in, its egress the registries; null: unconfined (sandbox: off), in `cwd`. */
  sandbox: Omit<SandboxSpawn, "command" | "env" | "egress" | "apis" | "programs" | "toolchains"> | null;
  registries: readonly EgressRule[];
  /** The repository's toolchains: mounted in the sandbox, their bin first on PATH. */
  toolchains: readonly MountedToolchain[];
  cwd: string;
  home: string;
  emit: (entry: OutputEntry) => void;
  redactor: Redactor;
  signal?: AbortSignal;
  timeoutMs: number;
  killGraceMs: number;
}

export type SetupOutcome =
  | { tag: "Passed"; durationMs: number }
  | { tag: "Failed"; durationMs: number; failure: Failure }
  | { tag: "Canceled"; durationMs: number };

/** The failure of a setup that exited badly, with its last lines. */
export function setupFailedFailure(detail: string, tail: readonly string[]): Failure {
  const lines = tail.length ? `; its last lines:\n${tail.join("\n")}` : "";
  return agentFailure("configuration", `setup_failed: the environment's setup ${detail}${lines}`);
}

export async function runSetup(req: SetupRequest): Promise<SetupOutcome> {
  const started = Date.now();
  const took = () => Date.now() - started;
  const unreachable: EgressRefusal[] = [];
  const tail: string[] = [];
  const env = { ...req.env, PATH: SANDBOX_PATH, CI: "true", LANG: "C.UTF-8" };
  const command = ["/bin/sh", "-ec", req.setup];
  const boxed = req.sandbox
    ? await spawnSandboxed({
        ...req.sandbox,
        command,
        env,
        toolchains: req.toolchains,
        egress: req.registries,
        onRefused: (r) => req.emit({ stream: SETUP_STREAM, text: `egress refused: ${r.host}:${r.port} (${r.reason}; setup reaches only the instance's registries)` }),
        onUnreachable: (r) => unreachable.push(r),
      })
    : null;
  const child = boxed ? boxed.child : spawn(command[0]!, command.slice(1), { cwd: req.cwd, env: { ...env, PATH: toolchainPath(req.toolchains, SANDBOX_PATH), HOME: req.home }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const watch = boxed ? boxed.watch : watchChild(child);
  child.stdin?.end();
  const pipes = (["stdout", "stderr"] as const).map((name) => {
    const redacting = req.redactor.stream();
    const lines = new LineBuffer((text) => {
      for (const line of text.split("\n")) if (line.trim()) tail.push(line.slice(0, 500));
      tail.splice(0, Math.max(0, tail.length - SETUP_TAIL_LINES));
      req.emit({ stream: SETUP_STREAM, text });
    }, PARTIAL_LINE_FLUSH_MS);
    const source = child[name]!;
    source.setEncoding("utf8");
    source.on("data", (chunk: string) => lines.push(redacting.push(chunk)));
    const closed = new Promise<void>((resolve) => source.once("close", () => resolve()));
    return { closed, end: () => (lines.push(redacting.end()), lines.end()) };
  });
  const terminate = () => (boxed ? boxed.terminate(req.killGraceMs) : child.pid ? terminateProcessGroup(child.pid, req.killGraceMs) : Promise.resolve());
  let stop: "timeout" | "canceled" | null = null;
  let stopping: Promise<void> = Promise.resolve();
  const timer = setTimeout(() => {
    stop = "timeout";
    stopping = terminate();
  }, req.timeoutMs);
  const onAbort = () => {
    stop ??= "canceled";
    stopping = terminate();
  };
  req.signal?.addEventListener("abort", onAbort, { once: true });
  if (req.signal?.aborted) onAbort();
  const spawnError = await watch.spawned;
  const { code, signal } = spawnError ? { code: null, signal: null } : await watch.exited;
  clearTimeout(timer);
  req.signal?.removeEventListener("abort", onAbort);
  await stopping;
  await terminate();
  await boxed?.dispose();
  await Promise.race([Promise.all(pipes.map((p) => p.closed)), new Promise((r) => setTimeout(r, 1_000))]);
  for (const p of pipes) p.end();

  const reason = stop as "timeout" | "canceled" | null;
  if (reason === "canceled") return { tag: "Canceled", durationMs: took() };
  if (spawnError) return { tag: "Failed", durationMs: took(), failure: setupFailedFailure(`could not start: ${spawnError.message}`, []) };
  if (reason === "timeout") return { tag: "Failed", durationMs: took(), failure: setupFailedFailure(`ran longer than the agent's max_attempt_minutes and was stopped`, tail) };
  if (code === 0) return { tag: "Passed", durationMs: took() };
  if (unreachable.length > 0) {
    const hosts = [...new Set(unreachable.map((u) => `${u.host}:${u.port}`))].join(", ");
    return {
      tag: "Failed",
      durationMs: took(),
      failure: infraFailure("transport", `setup could not reach the package registry ${hosts} (${unreachable[0]!.reason}): a registry outage; the Attempt is retried`),
    };
  }
  return { tag: "Failed", durationMs: took(), failure: setupFailedFailure(code !== null ? `exited with code ${code}` : `was killed by ${signal}`, tail) };
}
