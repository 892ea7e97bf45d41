/**
 * A small method + path-template router. `{name}` matches one segment; a last `{name+}`
 * matches the rest of the path. Segments are URL-decoded before they reach a handler.
 */
export interface Match<H> {
  handler: H;
  template: string;
  params: Record<string, string>;
}

interface Entry<H> {
  method: string;
  template: string;
  parts: string[];
  handler: H;
}

export class Router<H> {
  private readonly entries: Entry<H>[] = [];

  add(method: string, template: string, handler: H): void {
    this.entries.push({ method: method.toUpperCase(), template, parts: template.split("/").slice(1), handler });
  }

  match(method: string, pathname: string): Match<H> | undefined {
    const segments = pathname.split("/").slice(1);
    for (const entry of this.entries) {
      if (entry.method !== method.toUpperCase()) continue;
      const params = matchParts(entry.parts, segments);
      if (params) return { handler: entry.handler, template: entry.template, params };
    }
    return undefined;
  }
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function matchParts(parts: string[], segments: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] ?? "";
    const greedy = /^\{(\w+)\+\}$/.exec(part);
    if (greedy?.[1]) {
      const rest = segments.slice(i);
      if (rest.length === 0 || rest.every((s) => s === "")) return undefined;
      params[greedy[1]] = rest.map(decode).join("/");
      return params;
    }
    const segment = segments[i];
    if (segment === undefined) return undefined;
    const param = /^\{(\w+)\}$/.exec(part);
    if (param?.[1]) {
      if (segment === "") return undefined;
      params[param[1]] = decode(segment);
    } else if (part !== segment) {
      return undefined;
    }
  }
  return segments.length === parts.length ? params : undefined;
}
