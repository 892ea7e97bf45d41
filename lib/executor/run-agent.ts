import { metrics } from "../metrics/metrics";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { agentFailure, infraFailure, runawayFailure, type Failure } from "../engine/failure";
import { BadInputError, ConflictError } from "../errors";
import { adapterFor, encodeStep } from "./adapters";
import type { AgentInvocation, AgentReport, StreamParser, TranscriptStep } from "./adapters/types";
import { resolveAgentCommand, SANDBOX_PATH, type ResolvedCommand } from "./agent-command";
import { toolchainPath, type MountedToolchain } from "./environment/toolchains";
import { buildAgentEnv, type AgentContext, type AgentEnv } from "./agent-env";
import type { NamedAgentSpec, OutputEntry, OutputSink } from "./agent-spec";
import { AttemptFailureError } from "./attempt-failure-error";
import { LineBuffer, PARTIAL_LINE_FLUSH_MS } from "./line-buffer";
import { terminateProcessGroup } from "./process-group";
import { Redactor } from "../secrets/redact";
import { watchChild, type ChildWatch } from "./child-watch";
import { sandboxApiPorts, spawnSandboxed, type SandboxSpawn } from "./agent-sandbox/spawn-sandboxed";
import { startLocalBroker, type BrokeredApi, type LocalBroker } from "./agent-sandbox/api-broker";
import type { MeteredUsage } from "./agent-sandbox/usage-meter";
import { brokeredEnv } from "./brokered-apis";

/**
 * Runs the agent's command in its sandbox (agent-sandbox/), or unconfined in its own process
 * group when the instance says `sandbox: off`, in the worktree, with a clean environment and
 * the prompt on stdin; streams its output, redacted and line-buffered, to the sink; and stops
 * every process it started when the Attempt's limit passes, the operator cancels or the lease
 * is lost.
 */

/** Between SIGTERM and SIGKILL when the agent must stop. */
export const KILL_GRACE_MS = 5_000;
/** setTimeout's ceiling (about 24.8 days); a longer limit waits this long. */
const MAX_TIMER_MS = 2_147_483_647;

export interface RunAgentInput {
  agent: NamedAgentSpec;
  /** The worktree. */
  cwd: string;
  context: AgentContext;
  onOutput: OutputSink;
  /** Secrets already in play (the installation token's forms); the roster secrets are added. */
  redactor?: Redactor;
  /** The operator canceled: stop the agent, outcome Canceled. */
  signal?: AbortSignal;
  /** The worker lost the Attempt's lease: stop the agent, InfraFailure(lease_lost). */
  leaseLost?: AbortSignal;
  /** Called once the process runs, with the handle an operator's intervention goes through. */
  onStarted?: (control: AgentControl) => void;
  /** Where the roster secrets are read from (default process.env). */
  sourceEnv?: NodeJS.ProcessEnv;
  killGraceMs?: number;
  /** The sandbox to run in (its box holds `cwd`); absent: unconfined. */
  sandbox?: AgentSandbox;
  /** The repository's toolchains: mounted in the sandbox, their bin first on PATH. */
  toolchains?: readonly MountedToolchain[];
  /** A $HOME made for this Attempt (default: the worker's). */
  home?: string;
  partialLineFlushMs?: number;
  /** The model the Run's Loop picked (checked against the agent's models by its adapter); null: the agent's default. */
  model?: string | null;
  /** The session the agent continues (its adapter's `resumeSession`); its files are in `home` already. */
  resumeSession?: string | null;
}

export interface AgentControl {
  readonly pid: number;
  /** Writes to the agent's stdin. BadInputError(intervene_not_allowed) unless the roster allows it. */
  intervene(text: string): void;
}

/** What every result carries: how long, what was masked, and what the agent's adapter read of its report. */
interface RunFacts {
  durationMs: number;
  redactor: Redactor;
  /** null: the agent speaks no protocol (kind command, the demo agent). */
  report: AgentReport | null;
  /** What the gateway read of its model API's answers; null: the roster brokers no model API for it. */
  metered: MeteredUsage | null;
}

export type AgentRunResult =
  | ({ tag: "Exited" } & RunFacts)
  | ({ tag: "Failed"; failure: Failure } & RunFacts)
  | ({ tag: "Canceled" } & RunFacts);

