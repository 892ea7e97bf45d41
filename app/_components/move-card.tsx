"use client";

import { sendJson } from "./post-json";
import { useApiAction } from "./use-api-action";
import { ActionError } from "./action-error";

/** Moves a Board card to another lane: the API writes the lane labels on GitHub and sends a Hint. */
export function MoveCard({ repo, number, lanes, current }: { repo: string; number: number; lanes: string[]; current: string }) {
  const { act, busy, error } = useApiAction();

  async function move(lane: string) {
    if (lane === current) return;
    await act(async () => {
      await sendJson("/api/v1/board/move", { repo, number, lane });
    });
  }

  return (
    <div className="mt-2">
      <label className="sr-only" htmlFor={`move-${repo}-${number}`}>
        Move {repo}#{number} to lane
      </label>
      <select
        id={`move-${repo}-${number}`}
        data-testid="move-card"
        disabled={busy}
        value={current}
        onChange={(e) => move(e.target.value)}
        className="w-full rounded border border-stone-300 bg-white px-1.5 py-1 text-xs text-stone-700"
      >
        {lanes.map((l) => (
          <option key={l} value={l}>
            {l === current ? `Lane: ${l}` : `Move to ${l}`}
          </option>
        ))}
      </select>
      <ActionError error={error} className="mt-1" />
    </div>
  );
}
