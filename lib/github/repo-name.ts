import { BadInputError } from "../errors";

/** "owner/name" → its parts; the case GitHub reported is kept, comparisons lower-case it. */
export function splitRepo(fullName: string): { owner: string; repo: string } {
  const [owner, repo, ...rest] = fullName.split("/");
  if (!owner || !repo || rest.length) {
    throw new BadInputError("repository_name_invalid", `"${fullName}" is not a repository name: write owner/name.`);
  }
  return { owner, repo };
}
