import type { RunSnapshot } from "./run-snapshot";
import * as present from "./run-presentation";
import { verifyMarkdown } from "../executor/verify-report";

/**
 * The one comment a Run keeps on its Item, edited in place as the Run moves. Its first line is
 * a hidden marker naming the Run, so the comment can be found again after a crash between
 * creating it and storing its id.
 */

/** The hidden marker: `<!-- atelier:run:<runId> -->`. */
export const runCommentMarker = (runId: string): string => `<!-- atelier:run:${runId} -->`;

/** Whether a comment body is the comment of this Run. */
export const isRunComment = (body: string | null | undefined, runId: string): boolean =>
  typeof body === "string" && body.includes(runCommentMarker(runId));

function statusLine(s: RunSnapshot, runPage: string): string {
  switch (s.state) {
    case "Pending":
    case "Queued": {
      const held = present.heldReason(s);
      if (held) return `**Held** — ${held}`;
      return s.state === "Pending" ? `**Opened** — waiting for a worker.` : `**Queued** — waiting for a worker.`;
    }
    case "Waiting":
      return present.isAwaitingApproval(s)
        ? `**Waiting for approval** — someone who reaches the Loop's trigger_permission (write at least) can approve it on [the Run page](${runPage}).`
        : `**Held** — ${present.heldReason(s)}`;
    case "Running": {
      const held = present.heldReason(s);
      return `**Running** — Attempt ${present.currentAttemptNumber(s)}${held ? `, held: ${held}` : "."}`;
    }
    case "Reviewing":
      return `**Waiting for review** — the agent's commits are held off every branch (no CI has run them); someone with write access reviews them on [the Run page](${runPage}) and pushes or discards them.`;
    case "Succeeded": {
      const parts = [present.usageLine(s), s.pullRequestNumber !== null ? `pull request #${s.pullRequestNumber}` : null].filter(Boolean);
      const line = `**${s.verify && !s.verify.passed ? "Succeeded, verify failed" : "Succeeded"}**${parts.length ? ` — ${parts.join(" · ")}` : ""}.`;
      return s.verify ? `${line}\n\n${verifyMarkdown(s.verify)}` : line;
    }
    case "Failed": {
      const attempt = s.latestAttempt;
      const failure = attempt?.failure;
      const what = failure ? ` with ${failure.kind} (${failure.category})` : "";
      const usage = present.usageLine(s);
      const why = failure ? ` ${present.capitalize(present.failureSentence(failure.category))} (${present.retrySentence(failure.category)}); the details are on [the Run page](${runPage}).` : "";
      return `**Failed** — Attempt ${attempt?.number ?? 1} failed${what}${usage ? ` · ${usage}` : ""}.${why}`;
    }
    case "Canceled":
      if (present.isSuperseded(s)) return `**Superseded** — a newer change of this item replaced the Run before it started.`;
      if (present.isRevoked(s)) return `**Revoked** — this item no longer matches the Loop.`;
      return `**Canceled** by an operator.`;
  }
}

/** The comment's body for the Run, marker first. */
export function runCommentBody(s: RunSnapshot, publicUrl: string): string {
  const runPage = present.runPageUrl(publicUrl, s.id);
  return [
    runCommentMarker(s.id),
    `Atelier · Loop \`${s.loop}\` · [Run ${s.id.slice(0, 8)}](${runPage})`,
    "",
    statusLine(s, runPage),
  ].join("\n");
}
