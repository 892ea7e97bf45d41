"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";

const FIELDS = [
  { name: "monthly_runs", label: "Runs a month", step: 1 },
  { name: "monthly_cost_usd", label: "Cost a month ($)", step: 0.01 },
  { name: "max_concurrent", label: "Running at once", step: 1 },
  { name: "open_rate_per_minute", label: "Opens a minute", step: 1 },
] as const;

export type QuotaValues = Record<(typeof FIELDS)[number]["name"], number>;

/** An admin's form for one installation's or repository's limits: PUT /api/v1/quotas/…; 0 = unlimited. */
export function QuotaForm({ url, values, testId }: { url: string; values: QuotaValues; testId: string }) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const [refreshing, startTransition] = useTransition();

  async function submit(form: FormData) {
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      const body = Object.fromEntries(FIELDS.map((f) => [f.name, Number(form.get(f.name) ?? 0)]));
      const res = await fetch(url, {
        method: "PUT",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(body),
        credentials: "same-origin",
      });
      const data = (await res.json().catch(() => null)) as { message?: string } | null;
      if (!res.ok) throw new Error(data?.message ?? `The limits were not saved (${res.status}).`);
      setSaved(true);
      startTransition(() => router.refresh());
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
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
        disabled={busy || refreshing}
        className="rounded-md bg-emerald-700 px-3 py-1.5 text-sm font-medium text-white shadow-sm hover:bg-emerald-800 disabled:cursor-wait disabled:bg-emerald-400"
      >
        {busy || refreshing ? "Saving…" : "Save"}
      </button>
      <span className="text-xs text-stone-500">0 = unlimited</span>
      {saved ? <span className="text-xs text-emerald-700">Saved.</span> : null}
      {error ? (
        <span role="alert" className="w-full text-xs text-red-700">
          {error}
        </span>
      ) : null}
    </form>
  );
}
