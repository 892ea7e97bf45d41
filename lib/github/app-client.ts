import { Probot, ProbotOctokit } from "probot";
import type { GitHubAppSettings } from "./app-settings";
import { NotFoundError } from "../errors";
import { systemClock, type Clock } from "./clock";
import { GitHubAppAuthError, httpStatusOf, InstallationUnavailableError } from "./rate-limit-errors";
import { InstallationTokens, type InstallationToken, type TokenScope } from "./installation-tokens";
import { createLog, type Log } from "./log";
import { installationCaller, RateLimits, type RateResource, type SharedRateBlocks } from "./rate-limit";

export type Octokit = InstanceType<typeof ProbotOctokit>;

/** The permissions an agent's token gets: push a branch, open or update its pull request, read issues. */
export const AGENT_TOKEN_PERMISSIONS: Readonly<Record<string, "read" | "write">> = Object.freeze({
  metadata: "read",
  contents: "write",
  pull_requests: "write",
  issues: "read",
});

/**
 * The App as Atelier uses it: Probot (App JWT, webhook verification and dispatch), an Octokit
 * per installation whose token is cached and renewed before it expires, and the rate-limit
 * gate all those requests pass.
 */
export interface GitHubApp {
  readonly settings: GitHubAppSettings;
  readonly probot: Probot;
  readonly rateLimits: RateLimits;
  readonly tokens: InstallationTokens;
  readonly clock: Clock;
  readonly log: Log;
  /** The Octokit authenticated as the App itself (JWT): /app/* routes only. */
  appOctokit(): Promise<Octokit>;
  /** An Octokit acting as the installation; its token is renewed on its own. */
  installationOctokit(installationId: number): Octokit;
  /**
   * A token limited to one repository and the permissions an agent needs (for git push and
   * the agent's own calls). Never log it.
   */
  mintRepositoryToken(installationId: number, repositoryId: number, permissions?: Record<string, "read" | "write">): Promise<InstallationToken>;
  /** When the installation may next call GitHub; null when it may now. */
  nextAllowedAt(installationId: number, resource?: RateResource): Date | null;
}

export interface GitHubAppOptions {
  clock?: Clock;
  log?: Log;
  /** Longest wait inside a request before a rate-limited call is refused instead. */
  maxRateWaitMs?: number;
  /** Rate-limit blocks shared with the instance's other processes (Redis). */
  sharedRateBlocks?: SharedRateBlocks;
}

export function createGitHubApp(settings: GitHubAppSettings, options: GitHubAppOptions = {}): GitHubApp {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLog("atelier.github");
  const probot = new Probot({
    appId: settings.appId,
    privateKey: settings.privateKey,
    secret: settings.webhookSecret,
    baseUrl: settings.baseUrl,
    log: log.child({ name: "probot" }),
  });
  const rateLimits = new RateLimits(clock, options.maxRateWaitMs, options.sharedRateBlocks);
  let appOctokitPromise: Promise<Octokit> | null = null;
  const appOctokit = () => (appOctokitPromise ??= probot.auth().then((octokit) => gate(octokit, rateLimits, "app")));

  const tokens = new InstallationTokens(async (installationId, scope) => {
    const octokit = await appOctokit();
    try {
      const { data } = await octokit.request("POST /app/installations/{installation_id}/access_tokens", {
        installation_id: installationId,
        ...(scope.repositoryIds ? { repository_ids: scope.repositoryIds } : {}),
        ...(scope.permissions ? { permissions: scope.permissions } : {}),
      });
      return { token: data.token, expiresAt: new Date(data.expires_at) };
    } catch (err) {
      throw mintError(err, settings.appId, installationId, scope);
    }
  }, clock);

  const octokits = new Map<number, Octokit>();
  const installationOctokit = (installationId: number): Octokit => {
    let octokit = octokits.get(installationId);
    if (!octokit) {
      octokit = gate(
        new ProbotOctokit({
          baseUrl: settings.baseUrl,
          log: log.child({ name: "octokit", installationId }),
          authStrategy: installationAuth,
          auth: { installationId, tokens },
          throttle: { enabled: false },
          retry: { enabled: false },
        }),
        rateLimits,
        installationCaller(installationId),
      );
      octokits.set(installationId, octokit);
    }
    return octokit;
  };

  return {
    settings,
    probot,
    rateLimits,
    tokens,
    clock,
    log,
    appOctokit,
    installationOctokit,
    mintRepositoryToken: (installationId, repositoryId, permissions = { ...AGENT_TOKEN_PERMISSIONS }) =>
      tokens.get(installationId, { repositoryIds: [repositoryId], permissions }),
    nextAllowedAt: (installationId, resource = "core") => rateLimits.nextAllowedAt(installationCaller(installationId), resource),
  };
}

