import type { components } from "@octokit/openapi-types";
import type { SimRepo } from "../model";
import { requirePull } from "../state/pulls";
import type { RenderContext } from "./context";

type Schemas = components["schemas"];

/** The open pull requests whose head is `headSha`, as a check run or a check suite lists them. */
export function pullRequestsFor(ctx: RenderContext, repo: SimRepo, headSha: string): Schemas["pull-request-minimal"][] {
  const repoRef = { id: repo.id, url: `${ctx.baseUrl}/repos/${ctx.state.fullName(repo)}`, name: repo.name };
  return ctx.state
    .itemsOf(repo)
    .filter((item) => item.pull && item.state === "open" && item.pull.headSha === headSha)
    .map((item) => {
      const pull = requirePull(item);
      return {
        id: pull.id,
        number: item.number,
        url: `${repoRef.url}/pulls/${item.number}`,
        head: { ref: pull.headRef, sha: pull.headSha, repo: repoRef },
        base: { ref: pull.baseRef, sha: pull.baseSha, repo: repoRef },
      };
    });
}
