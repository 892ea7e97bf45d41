import { approvalSentence } from "../triggers/actor";
import { pushSentence, reviewSentence } from "../loops/steering";
import { isParkedByEngineFailures } from "../store/runs/engine-failures";
import type { RunSnapshot } from "./run-snapshot";
import { verifyMarkdown, verifyOutcomeSentence } from "../executor/verify-report";
import {
  capitalize,
  clip,
  currentAttemptNumber,
  failureSentence,
  retrySentence,
  heldReason,
  isAwaitingApproval,
  isRevoked,
  isSuperseded,
  runPageUrl,
  usageLine,
} from "./run-presentation";

/**
 * What a Run's check run says on GitHub, as a pure function of the Run: its name, status,
 * conclusion, output and action buttons. GitHub's limits (GITHUB.md) hold by construction:
 * at most 3 actions, labels ≤ 20, descriptions ≤ 40, identifiers ≤ 20 characters, a
 * details_url whenever the conclusion is action_required.
 */

export type CheckStatus = "queued" | "in_progress" | "completed";
export type CheckConclusion = "success" | "failure" | "cancelled" | "skipped" | "action_required" | "neutral";

/** The identifiers of the buttons Atelier puts on its check runs. */
export const CHECK_ACTIONS = {
  approve: { label: "Approve", description: "Let the agent start this Run", identifier: "approve" },
  retry: { label: "Retry", description: "Start the next Attempt of this Run", identifier: "retry" },
  cancel: { label: "Cancel", description: "Stop this Run", identifier: "cancel" },
} as const;

export type CheckActionId = keyof typeof CHECK_ACTIONS;
export type CheckAction = (typeof CHECK_ACTIONS)[CheckActionId];

export function isCheckActionId(s: string): s is CheckActionId {
  return Object.hasOwn(CHECK_ACTIONS, s);
}

export interface CheckRunView {
  name: string;
  status: CheckStatus;
  /** Set exactly when the status is completed. */
  conclusion: CheckConclusion | null;
  detailsUrl: string;
  /** The Run id: a check run carries it back in webhooks. */
  externalId: string;
  startedAt: string | null;
  completedAt: string | null;
  output: { title: string; summary: string };
  actions: CheckAction[];
}

/** The check run's name: `atelier / <loop>`. */
export const checkRunName = (loop: string): string => `atelier / ${loop}`;

/** GitHub's limit on output.summary. */
const SUMMARY_MAX = 65_535;

type Face = Pick<CheckRunView, "status" | "conclusion" | "output" | "actions">;

