import type { BoardLane } from "../config/roster";
import { BadInputError, ConflictError } from "../errors";
import type { LaneRules } from "../store/reads/board-lanes";

/**
 * Pure Board lane rules. A closed or merged Item — or one whose Run's pull request was merged
 * or closed — sits in the first closed lane. An open Item whose Run is running sits in the lane
 * that follows "running", one whose Run's pull request is open in the lane that follows
 * "review" (when the instance has such lanes); else in the right-most open lane whose label it
 * carries (labels compare case-insensitively, as on GitHub), else in the first open lane
 * without a label (the catch-all). An Item no lane takes is not on the Board.
 */

/** Where an Item's work stands: its current Run, and that Run's pull request. */
export interface ItemWork {
  runRunning: boolean;
  /** The state of the Run's pull request as last seen ("open", "closed"), null without one. */
  pullRequestState: string | null;
}

export const NO_WORK: ItemWork = Object.freeze({ runRunning: false, pullRequestState: null });

export function laneRules(lanes: readonly BoardLane[]): LaneRules {
  const openCatchAll = lanes.findIndex((l) => l.state === "open" && !l.label);
  const closed = lanes.findIndex((l) => l.state === "closed");
  const following = (work: string) => {
    const i = lanes.findIndex((l) => l.state === "open" && l.follows === work);
    return i >= 0 ? i : null;
  };
  return {
    labels: lanes.map((l) => (l.state === "open" && l.label ? l.label.toLowerCase() : null)),
    openCatchAll: openCatchAll >= 0 ? openCatchAll : null,
    closed: closed >= 0 ? closed : null,
    running: following("running"),
    review: following("review"),
  };
}

/** The lane index of an Item, or null when no lane takes it (same rule as the Board's SQL). */
export function laneOf(rules: LaneRules, item: { state: string; labels: readonly string[] }, work: ItemWork = NO_WORK): number | null {
  if (item.state !== "open") return rules.closed;
  if (rules.closed !== null && work.pullRequestState !== null && work.pullRequestState !== "open") return rules.closed;
  if (rules.running !== null && work.runRunning) return rules.running;
  if (rules.review !== null && work.pullRequestState === "open") return rules.review;
  const have = new Set(item.labels.map((l) => l.toLowerCase()));
  for (let i = rules.labels.length - 1; i >= 0; i--) {
    const label = rules.labels[i];
    if (label && have.has(label)) return i;
  }
  return rules.openCatchAll;
}

/**
 * The label changes that move an open Item to `laneName`: add the lane's label, remove the
 * other lanes' labels it carries. Moving to a closed lane is refused: close the Item on GitHub.
 */
export function planMove(
  lanes: readonly BoardLane[],
  item: { state: string; labels: readonly string[] },
  laneName: string,
): { lane: BoardLane; add: string[]; remove: string[] } {
  const lane = lanes.find((l) => l.name.toLowerCase() === laneName.toLowerCase());
  if (!lane) {
    throw new BadInputError("unknown_lane", `There is no lane "${laneName}"; the lanes are ${lanes.map((l) => l.name).join(", ")}.`);
  }
  if (lane.state === "closed") {
    throw new BadInputError("lane_not_movable", `Cards reach "${lane.name}" when the Item is closed on GitHub; close it there.`);
  }
  if (item.state !== "open") {
    throw new ConflictError("item_closed", "This Item is closed on GitHub; reopen it there to move its card.");
  }
  const target = lane.label?.toLowerCase() ?? null;
  const laneLabels = new Set(lanes.filter((l) => l.label).map((l) => l.label!.toLowerCase()));
  const remove = item.labels.filter((l) => laneLabels.has(l.toLowerCase()) && l.toLowerCase() !== target);
  const has = item.labels.some((l) => l.toLowerCase() === target);
  return { lane, add: lane.label && !has ? [lane.label] : [], remove };
}
