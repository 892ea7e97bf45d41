"use client";

import { useState, type FormEvent } from "react";
import { ActionError } from "./action-error";
import { sendJson } from "./post-json";
import { useApiAction } from "./use-api-action";

export interface TokenRow {
  id: string;
  name: string;
  scope: string;
  expiresAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** Creates a personal API token (shown here once) and revokes the person's tokens. */
export function ApiTokensPanel({ tokens }: { tokens: TokenRow[] }) {
  const { act, busy, error } = useApiAction();
  const [name, setName] = useState("");
  const [scope, setScope] = useState<"read" | "act">("read");
  const [days, setDays] = useState("30");
  const [shown, setShown] = useState<string | null>(null);
  function onCreate(e: FormEvent) {
    e.preventDefault();
    void act(async () => {
      const answer = (await sendJson("/api/v1/tokens", { name, scope, expiresInDays: Number(days) })) as { token: { token: string } };
      setShown(answer.token.token);
      setName("");
    });
  }
  return (
    <div className="space-y-4">
      <form onSubmit={onCreate} className="flex flex-wrap items-end gap-2" data-testid="token-form">
        <label className="text-sm">
          Name
          <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} className="ml-1 rounded border border-stone-300 bg-white px-2 py-1 text-sm" />
        </label>
        <label className="text-sm">
          Scope
          <select value={scope} onChange={(e) => setScope(e.target.value as "read" | "act")} className="ml-1 rounded border border-stone-300 bg-white px-2 py-1 text-sm">
            <option value="read">read</option>
            <option value="act">act</option>
          </select>
        </label>
        <label className="text-sm">
          Days
          <input inputMode="numeric" pattern="[0-9]+" required value={days} onChange={(e) => setDays(e.target.value)} className="ml-1 w-16 rounded border border-stone-300 bg-white px-2 py-1 text-sm" />
        </label>
        <button type="submit" disabled={busy} className="rounded-md bg-emerald-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-emerald-800 disabled:bg-emerald-400">
          Create token
        </button>
      </form>
      {shown ? (
        <p className="rounded-md border border-amber-300 bg-amber-50 p-2 text-sm" data-testid="new-token">
          Copy it now — it is shown this once: <code className="break-all font-mono">{shown}</code>
        </p>
      ) : null}
      <ActionError error={error} />
      <ul className="divide-y divide-stone-200 rounded-lg border border-stone-200 bg-white" data-testid="tokens">
        {tokens.map((t) => (
          <li key={t.id} className="flex flex-wrap items-center justify-between gap-2 p-3 text-sm">
            <span>
              <span className="font-medium">{t.name}</span> <span className="text-stone-500">{t.scope} · expires {t.expiresAt.slice(0, 10)}</span>
              {t.revokedAt ? <span className="ml-2 text-red-700">revoked</span> : null}
            </span>
            {t.revokedAt ? null : (
              <button type="button" disabled={busy} onClick={() => void act(async () => void (await sendJson(`/api/v1/tokens/${t.id}`, {}, "DELETE")))} className="rounded-md px-2 py-1 text-red-700 ring-1 ring-inset ring-red-300 hover:bg-red-50">
                Revoke
              </button>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
