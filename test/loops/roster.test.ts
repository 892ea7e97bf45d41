import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  agentSecretEnv,
  DEMO_AGENT,
  defaultInstanceConfig,
  isDemoAgent,
  loadInstanceConfig,
  parseInstanceConfig,
} from "../../lib/config/roster";
import { BadInputError } from "../../lib/errors";

function invalid(text: string): BadInputError {
  try {
    parseInstanceConfig(text, "atelier.config.yml");
  } catch (err) {
    expect(err).toBeInstanceOf(BadInputError);
    expect((err as BadInputError).token).toBe("instance_config_invalid");
    expect((err as BadInputError).status).toBe(400);
    return err as BadInputError;
  }
  throw new Error("expected the config to be refused");
}

describe("the built-in default", () => {
  it("has only the demo agent and the default settings (golden)", () => {
    expect(defaultInstanceConfig()).toEqual({
      agents: {
        demo: {
          name: "demo",
          command: ["atelier-demo-agent"],
          model: null,
          maxAttemptMinutes: 5,
          pricePerMinuteUsd: null,
          secrets: [],
          intervene: false,
        },
      },
      pollIntervalSeconds: 60,
      maxConcurrentAttempts: 2,
      admins: [],
      board: {
        lanes: [
          { name: "Backlog", label: null, state: "open" },
          { name: "Ready for agent", label: "ready-for-agent", state: "open" },
          { name: "In progress", label: "agent-working", state: "open" },
          { name: "In review", label: "in-review", state: "open" },
          { name: "Done", label: null, state: "closed" },
        ],
      },
      allowPrivateWebhookTargets: false,
      source: null,
    });
  });

  it("DEMO_AGENT is the marker the executor recognises, and cannot be mutated", () => {
    expect(DEMO_AGENT.command).toEqual(["atelier-demo-agent"]);
    expect(isDemoAgent(DEMO_AGENT)).toBe(true);
    expect(isDemoAgent({ command: ["atelier-demo-agent", "--x"] })).toBe(false);
    expect(isDemoAgent({ command: ["claude"] })).toBe(false);
    expect(Object.isFrozen(DEMO_AGENT)).toBe(true);
    expect(() => (DEMO_AGENT.command as string[]).push("x")).toThrow();
  });

  it("each call gives a fresh copy", () => {
    const a = defaultInstanceConfig();
    a.agents.demo!.command.push("mutated");
    expect(defaultInstanceConfig().agents.demo!.command).toEqual(["atelier-demo-agent"]);
  });
});

describe("parseInstanceConfig", () => {
  it("reads atelier.config.example.yml (golden for claude)", () => {
    const text = readFileSync(new URL("../../atelier.config.example.yml", import.meta.url), "utf8");
    const cfg = parseInstanceConfig(text, "atelier.config.example.yml");
    expect(Object.keys(cfg.agents)).toEqual(["claude", "codex", "aider", "demo"]);
    expect(cfg.agents.claude).toEqual({
      name: "claude",
      command: ["claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"],
      model: "claude-sonnet-4-5",
      maxAttemptMinutes: 45,
      pricePerMinuteUsd: 0.1,
      secrets: ["ANTHROPIC_API_KEY"],
      intervene: true,
    });
    expect(cfg.agents.codex!.command).toEqual(["codex", "exec", "--full-auto", "--json", "-"]);
    expect(cfg.agents.codex!.secrets).toEqual(["OPENAI_API_KEY"]);
    expect(cfg.agents.aider!.maxAttemptMinutes).toBe(30);
    expect(isDemoAgent(cfg.agents.demo!)).toBe(true);
    expect(cfg).toMatchObject({
      pollIntervalSeconds: 60,
      maxConcurrentAttempts: 2,
      admins: ["octocat"],
      allowPrivateWebhookTargets: false,
      source: "atelier.config.example.yml",
    });
    expect(cfg.board.lanes).toEqual(defaultInstanceConfig().board.lanes);
  });

  it("fills defaults for a minimal file", () => {
    const cfg = parseInstanceConfig("agents:\n  claude: { command: [claude] }\nadmins: [Octocat, Mona]\n");
    expect(cfg.agents.claude).toEqual({
      name: "claude",
      command: ["claude"],
      model: null,
      maxAttemptMinutes: 60,
      pricePerMinuteUsd: null,
      secrets: [],
      intervene: false,
    });
    expect(cfg.admins).toEqual(["octocat", "mona"]);
    expect(cfg.pollIntervalSeconds).toBe(60);
  });

  it("an empty file is the default", () => {
    const cfg = parseInstanceConfig("", "x.yml");
    expect({ ...cfg, source: null }).toEqual(defaultInstanceConfig());
  });

  it("a file without agents: keeps the demo agent; with agents: the roster is exactly those", () => {
    expect(Object.keys(parseInstanceConfig("poll_interval_seconds: 30\n").agents)).toEqual(["demo"]);
    expect(Object.keys(parseInstanceConfig("agents:\n  a: { command: [a] }\n").agents)).toEqual(["a"]);
  });

  it("board lanes with defaults for label and state", () => {
    const cfg = parseInstanceConfig("board:\n  lanes:\n    - { name: Todo }\n    - { name: Agent, label: go }\n    - { name: Shipped, state: closed }\n");
    expect(cfg.board.lanes).toEqual([
      { name: "Todo", label: null, state: "open" },
      { name: "Agent", label: "go", state: "open" },
      { name: "Shipped", label: null, state: "closed" },
    ]);
  });

  it.each([
    ["agents:\n  claude:\n    command: claude -p\n", "agents.claude.command (line 3): command must be a list of arguments (argv), e.g. [claude, -p]"],
    ["agents:\n  claude:\n    command: []\n", "agents.claude.command (line 3): command must name a program"],
    ["agents:\n  claude:\n    command: [claude]\n    secrets: [sk-ant-123]\n", "agents.claude.secrets.0 (line 4): a secret is the NAME of an environment variable"],
    ["agents:\n  claude:\n    command: [claude]\n    shell: true\n", "agents.claude.shell (line 4): unknown key (allowed here: command, model, max_attempt_minutes, price_per_minute_usd, secrets, intervene, allow)"],
    ["agents:\n  claude:\n    command: [claude]\n    max_attempt_minutes: 0\n", "agents.claude.max_attempt_minutes (line 4): max_attempt_minutes must be above 0"],
    ["agents:\n  'bad name':\n    command: [x]\n", "agents.bad name (line 2): an agent name is letters, digits, - and _"],
    ["poll_interval: 30\n", "poll_interval (line 1): unknown key (allowed here: agents, poll_interval_seconds, max_concurrent_attempts, admins, board, allow_private_webhook_targets, allowed_orgs)"],
    ["max_concurrent_attempts: 1.5\n", "max_concurrent_attempts (line 1): max_concurrent_attempts must be a whole number"],
    ["max_concurrent_attempts: 0\n", "max_concurrent_attempts (line 1):"],
    ["admins: ['not a login!']\n", "admins.0 (line 1): an admin is a GitHub login"],
    ["allow_private_webhook_targets: 'yes'\n", "allow_private_webhook_targets (line 1):"],
    ["board:\n  lanes: []\n", "board.lanes (line 2): the board needs at least one lane"],
    ["board:\n  lanes:\n    - { name: A }\n    - { name: a }\n", 'board.lanes.1.name (line 4): the lane "a" is listed twice'],
    ["board:\n  lanes:\n    - { name: A, label: x }\n    - { name: B, label: X }\n", 'board.lanes.1.label (line 4): the label "X" is used by two lanes'],
    ["board:\n  lanes:\n    - { name: A, colour: red }\n", "board.lanes.0.colour (line 3): unknown key (allowed here: name, label, state)"],
    ["agents: [claude]\n", "agents (line 1):"],
    ["- a\n", "the file must be a map of settings"],
    ["agents:\n  a: [\n", "The YAML does not parse"],
  ])("refuses %j, naming the key and line", (text, fragment) => {
    const err = invalid(text);
    expect(err.message).toContain(fragment);
    expect(err.message.startsWith("atelier.config.yml is not valid: ")).toBe(true);
  });

  it("lists every problem at once", () => {
    const err = invalid("agents:\n  a: { command: x }\n  b: { command: [b], nope: 1 }\nadmins: 3\n");
    expect(err.details.problems).toHaveLength(3);
  });
});

