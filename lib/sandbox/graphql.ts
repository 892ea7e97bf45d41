import { GraphQLError, graphql, type GraphQLFormattedError } from "graphql";
import { canSee } from "./access";
import type { Caller } from "./auth";
import { isoOrNull, isoSeconds } from "./sim-clock";
import type { SimCore } from "./core";
import { pullFeedbackFields, type Connection } from "./graphql-feedback";
import { schema } from "./graphql-schema";
import { collaboratorsField } from "./graphql-collaborators";
import { draftMutations } from "./graphql-draft";
import { timelineItemsField } from "./graphql-timeline";
import type { SimAccount, SimIssue, SimRepo } from "./model";
import { remaining, type RateBucket } from "./sim-rate-limit";
import { authorAssociation } from "./render/issue";
import { labelsOf } from "./state/labels";
import { grants } from "./state/tokens";

/** A resolver failure with GitHub's top-level `type` (NOT_FOUND, FORBIDDEN, …). */
class TypedError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

function window<T>(name: string, items: T[], args: Connection): T[] {
  const { first, last } = args;
  if (first == null && last == null) throw new TypedError("MISSING_PAGINATION_BOUNDARIES", `You must provide a \`first\` or \`last\` value to properly paginate the \`${name}\` connection.`);
  for (const [arg, value] of [["first", first], ["last", last]] as const) {
    if (value != null && value > 100) throw new TypedError("EXCESSIVE_PAGINATION", `Requesting ${value} records on the \`${name}\` connection exceeds the \`${arg}\` limit of 100 records.`);
  }
  return first != null ? items.slice(0, first) : items.slice(Math.max(0, items.length - (last ?? 0)));
}

interface ItemConnectionArgs extends Connection {
  orderBy?: { field: "CREATED_AT" | "UPDATED_AT"; direction: "ASC" | "DESC" } | null;
  states?: string[] | null;
}

const orderKey = (item: SimIssue, order: ItemConnectionArgs["orderBy"]): number => (order?.field === "UPDATED_AT" ? item.updatedAt : item.createdAt);

export interface GraphqlResult {
  data?: unknown;
  errors?: Array<GraphQLFormattedError & { type?: string }>;
}

