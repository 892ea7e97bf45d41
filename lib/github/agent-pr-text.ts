/**
 * The text an agent writes for its pull request (title and body) is the agent's, and the agent
 * may have been steered: before it reaches GitHub, its @-mentions (a person, `@org/team`) are put
 * in code spans, where GitHub notifies no one, and so are its closing keywords (`closes #N`,
 * `fixes owner/repo#N`, `resolves https://github.com/owner/repo/issues/N`) — but for the Run's own
 * Item, which the pull request is meant to close. Pure.
 */

export interface OwnItem {
  /** owner/name */
  repo: string;
  number: number | null;
}

const KEYWORD = "(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)";
const REFERENCE = "(?:(?:https?://github\\.com/)?([A-Za-z0-9-]+/[A-Za-z0-9._-]+)(?:#|/(?:issues|pull)/))?#?(\\d+)";
const CLOSING = new RegExp(`\\b${KEYWORD}:?\\s+${REFERENCE}`, "gi");
/** `@login` or `@org/team`, not inside a word (an e-mail address). */
const MENTION = /(^|[^A-Za-z0-9_/.@-])@([A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\/[A-Za-z0-9_.-]+)?)/g;

function isOwn(own: OwnItem, repo: string | undefined, number: number): boolean {
  return own.number === number && (repo === undefined || repo.toLowerCase() === own.repo.toLowerCase());
}

/** Code spans and fenced blocks (where GitHub neither notifies nor closes): left as they are. */
const CODE = /(`+)[\s\S]*?\1|~~~[\s\S]*?(?:~~~|$)/g;

function neutralizeProse(text: string, own: OwnItem): string {
  const closing = text.replace(CLOSING, (phrase: string, repo: string | undefined, number: string, offset: number) => {
    // a bare number is a reference only when written #N
    if (!repo && text[offset + phrase.length - number.length - 1] !== "#") return phrase;
    return isOwn(own, repo, Number(number)) ? phrase : `\`${phrase}\``;
  });
  return closing.replace(MENTION, (_all: string, before: string, name: string) => `${before}\`@${name}\``);
}

export function neutralizeAgentText(text: string, own: OwnItem): string {
  let out = "";
  let from = 0;
  for (const code of text.matchAll(CODE)) {
    out += neutralizeProse(text.slice(from, code.index), own) + code[0];
    from = code.index + code[0].length;
  }
  return out + neutralizeProse(text.slice(from), own);
}

/**
 * neutralizeAgentText, at most `max` characters: the agent's text is cut before it is neutralized,
 * so that no cut falls inside a code span it added (which would leave a mention live).
 */
export function neutralizeAgentTextWithin(text: string, own: OwnItem, max: number): string {
  const whole = neutralizeAgentText(text, own);
  if (whole.length <= max) return whole;
  // what neutralizing adds (two backticks a phrase), and room for one phrase the cut may make
  const added = whole.length - text.length + 2;
  return neutralizeAgentText(text.slice(0, Math.max(0, max - added)), own);
}
