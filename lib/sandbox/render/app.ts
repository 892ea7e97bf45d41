import type { components } from "@octokit/openapi-types";
import { isoOrNull, isoSeconds } from "../sim-clock";
import type { SimInstallation } from "../model";
import type { RenderContext } from "./context";
import { renderSimpleUser } from "./user";

type Schemas = components["schemas"];

export function renderApp(ctx: RenderContext): NonNullable<Schemas["integration"]> {
  const app = ctx.state.app;
  return {
    id: app.id,
    slug: app.slug,
    node_id: app.nodeId,
    client_id: app.clientId,
    owner: renderSimpleUser(ctx, ctx.state.account(app.ownerId)),
    name: app.name,
    description: app.description,
    external_url: ctx.baseUrl,
    html_url: `${ctx.baseUrl}/apps/${app.slug}`,
    created_at: isoSeconds(app.createdAt),
    updated_at: isoSeconds(app.updatedAt),
    permissions: { ...app.permissions },
    events: [...app.events],
    installations_count: ctx.state.installations.size,
  } satisfies NonNullable<Schemas["integration"]>;
}

export function renderInstallation(ctx: RenderContext, installation: SimInstallation): Schemas["installation"] {
  const account = ctx.state.account(installation.accountId);
  return {
    id: installation.id,
    account: renderSimpleUser(ctx, account),
    repository_selection: installation.repositorySelection,
    access_tokens_url: `${ctx.baseUrl}/app/installations/${installation.id}/access_tokens`,
    repositories_url: `${ctx.baseUrl}/installation/repositories`,
    html_url: `${ctx.baseUrl}/${account.type === "Organization" ? `organizations/${account.login}/` : ""}settings/installations/${installation.id}`,
    app_id: ctx.state.app.id,
    client_id: ctx.state.app.clientId,
    target_id: account.id,
    target_type: account.type,
    permissions: { ...installation.permissions },
    events: [...installation.events],
    created_at: isoSeconds(installation.createdAt),
    updated_at: isoSeconds(installation.updatedAt),
    single_file_name: null,
    has_multiple_single_files: false,
    single_file_paths: [],
    app_slug: ctx.state.app.slug,
    suspended_by: installation.suspendedById === null ? null : renderSimpleUser(ctx, ctx.state.account(installation.suspendedById)),
    suspended_at: isoOrNull(installation.suspendedAt),
  } satisfies Schemas["installation"];
}
