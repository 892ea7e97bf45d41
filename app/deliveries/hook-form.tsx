"use client";

import { useState } from "react";
import { sendJson } from "../_components/post-json";
import { useApiAction } from "../_components/use-api-action";
import { ActionError } from "../_components/action-error";
import { NOTICE_KINDS, NOTICE_TITLES } from "../../lib/outbound/notices";

type Scope = "instance" | "installation" | "loop";

/**
 * Subscribes a target — a signed webhook or a Slack incoming webhook — for the instance or an
 * installation (admins), or for one Loop of a repository, to the notices ticked. A webhook's
 * secret is shown once, right here, and never again.
 */
export function HookForm({ installations, admin }: { installations: { id: number; account: string }[]; admin: boolean }) {
  const [scope, setScope] = useState<Scope>(admin ? "instance" : installations.length ? "installation" : "loop");
  const [secret, setSecret] = useState<string | null>(null);
  const { act, busy, error } = useApiAction();

  async function submit(form: FormData) {
    setSecret(null);
    const target = { url: String(form.get("url") ?? ""), kind: String(form.get("kind") ?? "webhook"), events: form.getAll("events").map(String) };
    const body =
      scope === "instance"
        ? { instance: true, ...target }
        : scope === "installation"
          ? { installation_id: Number(form.get("installation_id")), ...target }
          : { repo: String(form.get("repo") ?? ""), loop: String(form.get("loop") ?? ""), ...target };
    await act(async () => {
      const made = (await sendJson("/api/v1/outbound/hooks", body)) as { secret: string };
      setSecret(made.secret || null);
    });
  }

  const input = "mt-0.5 rounded-md border border-stone-300 px-2 py-1 text-sm text-stone-900";
  return (
    <form data-testid="hook-form" action={submit} className="flex flex-wrap items-end gap-2 rounded-lg border border-stone-200 bg-white p-3">
      <label className="flex flex-col text-xs text-stone-600">
        For
        <select value={scope} onChange={(e) => setScope(e.target.value as Scope)} className={input}>
          {admin ? <option value="instance">the instance</option> : null}
          {installations.length ? <option value="installation">an installation</option> : null}
          <option value="loop">a Loop</option>
        </select>
      </label>
      {scope === "instance" ? null : scope === "installation" ? (
        <label className="flex flex-col text-xs text-stone-600">
          Installation
          <select name="installation_id" className={input}>
            {installations.map((i) => (
              <option key={i.id} value={i.id}>
                {i.account}
              </option>
            ))}
          </select>
        </label>
      ) : (
        <>
          <label className="flex flex-col text-xs text-stone-600">
            Repository
            <input name="repo" required placeholder="owner/name" className={`${input} w-48`} />
          </label>
          <label className="flex flex-col text-xs text-stone-600">
            Loop
            <input name="loop" required placeholder="start-dev" className={`${input} w-32`} />
          </label>
        </>
      )}
      <label className="flex flex-col text-xs text-stone-600">
        Kind
        <select name="kind" className={input} defaultValue="webhook">
          <option value="webhook">signed webhook</option>
          <option value="slack">Slack (incoming webhook)</option>
        </select>
      </label>
      <label className="flex min-w-[16rem] flex-1 flex-col text-xs text-stone-600">
        URL
        <input name="url" type="url" required placeholder="https://hooks.example.com/atelier" className={input} />
      </label>
      <fieldset className="flex w-full flex-wrap gap-x-3 gap-y-1 text-xs text-stone-700">
        <legend className="mb-0.5 text-stone-600">Notices</legend>
        {NOTICE_KINDS.map((k) => (
          <label key={k} className="inline-flex items-center gap-1">
            <input type="checkbox" name="events" value={k} defaultChecked={k === "needs_approval" || k === "failed"} />
            {NOTICE_TITLES[k]}
          </label>
        ))}
      </fieldset>
      <button
        type="submit"
        disabled={busy}
        className="rounded-md bg-emerald-700 px-3 py-1.5 text-sm font-medium text-white shadow-sm hover:bg-emerald-800 disabled:cursor-wait disabled:bg-emerald-400"
      >
        {busy ? "Adding…" : "Add target"}
      </button>
      {secret ? (
        <p data-testid="hook-secret" className="w-full text-xs text-stone-700">
          Its signing secret, shown only now: <code className="rounded bg-stone-100 px-1 font-mono">{secret}</code>
        </p>
      ) : null}
      <ActionError error={error} className="w-full" />
    </form>
  );
}