/** Runs one GraphQL query for the caller; the rate limit was already charged to `bucket`. */
export async function runGraphql(core: SimCore, caller: Caller, bucket: RateBucket, body: { query?: unknown; variables?: unknown; operationName?: unknown }): Promise<GraphqlResult> {
  const { state, baseUrl } = { state: core.state, baseUrl: core.baseUrl };
  const actor = (account: SimAccount) => ({
    __typename: account.type === "Organization" ? "Organization" : account.type === "Bot" ? "Bot" : "User",
    id: account.nodeId,
    databaseId: account.id,
    login: account.login,
    name: account.name,
    avatarUrl: `${baseUrl}/_sim/avatars/${account.id}`,
    url: `${baseUrl}/${account.login}`,
    resourcePath: `/${account.login}`,
  });
  const allowed = (item: SimIssue): boolean =>
    caller.kind !== "installation" || grants(caller.token.permissions, item.pull ? "pull_requests" : "issues", "read");
  const requireRead = (permission: string): void => {
    if (caller.kind === "installation" && !grants(caller.token.permissions, permission, "read")) throw new TypedError("FORBIDDEN", "Resource not accessible by integration");
  };

  const tools = { state, baseUrl, window, actor, requireRead };

  const itemNode = (repo: SimRepo, item: SimIssue) => {
    const full = state.fullName(repo);
    const path = `/${full}/${item.pull ? "pull" : "issues"}/${item.number}`;
    const pull = item.pull;
    const common = {
      __typename: pull ? "PullRequest" : "Issue",
      id: pull?.nodeId ?? item.nodeId,
      databaseId: pull?.id ?? item.id,
      number: item.number,
      title: item.title,
      body: item.body ?? "",
      closed: item.state === "closed",
      stateReason: item.stateReason?.toUpperCase() ?? null,
      author: () => actor(state.account(item.authorId)),
      editor: () => (item.bodyEdit ? actor(state.account(item.bodyEdit.editorId)) : null),
      lastEditedAt: isoOrNull(item.bodyEdit?.at ?? null),
      authorAssociation: () => authorAssociation(core.render, repo, item.authorId),
      labels: (args: Connection) => {
        const labels = labelsOf(repo, item);
        const nodes = window("labels", labels, args).map((l) => ({ id: l.nodeId, name: l.name, color: l.color, description: l.description, isDefault: l.default }));
        return { nodes, totalCount: labels.length, pageInfo: { hasNextPage: nodes.length < labels.length, hasPreviousPage: false, startCursor: null, endCursor: null } };
      },
      comments: () => ({ totalCount: state.commentsOf(repo, item.number).length }),
      timelineItems: timelineItemsField(tools, repo, item),
      createdAt: isoSeconds(item.createdAt),
      updatedAt: isoSeconds(item.updatedAt),
      closedAt: isoOrNull(item.closedAt),
      url: `${baseUrl}${path}`,
      resourcePath: path,
      repository: () => repoNode(repo),
    };
    if (!pull) return { ...common, state: item.state === "open" ? "OPEN" : "CLOSED" };
    return {
      ...common,
      state: pull.merged ? "MERGED" : item.state === "open" ? "OPEN" : "CLOSED",
      isDraft: pull.draft,
      headRefName: pull.headRef,
      headRefOid: pull.headSha,
      baseRefName: pull.baseRef,
      baseRefOid: pull.baseSha,
      mergeable: () => {
        if (pull.mergeable === null) core.requestMergeability(repo, item);
        return pull.mergeable === null ? "UNKNOWN" : pull.mergeable ? "MERGEABLE" : "CONFLICTING";
      },
      merged: pull.merged,
      mergedAt: isoOrNull(pull.mergedAt),
      ...pullFeedbackFields(tools, repo, item, pull),
    };
  };

  const lookup = (repo: SimRepo, number: number, kind: "Issue" | "PullRequest" | "either") => {
    const item = state.findItem(repo, number);
    const matches = item && (kind === "either" || (kind === "PullRequest") === (item.pull !== null));
    if (!item || !matches) {
      const what = kind === "Issue" ? "an Issue" : kind === "PullRequest" ? "a PullRequest" : "an issue or pull request";
      throw new TypedError("NOT_FOUND", `Could not resolve to ${what} with the number of ${number}.`);
    }
    if (!allowed(item)) throw new TypedError("FORBIDDEN", "Resource not accessible by integration");
    return itemNode(repo, item);
  };

  /** `repository.issues` / `repository.pullRequests`: the caller's visible Items, filtered and ordered as asked. */
  const itemConnection = (repo: SimRepo, pulls: boolean, name: string, args: ItemConnectionArgs) => {
    const states = args.states?.map((s) => s.toLowerCase());
    const stateOf = (item: SimIssue) => (item.pull?.merged ? "merged" : item.state);
    const items = state
      .itemsOf(repo)
      .filter((item) => (item.pull !== null) === pulls && allowed(item) && (!states || states.includes(stateOf(item))))
      .sort((a, b) => orderKey(a, args.orderBy) - orderKey(b, args.orderBy) || a.number - b.number);
    if (args.orderBy?.direction === "DESC") items.reverse();
    const nodes = window(name, items, args).map((item) => itemNode(repo, item));
    return { nodes, totalCount: items.length, pageInfo: { hasNextPage: nodes.length < items.length, hasPreviousPage: false, startCursor: null, endCursor: null } };
  };

  const repoNode = (repo: SimRepo) => ({
    id: repo.nodeId,
    databaseId: repo.id,
    name: repo.name,
    nameWithOwner: state.fullName(repo),
    owner: () => actor(state.account(repo.ownerId)),
    url: `${baseUrl}/${state.fullName(repo)}`,
    isPrivate: repo.private,
    issue: ({ number }: { number: number }) => lookup(repo, number, "Issue"),
    pullRequest: ({ number }: { number: number }) => lookup(repo, number, "PullRequest"),
    issueOrPullRequest: ({ number }: { number: number }) => lookup(repo, number, "either"),
    issues: (args: ItemConnectionArgs) => itemConnection(repo, false, "issues", args),
    pullRequests: (args: ItemConnectionArgs) => itemConnection(repo, true, "pullRequests", args),
    collaborators: collaboratorsField(tools, repo),
    object: ({ expression }: { expression?: string | null }) => gitObject(repo, expression ?? ""),
  });

  /** `object(expression:)`: a blob by `rev:path` (HEAD is the default branch), a commit by `rev`. */
  const gitObject = async (repo: SimRepo, expression: string) => {
    requireRead("contents");
    const [rev = "", path] = expression.split(/:(.*)/s);
    const ref = rev === "HEAD" || rev === "" ? repo.defaultBranch : rev;
    if (path === undefined) {
      const oid = await core.git.resolve(repo.gitDir, ref);
      return oid ? { __typename: "Commit", id: state.nodeId("Commit", repo.id), oid } : null;
    }
    const found = await core.git.entries(repo.gitDir, ref, path);
    const blob = found?.kind === "file" ? found.entries[0] : undefined;
    return blob ? { __typename: "Blob", id: state.nodeId("Blob", repo.id), oid: blob.sha, byteSize: blob.size } : null;
  };

  const rootValue = {
    repository: ({ owner, name }: { owner: string; name: string }) => {
      const repo = state.findRepo(owner, name);
      if (!repo || !canSee(state, caller, repo)) throw new TypedError("NOT_FOUND", `Could not resolve to a Repository with the name '${owner}/${name}'.`);
      return repoNode(repo);
    },
    rateLimit: () => ({ cost: 1, limit: bucket.limit, nodeCount: 1, remaining: remaining(bucket), resetAt: isoSeconds(bucket.resetAt), used: bucket.used }),
    viewer: () => actor(caller.kind === "user" ? caller.user : state.botUser),
    ...draftMutations({ state, caller, itemNode, fail: (type, message) => new TypedError(type, message) }),
  };

  if (typeof body.query !== "string") return { errors: [{ message: "A query attribute must be specified and must be a string." }] };
  const result = await graphql({
    schema,
    source: body.query,
    rootValue,
    variableValues: (body.variables as Record<string, unknown> | undefined) ?? null,
    operationName: typeof body.operationName === "string" ? body.operationName : null,
  });
  const errors = result.errors?.map((error: GraphQLError) => {
    const formatted = error.toJSON() as GraphQLFormattedError & { type?: string };
    const original = error.originalError;
    if (original instanceof TypedError) formatted.type = original.type;
    return formatted;
  });
  return { ...(result.data !== undefined ? { data: result.data } : {}), ...(errors?.length ? { errors } : {}) };
}
