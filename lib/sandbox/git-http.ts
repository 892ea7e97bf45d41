import type { IncomingMessage, ServerResponse } from "node:http";
import { relative } from "node:path";
import { canSee } from "./access";
import { GitHubApiError } from "./api-error";
import { authenticate, type Caller } from "./auth";
import { branchPushed } from "./branch-pushed";
import type { SimCore } from "./core";
import { ZERO_SHA } from "./git-repos";
import { ROLE_RANK, type SimRepo } from "./model";
import { grants } from "./state/tokens";

const GIT_PATH = /^\/([^/]+)\/([^/]+?)\.git(\/.*)?$/;

export function isGitRequest(pathname: string): boolean {
  return GIT_PATH.test(pathname);
}

function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...headers });
  res.end(`${text}\n`);
}

function challenge(res: ServerResponse, message = "Authentication required"): void {
  plain(res, 401, message, { "www-authenticate": 'Basic realm="GitHub"' });
}

/** May the caller clone (read) or push (write)? Throws the answer GitHub gives otherwise. */
function authorizeGit(core: SimCore, caller: Caller, repo: SimRepo, write: boolean): void {
  if (!canSee(core.state, caller, repo)) throw new GitHubApiError(404, "Repository not found.");
  if (caller.kind === "installation") {
    if (!grants(caller.token.permissions, "contents", write ? "write" : "read")) {
      throw new GitHubApiError(403, write ? "Write access to repository not granted." : "Read access to repository not granted.");
    }
  } else if (caller.kind === "user") {
    const role = core.state.permissionOf(repo, caller.user.id);
    if (write && ROLE_RANK[role] < ROLE_RANK.write) throw new GitHubApiError(403, "Write access to repository not granted.");
  }
}

/**
 * Git over smart HTTP under `/{owner}/{repo}.git/…`: Basic auth with a token as password
 * (`x-access-token:<token>`), then `git http-backend` as a CGI. After a push, each moved,
 * created or deleted branch updates its pull requests (head sha, `synchronize`) and sends
 * GitHub's `push` webhook.
 */
export async function handleGit(core: SimCore, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const match = GIT_PATH.exec(url.pathname);
  const [, owner = "", name = "", rest = "/"] = match ?? [];
  const service = url.searchParams.get("service") ?? rest.replace(/^\//, "");
  const write = service === "git-receive-pack";
  if (!req.headers.authorization) return challenge(res);
  let caller: Caller;
  try {
    caller = authenticate(core.state, req.headers.authorization);
  } catch (error) {
    if (error instanceof GitHubApiError && error.status === 403) return plain(res, 403, error.message);
    return challenge(res, "Invalid username or token. Password authentication is not supported for Git operations.");
  }
  if (caller.kind === "anonymous" || caller.kind === "app") return challenge(res);
  const repo = core.state.findRepo(owner, name);
  try {
    if (!repo) throw new GitHubApiError(404, "Repository not found.");
    authorizeGit(core, caller, repo, write);
  } catch (error) {
    const status = error instanceof GitHubApiError ? error.status : 500;
    return plain(res, status, error instanceof Error ? error.message : String(error));
  }
  core.counters.record("git", caller.key, `${req.method} git ${service}`);
  const pushing = write && req.method === "POST";
  const before = pushing ? await core.git.branches(repo.gitDir) : null;
  // the branches' pull requests and webhooks follow before git hears its push succeeded
  const afterPush = async (): Promise<void> => {
    if (!before) return;
    const after = await core.git.branches(repo.gitDir);
    const sender = caller.kind === "user" ? caller.user.id : core.state.app.botUserId;
    for (const [branch, sha] of after) {
      const old = before.get(branch);
      if (old !== sha) await branchPushed(core, repo, branch, old ?? ZERO_SHA, sha, sender);
    }
    for (const [branch, sha] of before) if (!after.has(branch)) await branchPushed(core, repo, branch, sha, ZERO_SHA, sender);
  };
  await runBackend(core, req, res, repo, rest, url, caller.key, afterPush);
}

function runBackend(
  core: SimCore,
  req: IncomingMessage,
  res: ServerResponse,
  repo: SimRepo,
  rest: string,
  url: URL,
  user: string,
  beforeEnd: () => Promise<void>,
): Promise<void> {
  return new Promise((resolve) => {
    const pathInfo = `/${relative(core.git.root, repo.gitDir)}${rest}`;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      GIT_PROJECT_ROOT: core.git.root,
      GIT_HTTP_EXPORT_ALL: "1",
      GIT_HTTP_MAX_REQUEST_BUFFER: "100M",
      PATH_INFO: pathInfo,
      REQUEST_METHOD: req.method ?? "GET",
      QUERY_STRING: url.search.replace(/^\?/, ""),
      CONTENT_TYPE: req.headers["content-type"] ?? "",
      REMOTE_USER: user,
      REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
      SERVER_PROTOCOL: "HTTP/1.1",
      GATEWAY_INTERFACE: "CGI/1.1",
    };
    if (req.headers["content-length"]) env.CONTENT_LENGTH = req.headers["content-length"];
    if (req.headers["content-encoding"]) env.HTTP_CONTENT_ENCODING = req.headers["content-encoding"];
    if (req.headers["git-protocol"]) env.GIT_PROTOCOL = String(req.headers["git-protocol"]);
    const child = core.processes.spawn(["http-backend"], { env, stdio: ["pipe", "pipe", "pipe"] });
    let head = Buffer.alloc(0);
    let headersSent = false;
    child.stdout?.on("data", (chunk: Buffer) => {
      if (headersSent) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const text = head.toString("latin1");
      const end = text.search(/\r?\n\r?\n/);
      if (end < 0) return;
      const separator = /\r?\n\r?\n/.exec(text.slice(end))?.[0].length ?? 2;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of text.slice(0, end).split(/\r?\n/)) {
        const colon = line.indexOf(":");
        if (colon < 0) continue;
        const key = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        if (key === "status") status = Number.parseInt(value, 10) || 200;
        else headers[key] = value;
      }
      res.writeHead(status, headers);
      headersSent = true;
      const body = head.subarray(end + separator);
      if (body.length) res.write(body);
    });
    const stderr: Buffer[] = [];
    child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.once("error", (error) => {
      if (!headersSent) plain(res, 500, `git http-backend failed: ${error.message}`);
      resolve();
    });
    child.once("close", (code) => {
      if (code !== 0) core.log(`git http-backend exited ${code}: ${Buffer.concat(stderr).toString("utf8").trim()}`);
      void beforeEnd()
        .catch((error: unknown) => core.log(`after the push: ${error instanceof Error ? error.message : String(error)}`))
        .finally(() => {
          if (!headersSent) plain(res, 500, `git http-backend exited ${code}: ${Buffer.concat(stderr).toString("utf8")}`);
          else res.end();
          resolve();
        });
    });
    child.stdin?.on("error", () => undefined);
    req.pipe(child.stdin!);
  });
}
