import { request } from "node:http";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { isModelCall, PLACEHOLDER_KEY, startLocalBroker, upstreamUrl, type LocalBroker } from "../../lib/executor/agent-sandbox/api-broker";
import { MAX_METERED_EVENT_BYTES, UsageMeter } from "../../lib/executor/agent-sandbox/usage-meter";
import { DEFAULT_TURN_USAGE, startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic";
import { DEFAULT_OPENAI_USAGE, startFakeOpenAi, type FakeOpenAi } from "../support/fake-openai";

/**
 * The gateway's broker over real HTTP: the agent's request with a placeholder key in, the
 * instance's key out to the scripted model API, the usage read from the answers on the way back.
 */

const KEY = "sk-ant-api03-broker-test-key-0123456789";
const TOOLS = [{ name: "Bash", input_schema: { type: "object" } }];

let broker: LocalBroker | null = null;
let anthropic: FakeAnthropic | null = null;
let openai: FakeOpenAi | null = null;
afterEach(async () => {
  await broker?.close();
  await anthropic?.close();
  await openai?.close();
  broker = anthropic = openai = null;
});

const post = (url: string, headers: Record<string, string>, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

describe("the API broker", () => {
  it("drops the agent's credentials, adds the instance's key and the upstream's Host, and meters a Messages stream", async () => {
    anthropic = await startFakeAnthropic([{ text: "Hello there." }, { text: "Again." }]);
    broker = await startLocalBroker([{ url: anthropic.url, header: "x-api-key", value: KEY, protocol: "anthropic" }]);
    for (let i = 0; i < 2; i++) {
      const res = await post(`${broker.urls[0]}/v1/messages?beta=true`, { "x-api-key": PLACEHOLDER_KEY, authorization: "Bearer agent-made-this-up", cookie: "a=b", "anthropic-version": "2023-06-01" }, {
        model: "claude-sonnet-4-5",
        stream: true,
        tools: TOOLS,
        messages: [{ role: "user", content: "hi" }],
      });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain("message_stop");
    }
    for (const r of anthropic.requests) {
      expect(r.url).toBe("/v1/messages?beta=true");
      expect(r.headers).toMatchObject({ "x-api-key": KEY, host: new URL(anthropic.url).host, "anthropic-version": "2023-06-01", "accept-encoding": "identity" });
      expect(r.headers.authorization).toBeUndefined();
      expect(r.headers.cookie).toBeUndefined();
    }
    const u = DEFAULT_TURN_USAGE;
    expect(broker.metered()).toEqual({
      requests: 2,
      unread: 0,
      input: 2 * u.input_tokens,
      cacheRead: 2 * u.cache_read_input_tokens,
      cacheWrite: 2 * u.cache_creation_input_tokens,
      output: 2 * u.output_tokens,
      model: "claude-sonnet-4-5",
    });
  });

  it("answers an upstream error as it is and meters nothing for it", async () => {
    anthropic = await startFakeAnthropic([{ error: 401 }]);
    broker = await startLocalBroker([{ url: anthropic.url, header: "x-api-key", value: KEY, protocol: "anthropic" }]);
    const res = await post(`${broker.urls[0]}/v1/messages`, { "x-api-key": PLACEHOLDER_KEY }, { model: "m", stream: true, tools: TOOLS, messages: [] });
    expect(res.status).toBe(401);
    expect(broker.metered()).toMatchObject({ requests: 0, unread: 0, input: 0, output: 0 });
  });

  it("meters an OpenAI Responses stream (cached input counted apart) with a Bearer key, below the base URL's path", async () => {
    openai = await startFakeOpenAi([{ text: "Done." }]);
    broker = await startLocalBroker([{ url: openai.baseUrl, header: "authorization", value: `Bearer ${KEY}`, protocol: "openai" }]);
    const res = await post(`${broker.urls[0]}/responses`, { authorization: `Bearer ${PLACEHOLDER_KEY}` }, { model: "gpt-5.5", stream: true, input: [] });
    expect(res.status).toBe(200);
    await res.text();
    expect(openai.requests[0]).toMatchObject({ url: "/v1/responses", headers: { authorization: `Bearer ${KEY}` } });
    const u = DEFAULT_OPENAI_USAGE;
    expect(broker.metered()).toMatchObject({ requests: 1, input: u.input_tokens - u.cached_tokens, cacheRead: u.cached_tokens, cacheWrite: 0, output: u.output_tokens, model: "gpt-5.5" });
  });

  it("answers only the model calls it meters: a batch or a file upload the key could buy is refused before it is sent", async () => {
    anthropic = await startFakeAnthropic([]);
    openai = await startFakeOpenAi([]);
    broker = await startLocalBroker([
      { url: anthropic.url, header: "x-api-key", value: KEY, protocol: "anthropic" },
      { url: openai.baseUrl, header: "authorization", value: `Bearer ${KEY}`, protocol: "openai" },
    ]);
    const refused = [
      await post(`${broker.urls[0]}/v1/messages/batches`, {}, { requests: [] }),
      await post(`${broker.urls[1]}/files`, {}, {}),
      await post(`${broker.urls[1]}/fine_tuning/jobs`, {}, {}),
    ];
    expect(refused.map((r) => r.status)).toEqual([403, 403, 403]);
    expect(await refused[0]!.text()).toBe("gateway: POST /v1/messages/batches is not a model call the gateway meters\n");
    expect([...anthropic.requests, ...openai.requests]).toEqual([]);
    expect(isModelCall("anthropic", "HEAD", "/")).toBe(true);
    expect(isModelCall("openai", "GET", "/models")).toBe(true);
  });

  it("keeps requests below the API's base path: no dot segments, no other origin", () => {
    const base = new URL("https://api.openai.com/v1");
    expect(upstreamUrl(base, "/responses?x=1")?.href).toBe("https://api.openai.com/v1/responses?x=1");
    for (const path of ["/../admin", "/%2e%2e/admin", "/a/../../admin", "//evil.example/x", "http://evil.example/", "responses"]) {
      expect(upstreamUrl(base, path), path).toBeNull();
    }
    expect(upstreamUrl(new URL("https://api.anthropic.com"), "/v1/messages")?.href).toBe("https://api.anthropic.com/v1/messages");
  });

  it("refuses a request that would leave the base path, and an upstream it cannot reach says so", async () => {
    broker = await startLocalBroker([{ url: "http://127.0.0.1:9/v1", header: "authorization", value: `Bearer ${KEY}`, protocol: null }]);
    // sent as it is (fetch would resolve the dot segments itself)
    const escaped = await new Promise<number>((resolve, reject) =>
      request({ host: "127.0.0.1", port: new URL(broker!.urls[0]!).port, path: "/%2e%2e/admin" }, (res) => resolve(res.resume().statusCode ?? 0))
        .on("error", reject)
        .end(),
    );
    expect(escaped).toBe(400);
    const unreachable = await fetch(`${broker.urls[0]}/models`);
    expect(unreachable.status).toBe(502);
    const text = await unreachable.text();
    expect(text).toMatch(/^gateway: 127\.0\.0\.1:9 cannot be reached/);
    expect(text).not.toContain(KEY);
  });
});

describe("the usage meter", () => {
  const sse = (events: object[]) => events.map((e) => `event: x\r\ndata: ${JSON.stringify(e)}\r\n\r\n`).join("");
  const feed = (meter: UsageMeter, protocol: "anthropic" | "openai", text: string, contentType = "text/event-stream", chunk = 7) => {
    const parts: Buffer[] = [];
    const bytes = Buffer.from(text);
    for (let i = 0; i < bytes.length; i += chunk) parts.push(bytes.subarray(i, i + chunk));
    const body = Readable.from(parts);
    meter.observe(protocol, body, contentType);
    return new Promise((resolve) => body.on("close", resolve));
  };

  it("reads events split anywhere across chunks; message_delta totals are running, not added", async () => {
    const meter = new UsageMeter();
    await feed(meter, "anthropic", sse([
      { type: "message_start", message: { model: "claude-haiku-4-5", usage: { input_tokens: 10, cache_read_input_tokens: 5, cache_creation_input_tokens: 2, output_tokens: 1 } } },
      { type: "message_delta", usage: { output_tokens: 40 } },
      { type: "message_delta", usage: { output_tokens: 90 } },
      { type: "message_stop" },
    ]));
    expect(meter.reading()).toEqual({ requests: 1, unread: 0, input: 10, cacheRead: 5, cacheWrite: 2, output: 90, model: "claude-haiku-4-5" });
  });

  it("reads a plain JSON answer; a stream with no usage, or one too large to read, is counted unread; a model list is not counted", async () => {
    const meter = new UsageMeter();
    await feed(meter, "openai", JSON.stringify({ object: "response", model: "gpt-5.5", usage: { input_tokens: 30, input_tokens_details: { cached_tokens: 10 }, output_tokens: 4 } }), "application/json");
    await feed(meter, "openai", JSON.stringify({ object: "list", data: [] }), "application/json");
    await feed(meter, "openai", sse([{ type: "response.created", response: { id: "r" } }]));
    await feed(meter, "anthropic", `data: ${JSON.stringify({ type: "message_start", message: { usage: { input_tokens: 1 }, pad: "x".repeat(MAX_METERED_EVENT_BYTES) } })}\n\n`, "text/event-stream", 1 << 20);
    expect(meter.reading()).toEqual({ requests: 1, unread: 2, input: 20, cacheRead: 10, cacheWrite: 0, output: 4, model: "gpt-5.5" });
  });
});
