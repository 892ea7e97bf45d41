import { feedbackMark, PULL_FEEDBACK_MARK_FIELDS, PULL_THREADS_MARK_FIELDS, threadsMark, type FeedbackMarkNode, type ThreadsMarkNode } from "../loops/pull-feedback";
import type { GitHubApp } from "./app-client";
import { GitHubRequestError, httpStatusOf } from "./rate-limit-errors";
import { installationCaller } from "./rate-limit";
import { splitRepo } from "./repo-name";

/**
 * What an open pull request's mark is made of: what changes without its `updatedAt` (GitHub
 * recomputes mergeability when the base moves; a check run, a commit status or a review
 * thread's resolution never touches the pull request): its mergeability, its head, the
 * feedback's summary (the head commit's check rollup and the review decision) and — asked apart
 * (PULL_THREADS_MARK_FIELDS), only of the pull requests a target names: those whose last read had
 * review threads, where a Loop's `if:` reads them — the threads' resolution. A field added here makes a pull request whose value changed read again;
 * keep it free of nested connections, or count them in PROBE_BATCH.
 */
export const PULL_MARK_FIELDS = `number mergeable headRefOid ${PULL_FEEDBACK_MARK_FIELDS}`;

/** The fields of one mark, as the probe and an Item read return them. */
export interface PullMarkNode extends FeedbackMarkNode, ThreadsMarkNode {
  number: number;
  mergeable?: string | null;
  headRefOid?: string | null;
}

/** One open pull request's mark: equal marks mean nothing the listing cannot see changed. */
export const pullMark = (node: PullMarkNode): string => `${node.mergeable ?? "UNKNOWN"}|${node.headRefOid ?? ""}|${feedbackMark(node)}${THREADS}${threadsMark(node)}`;

const THREADS = "|threads:";

/**
 * Whether the probe's mark of a pull request says the same as the one the cycle stored: a mark the
 * probe made without asking the threads (no threads part) leaves the stored threads part out.
 */
export const marksAgree = (probed: string | undefined, stored: string | undefined): boolean =>
  probed !== undefined && (probed.includes(THREADS) ? probed === stored : probed === stored?.split(THREADS)[0]);

/** The open pull requests whose mark counts review threads: the probe may ask their threads' resolution. */
export const pullsWithThreads = (marks: Record<string, string>): number[] =>
  Object.entries(marks)
    .filter(([, mark]) => (mark.split(THREADS)[1] ?? "") !== "")
    .map(([n]) => Number(n));

/** The most a probe reads of one connection; a repository with more is always polled in full. */
const PROBE_PAGE = 100;

/**
 * Repositories per probe query. Each asks three connections (newest issue, newest pull request,
 * open pull requests): 49 × 3 = 147 requests, which GitHub's cost formula (the sum of the
 * connections' requests / 100, rounded) counts as one point. The config files' blobs and the
 * marks' fields are no connections: they cost nothing. Each pull request whose threads are asked
 * adds one request (a hundred of them, one point).
 */
export const PROBE_BATCH = 49;

/**
 * A repository to probe, with the config files (`owner/name:path`) whose blobs say whether its
 * config changed, and the open pull requests whose review threads' resolution its marks count.
 */
export interface ProbeTarget {
  fullName: string;
  configFiles: readonly string[];
  threadPulls?: readonly number[];
}

/** One repository as the probe saw it. */
export interface RepositoryProbe {
  /** GitHub's id of the repository holding the probed name now (null when GitHub did not say) */
  repositoryId: number | null;
  /** updatedAt of its most recently updated issue or pull request (null when it has none) */
  newestUpdate: Date | null;
  /** mark per open pull request number (compare with marksAgree); null when it has more than a probe reads */
  pullMarks: Record<string, string> | null;
  /** the blob ids of its config files, one string (a file that is not there counts too) */
  configMark: string;
}

export type ProbeResult = { probe: RepositoryProbe } | { error: GitHubRequestError };

interface ProbeNode {
  databaseId?: number | null;
  issues?: { nodes?: ({ updatedAt: string } | null)[] | null } | null;
  pullRequests?: { nodes?: ({ updatedAt: string } | null)[] | null } | null;
  open?: { totalCount: number; nodes?: (PullMarkNode | null)[] | null } | null;
  /** `t<number>`: the threads of an open pull request the target names */
  [threads: `t${number}`]: ThreadsMarkNode | null | undefined;
}

type FileNode = Record<string, { oid?: string } | null> | null;

/**
 * The change probe: one GraphQL query for up to PROBE_BATCH repositories of one installation,
 * asking each for the id of the repository holding its name, its most recently updated issue
 * and pull request, the marks of its open pull requests and the blob ids of its config files. A repository whose newest update is not
 * past its cursor, whose marks are those of the last cycle and whose config files are those it
 * was read from needs no other call.
 * An error on one repository's alias fails only that repository.
 */
export async function probeRepositories(app: GitHubApp, installationId: number, targets: readonly ProbeTarget[]): Promise<Map<string, ProbeResult>> {
  const result = new Map<string, ProbeResult>();
  for (let i = 0; i < targets.length; i += PROBE_BATCH) {
    for (const [repo, probe] of await probeBatch(app, installationId, targets.slice(i, i + PROBE_BATCH))) result.set(repo, probe);
  }
  return result;
}

/**
 * GitHub's id of the repository holding `fullName` now, asked by REST (one request) when no probe
 * says it; null when the name is free (404: deleted, or renamed away with nobody taking it —
 * GitHub's REST follows a renamed repository's old name to it until then, as GraphQL does).
 */
