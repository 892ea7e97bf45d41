import { agentFailure, defectFailure, infraFailure, type Failure } from "../engine/failure";
import { resolveAgentCommand, sandboxCommandProblem } from "./agent-command";
import { DEFAULT_SANDBOX_LIMITS, parseEgressRule, type EgressRule } from "./agent-sandbox/policy";
import { probeSandbox, SANDBOX_INSTALL_HINT, type SandboxProbe } from "./agent-sandbox/probe";
import { buildAgentEnv, type AgentContext } from "./agent-env";
import type { NamedAgentSpec, OutputEntry, OutputSink } from "./agent-spec";
import { AttemptFailureError } from "./attempt-failure-error";
import { GitCommandError } from "./git";
import { collectHarvest, pushHarvest, type Harvest, type HarvestInput } from "./harvest";
import { heldDiff, type HeldDiff } from "./held-diff";
import { readResultFile, type AgentResult } from "./result-file";
import { gitCredentialForms, instanceSecretValues, Redactor } from "../secrets/redact";
import type { AgentKind, AgentReport } from "./adapters/types";
import type { MeteredUsage } from "./agent-sandbox/usage-meter";
import { attemptUsage, meteringNote, type AttemptUsage } from "./attempt-usage";
import type { AttemptBox } from "./agent-sandbox/box";
import { unpackAgentSession, type AttemptSessions } from "./agent-session";
import { decodeStep } from "./adapters/step-entry";
import { DEFAULT_SESSION_SAVE_EVERY_MS, SessionSaver } from "./session-saver";
import { runAgent, type AgentControl, type AgentRunResult, type AgentSandbox } from "./run-agent";
import { cacheObjects, prepareWorkspace, recordAgentProcess, removeWorkspace, type Workspace } from "./workspace";
import { harvestDir, SANDBOX_RESULT_FILE } from "./workspace-paths";
import { DEFAULT_VERIFY_TIMEOUT_MS, runVerify } from "./verify-run";
import { addMetered, addReports, seconds, verifyWithRounds } from "./verify-rounds";
import type { VerifyResult, VerifySpec } from "./verify-spec";

import type { EnvironmentSpec } from "./environment/environment-spec";
import { prepareEnvironment } from "./environment/prepare-environment";
import type { SnapshotStore } from "./environment/snapshot-store";
import { mountToolchains, ToolchainRefusedError, toolchainsNote, type MountedToolchain, type Toolchain } from "./environment/toolchains";

/**
 * One Attempt, from checkout to harvest: fetch the repository's cache and make the Attempt's
 * box with a private clone at the Run's branch (or the default branch), run the agent in its
 * sandbox there, read its result file, take its commits and what it left uncommitted out of the
 * box, check it with the repository's verify in a fresh box (resuming the agent with a failure
 * when the repository asks for it: verify-rounds.ts), and push the Run's branch from a
 * repository the agent never saw. The pull request is the caller's job; it gets the harvest
 * and verify's result. The box is removed whatever happens.
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
  /** `off`: the instance's config runs agents unconfined (sandbox: off). Default on. */
  sandbox?: SandboxMode;
  /**
   * The agent session to continue (an operator's retry of a Run whose last Attempt reported
   * one, or the next Attempt of an interrupted one): resumed from `sessions`, where the Run's
   * last saved session is kept; when none opens for the Run, the agent starts afresh and says so.
   */
  resumeSession?: string | null;
  /** Where the Run's agent session is kept (saved as the agent goes, restored by the next Attempt); null: none kept or restored. */
  sessions?: AttemptSessions | null;
  /** How often the running agent's session is saved at most (default DEFAULT_SESSION_SAVE_EVERY_MS). */
  sessionSaveEveryMs?: number;
  /** Why the previous Attempt of the Run was interrupted (its worker died or was drained); null: it was not. */
  interruptedBy?: string | null;
  /** The model the Run's Loop picked among its agent's; null: the agent's default. */
  model?: string | null;
  /** How Atelier checks the agent's work (the Loop's `environment: { verify }`); null: none declared. */
  verify?: VerifySpec | null;
  /** Hosts verify may reach (the instance's registry allowlist); default none. */
  verifyEgress?: readonly string[];
  /** verify's wall-clock limit (default DEFAULT_VERIFY_TIMEOUT_MS). */
  verifyTimeoutMs?: number;
  /** The Loop's `environment:` (setup runs before the agent); null: none declared. */
  environment?: EnvironmentSpec | null;
  /** The repository's GitHub id: its bare cache and environment snapshots are keyed by it, never by its name (ADR 0070). */
  repositoryId: string;
  /** The Run's trigger may write the default branch's environment snapshot (store/runs/run-environment.ts). */
  trusted?: boolean;
  /** The instance's registry allowlist: the hosts setup may reach (default: none). */
  registries?: readonly string[];
  /** Where environment snapshots are kept; null: none kept or restored. */
  snapshots?: SnapshotStore | null;
  /** The roster's toolchains the Loop's environment picked (`toolchain:`), in its order. */
  toolchains?: readonly Toolchain[];
  /** Push the commits to this ref, off every branch, for a writer's review (ADR 0058); absent: to the branch. */
  holdRef?: string;
}

