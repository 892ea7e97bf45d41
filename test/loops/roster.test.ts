import { executorAgent } from "../../lib/runner/executor-agent";
import { longestAttemptMs, UNLIMITED_DRAIN_MINUTES } from "../../lib/runner/runner-host";
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
import { DEFAULT_SANDBOX_LIMITS } from "../../lib/executor/agent-sandbox/policy";

/** An agent's adapter and sandbox settings when the roster gives none. */
const NO_ADAPTER_SETTINGS = {
  egress: [],
  limits: DEFAULT_SANDBOX_LIMITS,
  readOnlyPaths: [],
  env: {},
  models: [],
  maxTurns: null,
  maxBudgetUsd: null,
  allowedTools: [],
  disallowedTools: [],
  mcpConfig: null,
  pricePerMillionInputUsd: null,
  pricePerMillionOutputUsd: null,
  pricePerMillionCacheReadUsd: null,
  pricePerMillionCacheWriteUsd: null,
  modelApi: null,
  apis: [],
};

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
          kind: "command",
          ...NO_ADAPTER_SETTINGS,
        },
      },
      pollIntervalSeconds: 60,
      maxConcurrentAttempts: 2,
      concurrencyReserve: 0,
      drainMinutes: null,
      admins: [],
      board: {
        lanes: [
          { name: "Backlog", label: null, state: "open" },
          { name: "Ready for agent", label: "ready-for-agent", state: "open" },
          { name: "In progress", label: "agent-working", state: "open", follows: "running" },
          { name: "In review", label: "in-review", state: "open", follows: "review" },
          { name: "Done", label: null, state: "closed" },
        ],
      },
      allowPrivateWebhookTargets: false,
      sandbox: "on",
      maxTranscriptBytes: 5 * 1024 * 1024,
      retention: { transcripts: 90, eventPayloads: 90, audit: 365, deliveries: 30 },
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
      pricePerMinuteUsd: null,
      secrets: [],
      modelApi: { url: "https://api.anthropic.com", secret: "ANTHROPIC_API_KEY", protocol: "anthropic" },
      apis: [],
      intervene: true,
      kind: "claude",
      env: {},
      models: ["claude-sonnet-4-5", "claude-haiku-4-5"],
      maxTurns: 80,
      maxBudgetUsd: null,
      allowedTools: [],
      disallowedTools: [],
      mcpConfig: null,
      pricePerMillionInputUsd: 3,
      pricePerMillionOutputUsd: 15,
      pricePerMillionCacheReadUsd: 0.3,
      pricePerMillionCacheWriteUsd: 3.75,
      egress: [],
      limits: DEFAULT_SANDBOX_LIMITS,
      readOnlyPaths: [],
    });
    expect(cfg.agents.codex).toMatchObject({
      command: ["codex", "exec", "--json", "-"],
      kind: "codex",
      model: "gpt-5.5",
      secrets: [],
      modelApi: { url: "https://api.openai.com/v1", secret: "OPENAI_API_KEY", protocol: "openai" },
      intervene: false,
      egress: [],
      pricePerMillionInputUsd: 1.25,
      pricePerMillionOutputUsd: 10,
    });
    expect(cfg.agents.aider!.kind).toBe("command");
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
      kind: "claude",
      ...NO_ADAPTER_SETTINGS,
    });
    expect(cfg.admins).toEqual(["octocat", "mona"]);
    expect(cfg.pollIntervalSeconds).toBe(60);
    expect(cfg.retention).toEqual({ transcripts: 90, eventPayloads: 90, audit: 365, deliveries: 30 });
  });

  it("reads retention: in days, each kind on its own, the others at their defaults", () => {
    const cfg = parseInstanceConfig("retention:\n  transcripts_days: 30\n  audit_days: 730\n");
    expect(cfg.retention).toEqual({ transcripts: 30, eventPayloads: 90, audit: 730, deliveries: 30 });
  });

  it("reads an agent's sandbox: egress, limits, read-only paths; and sandbox: off for the instance", () => {
    const cfg = parseInstanceConfig(
      "sandbox: off\nagents:\n  claude:\n    command: [claude]\n    egress: [api.anthropic.com, '127.0.0.1:8080', '*.example.com']\n    limits: { memory_mb: 2048, pids: 256, cpus: 1.5 }\n    read_only_paths: [/opt/claude]\n",
    );
    expect(cfg.sandbox).toBe("off");
    expect(cfg.agents.claude).toMatchObject({
      egress: ["api.anthropic.com", "127.0.0.1:8080", "*.example.com"],
      limits: { memoryMb: 2048, pids: 256, cpus: 1.5 },
      readOnlyPaths: ["/opt/claude"],
    });
  });

  it("max_attempt_minutes: unlimited has no limit (the executor sets no timer); the drain is bounded apart: drain_minutes, else 60", () => {
    const cfg = parseInstanceConfig("agents:\n  long:\n    command: [claude]\n    max_attempt_minutes: unlimited\n  short:\n    command: [claude]\n    max_attempt_minutes: 10\n");
    expect(cfg.agents.long!.maxAttemptMinutes).toBeNull();
    expect(executorAgent(cfg.agents.long!)).not.toHaveProperty("max_attempt_minutes");
    expect(executorAgent(cfg.agents.short!).max_attempt_minutes).toBe(10);
    expect(longestAttemptMs(cfg)).toBe(UNLIMITED_DRAIN_MINUTES * 60_000);
    expect(longestAttemptMs({ ...cfg, drainMinutes: 15 })).toBe(15 * 60_000);
    // bounded agents only: the longest of them, within drain_minutes when set
    const bounded = parseInstanceConfig("agents:\n  short:\n    command: [claude]\n    max_attempt_minutes: 90\n");
    expect(longestAttemptMs(bounded)).toBe(90 * 60_000);
    expect(longestAttemptMs({ ...bounded, drainMinutes: 30 })).toBe(30 * 60_000);
    expect(parseInstanceConfig("concurrency_reserve: 2\n").concurrencyReserve).toBe(2);
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
    const following = parseInstanceConfig("board:\n  lanes:\n    - { name: Todo }\n    - { name: Doing, follows: running }\n    - { name: Review, follows: review }\n");
    expect(following.board.lanes.map((l) => l.follows ?? null)).toEqual([null, "running", "review"]);
    expect(() => parseInstanceConfig("board:\n  lanes:\n    - { name: A, follows: running }\n    - { name: B, follows: running }\n")).toThrow(/board.lanes.1.follows \(line \d+\): two lanes follow "running"/);
    expect(() => parseInstanceConfig("board:\n  lanes:\n    - { name: Done, state: closed, follows: review }\n")).toThrow(/only an open lane follows the work/);
  });

  it.each([
    ["agents:\n  claude:\n    command: claude -p\n", "agents.claude.command (line 3): command must be a list of arguments (argv), e.g. [claude, -p]"],
    ["agents:\n  claude:\n    command: []\n", "agents.claude.command (line 3): command must name a program"],
    ["agents:\n  claude:\n    command: [claude]\n    secrets: [sk-ant-123]\n", "agents.claude.secrets.0 (line 4): a secret is the NAME of an environment variable"],
    ["agents:\n  claude:\n    command: [claude]\n    shell: true\n", "agents.claude.shell (line 4): unknown key (allowed here: command, model, max_attempt_minutes, price_per_minute_usd, secrets, model_api, apis, intervene, kind, env, models, max_turns, max_budget_usd, allowed_tools, disallowed_tools, mcp_config, price_per_million_input_usd, price_per_million_output_usd, price_per_million_cache_read_usd, price_per_million_cache_write_usd, egress, limits, read_only_paths, allow)"],
    ["agents:\n  claude:\n    command: [claude]\n    egress: ['https://api.anthropic.com/v1']\n", "agents.claude.egress.0 (line 4): an egress entry is a host, host:port or *.domain"],
    ["agents:\n  claude:\n    command: [claude]\n    limits: { memory: 1 }\n", "agents.claude.limits.memory (line 4): unknown key (allowed here: memory_mb, pids, cpus, disk_mb)"],
    ["agents:\n  claude:\n    command: [claude]\n    read_only_paths: [opt/tools]\n", "agents.claude.read_only_paths.0 (line 4): a read-only path is an absolute path"],
    ["sandbox: maybe\n", "sandbox (line 1): sandbox is on (the default) or off"],
    ["agents:\n  claude:\n    command: [claude]\n    max_attempt_minutes: 0\n", "agents.claude.max_attempt_minutes (line 4): max_attempt_minutes must be above 0"],
    ["agents:\n  'bad name':\n    command: [x]\n", "agents.bad name (line 2): an agent name is letters, digits, - and _"],
    ["poll_interval: 30\n", "poll_interval (line 1): unknown key (allowed here: agents, poll_interval_seconds, max_concurrent_attempts, drain_minutes, concurrency_reserve, admins, board, allow_private_webhook_targets, sandbox, max_transcript_mb, allowed_orgs, registries, toolchain_roots, toolchains, retention)"],
    ["max_concurrent_attempts: 1.5\n", "max_concurrent_attempts (line 1): max_concurrent_attempts must be a whole number"],
    ["max_concurrent_attempts: 0\n", "max_concurrent_attempts (line 1):"],
    ["concurrency_reserve: -1\n", "concurrency_reserve (line 1): concurrency_reserve cannot be negative"],
    ["concurrency_reserve: 1.5\n", "concurrency_reserve (line 1): concurrency_reserve must be a whole number"],
    ["drain_minutes: 0\n", "drain_minutes (line 1): drain_minutes must be above 0"],
    ["agents:\n  claude:\n    command: [claude]\n    max_attempt_minutes: forever\n", "agents.claude.max_attempt_minutes (line 4): max_attempt_minutes is a number of minutes above 0, or unlimited"],
    ["agents:\n  claude:\n    command: [claude]\n    max_budget_usd: 0\n", "agents.claude.max_budget_usd (line 4): max_budget_usd must be above 0"],
    ["admins: ['not a login!']\n", "admins.0 (line 1): an admin is a GitHub login"],
    ["allow_private_webhook_targets: 'yes'\n", "allow_private_webhook_targets (line 1):"],
    ["board:\n  lanes: []\n", "board.lanes (line 2): the board needs at least one lane"],
    ["board:\n  lanes:\n    - { name: A }\n    - { name: a }\n", 'board.lanes.1.name (line 4): the lane "a" is listed twice'],
    ["board:\n  lanes:\n    - { name: A, label: x }\n    - { name: B, label: X }\n", 'board.lanes.1.label (line 4): the label "X" is used by two lanes'],
    ["board:\n  lanes:\n    - { name: A, colour: red }\n", "board.lanes.0.colour (line 3): unknown key (allowed here: name, label, state, follows)"],
    ["retention:\n  transcript_days: 30\n", "retention.transcript_days (line 2): unknown key (allowed here: transcripts_days, event_payloads_days, audit_days, deliveries_days)"],
    ["retention:\n  audit_days: 0\n", "retention.audit_days (line 2): audit_days is at least 1 day"],
    ["retention:\n  transcripts_days: 1.5\n", "retention.transcripts_days (line 2): transcripts_days is a whole number of days"],
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

describe("agent kinds and their settings", () => {
  it("docs/agents.md's roster for Claude Code and Codex through a gateway is valid", () => {
    const page = readFileSync(new URL("../../docs/agents.md", import.meta.url), "utf8");
    const start = page.indexOf("```yaml\nagents:") + "```yaml\n".length;
    const cfg = parseInstanceConfig(page.slice(start, page.indexOf("```", start)), "docs/agents.md");
    expect(cfg.agents.claude).toMatchObject({ kind: "claude", secrets: [], modelApi: { url: "https://llm-gateway.example.com/anthropic", secret: "ANTHROPIC_API_KEY", protocol: "anthropic" } });
    expect(cfg.agents.codex).toMatchObject({ kind: "codex", secrets: [], modelApi: { url: "https://llm-gateway.example.com/openai/v1", secret: "OPENAI_API_KEY", protocol: "openai" } });
  });

  it("reads a brokered model API (its protocol by kind, or named) and other tools' APIs (authorization: Bearer by default)", () => {
    const cfg = parseInstanceConfig(
      [
        "agents:",
        "  aider:",
        "    command: [aider]",
        "    model_api: { url: 'http://127.0.0.1:8080', secret: MODEL_KEY, protocol: openai }",
        "    price_per_million_input_usd: 1",
        "    price_per_million_output_usd: 2",
        "    apis:",
        "      - { url: 'https://api.github.com', secret: AGENT_GH_TOKEN, env: GH_API_URL }",
        "      - { url: 'https://tools.example.com/v2', secret: TOOL_KEY, header: X-Tool-Key, scheme: null, env: TOOL_URL }",
      ].join("\n"),
    );
    expect(cfg.agents.aider).toMatchObject({
      modelApi: { url: "http://127.0.0.1:8080", secret: "MODEL_KEY", protocol: "openai" },
      apis: [
        { url: "https://api.github.com", secret: "AGENT_GH_TOKEN", header: "authorization", scheme: "Bearer", env: "GH_API_URL" },
        { url: "https://tools.example.com/v2", secret: "TOOL_KEY", header: "x-tool-key", scheme: null, env: "TOOL_URL" },
      ],
    });
  });

  it("infers the kind from the program's name, else command; an explicit kind wins", () => {
    const cfg = parseInstanceConfig(
      "agents:\n  a: { command: [/opt/bin/claude] }\n  b: { command: [codex, exec] }\n  c: { command: [aider] }\n  d: { command: [my-claude-wrapper], kind: claude }\n",
    );
    expect(Object.values(cfg.agents).map((a) => a.kind)).toEqual(["claude", "codex", "command", "claude"]);
  });

  it("reads env, models, max_turns, tools, an MCP config (a path, or a map kept as JSON) and token prices", () => {
    const cfg = parseInstanceConfig(
      [
        "agents:",
        "  claude:",
        "    command: [claude]",
        "    env: { ANTHROPIC_BASE_URL: 'https://gw.example/anthropic', CLAUDE_CODE_MAX_RETRIES: '1' }",
        "    models: [claude-sonnet-4-5, claude-haiku-4-5]",
        "    max_turns: 40",
        "    allowed_tools: [Bash, Edit]",
        "    disallowed_tools: [WebFetch]",
        "    mcp_config: { mcpServers: { files: { command: mcp-files } } }",
        "    price_per_million_input_usd: 3",
        "    price_per_million_output_usd: 15",
        "  other:",
        "    command: [claude]",
        "    mcp_config: /etc/atelier/mcp.json",
      ].join("\n"),
    );
    expect(cfg.agents.claude).toMatchObject({
      env: { ANTHROPIC_BASE_URL: "https://gw.example/anthropic", CLAUDE_CODE_MAX_RETRIES: "1" },
      models: ["claude-sonnet-4-5", "claude-haiku-4-5"],
      maxTurns: 40,
      allowedTools: ["Bash", "Edit"],
      disallowedTools: ["WebFetch"],
      mcpConfig: JSON.stringify({ mcpServers: { files: { command: "mcp-files" } } }),
      pricePerMillionInputUsd: 3,
      pricePerMillionOutputUsd: 15,
    });
    expect(cfg.agents.other!.mcpConfig).toBe("/etc/atelier/mcp.json");
  });

  it.each([
    ["agents:\n  a:\n    command: [claude]\n    kind: gemini\n", "agents.a.kind (line 4): kind is one of claude, codex, command"],
    ["agents:\n  a:\n    command: [claude]\n    env: { base-url: x }\n", "agents.a.env.base-url (line 4): an env name is the NAME of a variable"],
    ["agents:\n  a:\n    command: [claude]\n    env:\n      RETRIES: 1\n", 'agents.a.env.RETRIES (line 5): an env value is text: quote it (e.g. "1")'],
    ["agents:\n  a:\n    command: [claude]\n    env:\n      ANTHROPIC_API_KEY: sk-ant-x\n", "agents.a.env.ANTHROPIC_API_KEY (line 5): ANTHROPIC_API_KEY looks like a secret"],
    ["agents:\n  a:\n    command: [claude]\n    secrets: [GW_URL]\n    env:\n      GW_URL: x\n", "agents.a.env.GW_URL (line 6): GW_URL is also listed in secrets"],
    ["agents:\n  a:\n    command: [claude]\n    env:\n      ATELIER_PROMPT: x\n", "agents.a.env.ATELIER_PROMPT (line 5): ATELIER_PROMPT is set by Atelier"],
    ["agents:\n  a:\n    command: [claude]\n    max_turns: 0\n", "agents.a.max_turns (line 4): max_turns must be at least 1"],
    ["agents:\n  a:\n    command: [claude]\n    allowed_tools: Bash\n", "agents.a.allowed_tools (line 4): allowed_tools is a list of tool names"],
    ["agents:\n  a:\n    command: [codex, exec]\n    max_turns: 5\n", "agents.a.max_turns (line 4): max_turns is a Claude Code setting (kind: claude); kind codex has no such option"],
    ["agents:\n  a:\n    command: [aider]\n    allowed_tools: [x]\n", "agents.a.allowed_tools (line 4): allowed_tools is a Claude Code setting"],
    ["agents:\n  a:\n    command: [codex, exec]\n    intervene: true\n", "agents.a.intervene (line 4): codex exec takes no input while it runs"],
    ["agents:\n  a:\n    command: [codex, exec]\n    price_per_million_input_usd: 1\n", "agents.a.price_per_million_input_usd (line 4): give price_per_million_output_usd too"],
    ["agents:\n  a:\n    command: [codex, exec, --full-auto, --json, '-']\n", "agents.a.command (line 3): remove --full-auto from command: it no longer exists"],
    ["agents:\n  a:\n    command: [claude, -p, --output-format, text]\n", "agents.a.command (line 3): Atelier reads Claude Code's stream-json"],
    ["agents:\n  a:\n    command: [claude, --model, opus]\n", "agents.a.command (line 3): remove --model from command: set model:"],
    // the agent never holds a model key: the gateway adds it
    ["agents:\n  a:\n    command: [claude]\n    secrets: [ANTHROPIC_API_KEY]\n", "agents.a.secrets.0 (line 4): ANTHROPIC_API_KEY is a model key, and an agent must never hold one: name it in model_api:"],
    ["agents:\n  a:\n    command: [aider]\n    secrets: [OPENAI_API_KEY]\n", "agents.a.secrets.0 (line 4): OPENAI_API_KEY is a model key"],
    ["agents:\n  a:\n    command: [claude]\n    model_api: { url: 'http://api.anthropic.com', secret: K }\n", "agents.a.model_api.url (line 4): the URL must be https:// (plain http:// only to a loopback address"],
    ["agents:\n  a:\n    command: [claude]\n    model_api: { url: 'https://gw.example/?key=1', secret: K }\n", "agents.a.model_api.url (line 4): the URL is a base URL: no user, password, query or fragment"],
    ["agents:\n  a:\n    command: [claude]\n    model_api: { url: 'https://api.anthropic.com', secret: K }\n", "agents.a.model_api (line 4): give price_per_million_input_usd and price_per_million_output_usd"],
    ["agents:\n  a:\n    command: [aider]\n    model_api: { url: 'https://api.anthropic.com', secret: K }\n", "agents.a.model_api (line 4): say which API it is: protocol: anthropic or openai"],
    ["agents:\n  a:\n    command: [claude]\n    model_api: { url: 'https://api.openai.com/v1', secret: K, protocol: openai }\n", "agents.a.model_api.protocol (line 4): kind claude speaks anthropic, not openai"],
    ["agents:\n  a:\n    command: [claude]\n    model_api: { url: 'https://api.anthropic.com', secret: K }\n    env: { ANTHROPIC_BASE_URL: 'https://x' }\n", "agents.a.env.ANTHROPIC_BASE_URL (line 5): ANTHROPIC_BASE_URL is set by model_api: keep it there"],
    ["agents:\n  a:\n    command: [aider]\n    apis: [{ url: 'https://api.github.com', secret: T, env: HOME }]\n", "agents.a.apis.0.env (line 4): HOME is set by Atelier for every agent"],
    ["agents:\n  a:\n    command: [aider]\n    apis: [{ url: 'https://a.example', secret: T, env: U }, { url: 'https://b.example', secret: T, env: U }]\n", "agents.a.apis.1.env (line 4): U is already set by apis.0.env"],
  ])("refuses %j, naming the key and line", (text, fragment) => {
    expect(invalid(text).message).toContain(fragment);
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
