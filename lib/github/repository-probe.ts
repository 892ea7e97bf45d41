import type { GitHubApp } from "./app-client";
import { GitHubRequestError } from "./rate-limit-errors";
import { installationCaller } from "./rate-limit";
import { splitRepo } from "./repo-name";

/**
 * What an open pull request's mark is made of: what changes without its `updatedAt` (GitHub
 * recomputes mergeability when the base moves). A field added here (a checks rollup, say)
 * makes a pull request whose value changed read again; keep it free of nested connections,
 * or count them in PROBE_BATCH.
 */
export const PULL_MARK_FIELDS = "number mergeable headRefOid";

/** The fields of one mark, as the probe and an Item read return them. */
export interface PullMarkNode {
  number: number;
  mergeable?: string | null;
  headRefOid?: string | null;
}

/** One open pull request's mark: equal marks mean nothing the listing cannot see changed. */
export const pullMark = (node: PullMarkNode): string => `${node.mergeable ?? "UNKNOWN"}|${node.headRefOid ?? ""}`;

/** The most a probe reads of one connection; a repository with more is always polled in full. */
const PROBE_PAGE = 100;

/**
 * Repositories per probe query. Each asks three connections (newest issue, newest pull request,
 * open pull requests): 49 × 3 = 147 requests, which GitHub's cost formula (the sum of the
 * connections' requests / 100, rounded) counts as one point.
 */
export const PROBE_BATCH = 49;

/** One repository as the probe saw it. */
export interface RepositoryProbe {
  /** updatedAt of its most recently updated issue or pull request (null when it has none) */
  newestUpdate: Date | null;
  /** mark per open pull request number; null when it has more than a probe reads */
  pullMarks: Record<string, string> | null;
}

export type ProbeResult = { probe: RepositoryProbe } | { error: GitHubRequestError };

interface ProbeNode {
  issues?: { nodes?: ({ updatedAt: string } | null)[] | null } | null;
  pullRequests?: { nodes?: ({ updatedAt: string } | null)[] | null } | null;
  open?: { totalCount: number; nodes?: (PullMarkNode | null)[] | null } | null;
}

/**
 * The change probe: one GraphQL query for up to PROBE_BATCH repositories of one installation,
 * asking each for its most recently updated issue and pull request and the marks of its open
 * pull requests. A repository whose newest update is not past its cursor and whose marks are
 * those of the last cycle needs no other call.
 * An error on one repository's alias fails only that repository.
 */
export async function probeRepositories(app: GitHubApp, installationId: number, fullNames: readonly string[]): Promise<Map<string, ProbeResult>> {
  const result = new Map<string, ProbeResult>();
  for (let i = 0; i < fullNames.length; i += PROBE_BATCH) {
    for (const [repo, probe] of await probeBatch(app, installationId, fullNames.slice(i, i + PROBE_BATCH))) result.set(repo, probe);
  }
  return result;
}

const newest = `first: 1, orderBy: { field: UPDATED_AT, direction: DESC }`;

async function probeBatch(app: GitHubApp, installationId: number, fullNames: readonly string[]): Promise<Map<string, ProbeResult>> {
  const query = [
    "query AtelierRepositoryProbe {",
    ...fullNames.map((fullName, i) => {
      const { owner, repo } = splitRepo(fullName);
      return (
        `  r${i}: repository(owner: ${JSON.stringify(owner)}, name: ${JSON.stringify(repo)}) {` +
        ` issues(${newest}) { nodes { updatedAt } } pullRequests(${newest}) { nodes { updatedAt } }` +
        ` open: pullRequests(first: ${PROBE_PAGE}, states: OPEN) { totalCount nodes { ${PULL_MARK_FIELDS} } } }`
      );
    }),
    "  rateLimit { cost remaining resetAt limit }",
    "}",
  ].join("\n");
  const response = await app.installationOctokit(installationId).request("POST /graphql", { query });
  const body = response.data as {
    data?: Record<string, ProbeNode | null> & { rateLimit?: { remaining?: number; resetAt?: string; limit?: number } };
    errors?: { type?: string; message: string; path?: (string | number)[] }[];
  };
  app.rateLimits.observeGraphqlBudget(installationCaller(installationId), body.data?.rateLimit);
  const failed = new Map<string, GitHubRequestError>();
  for (const error of body.errors ?? []) {
    const refused = new GitHubRequestError(200, "POST /graphql", `${error.type ?? "error"}: ${error.message}`);
    const alias = error.path?.[0];
    if (alias === undefined) throw refused;
    failed.set(String(alias), refused);
  }
  const out = new Map<string, ProbeResult>();
  fullNames.forEach((fullName, i) => {
    const node = body.data?.[`r${i}`];
    const error = failed.get(`r${i}`) ?? (node ? null : new GitHubRequestError(200, "POST /graphql", `no data for ${fullName}`));
    out.set(fullName.toLowerCase(), error || !node ? { error: error! } : { probe: probeOf(node) });
  });
  return out;
}

function probeOf(node: ProbeNode): RepositoryProbe {
  const stamps = [...(node.issues?.nodes ?? []), ...(node.pullRequests?.nodes ?? [])].flatMap((n) => (n ? [Date.parse(n.updatedAt)] : []));
  const open = node.open;
  return {
    newestUpdate: stamps.length ? new Date(Math.max(...stamps)) : null,
    pullMarks: open && open.totalCount <= PROBE_PAGE ? Object.fromEntries((open.nodes ?? []).flatMap((n) => (n ? [[String(n.number), pullMark(n)]] : []))) : null,
  };
}
