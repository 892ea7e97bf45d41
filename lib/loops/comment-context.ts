import { proseOf } from "./markdown-visibility";
import { contentHash } from "../engine/content-hash";

/**
 * The comment a comments Loop answers: an issue or pull request comment, a review comment on a
 * line of a pull request, or a review. What a Loop's `if:` and prompt see as `comment`.
 */

export const COMMENT_KINDS = ["issue_comment", "review_comment", "review"] as const;
export type CommentKind = (typeof COMMENT_KINDS)[number];

/** Which comment a webhook named (on the Item the Hint carries). */
export interface CommentRef {
  kind: CommentKind;
  id: number;
}

/** A comment as read from GitHub. */
export interface CommentFacts {
  kind: CommentKind;
  id: number;
  body: string;
  author: string | null;
  authorAssociation: string | null;
  url: string;
  /** a review's state (APPROVED, CHANGES_REQUESTED, COMMENTED); null for the other kinds */
  reviewState: string | null;
  /** a review comment's file and line; null for the other kinds */
  path: string | null;
  line: number | null;
}

/** The `comment` an expression sees (snake_case, as in GitHub's payloads). */
export interface CommentContext {
  kind: CommentKind;
  id: number;
  body: string;
  author: string | null;
  author_association: string | null;
  url: string;
  review_state: string | null;
  path: string | null;
  line: number | null;
}

export function buildCommentContext(c: CommentFacts): CommentContext {
  return {
    kind: c.kind,
    id: c.id,
    body: c.body,
    author: c.author,
    author_association: c.authorAssociation,
    url: c.url,
    review_state: c.reviewState,
    path: c.path,
    line: c.line,
  };
}

/**
 * The comment's content hash: its identity (kind, id) and what it says. An edit changes it (a
 * new Event); a redelivery of the same comment does not.
 */
export function commentHash<C extends Pick<CommentFacts, "kind" | "id" | "body">>(c: C): string {
  return contentHash({ kind: c.kind, id: c.id, body: c.body });
}

/**
 * Whether the text mentions `@<slug>` as GitHub links it: the slug whole (not a prefix of a
 * longer login), case-insensitive, not inside an e-mail address or a longer word — and in the
 * comment's own prose: a mention in a code span, a code block or a quote (`@atelier` quoted in
 * a reply) starts nothing.
 */
export function mentionsApp(body: string, slug: string): boolean {
  const escaped = slug.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const mention = new RegExp(`(?<![\\w@/.-])@${escaped}(?![\\w-])`, "i");
  return mention.test(body) && proseOf(body).some((text) => mention.test(text));
}
