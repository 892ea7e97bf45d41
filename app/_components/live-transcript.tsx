"use client";

import { useRouter } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { STEP_STREAM } from "../../lib/executor/adapters/step-entry";
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

const STREAM_TONE: Record<string, string> = {
  stdout: "text-stone-100",
  stderr: "text-red-300",
};

/**
 * The Run's transcript, streamed live from /api/v1/runs/[id]/transcript (server-sent events).
 * When the Run's state or pull request changes, the page's server data is refreshed so the
 * state, the actions and the links follow.
 */
export function LiveTranscript({ runId, initialState }: { runId: string; initialState: string }) {
  const router = useRouter();
  const [entries, setEntries] = useState<Entry[]>([]);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [status, setStatus] = useState<"connecting" | "live" | "ended" | "reconnecting">("connecting");
  const [problem, setProblem] = useState<string | null>(null);
  const box = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const seen = useRef(`${initialState}|`);

  useEffect(() => {
    const source = new EventSource(`/api/v1/runs/${encodeURIComponent(runId)}/transcript`);
    source.addEventListener("open", () => setStatus("live"));
    source.addEventListener("entry", (e) => {
      const entry = JSON.parse((e as MessageEvent).data) as Entry;
      setEntries((list) => (list.length && Number(list[list.length - 1]!.id) >= Number(entry.id) ? list : [...list, entry]));
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
    return () => source.close();
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
        {entries.length === 0 ? (
          <p className="text-stone-500">{status === "ended" ? "This Run has no transcript." : "Waiting for the agent's output…"}</p>
        ) : entries.some((e) => e.stream === STEP_STREAM) ? (
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
