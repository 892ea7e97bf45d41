import type { ServerResponse } from "node:http";
import { startScriptedServer, type RecordedRequest } from "./fake-model-server";

export type { RecordedRequest };

/**
 * A scripted stand-in for the Anthropic Messages API, as a real local HTTP server, for running
 * the real `claude` CLI offline (ANTHROPIC_BASE_URL=fake.url). It answers `HEAD /` and
 * `POST /v1/messages?beta=true` with streaming SSE (message_start, content_block_start/delta/
 * stop, message_delta with usage, message_stop).
 *
 * The script is a list of turns: each request that carries the agent's tools (the agent loop)
 * takes the next turn; side requests without tools (titles, summaries) get a short text and take
 * nothing. A turn is text, tool calls (answered by the CLI with tool_result blocks in the next
 * request), an HTTP error (401, 429, 529, …) or a hang (the response never ends). Any other
 * request is answered 404 and recorded in `unexpected`.
 */

export interface FakeToolUse {
  name: string;
  input: Record<string, unknown>;
}

export type AnthropicTurn =
  | { text?: string; tools?: FakeToolUse[]; usage?: Partial<AnthropicUsage> }
  | { error: number; message?: string }
  | { hang: true };

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface FakeAnthropic {
  url: string;
  /** Every request, in order. */
  requests: RecordedRequest[];
  /** The requests of the agent loop (those with tools), in order. */
  loopRequests(): RecordedRequest[];
  /** Requests the fake did not expect. */
  unexpected: RecordedRequest[];
  /** Turns not yet taken. */
  remaining(): number;
  close(): Promise<void>;
}

export const DEFAULT_TURN_USAGE: AnthropicUsage = {
  input_tokens: 1200,
  output_tokens: 80,
  cache_creation_input_tokens: 300,
  cache_read_input_tokens: 500,
};

const ERROR_TYPES: Record<number, [string, string]> = {
  400: ["invalid_request_error", "Invalid request"],
  401: ["authentication_error", "invalid x-api-key"],
  404: ["not_found_error", "Not found"],
  403: ["permission_error", "Your API key does not have permission to use the specified resource."],
  429: ["rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"],
  500: ["api_error", "Internal server error"],
  529: ["overloaded_error", "Overloaded"],
};

function sse(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

let messageCounter = 0;

function streamMessage(res: ServerResponse, model: string, turn: { text?: string; tools?: FakeToolUse[]; usage?: Partial<AnthropicUsage> }): void {
  const usage = { ...DEFAULT_TURN_USAGE, ...turn.usage };
  const id = `msg_fake_${++messageCounter}`;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", "request-id": `req_${id}` });
  sse(res, "message_start", {
    type: "message_start",
    message: {
      id,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
        output_tokens: 1,
      },
    },
  });
  let index = 0;
  if (turn.text) {
    sse(res, "content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
    // two deltas, so the CLI has to join them
    const half = Math.ceil(turn.text.length / 2);
    for (const part of [turn.text.slice(0, half), turn.text.slice(half)]) {
      if (part) sse(res, "content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: part } });
    }
    sse(res, "content_block_stop", { type: "content_block_stop", index });
    index++;
  }
  for (const tool of turn.tools ?? []) {
    const toolId = `toolu_fake_${messageCounter}_${index}`;
    sse(res, "content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: toolId, name: tool.name, input: {} } });
    const json = JSON.stringify(tool.input);
    const half = Math.ceil(json.length / 2);
    for (const part of [json.slice(0, half), json.slice(half)]) {
      sse(res, "content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: part } });
    }
    sse(res, "content_block_stop", { type: "content_block_stop", index });
    index++;
  }
  sse(res, "message_delta", {
    type: "message_delta",
    delta: { stop_reason: turn.tools?.length ? "tool_use" : "end_turn", stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  sse(res, "message_stop", { type: "message_stop" });
  res.end();
}

/**
 * `knownModels`: the models the API serves; a request for another is answered 404
 * not_found_error "model: …", as the real API answers an unknown model.
 */
export async function startFakeAnthropic(script: AnthropicTurn[], opts: { model?: string; knownModels?: readonly string[] } = {}): Promise<FakeAnthropic> {
  const turns = [...script];
  const server = await startScriptedServer(({ recorded, path, res, notExpected, hang }) => {
    if (recorded.method === "HEAD" && path === "/") {
      res.writeHead(200).end();
      return;
    }
    if (recorded.method !== "POST" || path !== "/v1/messages") {
      notExpected({ type: "error", error: { type: "not_found_error", message: "not found" } });
      return;
    }
    const b = (recorded.body ?? {}) as { model?: string; tools?: unknown[] };
    if (opts.knownModels && !opts.knownModels.includes(b.model ?? "")) {
      res.writeHead(404, { "content-type": "application/json", "request-id": "req_fake_model" });
      res.end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: `model: ${b.model ?? ""}` } }));
      return;
    }
    const model = opts.model ?? b.model ?? "claude-sonnet-4-5";
    if (!isLoopRequest(recorded)) {
      streamMessage(res, model, { text: "Fake side answer", usage: { input_tokens: 10, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } });
      return;
    }
    const turn = turns.shift() ?? { text: "The script has no more turns." };
    if ("hang" in turn) return hang();
    if ("error" in turn) {
      const [type, message] = ERROR_TYPES[turn.error] ?? ["api_error", `HTTP ${turn.error}`];
      res.writeHead(turn.error, { "content-type": "application/json", "request-id": "req_fake_error", ...(turn.error === 429 ? { "retry-after": "1" } : {}) });
      res.end(JSON.stringify({ type: "error", error: { type, message: turn.message ?? message } }));
      return;
    }
    streamMessage(res, model, turn);
  });
  return {
    url: server.url,
    requests: server.requests,
    unexpected: server.unexpected,
    loopRequests: () => server.requests.filter(isLoopRequest),
    remaining: () => turns.length,
    close: server.close,
  };
}

/** A request of the agent loop: it carries the agent's tools. */
function isLoopRequest(r: RecordedRequest): boolean {
  const tools = (r.body as { tools?: unknown } | null)?.tools;
  return Array.isArray(tools) && tools.length > 0;
}
