"use client";

import { ActionError } from "../_components/action-error";
import { sendJson } from "../_components/post-json";
import { useApiAction } from "../_components/use-api-action";
import { NOTICE_KINDS, NOTICE_TITLES, type NoticeKind } from "../../lib/outbound/notices";

/**
 * Changes the notices an existing target is subscribed to (PATCH /api/v1/outbound/hooks/{id}
 * with `events`); whoever may not manage the target is refused by the API, as for adding one.
 */
export function HookEventsForm({ id, events }: { id: number; events: NoticeKind[] }) {
  const { act, pending, error } = useApiAction();

  async function submit(form: FormData) {
    await act(async () => {
      await sendJson(`/api/v1/outbound/hooks/${id}`, { events: form.getAll("events").map(String) }, "PATCH");
    });
  }

  return (
    <details className="w-full text-xs text-stone-700">
      <summary className="cursor-pointer text-stone-600 hover:text-stone-900">Change its notices</summary>
      <form data-testid="hook-events-form" action={submit} className="mt-1 flex flex-wrap items-center gap-x-3 gap-y-1">
        {NOTICE_KINDS.map((k) => (
          <label key={k} className="inline-flex items-center gap-1">
            <input type="checkbox" name="events" value={k} defaultChecked={events.includes(k)} />
            {NOTICE_TITLES[k]}
          </label>
        ))}
        <button type="submit" disabled={pending} className="rounded-md border border-stone-300 bg-white px-2 py-0.5 font-medium text-stone-800 hover:bg-stone-50 disabled:cursor-wait">
          {pending ? "Saving…" : "Save notices"}
        </button>
        <ActionError error={error} className="w-full" />
      </form>
    </details>
  );
}
