import { listCommentsSince, type ListedComment } from "../github/comments";
import { commentHash } from "../loops/comment-context";
import type { SubmittedReview } from "../loops/pull-feedback";
import { judgedComments } from "../store/runs/judged-comments";
import { itemGenerations } from "../store/items/stored-items";
import { judgeComment, judgeReadComment, watchingLoops, type CommentOutcome } from "./comment-trigger";
import type { TriggerDeps } from "./deps";
import type { ItemJudging } from "./evaluate-item";
import type { Observation } from "./observe-item";
import { appBotLogin } from "./own-items";

/** What a poll cycle read, for the comments on it. */
export interface CycleReads {
  /** the Items the cycle read, by number */
  items: ReadonlyMap<number, Observation>;
  /** the submitted reviews of the pull requests it read, by number */
  reviews: ReadonlyMap<number, SubmittedReview[]>;
}

/**
 * Polling backs up the comment webhooks (docs/loops.md#comments): GitHub touches an Item's
 * `updated_at` for each comment written or edited on it and for each review, so a cycle whose
 * listing named changed Items lists the repository's comments and (when it read a pull request)
 * its review comments changed since the same watermark — one request each — and takes the
 * reviews submitted since from the pull requests it read. Each comment on an Item the cycle
 * read, not the App's and with no Event yet for its content, is judged as its webhook's Hint
 * would judge it; a poll knows no editor, so the comment's author is its actor. A comment on an
 * Item the cycle did not read (written while it ran) waits for the cycle that reads the Item.
 */
export async function pollComments(
  deps: TriggerDeps,
  judging: Pick<ItemJudging, "repo" | "loops" | "paused">,
  since: Date,
  reads: CycleReads,
): Promise<CommentOutcome[]> {
  const watching = watchingLoops(judging);
  if (watching.length === 0 || reads.items.size === 0) return [];
  const { repo } = judging;
  const octokit = deps.github.installationOctokit(repo.installationId);
  const readPull = [...reads.items.values()].some((o) => o.projection.kind === "pull_request");
  const [comments, reviewComments, botLogin] = await Promise.all([
    listCommentsSince(octokit, repo.fullName, "issue_comment", since),
    readPull ? listCommentsSince(octokit, repo.fullName, "review_comment", since) : Promise.resolve([]),
    appBotLogin(deps.github),
  ]);
  const bot = botLogin?.toLowerCase() ?? null;
  const listed = [...comments, ...reviewComments].filter((c) => reads.items.has(c.number) && c.comment.author?.toLowerCase() !== bot);
  const reviews = [...reads.reviews].flatMap(([number, list]) =>
    list.filter((r) => Date.parse(r.submittedAt) >= since.getTime()).map((r) => ({ number, id: r.id, hash: commentHash({ kind: "review", id: r.id, body: r.body }) })),
  );
  const keyOf = (number: number) => reads.items.get(number)!.key;
  const judged = await judgedComments(
    deps.db,
    watching.map((l) => l.name),
    [...listed.map((c) => ({ itemKey: keyOf(c.number), hash: commentHash(c.comment) })), ...reviews.map((r) => ({ itemKey: keyOf(r.number), hash: r.hash }))],
  );
  const fresh: (ListedComment | { number: number; review: number })[] = [
    ...listed.filter((c) => !judged.has(commentHash(c.comment))),
    ...reviews.filter((r) => !judged.has(r.hash)).map((r) => ({ number: r.number, review: r.id })),
  ];
  if (fresh.length === 0) return [];
  const generations = await itemGenerations(deps.db, [...new Set(fresh.map((c) => keyOf(c.number)))]);
  const outcomes: CommentOutcome[] = [];
  // one after the other, as listed: two asks on one Item are claimed in turn
  for (const c of fresh) {
    const item = reads.items.get(c.number)!;
    const on: ItemJudging = { ...judging, item, generation: generations.get(item.key) ?? 0 };
    outcomes.push("comment" in c ? await judgeReadComment(deps, on, c.comment, null) : await judgeComment(deps, on, { kind: "review", id: c.review }, null));
  }
  return outcomes;
}

