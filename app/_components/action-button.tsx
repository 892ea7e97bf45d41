"use client";

import { sendJson } from "./post-json";
import { useApiAction } from "./use-api-action";
import { ActionError } from "./action-error";

const TONES = {
  primary: "bg-emerald-700 text-white hover:bg-emerald-800 disabled:bg-emerald-400",
  neutral: "bg-white text-stone-800 ring-1 ring-inset ring-stone-300 hover:bg-stone-50 disabled:text-stone-400",
  danger: "bg-white text-red-700 ring-1 ring-inset ring-red-300 hover:bg-red-50 disabled:text-red-300",
} as const;

/**
 * A button that calls one action of the JSON API, then refreshes the page's server data. The
 * API's refusal (409 state, 403 permission…) shows beside it in its own words.
 */
export function ActionButton({
  url,
  body,
  label,
  pendingLabel,
  tone = "neutral",
  confirm,
  testId,
  onDone,
}: {
  url: string;
  body?: unknown;
  label: string;
  pendingLabel?: string;
  tone?: keyof typeof TONES;
  confirm?: string;
  testId?: string;
  onDone?: () => void;
}) {
  const { act, pending, error } = useApiAction();

  async function run() {
    if (confirm && !window.confirm(confirm)) return;
    await act(async () => {
      await sendJson(url, body ?? {});
      onDone?.();
    });
  }

  return (
    <span className="inline-flex flex-col items-start gap-1">
      <button
        type="button"
        data-testid={testId}
        onClick={run}
        disabled={pending}
        className={`rounded-md px-3 py-1.5 text-sm font-medium shadow-sm transition-colors disabled:cursor-wait ${TONES[tone]}`}
      >
        {pending ? (pendingLabel ?? `${label}…`) : label}
      </button>
      <ActionError error={error} className="max-w-xs" />
    </span>
  );
}
