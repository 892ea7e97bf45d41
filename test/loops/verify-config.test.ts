import { describe, expect, it } from "vitest";
import { parseInstanceConfig } from "../../lib/config/roster";
import { parseRepositoryConfig } from "../../lib/loops/parse-config";
import { verifySpecOf } from "../../lib/executor/verify-spec";

const roster = parseInstanceConfig(`agents:\n  demo: { command: [atelier-demo-agent] }\n`, "test-roster.yml");
const parse = (yaml: string) => parseRepositoryConfig(yaml, { roster });

const loop = (extra = "") => `loops:
  start-dev:
    on: issues
    agent: demo
    prompt: Do it
${extra}`;

describe("environment: verify, on_verify_failure, max_verify_rounds", () => {
  it("no verify declared: the Loop has none", () => {
    const c = parse(loop());
    expect(c.errors).toEqual([]);
    expect(verifySpecOf(c.loops[0]!.environment)).toBeNull();
  });

  it("at the top level, with the defaults (draft, 1 round)", () => {
    const c = parse(`environment:\n  verify: npm test\n${loop()}`);
    expect(c.errors).toEqual([]);
    expect(verifySpecOf(c.loops[0]!.environment)).toEqual({ command: "npm test", onFailure: "draft", maxRounds: 1 });
  });

  it("a Loop's own environment: overrides the top level key by key", () => {
    const c = parse(`environment:\n  verify: npm test\n  max_verify_rounds: 3\n${loop("    environment: { on_verify_failure: retry }\n")}`);
    expect(c.errors).toEqual([]);
    expect(verifySpecOf(c.loops[0]!.environment)).toEqual({ command: "npm test", onFailure: "retry", maxRounds: 3 });
    const own = parse(`environment:\n  verify: npm test\n${loop("    environment:\n      verify: make check\n")}`);
    expect(verifySpecOf(own.loops[0]!.environment)).toEqual({ command: "make check", onFailure: "draft", maxRounds: 1 });
  });

  it("the environment's other keys are accepted beside verify", () => {
    const c = parse(`environment:\n  setup: npm ci\n  cache: [node_modules]\n  key: [package-lock.json]\n  env: { NODE_ENV: test }\n  verify: npm test\n${loop()}`);
    expect(c.errors).toEqual([]);
    expect(verifySpecOf(c.loops[0]!.environment)?.command).toBe("npm test");
  });

  it("a wrong value in a Loop's environment: an error on its line, and that Loop does not run", () => {
    const c = parse(`${loop("    environment:\n      verify: npm test\n      on_verify_failure: ignore\n")}  other:\n    on: issues\n    agent: demo\n    prompt: Other\n`);
    expect(c.loops.map((l) => l.name)).toEqual(["other"]);
    expect(c.errors).toEqual([
      {
        loop: "start-dev",
        token: "config_invalid",
        line: 8,
        message: 'Loop "start-dev", environment: on_verify_failure: is draft or retry.',
        path: "loops.start-dev.environment.on_verify_failure",
      },
    ]);
  });

  it("max_verify_rounds out of range, an empty verify, an unknown key and a non-map are errors with their lines", () => {
    const c = parse(`environment:\n  verify: ""\n  max_verify_rounds: 9\n  verfy: npm test\n${loop()}`);
    expect(c.loops).toEqual([]);
    expect(c.errors.map((e) => [e.token, e.path, e.line])).toEqual([
      ["config_invalid", "environment.verify", 2],
      ["config_invalid", "environment.max_verify_rounds", 3],
      ["config_unknown_key", "environment.verfy", 4],
    ]);
    expect(c.errors[2]!.message).toContain("(did you mean verify?)");
    expect(c.errors[1]!.message).toBe("environment: max_verify_rounds: is a whole number from 1 to 5.");
    const notMap = parse(`environment: npm test\n${loop()}`);
    expect(notMap.errors.map((e) => [e.token, e.path, e.message])).toEqual([
      ["config_invalid", "environment", "environment: must be a map with setup:, cache:, key:, verify:, on_verify_failure:, max_verify_rounds:, env: and toolchain: (e.g. environment: { setup: npm ci })."],
    ]);
  });
});
