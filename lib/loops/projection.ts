import { BadInputError } from "../errors";
import { graphqlLogin, type GraphqlActor } from "./graphql-login";
import { ISSUE_TIMELINE_FIELDS, PULL_REQUEST_TIMELINE_FIELDS, type GraphqlTimeline } from "./timeline-events";
import { feedbackFromGraphql, PULL_REQUEST_FEEDBACK_FIELDS, type GraphqlFeedbackNode, type PullFeedback } from "./pull-feedback";

/**
 * The Projection: the slice of an Item's GitHub state that Atelier stores, hashes and shows to
 * Loops. Both ways of reading GitHub (GraphQL, and REST objects from listings and webhooks)
 * build it here, so the same GitHub state gives the same content hash whichever path saw it.
 * Issues carry the pull-request-only fields as null/false. A pull request read by GraphQL also
 * carries its reviews, review threads and checks (pull-feedback.ts), each only when it has some.
 */
export interface ItemProjection extends PullFeedback {
  kind: ItemKind;
  number: number;
  title: string;
  /** Empty string when GitHub has no body (REST says null, GraphQL says ""). */
  body: string;
  state: ItemState;
  /** REST-style login; a bot is "name[bot]" on both paths. Null for a deleted user. */
  author: string | null;
  /** Label names, sorted by code unit, without duplicates. */
  labels: string[];
  draft: boolean;
  headRefName: string | null;
  headRefOid: string | null;
  baseRefName: string | null;
  /** True mergeable, false conflicting, null while GitHub is still computing (or an issue). */
  mergeable: boolean | null;
  merged: boolean;
  url: string;
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  mergedAt: string | null;
}

export type ItemKind = "issue" | "pull_request";

/** The fields only a pull request has. */
type PullFields = Pick<ItemProjection, "draft" | "headRefName" | "headRefOid" | "baseRefName" | "mergeable" | "merged" | "mergedAt">;

/** An issue's pull request fields: not a draft, not merged, the rest null. */
const NOT_A_PULL: PullFields = { draft: false, headRefName: null, headRefOid: null, baseRefName: null, mergeable: null, merged: false, mergedAt: null };
export type ItemState = "open" | "closed" | "merged";

/**
 * GraphQL selection for an issue; `projectionFromGraphql(node, "issue")` reads it (the timeline
 * is not projected: it tells who caused a change, timeline-events.ts).
 */
export const ISSUE_PROJECTION_FIELDS = `
  number title body state url createdAt updatedAt closedAt
  author { __typename login }
  labels(first: 100) { nodes { name } }
  ${ISSUE_TIMELINE_FIELDS}
`;

/** GraphQL selection for a pull request; `projectionFromGraphql(node, "pull_request")` reads this. */
export const PULL_REQUEST_PROJECTION_FIELDS = `
  number title body state url createdAt updatedAt closedAt mergedAt merged isDraft mergeable
  headRefName headRefOid baseRefName authorAssociation
  author { __typename login }
  labels(first: 100) { nodes { name } }
  ${PULL_REQUEST_FEEDBACK_FIELDS}
  ${PULL_REQUEST_TIMELINE_FIELDS}
`;

/** An Issue or PullRequest node as GitHub's GraphQL API returns it for the selections above. */
export interface GraphqlItemNode extends GraphqlFeedbackNode, GraphqlTimeline {
  number: number;
  title: string;
  body?: string | null;
  state: "OPEN" | "CLOSED" | "MERGED";
  url: string;
  createdAt: string;
  updatedAt: string;
  closedAt?: string | null;
  author?: GraphqlActor | null;
  /** GitHub's author_association (read with the Item, kept beside the projection) */
  authorAssociation?: string | null;
  labels?: { nodes?: ({ name: string } | null)[] | null } | null;
  // pull requests only
  mergedAt?: string | null;
  merged?: boolean | null;
  isDraft?: boolean | null;
  mergeable?: "MERGEABLE" | "CONFLICTING" | "UNKNOWN" | null;
  headRefName?: string | null;
  headRefOid?: string | null;
  baseRefName?: string | null;
}

