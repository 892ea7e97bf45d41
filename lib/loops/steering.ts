import type { CommentFacts } from "./comment-context";
import type { LoopDefinition, LoopPush } from "./config-schema";
import { compileTemplate } from "./expressions";
import { hasHiddenText } from "./plain-text";
import type { ItemProjection } from "./projection";

/**
 * Who may have steered a Run's agent (ADR 0058): the people whose GitHub text its prompt quotes.
 * A Run is steered when any of that text came from a person below write, or hid something (an
 * HTML comment, invisible characters: removed from the prompt, but someone meant them unseen).
 * Such a Run's commits wait for a writer before any branch has them, since CI runs a branch's
 * code with the repository's secrets. Pure; the roles are asked by lib/triggers/steering-check.ts.
 */

/** Where a quoted text sits on GitHub. */
export type QuotedWhere = "item" | "comment" | "review" | "review_thread";

/** A piece of GitHub text the prompt quotes, and who wrote it (null: a deleted account). */
export interface QuotedText {
  where: QuotedWhere;
  author: string | null;
  text: string;
}

/** Why a writer reviews a Run's commits before they are pushed. */
export type ReviewReason =
  | { token: "loop_requires" }
  | { token: "steered"; login: string; permission: string; where: QuotedWhere }
  | { token: "hidden_text"; where: QuotedWhere };

/** The roles that may push to the repository themselves: their text steers nothing they could not do. */
const WRITERS: ReadonlySet<string> = new Set(["write", "maintain", "admin"]);

/**
 * The `item` fields no person writes freely (numbers, states, shas, logins GitHub checks, the App
 * checks' own words): reading only these quotes no one. Everything else of `item` (title, body,
 * labels, branch names, reviews, threads, or `item` whole) counts as the Item's text.
 */
const ITEM_FIELDS_OF_NO_ONE = new Set([
  "number",
  "kind",
  "state",
  "url",
  "draft",
  "merged",
  "mergeable",
  "head_sha",
  "author",
  "author_association",
  "actor",
  "actor_permission",
  "checks",
  "tick",
]);
/** The same for `comment`: all but its body (and `comment` whole). */
const COMMENT_FIELDS_OF_NO_ONE = new Set(["kind", "id", "author", "author_association", "url", "review_state", "path", "line"]);

/** Whether an expression source reads `name` other than through the fields in `safe`. */
function readsText(source: string, name: string, safe: ReadonlySet<string>): boolean {
  for (const m of source.matchAll(new RegExp(`(?<![.\\w])${name}\\b(\\s*\\.\\s*(\\w+))?`, "g"))) {
    if (!m[2] || !safe.has(m[2])) return true;
  }
  return false;
}

/** The expression sources of a prompt template; a template that does not compile quotes nothing (it renders nothing). */
function expressionSources(prompt: string): string[] {
  try {
    return compileTemplate(prompt).segments.flatMap((s) => ("source" in s ? [s.source] : []));
  } catch {
    return [];
  }
}

/** The GitHub text a Loop's prompt quotes of this Item (and comment), with its authors. */
export function quotedTexts(prompt: string, projection: ItemProjection | null, comment: Pick<CommentFacts, "author" | "body"> | null): QuotedText[] {
  const sources = expressionSources(prompt);
  const texts: QuotedText[] = [];
  if (projection && sources.some((s) => readsText(s, "item", ITEM_FIELDS_OF_NO_ONE))) {
    texts.push({ where: "item", author: projection.author, text: `${projection.title}\n${projection.body}\n${projection.labels.join("\n")}\n${projection.headRefName ?? ""}` });
    for (const r of projection.reviews ?? []) texts.push({ where: "review", author: r.author, text: r.body });
    for (const t of projection.reviewThreads ?? []) for (const c of t.comments) texts.push({ where: "review_thread", author: c.author, text: c.body });
  }
  if (comment && sources.some((s) => readsText(s, "comment", COMMENT_FIELDS_OF_NO_ONE))) {
    texts.push({ where: "comment", author: comment.author, text: comment.body });
  }
  return texts;
}

/**
 * The one question: was this Run steered by someone who cannot write, or by hidden text? The
 * first quoted text with hidden parts, else the first whose author is below write (a deleted
 * account counts as no access); null when every quoted word is a writer's. The App's own text
 * (`appLogin`: its pull request's title and body, which an earlier Run's agent wrote) is that
 * Run's, whose commits — and so that pull request — a writer saw first when it was steered.
 */
export async function steeringOf(all: readonly QuotedText[], roleOf: (login: string) => Promise<string>, appLogin: string | null = null): Promise<ReviewReason | null> {
  const texts = all.filter((t) => appLogin === null || t.author?.toLowerCase() !== appLogin.toLowerCase());
  const hidden = texts.find((t) => hasHiddenText(t.text));
  if (hidden) return { token: "hidden_text", where: hidden.where };
  const asked = new Map<string, Promise<string>>();
  for (const t of texts) {
    if (t.author === null) return { token: "steered", login: "ghost", permission: "none", where: t.where };
    const key = t.author.toLowerCase();
    if (!asked.has(key)) asked.set(key, roleOf(t.author));
    const permission = await asked.get(key)!;
    if (!WRITERS.has(permission)) return { token: "steered", login: t.author, permission, where: t.where };
  }
  return null;
}

/** Whether a Run's commits wait for a writer, and why: the Loop's `push:` over the Run's steering. */
export function reviewReasonFor(loop: Pick<LoopDefinition, "push">, steering: ReviewReason | null): ReviewReason | null {
  const push: LoopPush | undefined = loop.push;
  if (push === "immediately") return null;
  if (push === "after_review") return steering ?? { token: "loop_requires" };
  return steering;
}

const WHERE_WORDS: Record<QuotedWhere, string> = {
  item: "the item's text",
  comment: "the comment",
  review: "a review",
  review_thread: "a review comment",
};

/** What the Run page, the check run and Needs you say of why the commits wait. */
export function reviewSentence(reason: ReviewReason): string {
  switch (reason.token) {
    case "loop_requires":
      return "The Loop says push: after_review: a writer sees every Run's commits before a branch has them.";
    case "steered":
      return `The prompt quotes ${WHERE_WORDS[reason.where]} by ${reason.login}, who cannot write (${reason.permission === "none" ? "no access" : `${reason.permission} access`}): the agent may have been steered, so its commits wait for a writer before a branch (and CI, with the repository's secrets) has them.`;
    case "hidden_text":
      return `${WHERE_WORDS[reason.where].replace(/^./, (c) => c.toUpperCase())} held hidden text (removed from the prompt): the agent may have been steered, so its commits wait for a writer before a branch (and CI, with the repository's secrets) has them.`;
  }
}

/** What the approver's view says of a Run whose commits are pushed as made: CI runs them with the repository's secrets. */
export function pushSentence(reason: ReviewReason | null): string {
  return reason === null
    ? "When the agent finishes, its commits are pushed to a branch at once: the repository's CI runs them with its secrets, before anyone reviews them."
    : "When the agent finishes, its commits wait for a writer's review before any branch (and CI, with the repository's secrets) has them.";
}
