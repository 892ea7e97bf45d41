import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A smart-HTTP git server over `git http-backend` for the auth tests: it demands the
 * installation token as Basic auth (x-access-token:<token>) and can be told to refuse pushes
 * (403) or to fail them (503).
 */
export interface GitHttpServer {
  /** Base URL; a repository at <projectRoot>/remote.git is <url>/remote.git. */
  url: string;
  /** Authorization headers and paths the server saw. */
  requests: { path: string; authorization: string | undefined }[];
  /** What to do with pushes (receive-pack). */
  pushMode: "ok" | "forbidden" | "unavailable";
  close(): Promise<void>;
}

export async function startGitHttpServer(projectRoot: string, token: string): Promise<GitHttpServer> {
  const expected = `Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
  const state: GitHttpServer = { url: "", requests: [], pushMode: "ok", close: async () => undefined };
  const server: Server = createServer((req: IncomingMessage, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    state.requests.push({ path: `${url.pathname}${url.search}`, authorization: req.headers.authorization });
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="git"' }).end();
      return;
    }
    const isPush = url.pathname.endsWith("/git-receive-pack") || url.searchParams.get("service") === "git-receive-pack";
    if (isPush && state.pushMode === "forbidden") {
      res.writeHead(403).end("Permission denied");
      return;
    }
    if (isPush && state.pushMode === "unavailable") {
      res.writeHead(503).end("try later");
      return;
    }
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      GIT_PROJECT_ROOT: projectRoot,
      GIT_HTTP_EXPORT_ALL: "1",
      REMOTE_USER: "x-access-token",
      REMOTE_ADDR: "127.0.0.1",
      PATH_INFO: url.pathname,
      QUERY_STRING: url.search.slice(1),
      REQUEST_METHOD: req.method ?? "GET",
      CONTENT_TYPE: req.headers["content-type"] ?? "",
    };
    if (req.headers["content-encoding"]) env.HTTP_CONTENT_ENCODING = req.headers["content-encoding"];
    if (req.headers["git-protocol"]) env.GIT_PROTOCOL = String(req.headers["git-protocol"]);
    if (req.headers["content-length"]) env.CONTENT_LENGTH = req.headers["content-length"];
    const cgi = spawn("git", ["http-backend"], { env, stdio: ["pipe", "pipe", "ignore"] });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on("data", (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
        const colon = line.indexOf(":");
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number(value.split(" ")[0]);
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    cgi.stdout.on("end", () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => new Promise((resolve) => server.close(() => resolve()));
  return state;
}
