/**
 * Splits a stream of text chunks into lines, whatever the chunks' boundaries: `push` returns
 * the lines completed by this chunk (without their "\n"), `end` the unterminated rest. A line
 * longer than `maxLineChars` is not held back forever: it is returned cut, with `cut: true`.
 */
export interface SplitLine {
  text: string;
  /** The line was longer than the limit; this is its start. */
  cut: boolean;
}

export const MAX_LINE_CHARS = 8 * 1024 * 1024;

export class LineSplitter {
  private pending = "";
  private dropping = false;

  constructor(private readonly maxLineChars = MAX_LINE_CHARS) {}

  push(chunk: string): SplitLine[] {
    const out: SplitLine[] = [];
    let rest = chunk;
    for (;;) {
      const nl = rest.indexOf("\n");
      if (nl < 0) break;
      const piece = rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      if (this.dropping) {
        this.dropping = false;
        this.pending = "";
        continue;
      }
      out.push({ text: stripCr(this.pending + piece), cut: false });
      this.pending = "";
    }
    if (this.dropping) return out;
    this.pending += rest;
    if (this.pending.length > this.maxLineChars) {
      out.push({ text: this.pending.slice(0, this.maxLineChars), cut: true });
      this.pending = "";
      this.dropping = true;
    }
    return out;
  }

  end(): SplitLine[] {
    const rest = this.pending;
    this.pending = "";
    const wasDropping = this.dropping;
    this.dropping = false;
    return rest && !wasDropping ? [{ text: stripCr(rest), cut: false }] : [];
  }
}

function stripCr(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

/** The JSON object on a line, or null for anything else (plain text, an array, a broken line). */
export function parseJsonObject(line: string): Record<string, unknown> | null {
  const trimmed = line.trim();
  if (!trimmed.startsWith("{")) return null;
  try {
    const value: unknown = JSON.parse(trimmed);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
