import {
  ISSUE_PROJECTION_FIELDS,
  PULL_REQUEST_PROJECTION_FIELDS,
  type GraphqlItemNode,
  type ItemKind,
} from "../loops/projection";
import { FEEDBACK_FIELDS } from "../loops/pull-feedback";
import type { GitHubApp } from "./app-client";
import { GitHubRequestError } from "./rate-limit-errors";
import { installationCaller } from "./rate-limit";
import { splitRepo } from "./repo-name";

/** One Item to read by GraphQL. */
export interface ItemSliceRef {
  /** owner/name */
  repo: string;
  number: number;
  kind: ItemKind;
}

/** Items per GraphQL query (aliases). */
export const GRAPHQL_BATCH = 50;

interface GraphqlError {
  type?: string;
  message: string;
  path?: (string | number)[];
}

/** One Item's answer: its node (null when GitHub no longer has it), or why it could not be read. */
export type ItemSlice = { node: GraphqlItemNode | null } | { error: GitHubRequestError };

/**
 * One GraphQL query for several Items, across repositories: `r0: repository(…) { p12:
 * pullRequest(number: 12) {…} }`. An Item GitHub no longer has (NOT_FOUND on its alias) comes
 * back as a null node. An error on one alias — a repository gone from the installation, an
 * Item GitHub could not resolve — fails only the Items under that alias; only an error of
 * the whole query (no path, or an HTTP failure) fails them all.
 */
export async function fetchItemSlices(
  app: GitHubApp,
  installationId: number,
  refs: readonly ItemSliceRef[],
): Promise<Map<string, ItemSlice>> {
  const byRepo = new Map<string, ItemSliceRef[]>();
  for (const ref of refs) {
    const key = ref.repo.toLowerCase();
    const list = byRepo.get(key) ?? [];
    if (!list.some((r) => r.number === ref.number)) list.push(ref);
    byRepo.set(key, list);
  }
  const repos = [...byRepo.entries()];
  const usesIssue = refs.some((r) => r.kind === "issue");
  const usesPull = refs.some((r) => r.kind === "pull_request");
  const query = [
    "query AtelierItemSlices {",
    ...repos.map(([repo, items], i) => {
      const { owner, repo: name } = splitRepo(repo);
      const fields = items.map((r) =>
        r.kind === "issue" ? `i${r.number}: issue(number: ${r.number}) { ...IssueSlice }` : `p${r.number}: pullRequest(number: ${r.number}) { ...PullSlice }`,
      );
      return `  r${i}: repository(owner: ${JSON.stringify(owner)}, name: ${JSON.stringify(name)}) { ${fields.join(" ")} }`;
    }),
    "  rateLimit { cost remaining resetAt limit }",
    "}",
    usesIssue ? `fragment IssueSlice on Issue { ${ISSUE_PROJECTION_FIELDS} }` : "",
    usesPull ? `fragment PullSlice on PullRequest { ${PULL_REQUEST_PROJECTION_FIELDS} }` : "",
  ].join("\n");

  const octokit = app.installationOctokit(installationId);
  const response = await octokit.request("POST /graphql", { query });
  const body = response.data as { data?: Record<string, Record<string, GraphqlItemNode | null> | null> & { rateLimit?: { remaining?: number; resetAt?: string; limit?: number } }; errors?: GraphqlError[] };
  app.rateLimits.observeGraphqlBudget(installationCaller(installationId), body.data?.rateLimit);

  const missing = new Set<string>();
  const failed = new Map<string, GitHubRequestError>();
  for (const error of body.errors ?? []) {
    const path = (error.path ?? []).map(String);
    const refused = new GitHubRequestError(200, "POST /graphql", `${error.type ?? "error"}: ${error.message}`);
    if (path.length === 0) throw refused;
    // a part of the feedback GitHub would not give: the pull request is read without it
    if (path.length > 2 && FEEDBACK_FIELDS.has(path[2]!)) continue;
    if (error.type === "NOT_FOUND" && path.length === 2) missing.add(path.join("."));
    else failed.set(path.slice(0, 2).join("."), refused);
  }
  const result = new Map<string, ItemSlice>();
  repos.forEach(([repo, items], i) => {
    const node = body.data?.[`r${i}`];
    for (const ref of items) {
      const alias = `${ref.kind === "issue" ? "i" : "p"}${ref.number}`;
      const error = failed.get(`r${i}`) ?? failed.get(`r${i}.${alias}`);
      const value = node?.[alias] ?? null;
      if (error) result.set(sliceKey(repo, ref.number), { error });
      else if (value === null && !missing.has(`r${i}.${alias}`)) {
        result.set(sliceKey(repo, ref.number), { error: new GitHubRequestError(200, "POST /graphql", `no data for ${repo}#${ref.number}`) });
      } else result.set(sliceKey(repo, ref.number), { node: value });
    }
  });
  return result;
}

