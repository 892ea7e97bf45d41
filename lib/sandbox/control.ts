import type { components } from "@octokit/openapi-types";
import { isoSeconds } from "./sim-clock";
import { branchPushed } from "./branch-pushed";
import type { CounterSnapshot } from "./counters";
import type { SimCore, UnknownRequest } from "./core";
import type { FailNextInput } from "./faults";
import type { SecondaryLimitInput } from "./secondary-limit";
import { CUSTOM_ROLE_BASES, REPO_PERMISSIONS, type AppPermissions, type RepoPermission, type SimAccount, type SimInstallation, type SimIssue, type SimRepo } from "./model";
import { renderInstallation } from "./render/app";
import { renderComment, renderIssue } from "./render/issue";
import { renderLabel } from "./render/label";
import { renderPull } from "./render/pull";
import { requestAction, rerequest, rerequestSuite } from "./state/checks";
import { createComment, createIssue, editComment, editIssue } from "./state/issues";
import { reactionsOf } from "./state/reactions";
import { submitReview } from "./state/reviews";
import type { CommitState } from "./model";
import { createCommitStatus, finishCiCheck, type CiCheckInput } from "./state/ci";
import { replyToReviewComment, setThreadResolved } from "./state/review-threads";
import {
  addInstallationRepo,
  createInstallation,
  deleteInstallation,
  removeInstallationRepo,
  setSuspended,
} from "./state/installations";
import { addLabels, createLabel, deleteLabel, editLabel, removeLabel } from "./state/labels";
import { createPull, forceMergeable, markMerged, requirePull, setDraft } from "./state/pulls";
import { mintInstallationToken, mintUserToken } from "./state/tokens";
import { deleteRepo, renameRepo, transferRepo } from "./state/repositories";
import type { Delivery } from "./webhooks";

type Schemas = components["schemas"];

/** Who acts: a login; omitted = the sandbox's default user. */
export interface As {
  login?: string;
}

export interface ItemRef extends As {
  /** "owner/name" */
  repo: string;
  number: number;
}

/**
 * Acting on the simulated GitHub as a person (or an admin of it) would: every change goes
 * through the same state functions as the REST API and emits the same webhooks. Each method
 * takes one plain object, so the HTTP control API (`POST /_sim/control/<method>`) maps 1:1.
 */
export class SimControl {
  constructor(protected readonly core: SimCore) {}

  private repo(fullName: string): SimRepo {
    return this.core.state.repoByFullName(fullName);
  }

  private actor(as: As): SimAccount {
    const login = as.login ?? this.core.state.defaultOAuthLogin;
    if (!login) throw new Error("say who acts: pass `login` (no default sandbox user is set)");
    const account = this.core.state.findAccount(login);
    if (!account) throw new Error(`no user ${login} in the simulator`);
    return account;
  }

  private item(ref: ItemRef): { repo: SimRepo; item: SimIssue } {
    const repo = this.repo(ref.repo);
    const item = this.core.state.findItem(repo, Number(ref.number));
    if (!item) throw new Error(`no issue or pull request #${ref.number} in ${ref.repo}`);
    return { repo, item };
  }

  private installationOf(input: { installationId?: number; account?: string }): SimInstallation {
    const { state } = this.core;
    if (input.installationId !== undefined) return state.installation(Number(input.installationId));
    const account = input.account ? state.findAccount(input.account) : undefined;
    const found = account && [...state.installations.values()].find((i) => i.accountId === account.id);
    if (!found) throw new Error(`no installation for ${input.account ?? "(no account given)"}`);
    return found;
  }

  // ----- accounts and repositories -----

  createOrg(input: { login: string; name?: string }): { id: number; login: string } {
    const org = this.core.state.createAccount(input.login, "Organization", input.name ? { name: input.name } : {});
    return { id: org.id, login: org.login };
  }

  createUser(input: { login: string; name?: string; email?: string }): { id: number; login: string } {
    const user = this.core.state.createAccount(input.login, "User", {
      name: input.name ?? input.login,
      email: input.email ?? `${input.login}@users.noreply.sim`,
    });
    return { id: user.id, login: user.login };
  }

