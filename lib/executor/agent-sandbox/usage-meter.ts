import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";

/**
 * The model usage the egress gateway reads from the model API's own answers, as they pass
 * through it to the agent: the tokens are counted where the agent cannot forge them.
 *
 *  - Anthropic Messages: `message_start` (input and cache tokens, the model) and each
 *    `message_delta` (output tokens so far) of a stream; `usage` of a plain JSON message.
 *  - OpenAI Responses: `response.completed` (or `.incomplete`, `.failed`) of a stream; `usage`
 *    of a plain JSON response. Its `input_tokens` include the cached ones.
 *
 * A stream is a generation: one that carried no usage (or whose usage event was larger than
 * MAX_METERED_EVENT_BYTES) counts as `unread`, and so does a JSON body too large or broken to
 * read. A JSON body that is no message or response (a model list, a token count) is not counted.
 */

export type ApiProtocol = "anthropic" | "openai";

export const MAX_METERED_EVENT_BYTES = 8 * 1024 * 1024;

export interface TokenCounts {
  /** Input tokens read from no cache. */
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

export interface MeteredUsage extends TokenCounts {
  /** Answers whose usage was read. */
  requests: number;
  /** Successful answers whose usage could not be read. */
  unread: number;
  /** The model the API said answered (the last one). */
  model: string | null;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : null);
const count = (v: unknown): number | null => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : null);
const text = (v: unknown): string | null => (typeof v === "string" && v.length > 0 && v.length <= 200 ? v : null);

/** What one answer said of its usage so far. */
interface Answer {
  tokens: TokenCounts | null;
  model: string | null;
}

/** The larger of each count: Anthropic's deltas are running totals, not increments. */
function merge(into: TokenCounts | null, next: Partial<Record<keyof TokenCounts, number | null>>): TokenCounts {
  const base = into ?? { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
  const pick = (k: keyof TokenCounts) => Math.max(base[k], next[k] ?? 0);
  return { input: pick("input"), cacheRead: pick("cacheRead"), cacheWrite: pick("cacheWrite"), output: pick("output") };
}

const anthropicTokens = (usage: Json) => ({
  input: count(usage.input_tokens),
  cacheRead: count(usage.cache_read_input_tokens),
  cacheWrite: count(usage.cache_creation_input_tokens),
  output: count(usage.output_tokens),
});

function openAiTokens(usage: Json): TokenCounts {
  const input = count(usage.input_tokens) ?? 0;
  const cached = Math.min(count(obj(usage.input_tokens_details)?.cached_tokens) ?? 0, input);
  return { input: input - cached, cacheRead: cached, cacheWrite: 0, output: count(usage.output_tokens) ?? 0 };
}

const OPENAI_FINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** Whether a whole JSON body is a generation (whose usage is billed). */
const isGeneration = (protocol: ApiProtocol, body: Json) => (protocol === "anthropic" ? body.type === "message" : body.object === "response");

/** One event of a stream, or a whole JSON body: what it adds to the answer. */
function readEvent(protocol: ApiProtocol, event: Json, answer: Answer): void {
  if (protocol === "anthropic") {
    if (event.type === "message_start" || event.type === "message") {
      const message = event.type === "message" ? event : obj(event.message);
      const usage = obj(message?.usage);
      if (usage) answer.tokens = merge(answer.tokens, anthropicTokens(usage));
      answer.model = text(message?.model) ?? answer.model;
    } else if (event.type === "message_delta") {
      const usage = obj(event.usage);
      if (usage) answer.tokens = merge(answer.tokens, anthropicTokens(usage));
    }
    return;
  }
  const response = OPENAI_FINAL.has(String(event.type)) ? obj(event.response) : event.object === "response" ? event : null;
  const usage = obj(response?.usage);
  if (usage) answer.tokens = openAiTokens(usage);
  answer.model = text(response?.model) ?? answer.model;
}

function parse(data: string): Json | null {
  try {
    return obj(JSON.parse(data));
  } catch {
    return null;
  }
}

/** Feeds a server-sent event stream's `data:` payloads, event by event, to `onEvent`. */
class EventStream {
  private readonly decoder = new StringDecoder("utf8");
  private partial = "";
  private data: string[] = [];
  private size = 0;

  constructor(private readonly onEvent: (data: string) => void) {}

  push(chunk: Buffer): void {
    const lines = (this.partial + this.decoder.write(chunk)).split("\n");
    this.partial = lines.pop()!;
    // a line that never ends is not kept whole: its event is too large to read
    if (this.partial.length > MAX_METERED_EVENT_BYTES) this.partial = "";
    for (const raw of lines) this.line(raw.endsWith("\r") ? raw.slice(0, -1) : raw);
  }

  end(): void {
    if (this.partial) this.line(this.partial);
    this.line("");
  }

  private line(line: string): void {
    if (line === "") {
      if (this.data.length && this.size <= MAX_METERED_EVENT_BYTES) this.onEvent(this.data.join("\n"));
      this.data = [];
      this.size = 0;
      return;
    }
    if (!line.startsWith("data:")) return;
    this.size += line.length;
    if (this.size <= MAX_METERED_EVENT_BYTES) this.data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
  }
}

export class UsageMeter {
  private readonly totals: MeteredUsage = { requests: 0, unread: 0, input: 0, cacheRead: 0, cacheWrite: 0, output: 0, model: null };

  /** Reads a successful answer as it streams past; counts it once it ends, however it ends. */
  observe(protocol: ApiProtocol, body: Readable, contentType: string): void {
    const answer: Answer = { tokens: null, model: null };
    /** Reads what is left; false when the answer is no generation. */
    let finish: () => boolean;
    if (contentType.toLowerCase().startsWith("text/event-stream")) {
      const events = new EventStream((data) => {
        const event = parse(data);
        if (event) readEvent(protocol, event, answer);
      });
      body.on("data", (chunk: Buffer) => events.push(chunk));
      finish = () => {
        events.end();
        return true;
      };
    } else {
      const chunks: Buffer[] = [];
      let size = 0;
      body.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_METERED_EVENT_BYTES) chunks.push(chunk);
      });
      finish = () => {
        const event = size <= MAX_METERED_EVENT_BYTES ? parse(Buffer.concat(chunks).toString("utf8")) : null;
        if (!event) return true;
        if (!isGeneration(protocol, event)) return false;
        readEvent(protocol, event, answer);
        return true;
      };
    }
    let counted = false;
    const done = () => {
      if (counted) return;
      counted = true;
      if (finish()) this.add(answer);
    };
    body.once("end", done);
    body.once("close", done);
  }

  private add(answer: Answer): void {
    const t = this.totals;
    if (!answer.tokens) {
      t.unread++;
      return;
    }
    t.requests++;
    t.input += answer.tokens.input;
    t.cacheRead += answer.tokens.cacheRead;
    t.cacheWrite += answer.tokens.cacheWrite;
    t.output += answer.tokens.output;
    t.model = answer.model ?? t.model;
  }

  reading(): MeteredUsage {
    return { ...this.totals };
  }
}
