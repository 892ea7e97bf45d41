import { TRANSITIONS } from "../../engine/run-state";
import { ConflictError } from "../../errors";
import type { ChangedFile } from "../../executor/held-diff";
import type { HarvestCommit } from "../../executor/harvest";
import type { Db } from "../kernel/db";
import { audit } from "../people/audit-log";
import { first, query, sql, type Queryable, type Statement } from "../kernel/sql";
import { transaction, type Sql } from "../kernel/transaction";
import { guardedRunUpdate, lockRun, type RunRow } from "./run-rows";

/**
 * The commits of a Reviewing Run (ADR 0058): where they are held on GitHub (a ref no workflow
 * starts for), the branch they are for and its sha when the Attempt began (the push's lease),
 * and what the reviewer reads — the files, the bounded patch. Written with the outcome that
 * holds them; gone when a writer pushes or discards them, each in the transaction of its move.
 */

export interface HeldCommits {
  attemptId: string;
  ref: string;
  branch: string;
  branchSha: string | null;
  baseSha: string;
  headSha: string;
  commits: HarvestCommit[];
  files: ChangedFile[];
  /** more files changed than `files` lists */
  filesCut: boolean;
  patch: string;
  patchCut: boolean;
  pullRequestTitle: string | null;
  pullRequestBody: string;
}

/** The ref a Run's commits are held under: outside refs/heads and refs/tags, so no workflow starts. */
export const heldRefOf = (runId: string): string => `refs/atelier/held/${runId}`;

/** The insert of a Run's held commits, in the statement group of the outcome that holds them. */
export function insertHeldCommitsSql(runId: string, h: HeldCommits): Statement {
  return sql`INSERT INTO held_commits (run_id, attempt_id, ref, branch, branch_sha, base_sha, head_sha, commits, files, patch, patch_cut,
                                       pull_request_title, pull_request_body)
     VALUES (${runId}, ${h.attemptId}, ${h.ref}, ${h.branch}, ${h.branchSha}, ${h.baseSha}, ${h.headSha}, ${JSON.stringify(h.commits)}::jsonb,
             ${JSON.stringify({ list: h.files, cut: h.filesCut })}::jsonb, ${h.patch}, ${h.patchCut}, ${h.pullRequestTitle}, ${h.pullRequestBody})
     ON CONFLICT (run_id) DO UPDATE SET attempt_id = EXCLUDED.attempt_id, ref = EXCLUDED.ref, branch = EXCLUDED.branch, branch_sha = EXCLUDED.branch_sha,
       base_sha = EXCLUDED.base_sha, head_sha = EXCLUDED.head_sha, commits = EXCLUDED.commits, files = EXCLUDED.files, patch = EXCLUDED.patch,
       patch_cut = EXCLUDED.patch_cut, pull_request_title = EXCLUDED.pull_request_title, pull_request_body = EXCLUDED.pull_request_body, created_at = now()`;
}

interface HeldRow {
  attempt_id: string;
  ref: string;
  branch: string;
  branch_sha: string | null;
  base_sha: string;
  head_sha: string;
  commits: HarvestCommit[];
  files: { list: ChangedFile[]; cut: boolean };
  patch: string;
  patch_cut: boolean;
  pull_request_title: string | null;
  pull_request_body: string;
}

const heldOf = (r: HeldRow): HeldCommits => ({
  attemptId: r.attempt_id,
  ref: r.ref,
  branch: r.branch,
  branchSha: r.branch_sha,
  baseSha: r.base_sha,
  headSha: r.head_sha,
  commits: r.commits,
  files: r.files.list,
  filesCut: r.files.cut,
  patch: r.patch,
  patchCut: r.patch_cut,
  pullRequestTitle: r.pull_request_title,
  pullRequestBody: r.pull_request_body,
});

async function heldRow(q: Queryable, runId: string): Promise<HeldCommits | null> {
  const row = await first<HeldRow>(q, sql`SELECT * FROM held_commits WHERE run_id = ${runId}`);
  return row ? heldOf(row) : null;
}

/** The held commits of a Run, or null when it holds none. */
export const readHeldCommits = (db: Db, runId: string): Promise<HeldCommits | null> => heldRow(db.pool, runId);

/** A Reviewing Run, locked, with its held commits; 409 when it is not Reviewing. */
async function lockReviewing(tx: Sql, runId: string, action: string): Promise<{ run: RunRow; held: HeldCommits }> {
  const run = await lockRun(tx, runId);
  const held = run.state === "Reviewing" ? await heldRow(tx, runId) : null;
  if (!held) {
    throw new ConflictError("run_state_conflict", `Cannot ${action} a Run that is ${run.state}; only a Run whose commits wait for review can.`, {
      state: run.state,
      allowed: ["Reviewing"],
    });
  }
  return { run, held };
}

/** Where the pushed commits went: their branch, and the pull request opened or updated for them (null: GitHub had nothing to propose). */
export interface Pushed {
  branch: string;
  headSha: string;
  pullRequestNumber: number | null;
}

/**
 * A writer pushes the held commits: under the Run's row lock (a second press, or a Discard,
 * waits and then finds the Run moved on), `publish` creates the branch and the pull request on
 * GitHub; then Reviewing → Succeeded with them, the held commits forgotten, the push audited.
 * A failing `publish` changes nothing here.
 */
export async function pushReviewedRun(db: Db, runId: string, actor: string, publish: (run: RunRow, held: HeldCommits) => Promise<Pushed>): Promise<RunRow> {
  return transaction(db, async (tx) => {
    const { run, held } = await lockReviewing(tx, runId, "push the commits of");
    const pushed = await publish(run, held);
    const moved = await guardedRunUpdate(
      tx,
      runId,
      TRANSITIONS.pushReviewed,
      sql`ended_at = now(), branch = ${pushed.branch}, head_sha = ${pushed.headSha},
          pull_request_number = COALESCE(${pushed.pullRequestNumber}::int, pull_request_number)`,
      "push the commits of",
    );
    await query(tx, sql`DELETE FROM held_commits WHERE run_id = ${runId}`);
    await audit(tx, { actor, action: "push_reviewed", repo: run.repo, runId, detail: { branch: pushed.branch, head: pushed.headSha, pullRequest: pushed.pullRequestNumber } });
    return moved;
  });
}

/**
 * A writer discards the held commits: under the Run's row lock, `drop` deletes the held ref on
 * GitHub; then Reviewing → Canceled (by that writer), the held commits forgotten, audited.
 */
export async function discardReviewedRun(db: Db, runId: string, actor: string, drop: (run: RunRow, held: HeldCommits) => Promise<void>): Promise<RunRow> {
  return transaction(db, async (tx) => {
    const { run, held } = await lockReviewing(tx, runId, "discard the commits of");
    await drop(run, held);
    const moved = await guardedRunUpdate(tx, runId, TRANSITIONS.discardReviewed, sql`cancel_reason = 'OperatorCanceled', ended_at = now()`, "discard the commits of");
    await query(tx, sql`DELETE FROM held_commits WHERE run_id = ${runId}`);
    await audit(tx, { actor, action: "discard_reviewed", repo: run.repo, runId, detail: { head: held.headSha } });
    return moved;
  });
}
