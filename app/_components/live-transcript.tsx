"use client";

import { useRouter } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { appendToWindow, type TranscriptWindow } from "../../lib/dashboard/transcript-window";
import { STEP_STREAM } from "../../lib/executor/adapters/step-entry";
import { SETUP_STREAM } from "../../lib/executor/environment/environment-spec";
import { TranscriptStepsView } from "./transcript-steps-view";

interface Entry {
  id: string;
  attemptId: string;
  stream: string;
  text: string;
  at: string;
}

interface Progress {
  state: string;
  pullRequestNumber: number | null;
  pullRequestUrl: string | null;
}

/** Entries that arrive together are shown together: one render per this many ms, not one per entry. */
const RENDER_EVERY_MS = 100;

const STREAM_TONE: Record<string, string> = {
  stdout: "text-stone-100",
  stderr: "text-red-300",
};

/**
 * The Run's transcript, streamed live from /api/v1/runs/[id]/transcript (server-sent events).
 * When the Run's state or pull request changes, the page's server data is refreshed so the
 * state, the actions and the links follow. The page keeps the newest entries only
 * (lib/dashboard/transcript-window.ts) and says how many earlier ones it no longer shows: the
 * JSON pages of the same API hold them all.
 */
export function LiveTranscript({ runId, initialState }: { runId: string; initialState: string }) {
  const router = useRouter();
  const [shown, setShown] = useState<TranscriptWindow<Entry>>({ entries: [], dropped: 0 });
  const entries = shown.entries;
  const [progress, setProgress] = useState<Progress | null>(null);
  const [status, setStatus] = useState<"connecting" | "live" | "ended" | "reconnecting">("connecting");
  const [problem, setProblem] = useState<string | null>(null);
  const box = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const seen = useRef(`${initialState}|`);

  useEffect(() => {
    const source = new EventSource(`/api/v1/runs/${encodeURIComponent(runId)}/transcript`);
    let pending: Entry[] = [];
    let timer: ReturnType<typeof setTimeout> | null = null;
    const show = () => {
      timer = null;
      const batch = pending;
      pending = [];
      setShown((w) => appendToWindow(w, batch));
    };
    source.addEventListener("open", () => setStatus("live"));
    source.addEventListener("entry", (e) => {
      pending.push(JSON.parse((e as MessageEvent).data) as Entry);
      timer ??= setTimeout(show, RENDER_EVERY_MS);
    });
    source.addEventListener("run", (e) => {
      const p = JSON.parse((e as MessageEvent).data) as Progress;
      setProgress(p);
      const key = `${p.state}|${p.pullRequestNumber ?? ""}`;
      if (key !== seen.current) {
        seen.current = key;
        router.refresh();
      }
    });
    source.addEventListener("end", () => {
      if (timer) clearTimeout(timer);
      show();
      setStatus("ended");
      source.close();
    });
    source.addEventListener("failure", (e) => {
      const p = JSON.parse((e as MessageEvent).data) as { message: string };
      setProblem(p.message);
    });
    source.addEventListener("error", () => {
      if (source.readyState === EventSource.CLOSED) setStatus("ended");
      else setStatus("reconnecting");
    });
    return () => {
      if (timer) clearTimeout(timer);
      source.close();
    };
  }, [runId, router]);

  useEffect(() => {
    const el = box.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [entries]);

  return (
    <section aria-labelledby="transcript-title" className="rounded-lg border border-stone-200 bg-white">
      <div className="flex flex-wrap items-center justify-between gap-2 border-b border-stone-200 px-3 py-2">
        <h2 id="transcript-title" className="text-sm font-semibold">
          Transcript
        </h2>
        <div className="flex items-center gap-3 text-xs text-stone-500">
          {progress?.pullRequestUrl ? (
            <a href={progress.pullRequestUrl} target="_blank" rel="noreferrer" className="text-emerald-700 underline" data-testid="transcript-pr-link">
              pull request #{progress.pullRequestNumber}
            </a>
          ) : null}
          <span data-testid="transcript-status" data-status={status} className="inline-flex items-center gap-1">
            <span className={`h-2 w-2 rounded-full ${status === "live" ? "animate-pulse bg-emerald-500" : status === "ended" ? "bg-stone-400" : "bg-amber-400"}`} />
            {status === "live" ? "live" : status === "ended" ? "complete" : status === "reconnecting" ? "reconnecting…" : "connecting…"}
          </span>
        </div>
      </div>
      <div
        ref={box}
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }}
        data-testid="transcript"
        className="max-h-[28rem] min-h-32 overflow-auto bg-stone-950 p-3 font-mono text-xs leading-relaxed"
      >
        {shown.dropped > 0 ? (
          <p data-testid="transcript-dropped" className="mb-2 text-stone-400">
            {shown.dropped.toLocaleString("en-US")} earlier entries are not shown here;{" "}
            <a className="underline" href={`/api/v1/runs/${encodeURIComponent(runId)}/transcript?limit=500`}>
              the whole transcript, in pages
            </a>
            .
          </p>
        ) : null}
        {entries.length === 0 ? (
          <p className="text-stone-500">{status === "ended" ? "This Run has no transcript." : "Waiting for the agent's output…"}</p>
        ) : entries.some((e) => e.stream === STEP_STREAM || e.stream === SETUP_STREAM) ? (
          <TranscriptStepsView entries={entries} />
        ) : (
          entries.map((e) => (
            <div key={e.id} data-testid="transcript-entry" className={`whitespace-pre-wrap break-words ${STREAM_TONE[e.stream] ?? "text-sky-300"}`}>
              {e.text}
            </div>
          ))
        )}
      </div>
      {problem ? (
        <p role="alert" className="border-t border-red-200 bg-red-50 px-3 py-2 text-xs text-red-800">
          {problem}
        </p>
      ) : null}
    </section>
  );
}
