import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { repositoryIdFor } from "./seed";

/**
 * A GitHub test double over real HTTP for the calls the dashboard makes with a person's token:
 * /user, /users/{login}, /user/installations, /user/installations/{id}/repositories and the collaborator
 * permission of a repository. Any other request is recorded as unexpected (and answered 404)
 * so a test can fail on it.
 */

export interface FakeUser {
  id: number;
  login: string;
  token: string;
}

export interface FakeRepo {
  /** GitHub's id of the repository; absent: repositoryIdFor(fullName), as seedRepo registers it */
  id?: number;
  fullName: string;
  installationId: number;
  /** login → role (admin, maintain, write, triage, read); absent = no access */
  roles: Record<string, string>;
}

export class FakeGitHub {
  readonly users: FakeUser[] = [];
  readonly repos: FakeRepo[] = [];
  readonly installations = new Map<number, string>();
  readonly unexpected: string[] = [];
  readonly calls: string[] = [];
  private server: Server | null = null;
  url = "";

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      this.calls.push(`${req.method} ${url.pathname}`);
      const auth = req.headers.authorization ?? "";
      const user = this.users.find((u) => auth === `Bearer ${u.token}` || auth === `token ${u.token}`);
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.method !== "GET") return this.miss(req.method ?? "?", url.pathname, send);
      if (!user) return send(401, { message: "Bad credentials" });
      const visible = this.repos.filter((r) => r.roles[user.login]);
      let m: RegExpExecArray | null;
      if (url.pathname === "/user") return send(200, { id: user.id, login: user.login, name: user.login, avatar_url: null });
      if (url.pathname === "/user/installations") {
        const ids = [...new Set(visible.map((r) => r.installationId))];
        return send(200, {
          total_count: ids.length,
          installations: ids.map((id) => ({ id, account: { login: this.installations.get(id) ?? `acct-${id}`, type: "Organization" } })),
        });
      }
      if ((m = /^\/users\/([^/]+)$/.exec(url.pathname))) {
        const found = this.users.find((u) => u.login.toLowerCase() === decodeURIComponent(m![1]!).toLowerCase());
        return found ? send(200, { id: found.id, login: found.login, type: "User" }) : send(404, { message: "Not Found" });
      }
      if ((m = /^\/user\/installations\/(\d+)\/repositories$/.exec(url.pathname))) {
        const list = visible.filter((r) => r.installationId === Number(m![1]));
        return send(200, { total_count: list.length, repositories: list.map((r) => ({ id: r.id ?? repositoryIdFor(r.fullName), full_name: r.fullName, private: true })) });
      }
      if ((m = /^\/repos\/([^/]+)\/([^/]+)\/collaborators\/([^/]+)\/permission$/.exec(url.pathname))) {
        const repo = this.repos.find((r) => r.fullName === `${decodeURIComponent(m![1]!)}/${decodeURIComponent(m![2]!)}`.toLowerCase());
        if (!repo || !repo.roles[user.login]) return send(404, { message: "Not Found" });
        const role = repo.roles[decodeURIComponent(m[3]!)] ?? "none";
        const legacy = role === "maintain" ? "write" : role === "triage" ? "read" : role;
        return send(200, { permission: legacy, role_name: role, user: { login: decodeURIComponent(m[3]!) } });
      }
      return this.miss("GET", url.pathname, send);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  private miss(method: string, path: string, send: (s: number, b: unknown) => void) {
    this.unexpected.push(`${method} ${path}`);
    send(404, { message: "Not Found" });
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
