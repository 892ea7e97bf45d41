import { isoOrNull, isoSeconds } from "./sim-clock";
import type { SimAccount, SimCheckRun, SimCommitStatus, SimIssue, SimPull, SimRepo, SimReview } from "./model";
import { CI_APP, combinedState, latestStatuses, suiteConclusion } from "./state/ci";
import { threadsOf } from "./state/review-threads";
import type { SimReviewComment } from "./model";
import type { SimState } from "./state/sim-state";

/**
 * The GraphQL fields of a pull request's feedback: `reviews`, `reviewThreads`, and the head
 * commit's `checkSuites` (one per App, the latest check run of each name) and `status`.
 */

export interface Connection {
  first?: number | null;
  last?: number | null;
}

/** What the resolvers of graphql.ts lend: pagination (GitHub's limits) and the actor node. */
export interface FeedbackTools {
  state: SimState;
  baseUrl: string;
  window<T>(name: string, items: T[], args: Connection): T[];
  actor(account: SimAccount): Record<string, unknown>;
  /** Throws GitHub's FORBIDDEN when the caller's token lacks the permission (an installation's). */
  requireRead(permission: string): void;
}

const page = <T>(t: FeedbackTools, name: string, items: T[], args: Connection) => {
  const nodes = t.window(name, items, args);
  return { nodes, totalCount: items.length, pageInfo: { hasNextPage: nodes.length < items.length, hasPreviousPage: false, startCursor: null, endCursor: null } };
};

