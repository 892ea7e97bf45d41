import type { ServerResponse } from "node:http";
import { startScriptedServer, type RecordedRequest } from "./fake-model-server";

export type { RecordedRequest };

/**
 * A scripted stand-in for the OpenAI Responses API, as a real local HTTP server, for running
 * the real `codex` CLI offline (a model provider whose base_url is fake.url + "/v1"). It
 * answers `POST …/responses` with SSE (response.created, response.output_item.added/done,
 * response.output_text.delta, response.completed with usage).
 *
 * Each request takes the next turn of the script. A turn is text, shell commands to run, an HTTP
 * error or a hang. Commands are asked for with the tool the CLI offered: a freeform `exec` tool
 * (in an `input` item of type `additional_tools`, answered with `custom_tool_call` items), or the
 * `exec_command` / `shell` function tools (answered with `function_call` items); the CLI sends
 * each command's output back in the next request. Any other request is answered 404 and
 * recorded in `unexpected`.
 */

export type OpenAiTurn =
  | { text?: string; exec?: string[]; usage?: Partial<OpenAiUsage> }
  | { error: number; message?: string }
  | { hang: true };

export interface OpenAiUsage {
  input_tokens: number;
  cached_tokens: number;
  output_tokens: number;
}

export interface FakeOpenAi {
  /** The base URL of a model provider: ends in /v1. */
  baseUrl: string;
  requests: RecordedRequest[];
  unexpected: RecordedRequest[];
  remaining(): number;
  close(): Promise<void>;
}

export const DEFAULT_OPENAI_USAGE: OpenAiUsage = { input_tokens: 2000, cached_tokens: 500, output_tokens: 100 };

interface ToolLike {
  type?: string;
  name?: string;
  tools?: ToolLike[];
}

type ExecShape = "custom_exec" | "exec_command" | "shell";

/** Which tool the CLI offered for running commands. */
export function execShape(body: { tools?: ToolLike[]; input?: { type?: string; tools?: ToolLike[] }[] }): ExecShape {
  const extra = (body.input ?? []).filter((i) => i.type === "additional_tools").flatMap((i) => i.tools ?? []);
  if (extra.some((t) => t.name === "exec")) return "custom_exec";
  const names = new Set((body.tools ?? []).map((t) => t.name));
  if (names.has("exec_command")) return "exec_command";
  if (names.has("shell")) return "shell";
  return extra.length ? "custom_exec" : "exec_command";
}

let counter = 0;

function stream(res: ServerResponse, model: string, shape: ExecShape, turn: { text?: string; exec?: string[]; usage?: Partial<OpenAiUsage> }): void {
  const u = { ...DEFAULT_OPENAI_USAGE, ...turn.usage };
  const responseId = `resp_fake_${++counter}`;
  let seq = 0;
  const send = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const base = { id: responseId, object: "response", created_at: Math.floor(Date.now() / 1000), model };
  send("response.created", { response: { ...base, status: "in_progress", output: [] } });
  const output: Record<string, unknown>[] = [];
  let index = 0;
  if (turn.text) {
    const id = `msg_fake_${counter}_${index}`;
    send("response.output_item.added", { output_index: index, item: { type: "message", id, role: "assistant", status: "in_progress", content: [] } });
    send("response.output_text.delta", { output_index: index, item_id: id, content_index: 0, delta: turn.text });
    const item = { type: "message", id, role: "assistant", status: "completed", content: [{ type: "output_text", text: turn.text, annotations: [] }] };
    send("response.output_item.done", { output_index: index, item });
    output.push(item);
    index++;
  }
  for (const cmd of turn.exec ?? []) {
    const id = `fc_fake_${counter}_${index}`;
    const callId = `call_fake_${counter}_${index}`;
    const item =
      shape === "custom_exec"
        ? { type: "custom_tool_call", id, call_id: callId, name: "exec", input: cmd, status: "completed" }
        : shape === "exec_command"
          ? { type: "function_call", id, call_id: callId, name: "exec_command", arguments: JSON.stringify({ cmd }), status: "completed" }
          : { type: "function_call", id, call_id: callId, name: "shell", arguments: JSON.stringify({ command: ["bash", "-lc", cmd] }), status: "completed" };
    send("response.output_item.added", { output_index: index, item: { ...item, status: "in_progress" } });
    send("response.output_item.done", { output_index: index, item });
    output.push(item);
    index++;
  }
  send("response.completed", {
    response: {
      ...base,
      status: "completed",
      output,
      usage: {
        input_tokens: u.input_tokens,
        input_tokens_details: { cached_tokens: u.cached_tokens },
        output_tokens: u.output_tokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: u.input_tokens + u.output_tokens,
      },
    },
  });
  res.end();
}

const ERRORS: Record<number, { type: string; code: string | null; message: string }> = {
  401: { type: "invalid_request_error", code: "invalid_api_key", message: "Incorrect API key provided." },
  403: { type: "invalid_request_error", code: "unsupported_country_region_territory", message: "Forbidden." },
  429: { type: "requests", code: "rate_limit_exceeded", message: "Rate limit reached for requests." },
  500: { type: "server_error", code: null, message: "The server had an error while processing your request." },
  503: { type: "server_error", code: null, message: "The engine is currently overloaded, please try again later." },
  529: { type: "server_error", code: null, message: "Overloaded." },
};

/** `knownModels`: the models the API serves; another is answered 404 model_not_found, as the real API does. */
export async function startFakeOpenAi(script: OpenAiTurn[], opts: { knownModels?: readonly string[] } = {}): Promise<FakeOpenAi> {
  const turns = [...script];
  const server = await startScriptedServer(({ recorded, path, res, notExpected, hang }) => {
    if (recorded.method !== "POST" || !path.endsWith("/responses")) {
      notExpected({ error: { message: "not found", type: "invalid_request_error" } });
      return;
    }
    const b = (recorded.body ?? {}) as Parameters<typeof execShape>[0] & { model?: string };
    if (opts.knownModels && !opts.knownModels.includes(b.model ?? "")) {
      res.writeHead(404, { "content-type": "application/json" });
      const message = `The model \`${b.model ?? ""}\` does not exist or you do not have access to it.`;
      res.end(JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code: "model_not_found" } }));
      return;
    }
    const turn = turns.shift() ?? { text: "The script has no more turns." };
    if ("hang" in turn) return hang();
    if ("error" in turn) {
      const e = ERRORS[turn.error] ?? { type: "server_error", code: null, message: `HTTP ${turn.error}` };
      res.writeHead(turn.error, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { ...e, message: turn.message ?? e.message, param: null } }));
      return;
    }
    stream(res, b.model ?? "gpt-5.5", execShape(b), turn);
  });
  return {
    baseUrl: `${server.url}/v1`,
    requests: server.requests,
    unexpected: server.unexpected,
    remaining: () => turns.length,
    close: server.close,
  };
}
