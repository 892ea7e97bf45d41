import type { components } from "@octokit/openapi-types";
import { isoSeconds } from "../sim-clock";
import type { SimAccount } from "../model";
import type { RenderContext } from "./context";

type Schemas = components["schemas"];

export function renderSimpleUser(ctx: RenderContext, account: SimAccount): Schemas["simple-user"] {
  const api = `${ctx.baseUrl}/users/${account.login}`;
  return {
    login: account.login,
    id: account.id,
    node_id: account.nodeId,
    avatar_url: `${ctx.baseUrl}/_sim/avatars/${account.id}`,
    gravatar_id: "",
    url: api,
    html_url: `${ctx.baseUrl}/${account.login}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type: account.type,
    site_admin: false,
    user_view_type: "public",
  } satisfies Schemas["simple-user"];
}

export function renderPrivateUser(ctx: RenderContext, account: SimAccount): Schemas["private-user"] {
  return {
    ...renderSimpleUser(ctx, account),
    name: account.name,
    company: null,
    blog: null,
    location: null,
    email: account.email,
    hireable: null,
    bio: null,
    public_repos: 0,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: isoSeconds(account.createdAt),
    updated_at: isoSeconds(account.createdAt),
    private_gists: 0,
    total_private_repos: 0,
    owned_private_repos: 0,
    disk_usage: 0,
    collaborators: 0,
    two_factor_authentication: false,
  } satisfies Schemas["private-user"];
}
