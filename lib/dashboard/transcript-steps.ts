import { decodeStep, STEP_STREAM } from "../executor/adapters/step-entry";
import type { TranscriptStep } from "../executor/adapters/types";
import { SETUP_STREAM } from "../executor/environment/environment-spec";

/**
 * Groups a Run's stored transcript entries into the steps the Run page shows, collapsible,
 * with times and durations (as GitHub Actions' log and the Copilot agent's session view do): a
 * tool call with its result, the agent's messages, retries and errors, the final answer, and
 * runs of plain lines (a command agent's output, Atelier's own lines) as one block. Pure.
 */

export interface StoredEntry {
  id: string;
  attemptId?: string;
  stream: string;
  text: string;
  /** ISO time the entry was stored. */
  at: string;
}

export type DisplayStep =
  | { kind: "session"; id: string; at: string; sessionId: string; model: string | null }
  | { kind: "message"; id: string; at: string; text: string; thinking: boolean }
  | {
      kind: "tool";
      id: string;
      at: string;
      name: string;
      /** A one-line summary for the collapsed header, e.g. the command a Bash call ran. */
      title: string;
      input: unknown;
      inputCutBytes: number;
      /** null while the tool runs (or when its result never came). */
      result: { output: string; cutBytes: number; isError: boolean; exitCode: number | null; at: string } | null;
      durationMs: number | null;
    }
  | { kind: "retry"; id: string; at: string; status: number | null; message: string; attempt: number | null; maxRetries: number | null }
  | { kind: "error"; id: string; at: string; status: number | null; message: string }
  | { kind: "final"; id: string; at: string; text: string; isError: boolean }
  | {
      kind: "lines";
      id: string;
      at: string;
      endedAt: string;
      durationMs: number;
      lines: { stream: string; text: string }[];
      /** "setup": the environment's setup, a group of its own (its lines only). */
      group?: "setup";
    };

const TITLE_MAX = 120;

/** The header of a tool step: its name and the gist of its input. */
export function toolTitle(name: string, input: unknown): string {
  let gist = "";
  if (typeof input === "string") gist = input;
  else if (input && typeof input === "object") {
    const o = input as Record<string, unknown>;
    const first = ["command", "cmd", "file_path", "path", "pattern", "query", "url", "description"].find((k) => typeof o[k] === "string");
    gist = first ? (o[first] as string) : JSON.stringify(input);
  }
  const one = gist.replace(/\s+/g, " ").trim();
  return oneLine(one ? `${name}: ${one}` : name);
}

/** Text on one line of at most TITLE_MAX characters. */
function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > TITLE_MAX ? `${line.slice(0, TITLE_MAX - 1)}…` : line;
}

/** What a running Run did last, on one line, from its newest transcript entry (its Board card shows it). */
export function lastStepLine(entry: { stream: string; text: string }): string {
  const step = decodeStep(entry);
  if (!step) return oneLine(entry.text);
  switch (step.type) {
    case "session":
      return "session started";
    case "tool_call":
      return toolTitle(step.name, step.input);
    case "tool_result":
      return oneLine(`${step.name ?? "tool"} ${step.isError ? "failed" : "done"}`);
    case "retry":
      return oneLine(`retrying: ${step.message}`);
    case "error":
      return oneLine(`error: ${step.message}`);
    case "text":
    case "thinking":
    case "final":
    case "output":
      return oneLine(step.text);
  }
}

const ms = (from: string, to: string) => Math.max(0, Date.parse(to) - Date.parse(from));

