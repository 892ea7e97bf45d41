import type { GraphqlActor } from "./graphql-login";

/**
 * What people and CI said on a pull request: its reviews, its review threads and the checks of
 * its head commit, as the Projection keeps them (and hashes them) and as `item.reviews`,
 * `item.review_threads` and `item.checks` show them. Read in the Item's own GraphQL selection,
 * so a poll or a Hint costs no call more. The App's own check runs (a Run's status) are left
 * out: they change with every Run and say nothing about the code.
 */

export interface ReviewFacts {
  author: string | null;
  /** APPROVED, CHANGES_REQUESTED, COMMENTED or DISMISSED */
  state: string;
  body: string;
}

export interface ReviewThreadFacts {
  path: string;
  /** null when the line is gone from the diff (an outdated thread) */
  line: number | null;
  resolved: boolean;
  outdated: boolean;
  comments: { author: string | null; body: string }[];
}

export interface CheckFacts {
  name: string;
  /** a completed check run's conclusion, or a commit status's state, lower-cased (failure, success, error…) */
  conclusion: string;
  title: string | null;
  summary: string | null;
}

/** The feedback of one pull request; each list is absent when empty, so a quiet pull request hashes as before. */
export interface PullFeedback {
  reviews?: ReviewFacts[];
  reviewThreads?: ReviewThreadFacts[];
  checks?: CheckFacts[];
}

/** Reviews, threads and checks kept per pull request (GitHub's first/last are at most 100). */
export const FEEDBACK_LIMITS = { reviews: 50, threads: 50, threadComments: 20, checkSuites: 20, checkRuns: 50 } as const;

/**
 * The pull request's fields that hold its feedback. GitHub refuses a part of them to an
 * installation without the permission (a commit's `status` wants `statuses: read`): the
 * pull request is then read without that part, never failed for it.
 */
export const FEEDBACK_FIELDS: ReadonlySet<string> = new Set(["reviews", "reviewThreads", "commits", "headRef", "reviewDecision"]);

/**
 * The feedback's summary without a nested connection: the review decision and the head
 * commit's check rollup (every App's check runs and the commit statuses, worst first). The
 * change probe reads it for every open pull request at no cost (lib/github/repository-probe.ts),
 * and an Item read reads it too, so both give one pull request the same mark.
 */
export const PULL_FEEDBACK_MARK_FIELDS = "reviewDecision headRef { target { ... on Commit { statusCheckRollup { state } } } }";

/** The summary PULL_FEEDBACK_MARK_FIELDS selects. */
export interface FeedbackMarkNode {
  reviewDecision?: string | null;
  headRef?: { target?: { statusCheckRollup?: { state?: string | null } | null } | null } | null;
}

/** The summary as one string: it changes when a check or status of the head changes its rollup, or a review the decision. */
export const feedbackMark = (node: FeedbackMarkNode): string => `${node.headRef?.target?.statusCheckRollup?.state ?? ""}|${node.reviewDecision ?? ""}`;

/**
 * A pull request's review threads as the probe asks them: only whether each is resolved. GitHub
 * touches neither the pull request's `updatedAt` nor its review decision when a thread is
 * resolved or unresolved. A connection: one request of the probe's cost per pull request.
 */
export const PULL_THREADS_MARK_FIELDS = `reviewThreads(first: ${FEEDBACK_LIMITS.threads}) { nodes { isResolved } }`;

/** The selection PULL_THREADS_MARK_FIELDS (or the Item's own read) gives. */
export interface ThreadsMarkNode {
  reviewThreads?: { nodes?: ({ isResolved: boolean } | null)[] | null } | null;
}

/** The threads' resolution, in order, as one string ("" when it has none): resolving or unresolving one changes it. */
export const threadsMark = (node: ThreadsMarkNode): string => (node.reviewThreads?.nodes ?? []).map((t) => (t?.isResolved ? "R" : "U")).join("");

/** GraphQL selection of a pull request's feedback; `feedbackFromGraphql` reads exactly this. */
export const PULL_REQUEST_FEEDBACK_FIELDS = `
  reviews(last: ${FEEDBACK_LIMITS.reviews}) { nodes { databaseId submittedAt author { __typename login } state body } }
  reviewThreads(first: ${FEEDBACK_LIMITS.threads}) { nodes { isResolved isOutdated path line
    comments(first: ${FEEDBACK_LIMITS.threadComments}) { nodes { author { __typename login } body } } } }
  commits(last: 1) { nodes { commit {
    checkSuites(first: ${FEEDBACK_LIMITS.checkSuites}) { nodes { app { slug }
      checkRuns(first: ${FEEDBACK_LIMITS.checkRuns}) { nodes { name status conclusion title summary } } } }
    status { contexts { context state description } } } } }
  ${PULL_FEEDBACK_MARK_FIELDS}
`;