type StopReason = "timeout" | "canceled" | "lease_lost";

/** What runAgent needs to start the agent in a sandbox: all of SandboxSpawn but its command, env and APIs. */
export type AgentSandbox = Omit<SandboxSpawn, "command" | "env" | "programs" | "apis" | "toolchains">;

/** The agent's process as runAgent drives it, sandboxed or not. */
interface AgentProcess extends ChildWatch {
  child: ChildProcessWithoutNullStreams;
  terminate(graceMs: number): Promise<void>;
  dispose(): Promise<void>;
  metered(): MeteredUsage | null;
}

/**
 * The local base URL of each brokered API: a port of the sandbox's own loopback, bridged to the
 * gateway; unconfined, a broker on this machine's loopback (started here, closed by `dispose`).
 */
async function brokeredUrls(input: RunAgentInput, apis: readonly BrokeredApi[]): Promise<{ urls: string[]; broker: LocalBroker | null }> {
  if (apis.length === 0) return { urls: [], broker: null };
  if (input.sandbox) return { urls: sandboxApiPorts(apis.length, input.sandbox.egress).map((p) => `http://127.0.0.1:${p}`), broker: null };
  const broker = await startLocalBroker(apis);
  return { urls: broker.urls, broker };
}

async function startAgentProcess(
  input: RunAgentInput,
  resolved: ResolvedCommand,
  env: Record<string, string>,
  apis: readonly BrokeredApi[],
  broker: LocalBroker | null,
): Promise<AgentProcess> {
  metrics.sandboxStarts.inc({ mode: input.sandbox ? "sandboxed" : "unconfined" });
  if (input.sandbox) {
    const boxed = await spawnSandboxed({
      ...input.sandbox,
      command: [resolved.sandboxFile, ...resolved.sandboxArgs],
      env: { ...env, PATH: SANDBOX_PATH },
      toolchains: input.toolchains ?? [],
      programs: resolved.programs,
      apis,
    });
    return { child: boxed.child, ...boxed.watch, terminate: (grace) => boxed.terminate(grace), dispose: () => boxed.dispose(), metered: () => boxed.metered() };
  }
  const path = toolchainPath(input.toolchains ?? [], env.PATH ?? SANDBOX_PATH);
  const child = spawn(resolved.file, resolved.args, { cwd: input.cwd, env: { ...env, PATH: path }, detached: true, stdio: ["pipe", "pipe", "pipe"] });
  const pid = child.pid;
  return {
    child,
    ...watchChild(child),
    // Whatever the agent left running in its group goes with it.
    terminate: (grace) => (pid === undefined ? Promise.resolve() : terminateProcessGroup(pid, grace)),
    dispose: async () => broker?.close(),
    metered: () => broker?.metered() ?? null,
  };
}

function lastNonEmptyLine(text: string): string | null {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  for (let i = lines.length - 1; i >= 0; i--) if (lines[i]) return (lines[i] as string).slice(0, 500);
  return null;
}

/** Why a spawn failed; the program is the one the error names (the sandbox's, when it runs one). */
function describeSpawnError(err: NodeJS.ErrnoException, file: string, cwd: string): string {
  const program = err.path ?? file;
  if (err.code === "ENOENT") return `command not found: ${program} (or the working directory ${cwd} is missing)`;
  if (err.code === "EACCES") return `permission denied running ${program}`;
  return `${err.code ?? "error"}: ${err.message}`;
}

