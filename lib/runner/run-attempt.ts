import { agentFailure, defectFailure, infraFailure, type Failure } from "../engine/failure";
import { agentNotAllowedMessage, registryAllowlist } from "../config/roster";
import { mayUseAgent } from "../auth/roster-allow";
import { runEnvironment } from "../store/runs/run-environment";
import { AttemptFailureError } from "../executor/attempt-failure-error";
import type { AttemptUsage } from "../executor/attempt-usage";
import { verifyMarkdown } from "../executor/verify-report";
import { verifySpecOf } from "../executor/verify-spec";
import { executeAttempt, type AttemptOutcome } from "../executor/execute-attempt";
import type { HeldDiff } from "../executor/held-diff";
import { heldRefOf, type HeldCommits } from "../store/runs/held-commits";
import { gitCredentialForms, maskSecrets } from "../secrets/redact";
import { neutralizeAgentTextWithin } from "../github/agent-pr-text";
import { ConflictError } from "../errors";
import { finishAttempt, type AttemptRef, type AttemptResult, type FinishResult } from "../store/runs/attempts";
import type { Usage } from "../store/runs/attempts";
import type { StartedRun } from "../store/runs/attempts";
import { attemptLease } from "../store/runs/attempt-lease";
import type { RunRow } from "../store/runs/run-rows";
import { watchAttemptRow } from "./attempt-watch";
import { collectRetired } from "./collect-retired";
import { DatabaseAwayError, holdThroughOutage } from "./hold-through-outage";
import { executorAgent } from "./executor-agent";
import type { Lease } from "./lease";
import { HAND_OVER, type LocalAttempt } from "./local-attempts";
import { pullRequestBase } from "./pull-request-base";
import { workBranchOfRun } from "./run-branch";
import type { RunnerContext } from "./runner-context";
import { rosterAgent, type PublishedPullRequest, type RepositoryAccess } from "./runner-deps";
import { TranscriptWriter } from "./transcript-writer";
import { attemptSessions, postgresSessionStore } from "./kept-sessions";
import type { AttemptSessions } from "../executor/agent-session";
import { recordResumedSession } from "../store/runs/attempt-resumed";
import { secretKey } from "../secrets/secret-key";

/**
 * One begun Attempt, from the token to the recorded outcome: mint a token scoped to the
 * repository, run the executor with the output streamed into the transcript, open or update
 * the pull request when there is work on the branch (a draft that says so when verify failed), and record the outcome fenced by the
 * lease token. A worker that lost its lease (or is stopping at once) writes no outcome; an
 * operator's cancel was already recorded by the cancel itself.
 */

export type AttemptEnd =
  | { tag: "Recorded"; finish: FinishResult }
  | { tag: "Canceled" }
  /**
   * This worker no longer owns the Attempt: its lease holder or the orphan sweep decides.
   * `database_away`: the outcome could not be written within the Attempt's budget; the sweep
   * closes it with that reason (left in Redis). `lease_expired`: this worker's own lease ran
   * out (Redis did not answer for a TTL) and its agent is stopped: nobody else can hold the
   * Attempt, so the worker closes it itself (move-run.ts). `handed_over`: a draining worker
   * stopped the agent after keeping its session; it closes the Attempt as interrupted, for the
   * next Attempt (on any worker) to resume.
   */
  | { tag: "Abandoned"; reason: "lease_lost" | "lease_expired" | "stopping" | "handed_over" | "database_away" };

function toUsage(u: AttemptUsage | null, startedAt: number): Usage {
  return {
    durationMs: u?.durationMs ?? Date.now() - startedAt,
    tokensIn: u?.tokensIn ?? null,
    tokensOut: u?.tokensOut ?? null,
    costUsd: u?.costUsd ?? null,
    costEstimated: u?.costEstimated ?? false,
    costExact: u?.costExact ?? false,
    model: u?.model ?? null,
    turns: u?.turns ?? null,
    sessionId: u?.sessionId ?? null,
  };
}

