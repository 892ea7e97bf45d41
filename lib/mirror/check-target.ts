import type { RunSnapshot } from "./run-snapshot";

/**
 * Which commit a Run's check run belongs on, or null when the Run has no pull request to
 * show it on. The pull request the Run itself opened or pushed to wins (its head moves with
 * the Run's commits); otherwise a Run on a pull request keeps the head it was first shown on,
 * so a Run the pull request moved past (superseded, or still running on older content) never
 * lands on the new head beside the Run that content opened.
 */
export function checkHeadSha(
  s: Pick<RunSnapshot, "pullRequestNumber" | "headSha" | "itemKind" | "itemHeadSha">,
  shownOn: string | null,
): string | null {
  if (s.pullRequestNumber !== null && s.headSha) return s.headSha;
  if (s.itemKind === "pull_request") return shownOn ?? s.itemHeadSha;
  return null;
}
