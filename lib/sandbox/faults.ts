/**
 * Failures on demand: the next N requests matching a method and a path pattern answer 500,
 * 502, or a secondary rate limit (403 or 429, with `retry-after` or — as GitHub often does —
 * without it, `x-ratelimit-remaining` still above 0).
 */
export interface FailNextInput {
  /** HTTP method, or "*" (default) for any. */
  method?: string;
  /** Path pattern: `{name}` matches one segment, `*` anything; e.g. "/repos/{owner}/{repo}/issues". */
  path: string;
  status: 500 | 502 | "secondary-rate-limit";
  count?: number;
  /** Seconds, for the secondary rate limit (default 60); null sends no `retry-after`. */
  retryAfter?: number | null;
  /** The status of the secondary rate limit: 403 (default) or 429. */
  limitStatus?: 403 | 429;
}

export interface FaultRule {
  method: string;
  pattern: RegExp;
  path: string;
  status: FailNextInput["status"];
  remaining: number;
  retryAfter: number | null;
  limitStatus: 403 | 429;
}

export function pathPattern(path: string): RegExp {
  const escaped = path
    .split(/(\{[^}]+\}|\*)/)
    .map((part) => (part === "*" ? ".*" : /^\{[^}]+\}$/.test(part) ? "[^/]+" : part.replace(/[.*+?^$()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${escaped}$`);
}

export class Faults {
  private rules: FaultRule[] = [];

  add(input: FailNextInput): void {
    if (!input.path) throw new Error("failNext needs a path pattern");
    if (![500, 502, "secondary-rate-limit"].includes(input.status)) throw new Error(`failNext status must be 500, 502 or "secondary-rate-limit", got ${String(input.status)}`);
    this.rules.push({
      method: (input.method ?? "*").toUpperCase(),
      pattern: pathPattern(input.path),
      path: input.path,
      status: input.status,
      remaining: input.count ?? 1,
      retryAfter: input.retryAfter === undefined ? 60 : input.retryAfter,
      limitStatus: input.limitStatus === 429 ? 429 : 403,
    });
  }

  /** The rule this request trips, consuming one of its count. */
  take(method: string, path: string): FaultRule | undefined {
    const rule = this.rules.find((r) => (r.method === "*" || r.method === method) && r.pattern.test(path));
    if (!rule) return undefined;
    rule.remaining -= 1;
    if (rule.remaining <= 0) this.rules = this.rules.filter((r) => r !== rule);
    return rule;
  }

  pending(): Array<Omit<FaultRule, "pattern">> {
    return this.rules.map(({ pattern: _pattern, ...rest }) => rest);
  }

  clear(): void {
    this.rules = [];
  }
}
