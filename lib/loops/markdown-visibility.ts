import type { Nodes, Parent, Root, RootContent } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { mathFromMarkdown } from "mdast-util-math";
import { gfm } from "micromark-extension-gfm";
import { math } from "micromark-extension-math";
import { visit } from "unist-util-visit";

/**
 * What a person reads of GitHub Markdown, by its syntax tree (micromark, with GitHub's extensions
 * and math), not by patterns over the text:
 * - `visibleMarkdown` cuts what GitHub renders invisibly or not at all — link reference
 *   definitions (`[//]: # (…)`), image alt text and titles, link titles, math that hides or
 *   recolours (`\phantom`, `\color`…), and collapsed `<details>` — so an instruction cannot ride
 *   in a prompt unseen by the approver;
 * - `proseOf` is the text outside code spans, code blocks and quotes: where a mention counts.
 */

/** Math commands that draw nothing, or draw in a colour the page may hide. */
const HIDING_MATH = /\\(?:[hv]?phantom|color|textcolor|colorbox|fcolorbox|pagecolor|smash|llap|rlap|clap)\b/;

function parse(text: string): Root {
  return fromMarkdown(text, { extensions: [gfm(), math()], mdastExtensions: [gfmFromMarkdown(), mathFromMarkdown()] });
}

const start = (node: Nodes): number | undefined => node.position?.start.offset;
const end = (node: Nodes): number | undefined => node.position?.end.offset;

/** A cut of the source: [from, to) replaced by `by`. */
interface Cut {
  from: number;
  to: number;
  by: string;
}

/** The source of a parent's children, from the first to the last (a link's or an image's visible text). */
function childrenSource(text: string, node: Parent): string {
  const first = node.children[0];
  const last = node.children.at(-1);
  const from = first && start(first);
  const to = last && end(last);
  return from !== undefined && to !== undefined ? text.slice(from, to) : "";
}

/** Whether an HTML node opens a `<details>` that is not open. */
const opensCollapsed = (value: string): boolean => /^<details(?![^>]*\bopen\b)[\s>]/i.test(value.trimStart());
const closesDetails = (value: string): boolean => /<\/details\s*>\s*$/i.test(value.trimEnd());

/** The cuts of a collapsed `<details>`: from its opening HTML to its closing one, among siblings. */
function detailsCuts(parent: Parent, cuts: Cut[]): void {
  const children = parent.children as RootContent[];
  for (let i = 0; i < children.length; i++) {
    const node = children[i]!;
    if (node.type !== "html" || !opensCollapsed(node.value)) continue;
    const from = start(node);
    if (from === undefined) continue;
    // the whole block may be one HTML node (no blank line inside), or span siblings up to `</details>`
    let j = i;
    while (j < children.length && !(children[j]!.type === "html" && closesDetails((children[j] as { value: string }).value))) j++;
    const last = children[Math.min(j, children.length - 1)]!;
    const to = end(last);
    if (to !== undefined) cuts.push({ from, to, by: "" });
    i = j;
  }
}

/** What GitHub hides in the Markdown, as cuts of the source, in order and not overlapping. */
function hiddenParts(text: string): Cut[] {
  const tree = parse(text);
  const cuts: Cut[] = [];
  visit(tree, (node) => {
    const from = start(node);
    const to = end(node);
    if (from === undefined || to === undefined) return;
    switch (node.type) {
      case "definition":
        cuts.push({ from, to, by: "" });
        return "skip";
      case "image":
        if (node.alt || node.title) cuts.push({ from, to, by: `![](${node.url})` });
        return "skip";
      case "imageReference":
        if (node.alt) cuts.push({ from, to, by: "" });
        return "skip";
      case "link":
        if (node.title) cuts.push({ from, to, by: `[${childrenSource(text, node)}](${node.url})` });
        return "skip";
      case "math":
      case "inlineMath":
        if (HIDING_MATH.test(node.value)) cuts.push({ from, to, by: "" });
        return "skip";
      default:
        if ("children" in node) detailsCuts(node as Parent, cuts);
        return undefined;
    }
  });
  // outermost first; a cut inside an earlier one is part of it
  cuts.sort((a, b) => a.from - b.from || b.to - a.to);
  const kept: Cut[] = [];
  for (const cut of cuts) if (!kept.length || cut.from >= kept.at(-1)!.to) kept.push(cut);
  return kept;
}

/** The Markdown without what GitHub does not show (the text unchanged when nothing is hidden). */
export function visibleMarkdown(text: string): string {
  if (!text) return text;
  const cuts = hiddenParts(text);
  let out = "";
  let at = 0;
  for (const cut of cuts) {
    out += text.slice(at, cut.from) + cut.by;
    at = cut.to;
  }
  return out + text.slice(at);
}

/** The prose of the Markdown: its text outside code spans, code blocks, quotes, HTML and math. */
export function proseOf(text: string): string[] {
  const prose: string[] = [];
  visit(parse(text), (node) => {
    if (node.type === "code" || node.type === "inlineCode" || node.type === "blockquote" || node.type === "html" || node.type === "math" || node.type === "inlineMath") return "skip";
    if (node.type === "text") prose.push(node.value);
    return undefined;
  });
  return prose;
}

/** The fields GitHub renders as Markdown: a body (an Item's, a review's, a comment's) and a check's summary. */
const MARKDOWN_FIELDS: ReadonlySet<string> = new Set(["body", "summary"]);

/** A JSON-like value (the `item` or `comment` a prompt quotes) with each Markdown field made `visibleMarkdown`. */
export function visibleMarkdownDeep<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => visibleMarkdownDeep(v)) as T;
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = typeof v === "string" && MARKDOWN_FIELDS.has(k) ? visibleMarkdown(v) : visibleMarkdownDeep(v);
    return out as T;
  }
  return value;
}