export async function repositoryIdHolding(app: GitHubApp, installationId: number, fullName: string): Promise<number | null> {
  const { owner, repo } = splitRepo(fullName);
  try {
    return Number((await app.installationOctokit(installationId).request("GET /repos/{owner}/{repo}", { owner, repo })).data.id);
  } catch (err) {
    if (httpStatusOf(err)?.status === 404) return null;
    throw err;
  }
}

const newest = `first: 1, orderBy: { field: UPDATED_AT, direction: DESC }`;

/** `owner/name:path` → its repository and path. */
function splitFile(file: string): { repo: string; path: string } {
  const at = file.indexOf(":");
  return { repo: file.slice(0, at).toLowerCase(), path: file.slice(at + 1) };
}

async function probeBatch(app: GitHubApp, installationId: number, targets: readonly ProbeTarget[]): Promise<Map<string, ProbeResult>> {
  // each repository holding a config file once, each file once under it
  const fileRepos = new Map<string, string[]>();
  for (const file of targets.flatMap((t) => t.configFiles)) {
    const { repo, path } = splitFile(file);
    const paths = fileRepos.get(repo) ?? [];
    if (!paths.includes(path)) paths.push(path);
    fileRepos.set(repo, paths);
  }
  const fileAliases = [...fileRepos.entries()];
  const query = [
    "query AtelierRepositoryProbe {",
    ...targets.map(({ fullName, threadPulls }, i) => {
      const { owner, repo } = splitRepo(fullName);
      const threads = (threadPulls ?? []).map((n) => ` t${n}: pullRequest(number: ${n}) { ${PULL_THREADS_MARK_FIELDS} }`).join("");
      return (
        `  r${i}: repository(owner: ${JSON.stringify(owner)}, name: ${JSON.stringify(repo)}) { databaseId` +
        ` issues(${newest}) { nodes { updatedAt } } pullRequests(${newest}) { nodes { updatedAt } }` +
        ` open: pullRequests(first: ${PROBE_PAGE}, states: OPEN) { totalCount nodes { ${PULL_MARK_FIELDS} } }${threads} }`
      );
    }),
    ...fileAliases.map(([fullName, paths], i) => {
      const { owner, repo } = splitRepo(fullName);
      const blobs = paths.map((path, j) => `b${j}: object(expression: ${JSON.stringify(`HEAD:${path}`)}) { oid }`).join(" ");
      return `  f${i}: repository(owner: ${JSON.stringify(owner)}, name: ${JSON.stringify(repo)}) { ${blobs} }`;
    }),
    "  rateLimit { cost remaining resetAt limit }",
    "}",
  ].join("\n");
  const response = await app.installationOctokit(installationId).request("POST /graphql", { query });
  const body = response.data as {
    data?: Record<string, unknown> & { rateLimit?: { remaining?: number; resetAt?: string; limit?: number } };
    errors?: { type?: string; message: string; path?: (string | number)[] }[];
  };
  app.rateLimits.observeGraphqlBudget(installationCaller(installationId), body.data?.rateLimit);
  const failed = new Map<string, GitHubRequestError>();
  for (const error of body.errors ?? []) {
    const refused = new GitHubRequestError(200, "POST /graphql", `${error.type ?? "error"}: ${error.message}`);
    const alias = error.path?.[0];
    if (alias === undefined) throw refused;
    // a file's repository GitHub does not show (no `.github` repository, not installed): no file there;
    // a mark's part GitHub would not give (its permission): the mark is read without it;
    // a pull request whose threads were asked and that is gone: its mark moves, and its read says so
    if (String(alias).startsWith("f") || error.path!.some((p) => p === "headRef" || p === "reviewDecision" || /^t\d+$/.test(String(p)))) continue;
    failed.set(String(alias), refused);
  }
  const blobs = new Map<string, string>();
  fileAliases.forEach(([fullName, paths], i) => {
    const node = body.data?.[`f${i}`] as FileNode | undefined;
    paths.forEach((path, j) => blobs.set(`${fullName}:${path}`, node?.[`b${j}`]?.oid ?? ""));
  });
  const out = new Map<string, ProbeResult>();
  targets.forEach(({ fullName, configFiles }, i) => {
    const node = body.data?.[`r${i}`] as ProbeNode | null | undefined;
    const error = failed.get(`r${i}`) ?? (node ? null : new GitHubRequestError(200, "POST /graphql", `no data for ${fullName}`));
    const configMark = configFiles
      .map((file) => {
        const { repo, path } = splitFile(file);
        return `${file}=${blobs.get(`${repo}:${path}`) ?? ""}`;
      })
      .join(" ");
    out.set(fullName.toLowerCase(), error || !node ? { error: error! } : { probe: probeOf(node, configMark, new Set(targets[i]!.threadPulls ?? [])) });
  });
  return out;
}

function probeOf(node: ProbeNode, configMark: string, threadPulls: ReadonlySet<number>): RepositoryProbe {
  const stamps = [...(node.issues?.nodes ?? []), ...(node.pullRequests?.nodes ?? [])].flatMap((n) => (n ? [Date.parse(n.updatedAt)] : []));
  const open = node.open;
  return {
    repositoryId: typeof node.databaseId === "number" ? node.databaseId : null,
    newestUpdate: stamps.length ? new Date(Math.max(...stamps)) : null,
    pullMarks:
      open && open.totalCount <= PROBE_PAGE
        ? Object.fromEntries(
            (open.nodes ?? []).flatMap((n) =>
              !n ? [] : [[String(n.number), threadPulls.has(n.number) ? pullMark({ ...n, ...node[`t${n.number}`] }) : pullMark(n).split(THREADS)[0]!]],
            ),
          )
        : null,
    configMark,
  };
}
