import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from "yaml";

/** A parsed YAML text that still knows where each value came from. */
export interface YamlWithLines {
  /** The document as plain JS; null for an empty document. */
  value: unknown;
  /** Syntax errors, one sentence each, with their 1-based line. Empty when the text parsed. */
  errors: { message: string; line: number | null }[];
  /**
   * The 1-based line of the value at `path` (for a map entry: the line of its key). A path that
   * does not exist answers with its nearest existing ancestor's line.
   */
  lineOf(path: readonly (string | number)[]): number | null;
  /** The text a scalar at `path` was written as (e.g. "000000" for a value read as the number 0). */
  sourceOf(path: readonly (string | number)[]): string | null;
}

export function parseYamlWithLines(text: string): YamlWithLines {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const lineAt = (offset: number | undefined) => (offset === undefined ? null : lineCounter.linePos(offset).line);

  const errors = doc.errors.map((err) => {
    const line = lineAt(err.pos?.[0]);
    const reason = err.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "").replace(/[.:]$/, "");
    return {
      line,
      message: `The YAML does not parse${line ? ` at line ${line}` : ""}: ${reason}. Fix the syntax (indentation, quotes, a duplicated key).`,
    };
  });

  const nodeAt = (path: readonly (string | number)[]): unknown =>
    path.length === 0 ? doc.contents : doc.getIn(path as (string | number)[], true);

  const lineOf = (path: readonly (string | number)[]): number | null => {
    if (path.length === 0) return lineAt((doc.contents as Node | null)?.range?.[0]) ?? 1;
    const parent = nodeAt(path.slice(0, -1));
    const last = path[path.length - 1];
    if (isMap(parent)) {
      const pair = parent.items.find((p) => isScalar(p.key) && String(p.key.value) === String(last));
      const keyNode = pair?.key as Node | undefined;
      const line = lineAt(keyNode?.range?.[0]) ?? lineAt((pair?.value as Node | undefined)?.range?.[0]);
      if (line !== null) return line;
    } else if (isSeq(parent) && typeof last === "number") {
      const item = parent.items[last] as Node | undefined;
      const line = lineAt(item?.range?.[0]);
      if (line !== null) return line;
    }
    return lineOf(path.slice(0, -1));
  };

  const sourceOf = (path: readonly (string | number)[]): string | null => {
    const node = nodeAt(path);
    return isScalar(node) && typeof node.source === "string" ? node.source : null;
  };

  let value: unknown = null;
  try {
    value = doc.toJS({ maxAliasCount: 100 }) ?? null;
  } catch (err) {
    errors.push({ line: null, message: `The YAML does not parse: ${err instanceof Error ? err.message : String(err)}.` });
  }
  return { value, errors, lineOf, sourceOf };
}
