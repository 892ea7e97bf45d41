import { defectFailure, infraFailure, type Failure } from "../engine/failure";
import { resolveAgentCommand } from "./agent-command";
import { buildAgentEnv, type AgentContext } from "./agent-env";
import type { NamedAgentSpec, OutputEntry, OutputSink } from "./agent-spec";
import { AttemptFailureError } from "./attempt-failure-error";
import { GitCommandError } from "./git";
import { harvest, type Harvest } from "./harvest";
import { readResultFile, type AgentResult } from "./result-file";
import { gitCredentialForms, Redactor } from "./redact";
import { runAgent, type AgentControl } from "./run-agent";
import { prepareWorkspace, recordAgentProcess, removeWorkspace, type Workspace } from "./workspace";

/**
 * One Attempt, from checkout to harvest: fetch the repository's cache and add a detached
 * worktree at the Run's branch (or the default branch), run the agent in it, read its result
 * file, commit what it left and push the Run's branch. The pull request is the caller's job;
 * it gets the harvest. The worktree is removed whatever happens.
 */

export interface AttemptInput {
  runId: string;
  attemptId: string;
  loop: string;
  /** owner/name */
  repo: string;
  /** The Item's number; null for a schedule Tick. */
  number: number | null;
  /** The rendered prompt. */
  prompt: string;
  agent: NamedAgentSpec;
  /** https URL without credentials. */
  cloneUrl: string;
  /** Installation token limited to this repository. */
  token: string;
  defaultBranch: string;
  /** atelier/<loop>/<number> or atelier/<loop>/tick-<timestamp> (see runBranch). */
  branch: string;
  workspaceRoot: string;
  /** The operator canceled. */
  signal?: AbortSignal;
  /** The worker lost the Attempt's lease. */
  leaseLost?: AbortSignal;
  /** Between SIGTERM and SIGKILL (default 5 s). */
  killGraceMs?: number;
}

export type AttemptPhase = "preparing" | "running" | "harvesting" | "cleaning";

export interface AttemptDeps {
  onOutput: OutputSink;
  onPhase?: (phase: AttemptPhase) => void;
  /** The running agent's handle: an operator's intervention goes through it. */
  onAgentStarted?: (control: AgentControl) => void;
  /** Where roster secrets are read (default process.env). */
  sourceEnv?: NodeJS.ProcessEnv;
}

export interface AttemptUsage {
  /** The whole Attempt, checkout to cleanup. */
  durationMs: number;
  /** The agent process alone (what an estimate is based on). */
  agentMs: number;
  tokensIn: number | null;
  tokensOut: number | null;
  costUsd: number | null;
  /** The cost is minutes × price_per_minute_usd, not the agent's report. */
  costEstimated: boolean;
}

export interface PullRequestHint {
  title?: string;
  body?: string;
}

export type AttemptOutcome =
  | { tag: "Succeeded"; summary: string; pullRequest: PullRequestHint | null; usage: AttemptUsage; harvest: Harvest }
  | { tag: "Failed"; failure: Failure; usage: AttemptUsage }
  | { tag: "Canceled"; usage: AttemptUsage };

export function attemptUsage(agent: NamedAgentSpec, durationMs: number, agentMs: number, result: AgentResult | null): AttemptUsage {
  const reported = result?.cost_usd;
  const price = agent.price_per_minute_usd;
  const estimate = reported === undefined && price !== undefined && price >= 0;
  return {
    durationMs,
    agentMs,
    tokensIn: result?.tokens_in ?? null,
    tokensOut: result?.tokens_out ?? null,
    costUsd: reported ?? (estimate ? Math.round((agentMs / 60_000) * (price as number) * 1e6) / 1e6 : null),
    costEstimated: estimate,
  };
}

function defaultSummary(h: Harvest): string {
  if (!h.pushed) return "The agent made no changes.";
  const n = h.commits.length;
  return `Pushed ${n} commit${n === 1 ? "" : "s"} to ${h.branch}.`;
}

