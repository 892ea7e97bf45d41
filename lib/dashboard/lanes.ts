import type { BoardLane } from "../config/roster";
import { BadInputError, ConflictError } from "../errors";

/**
 * Pure Board lane rules. An open Item sits in the right-most open lane whose label it carries
 * (labels compare case-insensitively, as on GitHub), else in the first open lane without a
 * label (the catch-all); a closed or merged Item sits in the first closed lane. An Item no lane
 * takes is not on the Board.
 */

export interface LaneRules {
  /** Lower-cased label of each lane, null for lanes without one (same order as the lanes). */
  labels: (string | null)[];
  /** Index of the open catch-all lane, or null. */
  openCatchAll: number | null;
  /** Index of the closed lane, or null. */
  closed: number | null;
}

export function laneRules(lanes: readonly BoardLane[]): LaneRules {
  const openCatchAll = lanes.findIndex((l) => l.state === "open" && !l.label);
  const closed = lanes.findIndex((l) => l.state === "closed");
  return {
    labels: lanes.map((l) => (l.state === "open" && l.label ? l.label.toLowerCase() : null)),
    openCatchAll: openCatchAll >= 0 ? openCatchAll : null,
    closed: closed >= 0 ? closed : null,
  };
}

/** The lane index of an Item, or null when no lane takes it (same rule as the Board's SQL). */
export function laneOf(rules: LaneRules, item: { state: string; labels: readonly string[] }): number | null {
  if (item.state !== "open") return rules.closed;
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
