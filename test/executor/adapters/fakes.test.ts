import { afterEach, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../../support/fake-anthropic";
import { execShape, startFakeOpenAi } from "../../support/fake-openai";

/** The scripted model APIs themselves: the routes they answer, and what they refuse. */

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe("fake Anthropic", () => {
  it("answers HEAD /, streams a scripted turn as SSE, and records an unexpected route", async () => {
    const fake = await startFakeAnthropic([{ text: "Hello there", tools: [{ name: "Bash", input: { command: "ls" } }] }]);
    closers.push(fake.close);
    expect((await fetch(`${fake.url}/`, { method: "HEAD" })).status).toBe(200);
    const res = await fetch(`${fake.url}/v1/messages?beta=true`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-sonnet-4-5", tools: [{ name: "Bash" }], messages: [] }),
    });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const events = (await res.text()).split("\n").filter((l) => l.startsWith("event: ")).map((l) => l.slice(7));
    expect(events).toEqual([
      "message_start",
      "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
      "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(fake.remaining()).toBe(0);
    expect((await fetch(`${fake.url}/v1/models`)).status).toBe(404);
    expect(fake.unexpected.map((r) => r.url)).toEqual(["/v1/models"]);
  });

  it("a side request without tools takes no turn", async () => {
    const fake = await startFakeAnthropic([{ error: 401 }]);
    closers.push(fake.close);
    const res = await fetch(`${fake.url}/v1/messages`, { method: "POST", body: JSON.stringify({ messages: [] }) });
    expect(res.status).toBe(200);
    expect(fake.remaining()).toBe(1);
    const refused = await fetch(`${fake.url}/v1/messages`, { method: "POST", body: JSON.stringify({ tools: [{ name: "Bash" }] }) });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });
  });
});

describe("fake OpenAI", () => {
  it("asks for commands with the tool the CLI offered", () => {
    expect(execShape({ input: [{ type: "additional_tools", tools: [{ type: "custom", name: "exec" }] }] })).toBe("custom_exec");
    expect(execShape({ tools: [{ type: "function", name: "exec_command" }] })).toBe("exec_command");
    expect(execShape({ tools: [{ type: "function", name: "shell" }] })).toBe("shell");
  });

  it("answers a freeform exec tool with custom_tool_call items, and a hang until closed", async () => {
    const fake = await startFakeOpenAi([{ exec: ["git status"] }, { hang: true }]);
    closers.push(fake.close);
    const body = JSON.stringify({ model: "gpt-5.5", input: [{ type: "additional_tools", tools: [{ type: "custom", name: "exec" }] }] });
    const text = await (await fetch(`${fake.baseUrl}/responses`, { method: "POST", body })).text();
    const done = text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)) as { type: string; item?: unknown }).find((e) => e.type === "response.output_item.done");
    expect(done!.item).toMatchObject({ type: "custom_tool_call", name: "exec", input: "git status" });
    const hanging = await fetch(`${fake.baseUrl}/responses`, { method: "POST", body });
    expect(hanging.status).toBe(200);
    const read = hanging.text().catch(() => "closed");
    await fake.close();
    closers.splice(0);
    expect(await read).toBe("closed");
  });
});