export type SandboxMode = "on" | "off";

export type AttemptPhase = "preparing" | "running" | "harvesting" | "cleaning";

export interface AttemptDeps {
  onOutput: OutputSink;
  onPhase?: (phase: AttemptPhase) => void;
  /** The running agent's handle: an operator's intervention goes through it. */
  onAgentStarted?: (control: AgentControl) => void;
  /** Where roster secrets are read (default process.env). */
  sourceEnv?: NodeJS.ProcessEnv;
  /** Whether this host can make a sandbox (default: bubblewrap tried once per process). */
  probeSandbox?: () => Promise<SandboxProbe>;
}

export interface PullRequestHint {
  title?: string;
  body?: string;
}

export type AttemptOutcome =
  | {
      tag: "Succeeded";
      summary: string;
      pullRequest: PullRequestHint | null;
      usage: AttemptUsage;
      harvest: Harvest;
      /** What verify found on the pushed commit; null or absent: the repository declares no verify. */
      verify?: VerifyResult | null;
      /** what the reviewer reads of commits pushed to `holdRef`; null when none were held */
      held: HeldDiff | null;
    }
  | { tag: "Failed"; failure: Failure; usage: AttemptUsage }
  | { tag: "Canceled"; usage: AttemptUsage };

/** Egress entries, parsed (the roster's validation already refused bad ones). */
function egressRules(entries: readonly string[] | undefined): EgressRule[] {
  return (entries ?? []).map(parseEgressRule).filter((r): r is EgressRule => r !== null);
}

/**
 * Whether this Attempt's agent runs sandboxed: always, when the host can; the demo agent (our
 * own code) unconfined when it cannot; any other agent only when the instance says
 * `sandbox: off`. Throws the refusal otherwise.
 */
async function decideSandbox(input: AttemptInput, builtin: boolean, probeHost: () => Promise<SandboxProbe>, system: (t: string) => void): Promise<boolean> {
  if (input.sandbox === "off") {
    system("the instance runs agents unconfined (sandbox: off in atelier.config.yml)");
    return false;
  }
  const probe = await probeHost();
  if (probe.ok) return true;
  if (builtin) {
    system(`no sandbox on this host (${probe.reason}); the built-in demo agent runs unconfined`);
    return false;
  }
  throw new AttemptFailureError(agentFailure("configuration", `Agent ${input.agent.name} cannot start: ${probe.reason}; ${SANDBOX_INSTALL_HINT}.`));
}

/**
 * The Run's kept session in the new box's home; null (start afresh, said) when none is kept, or
 * the kept one does not open for this Run (refused: never restored).
 */
