import { DEFAULT_MAX_TOOL_INPUT_BYTES, DEFAULT_MAX_TOOL_RESULT_BYTES } from "./bound";
import { LineSplitter, parseJsonObject } from "./json-lines";
import type { Failure } from "../../engine/failure";
import type { AgentReport, AgentUsage, ParserOptions, ProcessExit, StreamParser, TranscriptStep } from "./types";

export type Json = Record<string, unknown>;
export const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
export const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
export const obj = (v: unknown): Json | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : null);
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * The stream handling of an agent that prints one JSON event a line: each stream is split into
 * lines whatever the chunks; a stdout line that is a JSON object is an event for the subclass;
 * any other non-empty line (stderr, plain text, broken JSON) is an `output` step. `agent`: what
 * the subclass reads of the roster's Agent.
 */
export abstract class JsonLinesParser<Agent> implements StreamParser {
  private readonly lines = { stdout: new LineSplitter(), stderr: new LineSplitter() };
  protected readonly maxResult: number;
  protected readonly maxInput: number;

  constructor(
    protected readonly agent: Agent,
    protected readonly options: ParserOptions = {},
  ) {
    this.maxResult = options.maxToolResultBytes ?? DEFAULT_MAX_TOOL_RESULT_BYTES;
    this.maxInput = options.maxToolInputBytes ?? DEFAULT_MAX_TOOL_INPUT_BYTES;
  }

  feed(chunk: string, stream: "stdout" | "stderr" = "stdout"): TranscriptStep[] {
    return this.lines[stream].push(chunk).flatMap((l) => this.line(l.text, stream));
  }

  end(exit?: ProcessExit): { steps: TranscriptStep[]; report: AgentReport } {
    const steps = (["stdout", "stderr"] as const).flatMap((s) => this.lines[s].end().flatMap((l) => this.line(l.text, s)));
    const report: AgentReport = { sessionId: this.session(), finalText: this.answer(), usage: this.usage(), failure: this.failure(exit) };
    return { steps, report };
  }

  private line(text: string, stream: "stdout" | "stderr"): TranscriptStep[] {
    const event = stream === "stdout" ? parseJsonObject(text) : null;
    if (!event) return text.trim() ? [{ type: "output", stream, text }] : [];
    return this.event(event);
  }

  /** The steps of one event; unknown events give none (they stay in the raw lines). */
  protected abstract event(event: Json): TranscriptStep[];

  /** The session to resume; null when the agent named none. */
  protected abstract session(): string | null;

  /** The agent's final answer; null when it gave none, or failed. */
  protected abstract answer(): string | null;

  protected abstract usage(): AgentUsage | null;

  protected abstract failure(exit?: ProcessExit): Failure | null;
}
