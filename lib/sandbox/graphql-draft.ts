import { actorId, canSee } from "./access";
import type { Caller } from "./auth";
import { ROLE_RANK, type SimIssue, type SimRepo } from "./model";
import type { SimState } from "./state/sim-state";
import { setDraft } from "./state/pulls";
import { grants } from "./state/tokens";

/**
 * GitHub's two GraphQL mutations that turn a pull request into a draft and back (REST cannot):
 * `convertPullRequestToDraft` and `markPullRequestReadyForReview`, by the pull request's node id.
 * An installation needs pull_requests: write, a person write access.
 */

interface DraftArgs {
  input: { pullRequestId: string; clientMutationId?: string | null };
}

export interface DraftMutationTools {
  state: SimState;
  caller: Caller;
  /** The PullRequest node of an Item, as queries return it. */
  itemNode: (repo: SimRepo, item: SimIssue) => unknown;
  /** A GraphQL error with GitHub's `type`. */
  fail: (type: string, message: string) => Error;
}

export function draftMutations(t: DraftMutationTools) {
  const { state, caller } = t;
  const find = (id: string): { repo: SimRepo; item: SimIssue } | null => {
    for (const repo of state.repos.values()) {
      const item = state.itemsOf(repo).find((i) => i.pull?.nodeId === id);
      if (item) return { repo, item };
    }
    return null;
  };
  const set = ({ input }: DraftArgs, draft: boolean) => {
    const found = find(input.pullRequestId);
    if (!found || !canSee(state, caller, found.repo)) throw t.fail("NOT_FOUND", `Could not resolve to a node with the global id of '${input.pullRequestId}'`);
    const { repo, item } = found;
    const mayWrite =
      caller.kind === "installation"
        ? grants(caller.token.permissions, "pull_requests", "write")
        : caller.kind === "user" && ROLE_RANK[state.permissionOf(repo, caller.user.id)] >= ROLE_RANK.write;
    if (!mayWrite) throw t.fail("FORBIDDEN", "Resource not accessible by integration");
    setDraft(state, repo, item, draft, actorId(state, caller));
    return { clientMutationId: input.clientMutationId ?? null, pullRequest: t.itemNode(repo, item) };
  };
  return {
    convertPullRequestToDraft: (args: DraftArgs) => set(args, true),
    markPullRequestReadyForReview: (args: DraftArgs) => set(args, false),
  };
}