async function restoreSession(input: AttemptInput, kind: AgentKind, box: AttemptBox, sandboxed: boolean, system: (t: string) => void): Promise<string | null> {
  const session = input.resumeSession as string;
  if (kind === "claude" && !sandboxed) {
    // Claude Code files a session under its working directory, the same in every sandbox but a new one unconfined
    system(`the agent's session ${session} is resumed only in the sandbox (each unconfined Attempt has a directory of its own); the agent starts a new one`);
    return null;
  }
  const sessions = input.sessions;
  const loaded = sessions ? await sessions.load().catch((err: unknown) => ({ tag: "Refused" as const, reason: `it could not be read (${err instanceof Error ? err.message : String(err)})` })) : ({ tag: "None" } as const);
  if (loaded.tag === "None") {
    system(`the agent's session ${session} is not kept; the agent starts a new one`);
    return null;
  }
  if (loaded.tag === "Found" && loaded.sessionId !== session) {
    system(`the agent's session ${session} is not kept (the Run keeps another); the agent starts a new one`);
    return null;
  }
  if (loaded.tag === "Refused" || loaded.kind !== kind) {
    system(`the kept session of this Run was refused: ${loaded.tag === "Refused" ? loaded.reason : `it is a ${loaded.kind} session, the agent is ${kind}`}; the agent starts a new one`);
    return null;
  }
  const refused = await unpackAgentSession(loaded.archive, kind, box.home, box).catch((err: unknown) => `it could not be unpacked (${err instanceof Error ? err.message : String(err)})`);
  if (refused) {
    system(`the kept session of this Run was refused: ${refused}; the agent starts a new one`);
    return null;
  }
  await sessions!.resumed(loaded.sessionId).catch(() => undefined);
  system(`resuming the agent's session ${loaded.sessionId}${input.interruptedBy ? " (the previous Attempt was interrupted)" : ""}`);
  return loaded.sessionId;
}

/** What a resumed agent is told when its previous Attempt was interrupted: what happened, what is gone, and its task. */
export function interruptedPrompt(prompt: string, interruptedBy: string, base: string): string {
  return [
    `Your previous session on this task was interrupted before it finished: ${interruptedBy}`,
    `You continue it here, in a fresh checkout of ${base}: changes you had not committed are gone, so look at the files before you rely on them.`,
    "Carry on with the task:",
    "",
    prompt,
  ].join("\n");
}

/** The Attempt's toolchains, checked on this worker now; a refusal fails the Attempt (configuration). */
function attemptToolchains(input: AttemptInput): MountedToolchain[] {
  try {
    return mountToolchains(input.toolchains ?? [], [input.workspaceRoot, ...(input.snapshots ? [input.snapshots.dir] : [])]);
  } catch (err) {
    if (err instanceof ToolchainRefusedError) throw new AttemptFailureError(agentFailure("configuration", `toolchain_unavailable: ${err.message}; the instance's admin fixes toolchains: in atelier.config.yml.`));
    throw err;
  }
}

/** The longest summary kept: the pull request's body must hold it and a footer (GitHub's 65,536). */
export const MAX_SUMMARY_CHARS = 60_000;

/** The agent's final answer (from its report), else the result file's summary. */
function summaryOf(report: AgentReport | null, result: AgentResult | null, redactor: Redactor): string | null {
  const text = report?.finalText?.trim() ? report.finalText : result?.summary;
  if (text === undefined || text === null) return null;
  const safe = redactor.redact(text);
  return safe.length > MAX_SUMMARY_CHARS ? `${safe.slice(0, MAX_SUMMARY_CHARS)}\n\n… (cut: the whole answer is on the Run page)` : safe;
}

function defaultSummary(h: Harvest): string {
  if (!h.pushed) return "The agent made no changes.";
  const n = h.commits.length;
  const commits = `${n} commit${n === 1 ? "" : "s"}`;
  return h.ref.startsWith("refs/heads/") ? `Pushed ${commits} to ${h.branch}.` : `Held ${commits} for ${h.branch}, for a writer's review.`;
}

