import { COMMENTS_KEYS, type LoopTrigger } from "../config-schema";
import { validateScheduleTrigger } from "./schedule-trigger";
import { isRecord, ON_HELP, suggest, type Problem } from "./shared";

/** `on:`: issues, pull_requests, comments (with its mention), or a schedule. */
export function validateTrigger(
  name: string,
  raw: Record<string, unknown>,
  problem: Problem,
): LoopTrigger | null {
  const L = `Loop "${name}"`;
  const on = raw.on;
  if (on === undefined || on === null) {
    problem("config_invalid", ["on"], `${L} has no on: ${ON_HELP}.`);
    return null;
  }
  if (typeof on === "string") {
    if (on === "issues" || on === "pull_requests") return { kind: on };
    if (on === "comments") return { kind: "comments", mention: true };
    problem("config_invalid", ["on"], `${L}: on: ${on} is not a trigger${suggest(on, ["issues", "pull_requests", "comments", "schedule"])}; ${ON_HELP}.`);
    return null;
  }
  if (!isRecord(on)) {
    problem("config_invalid", ["on"], `${L}: on: must be a trigger; ${ON_HELP}.`);
    return null;
  }
  if ("comments" in on && Object.keys(on).length === 1) return validateCommentsTrigger(L, on.comments, problem);
  let ok = true;
  for (const key of Object.keys(on)) {
    if (key !== "schedule") {
      ok = false;
      problem("config_unknown_key", ["on", key], `${L} has an unknown key "${key}" under on:${suggest(key, ["schedule", "comments"])}; ${ON_HELP}.`);
    }
  }
  return validateScheduleTrigger(L, on.schedule, ok, problem);
}

/** `on: { comments: { mention: false } }`: every comment is ready, not only those that mention the App. */
function validateCommentsTrigger(
  L: string,
  comments: unknown,
  problem: Problem,
): LoopTrigger | null {
  const HELP = "write on: comments (a comment that mentions the App), or on: { comments: { mention: false } } (every comment)";
  if (comments === null || comments === undefined) return { kind: "comments", mention: true };
  if (!isRecord(comments)) {
    problem("config_invalid", ["on", "comments"], `${L}: on.comments must be a map; ${HELP}.`);
    return null;
  }
  let ok = true;
  for (const key of Object.keys(comments)) {
    if (!(COMMENTS_KEYS as readonly string[]).includes(key)) {
      ok = false;
      problem("config_unknown_key", ["on", "comments", key], `${L} has an unknown key "${key}" under comments:${suggest(key, [...COMMENTS_KEYS])}: the only key is mention.`);
    }
  }
  const mention = comments.mention ?? true;
  if (typeof mention !== "boolean") {
    problem("config_invalid", ["on", "comments", "mention"], `${L}: comments.mention must be true or false; ${HELP}.`);
    return null;
  }
  return ok ? { kind: "comments", mention } : null;
}