/** GitHub's limits on a pull request's body and title. */
const PR_BODY_MAX = 65_536;
const PR_TITLE_MAX = 256;

/** An error's message, as kept on the Attempt: masked, with the git credential forms of the installation token when one was minted. */
const message = (err: unknown, access?: RepositoryAccess | null) =>
  maskSecrets(err instanceof Error ? err.message : String(err), access ? gitCredentialForms(access.token) : []);

/** A write held through a database outage (hold-through-outage.ts), for this Attempt. */
type Hold = <T>(write: () => Promise<T>) => Promise<T>;

/**
 * How this Attempt holds its writes while Postgres is away: until its agent's budget
 * (max_attempt_minutes from its start) runs out, at least one lease TTL, while it keeps the lease.
 */
function holdFor(ctx: RunnerContext, run: RunRow, attempt: AttemptRef, startedAt: number, signal: AbortSignal): Hold {
  const minutes = rosterAgent(ctx.config.roster, run.agent)?.maxAttemptMinutes ?? 0;
  const until = Math.max(startedAt + minutes * 60_000, Date.now() + ctx.config.leaseTtlMs);
  const onHeld = (err: unknown, retryInMs: number) =>
    ctx.log.warn({ attemptId: attempt.id, retryInMs, err: message(err) }, "the database is away: holding the Attempt");
  return (write) => holdThroughOutage(ctx.deps.db, write, { until, signal, onHeld });
}

/** Where this Attempt keeps its agent's session and finds its Run's (ADR 0082). */
function sessionsOf(ctx: RunnerContext, attempt: AttemptRef, repositoryId: string | null): AttemptSessions {
  const writer = { runId: attempt.runId, attemptId: attempt.id, leaseToken: attempt.leaseToken };
  const { db } = ctx.deps;
  return attemptSessions(ctx.deps.sessionStore ?? postgresSessionStore(db), ctx.config.sessionKey ?? secretKey(), writer, repositoryId, (sessionId) =>
    recordResumedSession(db, writer, sessionId),
  );
}

type Produced = { outcome: AttemptOutcome; access: RepositoryAccess | null; base: string | null };