export async function executeAttempt(input: AttemptInput, deps: AttemptDeps): Promise<AttemptOutcome> {
  const started = Date.now();
  let redactor = new Redactor([...gitCredentialForms(input.token), ...instanceSecretValues()]);
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
  let report: AgentReport | null = null;
  let metered: MeteredUsage | null = null;
  const usage = () => attemptUsage(input.agent, Date.now() - started, agentMs, result, report, metered);
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
    // A missing secret, an empty command or one the sandbox cannot run fails before anything is fetched.
    const resolved = resolveAgentCommand(input.agent.command);
    const { secretValues } = buildAgentEnv(input.agent, resolved, context(""), deps.sourceEnv);
    redactor = redactor.with(secretValues);
    const sandboxed = await decideSandbox(input, resolved.builtin, deps.probeSandbox ?? probeSandbox, system);
    const problem = sandboxed && !resolved.builtin ? sandboxCommandProblem(resolved.sandboxFile, input.agent.read_only_paths ?? []) : null;
    if (problem) throw new AttemptFailureError(agentFailure("configuration", `Agent ${input.agent.name} cannot start: ${problem}.`));
    const toolchains = attemptToolchains(input);
    if (toolchains.length) system(toolchainsNote(toolchains));

    phase("preparing");
    ws = await prepareWorkspace({
      root: input.workspaceRoot,
      repo: input.repo,
      repositoryId: input.repositoryId,
      cloneUrl: input.cloneUrl,
      token: input.token,
      defaultBranch: input.defaultBranch,
      branch: input.branch,
      runId: input.runId,
      attemptId: input.attemptId,
      sandboxed,
      diskMb: input.agent.limits?.diskMb ?? DEFAULT_SANDBOX_LIMITS.diskMb,
      onNote: system,
      signal: stopSignal,
    });
    system(
      ws.base.kind === "branch"
        ? `continuing from ${ws.base.ref} at ${ws.base.sha.slice(0, 12)}`
        : `starting from ${ws.base.ref} at ${ws.base.sha.slice(0, 12)}`,
    );

    // the environment, prepared in a box (the agent's, and verify's fresh one): the snapshot
    // restored, else setup run there; only the agent's box of a trusted Attempt writes a snapshot
    const environment = input.environment;
    // the cache paths inside the checkout: never committed from what the agent left
    let checkoutCache: string[] = [];
    const prepareIn = (box: AttemptBox, name: string, mayWrite: boolean) =>
      prepareEnvironment({
        spec: environment!,
        box,
        repositoryId: input.repositoryId,
        mayWrite,
        store: input.snapshots ?? null,
        registries: input.registries ?? [],
        sandbox: sandboxed
          ? {
              name,
              box,
              limits: { ...DEFAULT_SANDBOX_LIMITS, ...input.agent.limits },
              readOnlyPaths: input.agent.read_only_paths ?? [],
              objects: cacheObjects(ws!.cacheDir),
              onNote: system,
            }
          : null,
        readOnlyPaths: input.agent.read_only_paths ?? [],
        toolchains,
        emit,
        system,
        redactor,
        signal: stopSignal,
        timeoutMs: (input.agent.max_attempt_minutes ?? 60) * 60_000,
        killGraceMs: input.killGraceMs ?? 5_000,
      });
    if (environment?.setup) {
      if (!sandboxed && input.sandbox !== "off") {
        throw new AttemptFailureError(agentFailure("configuration", `setup_failed: the environment's setup runs only in a sandbox, and this host cannot make one; ${SANDBOX_INSTALL_HINT}.`));
      }
      const prepared = await prepareIn(ws.box, `${ws.name}.setup`, (input.trusted ?? false) && ws.base.kind !== "branch");
      if (prepared.tag === "Canceled") return canceledOrLost() ?? { tag: "Canceled", usage: usage() };
      if (prepared.tag === "Failed") throw new AttemptFailureError(prepared.failure);
      checkoutCache = prepared.checkoutCache;
    }

    phase("running");
    system(`running agent ${input.agent.name}${sandboxed ? " in its sandbox" : ""}`);
    const box = ws.box;
    const sandbox: AgentSandbox | undefined = sandboxed
      ? {
          name: ws.name,
          box,
          egress: egressRules(input.agent.egress),
          limits: { ...DEFAULT_SANDBOX_LIMITS, ...input.agent.limits },
          readOnlyPaths: input.agent.read_only_paths ?? [],
          objects: cacheObjects(ws.cacheDir),
          onRefused: (r) => system(`egress refused: ${r.host}:${r.port} (${r.reason})`),
          onNote: system,
        }
      : undefined;
    const kind = resolved.builtin ? null : (input.agent.adapter?.kind ?? null);
    const resumeSession = kind && input.resumeSession ? await restoreSession(input, kind, box, sandboxed, system) : null;
    const workspace = ws;
    let lastRound: AgentRunResult | null = null;
    const runRound = async (prompt: string, session: string | null) => {
      // the session is saved as the agent goes, and once more after it exited
      const saver = kind && input.sessions ? new SessionSaver(kind, box.home, input.sessions, input.sessionSaveEveryMs ?? DEFAULT_SESSION_SAVE_EVERY_MS, system) : null;
      saver?.start();
      const run = await runAgent({
        resumeSession: session,
        model: input.model ?? null,
        agent: input.agent,
        cwd: workspace.worktree,
        context: { ...context(sandboxed ? SANDBOX_RESULT_FILE : workspace.resultFile), prompt },
        sandbox,
        toolchains,
        home: box.home,
        onOutput: (entry) => {
          const step = saver ? decodeStep(entry) : null;
          if (step) saver!.onStep(step);
          emit(entry);
        },
        redactor,
        signal: input.signal,
        leaseLost: input.leaseLost,
        onStarted: (control) => {
          agentRecorded = recordAgentProcess(workspace, control.pid).catch(() => undefined);
          deps.onAgentStarted?.(control);
        },
        sourceEnv: deps.sourceEnv,
        killGraceMs: input.killGraceMs,
      }).catch((err: unknown) => {
        saver?.stop();
        throw err;
      });
      agentMs += run.durationMs;
      if (run.tag === "Exited") system(`agent ${input.agent.name} finished in ${seconds(run.durationMs)}`);
      redactor = run.redactor;
      report = addReports(report, run.report);
      metered = addMetered(metered, run.metered);
      await saver?.finish(run.report?.sessionId ?? null);
      const reading = await readResultFile(workspace.resultFile);
      if (reading.tag === "Read") result = reading.result;
      if (reading.tag === "Ignored") system(`result file ignored: ${reading.reason}`);
      if (run.metered && metered) system(meteringNote(metered, usage(), report));
      if (run.tag === "Failed") system(run.failure.message);
      lastRound = run;
      return run;
    };
    const prompt = resumeSession && input.interruptedBy ? interruptedPrompt(input.prompt, input.interruptedBy, `${ws.base.ref} at ${ws.base.sha.slice(0, 12)}`) : input.prompt;
    const run = await runRound(prompt, resumeSession);
    if (run.tag === "Canceled") return { tag: "Canceled", usage: usage() };
    if (run.tag === "Failed") return { tag: "Failed", failure: run.failure, usage: usage() };
    const stopped = canceledOrLost();
    if (stopped) return stopped;

    phase("harvesting");
    const harvestInput: HarvestInput = {
      name: ws.name,
      dir: ws.dir,
      box: ws.box,
      cacheDir: ws.cacheDir,
      attemptId: input.attemptId,
      baseSha: ws.base.sha,
      branch: input.branch,
      remoteBranchSha: ws.remoteBranchSha,
      ...(input.holdRef ? { holdRef: input.holdRef } : {}),
      cloneUrl: input.cloneUrl,
      token: input.token,
      sandboxed,
      redactor,
      signal: stopSignal,
      exclude: checkoutCache,
    };
    const collect = async () => {
      const collected = await collectHarvest({ ...harvestInput, redactor });
      if (collected.problem) system(`${collected.problem}; nothing of it was pushed`);
      if (collected.leftoversRefused) system(`the files the agent left uncommitted were not taken: ${collected.leftoversRefused}`);
      if (collected.committedLeftovers) system("committed the changes the agent left uncommitted");
      return collected;
    };
    let collected = await collect();
    let verified: VerifyResult | null = null;
    if (input.verify) {
      const spec = input.verify;
      const rounds = await verifyWithRounds(spec, collected, {
        verify: (h, round) =>
          runVerify({
            attemptDir: workspace.dir,
            name: workspace.name,
            round,
            cacheDir: workspace.cacheDir,
            source: harvestDir(workspace.dir),
            sha: h.headSha,
            branch: input.branch,
            command: spec.command,
            sandboxed,
            egress: egressRules(input.verifyEgress),
            limits: { ...DEFAULT_SANDBOX_LIMITS, ...input.agent.limits },
            readOnlyPaths: input.agent.read_only_paths ?? [],
            toolchains,
            timeoutMs: input.verifyTimeoutMs ?? DEFAULT_VERIFY_TIMEOUT_MS,
            env: environment?.env ?? {},
            // verify starts from the environment the agent had (the snapshot, or setup again)
            ...(environment?.setup
              ? {
                  restoreEnvironment: async (box: AttemptBox) => {
                    const prepared = await prepareIn(box, `${ws!.name}.verify-setup-${round}`, false);
                    if (prepared.tag === "Failed") throw new Error(`the environment for verify was not prepared: ${prepared.failure.message}`);
                  },
                }
              : {}),
            redactor,
            onOutput: emit,
            signal: stopSignal,
            onNote: system,
          }),
        resume: async (message) => {
          phase("running");
          const again = await runRound(redactor.redact(message), kind ? (report?.sessionId ?? null) : null);
          phase("harvesting");
          return again.tag === "Exited";
        },
        collect,
        stopped: () => canceledOrLost() !== null,
        note: system,
      });
      const stoppedNow = canceledOrLost();
      if (stoppedNow) return stoppedNow;
      if (rounds.tag === "Stopped") {
        // the resumed agent did not finish: its failure is the Attempt's
        const round = lastRound as AgentRunResult | null;
        const failure = round?.tag === "Failed" ? round.failure : agentFailure("agent_exit", "the agent, resumed with verify's failure, did not finish its round");
        return { tag: "Failed", failure, usage: usage() };
      }
      collected = rounds.collected;
      // the repository's text, shown on GitHub: masked like everything else
      verified = { ...rounds.result, command: redactor.redact(rounds.result.command) };
    }
    const harvested = await pushHarvest({ ...harvestInput, redactor }, collected);
    const held = harvested.pushed && input.holdRef ? await heldDiff(harvestDir(ws.dir), harvested.baseSha, harvested.headSha, redactor, stopSignal) : null;
    system(
      !harvested.pushed
        ? "the agent made no commits; nothing to push"
        : held
          ? `held ${harvested.commits.length} commit(s) for ${harvested.branch} under ${harvested.ref} (${harvested.headSha.slice(0, 12)}): no branch has them until a writer reviews them and presses Push`
          : `pushed ${harvested.commits.length} commit(s) to ${harvested.branch} (${harvested.headSha.slice(0, 12)})`,
    );
    const pr = (result as AgentResult | null)?.pull_request;
    return {
      tag: "Succeeded",
      summary: summaryOf(report, result, redactor) ?? defaultSummary(harvested),
      pullRequest: pr
        ? {
            ...(pr.title !== undefined ? { title: redactor.redact(pr.title) } : {}),
            ...(pr.body !== undefined ? { body: redactor.redact(pr.body) } : {}),
          }
        : null,
      usage: usage(),
      harvest: harvested,
      verify: verified,
      held,
    };
  } catch (err) {
    const stopped = canceledOrLost();
    if (stopped) return stopped;
    let failure: Failure;
    if (err instanceof AttemptFailureError) failure = err.failure;
    else if (err instanceof GitCommandError) failure = infraFailure("git_error", redactor.redact(err.message));
    else failure = defectFailure(redactor.redact(`executor: ${err instanceof Error ? err.message : String(err)}`));
    system(failure.message);
    return { tag: "Failed", failure, usage: usage() };
  } finally {
    if (ws) {
      phase("cleaning");
      await agentRecorded;
      await removeWorkspace(ws).catch((err: unknown) => {
        system(`could not remove the Attempt's directory ${ws?.dir}: ${err instanceof Error ? err.message : String(err)}`);
      });
    }
  }
}
