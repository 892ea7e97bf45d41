import type { operations } from "@octokit/openapi-types";
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { GitHubApiError, validationFailed } from "./api-error";
import { HOUR_MS } from "./sim-clock";
import type { SimCore } from "./core";
import { escapeHtml, page } from "./html";
import { parseBody, readRaw, redirect, sendHtml } from "./http-util";
import type { AppPermissions } from "./model";
import { renderApp } from "./render/app";
import type { RestContext, RouteTable } from "./rest";
import { param } from "./rest";

type Conversion = operations["apps/create-from-manifest"]["responses"]["201"]["content"]["application/json"];

interface Manifest {
  name?: string;
  url?: string;
  hook_attributes?: { url?: string; active?: boolean };
  redirect_url?: string;
  callback_urls?: string[];
  default_permissions?: AppPermissions;
  default_events?: string[];
}

const CODE_TTL_MS = HOUR_MS;

/**
 * The App manifest flow. `/settings/apps/new?manifest=…` (GET, or a POSTed form like GitHub's)
 * "creates" the App — the sandbox has one, so it takes the manifest's name, webhook URL,
 * callback URL, permissions and events — and redirects to `redirect_url` with `?code=`;
 * `POST /app-manifests/{code}/conversions` returns the credentials once.
 */
export class ManifestFlow {
  private readonly codes = new Map<string, number>();

  constructor(private readonly core: SimCore) {}

  async newApp(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const form = req.method === "POST" ? ((parseBody(await readRaw(req), req.headers["content-type"]) as Record<string, unknown> | undefined) ?? {}) : {};
    const rawManifest = String(form.manifest ?? url.searchParams.get("manifest") ?? "");
    const state = String(form.state ?? url.searchParams.get("state") ?? "");
    let manifest: Manifest;
    try {
      manifest = JSON.parse(rawManifest) as Manifest;
    } catch {
      return sendHtml(res, 400, page("Create GitHub App", "<p>The <code>manifest</code> parameter is not valid JSON.</p>"));
    }
    const app = this.core.state.app;
    if (manifest.name) {
      app.name = manifest.name;
      app.slug = manifest.name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || app.slug;
      this.core.state.botUser.login = `${app.slug}[bot]`;
    }
    if (manifest.hook_attributes?.url) app.webhookUrl = manifest.hook_attributes.url;
    if (manifest.callback_urls?.[0]) app.callbackUrl = manifest.callback_urls[0];
    if (manifest.default_permissions) app.permissions = { ...manifest.default_permissions };
    if (manifest.default_events) app.events = [...manifest.default_events];
    app.updatedAt = this.core.clock.now();
    const code = randomBytes(10).toString("hex");
    this.codes.set(code, this.core.clock.now() + CODE_TTL_MS);
    if (!manifest.redirect_url) {
      return sendHtml(res, 200, page("App created", `<p>Conversion code: <code>${escapeHtml(code)}</code></p>`));
    }
    const target = new URL(manifest.redirect_url);
    target.searchParams.set("code", code);
    if (state) target.searchParams.set("state", state);
    redirect(res, target.toString());
  }

  convert(ctx: RestContext) {
    const code = param(ctx, "code");
    const expiresAt = this.codes.get(code);
    this.codes.delete(code);
    if (expiresAt === undefined || expiresAt <= this.core.clock.now()) throw new GitHubApiError(404, "Not Found");
    const app = this.core.state.app;
    const integration = renderApp(ctx.render);
    if (!integration.owner) throw validationFailed([]);
    const body = {
      ...integration,
      client_id: app.clientId,
      client_secret: app.clientSecret,
      webhook_secret: app.webhookSecret,
      pem: app.privateKey,
    } satisfies Conversion;
    return { status: 201, body };
  }

  routes(): RouteTable {
    return [["POST", "/app-manifests/{code}/conversions", { auth: "none", handler: (ctx) => this.convert(ctx) }]];
  }
}