/** Everything up to the executor's outcome; a failure before the agent runs is an outcome too. */
async function produceOutcome(
  ctx: RunnerContext,
  run: StartedRun,
  attempt: AttemptRef,
  local: LocalAttempt,
  transcript: TranscriptWriter,
  leaseLost: AbortSignal,
  startedAt: number,
  hold: Hold,
): Promise<Produced> {
  const failed = (failure: Failure): Produced => {
    transcript.system(failure.message);
    const usage: AttemptUsage = { ...toUsage(null, startedAt), agentMs: 0, costExact: false, model: null, turns: null, sessionId: null };
    return { outcome: { tag: "Failed", failure, usage }, access: null, base: null };
  };
  const agent = rosterAgent(ctx.config.roster, run.agent);
  if (!agent) {
    return failed(agentFailure("configuration", `The roster has no agent "${run.agent}"; edit the Run to pick one it has, then retry.`));
  }
  if (!(await mayUseAgent(ctx.deps.db, ctx.deps.github.apiHost, agent, run.repo))) return failed(agentFailure("configuration", agentNotAllowedMessage(run.agent, run.repo)));
  let access: RepositoryAccess;
  try {
    access = await ctx.deps.github.mintToken(run.repo);
  } catch (err) {
    if (err instanceof AttemptFailureError) return failed(err.failure);
    return failed(infraFailure("transport", `Could not mint an installation token for ${run.repo}: ${message(err)}`));
  }
  // what this worker keeps of retired repositories goes before anything new is fetched
  await collectRetired(ctx.deps.db, ctx.config.workspaceRoot).catch((err: unknown) =>
    ctx.log.warn({ err: message(err) }, "could not collect the caches of retired repositories"),
  );
  // read before the agent starts, and held as the outcome is: a database blip here is no failure
  const base = await hold(() => pullRequestBase(ctx.deps.db, run.repo, access));
  const branch = workBranchOfRun(run);
  const environment = await hold(() => runEnvironment(ctx.deps.db, run.id));
  const picked = environment.environment?.toolchains ?? [];
  const offered = ctx.config.roster.toolchains ?? {};
  const missing = picked.filter((name) => !Object.hasOwn(offered, name));
  if (missing.length) {
    return failed(agentFailure("configuration", `toolchain_unavailable: the roster no longer offers the toolchain ${missing.join(", ")} the Loop's environment picks (toolchains: in atelier.config.yml); fix the repository's toolchain: or the roster, then retry.`));
  }
  const execute = ctx.deps.execute ?? executeAttempt;
  try {
    const outcome = await execute(
      {
        runId: run.id,
        attemptId: attempt.id,
        loop: run.loop,
        repo: run.repo,
        number: run.number,
        prompt: run.prompt,
        agent: executorAgent(agent),
        cloneUrl: access.cloneUrl,
        token: access.token,
        defaultBranch: base,
        branch,
        workspaceRoot: ctx.config.workspaceRoot,
        sandbox: ctx.config.roster.sandbox ?? "on",
        resumeSession: run.resume_session,
        sessions: sessionsOf(ctx, attempt, access.repositoryId),
        ...(ctx.config.sessionSaveEveryMs !== undefined ? { sessionSaveEveryMs: ctx.config.sessionSaveEveryMs } : {}),
        interruptedBy: run.interrupted_by,
        model: run.model,
        verify: verifySpecOf(environment.environment),
        verifyEgress: registryAllowlist(ctx.config.roster),
        environment: environment.environment,
        repositoryId: access.repositoryId,
        trusted: environment.trusted,
        registries: registryAllowlist(ctx.config.roster),
        snapshots: ctx.config.snapshots ?? null,
        toolchains: picked.map((name) => offered[name]!),
        // a Run a non-writer may have steered (or whose Loop says push: after_review) pushes no branch
        ...(run.review_reason ? { holdRef: heldRefOf(run.id) } : {}),
        signal: local.canceled.signal,
        leaseLost,
        ...(ctx.config.killGraceMs !== undefined ? { killGraceMs: ctx.config.killGraceMs } : {}),
      },
      {
        onOutput: transcript.push,
        onAgentStarted: (control) => {
          local.agent = control;
        },
        ...(ctx.config.agentEnv ? { sourceEnv: ctx.config.agentEnv } : {}),
      },
    );
    return { outcome, access, base };
  } catch (err) {
    return failed(defectFailure(`The executor failed: ${message(err, access)}`));
  }
}

/** The title and body of the Run's pull request (the agent's, neutralized, else the Loop's name and its summary; verify's result on top; Atelier's footer), and whether it is a draft. */
function pullRequestText(run: Pick<RunRow, "id" | "loop" | "repo" | "number">, outcome: Extract<AttemptOutcome, { tag: "Succeeded" }>): { title: string; body: string; draft: boolean | undefined } {
  // the agent's words: no @-mention notifies anyone, no closing keyword closes another Item
  const own = { repo: run.repo, number: run.number };
  const agentTitle = outcome.pullRequest?.title;
  const title = agentTitle !== undefined ? neutralizeAgentTextWithin(agentTitle, own, PR_TITLE_MAX) : `Atelier: ${run.loop}${run.number !== null ? ` for #${run.number}` : ""}`;
  const footer = `\n\n---\nOpened by Atelier for Run \`${run.id}\` (Loop \`${run.loop}\`).`;
  const verify = outcome.verify ?? null;
  // verify failed: a draft (an open pull request turned into one); passed: ready for review; none: as it is
  const draft = verify ? !verify.passed : undefined;
  const checked = verify ? `${draft ? "**Verify failed: this pull request is a draft.** " : ""}${verifyMarkdown(verify)}\n\n---\n\n` : "";
  // GitHub takes at most 65,536 characters, footer included
  const body = `${neutralizeAgentTextWithin(`${checked}${outcome.pullRequest?.body ?? outcome.summary}`, own, PR_BODY_MAX - footer.length)}${footer}`;
  return { title, body, draft };
}

