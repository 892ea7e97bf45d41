import { validationFailed } from "../api-error";
import { REACTION_CONTENTS } from "../model";
import type { ReactionContent, SimComment, SimReaction } from "../model";
import type { SimState } from "./sim-state";

/** The reactions of one issue comment, oldest first. */
export function reactionsOf(state: SimState, comment: Pick<SimComment, "id">): SimReaction[] {
  return state.reactions.filter((r) => r.commentId === comment.id);
}

/**
 * Reacts to a comment as GitHub does: the same user's same content is one reaction (the
 * existing one is returned, `created` false), an unknown content is a 422.
 */
export function react(state: SimState, comment: Pick<SimComment, "id">, content: unknown, userId: number): { reaction: SimReaction; created: boolean } {
  if (typeof content !== "string" || !(REACTION_CONTENTS as readonly string[]).includes(content)) {
    throw validationFailed([{ resource: "Reaction", field: "content", code: "invalid", value: content }]);
  }
  const existing = reactionsOf(state, comment).find((r) => r.userId === userId && r.content === content);
  if (existing) return { reaction: existing, created: false };
  const reaction: SimReaction = { ...state.newNode("Reaction"), commentId: comment.id, userId, content: content as ReactionContent, createdAt: state.clock.now() };
  state.reactions.push(reaction);
  return { reaction, created: true };
}
