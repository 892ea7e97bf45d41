import type { ClientRect, KeyboardCoordinateGetter } from "@dnd-kit/core";

/** Which way each arrow key goes: across the lanes side by side, or down the stacked ones (phone width). */
const DIRECTIONS: Record<string, { axis: "x" | "y"; sign: 1 | -1 }> = {
  ArrowRight: { axis: "x", sign: 1 },
  ArrowLeft: { axis: "x", sign: -1 },
  ArrowDown: { axis: "y", sign: 1 },
  ArrowUp: { axis: "y", sign: -1 },
};

const centre = (r: ClientRect) => ({ x: r.left + r.width / 2, y: r.top + r.height / 2 });

/**
 * The keyboard drag of a Board card: one arrow key takes the picked-up card to the next lane
 * that way (the nearest enabled lane whose centre lies in that direction), its top inside the
 * lane's top, rather than 25 px at a time. No lane that way: the card stays.
 */
export const laneKeyboardCoordinates: KeyboardCoordinateGetter = (event, { context: { collisionRect, droppableRects, droppableContainers } }) => {
  const direction = DIRECTIONS[event.code];
  if (!direction || !collisionRect) return undefined;
  event.preventDefault();
  const here = centre(collisionRect);
  let best: { distance: number; rect: ClientRect } | null = null;
  for (const container of droppableContainers.getEnabled()) {
    const rect = droppableRects.get(container.id);
    if (!rect) continue;
    const there = centre(rect);
    const distance = (there[direction.axis] - here[direction.axis]) * direction.sign;
    // a lane beside this one, not the one the card is over (its centre is within half a lane)
    const half = (direction.axis === "x" ? rect.width : rect.height) / 2;
    if (distance <= half) continue;
    if (!best || distance < best.distance) best = { distance, rect };
  }
  if (!best) return undefined;
  return { x: best.rect.left + (best.rect.width - collisionRect.width) / 2, y: best.rect.top + 8 };
};