function face(s: RunSnapshot, runPage: string): Face {
  const page = `[the Run page](${runPage})`;
  switch (s.state) {
    case "Pending":
    case "Queued": {
      const held = heldReason(s);
      return {
        status: "queued",
        conclusion: null,
        output: held
          ? { title: "Held", summary: `${held} See ${page}.` }
          : { title: "Queued", summary: `The Run waits for a worker. Follow it on ${page}.` },
        actions: [CHECK_ACTIONS.cancel],
      };
    }
    case "Waiting":
      if (isAwaitingApproval(s) && isPromptClipped(s.prompt)) {
        // Approve beside a part of the prompt would approve what the approver did not see
        return {
          status: "completed",
          conclusion: "action_required",
          output: {
            title: "Waiting for approval on the Run page",
            summary: `${approvalSentence(s.loop, s.approvalReason)} **The prompt is ${s.prompt.length.toLocaleString("en-US")} characters: more than this check run can show, so it cannot be approved here.** Read the whole prompt on ${page}, and approve it there.\n\n${promptBlock(s.prompt)}`,
          },
          actions: [CHECK_ACTIONS.cancel],
        };
      }
      return isAwaitingApproval(s)
        ? {
            status: "completed",
            conclusion: "action_required",
            output: {
              title: "Waiting for approval",
              summary: `${approvalSentence(s.loop, s.approvalReason)} Someone who reaches the Loop's trigger_permission (write at least) can press Approve here or on ${page}.\n\n**${pushSentence(s.reviewReason)}**\n\n${promptBlock(s.prompt)}`,
            },
            actions: [CHECK_ACTIONS.approve, CHECK_ACTIONS.cancel],
          }
        : {
            status: "completed",
            conclusion: "action_required",
            output: { title: "Held", summary: `${heldReason(s)} See ${page}.` },
            // a Run parked by engine failures is moved again by Retry (once the cause is fixed)
            actions: isParkedByEngineFailures(s.state, s.waitingReason) ? [CHECK_ACTIONS.retry, CHECK_ACTIONS.cancel] : [CHECK_ACTIONS.cancel],
          };
    case "Running": {
      const n = currentAttemptNumber(s);
      const held = heldReason(s);
      return {
        status: "in_progress",
        conclusion: null,
        output: held
          ? { title: `Attempt ${n} held`, summary: `${held} See ${page}.` }
          : { title: `Attempt ${n}`, summary: `The agent is working (Attempt ${n}). Watch it on ${page}.` },
        actions: [CHECK_ACTIONS.cancel],
      };
    }
    case "Reviewing":
      return {
        status: "completed",
        conclusion: "action_required",
        output: {
          title: "Waiting for review",
          summary: `The agent's commits are held off every branch: no workflow has run them. ${s.reviewReason ? reviewSentence(s.reviewReason) : ""} Someone with write access reviews the diff on ${page} and presses Push (the branch and the pull request are made then, and CI runs) or Discard.`,
        },
        actions: [],
      };
    case "Succeeded": {
      const usage = usageLine(s);
      const pr = s.pullRequestNumber !== null ? ` Pull request #${s.pullRequestNumber}${s.verify && !s.verify.passed ? " (a draft)" : ""}.` : "";
      const checked = s.verify ? `\n\n${verifyMarkdown(s.verify)}` : "";
      // a green check on work that fails its repository's own check would be a lie
      const failedVerify = s.verify !== null && !s.verify.passed;
      return {
        status: "completed",
        conclusion: failedVerify ? "failure" : "success",
        output: {
          title: s.verify ? (s.verify.passed ? "Succeeded, verify passed" : "Verify failed") : "Succeeded",
          summary: `${verifyOutcomeSentence(s.verify)}${pr}${usage ? ` ${capitalize(usage)}.` : ""} Details on ${page}.${checked}`,
        },
        actions: [],
      };
    }
    case "Failed": {
      const attempt = s.latestAttempt;
      const failure = attempt?.failure;
      const what = failure ? `${failure.kind} (${failure.category})` : "Failed";
      const why = failure ? ` ${capitalize(failureSentence(failure.category))} (${retrySentence(failure.category)}); the details are on the Run page.` : "";
      const usage = usageLine(s);
      return {
        status: "completed",
        conclusion: "failure",
        output: {
          title: `Failed: ${what}`,
          summary: `Attempt ${attempt?.number ?? 1} failed with ${what}.${why}${usage ? ` ${capitalize(usage)}.` : ""}\n\nPress Retry (or Re-run) to start the next Attempt, or see ${page}.`,
        },
        actions: [CHECK_ACTIONS.retry],
      };
    }
    case "Canceled":
      if (isSuperseded(s)) {
        return {
          status: "completed",
          conclusion: "skipped",
          output: { title: "Superseded", summary: `A newer change of the item replaced this Run before it started. See ${page}.` },
          actions: [],
        };
      }
      return {
        status: "completed",
        conclusion: "cancelled",
        output: isRevoked(s)
          ? { title: "Revoked", summary: `The item no longer matches the Loop's \`if:\`, so this Run will not start. See ${page}.` }
          : { title: "Canceled", summary: `An operator canceled this Run. See ${page}.` },
        actions: [],
      };
  }
}

/** How much of the prompt the summary quotes (GitHub's summary holds 65,535 characters). */
const PROMPT_MAX = 60_000;

/** Whether the check run can show only part of the prompt (and so offers no Approve for it). */
export const isPromptClipped = (prompt: string): boolean => prompt.length > PROMPT_MAX;

/** The exact prompt, as an approver must read it: in a fence no line of it can close; a clipped one says so. */
export function promptBlock(prompt: string): string {
  const shown = prompt.slice(0, PROMPT_MAX);
  const longest = Math.max(2, ...[...shown.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  if (!isPromptClipped(prompt)) return `The agent will get exactly this prompt:\n\n${fence}text\n${prompt}\n${fence}`;
  return `The first ${PROMPT_MAX.toLocaleString("en-US")} of its ${prompt.length.toLocaleString("en-US")} characters (the rest is only on the Run page):\n\n${fence}text\n${shown}\n${fence}`;
}

/** The check run body for a Run. */
export function checkRunView(s: RunSnapshot, publicUrl: string): CheckRunView {
  const runPage = runPageUrl(publicUrl, s.id);
  const f = face(s, runPage);
  return {
    name: checkRunName(s.loop),
    status: f.status,
    conclusion: f.conclusion,
    detailsUrl: runPage,
    externalId: s.id,
    startedAt: f.status === "queued" || !s.startedAt ? null : s.startedAt.toISOString(),
    completedAt: f.status === "completed" && s.endedAt ? s.endedAt.toISOString() : null,
    output: { title: f.output.title, summary: clip(f.output.summary, SUMMARY_MAX) },
    actions: f.actions,
  };
}

/** A completed check run: GitHub keeps its conclusion, so reopening it takes a new check run. */
export const isCompletedView = (v: Pick<CheckRunView, "status">): boolean => v.status === "completed";
