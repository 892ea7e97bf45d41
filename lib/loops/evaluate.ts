import { BadInputError } from "../errors";
import type { TokenOf } from "../error-tokens";
import type { LoopDefinition, TriggerKind } from "./config-schema";
import {
  compileCondition,
  compileTemplate,
  evaluateCondition,
  renderCompiledTemplate,
  type CompiledCondition,
  type CompiledTemplate,
  type ExpressionContext,
} from "./expressions";
import { buildCommentContext, mentionsApp, type CommentFacts } from "./comment-context";
import { buildItemContext, buildTickContext, type ActorContext, type TickContext } from "./item-context";
import { plainTextDeep } from "./plain-text";
import { visibleMarkdownDeep } from "./markdown-visibility";
import type { ItemProjection } from "./projection";

/**
 * The pure per-Item decision: which Loops submit an Event (with their rendered prompt), which
 * revoke, which are paused, and which failed — a failure touches only its own Loop.
 */

/** The `repository` context: at least these two, plus anything the caller wants expressions to see. */
export interface RepositoryContext {
  full_name: string;
  default_branch: string;
  [key: string]: unknown;
}

export type LoopFailure = {
  outcome: "error";
  /** config_bad_expression (did not compile) or expression_evaluation_failed. */
  token: TokenOf<400>;
  message: string;
  /** Which part of the Loop failed. */
  where: "if" | "prompt";
};

export type LoopDecision =
  | { loop: LoopDefinition; outcome: "submit"; prompt: string }
  | { loop: LoopDefinition; outcome: "revoke" }
  | { loop: LoopDefinition; outcome: "skip"; reason: "paused" | UnseenItem }
  | ({ loop: LoopDefinition } & LoopFailure);

export type CommentDecision =
  | { loop: LoopDefinition; outcome: "submit"; prompt: string }
  | { loop: LoopDefinition; outcome: "skip"; reason: "paused" | UnseenItem | "no_mention" | "condition_false" }
  | ({ loop: LoopDefinition } & LoopFailure);

export type TickDecision =
  | { loop: LoopDefinition; outcome: "submit"; prompt: string; scheduledAt: Date; tick: TickContext["tick"] }
  | { loop: LoopDefinition; outcome: "skip"; reason: "condition_false" }
  | ({ loop: LoopDefinition } & LoopFailure);

export interface EvaluateItemInput {
  loops: readonly LoopDefinition[];
  projection: ItemProjection;
  repository: RepositoryContext;
  /** Names of the paused Loops: they neither submit nor revoke. */
  pausedLoops?: ReadonlySet<string> | readonly string[];
  /** Who caused the match, as each Loop's expressions see it (item.actor…); null fields when unknown. */
  actorOf?: (loop: LoopDefinition) => ActorContext | null;
  /** The App's own Item (its bot's, or a pull request from an atelier/* branch): only `allow_bot_items` Loops see it. */
  ownItem?: boolean;
}

/** The branches the App pushes its Runs' work to. */
export const OWN_BRANCH_PREFIX = "atelier/";

/** Whether the Item is the App's own work: authored by its bot, or a pull request from one of its branches. */
export function isOwnItem(projection: Pick<ItemProjection, "kind" | "author" | "headRefName">, botLogin: string | null): boolean {
  if (botLogin !== null && projection.author?.toLowerCase() === botLogin.toLowerCase()) return true;
  return projection.kind === "pull_request" && (projection.headRefName ?? "").startsWith(OWN_BRANCH_PREFIX);
}

/** Whether the Loop continues the App's own pull requests on their branch (`continue: same-branch`, ADR 0019). */
export function continuesSameBranch(loop: Pick<LoopDefinition, "continue">): boolean {
  return loop.continue === "same-branch";
}

/** Why a Loop does not look at an Item: the App's own, to a Loop that does not opt in; a person's, to a same-branch Loop. */
export type UnseenItem = "own_item" | "not_own_item";

/**
 * Which Items a Loop looks at: a person's, unless it continues the App's pull requests
 * (`continue: same-branch` sees only the App's own); the App's own only with
 * `allow_bot_items: true` or `continue: same-branch`.
 */