export async function executeAttempt(input: AttemptInput, deps: AttemptDeps): Promise<AttemptOutcome> {
  const started = Date.now();
  let redactor = new Redactor(gitCredentialForms(input.token));
  const emit = (entry: OutputEntry) => {
    try {
      deps.onOutput(entry);
    } catch {
      // A failing sink must not fail the Attempt.
    }
  };
  const system = (text: string) => emit({ stream: "system", text: redactor.redact(text) });
  const phase = (p: AttemptPhase) => {
    try {
      deps.onPhase?.(p);
    } catch {
      // ditto
    }
  };
  const stops = [input.signal, input.leaseLost].filter((s): s is AbortSignal => s !== undefined);
  const stopSignal = stops.length > 0 ? AbortSignal.any(stops) : undefined;

  let agentMs = 0;
  let result: AgentResult | null = null;
  let ws: Workspace | null = null;
  let agentRecorded: Promise<void> = Promise.resolve();
  const usage = () => attemptUsage(input.agent, Date.now() - started, agentMs, result);
  const canceledOrLost = (): AttemptOutcome | null => {
    if (input.signal?.aborted) return { tag: "Canceled", usage: usage() };
    if (input.leaseLost?.aborted) {
      return { tag: "Failed", failure: infraFailure("lease_lost", "the worker lost the Attempt's lease"), usage: usage() };
    }
    return null;
  };

  try {
    const early = canceledOrLost();
    if (early) return early;
    const context = (resultFile: string): AgentContext => ({
      runId: input.runId,
      attemptId: input.attemptId,
      repo: input.repo,
      number: input.number,
      branch: input.branch,
      resultFile,
      prompt: input.prompt,
    });
    // A missing secret or an empty command fails before anything is fetched.
    const { secretValues } = buildAgentEnv(input.agent, resolveAgentCommand(input.agent.command), context(""), deps.sourceEnv);
    redactor = redactor.with(secretValues);

    phase("preparing");
    ws = await prepareWorkspace({
      root: input.workspaceRoot,
      repo: input.repo,
      cloneUrl: input.cloneUrl,
      token: input.token,
      defaultBranch: input.defaultBranch,
      branch: input.branch,
      runId: input.runId,
      attemptId: input.attemptId,
      signal: stopSignal,
    });
    system(
      ws.base.kind === "branch"
        ? `continuing from ${ws.base.ref} at ${ws.base.sha.slice(0, 12)}`
        : `starting from ${ws.base.ref} at ${ws.base.sha.slice(0, 12)}`,
    );

    phase("running");
    system(`running agent ${input.agent.name}`);
    const run = await runAgent({
      agent: input.agent,
      cwd: ws.worktree,
      context: context(ws.resultFile),
      onOutput: emit,
      redactor,
      signal: input.signal,
      leaseLost: input.leaseLost,
      onStarted: (control) => {
        if (ws) agentRecorded = recordAgentProcess(ws, control.pid).catch(() => undefined);
        deps.onAgentStarted?.(control);
      },
      sourceEnv: deps.sourceEnv,
      killGraceMs: input.killGraceMs,
    });
    agentMs = run.durationMs;
    redactor = run.redactor;
    const reading = await readResultFile(ws.resultFile);
    if (reading.tag === "Read") result = reading.result;
    if (reading.tag === "Ignored") system(`result file ignored: ${reading.reason}`);
    if (run.tag === "Canceled") return { tag: "Canceled", usage: usage() };
    if (run.tag === "Failed") {
      system(run.failure.message);
      return { tag: "Failed", failure: run.failure, usage: usage() };
    }
    const stopped = canceledOrLost();
    if (stopped) return stopped;

    phase("harvesting");
    const harvested = await harvest({
      worktree: ws.worktree,
      attemptId: input.attemptId,
      baseSha: ws.base.sha,
      branch: input.branch,
      remoteBranchSha: ws.remoteBranchSha,
      cloneUrl: input.cloneUrl,
      token: input.token,
      redactor,
      signal: stopSignal,
    });
    if (harvested.committedLeftovers) system("committed the changes the agent left uncommitted");
    system(
      harvested.pushed
        ? `pushed ${harvested.commits.length} commit(s) to ${harvested.branch} (${harvested.headSha.slice(0, 12)})`
        : "the agent made no commits; nothing to push",
    );
    const pr = result?.pull_request;
    return {
      tag: "Succeeded",
      summary: result?.summary !== undefined ? redactor.redact(result.summary) : defaultSummary(harvested),
      pullRequest: pr
        ? {
            ...(pr.title !== undefined ? { title: redactor.redact(pr.title) } : {}),
            ...(pr.body !== undefined ? { body: redactor.redact(pr.body) } : {}),
          }
        : null,
      usage: usage(),
      harvest: harvested,
    };
  } catch (err) {
    const stopped = canceledOrLost();
    if (stopped) return stopped;
    let failure: Failure;
    if (err instanceof AttemptFailureError) failure = err.failure;
    else if (err instanceof GitCommandError) failure = infraFailure("tool_error", redactor.redact(err.message));
    else failure = defectFailure(redactor.redact(`executor: ${err instanceof Error ? err.message : String(err)}`));
    system(failure.message);
    return { tag: "Failed", failure, usage: usage() };
  } finally {
    if (ws) {
      phase("cleaning");
      await agentRecorded;
      await removeWorkspace(ws).catch((err: unknown) => {
        system(`could not remove the worktree ${ws?.worktree}: ${err instanceof Error ? err.message : String(err)}`);
      });
    }
  }
}