describe("loadInstanceConfig", () => {
  const dir = mkdtempSync(join(tmpdir(), "atelier-roster-"));

  it("uses the built-in default when ./atelier.config.yml does not exist", async () => {
    const cfg = await loadInstanceConfig(undefined, {}, dir);
    expect(cfg).toEqual(defaultInstanceConfig());
  });

  it("reads ./atelier.config.yml from the working directory", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "atelier-roster-cwd-"));
    writeFileSync(join(cwd, "atelier.config.yml"), "agents:\n  x: { command: [x] }\n");
    const cfg = await loadInstanceConfig(undefined, {}, cwd);
    expect(Object.keys(cfg.agents)).toEqual(["x"]);
    expect(cfg.source).toBe(join(cwd, "atelier.config.yml"));
  });

  it("reads the file ATELIER_CONFIG names, and refuses one that does not exist", async () => {
    const file = join(dir, "custom.yml");
    writeFileSync(file, "max_concurrent_attempts: 4\n");
    expect((await loadInstanceConfig(undefined, { ATELIER_CONFIG: file }, dir)).maxConcurrentAttempts).toBe(4);
    await expect(loadInstanceConfig(undefined, { ATELIER_CONFIG: join(dir, "missing.yml") }, dir)).rejects.toMatchObject({
      token: "instance_config_missing",
      status: 400,
    });
  });

  it("an explicit path wins over ATELIER_CONFIG", async () => {
    const file = join(dir, "explicit.yml");
    writeFileSync(file, "poll_interval_seconds: 5\n");
    const cfg = await loadInstanceConfig(file, { ATELIER_CONFIG: join(dir, "missing.yml") }, dir);
    expect(cfg.pollIntervalSeconds).toBe(5);
  });

  it("an invalid file is refused with the file's path in the message", async () => {
    const file = join(dir, "bad.yml");
    writeFileSync(file, "agents:\n  a: { command: [] }\n");
    await expect(loadInstanceConfig(file, {}, dir)).rejects.toThrow(`${file} is not valid: agents.a.command (line 2)`);
  });
});

describe("agentSecretEnv", () => {
  it("passes the named variables that are set and lists the missing ones", () => {
    const agent = { ...DEMO_AGENT, secrets: ["ANTHROPIC_API_KEY", "GH_EXTRA", "EMPTY"] };
    expect(agentSecretEnv(agent, { ANTHROPIC_API_KEY: "sk", EMPTY: "", OTHER: "x" })).toEqual({
      env: { ANTHROPIC_API_KEY: "sk" },
      missing: ["GH_EXTRA", "EMPTY"],
    });
  });
});
