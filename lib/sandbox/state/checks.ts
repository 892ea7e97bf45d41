import { GitHubApiError, validationFailed, type GitHubValidationError } from "../api-error";
import type { CheckConclusion, CheckStatus, SimCheckAction, SimCheckRun, SimRepo } from "../model";
import type { SimState } from "./sim-state";

export interface CheckRunInput {
  name?: string;
  head_sha?: string;
  details_url?: string | null;
  external_id?: string | null;
  status?: CheckStatus;
  started_at?: string;
  conclusion?: CheckConclusion | null;
  completed_at?: string;
  output?: { title?: string | null; summary?: string | null; text?: string | null };
  actions?: SimCheckAction[];
}

const STATUSES: CheckStatus[] = ["queued", "in_progress", "completed", "waiting", "requested", "pending"];
const CONCLUSIONS: CheckConclusion[] = ["success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required"];

function invalid(field: string, message: string): GitHubValidationError {
  return { resource: "CheckRun", field, code: "invalid", message };
}

/** GitHub's limits on a check run, checked on the merged result of a create or an update. */
export function validateCheckRun(run: Pick<SimCheckRun, "status" | "conclusion" | "detailsUrl" | "actions" | "output" | "name">): void {
  const errors: GitHubValidationError[] = [];
  if (!run.name) errors.push({ resource: "CheckRun", field: "name", code: "missing_field" });
  if (!STATUSES.includes(run.status)) errors.push(invalid("status", `status is not included in the list`));
  if (run.conclusion !== null && !CONCLUSIONS.includes(run.conclusion)) errors.push(invalid("conclusion", "conclusion is not included in the list"));
  if (run.status === "completed" && run.conclusion === null) errors.push({ resource: "CheckRun", field: "conclusion", code: "missing_field", message: "conclusion is required when status is completed" });
  if (run.conclusion === "action_required" && !run.detailsUrl) errors.push({ resource: "CheckRun", field: "details_url", code: "missing_field", message: "details_url is required when conclusion is action_required" });
  if (run.actions.length > 3) errors.push(invalid("actions", "actions has more than 3 elements"));
  run.actions.forEach((action, i) => {
    if (!action.label || action.label.length > 20) errors.push(invalid(`actions[${i}].label`, "label must be 1 to 20 characters"));
    if (!action.description || action.description.length > 40) errors.push(invalid(`actions[${i}].description`, "description must be 1 to 40 characters"));
    if (!action.identifier || action.identifier.length > 20) errors.push(invalid(`actions[${i}].identifier`, "identifier must be 1 to 20 characters"));
  });
  if ((run.output.summary ?? "").length > 65535) errors.push(invalid("output.summary", "summary is too long (maximum is 65535 characters)"));
  if ((run.output.text ?? "").length > 65535) errors.push(invalid("output.text", "text is too long (maximum is 65535 characters)"));
  if ((run.output.title !== null || run.output.text !== null) && run.output.summary === null) errors.push({ resource: "CheckRun", field: "output.summary", code: "missing_field" });
  if ((run.output.summary !== null || run.output.text !== null) && !run.output.title) errors.push({ resource: "CheckRun", field: "output.title", code: "missing_field" });
  if (errors.length) throw validationFailed(errors, "Invalid request.");
}

function time(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw validationFailed([invalid("timestamp", `${value} is not an ISO 8601 timestamp`)]);
  return ms;
}

/** A check suite per App and commit, as GitHub makes them. */
export function suiteId(state: SimState, repo: SimRepo, headSha: string, appId: number): number {
  const key = `${repo.id}:${appId}:${headSha}`;
  let id = state.checkSuites.get(key);
  if (id === undefined) {
    id = state.nextId();
    state.checkSuites.set(key, id);
  }
  return id;
}

/** The repository, App and commit of a check suite; null for an unknown id. */
export function suiteOf(state: SimState, id: number): { repoId: number; appId: number; headSha: string } | null {
  for (const [key, suite] of state.checkSuites) {
    if (suite !== id) continue;
    const [repoId = "", appId = "", headSha = ""] = key.split(":");
    return { repoId: Number(repoId), appId: Number(appId), headSha };
  }
  return null;
}

/**
 * Code reached a commit (a push): GitHub makes the App's check suite for it and asks the App
 * for its checks (`check_suite` requested), once per commit.
 */
