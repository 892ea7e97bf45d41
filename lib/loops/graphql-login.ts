import type { GraphqlActor } from "./projection";

/** GraphQL names a Bot actor without the "[bot]" suffix that REST shows; add it back. */
export function graphqlLogin(actor: GraphqlActor | null | undefined): string | null {
  if (!actor?.login) return null;
  if (actor.__typename === "Bot" && !actor.login.endsWith("[bot]")) return `${actor.login}[bot]`;
  return actor.login;
}
