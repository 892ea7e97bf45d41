import { validationFailed } from "../api-error";
import type { CheckConclusion, CommitState, SimAccount, SimCheckRun, SimCommitStatus, SimRepo } from "../model";
import { createCheckRun } from "./checks";
import type { SimState } from "./sim-state";

/**
 * Another App's CI on the simulated GitHub: GitHub Actions' check runs (a check suite per App
 * and commit), and commit statuses (`POST /repos/{o}/{r}/statuses/{sha}`, what older CI
 * services write). GitHub tells the App of both: `check_run` and `check_suite` completed (the
 * App has checks: read), `status` (statuses: read).
 */

/** The App the simulated CI's check runs belong to (GitHub Actions' id and slug on github.com). */
export const CI_APP = { id: 15368, slug: "github-actions", name: "GitHub Actions", botLogin: "github-actions[bot]" } as const;

const COMMIT_STATES: CommitState[] = ["error", "failure", "pending", "success"];

/** The CI's bot account, made on first use. */
export function ciBot(state: SimState): SimAccount {
  return state.findAccount(CI_APP.botLogin) ?? state.createAccount(CI_APP.botLogin, "Bot");
}

export interface CiCheckInput {
  sha: string;
  name: string;
  conclusion: CheckConclusion;
  title?: string;
  summary?: string;
}

/**
 * The CI ran a job on a commit and finished it: a completed check run of GitHub Actions
 * (check_run created, then completed) and its suite's check_suite completed.
 */
export function finishCiCheck(state: SimState, repo: SimRepo, input: CiCheckInput): SimCheckRun {
  const bot = ciBot(state);
  const run = createCheckRun(
    state,
    repo,
    {
      name: input.name,
      head_sha: input.sha,
      status: "completed",
      conclusion: input.conclusion,
      output: { title: input.title ?? input.name, summary: input.summary ?? "" },
    },
    bot.id,
    CI_APP.id,
  );
  state.emit({ event: "check_run", action: "completed", repoId: repo.id, checkRunId: run.id, senderId: bot.id });
  state.emit({ event: "check_suite", action: "completed", repoId: repo.id, checkSuiteId: run.checkSuiteId, senderId: bot.id });
  return run;
}

/** The check runs of one suite (one App, one commit). */
export function suiteRuns(state: SimState, suiteId: number): SimCheckRun[] {
  return [...state.checkRuns.values()].filter((r) => r.checkSuiteId === suiteId);
}

/** A suite's conclusion as GitHub rolls it up: the worst of its completed runs; null while one runs. */
export function suiteConclusion(runs: readonly SimCheckRun[]): CheckConclusion | null {
  if (runs.some((r) => r.status !== "completed")) return null;
  const order: CheckConclusion[] = ["action_required", "timed_out", "failure", "cancelled", "neutral", "skipped", "success"];
  return order.find((c) => runs.some((r) => r.conclusion === c)) ?? null;
}

export interface StatusInput {
  state?: unknown;
  context?: unknown;
  description?: unknown;
  target_url?: unknown;
}

/** `POST /repos/{o}/{r}/statuses/{sha}`: a new status of a context on a commit (the newest one per context counts). */
export function createCommitStatus(state: SimState, repo: SimRepo, sha: string, input: StatusInput, creatorId: number): SimCommitStatus {
  if (typeof input.state !== "string" || !COMMIT_STATES.includes(input.state as CommitState)) {
    throw validationFailed([{ resource: "Status", field: "state", code: "custom", message: "state is not included in the list" }]);
  }
  const description = typeof input.description === "string" ? input.description : null;
  if ((description ?? "").length > 140) throw validationFailed([{ resource: "Status", field: "description", code: "custom", message: "description is too long (maximum is 140 characters)" }]);
  const now = state.clock.now();
  const status: SimCommitStatus = {
    ...state.newNode("StatusContext"),
    repoId: repo.id,
    sha,
    state: input.state as CommitState,
    context: typeof input.context === "string" && input.context ? input.context : "default",
    description,
    targetUrl: typeof input.target_url === "string" ? input.target_url : null,
    creatorId,
    createdAt: now,
    updatedAt: now,
  };
  state.statuses.set(status.id, status);
  state.emit({ event: "status", action: "", repoId: repo.id, statusId: status.id, senderId: creatorId });
  return status;
}

/** The newest status of each context on a commit, newest first (what GitHub's combined status shows). */
export function latestStatuses(state: SimState, repo: SimRepo, sha: string): SimCommitStatus[] {
  const seen = new Set<string>();
  return [...state.statuses.values()]
    .filter((s) => s.repoId === repo.id && s.sha === sha)
    .sort((a, b) => b.id - a.id)
    .filter((s) => !seen.has(s.context) && seen.add(s.context));
}

/** The combined state: failure when any context failed or errored, pending while any is pending, else success. */
export function combinedState(statuses: readonly SimCommitStatus[]): CommitState {
  if (statuses.some((s) => s.state === "failure" || s.state === "error")) return "failure";
  if (statuses.length === 0 || statuses.some((s) => s.state === "pending")) return "pending";
  return "success";
}