export function requestSuite(state: SimState, repo: SimRepo, headSha: string, senderId: number): void {
  if (state.checkSuites.has(`${repo.id}:${state.app.id}:${headSha}`)) return;
  state.emit({ event: "check_suite", action: "requested", repoId: repo.id, checkSuiteId: suiteId(state, repo, headSha, state.app.id), senderId });
}

/** A person asks for the App's checks of a commit again ("Re-run all checks"): `check_suite` rerequested. */
export function rerequestSuite(state: SimState, suite: number, userId: number): void {
  const found = suiteOf(state, suite);
  if (!found) throw new Error(`no check suite ${suite}`);
  state.emit({ event: "check_suite", action: "rerequested", repoId: found.repoId, checkSuiteId: suite, senderId: userId });
}

/** A check run of the App (or, for the simulated CI, of `appId`). */
export function createCheckRun(state: SimState, repo: SimRepo, input: CheckRunInput, senderId: number, appId = state.app.id): SimCheckRun {
  if (!input.head_sha) throw validationFailed([{ resource: "CheckRun", field: "head_sha", code: "missing_field" }]);
  const now = state.clock.now();
  const status = input.conclusion && !input.status ? "completed" : (input.status ?? "queued");
  const run: SimCheckRun = {
    ...state.newNode("CheckRun"),
    repoId: repo.id,
    headSha: input.head_sha,
    name: input.name ?? "",
    externalId: input.external_id ?? null,
    detailsUrl: input.details_url ?? null,
    status,
    conclusion: input.conclusion ?? null,
    startedAt: time(input.started_at, now),
    completedAt: status === "completed" ? time(input.completed_at, now) : null,
    output: { title: input.output?.title ?? null, summary: input.output?.summary ?? null, text: input.output?.text ?? null },
    actions: input.actions ?? [],
    checkSuiteId: suiteId(state, repo, input.head_sha, appId),
    appId,
  };
  validateCheckRun(run);
  const sameName = [...state.checkRuns.values()].filter((r) => r.checkSuiteId === run.checkSuiteId && r.name === run.name);
  if (sameName.length >= 1000) throw new GitHubApiError(403, "You have exceeded the limit of 1000 check runs of one name in a check suite.");
  state.checkRuns.set(run.id, run);
  state.emit({ event: "check_run", action: "created", repoId: repo.id, checkRunId: run.id, senderId });
  return run;
}

export function updateCheckRun(state: SimState, repo: SimRepo, run: SimCheckRun, input: CheckRunInput, senderId: number): SimCheckRun {
  const now = state.clock.now();
  const wasCompleted = run.status === "completed";
  const status = input.status ?? (input.conclusion ? "completed" : run.status);
  const next: SimCheckRun = {
    ...run,
    name: input.name ?? run.name,
    externalId: input.external_id !== undefined ? input.external_id : run.externalId,
    detailsUrl: input.details_url !== undefined ? input.details_url : run.detailsUrl,
    status,
    conclusion: input.conclusion !== undefined ? input.conclusion : status === "completed" ? run.conclusion : null,
    startedAt: time(input.started_at, run.startedAt),
    completedAt: status === "completed" ? time(input.completed_at, run.completedAt ?? now) : null,
    output: input.output
      ? { title: input.output.title ?? null, summary: input.output.summary ?? null, text: input.output.text ?? null }
      : run.output,
    actions: input.actions ?? run.actions,
  };
  validateCheckRun(next);
  Object.assign(run, next);
  if (!wasCompleted && run.status === "completed") {
    state.emit({ event: "check_run", action: "completed", repoId: repo.id, checkRunId: run.id, senderId });
  }
  return run;
}

export function checkRun(state: SimState, repo: SimRepo, id: number): SimCheckRun {
  const run = state.checkRuns.get(id);
  if (!run || run.repoId !== repo.id) throw new GitHubApiError(404, "Not Found");
  return run;
}

/** A person clicks one of the check run's action buttons. */
export function requestAction(state: SimState, run: SimCheckRun, identifier: string, userId: number): void {
  if (!run.actions.some((a) => a.identifier === identifier)) {
    throw new Error(`check run ${run.id} has no action "${identifier}" (it has: ${run.actions.map((a) => a.identifier).join(", ") || "none"})`);
  }
  state.emit({ event: "check_run", action: "requested_action", repoId: run.repoId, checkRunId: run.id, senderId: userId, identifier });
}

/** A person clicks "Re-run" on the check run. */
export function rerequest(state: SimState, run: SimCheckRun, userId: number): void {
  state.emit({ event: "check_run", action: "rerequested", repoId: run.repoId, checkRunId: run.id, senderId: userId });
}
