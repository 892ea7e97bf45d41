/** A person or a bot as GitHub's GraphQL API names the actor of an event or the author of a text. */
export interface GraphqlActor {
  __typename?: string;
  login: string;
}

/** GraphQL names a Bot actor without the "[bot]" suffix that REST shows; add it back. */
export function graphqlLogin(actor: GraphqlActor | null | undefined): string | null {
  if (!actor?.login) return null;
  if (actor.__typename === "Bot" && !actor.login.endsWith("[bot]")) return `${actor.login}[bot]`;
  return actor.login;
}
