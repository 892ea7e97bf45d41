import { fenced, verifyEnding } from "./verify-rounds";
import type { VerifyResult } from "./verify-spec";

/**
 * verify's result in words, the same on the check run, the tracking comment and the pull
 * request: a headline, and the last lines of its output in a fence no line of it can close.
 */

/** What an Attempt the agent finished came to, in words (the Run and its events say it too). */
export function verifyOutcomeSentence(v: VerifyResult | null): string {
  if (v === null) return "The agent succeeded; the repository declares no verify.";
  return v.passed ? "The agent succeeded and verify passed." : "The agent succeeded and verify failed.";
}

/** One line: the command and how it ended, with the rounds the agent was resumed. */
export function verifyHeadline(v: VerifyResult): string {
  const rounds = v.rounds > 1 ? ` (after ${v.rounds - 1} resumed round${v.rounds === 2 ? "" : "s"} of the agent)` : "";
  return `Verify \`${v.command.replace(/`/g, "'")}\` ${verifyEnding(v)}${rounds}.`;
}

/** The headline and the last lines of output, as Markdown. */
export function verifyMarkdown(v: VerifyResult): string {
  const lines = v.tail.trim();
  if (!lines) return verifyHeadline(v);
  return `${verifyHeadline(v)}\n\n<details${v.passed ? "" : " open"}><summary>The last lines of its output</summary>\n\n${fenced(lines)}\n\n</details>`;
}