interface InstallationAuthOptions {
  installationId: number;
  tokens: InstallationTokens;
}

type RequestFn = ((route: unknown, parameters?: unknown) => Promise<unknown>) & {
  endpoint: { merge(route: unknown, parameters?: unknown): { headers: Record<string, string> } & Record<string, unknown> };
};

/**
 * Octokit auth strategy: every request carries the installation's cached token; a 401 (a token
 * revoked or expired early) forgets it and tries once more with a new one.
 */
function installationAuth(options: InstallationAuthOptions) {
  const { installationId, tokens } = options;
  const auth = async () => {
    const { token, expiresAt } = await tokens.get(installationId);
    return { type: "token", tokenType: "installation", token, expiresAt: expiresAt.toISOString() };
  };
  const hook = async (request: RequestFn, route: unknown, parameters?: unknown) => {
    const endpoint = request.endpoint.merge(route, parameters);
    const send = async () => {
      const { token } = await tokens.get(installationId);
      endpoint.headers.authorization = `token ${token}`;
      return request(endpoint);
    };
    try {
      return await send();
    } catch (err) {
      if (httpStatusOf(err)?.status !== 401) throw err;
      tokens.invalidate(installationId);
      return send();
    }
  };
  return Object.assign(auth, { hook });
}

/** Puts every request of `octokit` through the rate-limit gate of `caller`. */
function gate(octokit: Octokit, rateLimits: RateLimits, caller: string): Octokit {
  octokit.hook.wrap("request", async (request, options) => {
    const resource: RateResource = String(options.url).endsWith("/graphql") ? "graphql" : "core";
    await rateLimits.admit(caller, resource);
    try {
      const response = await request(options);
      rateLimits.observe(caller, resource, response.status, response.headers as Record<string, string>);
      return response;
    } catch (err) {
      const http = httpStatusOf(err);
      if (http && http.status !== 304) {
        const limited = rateLimits.observe(caller, resource, http.status, http.headers, err instanceof Error ? err.message : "");
        if (limited) throw limited;
      } else if (http) {
        rateLimits.observe(caller, resource, http.status, http.headers);
      }
      throw err;
    }
  });
  return octokit;
}

function mintError(err: unknown, appId: number, installationId: number, scope: TokenScope): unknown {
  const http = httpStatusOf(err);
  if (!http) return err;
  const message = err instanceof Error ? err.message.split("\n")[0]! : "";
  if (http.status === 401) return new GitHubAppAuthError(appId, message);
  if (http.status === 404) return new InstallationUnavailableError(installationId, "missing");
  if (http.status === 403 && /suspend/i.test(message)) return new InstallationUnavailableError(installationId, "suspended");
  if (http.status === 422) {
    return new NotFoundError(
      "installation_token_refused",
      `GitHub refused a token for installation ${installationId} limited to ${scope.repositoryIds ? `the repositories of ids ${scope.repositoryIds.join(", ")}` : "all repositories"} with ${JSON.stringify(scope.permissions ?? {})}: ${message}. The repository must be in the installation and the App must hold those permissions (accept the new permissions in the installation's settings).`,
    );
  }
  return err;
}
