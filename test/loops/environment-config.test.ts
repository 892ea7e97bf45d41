import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseInstanceConfig } from "../../lib/config/roster";
import { detectEcosystems, withDetectedPaths } from "../../lib/executor/environment/detect-ecosystem";
import { NO_ENVIRONMENT } from "../../lib/executor/environment/environment-spec";
import { parseRepositoryConfig } from "../../lib/loops/parse-config";

const roster = parseInstanceConfig("agents:\n  claude: { command: [claude, -p] }\n", "test-roster.yml");
const parse = (yaml: string) => parseRepositoryConfig(yaml, { roster });
const loop = (extra = "") => `  start-dev:\n    on: issues\n    agent: claude\n    prompt: go\n${extra}`;

describe("environment: in .github/atelier.yml", () => {
  it("the file's environment reaches every Loop, and a Loop's own is laid over it key by key", () => {
    const cfg = parse(`environment:
  setup: |
    npm ci
  cache: [node_modules]
  key: [package-lock.json]
  verify: npm test
  env: { NODE_ENV: test, RETRIES: 3 }
loops:
${loop()}  nightly:
    on: issues
    agent: claude
    prompt: go
    environment:
      verify: npm run test:unit
      env: { RETRIES: 1 }
`);
    expect(cfg.errors).toEqual([]);
    expect(cfg.loops[0]!.environment).toEqual({ setup: "npm ci", cache: ["node_modules"], key: ["package-lock.json"], verify: "npm test", onVerifyFailure: null, maxVerifyRounds: null, env: { NODE_ENV: "test", RETRIES: "3" }, toolchains: [] });
    expect(cfg.loops[1]!.environment).toEqual({ setup: "npm ci", cache: ["node_modules"], key: ["package-lock.json"], verify: "npm run test:unit", onVerifyFailure: null, maxVerifyRounds: null, env: { NODE_ENV: "test", RETRIES: "1" }, toolchains: [] });
  });

  it("a Loop without any environment has none", () => {
    expect(parse(`loops:\n${loop()}`).loops[0]!.environment).toBeUndefined();
  });

  it("a wrong key or type in a Loop's environment is an error on its line, and that Loop does not run", () => {
    const cfg = parse(`loops:
${loop("    environment:\n      setup: [npm, ci]\n      registries: [evil.example.com]\n")}  other:
    on: issues
    agent: claude
    prompt: go
`);
    expect(cfg.loops.map((l) => l.name)).toEqual(["other"]);
    expect(cfg.errors.map((e) => [e.loop, e.token, e.path, e.line])).toEqual([
      ["start-dev", "config_invalid", "loops.start-dev.environment.setup", 7],
      ["start-dev", "config_unknown_key", "loops.start-dev.environment.registries", 8],
    ]);
    expect(cfg.errors[1]!.message).toMatch(/cannot set: the hosts setup may reach are the instance's registry allowlist/);
  });

  it("a wrong top-level environment is an error on its line, and no Loop runs", () => {
    const cfg = parse(`environment:\n  cache: [/etc, ../up]\n  env: { GITHUB_TOKEN: x, PATH: /tmp }\n  verfy: npm test\nloops:\n${loop()}`);
    expect(cfg.loops).toEqual([]);
    expect(cfg.errors.map((e) => [e.loop, e.path, e.line])).toEqual([["environment.verfy", 4]].map(([p, l]) => [null, p, l]));
    expect(cfg.errors[0]!.message).toMatch(/did you mean verify\?/);
    const paths = parse(`environment:\n  cache: [/etc, ../up, .git]\n  env: { GITHUB_TOKEN: x, PATH: /tmp }\nloops:\n${loop()}`);
    expect(paths.loops).toEqual([]);
    expect(paths.errors.map((e) => [e.path, e.line])).toEqual([
      ["environment.cache.0", 2],
      ["environment.cache.1", 2],
      ["environment.cache.2", 2],
      ["environment.env.GITHUB_TOKEN", 3],
      ["environment.env.PATH", 3],
    ]);
    expect(paths.errors[3]!.message).toMatch(/looks like a secret/);
  });
});

describe("ecosystem detection", () => {
  const dir = mkdtempSync(join(tmpdir(), "atelier-eco-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("fills cache and key from the lock files when environment: leaves them out", () => {
    for (const f of ["package-lock.json", "yarn.lock", "poetry.lock", "Cargo.lock", "go.sum"]) writeFileSync(join(dir, f), "");
    expect(detectEcosystems(dir)).toEqual(["npm", "poetry", "cargo", "go"]);
    const spec = withDetectedPaths({ ...NO_ENVIRONMENT, setup: "make" }, dir);
    expect(spec.cache).toEqual(["node_modules", ".venv", "~/.cargo/registry", "target", "~/go/pkg/mod"]);
    expect(spec.key).toEqual(["package-lock.json", "poetry.lock", "Cargo.lock", "go.sum"]);
    expect(spec.env).toEqual({ POETRY_VIRTUALENVS_IN_PROJECT: "true" });
    expect(withDetectedPaths({ ...NO_ENVIRONMENT, cache: ["dist"], key: ["a.lock"] }, dir).cache).toEqual(["dist"]);
  });
});

describe("registries: in atelier.config.yml", () => {
  it("defaults to the public registries; default in the list extends them; a bad entry is refused on its line", async () => {
    const { DEFAULT_REGISTRIES } = await import("../../lib/executor/environment/registries");
    const { registryAllowlist } = await import("../../lib/config/roster");
    expect(registryAllowlist(roster)).toEqual(DEFAULT_REGISTRIES);
    expect(registryAllowlist(parseInstanceConfig("registries: [127.0.0.1:4873]\n", "r.yml"))).toEqual(["127.0.0.1:4873"]);
    expect(registryAllowlist(parseInstanceConfig("registries: [default, NPM.Internal.example.com]\n", "r.yml"))).toEqual([...DEFAULT_REGISTRIES, "npm.internal.example.com"]);
    expect(() => parseInstanceConfig("registries:\n  - https://evil.example.com/x\n", "r.yml")).toThrow(/registries\.0 \(line 2\): a registry is a host, host:port or \*\.domain/);
  });
});