  /** A repository with a first commit on main (README.md plus `files`). */
  async createRepo(input: { owner: string; name: string; files?: Record<string, string>; description?: string; private?: boolean }): Promise<{ id: number; fullName: string; cloneUrl: string }> {
    const owner = this.core.state.findAccount(input.owner);
    if (!owner) throw new Error(`no account ${input.owner}`);
    const repo = await this.core.createRepository(owner, input.name, input.files ?? {}, input.description ?? null);
    if (input.private === false) repo.private = false;
    const fullName = this.core.state.fullName(repo);
    return { id: repo.id, fullName, cloneUrl: `${this.core.baseUrl}/${fullName}.git` };
  }

  /** The repository's owner renames it: its id stays, the old name is free for anyone to take (a `repository.renamed` event). */
  renameRepo(input: As & { repo: string; to: string }): { id: number; fullName: string } {
    const repo = this.repo(input.repo);
    renameRepo(this.core.state, repo, input.to, this.actor(input).id);
    return { id: repo.id, fullName: this.core.state.fullName(repo) };
  }

  /** The repository moves to another account, keeping its id and name (a `repository.transferred` event, to the new owner's installation). */
  transferRepo(input: As & { repo: string; to: string }): { id: number; fullName: string } {
    const repo = this.repo(input.repo);
    const to = this.core.state.findAccount(input.to);
    if (!to) throw new Error(`no account ${input.to}`);
    transferRepo(this.core.state, repo, to, this.actor(input).id);
    return { id: repo.id, fullName: this.core.state.fullName(repo) };
  }

  /** The repository is deleted (a `repository.deleted` event); its name is free. */
  deleteRepo(input: As & { repo: string }): void {
    deleteRepo(this.core.state, this.repo(input.repo), this.actor(input).id);
  }

  setUserPermission(input: { repo: string; login: string; permission: RepoPermission }): void {
    if (!REPO_PERMISSIONS.includes(input.permission)) throw new Error(`permission must be one of ${REPO_PERMISSIONS.join(", ")}`);
    const user = this.core.state.findAccount(input.login);
    if (!user) throw new Error(`no user ${input.login}`);
    this.core.state.setPermission(this.repo(input.repo), user.id, input.permission);
  }

  /**
   * An organization's custom repository role (named, inheriting read, triage, write or
   * maintain): the person gets the base role's access, and GitHub names the custom role.
   */
  setCustomRole(input: { repo: string; login: string; role: string; base: RepoPermission }): void {
    const repo = this.repo(input.repo);
    if (this.core.state.account(repo.ownerId).type !== "Organization") throw new Error("custom repository roles belong to an organization's repositories");
    if (!CUSTOM_ROLE_BASES.includes(input.base)) throw new Error(`a custom role's base must be one of ${CUSTOM_ROLE_BASES.join(", ")}`);
    if ((REPO_PERMISSIONS as readonly string[]).includes(input.role.toLowerCase())) throw new Error(`${input.role} is one of GitHub's own roles`);
    const user = this.core.state.findAccount(input.login);
    if (!user) throw new Error(`no user ${input.login}`);
    this.core.state.setCustomRole(repo, user.id, input.role, input.base);
  }

  /** A user renames their account: the id stays, the old login is free for anyone to take. */
  renameUser(input: { login: string; to: string }): { id: number; login: string } {
    const user = this.core.state.findAccount(input.login);
    if (!user) throw new Error(`no user ${input.login}`);
    if (this.core.state.findAccount(input.to)) throw new Error(`the login ${input.to} is taken`);
    user.login = input.to;
    return { id: user.id, login: user.login };
  }

  /** The user /login/oauth/authorize signs in when the request names nobody. */
  setDefaultUser(input: { login: string | null }): void {
    if (input.login !== null && !this.core.state.findAccount(input.login)) throw new Error(`no user ${input.login}`);
    this.core.state.defaultOAuthLogin = input.login;
  }

  // ----- issues, labels, comments -----

  createIssue(input: As & { repo: string; title: string; body?: string; labels?: string[] }): Schemas["issue"] {
    const repo = this.repo(input.repo);
    const item = createIssue(this.core.state, repo, { title: input.title, body: input.body ?? null, labels: input.labels ?? [] }, this.actor(input).id);
    return renderIssue(this.core.render, repo, item);
  }

