"use client";

import { useState } from "react";
import { sendJson } from "../_components/post-json";
import { useApiAction } from "../_components/use-api-action";
import { ActionError } from "../_components/action-error";

const FIELDS = [
  { name: "monthly_runs", label: "Runs a month", step: 1 },
  { name: "monthly_cost_usd", label: "Cost a month ($)", step: 0.01 },
  { name: "max_concurrent", label: "Running at once", step: 1 },
  { name: "open_rate_per_minute", label: "Opens a minute", step: 1 },
] as const;

export type QuotaValues = Record<(typeof FIELDS)[number]["name"], number>;

/** An admin's form for one installation's or repository's limits: PUT /api/v1/quotas/…; 0 = unlimited. */
export function QuotaForm({ url, values, testId }: { url: string; values: QuotaValues; testId: string }) {
  const { act, pending, error } = useApiAction();
  const [saved, setSaved] = useState(false);

  async function submit(form: FormData) {
    setSaved(false);
    const body = Object.fromEntries(FIELDS.map((f) => [f.name, Number(form.get(f.name) ?? 0)]));
    setSaved(await act(async () => void (await sendJson(url, body, "PUT"))));
  }

  return (
    <form data-testid={testId} action={submit} className="flex flex-wrap items-end gap-2">
      {FIELDS.map((f) => (
        <label key={f.name} className="flex flex-col text-xs text-stone-600">
          {f.label}
          <input
            name={f.name}
            type="number"
            min={0}
            step={f.step}
            defaultValue={values[f.name]}
            className="mt-0.5 w-28 rounded-md border border-stone-300 px-2 py-1 text-sm text-stone-900"
          />
        </label>
      ))}
      <button
        type="submit"
        disabled={pending}
        className="rounded-md bg-emerald-700 px-3 py-1.5 text-sm font-medium text-white shadow-sm hover:bg-emerald-800 disabled:cursor-wait disabled:bg-emerald-400"
      >
        {pending ? "Saving…" : "Save"}
      </button>
      <span className="text-xs text-stone-500">0 = unlimited</span>
      {saved ? <span className="text-xs text-emerald-700">Saved.</span> : null}
      <ActionError error={error} className="w-full" />
    </form>
  );
}
