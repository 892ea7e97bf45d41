import { createHash } from "node:crypto";
import type { RunMirror } from "../store/github/run-mirrors";
import { checkRunView, type CheckRunView } from "./check-run-view";
import { checkHeadSha } from "./check-target";
import { commentsOnItems } from "./loop-feedback";
import { runCommentBody } from "./run-comment-view";
import { isQuietEnd } from "./run-presentation";
import type { RunSnapshot } from "./run-snapshot";

/**
 * What GitHub should show of a Run, and the hashes that tell whether it already does. Pure:
 * the sync compares each hash with the last synced one and calls GitHub only for what changed.
 */
export interface MirrorPlan {
  /** The check run on the pull request's head; null when the Run has no pull request to show it on. */
  check: { sha: string; view: CheckRunView; hash: string } | null;
  /** The Run's comment on its Item; null when the Loop does not comment or there is no Item. */
  comment: { number: number; body: string; hash: string } | null;
}

export function viewHash(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 32);
}

export function planMirror(s: RunSnapshot, mirror: RunMirror, publicUrl: string): MirrorPlan {
  const sha = checkHeadSha(s, mirror.checkSha);
  // a Run the Item moved past before it ever showed stays quiet: nothing new to announce
  const check =
    sha === null || (mirror.checkRunId === null && isQuietEnd(s))
      ? null
      : (() => {
          const view = checkRunView(s, publicUrl);
          return { sha, view, hash: viewHash({ sha, view }) };
        })();
  // a comment that exists is kept up to date even if the Loop stopped commenting since
  const comment =
    s.number === null || (mirror.commentId === null && (!commentsOnItems(s.repoConfig, s.loop) || isQuietEnd(s)))
      ? null
      : (() => {
          const body = runCommentBody(s, publicUrl);
          return { number: s.number, body, hash: viewHash(body) };
        })();
  return { check, comment };
}
