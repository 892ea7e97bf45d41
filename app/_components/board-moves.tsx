"use client";

import {
  DndContext,
  KeyboardSensor,
  PointerSensor,
  useDraggable,
  useDroppable,
  useSensor,
  useSensors,
  type Announcements,
  type DragEndEvent,
  type UniqueIdentifier,
} from "@dnd-kit/core";
import { useState, type ReactNode } from "react";
import { ActionError } from "./action-error";
import { laneKeyboardCoordinates } from "./lane-keyboard-coordinates";
import { sendJson } from "./post-json";
import { useApiAction } from "./use-api-action";

/**
 * Drag and drop on the Board (@dnd-kit/core). A card is moved by its handle: with the mouse
 * (or a finger) dragged onto a lane, or from the keyboard — Space or Enter picks it up, the
 * arrow keys take it from lane to lane, Space or Enter drops it, Escape or Tab puts it back.
 * Nothing moves until the drop. A drop on another lane calls the same API as every move
 * (POST /api/v1/board/move: the lane's label written on GitHub, a Hint sent, the move audited),
 * and offers Undo, which moves the card back the same way. Each step is announced to screen
 * readers in words that name the card and the lane.
 */

interface CardRef {
  repo: string;
  number: number;
  lane: string;
}

interface Moved extends CardRef {
  to: string;
  undone: boolean;
}

const cardName = (c: CardRef) => `${c.repo}#${c.number}`;
const cardOf = (data: Record<string, unknown> | undefined) => data as CardRef | undefined;

const INSTRUCTIONS =
  "To move this card, press Space or Enter to pick it up, the arrow keys to take it to another lane, and Space or Enter to drop it there. Escape puts it back.";

const announcements: Announcements = {
  onDragStart: ({ active }) => {
    const card = cardOf(active.data.current);
    return card ? `Picked up ${cardName(card)}, in lane ${card.lane}.` : undefined;
  },
  onDragOver: ({ active, over }) => {
    const card = cardOf(active.data.current);
    if (!card) return undefined;
    return over ? `${cardName(card)} is over lane ${String(over.id)}.` : `${cardName(card)} is over no lane.`;
  },
  onDragEnd: ({ active, over }) => {
    const card = cardOf(active.data.current);
    if (!card) return undefined;
    return over && over.id !== card.lane ? `${cardName(card)} was dropped in lane ${String(over.id)}.` : `${cardName(card)} stays in lane ${card.lane}.`;
  },
  onDragCancel: ({ active }) => {
    const card = cardOf(active.data.current);
    return card ? `Moving ${cardName(card)} was cancelled; it stays in lane ${card.lane}.` : undefined;
  },
};

export function BoardMoves({ children }: { children: ReactNode }) {
  const { act, busy, error } = useApiAction();
  const [moved, setMoved] = useState<Moved | null>(null);
  const sensors = useSensors(
    // a click on the handle is not a drag: the pointer must travel a little first
    useSensor(PointerSensor, { activationConstraint: { distance: 6 } }),
    useSensor(KeyboardSensor, {
      coordinateGetter: laneKeyboardCoordinates,
      keyboardCodes: { start: ["Space", "Enter"], cancel: ["Escape", "Tab"], end: ["Space", "Enter"] },
    }),
  );

  async function move(card: CardRef, lane: string, then: Moved) {
    if (await act(() => sendJson("/api/v1/board/move", { repo: card.repo, number: card.number, lane }).then(() => undefined))) setMoved(then);
  }

  function onDragEnd({ active, over }: DragEndEvent) {
    const card = cardOf(active.data.current);
    if (!card || !over || over.id === card.lane || busy) return;
    const to = String(over.id as UniqueIdentifier);
    void move(card, to, { ...card, to, undone: false });
  }

  function undo() {
    if (!moved || moved.undone) return;
    void move({ ...moved, lane: moved.to }, moved.lane, { ...moved, undone: true });
  }

  return (
    <DndContext id="board-moves" sensors={sensors} onDragEnd={onDragEnd} accessibility={{ announcements, screenReaderInstructions: { draggable: INSTRUCTIONS } }}>
      {children}
      <div role="status" aria-live="polite" data-testid="move-toast" className="fixed bottom-4 left-1/2 z-20 -translate-x-1/2">
        {busy ? (
          <p className="rounded-md bg-stone-800 px-3 py-2 text-sm text-white shadow-lg">Moving…</p>
        ) : moved ? (
          <p className="flex items-center gap-3 rounded-md bg-stone-800 px-3 py-2 text-sm text-white shadow-lg">
            <span data-testid="move-done">
              {moved.undone ? `${cardName(moved)} is back in ${moved.lane}.` : `${cardName(moved)} moved to ${moved.to}.`}
            </span>
            {moved.undone ? null : (
              <button type="button" data-testid="move-undo" onClick={undo} className="rounded bg-white px-2 py-0.5 font-medium text-stone-900">
                Undo
              </button>
            )}
            <button type="button" aria-label="Dismiss" onClick={() => setMoved(null)} className="px-1 text-stone-200 hover:text-white">
              ×
            </button>
          </p>
        ) : null}
        <ActionError error={error} className="rounded-md bg-white px-3 py-2 shadow-lg" />
      </div>
    </DndContext>
  );
}

/** A lane cards can be dropped on (an open lane) — or not (the closed lane: close the Item on GitHub). */
export function LaneDrop({ name, open, className, children }: { name: string; open: boolean; className: string; children: ReactNode }) {
  const { setNodeRef, isOver } = useDroppable({ id: name, disabled: !open });
  return (
    <section ref={setNodeRef} data-testid="lane" data-lane={name} data-over={isOver ? "true" : undefined} aria-label={name} className={`${className} ${isOver ? "ring-2 ring-stone-500" : ""}`}>
      {children}
    </section>
  );
}

/** A card, with a handle that drags it when the viewer may move it. */
export function CardDrag({ card, movable, className, children }: { card: CardRef; movable: boolean; className: string; children: ReactNode }) {
  const { attributes, listeners, setNodeRef, setActivatorNodeRef, transform, isDragging } = useDraggable({
    id: cardName(card),
    data: card,
    disabled: !movable,
  });
  const style = transform ? { transform: `translate3d(${transform.x}px, ${transform.y}px, 0)` } : undefined;
  return (
    <li ref={setNodeRef} style={style} data-testid="card" data-item={cardName(card)} data-dragging={isDragging ? "true" : undefined} className={`${className} ${isDragging ? "relative z-10 shadow-lg" : ""}`}>
      {children}
      {movable ? (
        <button
          type="button"
          ref={setActivatorNodeRef}
          {...attributes}
          {...listeners}
          data-testid="move-card"
          className="mt-2 flex w-full cursor-grab touch-none items-center justify-center gap-1 rounded border border-dashed border-stone-300 py-0.5 text-xs text-stone-600 hover:bg-stone-50 active:cursor-grabbing"
        >
          <span aria-hidden>⠿</span> Drag to move<span className="sr-only"> {cardName(card)}, now in {card.lane}</span>
        </button>
      ) : null}
    </li>
  );
}
