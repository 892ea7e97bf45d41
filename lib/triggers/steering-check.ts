import type { CommentFacts } from "../loops/comment-context";
import type { ItemProjection } from "../loops/projection";
import { quotedTexts, steeringOf, type ReviewReason } from "../loops/steering";
import type { RegisteredRepository } from "../store/github/repository-rows";
import { cachedRole, type ActorLookup } from "./actor";
import type { TriggerDeps } from "./deps";

/** Asks, for one repository, whether a Loop's prompt on an Item (and comment) quotes a non-writer or hidden text (ADR 0058). */
export type SteeringCheck = (prompt: string, projection: ItemProjection, comment: Pick<CommentFacts, "author" | "body"> | null) => Promise<ReviewReason | null>;

/**
 * The steering check of one repository: each quoted author's role read on GitHub as the actor's
 * is (by GraphQL in a poll cycle, else by REST), once per person for the lookup's roles; the
 * App's bot (`botLogin`) is no person (steeringOf).
 */
export function steeringCheck(
  deps: Pick<TriggerDeps, "github">,
  repo: Pick<RegisteredRepository, "installationId" | "fullName">,
  botLogin: string | null,
  lookup: Pick<ActorLookup, "roles" | "roleByGraphql"> = {},
): SteeringCheck {
  const octokit = deps.github.installationOctokit(repo.installationId);
  const roles = lookup.roles ?? new Map();
  return (prompt, projection, comment) =>
    steeringOf(quotedTexts(prompt, projection, comment), (login) => cachedRole(octokit, repo.fullName, login, { ...lookup, roles }), botLogin);
}
