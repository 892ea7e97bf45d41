import type { Connection, FeedbackTools } from "./graphql-feedback";
import type { SimRepo } from "./model";

/**
 * `repository.collaborators(query:, first:)`: the repository's owner (a user owns with admin)
 * and its collaborators, each edge with its `permission` (a custom role's base) and one
 * permission source (the repository's role, named as granted: a custom role by its name).
 * `query` matches a login or name, case-insensitively, anywhere in it. An installation needs
 * metadata read.
 */

interface CollaboratorArgs extends Connection {
  query?: string | null;
}

export function collaboratorsField(t: FeedbackTools, repo: SimRepo) {
  return (args: CollaboratorArgs) => {
    t.requireRead("metadata");
    const owner = t.state.account(repo.ownerId);
    const people = [
      ...(owner.type === "User" ? [[owner, "admin"] as const] : []),
      ...[...repo.collaborators].map(([id, permission]) => [t.state.account(id), permission] as const),
    ];
    const needle = args.query?.toLowerCase() ?? "";
    const matching = people.filter(([a]) => a.login.toLowerCase().includes(needle) || (a.name ?? "").toLowerCase().includes(needle));
    const edges = t.window("collaborators", matching, args).map(([account, permission]) => ({
      cursor: account.nodeId,
      permission: permission.toUpperCase(),
      permissionSources: [{ permission: permission === "admin" ? "ADMIN" : permission === "read" || permission === "triage" ? "READ" : "WRITE", roleName: t.state.roleNameOf(repo, account.id) }],
      node: t.actor(account),
    }));
    return { edges, nodes: edges.map((e) => e.node), totalCount: matching.length, pageInfo: { hasNextPage: edges.length < matching.length, hasPreviousPage: false, startCursor: null, endCursor: null } };
  };
}