type Nodes<T> = { nodes?: (T | null)[] | null } | null | undefined;

/** The feedback part of a PullRequest node, as GitHub returns it for the selection above. */
export interface GraphqlFeedbackNode extends FeedbackMarkNode {
  reviews?: Nodes<{ databaseId?: number | null; submittedAt?: string | null; author?: GraphqlActor | null; state: string; body?: string | null }>;
  reviewThreads?: Nodes<{
    isResolved: boolean;
    isOutdated?: boolean | null;
    path: string;
    line?: number | null;
    comments?: Nodes<{ author?: GraphqlActor | null; body?: string | null }>;
  }>;
  commits?: Nodes<{
    commit?: {
      checkSuites?: Nodes<{
        app?: { slug?: string | null } | null;
        checkRuns?: Nodes<{ name: string; status: string; conclusion?: string | null; title?: string | null; summary?: string | null }>;
      }>;
      status?: { contexts?: ({ context: string; state: string; description?: string | null } | null)[] | null } | null;
    } | null;
  }>;
}

const present = <T>(list: Nodes<T>): T[] => (list?.nodes ?? []).filter((n): n is T => n != null);

/** The reviews, threads and checks of a PullRequest node; `ownApp` is the App's slug, whose check runs are left out. */
export function feedbackFromGraphql(node: GraphqlFeedbackNode, ownApp: string | null, login: (actor: GraphqlActor | null | undefined) => string | null): PullFeedback {
  const reviews = present(node.reviews)
    .filter((r) => r.state !== "PENDING")
    .map((r) => ({ author: login(r.author), state: r.state, body: r.body ?? "" }));
  const reviewThreads = present(node.reviewThreads).map((t) => ({
    path: t.path,
    line: t.line ?? null,
    resolved: t.isResolved,
    outdated: t.isOutdated === true,
    comments: present(t.comments).map((c) => ({ author: login(c.author), body: c.body ?? "" })),
  }));
  const commit = present(node.commits)[0]?.commit;
  const latest = new Map<string, CheckFacts>();
  for (const suite of present(commit?.checkSuites)) {
    if (ownApp !== null && suite.app?.slug?.toLowerCase() === ownApp.toLowerCase()) continue;
    for (const run of present(suite.checkRuns)) {
      if (run.status !== "COMPLETED" || !run.conclusion) continue;
      latest.set(run.name, { name: run.name, conclusion: run.conclusion.toLowerCase(), title: run.title ?? null, summary: run.summary ?? null });
    }
  }
  for (const status of (commit?.status?.contexts ?? []).filter((c) => c != null)) {
    if (status.state === "PENDING" || status.state === "EXPECTED") continue;
    latest.set(status.context, { name: status.context, conclusion: status.state.toLowerCase(), title: status.description ?? null, summary: null });
  }
  const checks = [...latest.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    ...(reviews.length ? { reviews } : {}),
    ...(reviewThreads.length ? { reviewThreads } : {}),
    ...(checks.length ? { checks } : {}),
  };
}

/** A review as a poll finds it among a pull request's (the comments Loops judge those submitted since the watermark). */
export interface SubmittedReview {
  id: number;
  submittedAt: string;
  body: string;
}

/** The submitted reviews of a PullRequest node read with PULL_REQUEST_FEEDBACK_FIELDS. */
export const submittedReviews = (node: GraphqlFeedbackNode): SubmittedReview[] =>
  present(node.reviews).flatMap((r) => (r.databaseId && r.submittedAt && r.state !== "PENDING" ? [{ id: r.databaseId, submittedAt: r.submittedAt, body: r.body ?? "" }] : []));

/** Conclusions that say the code is not right yet (a check run's, or a commit status's `error`). */
const FAILED = new Set(["failure", "timed_out", "startup_failure", "error"]);

/** Whether a check says the code failed it. */
export function isFailedCheck(check: Pick<CheckFacts, "conclusion">): boolean {
  return FAILED.has(check.conclusion);
}
