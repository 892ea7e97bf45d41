/**
 * The simulator's records. Times are epoch milliseconds of the simulator clock; the
 * renderers turn them into GitHub's ISO strings (second resolution, like GitHub).
 */
/** A person's role on a repository, GitHub's five (role_name) and none. */
export type RepoPermission = "admin" | "maintain" | "write" | "triage" | "read" | "none";
export const REPO_PERMISSIONS: readonly RepoPermission[] = ["none", "read", "triage", "write", "maintain", "admin"];
/** The roles an organization's custom repository role may inherit. */
export const CUSTOM_ROLE_BASES: readonly RepoPermission[] = ["read", "triage", "write", "maintain"];
/** Roles weakest first: a role may do what every weaker one may. */
export const ROLE_RANK: Record<RepoPermission, number> = { none: 0, read: 1, triage: 2, write: 3, maintain: 4, admin: 5 };
export type AccessLevel = "read" | "write";
/** Permission names of a GitHub App installation (`issues`, `pull_requests`, `contents`…). */
export type AppPermissions = Record<string, AccessLevel>;

export interface SimAccount {
  id: number;
  nodeId: string;
  login: string;
  type: "User" | "Organization" | "Bot";
  name: string | null;
  email: string | null;
  createdAt: number;
}

export interface SimLabel {
  id: number;
  nodeId: string;
  name: string;
  color: string;
  description: string | null;
  default: boolean;
}

export interface SimRepo {
  id: number;
  nodeId: string;
  ownerId: number;
  name: string;
  description: string | null;
  defaultBranch: string;
  private: boolean;
  createdAt: number;
  updatedAt: number;
  pushedAt: number;
  /** Next issue / pull request number: both share the sequence. */
  nextNumber: number;
  /** Keyed by lower-cased name: label names are unique case-insensitively. */
  labels: Map<string, SimLabel>;
  /** Per-user permission on this repository (user id → permission). On a public repository anyone else reads. */
  collaborators: Map<number, RepoPermission>;
  /**
   * An organization's custom repository role, by collaborator (user id → the role's name): the
   * collaborator's access is its base role, in `collaborators`; GitHub names the role in REST's
   * `role_name` and GraphQL's `roleName`.
   */
  customRoles: Map<number, string>;
  /** Path of the bare git repository on disk. */
  gitDir: string;
}

export type MergeableComputation = "pending" | "computed";

export interface SimPull {
  id: number;
  nodeId: string;
  headRef: string;
  headSha: string;
  baseRef: string;
  baseSha: string;
  draft: boolean;
  merged: boolean;
  mergedAt: number | null;
  mergedById: number | null;
  mergeCommitSha: string | null;
  /** null while "GitHub" computes it; true/false afterwards. */
  mergeable: boolean | null;
  /** Set by the control API: the value the next computation yields instead of git's answer. */
  mergeableOverride: boolean | null;
  maintainerCanModify: boolean;
}

export interface SimIssue {
  id: number;
  nodeId: string;
  repoId: number;
  number: number;
  title: string;
  body: string | null;
  state: "open" | "closed";
  stateReason: "completed" | "reopened" | "not_planned" | null;
  authorId: number;
  /** Label keys (lower-cased names) in the order they were added. */
  labels: string[];
  locked: boolean;
  createdAt: number;
  updatedAt: number;
  closedAt: number | null;
  closedById: number | null;
  /** Who last edited the body, and when (GraphQL `editor`, `lastEditedAt`); absent: never edited. */
  bodyEdit?: { editorId: number; at: number };
  /** Present when the item is a pull request. */
  pull: SimPull | null;
}

/** One entry of an Item's events timeline (GET /repos/{o}/{r}/issues/{n}/events). */
export interface SimIssueEvent {
  id: number;
  nodeId: string;
  repoId: number;
  number: number;
  event: "labeled" | "unlabeled" | "closed" | "reopened" | "renamed" | "ready_for_review" | "convert_to_draft";
  actorId: number;
  createdAt: number;
  label?: { name: string; color: string };
  rename?: { from: string; to: string };
}