export const sliceKey = (repo: string, number: number): string => `${repo.toLowerCase()}#${number}`;

interface Waiter {
  ref: ItemSliceRef;
  resolve(node: GraphqlItemNode | null): void;
  reject(err: unknown): void;
}

/**
 * Coalesces Item reads of one installation into GraphQL queries of up to GRAPHQL_BATCH Items:
 * reads asked within `windowMs` of each other (several repositories polled at once, a burst
 * of Hints) share a query. A group of reads asked together is never split across queries
 * unless it is larger than a query, so groups pack whole. A read fails only with its own
 * Items' errors: another repository's in the same query leaves it whole.
 */
export class ItemSliceReader {
  private readonly pending = new Map<number, Waiter[]>();
  private readonly timers = new Map<number, { timer: NodeJS.Timeout; deadline: number }>();

  constructor(
    private readonly app: GitHubApp,
    /** Items per query */
    readonly batchSize = GRAPHQL_BATCH,
    /** How long a read waits for others to share its query (a Hint passes a shorter wait). */
    private readonly windowMs = 50,
  ) {}

  /** Reads a group of Items (null for one GitHub no longer has); `waitMs` bounds the wait for company. */
  read(installationId: number, refs: readonly ItemSliceRef[], waitMs = this.windowMs): Promise<(GraphqlItemNode | null)[]> {
    const waiters: Waiter[] = [];
    const results = refs.map((ref) => new Promise<GraphqlItemNode | null>((resolve, reject) => waiters.push({ ref, resolve, reject })));
    const queue = this.pending.get(installationId) ?? [];
    if (queue.length > 0 && distinctRefs([...queue, ...waiters]) > this.batchSize) this.flush(installationId);
    const next = [...(this.pending.get(installationId) ?? []), ...waiters];
    this.pending.set(installationId, next);
    if (distinctRefs(next) >= this.batchSize) this.flush(installationId);
    else this.flushBy(installationId, Date.now() + waitMs);
    return Promise.all(results);
  }

  /** One Item now (a Hint): shares a query only with reads already waiting. */
  async readOne(installationId: number, ref: ItemSliceRef, waitMs = 1): Promise<GraphqlItemNode | null> {
    const [node] = await this.read(installationId, [ref], waitMs);
    return node ?? null;
  }

  private flushBy(installationId: number, deadline: number): void {
    const current = this.timers.get(installationId);
    if (current && current.deadline <= deadline) return;
    if (current) clearTimeout(current.timer);
    const timer = setTimeout(() => this.flush(installationId), Math.max(0, deadline - Date.now()));
    this.timers.set(installationId, { timer, deadline });
  }

  private flush(installationId: number): void {
    const timer = this.timers.get(installationId);
    if (timer) clearTimeout(timer.timer);
    this.timers.delete(installationId);
    const waiters = this.pending.get(installationId) ?? [];
    this.pending.delete(installationId);
    for (const chunk of chunkByDistinct(waiters, this.batchSize)) {
      fetchItemSlices(this.app, installationId, chunk.map((w) => w.ref)).then(
        (slices) => {
          for (const w of chunk) {
            const slice = slices.get(sliceKey(w.ref.repo, w.ref.number));
            if (slice && "error" in slice) w.reject(slice.error);
            else w.resolve(slice?.node ?? null);
          }
        },
        (err: unknown) => {
          for (const w of chunk) w.reject(err);
        },
      );
    }
  }
}

function distinctRefs(waiters: Waiter[]): number {
  return new Set(waiters.map((w) => sliceKey(w.ref.repo, w.ref.number))).size;
}

/** Splits waiters into chunks of at most `size` distinct Items (repeats of an Item stay together). */
function chunkByDistinct(waiters: Waiter[], size: number): Waiter[][] {
  const chunks: Waiter[][] = [];
  const keysOf: Set<string>[] = [];
  const chunkOfKey = new Map<string, number>();
  for (const w of waiters) {
    const key = sliceKey(w.ref.repo, w.ref.number);
    let index = chunkOfKey.get(key);
    if (index === undefined) {
      index = chunks.length - 1;
      if (index < 0 || keysOf[index]!.size >= size) {
        chunks.push([]);
        keysOf.push(new Set());
        index = chunks.length - 1;
      }
      keysOf[index]!.add(key);
      chunkOfKey.set(key, index);
    }
    chunks[index]!.push(w);
  }
  return chunks;
}
