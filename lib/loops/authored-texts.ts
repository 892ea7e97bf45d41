import { contentHash } from "../engine/content-hash";
import type { ItemProjection } from "./projection";

/**
 * The texts of an Item that people wrote — its body, each review, each review thread comment —
 * each with its author and a fingerprint. An Event records the fingerprints of the texts it saw
 * (`submission.texts`); the texts of the next Event that are not among them are new, and their
 * authors are candidates for its actor (ADR 0050): a reader's review cannot ride on a writer's
 * label or on the writer who started the Run a continuation carries on.
 */
export interface AuthoredText {
  part: "body" | "review" | "thread_comment";
  author: string | null;
  fingerprint: string;
}

const fingerprint = (part: AuthoredText["part"], author: string | null, body: string): string => contentHash([part, author, body]).slice(0, 24);

/** Every authored text of the projection (checks are no one's text: CI is no person). */
export function authoredTexts(projection: ItemProjection): AuthoredText[] {
  const texts: AuthoredText[] = [{ part: "body", author: projection.author, fingerprint: fingerprint("body", projection.author, projection.body) }];
  for (const review of projection.reviews ?? []) {
    if (review.body !== "" || review.state !== "COMMENTED") texts.push({ part: "review", author: review.author, fingerprint: fingerprint("review", review.author, `${review.state}\n${review.body}`) });
  }
  for (const thread of projection.reviewThreads ?? []) {
    for (const comment of thread.comments) texts.push({ part: "thread_comment", author: comment.author, fingerprint: fingerprint("thread_comment", comment.author, `${thread.path}\n${comment.body}`) });
  }
  return texts;
}

/**
 * The texts new since an Event that saw `seen` (null: no earlier Event saw this Item). With no
 * earlier Event, the body is left to the rules of the Item's own actor (a writer's label vouches
 * for the body it labeled); every review and thread comment is new.
 */
export function newTexts(projection: ItemProjection, seen: ReadonlySet<string> | null): AuthoredText[] {
  return authoredTexts(projection).filter((t) => (seen ? !seen.has(t.fingerprint) : t.part !== "body"));
}
