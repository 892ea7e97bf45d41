/**
 * Text from GitHub is data: what a prompt quotes of an issue, a pull request or a label must be
 * what the approver can read on GitHub. GitHub's rendering hides HTML comments and shows
 * nothing of zero-width, bidirectional-control and Unicode tag characters, so an instruction can
 * ride in them unseen. `plainText` removes all of them; it is pure, string in, string out.
 */

/**
 * Characters a reader does not see:
 * - C0/C1 controls but tab, line feed and carriage return (an ESC sequence, a NUL);
 * - zero-width and invisible format characters: soft hyphen, Mongolian vowel separator, ZWSP,
 *   ZWNJ, ZWJ, word joiner, the invisible operators, BOM / zero-width no-break space;
 * - bidirectional controls: LRM, RLM, ALM, the embeddings and overrides, the isolates;
 * - Unicode tags (U+E0000–U+E007F, "ASCII smuggling") and the variation selectors supplement
 *   (U+E0100–U+E01EF), which carry bytes no font shows.
 */
const INVISIBLE =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/gu;

/** An HTML comment, closed; or one left open, which GitHub hides to the end of the text. */
const HTML_COMMENT = /<!--[\s\S]*?(?:--!?>|$)/g;

/** The text as a person reads it on GitHub: no HTML comments, no invisible characters. */
export function plainText(text: string): string {
  let out = text.replace(INVISIBLE, "");
  // removing one comment can join the halves of another (`<!<!-- -->-- x -->`): until none is left
  for (let before = ""; before !== out; ) {
    before = out;
    out = out.replace(HTML_COMMENT, "");
  }
  return out;
}

/** Whether the text holds anything `plainText` removes. */
export function hasHiddenText(text: string): boolean {
  return plainText(text) !== text;
}

/** Every string inside a JSON-like value through `plainText` (objects and arrays copied). */
export function plainTextDeep<T>(value: T): T {
  if (typeof value === "string") return plainText(value) as T;
  if (Array.isArray(value)) return value.map((v) => plainTextDeep(v)) as T;
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = plainTextDeep(v);
    return out as T;
  }
  return value;
}
