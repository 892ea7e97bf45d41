"use client";

import { useState, type FormEvent } from "react";
import { sendJson } from "./post-json";
import { useApiAction } from "./use-api-action";
import { ActionError } from "./action-error";

function useSubmit(url: string) {
  const { act, busy, error } = useApiAction();
  async function submit(body: unknown, done?: () => void) {
    await act(async () => {
      await sendJson(url, body);
      done?.();
    });
  }
  return { error, busy, submit };
}

/** Edit and retry: a new task text, Agent and/or model (among those the agent offers), then Attempt n+1. */
export function EditAndRetryForm(props: { runId: string; prompt: string; agent: string; model: string | null; agents: string[]; models: Record<string, string[]> }) {
  const { runId, prompt, agent, model, agents, models } = props;
  const { error, busy, submit } = useSubmit(`/api/v1/runs/${runId}/edit-and-retry`);
  const [text, setText] = useState(prompt);
  const [who, setWho] = useState(agent);
  // "" is the agent's default model
  const [which, setWhich] = useState(model ?? "");
  const offered = models[who] ?? [];
  function pickAgent(next: string) {
    setWho(next);
    // the model shown stays when the other agent offers it; else the form shows its default
    if (which && !(models[next] ?? []).includes(which)) setWhich("");
  }
  function onSubmit(e: FormEvent) {
    e.preventDefault();
    const body: { prompt?: string; agent?: string; model?: string | null } = {};
    if (text !== prompt) body.prompt = text;
    if (who !== agent) body.agent = who;
    if (who !== agent || which !== (model ?? "")) body.model = which || null;
    if (!body.prompt && !body.agent && body.model === undefined) body.prompt = text;
    void submit(body);
  }
  return (
    <form onSubmit={onSubmit} className="space-y-2" data-testid="edit-and-retry-form">
      <label className="block text-sm font-medium" htmlFor="edit-prompt">
        Task for the agent
      </label>
      <textarea
        id="edit-prompt"
        value={text}
        onChange={(e) => setText(e.target.value)}
        rows={6}
        className="w-full rounded-md border border-stone-300 bg-white p-2 font-mono text-xs"
      />
      <div className="flex flex-wrap items-center gap-2">
        <label className="text-sm" htmlFor="edit-agent">
          Agent
        </label>
        <select id="edit-agent" value={who} onChange={(e) => pickAgent(e.target.value)} className="rounded border border-stone-300 bg-white px-2 py-1 text-sm">
          {[...new Set([agent, ...agents])].map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
        <label className="text-sm" htmlFor="edit-model">
          Model
        </label>
        <select id="edit-model" value={which} onChange={(e) => setWhich(e.target.value)} className="rounded border border-stone-300 bg-white px-2 py-1 text-sm">
          <option value="">the agent&apos;s default</option>
          {[...new Set([...(which ? [which] : []), ...offered])].map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
        <button type="submit" disabled={busy} className="rounded-md bg-emerald-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-emerald-800 disabled:bg-emerald-400">
          {busy ? "Retrying…" : "Edit and retry"}
        </button>
      </div>
      <ActionError error={error} />
    </form>
  );
}

/** Intervene: a message to the live agent session of the open Attempt. */
export function InterveneForm({ runId, attemptId }: { runId: string; attemptId: string }) {
  const { error, busy, submit } = useSubmit(`/api/v1/runs/${runId}/intervene`);
  const [message, setMessage] = useState("");
  function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (!message.trim()) return;
    void submit({ attemptId, text: message }, () => setMessage(""));
  }
  return (
    <form onSubmit={onSubmit} className="flex flex-col gap-2 sm:flex-row" data-testid="intervene-form">
      <label className="sr-only" htmlFor="intervene-message">
        Message to the agent
      </label>
      <input
        id="intervene-message"
        value={message}
        onChange={(e) => setMessage(e.target.value)}
        placeholder="Tell the running agent something…"
        className="min-w-0 flex-1 rounded-md border border-stone-300 bg-white px-2 py-1.5 text-sm"
      />
      <button type="submit" disabled={busy || !message.trim()} className="rounded-md bg-stone-800 px-3 py-1.5 text-sm font-medium text-white disabled:bg-stone-400">
        {busy ? "Sending…" : "Send to agent"}
      </button>
      <ActionError error={error} />
    </form>
  );
}
