/** Per-installation tallies (key "installation:<id>", "user:<login>", "app" or "anonymous"). */
export interface CallerCounts {
  rest: number;
  notModified: number;
  graphql: number;
  git: number;
}

export interface CounterSnapshot extends CallerCounts {
  /** Requests the simulator has no route for (each also in `unknownRequests`). */
  unknown: number;
  /** Injected failures answered (failNext). */
  injectedFailures: number;
  /** "GET /repos/{owner}/{repo}/issues" → count (304s included). */
  byRoute: Record<string, number>;
  /** Same tallies split by who called. */
  byCaller: Record<string, CallerCounts>;
}

const empty = (): CallerCounts => ({ rest: 0, notModified: 0, graphql: 0, git: 0 });

/** What tests and benchmarks read: how many calls of each kind reached the simulator. */
export class RequestCounters {
  private data: CounterSnapshot = { ...empty(), unknown: 0, injectedFailures: 0, byRoute: {}, byCaller: {} };

  record(kind: keyof CallerCounts, caller: string, route?: string): void {
    this.data[kind] += 1;
    const perCaller = (this.data.byCaller[caller] ??= empty());
    perCaller[kind] += 1;
    if (route) this.data.byRoute[route] = (this.data.byRoute[route] ?? 0) + 1;
  }

  unknown(): void {
    this.data.unknown += 1;
  }

  injectedFailure(): void {
    this.data.injectedFailures += 1;
  }

  snapshot(): CounterSnapshot {
    return structuredClone(this.data);
  }

  reset(): void {
    this.data = { ...empty(), unknown: 0, injectedFailures: 0, byRoute: {}, byCaller: {} };
  }
}
