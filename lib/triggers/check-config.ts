import { AtelierError, NotFoundError } from "../errors";
import { describeError, GitHubRequestError, httpStatusOf } from "../github/rate-limit-errors";
import type { LoopConfigError } from "../loops/config-schema";
import { audit } from "../store/people/audit-log";
import { transaction } from "../store/kernel/transaction";
import type { TriggerDeps } from "./deps";
import { loopNames, refreshRepositoryConfig } from "./repository-config";
import { polledRepository } from "../store/github/repository-rows";

export interface ConfigCheck {
  repo: string;
  readAt: string;
  /** every Loop the file lists, valid or broken */
  loops: string[];
  errors: LoopConfigError[];
}

/**
 * "Check config now": reads the repository's `.github/atelier.yml` from GitHub at once, through
 * the code a push's poll runs (refreshRepositoryConfig: the same loader, validation, broken-file
 * rule and store), audits who asked, then polls the repository now so its Loops act on what was
 * read. A GitHub failure is a 502 `github_request_failed` that names it; the stored config stays.
 */
export async function checkConfigNow(deps: TriggerDeps, fullName: string, actor: string): Promise<ConfigCheck> {
  const repo = await polledRepository(deps.db, fullName.toLowerCase());
  if (!repo) throw new NotFoundError("repository_not_found", `${fullName.toLowerCase()} is not a repository Atelier works on.`);
  let config;
  try {
    config = await refreshRepositoryConfig(deps, repo);
  } catch (err) {
    if (err instanceof AtelierError) throw err;
    const http = httpStatusOf(err);
    if (!http) throw err;
    throw new GitHubRequestError(http.status, `the contents of ${repo.fullName}`, describeError(err));
  }
  await transaction(deps.db, (sql) =>
    audit(sql, { actor, action: "check_config", repo: repo.fullName, detail: { loops: config.loops.length, errors: config.errors.length } }),
  );
  await deps.workQueue.pollNow(repo.fullName);
  return { repo: repo.fullName, readAt: config.readAt, loops: loopNames(config), errors: config.errors };
}