export async function runAgent(input: RunAgentInput): Promise<AgentRunResult> {
  const { agent } = input;
  const started = Date.now();
  let resolved: ResolvedCommand;
  let agentEnv: AgentEnv;
  try {
    resolved = resolveAgentCommand(agent.command);
    agentEnv = buildAgentEnv(agent, resolved, input.context, input.sourceEnv);
  } catch (err) {
    const failure = err instanceof AttemptFailureError ? err.failure : agentFailure("configuration", `agent ${agent.name}: ${String(err)}`);
    return { tag: "Failed", failure, durationMs: 0, redactor: input.redactor ?? new Redactor([]), report: null, metered: null };
  }
  const { env, secretValues, apis } = agentEnv;
  if (input.home) env.HOME = input.home;
  const brokered = await brokeredUrls(input, apis);
  let invocation: AgentInvocation | null = null;
  let parser: StreamParser | null = null;
  if (!resolved.builtin && agent.adapter) {
    const adapter = adapterFor(agent.adapter.kind);
    try {
      invocation = adapter.invocation(agent.adapter, {
        prompt: input.context.prompt,
        model: input.model ?? null,
        resumeSession: input.resumeSession ?? null,
        modelApiUrl: agent.model_api ? (brokered.urls[0] ?? null) : null,
      });
    } catch (err) {
      await brokered.broker?.close();
      const failure = err instanceof AttemptFailureError ? err.failure : agentFailure("configuration", `agent ${agent.name}: ${String(err)}`);
      return { tag: "Failed", failure, durationMs: 0, redactor: input.redactor ?? new Redactor([]), report: null, metered: null };
    }
    resolved = { ...resolved, file: invocation.file, args: invocation.args, sandboxFile: invocation.file, sandboxArgs: invocation.args };
    Object.assign(env, invocation.env);
    // a plain command's lines are its steps already
    if (agent.adapter.kind !== "command") parser = adapter.parser(agent.adapter, { model: invocation.model });
  }
  // the brokered APIs' local URLs and placeholder key, over anything the roster's env: says
  Object.assign(env, brokeredEnv(agent, brokered.urls));
  const redactor = (input.redactor ?? new Redactor([])).with(secretValues);
  const emit = (entry: OutputEntry) => {
    try {
      input.onOutput(entry);
    } catch {
      // A failing sink must not take the agent down with it.
    }
  };
  const system = (text: string) => emit({ stream: "system", text: redactor.redact(text) });
  let report: AgentReport | null = null;
  let metered: MeteredUsage | null = null;
  const done = <T extends object>(r: T) => ({ ...r, durationMs: Date.now() - started, redactor, report, metered });

  if (input.signal?.aborted || input.leaseLost?.aborted) await brokered.broker?.close();
  if (input.signal?.aborted) return done({ tag: "Canceled" as const });
  if (input.leaseLost?.aborted) return done({ tag: "Failed" as const, failure: infraFailure("lease_lost", "the lease was lost before the agent started") });

  let proc: AgentProcess;
  try {
    proc = await startAgentProcess(input, resolved, env, apis, brokered.broker);
  } catch (err) {
    await brokered.broker?.close();
    const message = `cannot start agent ${agent.name}: ${describeSpawnError(err as NodeJS.ErrnoException, resolved.file, input.cwd)}`;
    return done({ tag: "Failed" as const, failure: agentFailure("configuration", redactor.redact(message)) });
  }
  const { child } = proc;
  const { exited } = proc;
  const spawnError = await proc.spawned;
  child.stdin.on("error", () => undefined); // EPIPE: the agent does not read its stdin.
  if (spawnError || child.pid === undefined) {
    await proc.dispose();
    const message = `cannot start agent ${agent.name}: ${describeSpawnError(spawnError ?? new Error("no pid"), resolved.file, input.cwd)}`;
    return done({ tag: "Failed" as const, failure: agentFailure("configuration", redactor.redact(message)) });
  }
  const pid = child.pid;
  const grace = input.killGraceMs ?? KILL_GRACE_MS;

  let lastStderr: string | null = null;
  const onSteps = (steps: TranscriptStep[]) => {
    for (const step of steps) {
      emit(encodeStep(step));
      // a streaming input ends with the agent's turn: closed stdin lets the CLI finish
      if (step.type === "final" && invocation && !invocation.stdin.close) child.stdin.end();
    }
  };
  const pipes = (["stdout", "stderr"] as const).map((stream) => {
    const redacting = redactor.stream();
    const lines = new LineBuffer((text) => {
      if (stream === "stderr") lastStderr = lastNonEmptyLine(text) ?? lastStderr;
      emit({ stream, text });
    }, input.partialLineFlushMs ?? PARTIAL_LINE_FLUSH_MS);
    // the raw lines are kept (for download); the adapter reads the same redacted text as a stream
    const take = (safe: string) => {
      lines.push(safe);
      if (parser && safe) onSteps(parser.feed(safe, stream));
    };
    const source = child[stream];
    source.setEncoding("utf8");
    source.on("data", (chunk: string) => take(redacting.push(chunk)));
    const closed = new Promise<void>((resolve) => source.once("close", () => resolve()));
    return {
      closed,
      destroy: () => source.destroy(),
      end: () => {
        take(redacting.end());
        lines.end();
      },
    };
  });

  let hasExited = false;
  let stopReason: StopReason | null = null;
  let stopping: Promise<void> = Promise.resolve();
  const stop = (reason: StopReason, note: string) => {
    if (stopReason || hasExited) return;
    stopReason = reason;
    system(note);
    stopping = proc.terminate(grace);
  };
  const limitMinutes = agent.max_attempt_minutes;
  const timer =
    limitMinutes && limitMinutes > 0
      ? setTimeout(
          () => stop("timeout", `agent ${agent.name} exceeded max_attempt_minutes (${limitMinutes}); stopping it`),
          Math.min(limitMinutes * 60_000, MAX_TIMER_MS),
        )
      : null;
  const onCancel = () => stop("canceled", "canceled by an operator; stopping the agent");
  const onLeaseLost = () => stop("lease_lost", "the worker lost the Attempt's lease; stopping the agent");
  input.signal?.addEventListener("abort", onCancel, { once: true });
  input.leaseLost?.addEventListener("abort", onLeaseLost, { once: true });
  if (input.signal?.aborted) onCancel();
  if (input.leaseLost?.aborted) onLeaseLost();

  const prompt = input.context.prompt;
  if (invocation) {
    if (invocation.stdin.close) child.stdin.end(invocation.stdin.text);
    else child.stdin.write(invocation.stdin.text);
  } else if (agent.intervene) {
    child.stdin.write(prompt.endsWith("\n") || prompt === "" ? prompt : `${prompt}\n`);
  } else {
    child.stdin.end(prompt);
  }
  input.onStarted?.({
    pid,
    intervene(text: string) {
      if (!agent.intervene) {
        throw new BadInputError("intervene_not_allowed", `Agent ${agent.name} does not take interventions (intervene is off in the roster).`);
      }
      if (hasExited || !child.stdin.writable) {
        throw new ConflictError("agent_not_running", `Agent ${agent.name} is no longer running.`);
      }
      system(`intervention: ${text}`);
      const encode = invocation?.encodeIntervention ?? ((t: string) => (t.endsWith("\n") ? t : `${t}\n`));
      parser?.messageSent?.();
      child.stdin.write(encode(text));
    },
  });

  const { code, signal } = await exited;
  hasExited = true;
  if (timer) clearTimeout(timer);
  input.signal?.removeEventListener("abort", onCancel);
  input.leaseLost?.removeEventListener("abort", onLeaseLost);
  await stopping;
  await proc.terminate(grace);
  await proc.dispose();
  if (agent.model_api) metered = proc.metered();
  const allClosed = Promise.all(pipes.map((p) => p.closed));
  let closeTimer: NodeJS.Timeout | undefined;
  await Promise.race([allClosed, new Promise<void>((resolve) => (closeTimer = setTimeout(resolve, 1_000)))]);
  clearTimeout(closeTimer);
  for (const p of pipes) p.destroy();
  child.stdin.destroy();
  for (const p of pipes) p.end();
  if (parser) {
    const last = parser.end({ code, signal });
    onSteps(last.steps);
    report = last.report;
  }

  const reason = stopReason as StopReason | null;
  if (reason === "canceled") return done({ tag: "Canceled" as const });
  if (reason === "lease_lost") {
    return done({ tag: "Failed" as const, failure: infraFailure("lease_lost", "the worker lost the Attempt's lease; the agent was stopped") });
  }
  if (reason === "timeout") {
    return done({
      tag: "Failed" as const,
      failure: runawayFailure(`agent ${agent.name} ran longer than max_attempt_minutes (${limitMinutes}) and was stopped`),
    });
  }
  // the agent's own report says why better than its exit code (a 401, a 529, its turn limit)
  if (report?.failure) return done({ tag: "Failed" as const, failure: { ...report.failure, message: redactor.redact(report.failure.message) } });
  if (code === 0) return done({ tag: "Exited" as const });
  const detail = lastStderr ? `: ${lastStderr}` : "";
  const message = code !== null ? `agent ${agent.name} exited with code ${code}${detail}` : `agent ${agent.name} was killed by ${signal}${detail}`;
  return done({ tag: "Failed" as const, failure: agentFailure("agent_exit", redactor.redact(message)) });
}