export function unseenItem(loop: Pick<LoopDefinition, "allowBotItems" | "continue">, ownItem: boolean): UnseenItem | null {
  if (continuesSameBranch(loop)) return ownItem ? null : "not_own_item";
  return ownItem && !loop.allowBotItems ? "own_item" : null;
}

/** Whether a Loop's `if:` or prompt reads who caused the match (then it is looked up before they are evaluated). */
export function readsActor(loop: Pick<LoopDefinition, "if" | "prompt">): boolean {
  return /\bitem\s*\.\s*(actor|actor_permission|author_association)\b/.test(`${loop.if ?? ""}\n${loop.prompt}`);
}

/** The trigger kind whose Loops see Items of this kind. */
export function triggerKindFor(kind: ItemProjection["kind"]): TriggerKind {
  return kind === "issue" ? "issues" : "pull_requests";
}

/**
 * Evaluates every Loop that watches this Item's kind (issues Loops see issues, pull_requests
 * Loops see pull requests), in the order given. A missing `if:` is true.
 */
export function evaluateLoopsForItem(input: EvaluateItemInput): LoopDecision[] {
  const paused = new Set(input.pausedLoops ?? []);
  const kind = triggerKindFor(input.projection.kind);
  const decisions: LoopDecision[] = [];
  for (const loop of input.loops) {
    if (loop.trigger.kind !== kind) continue;
    const passed = passedOver(loop, paused, input.ownItem === true);
    if (passed) {
      decisions.push({ loop, outcome: "skip", reason: passed });
      continue;
    }
    const item = buildItemContext(input.projection, input.actorOf?.(loop) ?? null);
    const submission = submissionOf(loop, { item, repository: input.repository, loop: loopContext(loop) });
    decisions.push(submission ? { loop, ...submission } : { loop, outcome: "revoke" });
  }
  return decisions;
}

export interface EvaluateCommentInput extends Omit<EvaluateItemInput, "actorOf"> {
  comment: CommentFacts;
  /** the App's slug: a Loop that wants a mention (the default) sees only comments with `@<slug>` */
  appSlug: string | null;
  /** who wrote (or edited) the comment, as the `item` context's actor */
  actor: ActorContext | null;
}

/**
 * Evaluates the comments Loops for one comment on an Item. A comment is ready when it mentions
 * the App (unless the Loop says `mention: false`) and the `if:` holds; a comment that does not
 * match revokes nothing (a later comment is not a change of the earlier one's request).
 */
export function evaluateCommentLoops(input: EvaluateCommentInput): CommentDecision[] {
  const paused = new Set(input.pausedLoops ?? []);
  const decisions: CommentDecision[] = [];
  for (const loop of input.loops) {
    if (loop.trigger.kind !== "comments") continue;
    const passed = passedOver(loop, paused, input.ownItem === true);
    if (passed) {
      decisions.push({ loop, outcome: "skip", reason: passed });
      continue;
    }
    if (loop.trigger.mention && !(input.appSlug !== null && mentionsApp(input.comment.body, input.appSlug))) {
      decisions.push({ loop, outcome: "skip", reason: "no_mention" });
      continue;
    }
    const submission = submissionOf(loop, {
      item: buildItemContext(input.projection, input.actor),
      repository: input.repository,
      loop: loopContext(loop),
      comment: buildCommentContext(input.comment),
    });
    decisions.push(submission ? { loop, ...submission } : { loop, outcome: "skip", reason: "condition_false" });
  }
  return decisions;
}

/**
 * The prompt of a Loop on an Item that an operator asked for now ("Run Loop X on #N"): the
 * `if:` is not asked — the person is the ready condition — and no comment is answered.
 */
export function renderOnDemand(loop: LoopDefinition, projection: ItemProjection, repository: RepositoryContext, actor: ActorContext | null): string | LoopFailure {
  return render(loop, { item: buildItemContext(projection, actor), repository, loop: loopContext(loop), comment: null });
}

