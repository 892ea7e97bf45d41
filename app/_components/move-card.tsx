"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { postJson } from "./post-json";

/** Moves a Board card to another lane: the API writes the lane labels on GitHub and sends a Hint. */
export function MoveCard({ repo, number, lanes, current }: { repo: string; number: number; lanes: string[]; current: string }) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [, startTransition] = useTransition();

  async function move(lane: string) {
    if (lane === current) return;
    setBusy(true);
    setError(null);
    try {
      await postJson("/api/v1/board/move", { repo, number, lane });
      startTransition(() => router.refresh());
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
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
      {error ? (
        <p role="alert" className="mt-1 text-xs text-red-700">
          {error}
        </p>
      ) : null}
    </div>
  );
}