export function pullFeedbackFields(t: FeedbackTools, repo: SimRepo, item: SimIssue, pull: SimPull) {
  const { state, baseUrl } = t;
  const full = state.fullName(repo);
  const commentNode = (c: SimReviewComment) => ({
    id: c.nodeId,
    databaseId: c.id,
    author: () => t.actor(state.account(c.authorId)),
    body: c.body,
    path: c.path,
    line: c.line,
    createdAt: isoSeconds(c.createdAt),
    url: `${baseUrl}/${full}/pull/${item.number}#discussion_r${c.id}`,
  });
  const runNode = (r: SimCheckRun) => ({
    id: r.nodeId,
    databaseId: r.id,
    name: r.name,
    status: r.status.toUpperCase(),
    conclusion: r.conclusion?.toUpperCase() ?? null,
    title: r.output.title,
    summary: r.output.summary,
    text: r.output.text,
    detailsUrl: r.detailsUrl,
    startedAt: isoSeconds(r.startedAt),
    completedAt: isoOrNull(r.completedAt),
  });
  const headCommit = () => {
    const runs = [...state.checkRuns.values()].filter((r) => r.repoId === repo.id && r.headSha === pull.headSha);
    const suites = [...new Set(runs.map((r) => r.checkSuiteId))].sort((a, b) => a - b).map((suiteId) => {
      const ofSuite = runs.filter((r) => r.checkSuiteId === suiteId);
      // the latest check run of each name (GitHub's default filter)
      const latest = [...new Map(ofSuite.sort((a, b) => a.id - b.id).map((r) => [r.name, r])).values()];
      const conclusion = suiteConclusion(ofSuite);
      const appId = ofSuite[0]!.appId;
      const app = appId === state.app.id ? state.app : CI_APP;
      return {
        id: state.nodeId("CheckSuite", suiteId),
        databaseId: suiteId,
        app: { id: state.nodeId("App", app.id), databaseId: app.id, slug: app.slug, name: app.name },
        status: conclusion === null ? "IN_PROGRESS" : "COMPLETED",
        conclusion: conclusion?.toUpperCase() ?? null,
        checkRuns: (args: Connection) => page(t, "checkRuns", latest.map(runNode), args),
        latest,
      };
    });
    const statuses = latestStatuses(state, repo, pull.headSha);
    const rollup = rollupState(suites.flatMap((s) => s.latest), statuses);
    return {
      __typename: "Commit",
      id: state.nodeId("Commit", pull.id),
      oid: pull.headSha,
      checkSuites: (args: Connection) => page(t, "checkSuites", suites, args),
      status: () => {
        t.requireRead("statuses");
        return statuses.length === 0
          ? null
          : {
              id: state.nodeId("Status", pull.id),
              state: combinedState(statuses).toUpperCase(),
              contexts: statuses.map((s) => ({
                id: s.nodeId,
                context: s.context,
                state: s.state.toUpperCase(),
                description: s.description,
                targetUrl: s.targetUrl,
                createdAt: isoSeconds(s.createdAt),
              })),
            };
      },
      statusCheckRollup: rollup === null ? null : { id: state.nodeId("StatusCheckRollup", pull.id), state: rollup },
    };
  };
  const reviewsOf = () => [...state.reviews.values()].filter((r) => r.repoId === repo.id && r.pullNumber === item.number).sort((a, b) => a.id - b.id);
  return {
    reviews: (args: Connection) => {
      const reviews = reviewsOf();
      return page(t, "reviews", reviews.map((r) => ({
        id: r.nodeId,
        databaseId: r.id,
        author: () => t.actor(state.account(r.authorId)),
        body: r.body,
        state: r.state,
        submittedAt: isoSeconds(r.submittedAt),
        url: `${baseUrl}/${full}/pull/${item.number}#pullrequestreview-${r.id}`,
        commit: { id: state.nodeId("Commit", r.id), oid: r.commitId, checkSuites: () => page(t, "checkSuites", [], { first: 1 }), status: null },
      })), args);
    },
    reviewThreads: (args: Connection) =>
      page(t, "reviewThreads", threadsOf(state, repo, item).map((thread) => ({
        id: thread.nodeId,
        isResolved: thread.resolved,
        isOutdated: thread.outdated,
        path: thread.root.path,
        line: thread.outdated ? null : thread.root.line,
        resolvedBy: () => {
          const by = state.resolvedThreads.get(thread.id);
          return by === undefined ? null : t.actor(state.account(by));
        },
        comments: (a: Connection) => page(t, "comments", thread.comments.map(commentNode), a),
      })), args),
    commits: (args: Connection) => page(t, "commits", [{ id: state.nodeId("PullRequestCommit", pull.id), commit: headCommit() }], args),
    headRef: () => ({ id: state.nodeId("Ref", pull.id), name: pull.headRef, prefix: "refs/heads/", target: headCommit() }),
    reviewDecision: () => reviewDecision(reviewsOf()),
  };
}

const FAILING: ReadonlySet<string> = new Set(["failure", "timed_out", "cancelled", "action_required", "startup_failure"]);

/**
 * GitHub's `statusCheckRollup.state` of a commit: FAILURE when a check run or status failed,
 * ERROR when a status errored, PENDING while one runs, else SUCCESS; null without any.
 */
function rollupState(runs: readonly SimCheckRun[], statuses: readonly SimCommitStatus[]): string | null {
  if (runs.length === 0 && statuses.length === 0) return null;
  if (runs.some((r) => r.conclusion !== null && FAILING.has(r.conclusion)) || statuses.some((s) => s.state === "failure")) return "FAILURE";
  if (statuses.some((s) => s.state === "error")) return "ERROR";
  if (runs.some((r) => r.status !== "completed") || statuses.some((s) => s.state === "pending")) return "PENDING";
  return "SUCCESS";
}

/** GitHub's `reviewDecision` without a required review: the latest approval or change request of each reviewer decides; null without any. */
function reviewDecision(reviews: readonly SimReview[]): string | null {
  const byAuthor = new Map<number, string>();
  for (const r of reviews) if (r.state !== "COMMENTED") byAuthor.set(r.authorId, r.state);
  const states = [...byAuthor.values()];
  if (states.includes("CHANGES_REQUESTED")) return "CHANGES_REQUESTED";
  return states.includes("APPROVED") ? "APPROVED" : null;
}