export interface SimComment {
  id: number;
  nodeId: string;
  repoId: number;
  issueNumber: number;
  body: string;
  authorId: number;
  createdAt: number;
  updatedAt: number;
}

export type CheckStatus = "queued" | "in_progress" | "completed" | "waiting" | "requested" | "pending";
export type CheckConclusion =
  | "success"
  | "failure"
  | "neutral"
  | "cancelled"
  | "skipped"
  | "timed_out"
  | "action_required";

export interface SimCheckAction {
  label: string;
  description: string;
  identifier: string;
}

export interface SimCheckRun {
  id: number;
  nodeId: string;
  repoId: number;
  headSha: string;
  name: string;
  externalId: string | null;
  detailsUrl: string | null;
  status: CheckStatus;
  conclusion: CheckConclusion | null;
  startedAt: number;
  completedAt: number | null;
  output: { title: string | null; summary: string | null; text: string | null };
  actions: SimCheckAction[];
  checkSuiteId: number;
  appId: number;
}

export interface SimInstallation {
  id: number;
  accountId: number;
  repositorySelection: "all" | "selected";
  /** Used when repositorySelection is "selected". */
  repoIds: Set<number>;
  permissions: AppPermissions;
  events: string[];
  createdAt: number;
  updatedAt: number;
  suspendedAt: number | null;
  suspendedById: number | null;
}

export interface SimApp {
  id: number;
  nodeId: string;
  slug: string;
  name: string;
  description: string;
  ownerId: number;
  botUserId: number;
  privateKey: string;
  publicKey: string;
  webhookSecret: string;
  clientId: string;
  clientSecret: string;
  webhookUrl: string | null;
  /** The OAuth callback; from the manifest's callback_urls / redirect_url when one was used. */
  callbackUrl: string | null;
  permissions: AppPermissions;
  events: string[];
  createdAt: number;
  updatedAt: number;
}

export interface SimToken {
  token: string;
  kind: "installation" | "user";
  installationId: number | null;
  userId: number | null;
  createdAt: number;
  expiresAt: number | null;
  /** Repository ids the token is narrowed to; null = every repository of the installation. */
  repoIds: Set<number> | null;
  /** Installation tokens only: the granted permissions. */
  permissions: AppPermissions;
}

/** GitHub's reaction contents. */
export const REACTION_CONTENTS = ["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"] as const;
export type ReactionContent = (typeof REACTION_CONTENTS)[number];

export interface SimReaction {
  id: number;
  nodeId: string;
  /** the issue or review comment reacted to (their ids never collide) */
  commentId: number;
  userId: number;
  content: ReactionContent;
  createdAt: number;
}

export type CommitState = "error" | "failure" | "pending" | "success";

export interface SimCommitStatus {
  id: number;
  nodeId: string;
  repoId: number;
  sha: string;
  state: CommitState;
  context: string;
  description: string | null;
  targetUrl: string | null;
  creatorId: number;
  createdAt: number;
  updatedAt: number;
}

/** A pull request review, as submitted (the simulator has no pending reviews). */
export interface SimReview {
  id: number;
  nodeId: string;
  repoId: number;
  pullNumber: number;
  body: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED";
  authorId: number;
  commitId: string;
  submittedAt: number;
}

/** A comment on a line of a pull request's diff, on its own or as part of a review. */
export interface SimReviewComment {
  id: number;
  nodeId: string;
  repoId: number;
  pullNumber: number;
  reviewId: number | null;
  /** The thread's first comment, for a reply (review-threads.ts); null for a comment that starts a thread. */
  inReplyTo: number | null;
  body: string;
  path: string;
  line: number;
  authorId: number;
  commitId: string;
  createdAt: number;
  updatedAt: number;
}
