"use client";

import { useState, type FormEvent } from "react";
import { ActionError } from "./action-error";
import { sendJson } from "./post-json";
import { useApiAction } from "./use-api-action";

/** "Run Loop X on #N now": the number of an issue or pull request, then the Run's link. */
export function DispatchForm({ repo, loop }: { repo: string; loop: string }) {
  const { act, busy, error } = useApiAction();
  const [number, setNumber] = useState("");
  const [run, setRun] = useState<{ id: string } | null>(null);
  const id = `dispatch-${repo}-${loop}`.replace(/[^a-z0-9-]/gi, "-");
  function onSubmit(e: FormEvent) {
    e.preventDefault();
    setRun(null);
    void act(async () => {
      const answer = (await sendJson("/api/v1/loops/dispatch", { repo, loop, number: Number(number) })) as { run?: { id: string } };
      setRun(answer.run ?? null);
    });
  }
  return (
    <form onSubmit={onSubmit} className="flex flex-wrap items-center gap-2" data-testid="dispatch-form">
      <label className="text-sm" htmlFor={id}>
        Run on #
      </label>
      <input
        id={id}
        inputMode="numeric"
        pattern="[0-9]+"
        required
        value={number}
        onChange={(e) => setNumber(e.target.value)}
        className="w-20 rounded border border-stone-300 bg-white px-2 py-1 text-sm"
      />
      <button type="submit" disabled={busy} className="rounded-md bg-emerald-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-emerald-800 disabled:bg-emerald-400">
        {busy ? "Starting…" : "Run now"}
      </button>
      {run ? (
        <a href={`/runs/${run.id}`} className="text-sm text-emerald-800 underline" data-testid="dispatched-run">
          Run {run.id.slice(0, 8)}
        </a>
      ) : null}
      <ActionError error={error} />
    </form>
  );
}
