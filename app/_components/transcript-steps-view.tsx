import { groupTranscript, type DisplayStep, type StoredEntry } from "../../lib/dashboard/transcript-steps";

/**
 * A transcript that an agent's adapter read into steps (Claude Code, Codex): its messages, each
 * tool call collapsible with its input and result, retries, errors and the final answer, with
 * times and durations. The raw lines stay downloadable from the transcript API.
 */

const time = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
const seconds = (ms: number | null) => (ms === null ? "" : ms < 1_000 ? `${ms} ms` : `${(ms / 1_000).toFixed(1)} s`);
const cut = (bytes: number) => (bytes > 0 ? ` … (${bytes} bytes cut)` : "");

function Step({ step }: { step: DisplayStep }) {
  const stamp = <span className="mr-2 text-stone-500">{time(step.at)}</span>;
  switch (step.kind) {
    case "session":
      return (
        <div className="text-stone-400">
          {stamp}session {step.sessionId}
          {step.model ? ` · ${step.model}` : ""}
        </div>
      );
    case "message":
      return (
        <div className={step.thinking ? "text-stone-400 italic" : "text-stone-100"}>
          {stamp}
          {step.text}
        </div>
      );
    case "tool":
      return (
        <details className="rounded border border-stone-700 px-2 py-1" data-testid="transcript-tool">
          <summary className="cursor-pointer text-sky-300">
            {stamp}
            {step.title}
            <span className="ml-2 text-stone-500">
              {step.result ? (step.result.isError ? "failed" : "done") : "running"} {seconds(step.durationMs)}
            </span>
          </summary>
          <pre className="mt-1 whitespace-pre-wrap text-stone-300" data-testid="transcript-tool-input">{JSON.stringify(step.input, null, 2)}{cut(step.inputCutBytes)}</pre>
          {step.result ? (
            <pre className={`mt-1 whitespace-pre-wrap ${step.result.isError ? "text-red-300" : "text-stone-100"}`} data-testid="transcript-tool-result">
              {step.result.output}
              {cut(step.result.cutBytes)}
            </pre>
          ) : null}
        </details>
      );
    case "retry":
      return (
        <div className="text-amber-300">
          {stamp}retry{step.attempt !== null ? ` ${step.attempt}${step.maxRetries !== null ? `/${step.maxRetries}` : ""}` : ""}
          {step.status !== null ? ` after ${step.status}` : ""}: {step.message}
        </div>
      );
    case "error":
      return (
        <div className="text-red-300">
          {stamp}error{step.status !== null ? ` ${step.status}` : ""}: {step.message}
        </div>
      );
    case "final":
      return (
        <div className={`rounded border px-2 py-1 ${step.isError ? "border-red-700 text-red-200" : "border-emerald-700 text-emerald-100"}`} data-testid="transcript-final">
          {stamp}
          <span className="font-semibold">{step.isError ? "Ended with an error" : "Final answer"}</span>
          <div className="whitespace-pre-wrap">{step.text}</div>
        </div>
      );
    case "lines":
      return (
        <div className={step.group === "setup" ? "rounded border border-stone-700 px-2 py-1" : undefined} data-testid={step.group === "setup" ? "transcript-setup" : undefined}>
          {step.group === "setup" ? (
            <div className="font-semibold text-stone-300">
              Setup <span className="font-normal text-stone-500">{seconds(step.durationMs)}</span>
            </div>
          ) : null}
          {step.lines.map((l, i) => (
            <div key={i} className={l.stream === "stderr" ? "text-red-300" : l.stream === "system" ? "text-sky-300" : "text-stone-100"}>
              {i === 0 ? stamp : null}
              {l.text}
            </div>
          ))}
        </div>
      );
  }
}

export function TranscriptStepsView({ entries }: { entries: readonly StoredEntry[] }) {
  return (
    <div className="space-y-1">
      {groupTranscript(entries).map((step) => (
        <div key={step.id} data-testid="transcript-step" className="whitespace-pre-wrap break-words">
          <Step step={step} />
        </div>
      ))}
    </div>
  );
}
