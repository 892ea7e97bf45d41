import type { Db } from "../store/kernel/db";
import { repositoryDefaultBranch } from "../store/github/default-branches";
import type { RepositoryAccess } from "./runner-deps";

/** The branch a Run's pull request goes into: the repository's default branch, as the token's read knew it, else as stored, else main. */
export async function pullRequestBase(db: Db, repo: string, access: RepositoryAccess): Promise<string> {
  if (access.defaultBranch) return access.defaultBranch;
  return (await repositoryDefaultBranch(db, repo)) ?? "main";
}
