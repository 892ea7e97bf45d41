import { notAccessibleByIntegration, notFound } from "../api-error";
import type { AccessLevel, SimIssue, SimRepo } from "../model";
import { numberParam, repoOf, type RestContext } from "../rest";
import { grants } from "../state/tokens";

/**
 * The `{issue_number}` of the route: an issue needs the App's `issues` permission, a pull
 * request `pull_requests` (either one reaches the repository). A user needs `role`.
 */
export function itemOf(ctx: RestContext, level: AccessLevel, role: "read" | "write" = level): { repo: SimRepo; item: SimIssue } {
  const repo = repoOf(ctx, { permission: ["issues", "pull_requests"], level, role });
  const item = ctx.state.item(repo, numberParam(ctx, "issue_number"));
  if (ctx.caller.kind === "installation" && !grants(ctx.caller.token.permissions, item.pull ? "pull_requests" : "issues", level)) {
    throw notAccessibleByIntegration();
  }
  return { repo, item };
}

/** The `{pull_number}` of the route, with the App's `pull_requests` permission; a user needs `role`. */
export function pullOf(ctx: RestContext, level: AccessLevel, role: "read" | "write" = level): { repo: SimRepo; item: SimIssue } {
  const repo = repoOf(ctx, { permission: "pull_requests", level, role });
  const item = ctx.state.findItem(repo, numberParam(ctx, "pull_number"));
  if (!item?.pull) throw notFound();
  return { repo, item };
}

/** An installation sees issues with `issues`, pull requests with `pull_requests`. */
export function visibleKinds(ctx: RestContext): { issues: boolean; pulls: boolean } {
  if (ctx.caller.kind !== "installation") return { issues: true, pulls: true };
  const permissions = ctx.caller.token.permissions;
  return { issues: grants(permissions, "issues", "read"), pulls: grants(permissions, "pull_requests", "read") };
}