/** The fields read from a REST issue or pull request object (listing, single GET or webhook). */
export interface RestItem {
  number: number;
  title: string;
  body?: string | null;
  state: string;
  html_url: string;
  created_at: string;
  updated_at: string;
  closed_at?: string | null;
  user?: { login: string; type?: string } | null;
  labels?: (string | { name?: string | null })[] | null;
  /** Present on an issue-shaped pull request (issues listing, `issues`/`issue_comment` hooks). */
  pull_request?: unknown;
  // pull request objects (GET /pulls/{n}, `pull_request` hooks) only
  draft?: boolean | null;
  merged?: boolean | null;
  merged_at?: string | null;
  mergeable?: boolean | null;
  head?: { ref: string; sha: string } | null;
  base?: { ref: string } | null;
}

/**
 * The projection of a GraphQL Issue (`kind` "issue") or PullRequest (`kind` "pull_request") node.
 * `ownApp` is the App's slug: its own check runs are not part of a pull request's checks.
 */
export function projectionFromGraphql(node: GraphqlItemNode, kind: ItemKind, ownApp: string | null = null): ItemProjection {
  const isPull = kind === "pull_request";
  const merged = isPull && (node.state === "MERGED" || node.merged === true);
  const pull: PullFields = isPull
    ? {
        draft: node.isDraft === true,
        headRefName: node.headRefName ?? null,
        headRefOid: node.headRefOid ?? null,
        baseRefName: node.baseRefName ?? null,
        mergeable: graphqlMergeable(node.mergeable),
        merged,
        mergedAt: node.mergedAt ?? null,
      }
    : NOT_A_PULL;
  return {
    kind,
    number: node.number,
    title: node.title,
    body: node.body ?? "",
    state: merged ? "merged" : node.state === "OPEN" ? "open" : "closed",
    author: graphqlLogin(node.author),
    labels: sortedLabels((node.labels?.nodes ?? []).map((l) => l?.name)),
    url: node.url,
    createdAt: node.createdAt,
    updatedAt: node.updatedAt,
    closedAt: node.closedAt ?? null,
    ...pull,
    ...(isPull ? feedbackFromGraphql(node, ownApp, graphqlLogin) : {}),
  };
}

/**
 * The projection of a REST object: an issue (from the issues listing or an `issues` webhook), or
 * a pull request object (GET /repos/{owner}/{repo}/pulls/{n}, `pull_request` webhook). A REST
 * pull request object carries no reviews or checks: the poll and a Hint read pull requests by GraphQL.
 * An issue-shaped pull request lacks the head, base and mergeability, so it cannot give the
 * projection GraphQL would: that is refused with `projection_needs_pull_request`.
 */
export function projectionFromRest(item: RestItem): ItemProjection {
  const isPull = item.head != null || item.base != null;
  if (!isPull && item.pull_request != null) {
    throw new BadInputError(
      "projection_needs_pull_request",
      `Item #${item.number} is a pull request seen through the issues API, which lacks its head, base and mergeability; fetch it with GET /repos/{owner}/{repo}/pulls/${item.number} (or GraphQL) and project that.`,
      { number: item.number },
    );
  }
  const merged = isPull && (item.merged === true || item.merged_at != null);
  const pull: PullFields = isPull
    ? {
        draft: item.draft === true,
        headRefName: item.head?.ref ?? null,
        headRefOid: item.head?.sha ?? null,
        baseRefName: item.base?.ref ?? null,
        mergeable: item.mergeable ?? null,
        merged,
        mergedAt: item.merged_at ?? null,
      }
    : NOT_A_PULL;
  return {
    kind: isPull ? "pull_request" : "issue",
    number: item.number,
    title: item.title,
    body: item.body ?? "",
    state: merged ? "merged" : item.state === "open" ? "open" : "closed",
    author: restLogin(item.user),
    labels: sortedLabels((item.labels ?? []).map((l) => (typeof l === "string" ? l : l?.name))),
    url: item.html_url,
    createdAt: item.created_at,
    updatedAt: item.updated_at,
    closedAt: item.closed_at ?? null,
    ...pull,
  };
}

function sortedLabels(names: (string | null | undefined)[]): string[] {
  const unique = new Set(names.filter((n): n is string => typeof n === "string" && n !== ""));
  return [...unique].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function restLogin(user: RestItem["user"]): string | null {
  return user?.login ?? null;
}

function graphqlMergeable(value: GraphqlItemNode["mergeable"]): boolean | null {
  if (value === "MERGEABLE") return true;
  if (value === "CONFLICTING") return false;
  return null;
}
