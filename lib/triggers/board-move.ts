import { NotFoundError } from "../errors";
import type { GitHubApp } from "../github/app-client";
import { addLabels, removeLabel } from "../github/ensure-labels";
import { audit } from "../store/people/audit-log";
import type { Db } from "../store/kernel/db";
import { transaction } from "../store/kernel/transaction";
import type { WorkQueue } from "../work/work-queue";
import { polledRepository } from "../store/github/repository-rows";

export interface BoardMoveInput {
  repo: string;
  number: number;
  add: string[];
  remove: string[];
  actor: string;
  lane: string;
}

/**
 * A Board move: records who moved the card, writes the lane's labels on GitHub (as the
 * installation), then sends a Hint so the Item is judged now rather than at the next poll. The
 * record comes first: a poll that sees the App's label before the Hint finds who asked for it
 * (the Event's actor is the mover, not the App's bot; ADR 0009).
 */
export async function moveBoardCard(deps: { db: Db; github: GitHubApp; workQueue: WorkQueue }, move: BoardMoveInput): Promise<void> {
  const repo = await polledRepository(deps.db, move.repo);
  if (!repo) throw new NotFoundError("repository_not_polled", `${move.repo} is not in an active installation of the App.`);
  const octokit = deps.github.installationOctokit(repo.installationId);
  await transaction(deps.db, (sql) =>
    audit(sql, { actor: move.actor, action: "move_card", repo: repo.fullName, detail: { number: move.number, lane: move.lane, add: move.add, remove: move.remove } }),
  );
  await addLabels(octokit, repo.fullName, move.number, move.add);
  for (const label of move.remove) await removeLabel(octokit, repo.fullName, move.number, label);
  await deps.workQueue.hint({ installationId: repo.installationId, repo: repo.fullName, number: move.number });
}
