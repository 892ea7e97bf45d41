import { AtelierError, UnauthorizedError } from "../errors";
import { gitHubEnv } from "./github-env";

/**
 * The few GitHub REST calls the dashboard makes with a signed-in person's own token: which
 * installations and repositories they can see, and their role on a repository. Plain fetch:
 * three GET endpoints do not need a client library.
 */

export type RepoRole = "admin" | "maintain" | "write" | "triage" | "read" | "none";

export interface UserInstallation {
  id: number;
  account: string;
  /** GitHub's id of the installation's account (allowed_orgs is matched by it) */
  accountId: number;
  accountType: string;
}

export interface UserRepository {
  /** GitHub's id of the repository: what access is decided by (ADR 0070) */
  id: number;
  /** owner/name, lower-cased, as GitHub names it now */
  fullName: string;
  private: boolean;
  installationId: number;
}

export class GitHubUnavailableError extends AtelierError {
  constructor(message: string) {
    super("github_unavailable", message);
  }
}

const PER_PAGE = 100;
/** 10 pages of 100: more than a dashboard shows; the rest is cut, never looped forever. */
const MAX_PAGES = 10;

async function get<T>(path: string, token: string, apiUrl = gitHubEnv().apiUrl): Promise<{ status: number; body: T | null }> {
  let res: Response;
  try {
    res = await fetch(`${apiUrl}${path}`, {
      headers: {
        authorization: `Bearer ${token}`,
        accept: "application/vnd.github+json",
        "x-github-api-version": "2022-11-28",
        "user-agent": "atelier-dashboard",
      },
      signal: AbortSignal.timeout(10_000),
    });
  } catch (err) {
    throw new GitHubUnavailableError(`GitHub (${apiUrl}) did not answer: ${(err as Error).message}.`);
  }
  if (res.status === 401) {
    throw new UnauthorizedError("github_token_invalid", "GitHub no longer accepts your sign-in; sign out and sign in again.");
  }
  if (res.status >= 500) throw new GitHubUnavailableError(`GitHub answered ${res.status} to ${path.split("?")[0]}; try again shortly.`);
  const body = res.status === 204 || res.status === 404 ? null : ((await res.json().catch(() => null)) as T | null);
  return { status: res.status, body };
}

export async function listUserInstallations(token: string, apiUrl?: string): Promise<UserInstallation[]> {
  const out: UserInstallation[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const { status, body } = await get<{ total_count: number; installations: { id: number; account: { id: number; login: string; type?: string } | null }[] }>(
      `/user/installations?per_page=${PER_PAGE}&page=${page}`,
      token,
      apiUrl,
    );
    if (status !== 200 || !body) break;
    for (const i of body.installations) {
      out.push({ id: i.id, account: i.account?.login ?? String(i.id), accountId: i.account?.id ?? 0, accountType: i.account?.type ?? "Organization" });
    }
    if (body.installations.length < PER_PAGE || out.length >= body.total_count) break;
  }
  return out;
}

export async function listInstallationRepositories(token: string, installationId: number, apiUrl?: string): Promise<UserRepository[]> {
  const out: UserRepository[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const { status, body } = await get<{ total_count: number; repositories: { id: number; full_name: string; private: boolean }[] }>(
      `/user/installations/${installationId}/repositories?per_page=${PER_PAGE}&page=${page}`,
      token,
      apiUrl,
    );
    if (status !== 200 || !body) break;
    for (const r of body.repositories) out.push({ id: r.id, fullName: r.full_name.toLowerCase(), private: r.private, installationId });
    if (body.repositories.length < PER_PAGE || out.length >= body.total_count) break;
  }
  return out;
}

/**
 * The person's role on `owner/name` as GitHub reports it; "none" when GitHub hides the
 * repository from them (404) or refuses to say (403).
 */
export async function repositoryRole(token: string, fullName: string, login: string, apiUrl?: string): Promise<RepoRole> {
  const [owner = "", name = ""] = fullName.split("/");
  const { status, body } = await get<PermissionAnswer>(
    `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/collaborators/${encodeURIComponent(login)}/permission`,
    token,
    apiUrl,
  );
  if (status !== 200 || !body) return "none";
  return roleOfPermissionAnswer(body);
}

/** GET …/collaborators/{u}/permission's answer, the parts a role is read from. */
export interface PermissionAnswer {
  permission?: string;
  role_name?: string;
  user?: { permissions?: { admin?: boolean; maintain?: boolean; push?: boolean; triage?: boolean; pull?: boolean } } | null;
}

/**
 * The role of a collaborator-permission answer: its `role_name` when that is one of GitHub's
 * five; for an organization's custom role (named otherwise), the strongest of the five that
 * `user.permissions` grants, since a custom role holds every permission of the role it is based
 * on; without those, the legacy `permission` (maintain reads as write there, triage as read).
 */
export function roleOfPermissionAnswer(body: PermissionAnswer): RepoRole {
  if (!body.role_name) return normalizeRole(body.permission);
  const named = normalizeRole(body.role_name);
  if (named !== "none") return named;
  const granted = body.user?.permissions;
  if (granted) {
    const strongest = (["admin", "maintain", "push", "triage", "pull"] as const).find((p) => granted[p] === true);
    return strongest ? normalizeRole(strongest) : "none";
  }
  return normalizeRole(body.permission);
}

/** The account id of a GitHub login (GET /users/{login}), as text; null when GitHub knows no such account. */
/** The host of the GitHub API Atelier talks to (or of `apiUrl`): what an account id is an id on. */
export function gitHubHost(apiUrl = gitHubEnv().apiUrl): string {
  return new URL(apiUrl).host;
}

export async function gitHubAccountId(token: string, login: string, apiUrl?: string): Promise<string | null> {
  const { status, body } = await get<{ id?: number }>(`/users/${encodeURIComponent(login)}`, token, apiUrl);
  return status === 200 && typeof body?.id === "number" ? String(body.id) : null;
}

export function normalizeRole(value: string | undefined): RepoRole {
  switch ((value ?? "").toLowerCase()) {
    case "admin":
      return "admin";
    case "maintain":
      return "maintain";
    case "write":
    case "push":
      return "write";
    case "triage":
      return "triage";
    case "read":
    case "pull":
      return "read";
    default:
      return "none";
  }
}