  editIssue(input: ItemRef & { title?: string; body?: string | null; state?: "open" | "closed" }): Schemas["issue"] {
    const { repo, item } = this.item(input);
    const edit = {
      ...(input.title !== undefined ? { title: input.title } : {}),
      ...(input.body !== undefined ? { body: input.body } : {}),
      ...(input.state !== undefined ? { state: input.state } : {}),
    };
    editIssue(this.core.state, repo, item, edit, this.actor(input).id);
    return renderIssue(this.core.render, repo, item);
  }

  createLabel(input: As & { repo: string; name: string; color?: string; description?: string }): Schemas["label"] {
    const repo = this.repo(input.repo);
    const label = createLabel(
      this.core.state,
      repo,
      { name: input.name, ...(input.color ? { color: input.color } : {}), description: input.description ?? null },
      this.actor(input).id,
    );
    return renderLabel(this.core.render, repo, label);
  }

  /** Renames or recolours a repository's label: `label` edited. */
  editLabel(input: As & { repo: string; name: string; newName?: string; color?: string; description?: string | null }): Schemas["label"] {
    const repo = this.repo(input.repo);
    const edit = {
      ...(input.newName !== undefined ? { new_name: input.newName } : {}),
      ...(input.color !== undefined ? { color: input.color } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
    };
    return renderLabel(this.core.render, repo, editLabel(this.core.state, repo, input.name, edit, this.actor(input).id));
  }

  /** Deletes a repository's label (from its Items too): `label` deleted. */
  deleteLabel(input: As & { repo: string; name: string }): void {
    deleteLabel(this.core.state, this.repo(input.repo), input.name, this.actor(input).id);
  }

  addLabels(input: ItemRef & { labels: string[] }): Schemas["label"][] {
    const { repo, item } = this.item(input);
    return addLabels(this.core.state, repo, item, input.labels, this.actor(input).id).map((l) => renderLabel(this.core.render, repo, l));
  }

  removeLabel(input: ItemRef & { label: string }): Schemas["label"][] {
    const { repo, item } = this.item(input);
    return removeLabel(this.core.state, repo, item, input.label, this.actor(input).id).map((l) => renderLabel(this.core.render, repo, l));
  }

  comment(input: ItemRef & { body: string }): Schemas["issue-comment"] {
    const { repo, item } = this.item(input);
    return renderComment(this.core.render, repo, createComment(this.core.state, repo, item, input.body, this.actor(input).id));
  }

  /** Edits a comment (its author, or a writer): GitHub sends issue_comment edited. */
  editComment(input: As & { repo: string; id: number; body: string }): Schemas["issue-comment"] {
    const repo = this.repo(input.repo);
    const comment = this.core.state.comments.get(input.id);
    if (!comment || comment.repoId !== repo.id) throw new Error(`no comment ${input.id} in ${input.repo}`);
    return renderComment(this.core.render, repo, editComment(this.core.state, repo, comment, input.body, this.actor(input).id));
  }

  /** Submits a review of a pull request (APPROVE, REQUEST_CHANGES, COMMENT), with line comments. */
  review(input: ItemRef & { event: "APPROVE" | "REQUEST_CHANGES" | "COMMENT"; body?: string; comments?: { path: string; line: number; body: string }[] }): { id: number; comments: number[] } {
    const { repo, item } = this.item(input);
    const { review, comments } = submitReview(this.core.state, repo, item, input, this.actor(input).id);
    return { id: review.id, comments: comments.map((c) => c.id) };
  }

  /** A reply in the review thread of `commentId`: pull_request_review_comment created. */
  replyToReviewComment(input: ItemRef & { commentId: number; body: string }): { id: number } {
    const { repo, item } = this.item(input);
    return { id: replyToReviewComment(this.core.state, repo, item, Number(input.commentId), input.body, this.actor(input).id).id };
  }

  /** A person resolves (default) or unresolves the review thread of `commentId`: pull_request_review_thread. */
  resolveReviewThread(input: ItemRef & { commentId: number; resolved?: boolean }): void {
    const { repo, item } = this.item(input);
    setThreadResolved(this.core.state, repo, item, Number(input.commentId), input.resolved ?? true, this.actor(input).id);
  }

  /**
   * The simulated CI (GitHub Actions) finished a job on a commit — the pull request's head when
   * `number` is given: a completed check run, check_run and check_suite completed.
   */
  finishCiCheck(input: Omit<CiCheckInput, "sha"> & { repo: string; sha?: string; number?: number }): { id: number; sha: string } {
    const repo = this.repo(input.repo);
    const sha = input.sha ?? (input.number !== undefined ? requirePull(this.item({ repo: input.repo, number: input.number }).item).headSha : undefined);
    if (!sha) throw new Error("say which commit: pass `sha`, or the pull request's `number`");
    const run = finishCiCheck(this.core.state, repo, { ...input, sha });
    return { id: run.id, sha };
  }

  /** A commit status, as a CI service writes it (`POST /repos/{o}/{r}/statuses/{sha}`): the status webhook. */
  commitStatus(input: As & { repo: string; sha: string; state: CommitState; context?: string; description?: string; targetUrl?: string }): { id: number } {
    const repo = this.repo(input.repo);
    const status = createCommitStatus(this.core.state, repo, input.sha, { state: input.state, context: input.context, description: input.description, target_url: input.targetUrl }, this.actor(input).id);
    return { id: status.id };
  }

  /** The reactions on a comment, as `login:content`, oldest first. */
  reactions(input: { id: number }): string[] {
    return reactionsOf(this.core.state, { id: input.id }).map((r) => `${this.core.state.account(r.userId).login}:${r.content}`);
  }

  // ----- git and pull requests -----

  /**
   * Commits files onto a branch of the bare repository (creating it from `from`, default the
   * default branch). Open pull requests with that head get `synchronize`.
   */
  async pushCommit(input: As & { repo: string; branch: string; files?: Record<string, string>; message?: string; from?: string }): Promise<{ before: string; after: string }> {
    const repo = this.repo(input.repo);
    const actor = this.actor(input);
    const files = input.files ?? { [`changes/${input.branch.replace(/\//g, "-")}-${Date.now()}.md`]: `A change on ${input.branch}\n` };
    const message = input.message ?? `Update ${Object.keys(files).join(", ")}`;
    const result = await this.core.git.commitFiles(repo.gitDir, {
      branch: input.branch,
      files,
      message,
      author: { name: actor.login, email: actor.email ?? `${actor.login}@users.noreply.sim` },
      from: input.from ?? repo.defaultBranch,
    });
    await branchPushed(this.core, repo, input.branch, result.before, result.after, actor.id);
    return { before: result.before, after: result.after };
  }

  /** Opens a pull request; a missing head branch is first created with one commit. */
  async openPullRequest(input: As & { repo: string; head: string; base?: string; title: string; body?: string; draft?: boolean; labels?: string[] }): Promise<Schemas["pull-request"]> {
    const repo = this.repo(input.repo);
    const base = input.base ?? repo.defaultBranch;
    let headSha = await this.core.git.branchSha(repo.gitDir, input.head);
    if (!headSha) headSha = (await this.pushCommit({ ...input, branch: input.head, from: base })).after;
    const baseSha = await this.core.git.branchSha(repo.gitDir, base);
    if (!baseSha) throw new Error(`no branch ${base} in ${input.repo}`);
    const item = createPull(
      this.core.state,
      repo,
      { title: input.title, body: input.body ?? null, head: input.head, headSha, base, baseSha, draft: input.draft ?? false, labels: input.labels ?? [] },
      this.actor(input).id,
    );
    return renderPull(this.core.render, repo, item);
  }

  setDraft(input: ItemRef & { draft: boolean }): void {
    const { repo, item } = this.item(input);
    setDraft(this.core.state, repo, item, Boolean(input.draft), this.actor(input).id);
  }

  /** `mergeable` as GitHub would compute it next (null = computing). No webhook, no updated_at. */
  setMergeable(input: ItemRef & { mergeable: boolean | null }): void {
    forceMergeable(this.item(input).item, input.mergeable);
  }

  /** Waits for the background mergeability computation and returns the value. */
  async computeMergeable(input: ItemRef): Promise<boolean | null> {
    const { repo, item } = this.item(input);
    await this.core.computeMergeability(repo, item);
    return requirePull(item).mergeable;
  }

  async mergePullRequest(input: ItemRef): Promise<{ sha: string }> {
    const { repo, item } = this.item(input);
    const pull = requirePull(item);
    const actor = this.actor(input);
    const before = (await this.core.git.branchSha(repo.gitDir, pull.baseRef)) ?? "";
    const sha = await this.core.git.merge(repo.gitDir, {
      base: pull.baseRef,
      head: pull.headSha,
      message: `Merge pull request #${item.number} from ${pull.headRef}`,
      author: { name: actor.login, email: actor.email ?? `${actor.login}@users.noreply.sim` },
    });
    markMerged(this.core.state, repo, item, sha, actor.id);
    await branchPushed(this.core, repo, pull.baseRef, before, sha, actor.id);
    return { sha };
  }

  // ----- check runs -----

  /** A person clicks a check run's action button: `check_run.requested_action`. */
  clickCheckRunAction(input: As & { checkRunId: number; identifier: string }): void {
    const run = this.core.state.checkRuns.get(Number(input.checkRunId));
    if (!run) throw new Error(`no check run ${input.checkRunId}`);
    requestAction(this.core.state, run, input.identifier, this.actor(input).id);
  }

  /** A person clicks "Re-run": `check_run.rerequested`. */
  rerequestCheckRun(input: As & { checkRunId: number }): void {
    const run = this.core.state.checkRuns.get(Number(input.checkRunId));
    if (!run) throw new Error(`no check run ${input.checkRunId}`);
    rerequest(this.core.state, run, this.actor(input).id);
  }

  /** A person clicks "Re-run all checks" of the App's suite: `check_suite.rerequested`. */
  rerequestCheckSuite(input: As & { checkSuiteId: number }): void {
    rerequestSuite(this.core.state, Number(input.checkSuiteId), this.actor(input).id);
  }

  // ----- installations and tokens -----

  /** Installs the App on an account: on `repos` (names) or, when omitted, all of them. */
  createInstallation(input: As & { account: string; repos?: string[]; permissions?: AppPermissions; events?: string[] }): Schemas["installation"] {
    const { state } = this.core;
    const account = state.findAccount(input.account);
    if (!account) throw new Error(`no account ${input.account}`);
    const repos = input.repos?.map((name) => this.repo(name.includes("/") ? name : `${account.login}/${name}`));
    const installation = createInstallation(
      state,
      { account, ...(repos ? { repos } : {}), ...(input.permissions ? { permissions: input.permissions } : {}), ...(input.events ? { events: input.events } : {}) },
      this.actor(input).id,
    );
    return renderInstallation(this.core.render, installation);
  }

  addRepository(input: As & { installationId?: number; repo: string }): void {
    const repo = this.repo(input.repo);
    const installation = this.installationOf({ ...input, account: this.core.state.account(repo.ownerId).login });
    addInstallationRepo(this.core.state, installation, repo, this.actor(input).id);
  }

  removeRepository(input: As & { installationId?: number; repo: string }): void {
    const repo = this.repo(input.repo);
    const installation = this.installationOf({ ...input, account: this.core.state.account(repo.ownerId).login });
    removeInstallationRepo(this.core.state, installation, repo, this.actor(input).id);
  }

  suspendInstallation(input: As & { installationId?: number; account?: string }): void {
    setSuspended(this.core.state, this.installationOf(input), true, this.actor(input).id);
  }

  unsuspendInstallation(input: As & { installationId?: number; account?: string }): void {
    setSuspended(this.core.state, this.installationOf(input), false, this.actor(input).id);
  }

  deleteInstallation(input: As & { installationId?: number; account?: string }): void {
    deleteInstallation(this.core.state, this.installationOf(input), this.actor(input).id);
  }

  /** Mints an installation token directly (tests; Atelier goes through the REST API). */
  createInstallationToken(input: { installationId?: number; account?: string; repositories?: string[]; permissions?: AppPermissions }): { token: string; expiresAt: string } {
    const token = mintInstallationToken(this.core.state, this.installationOf(input), {
      ...(input.repositories ? { repositories: input.repositories } : {}),
      ...(input.permissions ? { permissions: input.permissions } : {}),
    });
    return { token: token.token, expiresAt: isoSeconds(token.expiresAt ?? 0) };
  }

  /** A user OAuth token, as if the user had signed in to the dashboard. */
  createUserToken(input: { login: string }): { token: string } {
    const user = this.core.state.findAccount(input.login);
    if (!user || user.type !== "User") throw new Error(`no user ${input.login}`);
    return { token: mintUserToken(this.core.state, user.id).token };
  }

  // ----- clock, faults, rate limits -----

  advanceClock(input: { ms: number }): { now: string } {
    return { now: isoSeconds(this.core.clock.advance(Number(input.ms))) };
  }

  setNow(input: { now: string | number }): { now: string } {
    const ms = typeof input.now === "number" ? input.now : Date.parse(input.now);
    if (Number.isNaN(ms)) throw new Error(`setNow wants an ISO time or epoch ms, got ${String(input.now)}`);
    return { now: isoSeconds(this.core.clock.set(ms)) };
  }

  now(): { now: string; epochMs: number } {
    const ms = this.core.clock.now();
    return { now: new Date(ms).toISOString(), epochMs: ms };
  }

  failNext(input: FailNextInput): void {
    this.core.faults.add(input);
  }

  clearFailures(): void {
    this.core.faults.clear();
  }

  /** Turns on (or off, perMinute null) GitHub's secondary limit on bursts of content-creating requests. */
  setSecondaryLimit(input: SecondaryLimitInput): void {
    this.core.secondaryLimit.configure(input);
  }

  /** Sets the hourly limit of a caller: "installation:<id>", "user:<login>", "app", "anonymous". */
  setRateLimit(input: { caller: string; limit: number }): void {
    this.core.rateLimits.setLimit(input.caller, Number(input.limit));
  }

  // ----- webhooks -----

  setWebhookUrl(input: { url: string | null }): void {
    this.core.state.app.webhookUrl = input.url;
  }

  dropNextWebhook(input: { count?: number } = {}): void {
    this.core.webhooks.drop(input.count ?? 1);
  }

  redeliver(input: { id: string }): Delivery {
    return this.core.webhooks.redeliver(input.id);
  }

  /** How many deliveries may be in flight at once; 2 or more makes related events overlap. */
  setWebhookConcurrency(input: { count: number }): { maxInFlight: number } {
    this.core.webhooks.setConcurrency(Number(input.count));
    return { maxInFlight: this.core.webhooks.maxInFlight };
  }

  pauseWebhooks(): void {
    this.core.webhooks.pause();
  }

  resumeWebhooks(): void {
    this.core.webhooks.resume();
  }

  deliveries(input: { event?: string; action?: string } = {}): Delivery[] {
    return this.core.webhooks.log.filter((d) => (!input.event || d.event === input.event) && (!input.action || d.action === input.action));
  }

  /** Resolves once every queued webhook was sent (or delivery is paused). */
  waitForWebhooks(): Promise<void> {
    return this.core.webhooks.idle();
  }

  // ----- counters -----

  get counters(): CounterSnapshot {
    return this.core.counters.snapshot();
  }

  resetCounters(): void {
    this.core.counters.reset();
  }

  get unknownRequests(): UnknownRequest[] {
    return this.core.unknownRequests;
  }
}

/** The methods `POST /_sim/control/<name>` may call. */
export const CONTROL_METHODS = [
  "createOrg",
  "createUser",
  "createRepo",
  "setUserPermission",
  "setCustomRole",
  "setDefaultUser",
  "createIssue",
  "editIssue",
  "createLabel",
  "editLabel",
  "deleteLabel",
  "addLabels",
  "removeLabel",
  "comment",
  "editComment",
  "reactions",
  "review",
  "replyToReviewComment",
  "resolveReviewThread",
  "finishCiCheck",
  "commitStatus",
  "pushCommit",
  "openPullRequest",
  "setDraft",
  "setMergeable",
  "computeMergeable",
  "mergePullRequest",
  "clickCheckRunAction",
  "rerequestCheckRun",
  "rerequestCheckSuite",
  "createInstallation",
  "addRepository",
  "removeRepository",
  "renameRepo",
  "transferRepo",
  "deleteRepo",
  "suspendInstallation",
  "unsuspendInstallation",
  "deleteInstallation",
  "createInstallationToken",
  "createUserToken",
  "advanceClock",
  "renameUser",
  "setNow",
  "now",
  "failNext",
  "clearFailures",
  "setSecondaryLimit",
  "setRateLimit",
  "setWebhookUrl",
  "dropNextWebhook",
  "redeliver",
  "setWebhookConcurrency",
  "pauseWebhooks",
  "resumeWebhooks",
  "deliveries",
  "waitForWebhooks",
  "resetCounters",
] as const satisfies ReadonlyArray<keyof SimControl>;

export type ControlMethod = (typeof CONTROL_METHODS)[number];
