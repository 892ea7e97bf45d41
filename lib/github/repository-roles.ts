import { normalizeRole, type RepoRole } from "./github-user-api";
import type { GitHubApp } from "./app-client";
import { installationCaller } from "./rate-limit";
import { splitRepo } from "./repo-name";

/**
 * People's roles on repositories by GraphQL, many (person, repository) pairs in one query:
 * `q0: repository(…) { collaborators(query: "login", first: …) { edges { permission node {
 * login } } } }`. An edge's `permission` is the person's strongest of GitHub's five roles (for
 * an organization's custom role, the role it is based on, as REST's roleOfPermissionAnswer
 * reads it). GraphQL answers only for a listed collaborator; anything else — the login not
 * among the edges (a stranger, an organization's base permission, a bot), an error on the alias
 * (GitHub answers FORBIDDEN "Must have push access to view repository collaborators" to a
 * caller it will not show them), a failed query — is `undefined`, and the caller asks REST
 * (GET …/collaborators/{u}/permission). The edges' `permissionSources` are not asked: GitHub
 * shows them only to a caller that may read the organization's administration.
 */

/** Pairs per query. */
export const ROLE_BATCH = 50;
/** Edges asked per pair: `query:` matches logins and names, so a login may share its prefix with others. */
const EDGES = 10;

interface Pending {
  fullName: string;
  login: string;
  resolve(role: RepoRole | undefined): void;
}

interface CollaboratorEdge {
  permission?: string | null;
  node?: { login?: string | null } | null;
}

/**
 * How long a role read waits for company: a poll tick's repositories are polled a few at a time,
 * and their lookups come a database round or two apart.
 */
export const ACTOR_LOOKUP_WAIT_MS = 200;

/** Coalesces role reads of one installation asked within `windowMs` of each other into queries of ROLE_BATCH pairs. */
export class RepositoryRoleReader {
  private readonly waiting = new Map<number, { pairs: Pending[]; timer: NodeJS.Timeout }>();

  constructor(
    private readonly app: GitHubApp,
    private readonly windowMs = ACTOR_LOOKUP_WAIT_MS,
  ) {}

  /** The role GraphQL reports, or undefined when only REST can tell. */
  read(installationId: number, fullName: string, login: string): Promise<RepoRole | undefined> {
    return new Promise((resolve) => {
      const group = this.waiting.get(installationId) ?? { pairs: [], timer: setTimeout(() => this.send(installationId), this.windowMs) };
      this.waiting.set(installationId, group);
      group.pairs.push({ fullName, login, resolve });
      if (group.pairs.length >= ROLE_BATCH) this.send(installationId);
    });
  }

  private send(installationId: number): void {
    const group = this.waiting.get(installationId);
    if (!group) return;
    clearTimeout(group.timer);
    this.waiting.delete(installationId);
    rolesByGraphql(this.app, installationId, group.pairs).then(
      (roles) => group.pairs.forEach((p, i) => p.resolve(roles[i])),
      () => group.pairs.forEach((p) => p.resolve(undefined)),
    );
  }
}

/** One query for the pairs; each answer as the class's comment says. */
export async function rolesByGraphql(app: GitHubApp, installationId: number, pairs: readonly Pick<Pending, "fullName" | "login">[]): Promise<(RepoRole | undefined)[]> {
  const query = [
    "query AtelierRoles {",
    ...pairs.map((p, i) => {
      const { owner, repo } = splitRepo(p.fullName);
      return `  q${i}: repository(owner: ${JSON.stringify(owner)}, name: ${JSON.stringify(repo)}) { collaborators(query: ${JSON.stringify(p.login)}, first: ${EDGES}) { edges { permission node { login } } } }`;
    }),
    "  rateLimit { cost remaining resetAt limit }",
    "}",
  ].join("\n");
  const response = await app.installationOctokit(installationId).request("POST /graphql", { query });
  const body = response.data as {
    data?: Record<string, { collaborators?: { edges?: (CollaboratorEdge | null)[] | null } | null } | null> & { rateLimit?: { remaining?: number; resetAt?: string; limit?: number } };
    errors?: { path?: (string | number)[] }[];
  };
  app.rateLimits.observeGraphqlBudget(installationCaller(installationId), body.data?.rateLimit);
  const refused = new Set((body.errors ?? []).map((e) => String(e.path?.[0] ?? "")));
  return pairs.map((p, i) => {
    const alias = `q${i}`;
    if (refused.has(alias) || refused.has("")) return undefined;
    const edge = body.data?.[alias]?.collaborators?.edges?.find((e) => e?.node?.login?.toLowerCase() === p.login.toLowerCase());
    const role = normalizeRole(edge?.permission ?? undefined);
    return role === "none" ? undefined : role;
  });
}
