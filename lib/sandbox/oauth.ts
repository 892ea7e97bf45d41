import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { MINUTE_MS } from "./sim-clock";
import type { SimCore } from "./core";
import { escapeHtml, page } from "./html";
import { parseBody, readRaw, redirect, sendHtml, sendJson } from "./http-util";
import { mintUserToken } from "./state/tokens";

interface Grant {
  userId: number;
  redirectUri: string;
  expiresAt: number;
}

const CODE_TTL_MS = 10 * MINUTE_MS;

/**
 * GitHub's web OAuth flow for the dashboard. `/login/oauth/authorize` approves at once as the
 * user named by the `login` query parameter (a sandbox extension) or the default user, and
 * redirects to `redirect_uri` with `code` and `state`; `/login/oauth/access_token` trades the
 * code for a user token (JSON with `Accept: application/json`, a form otherwise, like GitHub).
 */
export class OAuthServer {
  private readonly grants = new Map<string, Grant>();

  constructor(private readonly core: SimCore) {}

  authorize(res: ServerResponse, url: URL): void {
    const { state } = this.core;
    const params = url.searchParams;
    if (params.get("client_id") !== state.app.clientId) {
      return sendHtml(res, 404, page("OAuth", `<p>The <code>client_id</code> ${escapeHtml(params.get("client_id") ?? "(none)")} is not the sandbox App's.</p>`));
    }
    const redirectUri = params.get("redirect_uri") ?? state.app.callbackUrl;
    if (!redirectUri) return sendHtml(res, 400, page("OAuth", "<p>No <code>redirect_uri</code> and the App has no callback URL.</p>"));
    const login = params.get("login") ?? state.defaultOAuthLogin;
    const user = login ? state.findAccount(login) : undefined;
    if (!user || user.type !== "User") {
      const users = [...state.accounts.values()].filter((a) => a.type === "User");
      const links = users
        .map((u) => {
          const next = new URL(url);
          next.searchParams.set("login", u.login);
          return `<li><a href="${escapeHtml(next.pathname + next.search)}">Sign in as ${escapeHtml(u.login)}</a></li>`;
        })
        .join("");
      return sendHtml(res, 200, page("Sign in to the sandbox", `<ul>${links}</ul>`));
    }
    const code = randomBytes(10).toString("hex");
    this.grants.set(code, { userId: user.id, redirectUri, expiresAt: state.clock.now() + CODE_TTL_MS });
    const target = new URL(redirectUri);
    target.searchParams.set("code", code);
    const oauthState = params.get("state");
    if (oauthState !== null) target.searchParams.set("state", oauthState);
    redirect(res, target.toString());
  }

  async accessToken(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const raw = await readRaw(req);
    const body = { ...Object.fromEntries(url.searchParams), ...((parseBody(raw, req.headers["content-type"]) as Record<string, unknown> | undefined) ?? {}) };
    const basic = /^basic\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    const [basicId, basicSecret] = basic ? Buffer.from(basic, "base64").toString("utf8").split(":") : [];
    const clientId = String(body.client_id ?? basicId ?? "");
    const clientSecret = String(body.client_secret ?? basicSecret ?? "");
    const reply = (data: Record<string, string>): void => {
      if (String(req.headers.accept ?? "").includes("json")) return sendJson(res, 200, data);
      const text = new URLSearchParams(data).toString();
      res.writeHead(200, { "content-type": "application/x-www-form-urlencoded; charset=utf-8" });
      res.end(text);
    };
    const app = this.core.state.app;
    if (clientId !== app.clientId || clientSecret !== app.clientSecret) {
      return reply({ error: "incorrect_client_credentials", error_description: "The client_id and/or client_secret passed are incorrect.", error_uri: "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#incorrect-client-credentials" });
    }
    const code = String(body.code ?? "");
    const grant = this.grants.get(code);
    this.grants.delete(code);
    if (!grant || grant.expiresAt <= this.core.clock.now()) {
      return reply({ error: "bad_verification_code", error_description: "The code passed is incorrect or expired.", error_uri: "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#bad-verification-code" });
    }
    if (body.redirect_uri !== undefined && String(body.redirect_uri) !== grant.redirectUri) {
      return reply({ error: "redirect_uri_mismatch", error_description: "The redirect_uri MUST match the registered callback URL for this application.", error_uri: "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#redirect-uri-mismatch2" });
    }
    const token = mintUserToken(this.core.state, grant.userId);
    reply({ access_token: token.token, token_type: "bearer", scope: "" });
  }
}
