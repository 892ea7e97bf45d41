import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { authenticate } from "./auth";
import type { SimControl } from "./control";
import { handleControl } from "./control-http";
import type { SimCore } from "./core";
import { handleGit, isGitRequest } from "./git-http";
import { handleGraphql } from "./graphql-handler";
import { redirect, sendJson } from "./http-util";
import type { FaultRule } from "./faults";
import { ManifestFlow } from "./manifest-flow";
import { OAuthServer } from "./oauth";
import { rateHeaders } from "./sim-rate-limit";
import type { RestRoute } from "./rest";
import { handleRest } from "./rest-handler";
import { pathByRepositoryName } from "./repository-id-path";
import { Router } from "./router";
import { sendSecondaryLimit } from "./secondary-limit";
import { appRoutes } from "./routes/app";
import { checkRoutes } from "./routes/checks";
import { ciRoutes } from "./routes/ci";
import { issueRoutes } from "./routes/issues";
import { labelRoutes } from "./routes/labels";
import { pullRoutes } from "./routes/pulls";
import { reactionRoutes } from "./routes/reactions";
import { reviewRoutes } from "./routes/reviews";
import { repoRoutes } from "./routes/repos";
import { gitRefRoutes } from "./routes/git-refs";
import { userRoutes } from "./routes/user";
import { itemPath } from "./web/form";

const MANIFEST_PAGE = /^\/(organizations\/[^/]+\/)?settings\/apps\/new$/;
const WEB_ITEM = /^\/([^/_][^/]*)\/([^/]+)(\/(issues|pull)\/(\d+))?\/?$/;

/** The caller's rate-limit headers, for answers that count nothing (faults, unknown routes). */
function peekRateHeaders(core: SimCore, req: IncomingMessage): Record<string, string> {
  return rateHeaders(core.rateLimits.bucket(callerKey(core, req), "core"));
}

function callerKey(core: SimCore, req: IncomingMessage): string {
  try {
    return authenticate(core.state, req.headers.authorization).key;
  } catch {
    return "anonymous"; // a bad credential reads the anonymous bucket
  }
}

function failure(core: SimCore, req: IncomingMessage, res: ServerResponse, fault: Pick<FaultRule, "status" | "retryAfter" | "limitStatus">): void {
  core.counters.injectedFailure();
  const headers = peekRateHeaders(core, req);
  if (fault.status === "secondary-rate-limit") return sendSecondaryLimit(res, headers, fault.limitStatus, fault.retryAfter);
  sendJson(res, fault.status, { message: fault.status === 500 ? "Server Error" : "Bad Gateway" }, headers);
}

/** The simulator's one HTTP server: REST and GraphQL at the root, git, OAuth, manifest, /_sim. */
export function createSimServer(core: SimCore, control: SimControl): Server {
  const router = new Router<RestRoute>();
  const oauth = new OAuthServer(core);
  const manifest = new ManifestFlow(core);
  for (const table of [appRoutes, manifest.routes(), repoRoutes, gitRefRoutes, issueRoutes, reactionRoutes, labelRoutes, reviewRoutes, pullRoutes, checkRoutes, ciRoutes, userRoutes]) {
    for (const [method, template, route] of table) router.add(method, template, route);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader("date", new Date(core.clock.now()).toUTCString());
    const url = new URL(req.url ?? "/", core.baseUrl);
    url.pathname = pathByRepositoryName(core.state, url.pathname);
    const path = url.pathname;
    const method = (req.method ?? "GET").toUpperCase();
    if (path === "/_sim" || path.startsWith("/_sim/")) return handleControl(core, control, req, res, url);
    if (path === "/login/oauth/authorize" && method === "GET") return oauth.authorize(res, url);
    if (path === "/login/oauth/access_token" && method === "POST") return oauth.accessToken(req, res, url);
    if (MANIFEST_PAGE.test(path) && (method === "GET" || method === "POST")) return manifest.newApp(req, res, url);
    const fault = core.faults.take(method, path);
    if (fault) {
      req.resume();
      return failure(core, req, res, fault);
    }
    const burst = core.secondaryLimit.trip(method, path, () => callerKey(core, req));
    if (burst) {
      req.resume();
      return failure(core, req, res, { status: "secondary-rate-limit", ...burst });
    }
    if (isGitRequest(path)) return handleGit(core, req, res, url);
    if (path === "/graphql" && method === "POST") return handleGraphql(core, req, res);
    const match = router.match(method, path);
    if (match) return handleRest(core, req, res, url, match);
    const web = method === "GET" ? WEB_ITEM.exec(path) : null;
    const webRepo = web?.[1] && web[2] ? core.state.findRepo(web[1], web[2]) : undefined;
    if (web && webRepo) {
      // html_url of a repository (the control page shows it), an issue or a pull request (its page)
      const full = core.state.fullName(webRepo);
      return redirect(res, web[5] ? itemPath(full, Number(web[5])) : `/_sim#${full}`);
    }
    req.resume();
    core.counters.unknown();
    core.unknownRequests.push({ method, path, at: new Date(core.clock.now()).toISOString() });
    console.error(`[sim] UNKNOWN ROUTE ${method} ${path}${url.search} — the GitHub simulator has no such endpoint (answered 404)`);
    sendJson(res, 404, { message: "Not Found", documentation_url: "https://docs.github.com/rest" }, peekRateHeaders(core, req));
  }

  return createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      console.error("[sim] request failed:", error);
      if (!res.headersSent) sendJson(res, 500, { message: "Simulator error" });
      else res.end();
    });
  });
}