export function groupTranscript(entries: readonly StoredEntry[]): DisplayStep[] {
  const out: DisplayStep[] = [];
  const openTools = new Map<string, Extract<DisplayStep, { kind: "tool" }>>();
  let lines: Extract<DisplayStep, { kind: "lines" }> | null = null;
  // setup's group lasts from the line before its first (Atelier's "setup: running …") to the
  // line after its last (setup's ending): a setup that printed one line still took its time
  let setupGroup: { step: Extract<DisplayStep, { kind: "lines" }>; from: string } | null = null;
  let previousAt: string | null = null;
  let beforeAt: string | null = null;

  const pushLine = (e: StoredEntry, stream: string, text: string) => {
    // setup's output is a group of its own, with its duration
    const setup = stream === SETUP_STREAM;
    if (!lines || (lines.group === "setup") !== setup) {
      lines = { kind: "lines", id: `${e.id}${setup ? "-setup" : ""}`, at: e.at, endedAt: e.at, durationMs: 0, lines: [], ...(setup ? { group: "setup" as const } : {}) };
      if (setup) setupGroup = { step: lines, from: beforeAt ?? e.at };
      out.push(lines);
    }
    lines.lines.push({ stream, text });
    lines.endedAt = e.at;
    lines.durationMs = ms(setup && setupGroup ? setupGroup.from : lines.at, e.at);
  };
  const endSetupGroup = (e: StoredEntry) => {
    if (!setupGroup) return;
    setupGroup.step.endedAt = e.at;
    setupGroup.step.durationMs = ms(setupGroup.from, e.at);
    setupGroup = null;
  };

  // an Attempt whose output was parsed into steps keeps its raw stdout/stderr for download only
  // (the steps hold the same, readable); Atelier's own lines are always shown
  const parsed = new Set(entries.filter((e) => e.stream === STEP_STREAM).map((e) => e.attemptId ?? ""));
  for (const e of entries) {
    if (e.stream !== SETUP_STREAM) endSetupGroup(e);
    beforeAt = previousAt;
    previousAt = e.at;
    const step: TranscriptStep | null = decodeStep(e);
    if (!step) {
      if (e.stream === STEP_STREAM) continue; // malformed
      if ((e.stream === "stdout" || e.stream === "stderr") && parsed.has(e.attemptId ?? "")) continue;
      for (const text of e.text.replace(/\n$/, "").split("\n")) pushLine(e, e.stream, text);
      continue;
    }
    if (step.type === "output") {
      pushLine(e, step.stream, step.text);
      continue;
    }
    lines = null;
    const base = { id: e.id, at: e.at };
    switch (step.type) {
      case "session":
        out.push({ kind: "session", ...base, sessionId: step.sessionId, model: step.model });
        break;
      case "text":
      case "thinking":
        out.push({ kind: "message", ...base, text: step.text, thinking: step.type === "thinking" });
        break;
      case "tool_call": {
        const tool: Extract<DisplayStep, { kind: "tool" }> = {
          kind: "tool",
          ...base,
          name: step.name,
          title: toolTitle(step.name, step.input),
          input: step.input,
          inputCutBytes: step.inputCutBytes,
          result: null,
          durationMs: null,
        };
        openTools.set(step.id, tool);
        out.push(tool);
        break;
      }
      case "tool_result": {
        const result = { output: step.output, cutBytes: step.cutBytes, isError: step.isError, exitCode: step.exitCode, at: e.at };
        const tool = openTools.get(step.id);
        if (tool) {
          tool.result = result;
          tool.durationMs = ms(tool.at, e.at);
          openTools.delete(step.id);
        } else {
          const name = step.name ?? "tool";
          out.push({ kind: "tool", ...base, name, title: name, input: null, inputCutBytes: 0, result, durationMs: null });
        }
        break;
      }
      case "retry":
        out.push({ kind: "retry", ...base, status: step.status, message: step.message, attempt: step.attempt, maxRetries: step.maxRetries });
        break;
      case "error":
        out.push({ kind: "error", ...base, status: step.status, message: step.message });
        break;
      case "final": {
        // the agent's last message is its final answer: shown once, as the answer
        const last = out.at(-1);
        if (last?.kind === "message" && !last.thinking && last.text.trim() === step.text.trim()) out.pop();
        out.push({ kind: "final", ...base, text: step.text, isError: step.isError });
        break;
      }
    }
  }
  return out;
}
