import { acknowledgeComment, readComment } from "../github/comments";
import { commentHash, type CommentFacts, type CommentRef } from "../loops/comment-context";
import { evaluateCommentLoops, isOwnItem } from "../loops/evaluate";
import type { Octokit } from "../github/app-client";
import type { EventActor } from "../store/runs/claim";
import { repositoryRoleOf, roleRank, type ActorFacts } from "./actor";
import type { TriggerDeps } from "./deps";
import { claimEvent, itemEvent, repositoryContext, type ItemJudging, type ItemOutcome } from "./evaluate-item";
import { appBotLogin, continuationsOf, slugOfBot } from "./own-items";
import { steeringCheck } from "./steering-check";
import type { RegisteredRepository } from "../store/github/repository-rows";

/** What judging one comment did: the claims of the comments Loops it matched, and their failures. */
export type CommentOutcome = Pick<ItemOutcome, "opened" | "claims" | "failures">;

/**
 * A comment (or review) written or edited on an Item: the comments Loops judge it. The comment
 * is read from GitHub as it is now; its author — and whoever edited it, when that is someone
 * else — is the actor, the weaker of them (ADR 0009): a stranger's comment waits for a writer's
 * approval. The Event is the comment and its content hash: an edit is a new Event, a
 * redelivery is the same. Each comment's ask is its own request (ADR 0073): another person's
 * comment waits behind it and never replaces it; only an edit of the same comment does. A matching comment is acknowledged at once with a reaction; the
 * Run's own comment on the Item (the mirror's) then tracks the Run. A newer read of the Item
 * (another Hint's) does not stop it: that read judges the Item, not this comment.
 */
export async function judgeComment(deps: TriggerDeps, judging: ItemJudging, ref: CommentRef, sender: string | null): Promise<CommentOutcome> {
  if (watchingLoops(judging).length === 0) return noOutcome();
  const comment = await readComment(deps.github.installationOctokit(judging.repo.installationId), judging.repo.fullName, judging.item.number, ref);
  return comment ? judgeReadComment(deps, judging, comment, sender) : noOutcome();
}

const noOutcome = (): CommentOutcome => ({ opened: [], claims: [], failures: new Map() });

/** The comments Loops of the repository that are not paused. */
export const watchingLoops = ({ loops, paused }: Pick<ItemJudging, "loops" | "paused">) => loops.filter((l) => l.trigger.kind === "comments" && !paused.has(l.name));

/**
 * judgeComment for a comment already read from GitHub (a Hint's read, or a poll's listing of
 * the comments written or edited since its watermark; a poll knows no editor: `sender` null).
 */
export async function judgeReadComment(deps: TriggerDeps, judging: ItemJudging, comment: CommentFacts, sender: string | null): Promise<CommentOutcome> {
  const { repo, item, generation } = judging;
  const outcome = noOutcome();
  const watching = watchingLoops(judging);
  if (watching.length === 0) return outcome;
  const octokit = deps.github.installationOctokit(repo.installationId);
  const botLogin = await appBotLogin(deps.github);
  const ref: CommentRef = { kind: comment.kind, id: comment.id };
  // the App's own comments (its Run comments) never start anything
  if (botLogin !== null && comment.author?.toLowerCase() === botLogin.toLowerCase()) return outcome;

  const facts = await commenter(octokit, repo, comment, sender);
  const decisions = evaluateCommentLoops({
    loops: watching,
    projection: item.projection,
    repository: repositoryContext(repo),
    comment,
    appSlug: slugOfBot(botLogin),
    actor: { login: facts.actor.login, permission: facts.actor.permission, authorAssociation: facts.authorAssociation },
    ownItem: isOwnItem(item.projection, botLogin),
  });
  let acknowledged = false;
  const steered = steeringCheck(deps, repo, botLogin);
  const continuation = continuationsOf(deps.db, item);
  for (const decision of decisions) {
    if (decision.outcome === "skip") continue;
    if (decision.outcome === "error") {
      outcome.failures.set(decision.loop.name, decision.message);
      continue;
    }
    // a same-branch Loop continues only a pull request a Run of this instance opened, on its branch
    const origin = await continuation(decision.loop);
    if (origin === null) continue;
    if (!acknowledged) {
      await acknowledgeComment(octokit, repo.fullName, ref);
      acknowledged = true;
    }
    const steering = await steered(decision.loop.prompt, item.projection, comment);
    const event = itemEvent(repo, decision.loop, item, generation, decision.prompt, { facts, depth: 0, steering }, { ...comment, hash: commentHash(comment) }, origin?.branch ?? null);
    await claimEvent(deps, event, outcome);
  }
  return outcome;
}

/**
 * The comment's actor: its author, or the webhook's sender when someone else edited it and is
 * weaker. A bot, a deleted user and a 404 have no role.
 */
async function commenter(octokit: Octokit, repo: RegisteredRepository, comment: CommentFacts, sender: string | null): Promise<ActorFacts> {
  const logins = [comment.author, sender].filter((l): l is string => !!l).filter((l, i, all) => all.findIndex((o) => o.toLowerCase() === l.toLowerCase()) === i);
  let weakest: EventActor = { login: "ghost", permission: "none", source: "comment" };
  for (const [i, login] of logins.entries()) {
    const permission = await repositoryRoleOf(octokit, repo.fullName, login);
    if (i === 0 || roleRank(permission) < roleRank(weakest.permission)) weakest = { login, permission, source: "comment" };
  }
  return { actor: weakest, authorAssociation: comment.authorAssociation };
}