/** What the outcome keeps of commits held for review: where they are, what they change, and the pull request to open for them. */
function heldCommitsOf(run: StartedRun, attempt: AttemptRef, outcome: Extract<AttemptOutcome, { tag: "Succeeded" }>, held: HeldDiff): HeldCommits {
  const { harvest } = outcome;
  const text = pullRequestText(run, outcome);
  return {
    attemptId: attempt.id,
    ref: harvest.ref,
    branch: harvest.branch,
    branchSha: harvest.remoteBranchSha,
    baseSha: harvest.baseSha,
    headSha: harvest.headSha,
    commits: harvest.commits,
    files: held.files,
    filesCut: held.filesCut,
    patch: held.patch,
    patchCut: held.patchCut,
    pullRequestTitle: text.title,
    pullRequestBody: text.body,
  };
}

/** Opens or updates the pull request when the branch holds work; a failure fails the Attempt (InfraFailure). */
async function publish(
  ctx: RunnerContext,
  run: RunRow,
  attempt: AttemptRef,
  produced: Produced & { outcome: Extract<AttemptOutcome, { tag: "Succeeded" }> },
  transcript: TranscriptWriter,
  hold: Hold,
): Promise<{ pr: PublishedPullRequest | null } | { failure: Failure }> {
  const { outcome, access, base } = produced;
  // a retry after a push whose pull request failed has nothing new to push, but a branch to propose
  const worthAsking = outcome.harvest.pushed || (attempt.number > 1 && run.pull_request_number === null);
  if (!worthAsking || !access || !base) return { pr: null };
  const { title, body, draft } = pullRequestText(run, outcome);
  try {
    const pr = await hold(() => ctx.deps.github.publishPullRequest({
      repo: run.repo,
      head: outcome.harvest.branch,
      base,
      title,
      body,
      ...(draft !== undefined ? { draft } : {}),
      runId: run.id,
      loop: run.loop,
      itemNumber: run.number,
      token: access.token,
    }));
    if (pr) transcript.system(`pull request #${pr.number}${pr.url ? ` ${pr.url}` : ""}`);
    return { pr };
  } catch (err) {
    return { failure: infraFailure("transport", `Pushed ${outcome.harvest.branch} but could not open its pull request: ${message(err, access)}`) };
  }
}

