import { readFileSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { parseInstanceConfig } from "../../../lib/config/roster";
import { adapterFor } from "../../../lib/executor/adapters";
import { startFakeAnthropic } from "../../support/fake-anthropic";
import { startFakeOpenAi } from "../../support/fake-openai";
import { makeSandbox, runCli, type Sandbox } from "./real-cli";

/**
 * The claude and codex entries of the shipped atelier.config.example.yml, as they are (only the
 * documented gateway setting, env: OPENAI_BASE_URL / ANTHROPIC_BASE_URL, points them at the
 * fakes), run by the real CLIs through their adapters: each writes and commits, and ends.
 */

const example = parseInstanceConfig(readFileSync(new URL("../../../atelier.config.example.yml", import.meta.url), "utf8"), "atelier.config.example.yml");
const COMMIT = "echo shipped > shipped.txt && git add shipped.txt && git commit -q -m 'Ship it' && echo committed";

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function box(): Sandbox {
  const b = makeSandbox();
  closers.push(() => b.cleanup());
  return b;
}

it("the example's claude entry (intervene: true, so stdin speaks stream-json) commits and ends once its turn is over", async () => {
  const fake = await startFakeAnthropic([{ tools: [{ name: "Bash", input: { command: COMMIT, description: "commit" } }] }, { text: "Shipped." }]);
  closers.push(() => fake.close());
  const spec = { ...example.agents.claude!, env: { ANTHROPIC_BASE_URL: fake.url } };
  const adapter = adapterFor(spec.kind);
  const inv = adapter.invocation(spec, { prompt: "Ship it." });
  const sandbox = box();
  const run = await runCli(sandbox, inv, adapter.parser(spec, { model: inv.model }), {
    secrets: { ANTHROPIC_API_KEY: "sk-ant-example" },
    binOnPath: true,
    // the executor's policy for a streaming input: close stdin after the turn's final step
    onStep: (step, stdin) => step.type === "final" && stdin.end(),
  });
  expect(run.code).toBe(0);
  expect(sandbox.git("log", "-1", "--format=%s")).toBe("Ship it");
  expect(run.report).toMatchObject({ finalText: "Shipped.", failure: null, usage: { model: "claude-sonnet-4-5", turns: 2, costSource: "agent" } });
  expect((fake.loopRequests()[0]!.body as { model: string }).model).toBe("claude-sonnet-4-5");
});

it("the example's codex entry commits and ends", async () => {
  const fake = await startFakeOpenAi([{ exec: [COMMIT] }, { text: "Shipped." }]);
  closers.push(() => fake.close());
  const spec = { ...example.agents.codex!, env: { OPENAI_BASE_URL: fake.baseUrl } };
  const adapter = adapterFor(spec.kind);
  const inv = adapter.invocation(spec, { prompt: "Ship it." });
  const sandbox = box();
  const run = await runCli(sandbox, inv, adapter.parser(spec, { model: inv.model }), { secrets: { OPENAI_API_KEY: "sk-example" }, binOnPath: true });
  expect(run.code).toBe(0);
  expect(sandbox.git("log", "-1", "--format=%s")).toBe("Ship it");
  expect(run.report).toMatchObject({ finalText: "Shipped.", failure: null, usage: { model: "gpt-5.5", costSource: "roster_prices" } });
  expect(run.report.usage!.costUsd).toBeCloseTo((4000 * 1.25 + 200 * 10) / 1e6, 10);
});