/**
 * Evaluates a schedule Loop for one Tick and one repository: the Tick is the Item. A false
 * `if:` skips the Tick (there is nothing to revoke).
 */
export function evaluateTick(
  loop: LoopDefinition,
  tick: { scheduledAt: Date },
  repository: RepositoryContext,
): TickDecision {
  if (loop.trigger.kind !== "schedule") {
    throw new BadInputError("loop_not_schedule", `Loop "${loop.name}" is an ${loop.trigger.kind} Loop; only schedule Loops have Ticks.`);
  }
  const item = buildTickContext({ scheduledAt: tick.scheduledAt, cron: loop.trigger.cron, tz: loop.trigger.tz });
  const submission = submissionOf(loop, { item, repository, loop: loopContext(loop) });
  if (!submission) return { loop, outcome: "skip", reason: "condition_false" };
  if (submission.outcome === "error") return { loop, ...submission };
  return { loop, ...submission, scheduledAt: tick.scheduledAt, tick: item.tick };
}

/** The `loop` context an expression sees. */
export function loopContext(loop: LoopDefinition): Record<string, unknown> {
  return {
    name: loop.name,
    agent: loop.agent,
    trigger: loop.trigger.kind,
    approval: loop.approval,
    max_cycles: loop.maxCycles,
  };
}

// ---------------------------------------------------------------------------------------------

/** Why a Loop passes over an Item before its `if:` is asked: it is paused, or it does not look at the Item. */
function passedOver(loop: LoopDefinition, paused: ReadonlySet<string>, ownItem: boolean): "paused" | UnseenItem | null {
  return paused.has(loop.name) ? "paused" : unseenItem(loop, ownItem);
}

/** The Loop's `if:`, then its prompt: null when the `if:` does not hold, else the prompt or the failure of either. */
function submissionOf(loop: LoopDefinition, context: ExpressionContext): { outcome: "submit"; prompt: string } | LoopFailure | null {
  const matched = decide(loop, context);
  if (typeof matched !== "boolean") return matched;
  if (!matched) return null;
  const prompt = render(loop, context);
  return typeof prompt === "string" ? { outcome: "submit", prompt } : prompt;
}

function decide(loop: LoopDefinition, context: ExpressionContext): boolean | LoopFailure {
  if (loop.if === null) return true;
  try {
    return evaluateCondition(cached(conditions, loop.if, compileCondition), context);
  } catch (err) {
    return failure(err, "if", loop);
  }
}

/**
 * The prompt, its interpolated GitHub text as a person reads it on GitHub (plainText: no HTML
 * comments, no invisible characters; visibleMarkdown: no Markdown GitHub does not show — link
 * reference definitions, alt text and titles, hiding math, collapsed details). The template is
 * the repository's config, kept as written.
 */
function render(loop: LoopDefinition, context: ExpressionContext): string | LoopFailure {
  const quoted: ExpressionContext = {
    ...context,
    item: visibleMarkdownDeep(plainTextDeep(context.item)),
    repository: plainTextDeep(context.repository),
    comment: visibleMarkdownDeep(plainTextDeep(context.comment ?? null)),
  };
  try {
    return renderCompiledTemplate(cached(templates, loop.prompt, compileTemplate), quoted);
  } catch (err) {
    return failure(err, "prompt", loop);
  }
}

function failure(err: unknown, where: "if" | "prompt", loop: LoopDefinition): LoopFailure {
  if (err instanceof BadInputError) {
    return { outcome: "error", token: err.token, message: `Loop "${loop.name}", ${where}: ${err.message}`, where };
  }
  throw err;
}

const MAX_CACHED = 500;
const conditions = new Map<string, CompiledCondition>();
const templates = new Map<string, CompiledTemplate>();

/** Compiled expressions by source; compiling is pure, so a cache changes nothing but time. */
function cached<T>(cache: Map<string, T>, source: string, compile: (src: string) => T): T {
  let hit = cache.get(source);
  if (hit === undefined) {
    hit = compile(source);
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(source, hit);
  }
  return hit;
}