export async function runBegunAttempt(
  ctx: RunnerContext,
  run: StartedRun,
  attempt: AttemptRef,
  lease: Lease,
  local: LocalAttempt,
): Promise<AttemptEnd> {
  const startedAt = Date.now();
  const { db } = ctx.deps;
  const transcript = new TranscriptWriter(db, attempt.id, run.id, {
    ...ctx.config.transcript,
    onError: (err) => ctx.log.warn({ err, attempt_id: attempt.id, run_id: attempt.runId }, "could not store transcript lines"),
  });
  local.attemptId = attempt.id;
  local.note = (text) => transcript.system(text);
  const lostByRow = new AbortController();
  const leaseLost = AbortSignal.any([lease.lost, lostByRow.signal, local.stopped.signal]);
  const watch = watchAttemptRow(db, attempt, Math.max(100, Math.floor(ctx.config.leaseTtlMs / 3)), {
    canceled: () => local.canceled.abort(),
    lost: () => lostByRow.abort(),
  });
  transcript.system(`attempt ${attempt.number} started on ${ctx.config.workerId}`);

  const hold = holdFor(ctx, run, attempt, startedAt, leaseLost);
  let produced: Produced;
  try {
    produced = await produceOutcome(ctx, run, attempt, local, transcript, leaseLost, startedAt, hold);
  } finally {
    watch.stop();
  }
  if (leaseLost.aborted) {
    const reason = abandonReason(local, lostByRow.signal, lease);
    // a hand-over still holds the Attempt: its transcript is kept whole
    await transcript.close({ discard: reason !== "handed_over" });
    return { tag: "Abandoned", reason };
  }
  if (produced.outcome.tag === "Canceled" || local.canceled.signal.aborted) {
    await transcript.close();
    return { tag: "Canceled" };
  }

  let result: AttemptResult;
  const { outcome } = produced;
  if (outcome.tag === "Succeeded" && outcome.held) {
    result = { tag: "Succeeded", summary: outcome.summary, usage: toUsage(outcome.usage, startedAt), branch: null, pullRequestNumber: null, headSha: null, held: heldCommitsOf(run, attempt, outcome, outcome.held) };
  } else if (outcome.tag === "Succeeded") {
    const published = await publish(ctx, run, attempt, { ...produced, outcome }, transcript, hold);
    if ("failure" in published) {
      transcript.system(published.failure.message);
      result = { tag: "Failed", failure: published.failure, usage: toUsage(outcome.usage, startedAt) };
    } else {
      const onBranch = outcome.harvest.pushed || published.pr !== null;
      result = {
        tag: "Succeeded",
        summary: outcome.summary,
        usage: toUsage(outcome.usage, startedAt),
        branch: onBranch ? outcome.harvest.branch : null,
        pullRequestNumber: published.pr?.number ?? null,
        headSha: outcome.harvest.pushed ? outcome.harvest.headSha : null,
        verify: outcome.verify ?? null,
      };
    }
  } else {
    result = { tag: "Failed", failure: outcome.failure, usage: toUsage(outcome.usage, startedAt) };
  }
  // the lines not stored yet go with the outcome, in its statement
  const tail = await transcript.takeTail();
  try {
    return { tag: "Recorded", finish: await hold(() => finishAttempt(db, attempt, result, tail)) };
  } catch (err) {
    if (err instanceof DatabaseAwayError) return abandonUnrecorded(ctx, attempt, err);
    if (!(err instanceof ConflictError) || err.token !== "lease_lost") throw err;
    // closed meanwhile: by an operator's cancel, or by the sweep after this worker lost its lease
    return (await attemptLease(db, attempt.id))?.state === "Canceled" ? { tag: "Canceled" } : { tag: "Abandoned", reason: "lease_lost" };
  }
}

function abandonReason(local: LocalAttempt, lostByRow: AbortSignal, lease: Lease): Extract<AttemptEnd, { tag: "Abandoned" }>["reason"] {
  if (local.stopped.signal.aborted) return local.stopped.signal.reason === HAND_OVER && !lease.lost.aborted && !lostByRow.aborted ? "handed_over" : "stopping";
  return !lostByRow.aborted && leaseRanOut(lease) ? "lease_expired" : "lease_lost";
}

/** The lease was lost to its own deadline (no renewal answered for a TTL), not taken by another token. */
const leaseRanOut = (lease: Lease): boolean => lease.lost.aborted && lease.lost.reason === "expired";

/** The outcome could not be written in time: the reason is left for the sweep that closes the Attempt. */
async function abandonUnrecorded(ctx: RunnerContext, attempt: AttemptRef, err: DatabaseAwayError): Promise<AttemptEnd> {
  const reason = `The Attempt finished but its outcome could not be recorded: ${err.message}. It is retried.`;
  ctx.log.error({ attemptId: attempt.id, heldMs: err.heldMs }, reason);
  await ctx.deps.redis.set(ctx.names.unrecordedOutcome(attempt.id), reason, "PX", UNRECORDED_NOTE_MS).catch(() => undefined);
  return { tag: "Abandoned", reason: "database_away" };
}

/** How long the reason of an unrecorded outcome waits in Redis for the sweep. */
const UNRECORDED_NOTE_MS = 24 * 3_600_000;
