import type { components } from "@octokit/openapi-types";
import type { SimLabel, SimRepo } from "../model";
import type { RenderContext } from "./context";

export function renderLabel(ctx: RenderContext, repo: SimRepo, label: SimLabel): components["schemas"]["label"] {
  return {
    id: label.id,
    node_id: label.nodeId,
    url: `${ctx.baseUrl}/repos/${ctx.state.fullName(repo)}/labels/${encodeURIComponent(label.name)}`,
    name: label.name,
    description: label.description,
    color: label.color,
    default: label.default,
  } satisfies components["schemas"]["label"];
}
