/**
 * What each figure of Insights means, as the page says it beside the figures (every figure links
 * to its definition) and docs/insights.md says it at length. The ids are the page's anchors.
 */
export const INSIGHT_DEFINITIONS = [
  {
    id: "outcome",
    term: "Outcome",
    text: "Each Run counts once, by the first that holds: its pull request was merged; it was closed unmerged; the Run Failed; it was Canceled (by an operator, superseded or revoked); its pull request is still open; it Succeeded without a pull request; else it is still in progress.",
  },
  {
    id: "range",
    term: "Range",
    text: "A Run belongs to the day and week (Monday to Sunday, UTC) its trigger was received, even when its outcome came later.",
  },
  {
    id: "merge-rate",
    term: "Merge rate",
    text: "Runs whose pull request was merged, divided by the Runs that had a pull request (merged, closed unmerged or open).",
  },
  {
    id: "trigger",
    term: "Trigger",
    text: "When Atelier recorded the Event that opened the Run: the webhook or poll that saw the match, the dispatch, or the schedule's Tick.",
  },
  {
    id: "trigger-to-start",
    term: "Trigger → agent start",
    text: "From the trigger to the first Attempt's start, over the Runs that started. It includes waiting for an approval, a quota and a free worker.",
  },
  {
    id: "trigger-to-pull-request",
    term: "Trigger → pull request",
    text: "From the trigger to when the Run first had its pull request (opened, or found and updated), over the Runs that had one.",
  },
  {
    id: "trigger-to-merge",
    term: "Trigger → merge",
    text: "From the trigger to GitHub's merge time of the Run's pull request, over the merged Runs.",
  },
  {
    id: "percentiles",
    term: "p50 / p90",
    text: "The smallest time that half (nine tenths) of the Runs took at most: a time one of them took, not an average.",
  },
  {
    id: "cost-per-merge",
    term: "Cost per merged pull request",
    text: "The cost of every Attempt of the Runs in view (failed ones included), divided by the distinct pull requests merged among them.",
  },
  {
    id: "minutes-per-merge",
    term: "Agent minutes per merged pull request",
    text: "The minutes every Attempt's agent ran, divided by the distinct pull requests merged.",
  },
  {
    id: "attempts-per-success",
    term: "Attempts per success",
    text: "The Attempts of the Runs that Succeeded, divided by those Runs: 1 means each succeeded at its first Attempt.",
  },
  {
    id: "verify-pass-rate",
    term: "Verify pass rate",
    text: "Of the Attempts whose commits the environment's verify checked, the share that passed. Repositories without verify count none.",
  },
  {
    id: "failures",
    term: "Failures by category",
    text: "Failed Attempts (retried ones included) by their failure's category.",
  },
] as const;

export type InsightTerm = (typeof INSIGHT_DEFINITIONS)[number]["id"];
